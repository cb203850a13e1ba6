// Tests of tactus-master's command line: the parser (the master's logic library) and the program's
// exit status and messages for a repeated -s and an unwritable standard output.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <unistd.h>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "master.hpp"
#include "runtime_harness.hpp"
#include "test_skip.hpp"

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
  CHECK(parseMasterArguments({"-h"})->showHelp);
  CHECK(parseMasterArguments({"-V"})->showVersion);
  CHECK(parseMasterArguments({"--version"})->showVersion);
}

TEST_CASE("every master option has a long name, with STM's where STM has one, and takes --opt=value",
          "[master][args]") {
  auto o = parseMasterArguments({"--schedule=g.tsched", "--epochs=12", "--log", "x.log", "--timeout-us=-1",
                                 "--free-running", "--discriminator=abc", "--core=1", "--priority", "5", "--no-pinning",
                                 "--lock-memory", "--allow-unregistered-runnables", "--verbose", "--soc=TegraA",
                                 "--primary=TegraB", "--dds-domain=7"});
  REQUIRE(o.has_value());
  CHECK(o->schedulePath == "g.tsched");
  CHECK(o->iterations == 12);
  CHECK(o->logPath == "x.log");
  CHECK(o->timeoutUs == -1);
  CHECK(o->freeRunning);
  CHECK(o->instance == "abc");
  CHECK(o->core == 1);
  CHECK(o->priority == 5);
  CHECK(o->noPinning);
  CHECK(o->lockMemory);
  CHECK(o->allowUnregistered);
  CHECK(o->verbose);
  CHECK(o->soc == "TegraA");
  CHECK(o->primarySoc == "TegraB");
  CHECK(o->ddsDomain == 7);
  auto managed = parseMasterArguments(
      {"--schedule", "a.tsched,b.tsched", "--manager=m", "--schedule-count=2", "--policy=p.yaml", "-D", "x"});
  REQUIRE(managed.has_value());
  CHECK(managed->schedulePaths == std::vector<std::string>{"a.tsched", "b.tsched"});
  CHECK(managed->managerName == "m");
  CHECK(managed->scheduleCount == 2);
  CHECK(managed->policyPath == "p.yaml");
  // Attached short values and bundled flags, as getopt takes them.
  auto bundled = parseMasterArguments({"-sg.tsched", "-e5", "-mCM", "-x", "TegraA"});
  REQUIRE(bundled.has_value());
  CHECK(bundled->schedulePath == "g.tsched");
  CHECK(bundled->iterations == 5);
  CHECK((bundled->freeRunning && bundled->noPinning && bundled->lockMemory));
  CHECK(bundled->soc == "TegraA");
  // The help lists each option with both names.
  const std::string help = tactus::master::masterUsage();
  for (const tactus::OptionSpec& spec : tactus::master::masterOptionSpecs()) {
    INFO(spec.longName);
    CHECK(help.find("--" + spec.longName) != std::string::npos);
  }
  CHECK(help.find("  -s, --schedule FILE") != std::string::npos);
  CHECK(help.find("  -t, --timeout-us US") != std::string::npos);
  CHECK(help.find("  -D, --discriminator NAME") != std::string::npos);
}

