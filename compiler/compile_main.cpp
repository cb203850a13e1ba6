// tactus-compile: compiles a YAML compute graph into a static schedule file.
#include <iostream>
#include <string>
#include <vector>

#include "compile.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tactus::compiler::runCompileCommand(args, std::cout, std::cerr);
}
