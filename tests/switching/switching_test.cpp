// Schedule-switching integration tests: the real tactus-master with several schedules and a
// schedule manager (-N), real client processes (tactus-test-client), and the manager API called
// from this test process (so the moments its synchronous calls return are known exactly). Every
// check of what ran comes from the master's event log.
// (Above 600 lines: the scenarios share the process harness (SwitchRun) and the log checks defined
// at the top; a second file would need them in a header of their own.)
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "manager_waits.hpp"
#include "runtime_harness.hpp"
#include "tactus/client.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/manager.hpp"
#include "test_skip.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 20'000;
constexpr std::uint32_t kNoSchedule = 0xffffffffu;

// REQUIREs that a Result<void> call succeeded and, when it did not, prints the error's message.
#define REQUIRE_OK(call)                                       \
  do {                                                         \
    const Result<void> result_ = (call);                       \
    INFO((result_ ? std::string() : result_.error().message)); \
    REQUIRE(result_);                                          \
  } while (false)

std::int64_t nowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

// A graph of `hyperepochs` hyperepochs, hyperepoch k on CPU k with period `periodUs`; Client0
// and Client1 run a runnable each in every hyperepoch (Client1's after Client0's). `extra` adds a
// runnable only this mode has (Client1.Extra in hyperepoch 0); `merged` puts CPU0 and CPU1 in
// one hyperepoch (a different partition).
std::string modeYaml(std::uint16_t id, int hyperepochs, int periodUs, bool extra, bool merged = false,
                     bool thirdClient = false) {
  std::ostringstream y;
  y << "Version: 3.0.0\nMode" << id << ":\n  Identifier: " << id << "\n  Resources:\n    CPU: [";
  for (int k = 0; k < hyperepochs; ++k) y << (k ? ", " : "") << "CPU" << k;
  y << "]\n  Hyperepochs:\n";
  const int groups = merged ? hyperepochs - 1 : hyperepochs;
  for (int g = 0; g < groups; ++g) {
    y << "    - H" << g << ":\n        Period: " << periodUs << "us\n        Resources: [";
    if (merged && g == 0) {
      y << "CPU0, CPU1";
    } else {
      y << "CPU" << (merged ? g + 1 : g);
    }
    y << "]\n        Epochs:\n          - E: {Period: " << periodUs << "us}\n";
  }
  for (int c = 0; c < 2; ++c) {
    y << "    - Client" << c << ":\n        Epochs:\n";
    for (int g = 0; g < groups; ++g) {
      const int cpu = merged ? (g == 0 ? 0 : g + 1) : g;
      y << "          - H" << g << ".E:\n              Runnables:\n";
      y << "                - R" << g << ": {WCET: 100us, Resources: [CPU" << cpu << "]";
      if (c == 1) y << ", Dependencies: [Client0.R" << g << "]";
      y << "}\n";
      if (c == 1 && g == 0 && extra) {
        y << "                - Extra: {WCET: 50us, Resources: [CPU" << cpu << "], Dependencies: [Client1.R0]}\n";
      }
    }
  }
  if (thirdClient) {  // Client2, in this mode only: one runnable after Client1's in hyperepoch 0
    y << "    - Client2:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
      << "                - Only: {WCET: 50us, Resources: [CPU0], Dependencies: [Client1.R0]}\n";
  }
  std::string text = y.str();
  // "Clients:" goes between the hyperepochs and the first client.
  const std::size_t at = text.find("    - Client0:");
  text.insert(at, "  Clients:\n");
  return text;
}

struct SwitchRun {
  std::string instance;
  std::string dir;
  std::vector<std::string> schedulePaths;
  std::string logPath;
  bool unpinned = false;  // a mode uses a core this machine lacks: the master runs with -C
  mutable ChildProcesses children;

  SwitchRun(const std::string& tag, const std::vector<std::string>& yamls) {
    // Three hyperepochs use CPU0-CPU2; on a 2-core machine the clients would refuse CPU2 (they
    // check their cores at enter: runtime_test.cpp), so such a run goes without pinning.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    const std::regex cpuName("CPU([0-9]+)");
    for (const std::string& y : yamls) {
      for (auto m = std::sregex_iterator(y.begin(), y.end(), cpuName); m != std::sregex_iterator(); ++m)
        if (!CPU_ISSET(std::stoi((*m)[1].str()), &allowed)) unpinned = true;
    }
    instance = uniqueInstance(tag);
    dir = scratchDir(instance);
    logPath = dir + "/events.log";
    for (std::size_t k = 0; k < yamls.size(); ++k) {
      const std::string yaml = dir + "/mode" + std::to_string(k) + ".yaml";
      const std::string sched = dir + "/mode" + std::to_string(k) + ".tsched";
      std::ofstream(yaml) << yamls[k];
      const pid_t c = children.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", sched}, sched + ".out");
      REQUIRE(waitFor(c, kWaitMs) == 0);
      schedulePaths.push_back(sched);
    }
  }
  ~SwitchRun() {
    tactus::manager::shutdown();
    children.killAll();
    for (std::size_t k = 0; k < 4; ++k) {
      const std::string name = k == 0 ? instance : instance + ".schedule" + std::to_string(k);
      if (segmentPresent(name)) ::unlink(("/dev/shm/tactus_" + name).c_str());
    }
    ::unlink(("/dev/shm/tactus_" + instance + ".manager").c_str());
    if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  std::string out(const std::string& who) const { return dir + "/" + who + ".out"; }
  std::string scheduleList() const {
    std::string list;
    for (const std::string& p : schedulePaths) list += (list.empty() ? "" : ",") + p;
    return list;
  }
  pid_t master(std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{
        buildPath("master/tactus-master"), "-s", scheduleList(), "-N", "mgr", "-D", instance, "-l", logPath};
    // A generous -t unless the test gives its own.
    if (std::find(extra.begin(), extra.end(), "-t") == extra.end()) argv.insert(argv.end(), {"-t", "15000000"});
    if (unpinned) argv.push_back("-C");
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out("master"));
  }
  pid_t client(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{buildPath("tests/runtime/tactus-test-client"), "--name", name, "--instance",
                                  instance};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out(name));
  }
  // tactus-manager (the command) on this instance, waiting up to 15 s for the master.
  pid_t tool(const std::vector<std::string>& args, const std::string& who) const {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", instance, "-t", "15000"};
    argv.insert(argv.end(), args.begin(), args.end());
    return children.spawn(argv, out(who));
  }
  void attachManager() const {
    tactus::manager::ManagerOptions options;
    options.instance = instance;
    options.timeoutMs = kWaitMs;
    REQUIRE_OK(tactus::manager::init("mgr", options));
  }
};

// One call of the manager: when it was made and when it returned.
struct Call {
  std::int64_t beforeNs = 0;
  std::int64_t afterNs = 0;
};

template <typename F>
Call timed(F&& call) {
  Call c;
  c.beforeNs = nowNs();
  const Result<void> r = call();
  c.afterNs = nowNs();
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  return c;
}

// The runs of schedule `id` in the log.
std::vector<EventRecord> runsOf(const EventLog& log, std::uint16_t id) {
  std::vector<EventRecord> runs;
  for (const EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.schedule == id) runs.push_back(r);
  }
  return runs;
}

// Every run of schedule `id` lies inside one of its active windows [start called, stop returned].
std::string runsInsideWindows(const EventLog& log, std::uint16_t id,
                              const std::vector<std::pair<std::int64_t, std::int64_t>>& windows) {
  for (const EventRecord& r : runsOf(log, id)) {
    bool inside = false;
    for (const auto& [from, to] : windows) inside = inside || (r.startNs >= from && r.endNs <= to);
    if (!inside) {
      return "a run of schedule " + std::to_string(id) + " (instance " + std::to_string(r.instance) + ", iteration " +
             std::to_string(r.iteration) + ", " + std::to_string(r.startNs) + ".." + std::to_string(r.endNs) +
             ") lies outside every window between its start call and its stop's return";
    }
  }
  return "";
}