TEST_CASE("the master takes several schedules with a schedule manager", "[master][args]") {
  auto o = parseMasterArguments({"-s", "a.tsched,b.tsched,c.tsched", "-N", "mgr", "-i", "3", "-D", "x"});
  REQUIRE(o.has_value());
  CHECK(o->schedulePaths == std::vector<std::string>{"a.tsched", "b.tsched", "c.tsched"});
  CHECK(o->managerName == "mgr");
  CHECK(o->scheduleCount == 3);
  auto one = parseMasterArguments({"-s", "a.tsched"});
  REQUIRE(one.has_value());
  CHECK(one->schedulePaths == std::vector<std::string>{"a.tsched"});
  CHECK(one->managerName.empty());
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
      // More than a year: its deadlines in ns (times two) would overflow and end the run at once.
      {{"-s", "g", "-t", "10000000000000000"}, "-t expects microseconds 0..31536000000000 (a year) or -1 (forever)"},
      {{"-s", "g", "-P", "200"}, "-P expects a priority"},
      {{"-s", "g", "--bogus"}, "unknown option '--bogus'"},
      {{"-s", "g", "--epoch", "3", "--epo=4"}, "option '--epochs' given twice"},
      {{"-s", "g", "--timeout-ms", "3"}, "unknown option '--timeout-ms' (did you mean '--timeout-us'?)"},
      {{"-s", "g", "--verbose=yes"}, "option '--verbose' takes no value"},
      {{"-s", "g", "--core=x"}, "option '--core' expects an integer, got 'x'"},
      {{"-s", "g", "--priority=100"}, "--priority expects a priority 1..99"},
      {{"-s", "g", "-e", "99999999999999999999"}, "-e expects a count >= 0"},
      {{"-s", "g", "--instance=x"}, "unknown option '--instance' (the instance is -D, --discriminator)"},
      {{"g.tsched"}, "unexpected argument 'g.tsched' (did you mean '-s g.tsched'?)"},
      {{"-s", "a.tsched", "--schedule=b.tsched"}, "--schedule given twice ('a.tsched', then 'b.tsched')"},
      {{"-s", "g", "-D", "a/b"}, "instance name 'a/b'"},
      {{"-s", "a.tsched", "-s", "b.tsched", "-D", "x"},
       "-s given twice ('a.tsched', then 'b.tsched'): one -s per master; list several schedule files in it"},
      {{"-s", "a.tsched", "-l", "one.log", "-l", "two.log"}, "option '-l' given twice"},
      {{"-s", "a.tsched", "-D", "x", "-D", "y"}, "option '-D' given twice"},
      {{"-s", "a.tsched", "-e", "1", "-e", "2"}, "option '-e' given twice"},
      {{"-s", "a.tsched,b.tsched"}, "several schedules need a schedule manager (-N name)"},
      {{"-s", "a.tsched,b.tsched", "-N", "m", "-i", "3"}, "-i 3 does not match the 2 schedule files of -s"},
      {{"-s", "a.tsched", "-i", "1"}, "-i needs -N"},
      {{"-s", "a.tsched,,b.tsched", "-N", "m"}, "an empty file name in the list"},
      {{"-s", "a.tsched,b.tsched", "-N", "m", "-e", "5"}, "-e cannot be combined with -N"},
      {{"-s", "a.tsched", "-N", ""}, "-N expects a manager name"},
      {{"-s", "a.tsched", "-N", "m", "-i", "0"}, "-i expects a schedule count >= 1"},
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
  tactus::test::ChildProcesses children;
  const pid_t m = children.spawn({tactus::test::buildPath("master/tactus-master"), "-s", dir + "/a.tsched", "-s",
                                  dir + "/b.tsched", "-D", tactus::test::uniqueInstance("twice")},
                                 out);
  CHECK(tactus::test::waitFor(m, 10'000) == 2);
  CHECK(tactus::test::readFile(out).find("one -s per master; list several schedule files in it") != std::string::npos);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

TEST_CASE("tactus-master refuses a schedule that is not a regular file instead of reading forever", "[master][args]") {
  const std::string dir = tactus::test::scratchDir("devzero");
  const std::string out = dir + "/master.out";
  tactus::test::ChildProcesses children;
  const pid_t m = children.spawn({tactus::test::buildPath("master/tactus-master"), "-s", "/dev/zero", "-D",
                                  tactus::test::uniqueInstance("devzero")},
                                 out);
  CHECK(tactus::test::waitFor(m, 10'000) == 2);
  CHECK(tactus::test::readFile(out).find("schedule file '/dev/zero': not a regular file") != std::string::npos);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

TEST_CASE("tactus-master reports a standard output it cannot write, exit 1", "[master][output][device]") {
  const std::string dir = tactus::test::scratchDir("fullout");
  const std::string full = dir + "/full";
  std::string cannot;
  if (::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) {  // like /dev/full, our own node
    cannot = std::string("cannot create a full device node with mknod: ") + std::strerror(errno);
  } else if (const int probe = ::open(full.c_str(), O_WRONLY | O_CLOEXEC); probe < 0) {
    cannot = "cannot open the device node " + full + ": " + std::strerror(errno);  // e.g. nodev
  } else {
    ::close(probe);
  }
  if (!cannot.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    TACTUS_SKIP(cannot);
  }
  {
    tactus::test::ChildProcesses children;
    const std::string master = tactus::test::buildPath("master/tactus-master");
    for (const std::string option : {"--version", "--help"}) {
      std::string err = dir;
      err += "/err";
      err += option;
      // stdout to the full device, stderr to a file.
      const pid_t m = children.spawn(
          {"/bin/sh", "-c", "exec \"$0\" \"$1\" >\"$2\" 2>\"$3\"", master, option, full, err}, dir + "/sh.out");
      INFO(option);
      CHECK(tactus::test::waitFor(m, 10'000) == 1);
      CHECK(tactus::test::readFile(err).find(
                "tactus-master: cannot write to standard output: No space left on device") != std::string::npos);
    }
    // The same to a writable file succeeds.
    const pid_t ok = children.spawn({master, "--version"}, dir + "/version.out");
    CHECK(tactus::test::waitFor(ok, 10'000) == 0);
    CHECK(tactus::test::readFile(dir + "/version.out").find("tactus-master ") == 0);
    // The other tools the same way (they exited 0 with their output lost; finishStandardOutput).
    for (const std::string tool : {"compiler/tactus-compile", "tools/tactus-manager", "tools/tactus-top"}) {
      const std::string name = tool.substr(tool.find('/') + 1);
      std::string err = dir;
      err += "/err-";
      err += name;
      const pid_t p = children.spawn(
          {"/bin/sh", "-c", "exec \"$0\" --help >\"$1\" 2>\"$2\"", tactus::test::buildPath(tool), full, err},
          dir + "/sh.out");
      INFO(tool);
      CHECK(tactus::test::waitFor(p, 10'000) == 1);
      CHECK(tactus::test::readFile(err).find(name + ": cannot write to standard output: ") != std::string::npos);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

TEST_CASE("the master takes STM's multi-SoC timeouts -a (seconds) and -o (microseconds)", "[master][args]") {
  auto o = parseMasterArguments({"-s", "g.tsched", "-x", "SocA", "-a", "30", "-o", "500000"});
  REQUIRE(o.has_value());
  CHECK(o->startSyncS == 30);
  CHECK(o->socTimeoutUs == 500000);
  auto longNames = parseMasterArguments({"-s", "g.tsched", "--start-timeout-s=-1", "--sync-timeout-us=1000"});
  REQUIRE(longNames.has_value());
  CHECK(longNames->startSyncS == -1);
  CHECK(longNames->socTimeoutUs == 1000);
  auto defaults = parseMasterArguments({"-s", "g.tsched"});
  REQUIRE(defaults.has_value());
  CHECK(defaults->startSyncS == 600);
  CHECK(defaults->socTimeoutUs == 5'000'000);
  auto badA = parseMasterArguments({"-s", "g.tsched", "-a", "-2"});
  REQUIRE_FALSE(badA.has_value());
  CHECK(badA.error().message.find("-a") != std::string::npos);
  auto badO = parseMasterArguments({"-s", "g.tsched", "-o", "10"});
  REQUIRE_FALSE(badO.has_value());
  CHECK(badO.error().message.find("microseconds 1000..3600000000") != std::string::npos);
}

TEST_CASE("the master's replay options", "[master][args]") {
  auto o = parseMasterArguments({"-s", "g.tsched", "--replay", "rec", "--replay-rate", "0.5", "--replay-sources",
                                 "Sensor.Source,Camera.Capture"});
  REQUIRE(o);
  CHECK(o->replayDir == "rec");
  CHECK(o->replayRate == 0.5);
  CHECK(o->replaySources == std::vector<std::string>{"Sensor.Source", "Camera.Capture"});
  CHECK(parseMasterArguments({"-s", "g.tsched", "--replay", "rec", "--replay-rate", "0"})->replayRate == 0);
  const auto refused = [](const std::vector<std::string>& args, const std::string& words) {
    auto r = parseMasterArguments(args);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.find(words) != std::string::npos);
  };
  refused({"-s", "g.tsched", "--replay-rate", "2"}, "--replay-rate needs --replay DIR");
  refused({"-s", "g.tsched", "--replay", "r", "--replay-rate", "-1"}, "expects a rate");
  refused({"-s", "g.tsched", "--replay", "r", "--replay-rate", "fast"}, "not 'fast'");
  refused({"-s", "g.tsched", "--replay", "r", "--replay-sources", "Source"}, "expects Client.Runnable");
  refused({"-s", "g.tsched", "--replay", "r", "--record", "r"}, "name the same folder");
}
