// Tests of whole-file reads and atomic writes: what may be read and what must never be replaced.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tactus/core/file_io.hpp"
#include "tactus/core/text.hpp"
#include "test_skip.hpp"

using namespace tactus;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tactus_file_io_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string at(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("readRegularFile reads files and refuses directories, devices, missing and oversized files", "[file_io]") {
  TempDir dir;
  const std::string file = dir.at("a.txt");
  REQUIRE(writeFileAtomically(file, "hello\n", "test file").has_value());
  auto text = readRegularFile(file, "test file", 100);
  REQUIRE(text.has_value());
  CHECK(*text == "hello\n");

  auto directory = readRegularFile(dir.path.string(), "graph file", 100);
  REQUIRE_FALSE(directory.has_value());
  CHECK(directory.error().code == ErrorCode::kIo);
  CHECK_THAT(directory.error().message, Catch::Contains("it is a directory"));
  CHECK_THAT(directory.error().message, Catch::Contains("graph file '" + dir.path.string() + "'"));

  auto device = readRegularFile("/dev/zero", "graph file", 100);  // would never end
  REQUIRE_FALSE(device.has_value());
  CHECK_THAT(device.error().message, Catch::Contains("not a regular file"));

  auto missing = readRegularFile(dir.at("nope"), "graph file", 100);
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().message, Catch::Contains("no such file"));

  auto big = readRegularFile(file, "graph file", 3);
  REQUIRE_FALSE(big.has_value());
  CHECK_THAT(big.error().message, Catch::Contains("6 bytes, above the limit of 3"));
}

TEST_CASE("writeFileAtomically replaces files, writes through links and devices, refuses directories", "[file_io]") {
  TempDir dir;
  const std::string file = dir.at("out.txt");
  REQUIRE(writeFileAtomically(file, "one", "test file").has_value());
  REQUIRE(writeFileAtomically(file, "two", "test file").has_value());
  CHECK(slurp(file) == "two");

  // A symbolic link stays a link; its target gets the text.
  const std::string link = dir.at("link.txt");
  fs::create_symlink(file, link);
  REQUIRE(writeFileAtomically(link, "three", "test file").has_value());
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(slurp(file) == "three");

  auto toDir = writeFileAtomically(dir.path.string(), "x", "schedule file");
  REQUIRE_FALSE(toDir.has_value());
  CHECK_THAT(toDir.error().message, Catch::Contains("it is a directory"));

  // No temporary file is left beside the targets.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 2);  // out.txt, link.txt
}

TEST_CASE("writeFileAtomically writes through device nodes and reports a full device", "[file_io][device]") {
  // Device nodes of our own (never the system's): a null device stays a device and takes the
  // text; a full device reports the write error.
  TempDir dir;
  const std::string null = dir.at("null"), full = dir.at("full");
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      ::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    TACTUS_SKIP("mknod not permitted here: " << std::strerror(errno));
  }
  REQUIRE(writeFileAtomically(null, "text", "schedule file").has_value());
  CHECK(fs::is_character_file(fs::status(null)));
  auto onFull = writeFileAtomically(full, std::string(1 << 16, 'x'), "schedule file");
  REQUIRE_FALSE(onFull.has_value());
  CHECK_THAT(onFull.error().message, Catch::Contains("cannot write schedule file"));
  CHECK(fs::is_character_file(fs::status(full)));
  // No temporary file is left beside the targets.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 2);  // null, full
}

TEST_CASE("firstNulLine finds the line of a NUL byte", "[text]") {
  CHECK(firstNulLine("a\nb\n") == 0);
  CHECK(firstNulLine(std::string_view("a\nb\0c", 5)) == 2);
  CHECK(firstNulLine(std::string_view("\0", 1)) == 1);
}

TEST_CASE("jsonString escapes what JSON and an HTML script element need", "[text]") {
  CHECK(jsonString("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(jsonString("</script>") == "\"\\u003c/script\\u003e\"");
  CHECK(jsonString(std::string_view("\x01", 1)) == "\"\\u0001\"");
  CHECK(quoted("abc") == "'abc'");
  CHECK(quoted(std::string_view("a\0b", 3)) == "'a\\x00b'");
  CHECK(quoted("abcdef", 3) == "'abc...'");
}

TEST_CASE("humanDuration writes exact short durations with units", "[text]") {
  CHECK(humanDuration(0) == "0ns");
  CHECK(humanDuration(999) == "999ns");
  CHECK(humanDuration(10'000) == "10us");
  CHECK(humanDuration(120'500'000) == "120.5ms");
  CHECK(humanDuration(33'330'000) == "33.33ms");
  CHECK(humanDuration(2'000'000'000) == "2s");
  CHECK(humanDuration(-1'500) == "-1.5us");
}
