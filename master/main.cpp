// tactus-master: runs a compiled schedule across client processes (see master.hpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "master.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus_config.h"

namespace {

int gStdoutErrno = 0;  // errno of a write of printOut that failed (a text longer than the buffer)

// Writes `text` to standard output at once, keeping the reason of a failed write: a text longer
// than the stream's buffer fails inside the write, and a later flush has nothing left to retry.
void printOut(const std::string& text) {
  errno = 0;
  std::cout << text << std::flush;
  if (!std::cout && gStdoutErrno == 0) gStdoutErrno = errno;
}

// Runs the command; its messages to standard output are only reported written once flushed.
int runCommand(const std::vector<std::string>& args) {
  auto options = tactus::master::parseMasterArguments(args);
  if (!options) {
    std::cerr << "tactus-master: " << options.error().message << "\n"
              << "try 'tactus-master --help'\n";
    return tactus::master::kExitBadInput;
  }
  if (options->showHelp) {
    printOut(tactus::master::masterUsage());
    return 0;
  }
  if (options->showVersion) {
    printOut(std::string("tactus-master ") + TACTUS_VERSION + "\n");
    return 0;
  }
  return tactus::master::runMaster(*options, std::cout, std::cerr);
}

}  // namespace

int runMain(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = runCommand(args);
  // A full disk or a closed pipe on standard output must not pass as success.
  code = tactus::finishStandardOutput("tactus-master", code, gStdoutErrno);
  return code;
}

int main(int argc, char** argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception& e) {  // out of memory while setting up: a message, not std::terminate
    std::fputs("tactus-master: internal error: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
    return 1;
  }
}
