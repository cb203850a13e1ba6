// The run core in one process with each activation (run/activation.hpp), the way iceoryx tests
// RouDi's port manager without a RouDi process: this test constructs the master's Run and calls
// execute() on a thread of its own, against real client processes (tactus-test-client). A case
// checks what one strategy adds to the core; each fails when that part of its strategy is removed
// (checked by hand: the releaser's start, the exit request, the signal's stop, the manager
// channel, the schedules' naming).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "master.hpp"
#include "run/run.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {
namespace {

using namespace tactus::test;

constexpr int kWaitMs = 10'000;
constexpr std::uint32_t kRunning = 2;  // shm::SegmentState::kRunning
constexpr std::uint32_t kEntered = 2;  // shm::ClientState::kEntered

Schedule twoClients() {
  return makeSchedule(
      {{"Client0", "A", "CPU0", 50'000, {}, 0, {}}, {"Client1", "B", "CPU1", 30'000, {"Client0.A"}, 0, {}}}, 1'000'000,
      1);
}

// One in-process run: the schedule file, the options, the Run on a thread of its own and its
// output. A run that has not ended within its patience gets a SIGTERM (the Run's own handler
// takes it), so a broken strategy fails the case instead of hanging it.
struct CoreRun : TestRun {
  Schedule schedule = twoClients();
  MasterOptions options;
  std::ostringstream out, err;
  std::future<int> code;
  std::atomic<bool> done{false};

  explicit CoreRun(const std::string& tag) : TestRun(tag) {
    REQUIRE(verifySchedule(schedule).ok());
    REQUIRE(saveScheduleFile(schedule, schedulePath).has_value());
    options.schedulePaths = {schedulePath};
    options.instance = instance;
    options.logPath = logPath;
  }
  void start() {
    code = std::async(std::launch::async, [this] {
      Run run(options, out, err);
      const int c = run.execute();
      done = true;
      return c;
    });
  }
  pid_t client(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{buildPath("tests/runtime/tactus-test-client"), "--name", name, "--instance",
                                  instance};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, this->TestRun::out(name));
  }
  bool running() const { return waitForSegmentState(instance, kRunning, kWaitMs); }
  int finish() {
    if (code.wait_for(std::chrono::milliseconds(kWaitMs)) != std::future_status::ready) ::kill(::getpid(), SIGTERM);
    const int c = code.get();
    UNSCOPED_INFO("master output: " << out.str() << err.str());
    return c;
  }
};

TEST_CASE("master run core: the immediate activation runs the schedule to its frame limit", "[master][run-core]") {
  CoreRun run("core-frames");
  run.options.iterations = 100;
  run.start();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  REQUIRE(run.finish() == kExitOk);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK(run.out.str().find("tactus-master: ran 100 hyperepoch iterations;") != std::string::npos);
  CHECK(run.out.str().find("(schedule '") != std::string::npos);  // one schedule: not named by identifier
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(checkLog(run.schedule, *log, 100) == "");
  CHECK_FALSE(segmentPresent(run.instance));
}

TEST_CASE("master run core: the immediate activation ends the run at a client's exit request", "[master][run-core]") {
  CoreRun run("core-exit");
  run.start();
  const pid_t c0 = run.client("Client0", {"--exit-at-iteration", "20"});
  const pid_t c1 = run.client("Client1");
  REQUIRE(run.finish() == kExitOk);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  INFO(run.out.str() + run.err.str());
  CHECK(run.out.str().find("'Client0'") != std::string::npos);
  CHECK(run.out.str().find("stopped by a signal") == std::string::npos);
}

