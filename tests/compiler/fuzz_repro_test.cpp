// Regression tests of the fuzzing reproducers (issue 17): the real tactus-compile binary on each
// input of tests/compiler/fixtures/fuzz-repro/, with the exact message and exit status.
//
// The binary is $TACTUS_COMPILE when set, else $TACTUS_BUILD_ROOT/compiler/tactus-compile; set
// TACTUS_COMPILE to an older build to see these tests fail on it.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.hpp"

using tactus::test::readAll;
using tactus::test::sourceRoot;

namespace {

std::string compilerBinary() {
  if (const char* bin = std::getenv("TACTUS_COMPILE")) return bin;
  const char* build = std::getenv("TACTUS_BUILD_ROOT");
  return std::string(build ? build : "../../build") + "/compiler/tactus-compile";
}

std::string repro(const std::string& name) { return sourceRoot() + "/tests/compiler/fixtures/fuzz-repro/" + name; }

std::string tempPath(const std::string& name) { return tactus::test::scratchPath("fuzz_repro", name); }

struct Run {
  int code = -1;    // exit status; 128 + signal when killed
  std::string err;  // standard error, byte for byte
  double seconds = 0;
};

// Runs the binary with `args` (and a shell prefix such as `ulimit -v N;`), stdout discarded,
// under a 120 s timeout.
Run runCompiler(const std::vector<std::string>& args, const std::string& prefix = "") {
  std::string cmd = prefix + "timeout 120 '" + compilerBinary() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  const std::string errPath = tempPath("stderr");
  cmd += " > /dev/null 2> '" + errPath + "'";
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.err = readAll(errPath);
  std::remove(errPath.c_str());
  return r;
}

}  // namespace

TEST_CASE("fuzz repro: a million frames behind YAML aliases is refused at once, at the Frames line",
          "[compile][fuzz-repro]") {
  const std::string in = repro("compile-yaml-frames-alias-amplification-timeout.yaml");
  const Run r = runCompiler({"-i", in, "-o", tempPath("amp.tsched")});
  CHECK(r.code == 1);
  CHECK(r.err == "tactus-compile: " + in + ":10: Frames of epoch 'Main.Tick' is '1000000', out of range 1..65536\n");
  CHECK(r.seconds < 5.0);  // it ran for minutes; reading the file takes milliseconds
}

TEST_CASE("fuzz repro: an overlength schedule is reported at its hyperepoch's line", "[compile][fuzz-repro]") {
  const std::string in = repro("compile-yaml-overlength-message-no-location.yaml");
  const Run r = runCompiler({"-i", in, "-o", tempPath("over.tsched")});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tactus-compile: " + in +
                                      ":7: hyperepoch 'Main': schedule length 22.2ms exceeds its period 10ms\n"));
}

TEST_CASE("fuzz repro: a second YAML document is reported with its line", "[compile][fuzz-repro]") {
  const std::string in = repro("compile-yaml-second-document-message-no-line.yaml");
  const Run r = runCompiler({"-i", in, "-o", tempPath("doc.tsched")});
  CHECK(r.code == 1);
  CHECK(r.err == "tactus-compile: " + in + ":2: more than one yaml document (a graph file holds one)\n");
}

TEST_CASE("fuzz repro: WCET file keys reach the message escaped, never raw", "[compile][fuzz-repro]") {
  const std::string wcet = repro("compile-wcet-raw-control-chars-in-message.yaml");
  const Run r =
      runCompiler({"-i", sourceRoot() + "/schedules/minimal_cpu.yaml", "--wcet", wcet, "-o", tempPath("wcet.tsched")});
  CHECK(r.code == 1);
  CHECK(r.err == "tactus-compile: " + wcet +
                     ":1: unknown runnable 'Worker.\\x1b[31mRED\\x1b[0m\\x0asecond line\\x00nul\\x1b]0;title\\x07' "
                     "(no client 'Worker'; declared clients: 'Pipeline')\n");
  for (char c : r.err.substr(0, r.err.size() - 1)) {
    INFO(static_cast<int>(static_cast<unsigned char>(c)));
    CHECK((static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) != 0x7f));
  }
}

TEST_CASE("fuzz repro: WCETs whose sums pass INT64_MAX are refused where they are read", "[compile][fuzz-repro]") {
  const std::string in = repro("compile-yaml-wcet-chain-signed-overflow.yaml");
  const Run r = runCompiler({"-i", in, "-o", tempPath("ovf.tsched")});
  CHECK(r.code == 1);
  CHECK(r.err ==
        "tactus-compile: " + in +
            ":10: Period of epoch 'Main.Tick': bad duration '1000000000000000000ns': too large (at most 1000s)\n");

  // Within the limits (1000 s each), the chain is scheduled without overflow and refused as
  // overlength at the hyperepoch's line.
  std::string text = readAll(in);
  for (std::string::size_type p; (p = text.find("1000000000000000000ns")) != std::string::npos;)
    text.replace(p, 21, "1000s");
  for (std::string::size_type p; (p = text.find("999999999999999999ns")) != std::string::npos;)
    text.replace(p, 20, "1000s");
  const std::string bounded = tempPath("bounded.yaml");
  std::ofstream(bounded) << text;
  const Run b = runCompiler({"-i", bounded, "-o", tempPath("bounded.tsched")});
  CHECK(b.code == 1);
  CHECK_THAT(b.err, Catch::StartsWith("tactus-compile: " + bounded +
                                      ":7: hyperepoch 'Main': schedule length 12000s exceeds its period 1000s\n"));
  std::remove(bounded.c_str());
}

// ulimit -v cannot be combined with AddressSanitizer (its shadow memory needs terabytes of
// address space), so this case exists only in builds without it.
#if !defined(__SANITIZE_ADDRESS__)
TEST_CASE("out of memory names the input file and exits 1", "[compile][fuzz-repro]") {
  // 3 x 4 runnables x 65,536 frames: within the limits, about 400 MB to schedule; 150 MB of
  // address space is not enough.
  std::string text = readAll(repro("compile-yaml-frames-alias-amplification-timeout.yaml"));
  text.replace(text.find("Frames: 1000000"), 15, "Frames: 65536");
  const std::string in = tempPath("oom.yaml");
  std::ofstream(in) << text;
  const Run r = runCompiler({"-i", in, "-o", tempPath("oom.tsched")}, "ulimit -v 150000; ");
  CHECK(r.code == 1);
  CHECK(r.err == "tactus-compile: " + in + ": out of memory\n");
  std::remove(in.c_str());
}
#endif  // !__SANITIZE_ADDRESS__
