// tactus-report: statistics, measured WCETs, traces and pictures from an event log and its schedule.
#include <iostream>
#include <string>
#include <vector>

#include "report_command.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::ios::sync_with_stdio(false);
  return tactus::report::runReportCommand(args, std::cout, std::cerr);
}
