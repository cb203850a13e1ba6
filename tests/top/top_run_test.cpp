// tactus-top and tactus-manager status against a real master and real clients on a plain run
// (no schedule manager): what they show while it runs, and nothing left behind once it ended.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "runtime_harness.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 10'000;
constexpr std::uint32_t kRunning = 2;  // shm::SegmentState::kRunning

// The count a runnable's JSON object holds, or -1 when it is not there.
long long jsonCount(const std::string& json, const std::string& runnable, const std::string& key) {
  const std::regex row("\\{\"name\":\"" + runnable + "\"[^}]*\"" + key + "\":(-?[0-9]+)");
  std::smatch m;
  return std::regex_search(json, m, row) ? std::stoll(m[1]) : -1;
}

// A mode of one hyperepoch on CPU0 (1 ms): Client0.R0, then Client1.R0.
std::string modeYaml(int id) {
  std::ostringstream y;
  y << "Version: 3.0.0\nMode" << id << ":\n  Identifier: " << id << "\n  Resources:\n    CPU: [CPU0]\n"
    << "  Hyperepochs:\n    - H0:\n        Period: 1000us\n        Resources: [CPU0]\n"
    << "        Epochs:\n          - E: {Period: 1000us}\n  Clients:\n"
    << "    - Client0:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
    << "                - R0: {WCET: 100us, Resources: [CPU0]}\n"
    << "    - Client1:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
    << "                - R0: {WCET: 100us, Resources: [CPU0], Dependencies: [Client0.R0]}\n";
  return y.str();
}

}  // namespace

