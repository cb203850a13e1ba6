// tactus-master: runs a compiled schedule across client processes (see master.hpp).
#include <iostream>
#include <string>
#include <vector>

#include "master.hpp"
#include "tactus_config.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto options = tactus::master::parseMasterArguments(args);
  if (!options) {
    std::cerr << "tactus-master: " << options.error().message << "\n" << "try 'tactus-master --help'\n";
    return tactus::master::kExitBadInput;
  }
  if (options->showHelp) {
    std::cout << tactus::master::masterUsage();
    return 0;
  }
  if (options->showVersion) {
    std::cout << "tactus-master " << TACTUS_VERSION << "\n";
    return 0;
  }
  return tactus::master::runMaster(*options, std::cout, std::cerr);
}
