// Files for the tests that run tools on real files: the source tree, scratch paths, whole files.
// Header only and Catch2-free, like the rest of tests/support.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tactus::test {

/// The source tree: TACTUS_SOURCE_ROOT (set by meson for every test), else `../..` (a test run by
/// hand from its folder in the source tree, as meson's workdir does).
inline std::string sourceRoot() {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  return root != nullptr ? std::string(root) : std::string("../..");
}

/// A scratch path under /tmp named for the test file (`what`), this process and `name`.
inline std::string scratchPath(const std::string& what, const std::string& name) {
  return "/tmp/tactus_" + what + "_test_" + std::to_string(::getpid()) + "_" + name;
}

/// The whole file's bytes; empty where it cannot be read.
inline std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Writes `text` as the whole file.
inline void writeAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace tactus::test
