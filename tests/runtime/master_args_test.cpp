// Tests of tactus-master's command line: the parser (the master's logic library) and the program's
// exit status and message for a repeated -s.
#include <catch2/catch.hpp>
#include <filesystem>

#include "master.hpp"
#include "runtime_harness.hpp"

using tactus::ErrorCode;
using tactus::master::parseMasterArguments;

TEST_CASE("the master's command line takes STM's flags", "[master][args]") {
  auto o = parseMasterArguments({"-s", "g.tsched", "-e", "12", "-l", "x.log", "-t", "-1", "-m", "-D", "abc", "-c", "1",
                                 "-C", "-M", "--allow-unregistered-runnables", "-v"});
  REQUIRE(o.has_value());
  CHECK(o->schedulePath == "g.tsched");
  CHECK(o->iterations == 12);
  CHECK(o->logPath == "x.log");
  CHECK(o->timeoutUs == -1);
  CHECK(o->freeRunning);
  CHECK(o->instance == "abc");
  CHECK(o->core == 1);
  CHECK(o->noPinning);
  CHECK(o->lockMemory);
  CHECK(o->allowUnregistered);
  CHECK(o->verbose);
  auto defaults = parseMasterArguments({"-s", "g.tsched"});
  REQUIRE(defaults.has_value());
  CHECK(defaults->instance == "default");
  CHECK(defaults->timeoutUs == 5'000'000);
  CHECK(defaults->iterations == 0);
  CHECK(parseMasterArguments({"--help"})->showHelp);
  CHECK(parseMasterArguments({"-V"})->showVersion);
}

TEST_CASE("the master's command line rejects bad input with a message naming it", "[master][args]") {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{}, "missing -s"},
      {{"-s"}, "needs a value"},
      {{"-s", "g", "-e", "ten"}, "expects an integer, got 'ten'"},
      {{"-s", "g", "-e", "-3"}, "-e expects a count"},
      {{"-s", "g", "-t", "-7"}, "-t expects"},
      {{"-s", "g", "-P", "200"}, "-P expects a priority"},
      {{"-s", "g", "--bogus"}, "unknown argument '--bogus'"},
      {{"-s", "g", "-D", "a/b"}, "instance name 'a/b'"},
      {{"-s", "a.tsched", "-s", "b.tsched", "-D", "x"}, "-s given twice ('a.tsched', then 'b.tsched'): one schedule file per master is supported"},
  };
  for (const Case& c : cases) {
    auto o = parseMasterArguments(c.args);
    REQUIRE_FALSE(o.has_value());
    CHECK(o.error().message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("tactus-master refuses a repeated -s with exit 2 instead of running the last one", "[master][args]") {
  const std::string dir = tactus::test::scratchDir("twice");
  const std::string out = dir + "/master.out";
  const pid_t m = tactus::test::spawn(
      {tactus::test::buildPath("master/tactus-master"), "-s", dir + "/a.tsched", "-s", dir + "/b.tsched", "-D",
       tactus::test::uniqueInstance("twice")},
      out);
  CHECK(tactus::test::waitFor(m, 10'000) == 2);
  CHECK(tactus::test::readFile(out).find("one schedule file per master is supported") != std::string::npos);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