// The manager's status: `more` iterations beyond those at the call, within 10 s.
bool awaitIterations(std::uint64_t more) { return test::awaitIterations(more, 10'000); }

int countOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "complete swap with two hyperepochs: nothing runs before start, nothing of a schedule after its stop returned",
    "[switching][swap]") {
  SwitchRun run("swap", {modeYaml(101, 2, 2000, false), modeYaml(102, 2, 1000, true)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // entered clients, nothing started: nothing runs
  const Call startA = timed([] { return manager::startSchedule(101); });
  CHECK(awaitIterations(30));
  const Call stopA = timed([] { return manager::stopSchedule(101); });
  const Call startB = timed([] { return manager::startSchedule(102); });
  CHECK(awaitIterations(40));
  const Call stopB = timed([] { return manager::stopSchedule(102); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Call startA2 = timed([] { return manager::startSchedule(101); });
  CHECK(awaitIterations(10));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  CHECK(readFile(run.out("Client1")).find("status=exit-requested") != std::string::npos);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(log->header.scheduleCount == 2);
  const auto a = runsOf(*log, 101);
  const auto b = runsOf(*log, 102);
  CHECK(a.size() >= 40);  // ~30 iterations x 2 hyperepochs x 2 runnables in the first window alone
  CHECK(b.size() >= 60);
  // Schedule 101's second window ends when the run ended (after exitRun returned).
  CHECK(runsInsideWindows(*log, 101, {{startA.beforeNs, stopA.afterNs}, {startA2.beforeNs, nowNs()}}) == "");
  CHECK(runsInsideWindows(*log, 102, {{startB.beforeNs, stopB.afterNs}}) == "");
  // Iterations continue over activations: the second window of 101 starts where the first stopped.
  std::map<std::uint32_t, std::uint32_t> stopAt;  // hyperepoch -> first iteration not run
  int starts = 0;
  int stops = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart)) ++starts;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStop)) ++stops;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStop) && r.schedule == 101 &&
        !stopAt.count(r.instance))
      stopAt[r.instance] = r.iteration;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart) && r.schedule == 101 &&
        stopAt.count(r.instance))
      CHECK(r.iteration == stopAt[r.instance]);
  }
  CHECK(starts == 6);  // 3 starts x 2 hyperepochs
  CHECK(stops == 6);   // 2 stops + the exit's stop, x 2 hyperepochs
  // The extra runnable only schedule 102 has ran, registered by the client from the union.
  std::set<std::uint32_t> ranA, ranB;
  for (const EventRecord& r : a) ranA.insert(r.aux);
  for (const EventRecord& r : b) ranB.insert(r.aux);
  CHECK(ranA.size() == 4);
  CHECK(ranB.size() == 5);
}

TEST_CASE("rollover with three hyperepochs: each switches on its own, callbacks first, no run of the old one after",
          "[switching][rollover]") {
  SwitchRun run("roll", {modeYaml(201, 3, 1500, false), modeYaml(202, 3, 1000, true)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0", {"--switch-callback"});
  const pid_t c1 = run.client("Client1", {"--switch-callback"});
  run.attachManager();
  const Call start = timed([] { return manager::startSchedule(201); });
  std::vector<Call> rolls;
  for (int k = 0; k < 4; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    rolls.push_back(
        timed([k] { return k % 2 == 0 ? manager::rollOverSchedule(202, 201) : manager::rollOverSchedule(201, 202); }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const std::int64_t end = nowNs();
  // 201 runs from start to roll 0's return and from roll 1's call to roll 2's return, then from
  // roll 3's call on; 202 in between.
  CHECK(runsInsideWindows(
            *log, 201,
            {{start.beforeNs, rolls[0].afterNs}, {rolls[1].beforeNs, rolls[2].afterNs}, {rolls[3].beforeNs, end}}) ==
        "");
  CHECK(runsInsideWindows(*log, 202, {{rolls[0].beforeNs, rolls[1].afterNs}, {rolls[2].beforeNs, rolls[3].afterNs}}) ==
        "");
  // Per rollover and hyperepoch: A's stop and B's start, B's first release after A's last run there.
  int rolloverStarts = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStart) || r.aux == kNoSchedule) continue;
    ++rolloverStarts;
    CHECK(r.aux != r.schedule);
  }
  CHECK(rolloverStarts == 4 * 3);
  std::vector<Schedule> modes;
  for (const std::string& path : run.schedulePaths) {
    auto loaded = loadScheduleFile(path);
    REQUIRE(loaded);
    modes.push_back(std::move(*loaded));
  }
  // B's first release on a hyperepoch comes after the end of every run A started there before it
  // (A's last iteration finished first, whichever thread switched it).
  for (const EventRecord& start : log->records) {
    if (start.kind != static_cast<std::uint16_t>(EventKind::kScheduleStart) || start.aux == kNoSchedule) continue;
    const Schedule& a = start.aux == 201 ? modes[0] : modes[1];
    for (const EventRecord& r : runsOf(*log, static_cast<std::uint16_t>(start.aux))) {
      if (!a.instances.contains(InstanceId{r.instance}) ||
          instanceHyperepoch(a, InstanceId{r.instance}) != HyperepochId{start.instance} || r.startNs >= start.endNs)
        continue;
      CHECK(r.endNs <= start.endNs);
    }
  }
  // Callbacks: each client, once per rollover and hyperepoch, naming the starting schedule,
  // before that hyperepoch's first release of it.
  for (const char* client : {"Client0", "Client1"}) {
    const std::string out = readFile(run.out(client));
    CHECK(countOf(out, "switch schedule=202") == 2 * 3);
    CHECK(countOf(out, "switch schedule=201") == 2 * 3);
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      unsigned schedule = 0;
      unsigned hyperepoch = 0;
      long long ns = 0;
      if (std::sscanf(line.c_str(), "switch schedule=%u hyperepoch=%u ns=%lld", &schedule, &hyperepoch, &ns) != 3)
        continue;
      // The start record of that schedule and hyperepoch released right after this callback.
      std::int64_t release = 0;
      for (const EventRecord& r : log->records) {
        if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart) && r.schedule == schedule &&
            r.instance == hyperepoch && r.endNs >= ns && (release == 0 || r.endNs < release)) {
          release = r.endNs;
        }
      }
      CHECK(release != 0);  // a start followed the callback
      // No run of that schedule and hyperepoch between the callback and that release.
      const Schedule& s = schedule == 201 ? modes[0] : modes[1];
      for (const EventRecord& r : runsOf(*log, static_cast<std::uint16_t>(schedule))) {
        if (s.instances.contains(InstanceId{r.instance}) &&
            instanceHyperepoch(s, InstanceId{r.instance}) == HyperepochId{hyperepoch})
          CHECK_FALSE((r.startNs >= ns && r.startNs < release));
      }
    }
  }
}