TEST_CASE("tactus-top --once --json and tactus-manager status show a running plain run; nothing is left after it",
          "[top-run]") {
  const std::string instance = uniqueInstance("top");
  const std::string dir = scratchDir(instance);
  const Schedule schedule = makeSchedule(
      {
          {"Client0", "A", "CPU0", 50'000, {}, 0, {}},
          {"Client1", "C", "CPU1", 40'000, {"Client0.A"}, 0, {}},
      },
      1'000'000);
  const std::string schedulePath = dir + "/schedule.tsched";
  REQUIRE(saveScheduleFile(schedule, schedulePath).has_value());
  ChildProcesses children;
  const pid_t m =
      children.spawn({buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance}, dir + "/m.out");
  const pid_t c0 = children.spawn(
      {buildPath("tests/runtime/tactus-test-client"), "--name", "Client0", "--instance", instance}, dir + "/c0.out");
  const pid_t c1 = children.spawn(
      {buildPath("tests/runtime/tactus-test-client"), "--name", "Client1", "--instance", instance}, dir + "/c1.out");
  REQUIRE(waitForSegmentState(instance, kRunning, kWaitMs));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few hundred iterations drained

  const pid_t top =
      children.spawn({buildPath("tools/tactus-top"), "-D", instance, "--once", "--json"}, dir + "/top.out");
  REQUIRE(waitFor(top, kWaitMs) == 0);
  const std::string json = readFile(dir + "/top.out");
  INFO(json);
  CHECK(json.find("\"instance\":\"" + instance + "\"") != std::string::npos);
  CHECK(json.find("\"identifier\":7") != std::string::npos);
  CHECK(json.find("\"state\":\"running\"") != std::string::npos);
  CHECK(json.find("{\"name\":\"Client0\",\"pid\":" + std::to_string(c0) + ",\"state\":\"entered\"}") !=
        std::string::npos);
  CHECK(json.find("{\"name\":\"Client1\",\"pid\":" + std::to_string(c1) + ",\"state\":\"entered\"}") !=
        std::string::npos);
  CHECK(jsonCount(json, "Client0.A", "wcet_ns") == 50'000);
  CHECK(jsonCount(json, "Client1.C", "wcet_ns") == 40'000);
  CHECK(jsonCount(json, "Client0.A", "count") > 0);
  CHECK(jsonCount(json, "Client1.C", "count") > 0);
  CHECK(jsonCount(json, "Client0.A", "max_ns") >= jsonCount(json, "Client0.A", "median_ns"));
  CHECK(std::regex_search(json, std::regex("\"releases\":[1-9][0-9]*")));

  // The screen of --once names the same.
  const pid_t screen = children.spawn({buildPath("tools/tactus-top"), "-D", instance, "--once"}, dir + "/screen.out");
  REQUIRE(waitFor(screen, kWaitMs) == 0);
  const std::string text = readFile(dir + "/screen.out");
  CHECK_THAT(text, Catch::Contains("schedule 7") && Catch::Contains("Client0.A") && Catch::Contains("entered"));

  // The live view runs at the idle scheduling class, so it never delays a release or a worker.
  const pid_t live = children.spawn({buildPath("tools/tactus-top"), "-D", instance, "-n", "50"}, dir + "/live.out");
  REQUIRE(waitForPath(dir + "/live.out", kWaitMs));
  waitUntil([&] { return readFile(dir + "/live.out").find("Client0.A") != std::string::npos; }, 2000);
  CHECK(::sched_getscheduler(live) == SCHED_IDLE);

  // tactus-manager status on a run without a manager answers from the segment.
  const pid_t status =
      children.spawn({buildPath("tools/tactus-manager"), "-D", instance, "-t", "0", "status"}, dir + "/status.out");
  REQUIRE(waitFor(status, kWaitMs) == 0);
  const std::string said = readFile(dir + "/status.out");
  CHECK_THAT(said, Catch::Contains("no schedule manager (a plain run): schedule 7 running") &&
                       Catch::Contains("Client0 entered") && Catch::Contains("Client1 entered"));

  ::kill(m, SIGTERM);
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK(waitFor(live, kWaitMs) == 0);  // the live view ends with the run
  CHECK_THAT(readFile(dir + "/live.out"), Catch::Contains("ended"));
  CHECK_FALSE(segmentPresent(instance));
  CHECK_FALSE(std::filesystem::exists("/dev/shm/tactus_" + instance + ".manager"));

  // Once the run ended, both say there is nothing to read.
  const pid_t late = children.spawn({buildPath("tools/tactus-top"), "-D", instance, "--once"}, dir + "/late.out");
  CHECK(waitFor(late, kWaitMs) == 1);
  CHECK_THAT(readFile(dir + "/late.out"), Catch::Contains("no master publishes instance"));
  if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

TEST_CASE("tactus-top --once --json under a schedule manager shows both schedules, the running one and the switches",
          "[top-run]") {
  const std::string instance = uniqueInstance("topmgr");
  const std::string dir = scratchDir(instance);
  ChildProcesses children;
  std::string list;
  for (int id : {401, 402}) {
    const std::string yaml = dir + "/m" + std::to_string(id) + ".yaml",
                      sched = dir + "/m" + std::to_string(id) + ".tsched";
    std::ofstream(yaml) << modeYaml(id);
    REQUIRE(waitFor(children.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", sched}, sched + ".out"),
                    kWaitMs) == 0);
    list += (list.empty() ? "" : ",") + sched;
  }
  const pid_t m = children.spawn(
      {buildPath("master/tactus-master"), "-s", list, "-N", "mgr", "-D", instance, "-t", "15000000"}, dir + "/m.out");
  const pid_t c0 = children.spawn(
      {buildPath("tests/runtime/tactus-test-client"), "--name", "Client0", "--instance", instance}, dir + "/c0.out");
  const pid_t c1 = children.spawn(
      {buildPath("tests/runtime/tactus-test-client"), "--name", "Client1", "--instance", instance}, dir + "/c1.out");
  const auto tool = [&](std::vector<std::string> args, const std::string& who) {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", instance, "-t", "15000"};
    argv.insert(argv.end(), args.begin(), args.end());
    return waitFor(children.spawn(argv, dir + "/" + who + ".out"), kWaitMs);
  };
  REQUIRE(tool({"start", "401"}, "start") == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(tool({"rollover", "402", "401"}, "roll") == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  const pid_t top =
      children.spawn({buildPath("tools/tactus-top"), "-D", instance, "--once", "--json"}, dir + "/top.out");
  REQUIRE(waitFor(top, kWaitMs) == 0);
  const std::string json = readFile(dir + "/top.out");
  INFO(json);
  CHECK(json.find("\"managed\":true,\"running_schedule\":402") != std::string::npos);
  CHECK(json.find("\"running_schedule_name\":\"Mode402\"") != std::string::npos);
  CHECK(json.find("\"identifier\":401,\"segment\":\"" + instance + "\"") != std::string::npos);
  CHECK(json.find("\"identifier\":402,\"segment\":\"" + instance + ".schedule1\"") != std::string::npos);
  CHECK(std::regex_search(json, std::regex("\"kind\":\"start\",\"schedule\":401,\"other\":-1")));
  CHECK(std::regex_search(json, std::regex("\"kind\":\"stop\",\"schedule\":401,\"other\":402")));
  CHECK(std::regex_search(json, std::regex("\"kind\":\"start\",\"schedule\":402,\"other\":401")));
  CHECK(jsonCount(json, "Client1.R0", "count") > 0);
  // The screen names the running schedule by identifier and name.
  const pid_t screen = children.spawn({buildPath("tools/tactus-top"), "-D", instance, "--once"}, dir + "/screen.out");
  REQUIRE(waitFor(screen, kWaitMs) == 0);
  CHECK_THAT(readFile(dir + "/screen.out"), Catch::Contains("schedule manager: schedule 402 'Mode402' running"));

  CHECK(tool({"exit"}, "exit") == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(instance));
  CHECK_FALSE(segmentPresent(instance + ".schedule1"));
  CHECK_FALSE(segmentPresent(instance + ".manager"));
  if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}
