// tactus-top: a live view of a running instance (the logic is in top.cpp).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "tactus/core/command_line.hpp"
#include "top.hpp"

int main(int argc, char** argv) {
  try {
    return tactus::finishStandardOutput(
        "tactus-top", tactus::top::topMain(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr));
  } catch (const std::exception& e) {
    std::cerr << "tactus-top: internal error: " << e.what() << "\n";
    return 1;
  }
}