TEST_CASE("a rollover whose old hyperepochs all sleep between iterations releases every new one at one time",
          "[switching][rollover]") {
  // 100 us runnables in a 5 ms period: the old schedule is idle at most requests, so the switch
  // job stops both of its hyperepochs itself and starts both new ones together (one release time);
  // started one after the other, each would take its own clock reading.
  SwitchRun run("together", {modeYaml(301, 2, 5000, false), modeYaml(302, 2, 5000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(301));
  constexpr int kRolls = 12;
  for (int k = 0; k < kRolls; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(12));
    REQUIRE_OK(k % 2 == 0 ? manager::rollOverSchedule(302, 301) : manager::rollOverSchedule(301, 302));
  }
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  // A rollover's start records share the request's taking time (startNs); endNs is the release.
  std::map<std::pair<std::uint16_t, std::int64_t>, std::vector<std::int64_t>> releases;
  for (const EventRecord& r : log->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart) && r.aux != kNoSchedule)
      releases[{r.schedule, r.startNs}].push_back(r.endNs);
  }
  CHECK(releases.size() == kRolls);
  int together = 0;
  for (const auto& [rollover, ends] : releases) {
    CHECK(ends.size() == 2);
    if (ends.size() == 2 && ends[0] == ends[1]) ++together;
  }
  INFO(together << " of " << kRolls << " rollovers released both new hyperepochs at one time");
  CHECK(together >= 1);
}

TEST_CASE("bad manager requests get clear errors and the running schedule goes on", "[switching][errors]") {
  SwitchRun run("bad",
                {modeYaml(301, 2, 1000, false), modeYaml(302, 2, 1000, false), modeYaml(303, 3, 1000, false, true)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(301));
  auto unknown = manager::startSchedule(999);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::kNotFound);
  CHECK(unknown.error().message.find("no schedule has identifier 999") != std::string::npos);
  auto twice = manager::startSchedule(302);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == ErrorCode::kInvalidState);
  CHECK(twice.error().message.find("schedule 301 is running") != std::string::npos);
  auto notRunning = manager::stopSchedule(302);
  REQUIRE_FALSE(notRunning);
  CHECK(notRunning.error().code == ErrorCode::kInvalidState);
  CHECK(notRunning.error().message.find("it is not running") != std::string::npos);
  auto partition = manager::rollOverSchedule(303, 301);
  REQUIRE_FALSE(partition);
  CHECK(partition.error().code == ErrorCode::kValidation);
  CHECK(partition.error().message.find("partition resources differently") != std::string::npos);
  auto fromIdle = manager::rollOverSchedule(301, 302);
  REQUIRE_FALSE(fromIdle);
  CHECK(fromIdle.error().code == ErrorCode::kInvalidState);
  // The tool says the same and exits 1, without disturbing the run.
  const pid_t tool = run.children.spawn(
      {buildPath("tools/tactus-manager"), "-D", run.instance, "-N", "mgr", "start", "999"}, run.out("tool"));
  CHECK(waitFor(tool, kWaitMs) == 1);  // the manager slot is held by this process: refused as already attached
  // Schedule 301 still runs: its iterations grow.
  auto before = manager::status();
  REQUIRE(before);
  CHECK(before->running);
  CHECK(before->schedule == 301);
  CHECK(awaitIterations(1));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  const std::string master = readFile(run.out("master"));
  CHECK(master.find("manager request refused: no schedule has identifier 999") != std::string::npos);
  CHECK(master.find("partition resources differently") != std::string::npos);
  CHECK(readFile(run.out("tool")).find("already attached") != std::string::npos);
}

