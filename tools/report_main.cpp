// tactus-report: statistics, measured WCETs, traces and pictures from an event log and its schedule.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "recording_command.hpp"
#include "report_command.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::ios::sync_with_stdio(false);
  // Standard output through a buffer that keeps the reason of a failed write (full disk, closed pipe).
  tactus::report::FdOutputBuffer buffer(STDOUT_FILENO);
  std::ostream out(&buffer);
  if (auto code = tactus::report::runRecordingCommand(args, out, std::cerr)) return out.flush() ? *code : 1;
  return tactus::report::runReportCommand(args, out, std::cerr);
}