TEST_CASE("master run core: the immediate activation stops the schedule at a signal", "[master][run-core]") {
  CoreRun run("core-signal");
  run.start();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  REQUIRE(run.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(::getpid(), SIGTERM);
  REQUIRE(run.finish() == kExitOk);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  INFO(run.out.str() + run.err.str());
  // Stopped at the boundary within the grace: no grace run out, whose end names the client (or
  // the switch) that "did not" finish.
  CHECK(run.out.str().find("tactus-master: the master was stopped by a signal; ") != std::string::npos);
  CHECK(run.out.str().find("did not") == std::string::npos);
  CHECK(run.err.str().find("did not") == std::string::npos);
}

TEST_CASE("master run core: the managed activation waits for a start on its manager channel", "[master][run-core]") {
  CoreRun run("core-managed");
  run.options.managerName = "core-manager";
  run.start();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  REQUIRE(waitForClientState(run.instance, 0, kEntered, kWaitMs));
  REQUIRE(waitForClientState(run.instance, 1, kEntered, kWaitMs));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(segmentPresent(shm::managerInstanceName(run.instance)));  // made and opened
  CHECK_FALSE(run.done.load());                                   // no frame limit: nothing runs
  ::kill(::getpid(), SIGTERM);
  REQUIRE(run.finish() == kExitOk);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  INFO(run.out.str() + run.err.str());
  CHECK(run.out.str().find("(schedules 7 (") != std::string::npos);  // a managed run names its schedules
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(log->header.scheduleCount == 1);
  CHECK_FALSE(segmentPresent(shm::managerInstanceName(run.instance)));  // removed with the run
}

// A managed run of one schedule (-N with one -s): the clients' workers wait for the manager's
// activation as with several schedules. They used to run the unmanaged way (the segment's
// scheduleCount is 1) and never saw a frame, until -t named the first runnable stuck.
TEST_CASE("master run core: the managed activation runs a single schedule once the manager starts it",
          "[master][run-core]") {
  CoreRun run("core-managed-one");
  run.options.managerName = "core-manager";
  run.start();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  REQUIRE(waitForClientState(run.instance, 1, kEntered, kWaitMs));
  auto manager = [&](const std::vector<std::string>& args, const std::string& tag) {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", run.instance, "-N", "core-manager"};
    argv.insert(argv.end(), args.begin(), args.end());
    return waitFor(run.children.spawn(argv, run.TestRun::out(tag)), kWaitMs);
  };
  REQUIRE(manager({"start", "7"}, "start") == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // 1 ms periods: many iterations
  CHECK(manager({"exit"}, "exit") == 0);
  REQUIRE(run.finish() == kExitOk);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  INFO(run.out.str() + run.err.str());
  CHECK(run.err.str().find("stuck") == std::string::npos);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  std::size_t runs = 0;
  for (const EventRecord& r : log->records) runs += r.kind == static_cast<std::uint16_t>(EventKind::kRun) ? 1 : 0;
  CHECK(runs >= 20);  // both runnables ran, iteration after iteration
}

// The managed activation's switch job: a rollover that waits for a client frozen in its switch
// callback (it never acknowledges), and a signal. The end comes at the grace, names the client that
// holds the switch (not "a schedule switch"), and the waiting rollover fails with that cause.
TEST_CASE("master run core: a signal in a rollover held by a client's switch callback names the client",
          "[master][run-core]") {
  CoreRun run("core-roll-signal");
  run.options.managerName = "core-manager";
  Schedule second = run.schedule;
  second.identifier = 8;
  const std::string secondPath = run.dir + "/second.yaml";
  REQUIRE(saveScheduleFile(second, secondPath).has_value());
  run.options.schedulePaths.push_back(secondPath);
  run.start();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1", {"--switch-callback-hangs"});
  REQUIRE(waitForClientState(run.instance, 1, kEntered, kWaitMs));
  auto manager = [&](const std::vector<std::string>& args, const std::string& tag) {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", run.instance, "-N", "core-manager"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run.children.spawn(argv, run.TestRun::out(tag));
  };
  REQUIRE(waitFor(manager({"start", "7"}, "start"), kWaitMs) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t roll = manager({"rollover", "8", "7"}, "rollover");
  for (int k = 0;
       k < kWaitMs / 5 && readFile(run.TestRun::out("Client1")).find("switch schedule=8") == std::string::npos; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(run.done.load());  // the rollover waits for Client1's acknowledgement
  ::kill(::getpid(), SIGTERM);
  REQUIRE(run.finish() == kExitOk);
  INFO(run.out.str() + run.err.str());
  CHECK(run.err.str().find("client 'Client1' did not run its switch callbacks for the switch to hyperepoch") !=
        std::string::npos);
  CHECK(run.err.str().find("a schedule switch") == std::string::npos);
  CHECK(waitFor(roll, kWaitMs) == 1);
  const std::string rolled = readFile(run.TestRun::out("rollover"));
  INFO(rolled);
  CHECK(rolled.find("the run ended during the rollover: the master was stopped by a signal; client 'Client1'") !=
        std::string::npos);
  ::kill(c1, SIGKILL);  // its callback never returns
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(shm::managerInstanceName(run.instance)));
}

}  // namespace
}  // namespace tactus::master