TEST_CASE("tactus-manager runs a whole session from the command line, started before the master",
          "[switching][tool][order]") {
  SwitchRun run("tool", {modeYaml(401, 2, 1000, false), modeYaml(402, 2, 1000, false)});
  // Manager and clients first: they wait for the master.
  const pid_t first = run.tool({"start", "401"}, "start");
  const pid_t c0 = run.client("Client0");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const pid_t m = run.master();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const pid_t c1 = run.client("Client1");  // the last client after the start request: the start waits for it
  CHECK(waitFor(first, kWaitMs) == 0);
  CHECK(waitFor(run.tool({"rollover", "402", "401"}, "roll"), kWaitMs) == 0);
  const pid_t status = run.tool({"status"}, "status");
  CHECK(waitFor(status, kWaitMs) == 0);
  CHECK(readFile(run.out("status")).find("running schedule 402") != std::string::npos);
  CHECK(waitFor(run.tool({"stop", "401"}, "bad"), kWaitMs) == 1);
  CHECK(readFile(run.out("bad")).find("cannot stop schedule 401: it is not running") != std::string::npos);
  CHECK(waitFor(run.tool({"exit"}, "exit"), kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(!runsOf(*log, 401).empty());
  CHECK(!runsOf(*log, 402).empty());
}

TEST_CASE("every start order of master, manager and clients runs the session", "[switching][order]") {
  // The three parties (the master, a tactus-manager start request, the two clients), started in
  // each of the six orders, 50 ms apart: whoever comes first waits for the others.
  const std::vector<std::string> parties = {"master", "manager", "clients"};
  std::vector<int> order = {0, 1, 2};
  int orders = 0;
  do {
    std::string tag = "order";
    for (int k : order) tag += "-" + parties[k];  // a section's name: each order its own
    DYNAMIC_SECTION(tag) {
      SwitchRun run(tag, {modeYaml(801, 2, 1000, false), modeYaml(802, 2, 1000, false)});
      pid_t m = -1, start = -1, c0 = -1, c1 = -1;
      const std::int64_t firstNs = nowNs();
      for (int k : order) {
        if (k == 0) m = run.master();
        if (k == 1) start = run.tool({"start", "801"}, "start");
        if (k == 2) {
          c0 = run.client("Client0");
          c1 = run.client("Client1");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      INFO(readFile(run.out("start")));
      REQUIRE(waitFor(start, kWaitMs) == 0);
      CHECK(waitFor(run.tool({"rollover", "802", "801"}, "roll"), kWaitMs) == 0);
      CHECK(waitFor(run.tool({"exit"}, "exit"), kWaitMs) == 0);
      CHECK(waitFor(c0, kWaitMs) == 0);
      CHECK(waitFor(c1, kWaitMs) == 0);
      CHECK(waitFor(m, kWaitMs) == 0);
      auto log = readEventLog(run.logPath);
      REQUIRE(log.has_value());
      CHECK_FALSE(runsOf(*log, 801).empty());
      CHECK_FALSE(runsOf(*log, 802).empty());
      CHECK(runsInsideWindows(*log, 801, {{firstNs, nowNs()}}) == "");
    }
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(orders == 6);
}

namespace {

// The instance's manager channel mapped read and write, as any process of the user's may.
struct MappedChannel {
  shm::ManagerChannel* ch = nullptr;
  explicit MappedChannel(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    void* at = ::mmap(nullptr, sizeof(shm::ManagerChannel), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(at != MAP_FAILED);
    ch = static_cast<shm::ManagerChannel*>(at);
  }
  ~MappedChannel() { ::munmap(ch, sizeof(shm::ManagerChannel)); }
  MappedChannel(const MappedChannel&) = delete;
  MappedChannel& operator=(const MappedChannel&) = delete;
};

// Writes `pid` over the channel's manager claim once the master has opened it (it fills the
// channel before), as another process would; whether the master cleared the claim within 5 s.
bool claimCleared(shm::ManagerChannel& ch, std::uint32_t pid) {
  waitUntil([&] { return ch.open.load() != 0; }, kWaitMs);
  ch.managerPid.store(pid);
  return waitUntil([&] { return ch.managerPid.load() == 0; }, 5000);
}

}  // namespace

TEST_CASE(
    "a manager claim no manager made (the channel written over: a dead pid, pid 1) is cleared, said, and the "
    "real manager attaches",
    "[switching][fault]") {
  SwitchRun run("mgrclaim", {modeYaml(511, 2, 1000, false), modeYaml(512, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  const std::string channel = "/dev/shm/tactus_" + run.instance + ".manager";
  REQUIRE(waitForPath(channel, kWaitMs));
  // A pid that is gone: a child that has exited and been reaped.
  const pid_t gone = ::fork();
  REQUIRE(gone >= 0);
  if (gone == 0) std::_Exit(0);
  REQUIRE(::waitpid(gone, nullptr, 0) == gone);
  {
    MappedChannel mapped(channel);
    CHECK(claimCleared(*mapped.ch, static_cast<std::uint32_t>(gone)));
  }
  // pid 1's maps are readable to root only, and not in every container: where they are not, the
  // master cannot tell a claim of pid 1 from a manager of another user's (it takes it at its word).
  const bool pid1Readable = static_cast<bool>(std::ifstream("/proc/1/maps"));
  if (pid1Readable) {
    MappedChannel mapped(channel);
    CHECK(claimCleared(*mapped.ch, 1));
  }
  CHECK(waitFor(run.tool({"start", "511"}, "start"), kWaitMs) == 0);
  CHECK(waitFor(run.tool({"exit"}, "exit"), kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  const std::string master = readFile(run.out("master"));
  INFO(master << readFile(run.out("start")));
  CHECK(master.find("the manager channel named pid " + std::to_string(gone) + ", a process that is gone") !=
        std::string::npos);
  if (pid1Readable)
    CHECK(master.find("the manager channel named pid 1, a process that has not mapped the channel") !=
          std::string::npos);
  CHECK(master.find("the schedule manager 'mgr' (pid") == std::string::npos);  // no "... died" end
}

namespace {

// Writes a segment at the instance's name whose header names pid 1 (alive, any start time) as its
// master, published, in a file user nobody owns (so that a process of nobody's may remove it).
void forgeHeaderNamingPid1(const std::string& instance) {
  const std::string path = "/dev/shm/tactus_" + instance;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 4096) == 0);
  REQUIRE(::fchown(fd, 65534, 65534) == 0);
  void* at = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(at != MAP_FAILED);
  auto& h = *static_cast<shm::SegmentHeader*>(at);
  h.layoutVersion = shm::kLayoutVersion;
  h.headerSize = sizeof(shm::SegmentHeader);
  h.masterStartTime.store(0);
  h.state.store(static_cast<std::uint32_t>(shm::SegmentState::kPublished));
  h.magic.store(shm::kMagic);
  h.masterPid.store(1);
  ::munmap(at, 4096);
}

// `argv` run as user nobody (uid and gid 65534, no supplementary groups), through setpriv.
std::vector<std::string> asNobody(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  return argv;
}

// Whether user nobody can run `path` (a copy nobody may enter): its answer to a bad option, 2. Not
// under ThreadSanitizer, whose runtime reads its suppressions from the checkout at start.
bool runsAsNobody(const std::string& path) {
  ChildProcesses probe;
  const std::string out = scratchDir("nobodyprobe") + "/probe.out";
  return waitFor(probe.spawn(asNobody({path, "--bad-option"}), out), kWaitMs) == 2;
}

}  // namespace

TEST_CASE(
    "a master of another user than its manager believes a claim only while the channel's lock is held (pid 1 "
    "written in is cleared, a real manager of root's is not)",
    "[switching][user]") {
  // The master as user nobody, which may not read root's memory maps (pid 1's, this process's):
  // where it cannot, the lock tells a manager's claim from one written over.
  if (::geteuid() != 0) TACTUS_SKIP("needs root, to run the master as user nobody");
  SwitchRun run("mgrlock", {modeYaml(521, 2, 1000, false), modeYaml(522, 2, 1000, false)});
  // nobody may not enter this test's folders (CI's clone is private): the master is a copy, and
  // the run's folder is open to it.
  const std::string master = run.dir + "/tactus-master";
  std::filesystem::copy_file(buildPath("master/tactus-master"), master);
  REQUIRE(::chmod(master.c_str(), 0755) == 0);
  REQUIRE(::chmod(run.dir.c_str(), 0777) == 0);
  if (!runsAsNobody(master)) TACTUS_SKIP("user nobody cannot run " << master << " (a sanitizer's files closed to it?)");
  std::vector<std::string> argv = asNobody(
      {master, "-s", run.scheduleList(), "-N", "mgr", "-D", run.instance, "-l", run.logPath, "-t", "15000000"});
  if (run.unpinned) argv.push_back("-C");
  // A header naming pid 1 at the name: this master may not read pid 1's maps, and no master holds
  // the segment's lock, so it replaces it.
  forgeHeaderNamingPid1(run.instance);
  const pid_t m = run.children.spawn(argv, run.out("master"));
  // The clients after that (root's would remove the header themselves: they read pid 1's maps).
  CHECK(waitUntil([&] { return readFile(run.out("master")).find("replacing segment") != std::string::npos; }, kWaitMs));
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  const std::string channel = "/dev/shm/tactus_" + run.instance + ".manager";
  REQUIRE(waitForPath(channel, kWaitMs));
  const auto self = static_cast<std::uint32_t>(::getpid());
  {
    MappedChannel mapped(channel);
    CHECK(claimCleared(*mapped.ch, 1));
    // This process (root's) attaches for real, and keeps its claim through a second of the
    // master's checks.
    run.attachManager();
    CHECK_FALSE(waitUntil([&] { return mapped.ch->managerPid.load() != self; }, 1000));
  }
  REQUIRE_OK(manager::startSchedule(521));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  const std::string out = readFile(run.out("master"));
  INFO(out);
  CHECK(out.find("the manager channel named pid 1, a process whose memory maps this master may not read, while no "
                 "manager holds the channel's lock") != std::string::npos);
  CHECK(out.find("named pid " + std::to_string(self)) == std::string::npos);
  CHECK(out.find("replacing segment /dev/shm/tactus_" + run.instance +
                 ": it names master pid 1, whose memory maps this master may not read, while no master holds the "
                 "segment's lock") != std::string::npos);
}

TEST_CASE(
    "a client of another user than its master believes a segment header only while the master's lock is held (one "
    "naming pid 1 is removed, root's master is attached to)",
    "[switching][user]") {
  if (::geteuid() != 0) TACTUS_SKIP("needs root, to run a client as user nobody");
  SwitchRun run("seglock", {modeYaml(531, 2, 1000, false), modeYaml(532, 2, 1000, false)});
  // Client0 as nobody, from a copy nobody may enter (its library where its RUNPATH, $ORIGIN/../../
  // client_lib, finds it); the master gives the segment group nogroup, nobody's.
  REQUIRE(::chmod(run.dir.c_str(), 0777) == 0);
  std::filesystem::create_directories(run.dir + "/bin/x");
  std::filesystem::create_directories(run.dir + "/client_lib");
  const std::string client = run.dir + "/bin/x/tactus-test-client";
  std::filesystem::copy_file(buildPath("tests/runtime/tactus-test-client"), client);
  std::filesystem::copy_file(std::filesystem::canonical(buildPath("client_lib/libtactus.so.0")),
                             run.dir + "/client_lib/libtactus.so.0");
  for (const std::string& p :
       {run.dir + "/bin", run.dir + "/bin/x", run.dir + "/client_lib", client, run.dir + "/client_lib/libtactus.so.0"})
    REQUIRE(::chmod(p.c_str(), 0755) == 0);
  if (!runsAsNobody(client)) TACTUS_SKIP("user nobody cannot run " << client << " (a sanitizer's files closed to it?)");
  forgeHeaderNamingPid1(run.instance);
  const pid_t c0 =
      run.children.spawn(asNobody({client, "--name", "Client0", "--instance", run.instance}), run.out("Client0"));
  CHECK(waitUntil([&] { return !segmentPresent(run.instance); }, kWaitMs));
  ::setenv("TACTUS_SEGMENT_GROUP", "nogroup", 1);
  const pid_t m = run.master();
  ::unsetenv("TACTUS_SEGMENT_GROUP");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(531));
  CHECK(awaitIterations(5));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  const std::string out = readFile(run.out("Client0"));
  INFO(out << readFile(run.out("master")));
  CHECK(out.find("it names master pid 1, whose memory maps this client may not read, while no master holds the "
                 "segment's lock (a copy of another segment, or a forged header); removed it") != std::string::npos);
  CHECK(out.find("status=exit-requested") != std::string::npos);
}

// A manager in a child process: it attaches as 'mgr', starts schedule `first`, says so (the file
// `started`, waited for here), then exits with what `then` returns (3: the attach or start failed).
template <typename F>
pid_t forkManager(const SwitchRun& run, std::uint16_t first, F&& then) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    tactus::manager::ManagerOptions options;
    options.instance = run.instance;
    options.timeoutMs = kWaitMs;
    if (!tactus::manager::init("mgr", options) || !tactus::manager::startSchedule(first)) std::_Exit(3);
    std::ofstream(run.dir + "/started") << "";
    std::_Exit(then());
  }
  run.children.adopt(child);
  REQUIRE(waitForPath(run.dir + "/started", kWaitMs));
  return child;
}

TEST_CASE("a manager that dies while attached ends the run, named; clients return peer-died", "[switching][fault]") {
  SwitchRun run("mgrdeath", {modeYaml(501, 2, 1000, false), modeYaml(502, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  const pid_t child = forkManager(run, 501, [] {
    for (;;) ::pause();
    return 0;
  });
  ::kill(child, SIGKILL);
  CHECK(waitFor(child, kWaitMs) == 128 + SIGKILL);
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(waitFor(c1, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  const std::string master = readFile(run.out("master"));
  CHECK(master.find("the schedule manager 'mgr' (pid " + std::to_string(child) + ") died") != std::string::npos);
  CHECK(readFile(run.out("Client0")).find("schedule manager 'mgr'") != std::string::npos);
}

TEST_CASE("a tactus-manager command killed mid-request does not end the run; its request is answered into the void",
          "[switching][fault]") {
  // A supervisor's time-out kills a slow command: only a manager that stays attached ends the run
  // when it dies (the case above); a one-shot command's claim is dropped and the run goes on.
  SwitchRun run("mgrcmdkill", {modeYaml(541, 2, 1000, false), modeYaml(542, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  REQUIRE(waitFor(run.tool({"start", "541"}, "start"), kWaitMs) == 0);
  // Client1 frozen: the rollover waits for its iteration to end, so the command's request stays in
  // flight while the master watches its claim.
  ::kill(c1, SIGSTOP);
  const pid_t roll = run.tool({"rollover", "542", "541"}, "roll");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(roll, SIGKILL);
  CHECK(waitFor(roll, kWaitMs) == 128 + SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int status = 0;
  CHECK(::waitpid(m, &status, WNOHANG) == 0);                              // the master goes on
  CHECK(readFile(run.out("master")).find(") died") == std::string::npos);  // and ends nothing
  ::kill(c1, SIGCONT);
  run.attachManager();
  CHECK(awaitIterations(5));
  const Result<manager::Status> now = manager::status();
  REQUIRE(now.has_value());
  CHECK(now->running);
  CHECK(now->schedule == 542);  // the killed command's rollover was carried out
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  const std::string master = readFile(run.out("master"));
  INFO(master);
  CHECK(master.find("the tactus-manager command (pid " + std::to_string(roll) +
                    ") ended without detaching (killed mid-request?); its claim is dropped and the run goes on") !=
        std::string::npos);
  CHECK(master.find(") died") == std::string::npos);
}

TEST_CASE("a manager channel truncated under an attached manager: its request fails naming it, the run ends, named",
          "[switching][fault]") {
  // Another process of the user truncates the channel while a manager is attached: the manager's
  // next request returns an error naming the segment (it was killed by SIGBUS), the master ends
  // the run naming the channel, and the clients end with it.
  SwitchRun run("mgrtrunc", {modeYaml(531, 2, 1000, false), modeYaml(532, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  const pid_t child = forkManager(run, 531, [&run] {
    if (!waitForPath(run.dir + "/truncated", kWaitMs)) return 4;
    const Result<void> r = tactus::manager::stopSchedule(531);
    std::ofstream(run.dir + "/answer") << (r ? std::string("ok") : r.error().message);
    tactus::manager::shutdown();
    return r ? 5 : 0;
  });
  const std::string channel = "/dev/shm/tactus_" + run.instance + ".manager";
  REQUIRE(::truncate(channel.c_str(), 0) == 0);
  std::ofstream(run.dir + "/truncated") << "";
  CHECK(waitFor(child, kWaitMs) == 0);  // not 128 + SIGBUS
  const std::string answer = readFile(run.dir + "/answer");
  INFO(answer);
  CHECK(answer.find("the manager channel " + channel + " was damaged: truncated to 0 of ") != std::string::npos);
  CHECK(waitFor(m, kWaitMs) == 1);
  const int s0 = waitFor(c0, kWaitMs);
  const int s1 = waitFor(c1, kWaitMs);
  CHECK((s0 > 10 && s0 < 128));  // a run status, not a signal
  CHECK((s1 > 10 && s1 < 128));
  const std::string master = readFile(run.out("master"));
  INFO(master);
  CHECK(master.find("the manager channel " + channel + " was damaged: truncated to 0 of ") != std::string::npos);
  CHECK(!segmentPresent(run.instance));
}

TEST_CASE("a manager channel truncated or its header zeroed: tactus-manager names it at once, the run ends, named",
          "[switching][fault]") {
  for (const bool zeroed : {false, true}) {
    INFO((zeroed ? "header zeroed" : "truncated to 288 bytes"));
    SwitchRun run("mgrdamage", {modeYaml(551, 2, 1000, false), modeYaml(552, 2, 1000, false)});
    const pid_t m = run.master();
    const pid_t c0 = run.client("Client0");
    const pid_t c1 = run.client("Client1");
    REQUIRE(waitFor(run.tool({"start", "551"}, "start"), kWaitMs) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the channel is older than its making
    const std::string channel = "/dev/shm/tactus_" + run.instance + ".manager";
    ::kill(m, SIGSTOP);  // the damage stays for the command to find
    if (zeroed) {
      MappedChannel mapped(channel);
      std::memset(static_cast<void*>(mapped.ch), 0, shm::kCacheLine);
    } else {
      REQUIRE(::truncate(channel.c_str(), 288) == 0);
    }
    const auto before = std::chrono::steady_clock::now();
    const int tool = waitFor(run.tool({"status"}, "status"), kWaitMs);
    const auto toolMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - before).count();
    ::kill(m, SIGCONT);
    CHECK(tool != 0);
    CHECK(toolMs < 3000);  // at once, not after its 15 s time-out
    const std::string said = readFile(run.out("status"));
    INFO(said);
    CHECK(said.find("the manager channel " + channel + " was damaged: ") != std::string::npos);
    CHECK(waitFor(m, kWaitMs) == 1);
    const int s0 = waitFor(c0, kWaitMs);
    const int s1 = waitFor(c1, kWaitMs);
    CHECK((s0 > 10 && s0 < 128));
    CHECK((s1 > 10 && s1 < 128));
    const std::string master = readFile(run.out("master"));
    INFO(master);
    CHECK(master.find("the manager channel " + channel + " was damaged: " +
                      (zeroed ? "field 'magic'" : "truncated to 288 of 576 bytes")) != std::string::npos);
    CHECK_FALSE(segmentPresent(run.instance));
    CHECK_FALSE(segmentPresent(run.instance + ".manager"));
  }
}

TEST_CASE("a client that dies while a rollover waits for its switch callback: the answer names it",
          "[switching][fault]") {
  SwitchRun run("cbdeath", {modeYaml(511, 2, 1000, false), modeYaml(512, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1", {"--switch-callback-hangs"});
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(511));
  CHECK(awaitIterations(5));
  // Client1's callback never returns: kill it once it runs, while the rollover waits for it.
  std::thread killer([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (readFile(run.out("Client1")).find("switch schedule=512") == std::string::npos &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(c1, SIGKILL);
  });
  auto rolled = manager::rollOverSchedule(512, 511);
  killer.join();
  REQUIRE_FALSE(rolled);
  INFO(rolled.error().message);
  CHECK(rolled.error().message.find("the run ended during the rollover: ") != std::string::npos);
  CHECK(rolled.error().message.find("client 'Client1' (pid " + std::to_string(c1) + ") died") != std::string::npos);
  CHECK(waitFor(c1, kWaitMs) == 128 + SIGKILL);
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
}

TEST_CASE("the master refuses two schedules with one identifier, naming both files", "[switching][load]") {
  SwitchRun run("sameid", {modeYaml(601, 2, 1000, false), modeYaml(601, 2, 2000, false)});
  const pid_t m = run.master();
  CHECK(waitFor(m, kWaitMs) == 2);
  const std::string out = readFile(run.out("master"));
  CHECK(out.find("have the same identifier 601") != std::string::npos);
  CHECK(out.find(run.schedulePaths[0]) != std::string::npos);
  CHECK(out.find(run.schedulePaths[1]) != std::string::npos);
}

TEST_CASE("a client in one schedule only waits through the others and runs in its own, after a rollover",
          "[switching][union]") {
  SwitchRun run("union", {modeYaml(701, 2, 1000, false), modeYaml(702, 2, 1000, false, false, true)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1", {"--switch-callback"});
  const pid_t c2 = run.client("Client2", {"--switch-callback"});
  run.attachManager();
  const Call start = timed([] { return manager::startSchedule(701); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const Call roll = timed([] { return manager::rollOverSchedule(702, 701); });
  // A count, not a time: 30 ms of 1 ms frames gave only 5 runs of Only under a loaded ASan build.
  // The count is the most over 702's two hyperepochs, and Only's (H0, a chain over three clients)
  // fell 6 behind H1's in CI's ASan run: 40 leaves 10 runs of Only a wide margin.
  CHECK(awaitIterations(40));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK(waitFor(c2, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(runsInsideWindows(*log, 701, {{start.beforeNs, roll.afterNs}}) == "");
  CHECK(runsInsideWindows(*log, 702, {{roll.beforeNs, nowNs()}}) == "");
  auto s702 = loadScheduleFile(run.schedulePaths[1]);
  REQUIRE(s702);
  std::uint32_t only = kNoSchedule;
  for (std::uint32_t r = 0; r < s702->runnables.size(); ++r) {
    if (s702->runnables[r].name == "Only") only = r;
  }
  int onlyRuns = 0;
  for (const EventRecord& r : runsOf(*log, 702)) onlyRuns += r.aux == only ? 1 : 0;
  CHECK(onlyRuns >= 10);
  // Client2 has a worker in hyperepoch 0 of 702 only: one callback; Client1 one per hyperepoch.
  CHECK(countOf(readFile(run.out("Client2")), "switch schedule=702") == 1);
  CHECK(countOf(readFile(run.out("Client1")), "switch schedule=702") == 2);
  CHECK(readFile(run.out("Client2")).find("status=exit-requested") != std::string::npos);
}

namespace {

// The manager's status: the running schedule is `id`, within 20 s.
bool awaitRunning(std::uint16_t id) { return test::awaitRunning(id, 20'000); }

std::vector<EventRecord> decisionsOf(const EventLog& log) {
  std::vector<EventRecord> out;
  for (const EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kPolicyDecision)) out.push_back(r);
  }
  return out;
}

// tactus-report's text for the run (all its schedules).
std::string reportOf(const SwitchRun& run) {
  std::vector<std::string> argv{buildPath("tools/tactus-report"), run.logPath};
  argv.insert(argv.end(), run.schedulePaths.begin(), run.schedulePaths.end());
  const pid_t report = run.children.spawn(argv, run.out("report"));
  REQUIRE(waitFor(report, kWaitMs) == 0);
  return readFile(run.out("report"));
}

}  // namespace

TEST_CASE("a policy rolls over on overruns and back after clean iterations, logged with the rule",
          "[switching][policy]") {
  SwitchRun run("policy", {modeYaml(801, 2, 1000, false), modeYaml(802, 2, 20000, false)});
  const std::string slow = run.dir + "/slow";
  const std::string policy = run.dir + "/policy.yaml";
  std::ofstream(policy) << "Rules:\n"
                           "  - Name: overload\n"
                           "    When: {Schedule: 801, Hyperepoch: H0, Overruns: 3, Of: 10}\n"
                           "    RollOver: 802\n"
                           "  - Name: recover\n"
                           "    When: {Schedule: 802, CleanIterations: 10}\n"
                           "    RollOver: 801\n";
  const pid_t m = run.master({"--policy", policy});
  const pid_t c0 = run.client("Client0", {"--slow-while", slow, "--slow-us", "3000"});
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(801));
  CHECK(awaitIterations(5));
  std::ofstream(slow) << "slow\n";  // Client0's runnables now take 3 ms in a 1 ms period
  CHECK(awaitRunning(802));
  ::unlink(slow.c_str());
  CHECK(awaitRunning(801));  // 10 clean iterations of 802 later
  CHECK(awaitIterations(5));
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const auto decisions = decisionsOf(*log);
  REQUIRE(decisions.size() >= 2);
  // The first decision: rule 0 (overload) on hyperepoch H0 of 801, to 802; later rule 1 back to 801.
  CHECK(decisions[0].instance == 0);
  CHECK(decisions[0].schedule == 801);
  CHECK(decisions[0].detail == 1);
  CHECK(decisions[0].iteration == 0);
  CHECK(decisions[0].aux == 802);
  bool back = false;
  for (const EventRecord& d : decisions) back = back || (d.instance == 1 && d.schedule == 802 && d.aux == 801);
  CHECK(back);
  // The policy's switch is a rollover in the log: 801's stop names 802 and 802's start names 801.
  int rollovers = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart) && r.schedule == 802 && r.aux == 801)
      ++rollovers;
  }
  CHECK(rollovers >= 2);  // both hyperepochs
  CHECK(readFile(run.out("master")).find("policy rule 'overload'") != std::string::npos);
  const std::string report = reportOf(run);
  CHECK(report.find("policy rule 1: hyperepoch 'H0' of schedule 801 overran -> rolled over to schedule 802") !=
        std::string::npos);
  CHECK(report.find("policy rule 2: schedule 802 ran its clean iterations -> rolled over to schedule 801") !=
        std::string::npos);
  // The HTML pages (one per schedule) and the trace mark the switches and the decisions.
  const pid_t pictures =
      run.children.spawn({buildPath("tools/tactus-report"), run.logPath, run.schedulePaths[0], run.schedulePaths[1],
                          "--html", run.dir + "/run.html", "--trace-out", run.dir + "/run.json"},
                         run.out("pictures"));
  REQUIRE(waitFor(pictures, kWaitMs) == 0);
  for (const std::string page : {"/run.html", "/run-802.html"}) {
    const std::string html = readFile(run.dir + page);
    CHECK(html.find("<h2>Schedule switches</h2>") != std::string::npos);
    CHECK(html.find("start 802 on 'H0' (rollover from 801)") != std::string::npos);
    CHECK(html.find("policy rule 1: roll over to 802") != std::string::npos);
  }
  CHECK(readFile(run.dir + "/run.html").find("<tr class=\"own\"><td>") != std::string::npos);
  const std::string trace = readFile(run.dir + "/run.json");
  CHECK(trace.find(R"x("cat":"switch","name":"start 802 on 'H0' (rollover from 801)")x") != std::string::npos);
  CHECK(trace.find(R"x("cat":"switch","name":"policy rule 2: roll over to 801")x") != std::string::npos);
  CHECK(trace.find(R"x("args":{"name":"schedule 802 'Mode802' (executed)"})x") != std::string::npos);
  // To standard output: one document holding both pages (each in its own frame), nothing else.
  const pid_t piped = run.children.spawn(
      {buildPath("tools/tactus-report"), run.logPath, run.schedulePaths[0], run.schedulePaths[1], "--html", "-"},
      run.out("piped"));
  REQUIRE(waitFor(piped, kWaitMs) == 0);
  const std::string doc = readFile(run.out("piped"));
  CHECK(doc.rfind("<!DOCTYPE html>", 0) == 0);
  std::size_t frames = 0;
  for (std::size_t at = doc.find("<iframe srcdoc=\""); at != std::string::npos;
       at = doc.find("<iframe srcdoc=\"", at + 1))
    ++frames;
  CHECK(frames == 2);
  CHECK(doc.find("<h2 id=\"page-1\">schedule 802 'Mode802'") != std::string::npos);
  CHECK(doc.find("&lt;h2&gt;Schedule switches&lt;/h2&gt;") != std::string::npos);
  CHECK(doc.find("=== schedule") == std::string::npos);  // no statistics mixed into the HTML
}

TEST_CASE("a client's death with a fallback schedule in the policy: the run goes on without it, the report names it",
          "[switching][policy][fault]") {
  SwitchRun run("fallback", {modeYaml(901, 2, 1000, false, false, true), modeYaml(902, 2, 1000, false)});
  const std::string policy = run.dir + "/policy.yaml";
  std::ofstream(policy) << "Rules:\n"
                           "  - Name: lost-client2\n"
                           "    When: {ClientDies: Client2}\n"
                           "    RollOver: 902\n";
  const pid_t m = run.master({"--policy", policy});
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  const pid_t c2 = run.client("Client2");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(901));
  CHECK(awaitIterations(10));
  ::kill(c2, SIGKILL);
  CHECK(waitFor(c2, kWaitMs) == 128 + SIGKILL);
  REQUIRE(awaitRunning(902));
  CHECK(awaitIterations(20));                          // the run goes on in the fallback schedule
  auto refused = manager::rollOverSchedule(901, 902);  // 901 needs the dead client
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("uses client 'Client2', which died") != std::string::npos);
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(waitFor(c1, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  const std::string master = readFile(run.out("master"));
  CHECK(master.find("client 'Client2' (pid " + std::to_string(c2) + ") died") != std::string::npos);
  CHECK(master.find("policy rule 'lost-client2' goes on without it") != std::string::npos);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const auto decisions = decisionsOf(*log);
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].detail == 3);
  CHECK(decisions[0].aux == 902);
  CHECK(runsOf(*log, 902).size() >= 40);
  // 901's stop is stamped when its release loop left, the iteration the dead client held being
  // unfinished: it once kept 0, and the report showed the stop at -1307854 ms, sorted first.
  int stops = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStop) || r.schedule != 901) continue;
    ++stops;
    CHECK(r.endNs > log->header.runStartNs);
    CHECK(std::llabs(r.endNs - decisions[0].startNs) < 1'000'000'000LL);
  }
  CHECK(stops == 2);  // both hyperepochs
  const std::string report = reportOf(run);
  CHECK(report.find("policy rule 1: client 'Client2' died -> rolled over to schedule 902") != std::string::npos);
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  stop ", 0) != 0 && line.rfind("  start ", 0) != 0) continue;
    INFO(line);
    std::istringstream fields(line);
    std::string event, schedule, hyperepoch, iteration, other;
    double atMs = -1;
    fields >> event >> schedule >> hyperepoch >> iteration >> other >> atMs;
    CHECK(atMs >= 0);  // no negative time in the switch table
  }
}

TEST_CASE("a policy file that names what the schedules do not have is refused at start with its line",
          "[switching][policy][load]") {
  SwitchRun run("badpolicy", {modeYaml(951, 2, 1000, false, false, true), modeYaml(952, 2, 1000, false),
                              modeYaml(953, 3, 1000, false, true)});
  struct Case {
    std::string rules;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"  - Name: a\n    When: {Schedule: 999, CleanIterations: 5}\n    RollOver: 952\n",
       "policy.yaml:3: no loaded schedule has identifier 999 (loaded: 951, 952, 953)"},
      {"  - Name: a\n    When: {Schedule: 951, Hyperepoch: H7, Overruns: 1, Of: 4}\n    RollOver: 952\n",
       "policy.yaml:3: rule 'a': schedule 951 has no hyperepoch 'H7'"},
      {"  - Name: a\n    When: {ClientDies: Nobody}\n    RollOver: 952\n",
       "policy.yaml:3: rule 'a': no loaded schedule has a client 'Nobody'"},
      {"  - Name: a\n    When: {ClientDies: Client0}\n    RollOver: 952\n",
       "policy.yaml:4: rule 'a': schedule 952 uses client 'Client0' too: the fallback must not"},
      {"  - Name: a\n    When: {Schedule: 951, Hyperepoch: H0, Overruns: 5, Of: 4}\n    RollOver: 952\n",
       "policy.yaml:3: 'Overruns' must be a whole number from 1 to 4, not '5'"},
      {"  - Name: a\n    When: {Schedule: 951, CleanIterations: 5}\n    RollOver: 953\n",
       "policy.yaml:2: rule 'a': cannot roll over from schedule 951 to schedule 953: "},
      {"  - Name: a\n    Whenn: {Schedule: 951, CleanIterations: 5}\n    RollOver: 952\n",
       "policy.yaml:3: unknown key 'Whenn' in a rule"},
  };
  for (const Case& c : cases) {
    const std::string policy = run.dir + "/policy.yaml";
    std::ofstream(policy) << "Rules:\n" << c.rules;
    const pid_t m = run.master({"--policy", policy});
    CHECK(waitFor(m, kWaitMs) == 2);
    const std::string out = readFile(run.out("master"));
    INFO(out);
    CHECK(out.find(c.expected) != std::string::npos);
  }
}

namespace {

// TACTUS_PARK_LOOK_NS for the clients a test starts (they inherit this process's environment):
// a parked worker's own look at the run's end once a minute, so that only the wakes the end and
// a halt give can end a client within kWaitMs. Restored when the test leaves.
struct ParkLookOfAMinute {
  ParkLookOfAMinute() { ::setenv("TACTUS_PARK_LOOK_NS", "60000000000", 1); }
  ~ParkLookOfAMinute() { ::unsetenv("TACTUS_PARK_LOOK_NS"); }
  ParkLookOfAMinute(const ParkLookOfAMinute&) = delete;
  ParkLookOfAMinute& operator=(const ParkLookOfAMinute&) = delete;
};

// A run of two two-hyperepoch schedules with 111 started and 112 stopped: the worker threads of
// Client0, found by their names (tactus-s<schedule index>w<worker>), the running one and a parked one.
struct ParkedRun {
  SwitchRun run{"parked", {modeYaml(111, 2, 2000, false), modeYaml(112, 2, 2000, false)}};
  pid_t master = run.master();
  pid_t c0 = run.client("Client0");
  pid_t c1 = run.client("Client1");
  pid_t running = 0;
  pid_t parked = 0;

  ParkedRun() {
    run.attachManager();
    timed([] { return manager::startSchedule(111); });
    CHECK(awaitIterations(20));
    for (int w = 0; w < 8; ++w) {
      if (running == 0) running = threadNamed(c0, "tactus-s0w" + std::to_string(w));
      if (parked == 0) parked = threadNamed(c0, "tactus-s1w" + std::to_string(w));
    }
  }
};

}  // namespace

TEST_CASE("workers of a stopped schedule sleep until it starts or the run ends; their threads are named",
          "[switching][wakeups]") {
  const ParkLookOfAMinute look;
  ParkedRun p;
  REQUIRE(p.running != 0);
  REQUIRE(p.parked != 0);
  const long before = voluntarySwitches(p.c0, p.parked);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const long after = voluntarySwitches(p.c0, p.parked);
  REQUIRE(before >= 0);
  REQUIRE(after >= 0);
  // A parked worker looked at the run's end every 5 ms (160 wake-ups here), taking a core from the
  // running schedule's workers each time; it now sleeps until an activation or the end wakes it.
  INFO("a worker of the stopped schedule woke " << after - before << " times in 800 ms");
  CHECK(after - before <= 12);
  // The end wakes it: the master publishes the end while schedule 112's workers are parked (their
  // own look is a minute away).
  REQUIRE_OK(manager::exitRun());
  CHECK(waitFor(p.c0, kWaitMs) == 0);
  CHECK(waitFor(p.c1, kWaitMs) == 0);
  CHECK(waitFor(p.master, kWaitMs) == 0);
  CHECK(readFile(p.run.out("Client0")).find("status=exit-requested") != std::string::npos);
}

TEST_CASE("a master that dies while a schedule is stopped: the client wakes its parked workers and ends",
          "[switching][wakeups][fault]") {
  const ParkLookOfAMinute look;
  ParkedRun p;
  REQUIRE(p.parked != 0);
  ::kill(p.master, SIGKILL);  // no end is published: only the client's own watch can wake them
  CHECK(waitFor(p.master, kWaitMs) == 128 + SIGKILL);
  CHECK(waitFor(p.c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(waitFor(p.c1, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(readFile(p.run.out("Client0")).find("peer=master") != std::string::npos);
}

// Each test below has a twin in tests/runtime/reliability_test.cpp for a run of one schedule: the
// roles that find these ends (the stall watch, the stop grace) are the same in both runs.
namespace {
constexpr long kEndWithinMs = 2'000;  // generous: the documented waits are 1 s (-t) and 0.5 s (grace)
long msSince(std::chrono::steady_clock::time_point t) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count());
}
}  // namespace

TEST_CASE("a client frozen with SIGSTOP under a manager is named as stuck within -t", "[switching][fault][stuck]") {
  SwitchRun run("mgrfrozen", {modeYaml(611, 2, 1000, false), modeYaml(612, 2, 1000, false)});
  const pid_t m = run.master({"-t", "1000000"});
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(611));
  REQUIRE(awaitIterations(20));
  ::kill(c1, SIGSTOP);
  const auto cause = std::chrono::steady_clock::now();
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(msSince(cause) < 1000 + kEndWithinMs);
  const std::string master = readFile(run.out("master"));
  INFO(master);
  CHECK(master.find("schedule 611: client 'Client1' (pid " + std::to_string(c1) + ") is stuck: runnable 'Client1.R") !=
        std::string::npos);
  CHECK(master.find("beyond -t 1000000") != std::string::npos);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  ::kill(c1, SIGCONT);
  CHECK(waitFor(c1, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
}

TEST_CASE("SIGTERM to a managed master while a client is frozen ends within the grace and names the client",
          "[switching][fault][signal]") {
  SwitchRun run("mgrtermfrozen", {modeYaml(621, 2, 1000, false), modeYaml(622, 2, 1000, false)});
  const pid_t m = run.master({"-t", "-1"});  // no budget: only the signal ends this run
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(621));
  REQUIRE(awaitIterations(20));
  ::kill(c1, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(m, SIGTERM);
  const auto cause = std::chrono::steady_clock::now();
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(msSince(cause) < 500 + kEndWithinMs);
  CHECK(waitFor(c0, kWaitMs) == 0);
  const std::string client0 = readFile(run.out("Client0"));
  INFO(client0);
  CHECK(client0.find("status=stopped-by-signal") != std::string::npos);
  CHECK(client0.find("did not finish runnable 'Client1.R") != std::string::npos);
  ::kill(c1, SIGCONT);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(run.instance));
  CHECK_FALSE(segmentPresent(run.instance + ".schedule1"));
  CHECK_FALSE(segmentPresent(run.instance + ".manager"));
}

TEST_CASE("SIGTERM while a rollover waits on a frozen client: the master names it within the grace, the rollover fails",
          "[switching][fault][signal]") {
  // The rollover from 641 waits for 641's last iteration, which frozen Client1 never finishes. The
  // master used to take 1.5 s (the grace, then a second waiting for the frozen client to leave),
  // said nothing on stderr, blamed "a schedule switch", and the waiting tactus-manager exited 0
  // saying "rolled over" (the abort ended 641's hyperepochs and 642 was started after the end).
  SwitchRun run("mgrtermroll", {modeYaml(641, 2, 1000, false), modeYaml(642, 2, 1000, false)});
  const pid_t m = run.master({"-t", "-1"});  // no budget: only the signal ends this run
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(641));
  REQUIRE(awaitIterations(20));
  tactus::manager::shutdown();  // the command below claims the channel
  ::kill(c1, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t roll = run.tool({"rollover", "642", "641"}, "rollover");
  // The request is taken within milliseconds; the switch then waits for Client1.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(m, SIGTERM);
  const auto cause = std::chrono::steady_clock::now();
  CHECK(waitFor(m, kWaitMs) == 0);
  const long tookMs = msSince(cause);
  const std::string master = readFile(run.out("master"));
  const std::string rolled = readFile(run.out("rollover"));
  INFO(master << "\nrollover: " << rolled << "\nmaster ended " << tookMs << " ms after SIGTERM");
  // The grace (0.5 s) and the end; not a second more for the frozen client to leave.
  CHECK(tookMs < static_cast<long>(1000 * timeScale()));
  CHECK(master.find("the master was stopped by a signal; client 'Client1' did not finish runnable 'Client1.R") !=
        std::string::npos);
  CHECK(master.find("a schedule switch did not end") == std::string::npos);
  // The manager's request reports what happened: the run ended before the rollover did.
  CHECK(waitFor(roll, kWaitMs) == 1);
  CHECK(rolled.find("rolled over") == std::string::npos);
  CHECK(rolled.find("the run ended during the rollover: the master was stopped by a signal; client 'Client1'") !=
        std::string::npos);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(readFile(run.out("Client0")).find("did not finish runnable 'Client1.R") != std::string::npos);
  ::kill(c1, SIGCONT);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(run.instance));
  CHECK_FALSE(segmentPresent(run.instance + ".schedule1"));
  CHECK_FALSE(segmentPresent(run.instance + ".manager"));
  // Nothing of 642 ran: the rollover never switched.
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(runsOf(*log, 642).empty());
}

TEST_CASE("kill -9 of a managed master leaves nothing in /dev/shm: its clients remove the segments and the channel",
          "[switching][fault]") {
  SwitchRun run("mgrkill9", {modeYaml(631, 2, 1000, false), modeYaml(632, 2, 1000, false)});
  const pid_t m = run.master();
  const pid_t c0 = run.client("Client0");
  const pid_t c1 = run.client("Client1");
  run.attachManager();
  REQUIRE_OK(manager::startSchedule(631));
  REQUIRE(awaitIterations(20));
  REQUIRE(segmentPresent(run.instance + ".manager"));
  ::kill(m, SIGKILL);
  CHECK(waitFor(m, kWaitMs) == 128 + SIGKILL);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(waitFor(c1, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  tactus::manager::shutdown();  // the manager's own mapping goes; what is named in /dev/shm is checked
  CHECK_FALSE(segmentPresent(run.instance));
  CHECK_FALSE(segmentPresent(run.instance + ".schedule1"));
  CHECK_FALSE(segmentPresent(run.instance + ".manager"));
}
