// The checks fuzz_target.hpp declares.
#include "fuzz_target.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tactus::fuzz {

void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n%.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void checkMessage(std::string_view message) {
  for (unsigned char c : message)
    if ((c < 0x20 && c != '\n') || c == 0x7f) fail("a message holds a raw control byte", message);
}

bool checkCompilerMessages() {
  static const bool on = [] {
    const char* v = std::getenv("TACTUS_FUZZ_COMPILER_MESSAGES");
    return v != nullptr && std::string(v) == "1";
  }();
  return on;
}

}  // namespace tactus::fuzz
