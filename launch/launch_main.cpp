// tactus-launch: see launch.hpp.
#include <string>
#include <vector>

#include "launch.hpp"

int main(int argc, char** argv) { return tactus::launch::launchMain(std::vector<std::string>(argv + 1, argv + argc)); }
