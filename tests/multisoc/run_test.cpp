// The run across SoCs with real processes: two tactus-masters (SocA primary, SocB) of
// samples/multisoc/two_soc.yaml on this machine over loopback DDS (samples/multisoc/loopback.xml),
// each with its SoC's client (tactus-test-client). The graph's dependencies cross both ways:
//
//   SocA: Sensor.Capture ----DDS----> SocB: Planner.Plan ----DDS----> SocA: Sensor.Fuse
//
// Checked: 1,000 iterations in the order of the schedule from both masters' logs merged; the start
// in any order; a signal to either master stopping both at one iteration boundary; the primary's
// -e alone deciding the last iteration; a master killed on one SoC, a client
// killed on the other, and a SoC whose master never starts each end the run on every SoC with a message naming it,
// leaving nothing in /dev/shm; masters that disagree on the primary refuse the run; tactus-report takes both logs
// of one run.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulated_hosts.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "test_skip.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

// Loopback only, before any child touches DDS.
void useLoopback() {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  setenv("CYCLONEDDS_URI", ("file://" + std::string(root) + "/samples/multisoc/loopback.xml").c_str(), 1);
}

// A scratch directory of this test program's own (not the runtime tests' prefix).
std::string ownScratchDir(const std::string& tag) {
  std::string dir = "/tmp/tactus-multisoc-tests-" + std::to_string(::getpid()) + "-" + tag;
  ::mkdir(dir.c_str(), 0700);
  return dir;
}

// The two-SoC sample compiled into `dir`; its path.
std::string compileSample(ChildProcesses& kids, const std::string& dir, const std::string& crossSocLatency = "") {
  std::string out = dir + "/two.tsched";
  std::vector<std::string> argv{buildPath("compiler/tactus-compile"), "-i",
                                std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/samples/multisoc/two_soc.yaml", "-o",
                                out};
  if (!crossSocLatency.empty()) argv.insert(argv.end(), {"--cross-soc-latency", crossSocLatency});
  const pid_t pid = kids.spawn(argv, dir + "/compile.out");
  REQUIRE(waitFor(pid, 30000) == 0);
  return out;
}

// The integer that follows `marker` in `text` (0 when there is none).
long long numberAfter(const std::string& text, const std::string& marker) {
  const std::size_t at = text.find(marker);
  return at == std::string::npos ? 0 : std::atoll(text.c_str() + at + marker.size());
}

// The cross-SoC latency a two-way clock estimate must fit in (the emulated hosts, the SoCs on
// clocks apart): the sample's 200 us, but 2 ms in a sanitizer build (TACTUS_TEST_TIME_SCALE > 1),
// whose round trips on a loaded 2-core machine exceeded 448 us over veth, and 442 us over
// loopback under ASan, in all of 16 clock exchanges, so the run ended, rightly, on the clock bound.
std::string twoWayLatency() { return timeScale() > 1 ? "2ms" : ""; }

// The emulated hosts of the tests on two hosts (the benchmark's are 10.79.0.x).
const EmulatedHostsLayout kHosts{"tactusA", "tactusB", "vA", "vB", "10.77.0"};

// One test's two SoCs: masters, clients, their outputs.
struct TwoSocs {
  ChildProcesses kids;
  std::string dir;
  std::string schedule;
  std::string instance;
  std::string domain;
  pid_t masterA = -1, masterB = -1, clientA = -1, clientB = -1;

  TwoSocs(const std::string& tag, int ddsDomain, const std::string& crossSocLatency = "")
      : dir(ownScratchDir(tag)), instance(uniqueInstance(tag)) {
    useLoopback();
    schedule = compileSample(kids, dir, crossSocLatency);
    domain = std::to_string(ddsDomain);
  }
  // SoC B's processes start under this (e.g. `unshare -T --monotonic S`: a clock of their own),
  // SoC A's under socAPrefix (e.g. `ip netns exec NS`: a network stack of their own).
  std::vector<std::string> socBPrefix;
  std::vector<std::string> socAPrefix;

  pid_t master(const std::string& soc, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = soc == "SocB" ? socBPrefix : socAPrefix;
    for (const std::string& a : {buildPath("master/tactus-master"), std::string("-s"), schedule, std::string("-x"), soc,
                                 std::string("-D"), instance, std::string("--dds-domain"), domain, std::string("-l"),
                                 dir + "/" + soc + ".log", std::string("-t"), std::string("20000000")})
      argv.push_back(a);
    argv.insert(argv.end(), extra.begin(), extra.end());
    return kids.spawn(argv, dir + "/master" + soc + ".out");
  }
  pid_t client(const std::string& name) {
    setenv("TACTUS_INSTANCE", instance.c_str(), 1);
    std::vector<std::string> argv = name == "Planner" ? socBPrefix : socAPrefix;
    for (const std::string& a : {buildPath("tests/runtime/tactus-test-client"), std::string("--name"), name,
                                 std::string("--timeout-ms"), std::string("20000")})
      argv.push_back(a);
    const pid_t pid = kids.spawn(argv, dir + "/" + name + ".out");
    unsetenv("TACTUS_INSTANCE");
    return pid;
  }
  std::string out(const std::string& who) const { return readFile(dir + "/" + who + ".out"); }
  bool shmClean() const {
    return !segmentPresent(instance) && !segmentPresent(shm::socInstanceName(instance, 0)) &&
           !segmentPresent(shm::socInstanceName(instance, 1));
  }
};

Schedule loadSchedule(const std::string& path) {
  auto text = readRegularFile(path, "schedule file", kMaxScheduleFileBytes);
  REQUIRE(text.has_value());
  auto schedule = readSchedule(*text, path);
  REQUIRE(schedule.has_value());
  return *schedule;
}

// The executed order from both masters' logs: SocA's releases (the primary's: SocB releases each
// frame after it) and every run of both, checked against the schedule by checkLog; plus each
// log holds its own SoC's runnables only and SocB's releases of exactly `iterations` iterations.
std::string checkMergedLogs(const TwoSocs& t, std::uint64_t iterations) {
  const Schedule s = loadSchedule(t.schedule);
  auto a = readEventLog(t.dir + "/SocA.log");
  auto b = readEventLog(t.dir + "/SocB.log");
  if (!a || !b) return "a log is unreadable";
  // Each master ends its log with its clock (kClockOffset; a follower's log may hold earlier
  // estimates too, one a second at most): SocB's records move onto SocA's clock by its last.
  std::int64_t offsetB = 0;
  int clocksA = 0, clocksB = 0;
  for (const auto* log : {&*a, &*b}) {
    for (const EventRecord& r : log->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kClockOffset)) continue;
      ++(log == &*a ? clocksA : clocksB);
      if (log == &*a && (r.instance != 0 || r.aux != 0)) return "SocA's log does not name SocA the primary";
      if (log == &*b && (r.instance != 0 || r.aux != 1 || r.iteration == 0)) return "SocB's clock record is wrong";
      if (log == &*b && separateClocks(r.startNs)) offsetB = r.startNs;
    }
  }
  if (clocksA != 1 || clocksB < 1)
    return "expected one clock record in the primary's log and one or more in the follower's, found " +
           std::to_string(clocksA) + " and " + std::to_string(clocksB);
  EventLog merged = *a;
  std::erase_if(merged.records,
                [](const EventRecord& r) { return r.kind == static_cast<std::uint16_t>(EventKind::kClockOffset); });
  std::uint64_t releasesB = 0;
  for (EventRecord r : b->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kClockOffset)) continue;
    r.startNs -= offsetB;
    r.endNs -= offsetB;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) {
      if (r.iteration >= iterations) return "SocB released iteration " + std::to_string(r.iteration);
      ++releasesB;
      continue;
    }
    merged.records.push_back(r);
  }
  if (releasesB != iterations) return "SocB released " + std::to_string(releasesB) + " frames";
  for (const auto* log : {&*a, &*b}) {
    const std::uint32_t soc = log == &*a ? 0 : 1;
    for (const EventRecord& r : log->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
      if (runnableSoc(s, s.instances[InstanceId{r.instance}].runnable) != soc)
        return "the log of SoC " + std::to_string(soc) + " holds another SoC's instance";
    }
  }
  return checkLog(s, merged, iterations);
}

// The logs of SoCs on different clocks: every instance ran once per iteration; each dependency
// held, exactly within a SoC (one clock), and across SoCs to within `toleranceNs` once SoC B's
// records are moved by the offset its master recorded (a one-way estimate: it includes the link's
// latency, so a cross-SoC order may look that much too early or too late).
std::string checkAcrossClocks(const TwoSocs& t, std::uint64_t iterations, std::int64_t toleranceNs) {
  const Schedule s = loadSchedule(t.schedule);
  auto a = readEventLog(t.dir + "/SocA.log");
  auto b = readEventLog(t.dir + "/SocB.log");
  if (!a || !b) return "a log is unreadable";
  std::int64_t offsetB = 0;
  for (const EventRecord& r : b->records)
    if (r.kind == static_cast<std::uint16_t>(EventKind::kClockOffset)) offsetB = r.startNs;
  if (offsetB < 4'999'000'000'000 || offsetB > 5'001'000'000'000)
    return "SocB's recorded clock offset is " + std::to_string(offsetB) + " ns, not about 5000 s";
  const std::size_t n = s.instances.size();
  std::vector<const EventRecord*> run(n * iterations, nullptr);
  std::vector<EventRecord> moved;
  moved.reserve(b->records.size());
  for (const EventRecord& r : b->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    moved.push_back(r);
    moved.back().startNs -= offsetB;
    moved.back().endNs -= offsetB;
  }
  for (const auto* records : {&a->records, &moved}) {
    for (const EventRecord& r : *records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.iteration >= iterations || r.instance >= n)
        continue;
      run[r.iteration * n + r.instance] = &r;
    }
  }
  for (std::uint64_t h = 0; h < iterations; ++h) {
    for (InstanceId i : s.instances.ids()) {
      const EventRecord* ri = run[h * n + index(i)];
      if (ri == nullptr) return "instance " + std::to_string(index(i)) + " missing in iteration " + std::to_string(h);
      for (InstanceId d : s.instances[i].dependencies) {
        const EventRecord* rd = run[h * n + index(d)];
        if (rd == nullptr) return "instance " + std::to_string(index(d)) + " missing in iteration " + std::to_string(h);
        const bool across = runnableSoc(s, s.instances[i].runnable) != runnableSoc(s, s.instances[d].runnable);
        if (ri->startNs - rd->endNs < (across ? -toleranceNs : 0))
          return "instance " + std::to_string(index(i)) + " started " + std::to_string(rd->endNs - ri->startNs) +
                 " ns before its dependency " + std::to_string(index(d)) + " ended (iteration " + std::to_string(h) +
                 (across ? ", across SoCs" : "") + ")";
      }
    }
  }
  return "";
}

}  // namespace

TEST_CASE("two SoCs run 1,000 iterations with dependencies crossing both ways, in the schedule's order",
          "[multisoc][order]") {
  TwoSocs t("soc_order", 31);
  t.masterA = t.master("SocA", {"-e", "1000", "-a", "30"});
  t.masterB = t.master("SocB", {"-e", "1000", "-a", "30"});
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  const int timeoutMs = static_cast<int>(60000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 0);
  CHECK(waitFor(t.masterB, timeoutMs) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) == 0);
  CHECK(waitFor(t.clientB, timeoutMs) == 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
  CHECK(t.out("Sensor").find("status=frame-limit") != std::string::npos);
  CHECK(t.out("Planner").find("status=frame-limit") != std::string::npos);
  CHECK(t.out("Sensor").find("runs=2000") != std::string::npos);  // Capture and Fuse, 1,000 times each
  CHECK(t.out("Planner").find("runs=1000") != std::string::npos);
  CHECK(checkMergedLogs(t, 1000) == "");
  CHECK(t.shmClean());
  // tactus-report LOG LOG SCHEDULE: both SoCs in one set of statistics, the primary's releases.
  const pid_t report = t.kids.spawn(
      {buildPath("tools/tactus-report"), t.dir + "/SocB.log", t.dir + "/SocA.log", t.schedule}, t.dir + "/report.out");
  CHECK(waitFor(report, 30000) == 0);
  const std::string text = t.out("report");
  INFO(text);
  CHECK(text.find("3000 runs, 1000 frame releases") != std::string::npos);
  CHECK(text.find("log " + t.dir + "/SocA.log") != std::string::npos);  // the primary's header
  CHECK(text.find("Planner.Plan    1000") != std::string::npos);
  CHECK(text.find("Sensor.Capture  1000") != std::string::npos);
}

TEST_CASE("a multi-SoC run starts whatever order its masters and clients come in", "[multisoc][order]") {
  // 0: clients first, then SocB's master, then SocA's; 1: SocB whole, then SocA whole;
  // 2: the primary's master, its client, then SocB's client and master.
  for (int order = 0; order < 3; ++order) {
    DYNAMIC_SECTION("order " << order) {
      TwoSocs t("soc_start" + std::to_string(order), 32 + order);
      const std::vector<std::string> args = {"-e", "50", "-a", "30"};
      if (order == 0) {
        t.clientA = t.client("Sensor");
        t.clientB = t.client("Planner");
        usleep(200000);
        t.masterB = t.master("SocB", args);
        usleep(200000);
        t.masterA = t.master("SocA", args);
      } else if (order == 1) {
        t.masterB = t.master("SocB", args);
        t.clientB = t.client("Planner");
        usleep(300000);
        t.clientA = t.client("Sensor");
        t.masterA = t.master("SocA", args);
      } else {
        t.masterA = t.master("SocA", args);
        t.clientA = t.client("Sensor");
        usleep(300000);
        t.clientB = t.client("Planner");
        t.masterB = t.master("SocB", args);
      }
      const int timeoutMs = static_cast<int>(40000 * timeScale());
      CHECK(waitFor(t.masterA, timeoutMs) == 0);
      CHECK(waitFor(t.masterB, timeoutMs) == 0);
      CHECK(waitFor(t.clientA, timeoutMs) == 0);
      CHECK(waitFor(t.clientB, timeoutMs) == 0);
      INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
      CHECK(checkMergedLogs(t, 50) == "");
      CHECK(t.shmClean());
    }
  }
}

TEST_CASE("a signal to either master stops every SoC at the same iteration boundary", "[multisoc][exit]") {
  // SocB (a follower) asks the primary to stop; SocA (the primary) stops and tells SocB where.
  for (const std::string stopped : {"SocB", "SocA"}) {
    DYNAMIC_SECTION("signal to " << stopped) {
      TwoSocs t("soc_signal_" + stopped, stopped == "SocB" ? 39 : 40);
      const std::vector<std::string> args = {"-a", "30"};  // until stopped
      t.masterA = t.master("SocA", args);
      t.masterB = t.master("SocB", args);
      t.clientA = t.client("Sensor");
      t.clientB = t.client("Planner");
      REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 0),
                                  static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
      REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                                  static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
      usleep(300000);
      REQUIRE(kill(stopped == "SocA" ? t.masterA : t.masterB, SIGTERM) == 0);
      const int timeoutMs = static_cast<int>(15000 * timeScale());
      CHECK(waitFor(t.masterA, timeoutMs) == 0);
      CHECK(waitFor(t.masterB, timeoutMs) == 0);
      CHECK(waitFor(t.clientA, timeoutMs) == 0);
      CHECK(waitFor(t.clientB, timeoutMs) == 0);
      INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
      // Every SoC's clients learn the run was stopped by a signal (a follower from the primary's
      // stop sample), not that it reached a frame limit nobody gave.
      CHECK(t.out("Sensor").find("status=stopped-by-signal") != std::string::npos);
      CHECK(t.out("Planner").find("status=stopped-by-signal") != std::string::npos);
      if (stopped == "SocA")
        CHECK(t.out("Planner").find("the master of the primary SoC 'SocA' was stopped by a signal") !=
              std::string::npos);
      // The iterations SocA released are the ones both SoCs ran, each whole and in order.
      auto a = readEventLog(t.dir + "/SocA.log");
      REQUIRE(a.has_value());
      std::uint64_t iterations = 0;
      for (const EventRecord& r : a->records)
        if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease))
          iterations = std::max<std::uint64_t>(iterations, r.iteration + 1);
      CHECK(iterations > 0);
      CHECK(checkMergedLogs(t, iterations) == "");
      CHECK(t.shmClean());
    }
  }
}

TEST_CASE("SoCs on clocks 5000 s apart (their own time namespaces) run in order, and the report merges their logs",
          "[multisoc][timens]") {
  // As two hosts booted at different times: SoC B's master and client see CLOCK_MONOTONIC 5000 s
  // ahead. The run keeps every cross-SoC order; each master's log ends with its clock, and
  // tactus-report moves SoC B's records onto SoC A's clock.
  if (!timeNamespacesPermitted()) TACTUS_SKIP("unshare -T (a time namespace) is not permitted here");
  TwoSocs t("soc_clocks", 45, twoWayLatency());
  t.socBPrefix = clockAhead();
  t.masterA = t.master("SocA", {"-e", "200", "-a", "30"});
  t.masterB = t.master("SocB", {"-a", "30"});
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  const int timeoutMs = static_cast<int>(30000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 0);
  CHECK(waitFor(t.masterB, timeoutMs) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) == 0);
  CHECK(waitFor(t.clientB, timeoutMs) == 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
  // 5000 s, within the bound the two-way exchange gives (tens of us here; 2 ms allowed).
  CHECK(std::llabs(numberAfter(t.out("masterSocB"), "estimated at ") - 5'000'000'000LL) < 2000);
  CHECK(t.out("masterSocB").find(" us (two-way: the shortest round trip of the last 16 of ") != std::string::npos);
  CHECK(checkAcrossClocks(t, 200, 2'000'000) == "");
  CHECK(t.shmClean());
  const pid_t report = t.kids.spawn(
      {buildPath("tools/tactus-report"), t.dir + "/SocA.log", t.dir + "/SocB.log", t.schedule}, t.dir + "/report.out");
  CHECK(waitFor(report, 30000) == 0);
  const std::string text = t.out("report");
  INFO(text);
  CHECK(std::llabs(numberAfter(text, "SocB.log: its times moved by ") + 5'000'000'000'000LL) < 2'000'000);
  CHECK(text.find("ns: times across the SoCs are known that closely") != std::string::npos);
  // The hyperepoch's span (last end - iteration start) is that of one run, not 5000 s.
  const std::size_t row = text.find("\n  Main ");
  REQUIRE(row != std::string::npos);
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  CHECK(line.find(" s ") == std::string::npos);
  CHECK(line.find("ms") != std::string::npos);
}

TEST_CASE("SoCs on separate clocks known less closely than the schedule's cross-SoC latency end the run, named",
          "[multisoc][timens]") {
  // A cross-SoC latency of 1 us leaves no room for any clock estimate over DDS: once SoC B's last
  // 16 clock exchanges (about 1.6 s) all had round trips above 2 us, SoC B ends the run, naming
  // the bound and the latency, and SoC A ends with it.
  if (!timeNamespacesPermitted()) TACTUS_SKIP("unshare -T (a time namespace) is not permitted here");
  TwoSocs t("soc_bound", 46, "1us");
  t.socBPrefix = clockAhead();
  t.masterA = t.master("SocA", {"-a", "30"});  // until stopped: the bound ends it
  t.masterB = t.master("SocB", {"-a", "30"});
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  const int timeoutMs = static_cast<int>(30000 * timeScale());
  CHECK(waitFor(t.masterB, timeoutMs) == 1);
  CHECK(waitFor(t.masterA, timeoutMs) == 1);
  CHECK(waitFor(t.clientA, timeoutMs) != 0);
  CHECK(waitFor(t.clientB, timeoutMs) != 0);
  INFO(t.out("masterSocA") << t.out("masterSocB"));
  CHECK(t.out("masterSocB").find("SoC 'SocB' knows the clock of the primary SoC 'SocA' only within ") !=
        std::string::npos);
  CHECK(t.out("masterSocB").find("more than the 1 us the schedule leaves between them (CrossSocLatency)") !=
        std::string::npos);
  CHECK(t.out("masterSocA").find("SoC 'SocB' ended the run: ") != std::string::npos);
  CHECK(t.shmClean());
}

TEST_CASE(
    "SoCs on two emulated hosts (network and time namespaces, one veth link) run in order; a link cut ends "
    "the run on both, named",
    "[multisoc][netns]") {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/sbin/ip")) TACTUS_SKIP("needs root and ip(8)");
  if (!timeNamespacesPermitted()) TACTUS_SKIP("unshare -T (a time namespace) is not permitted here");
  SECTION("a run of 200 iterations") {
    TwoSocs t("soc_hosts", 47, twoWayLatency());
    EmulatedHosts hosts(t.dir, kHosts);
    if (const std::string why = hosts.create(); !why.empty()) TACTUS_SKIP("ip netns: " << why);
    REQUIRE(hosts.prefixes(t.socAPrefix, t.socBPrefix) == "");
    t.masterA = t.master("SocA", {"-e", "200", "-a", "30"});
    t.masterB = t.master("SocB", {"-a", "30"});
    t.clientA = t.client("Sensor");
    t.clientB = t.client("Planner");
    const int timeoutMs = static_cast<int>(30000 * timeScale());
    CHECK(waitFor(t.masterA, timeoutMs) == 0);
    CHECK(waitFor(t.masterB, timeoutMs) == 0);
    CHECK(waitFor(t.clientA, timeoutMs) == 0);
    CHECK(waitFor(t.clientB, timeoutMs) == 0);
    INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
    CHECK(std::llabs(numberAfter(t.out("masterSocB"), "estimated at ") - 5'000'000'000LL) < 2000);
    CHECK(checkAcrossClocks(t, 200, 2'000'000) == "");
    CHECK(t.shmClean());
  }
  for (const int outageMs : {50, 1000}) {
    DYNAMIC_SECTION("the link down for " << outageMs << " ms, shorter than -o 3 s: the run rides through") {
      TwoSocs t("soc_hosts_outage" + std::to_string(outageMs), outageMs == 50 ? 51 : 52, twoWayLatency());
      EmulatedHosts hosts(t.dir, kHosts);
      if (const std::string why = hosts.create(); !why.empty()) TACTUS_SKIP("ip netns: " << why);
      REQUIRE(hosts.prefixes(t.socAPrefix, t.socBPrefix) == "");
      t.masterA = t.master("SocA", {"-e", "300", "-a", "30", "-o", "3000000"});
      t.masterB = t.master("SocB", {"-a", "30", "-o", "3000000"});
      t.clientA = t.client("Sensor");
      t.clientB = t.client("Planner");
      REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                                  static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
      usleep(500000);  // about 50 of the 300 iterations (10 ms each) have run
      const auto down = std::chrono::steady_clock::now();
      REQUIRE(std::system(("ip -n " + hosts.nsA() + " link set " + hosts.ifA() + " down").c_str()) == 0);
      usleep(static_cast<useconds_t>(outageMs) * 1000);
      REQUIRE(std::system(("ip -n " + hosts.nsA() + " link set " + hosts.ifA() + " up").c_str()) == 0);
      const auto up = std::chrono::steady_clock::now();
      const int timeoutMs = static_cast<int>(30000 * timeScale());
      CHECK(waitFor(t.masterA, timeoutMs) == 0);
      CHECK(waitFor(t.masterB, timeoutMs) == 0);
      CHECK(waitFor(t.clientA, timeoutMs) == 0);
      CHECK(waitFor(t.clientB, timeoutMs) == 0);
      INFO(t.out("masterSocA") << t.out("masterSocB") << "\noutage: "
                               << std::chrono::duration_cast<std::chrono::microseconds>(up - down).count() << " us");
      // Both SoCs ran all 300 iterations, in order; both count the periods the primary's
      // iterations could not start in (the follower's ends were held up by the outage).
      CHECK(t.out("masterSocA").find("ran 300 hyperepoch iterations") != std::string::npos);
      CHECK(checkAcrossClocks(t, 300, 2'000'000) == "");
      // Periods skipped: the primary's, and the follower's count of them from the primary's starts.
      const long long skippedA = numberAfter(t.out("masterSocA"), " dropped, ");
      if (outageMs >= 1000) CHECK(skippedA >= 50);
      CHECK(numberAfter(t.out("masterSocB"), " dropped, ") == skippedA);
      CHECK(t.shmClean());
    }
  }
  SECTION("the link cut while it runs") {
    TwoSocs t("soc_hosts_cut", 48, twoWayLatency());
    EmulatedHosts hosts(t.dir, kHosts);
    if (const std::string why = hosts.create(); !why.empty()) TACTUS_SKIP("ip netns: " << why);
    REQUIRE(hosts.prefixes(t.socAPrefix, t.socBPrefix) == "");
    const std::vector<std::string> args = {"-a", "30", "-o", "500000"};  // until stopped; 0.5 s lease
    t.masterA = t.master("SocA", args);
    t.masterB = t.master("SocB", args);
    t.clientA = t.client("Sensor");
    t.clientB = t.client("Planner");
    REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 0),
                                static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
    REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                                static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
    usleep(300000);
    REQUIRE(std::system(("ip -n " + hosts.nsA() + " link set " + hosts.ifA() + " down").c_str()) == 0);
    const auto down = std::chrono::steady_clock::now();
    const int timeoutMs = static_cast<int>(15000 * timeScale());
    // Each master ends within -o (0.5 s) and the monitor loop's margin; the time each took is
    // printed (meson test -v), and bounded generously here (-o plus 3 s, scaled).
    std::vector<double> tookS;
    for (const pid_t master : {t.masterA, t.masterB}) {
      CHECK(waitFor(master, timeoutMs) == 1);
      tookS.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - down).count());
    }
    std::printf(
        "multisoc separate hosts: link cut for good, -o 0.5 s: SocA's master ended after %.2f s, SocB's "
        "after %.2f s\n",
        tookS[0], tookS[1]);
    CHECK(tookS[1] < 3.5 * timeScale());
    CHECK(waitFor(t.clientA, timeoutMs) != 0);
    CHECK(waitFor(t.clientB, timeoutMs) != 0);
    INFO(t.out("masterSocA") << t.out("masterSocB"));
    CHECK(t.out("masterSocA").find("SoC 'SocB' is gone: its master showed no DDS liveliness within -o 500000 us") !=
          std::string::npos);
    CHECK(t.out("masterSocB").find("SoC 'SocA' is gone: its master showed no DDS liveliness within -o 500000 us") !=
          std::string::npos);
    CHECK(t.shmClean());
  }
}

TEST_CASE(
    "with DDS Security only trusted masters join: a run between two, and none with a master whose "
    "certificate another authority signed",
    "[multisoc][security]") {
  const std::string plugins = "/usr/lib/x86_64-linux-gnu/libddsc0debian/libdds_security_auth.so";
  if (!std::filesystem::exists("/usr/bin/openssl") || !std::filesystem::exists(plugins))
    TACTUS_SKIP("needs openssl(1) and Cyclone DDS's security plugins (" << plugins << ")");
  const std::string script = std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/samples/multisoc/security/make_pki.sh";
  // Each side: the loopback network part, then its SoC's security fragment from a PKI.
  const auto secured = [](const std::string& pki, const std::string& soc) {
    const char* root = std::getenv("TACTUS_SOURCE_ROOT");
    return std::vector<std::string>{"/usr/bin/env", "CYCLONEDDS_URI=file://" + std::string(root) +
                                                        "/samples/multisoc/loopback.xml,file://" + pki + "/" + soc +
                                                        ".xml"};
  };
  SECTION("both masters trusted: the run goes on encrypted") {
    TwoSocs t("soc_trusted", 49);
    REQUIRE(std::system((script + " " + t.dir + "/pki SocA SocB >" + t.dir + "/pki.out 2>&1").c_str()) == 0);
    t.socAPrefix = secured(t.dir + "/pki", "SocA");
    t.socBPrefix = secured(t.dir + "/pki", "SocB");
    t.masterA = t.master("SocA", {"-e", "50", "-a", "30"});
    t.masterB = t.master("SocB", {"-a", "30"});
    t.clientA = t.client("Sensor");
    t.clientB = t.client("Planner");
    const int timeoutMs = static_cast<int>(30000 * timeScale());
    CHECK(waitFor(t.masterA, timeoutMs) == 0);
    CHECK(waitFor(t.masterB, timeoutMs) == 0);
    CHECK(waitFor(t.clientA, timeoutMs) == 0);
    CHECK(waitFor(t.clientB, timeoutMs) == 0);
    INFO(t.out("masterSocA") << t.out("masterSocB"));
    CHECK(checkMergedLogs(t, 50) == "");
    CHECK(t.shmClean());
  }
  // A rogue participant (tests/multisoc/rogue_peer.cpp) on the run's domain without certificates:
  // it publishes, as SoC B, the end of Planner.Plan in iterations 0..200 (so Sensor.Fuse, which
  // waits for it, could start before the real one ended) and the primary's stop before iteration 20
  // (so SoC B would stop early). Unsecured it is believed (the check that this test can fail);
  // with DDS Security it matches no master and the run is untouched.
  for (const bool withSecurity : {false, true}) {
    // No ": " far into a section name: Catch2 2.13 indents a failure's or warning's header lines to
    // it and aborts (TextFlow assert) where that passes the console width.
    DYNAMIC_SECTION("a rogue participant publishes forged ends and a forged stop "
                    << (withSecurity ? "with security, none accepted" : "without security, taking effect")) {
      TwoSocs t(withSecurity ? "soc_rogue_secured" : "soc_rogue_open", withSecurity ? 53 : 54);
      if (withSecurity) {
        REQUIRE(std::system((script + " " + t.dir + "/pki SocA SocB >" + t.dir + "/pki.out 2>&1").c_str()) == 0);
        t.socAPrefix = secured(t.dir + "/pki", "SocA");
        t.socBPrefix = secured(t.dir + "/pki", "SocB");
      }
      const Schedule s = loadSchedule(t.schedule);
      RunnableId plan = kNone;
      for (RunnableId r : s.runnables.ids())
        if (s.runnables[r].name == "Plan") plan = r;
      REQUIRE(plan != kNone);
      const pid_t rogue =
          t.kids.spawn({buildPath("tests/multisoc/tactus-rogue-peer"), "--domain", t.domain, "--schedule",
                        std::to_string(s.identifier), "--soc", "1", "--runnable", std::to_string(index(plan)), "--from",
                        "0", "--to", "200", "--stop-at", "20", "--seconds", std::to_string(6 * timeScale())},
                       t.dir + "/rogue.out");
      t.masterA = t.master("SocA", {"-e", "50", "-a", "30"});
      t.masterB = t.master("SocB", {"-a", "30"});
      t.clientA = t.client("Sensor");
      t.clientB = t.client("Planner");
      const int timeoutMs = static_cast<int>(40000 * timeScale());
      const int codeA = waitFor(t.masterA, timeoutMs);
      const int codeB = waitFor(t.masterB, timeoutMs);
      CHECK(waitFor(t.clientA, timeoutMs) >= 0);
      CHECK(waitFor(t.clientB, timeoutMs) >= 0);
      REQUIRE(waitFor(rogue, timeoutMs) == 0);
      const std::string rogueSaid = t.out("rogue");
      INFO(t.out("masterSocA") << t.out("masterSocB") << rogueSaid);
      CHECK(numberAfter(rogueSaid, "published ") > 0);
      if (withSecurity) {
        CHECK(codeA == 0);
        CHECK(codeB == 0);
        CHECK(numberAfter(rogueSaid, "matched ") == 0);  // no master took a sample of it
        CHECK(checkMergedLogs(t, 50) == "");
      } else if (rogueSaid.find("adopted the run") == std::string::npos) {
        // The rogue's participant came up after the primary's ready state (a loaded machine), so its
        // samples never carried the run's identity and link v2 dropped them all: nothing to show.
        WARN("the rogue joined after the run started and never learned its identity: its forgeries were dropped");
      } else {
        CHECK(numberAfter(rogueSaid, "matched ") > 0);
        CHECK((codeA != 0 || codeB != 0 || checkMergedLogs(t, 50) != ""));
      }
      CHECK(t.shmClean());
    }
  }
  SECTION("SocB's master holds a certificate of another authority: neither sees the other") {
    TwoSocs t("soc_untrusted", 50);
    REQUIRE(std::system((script + " " + t.dir + "/pki SocA SocB >" + t.dir + "/pki.out 2>&1").c_str()) == 0);
    REQUIRE(std::system((script + " " + t.dir + "/other SocA SocB >" + t.dir + "/other.out 2>&1").c_str()) == 0);
    t.socAPrefix = secured(t.dir + "/pki", "SocA");
    t.socBPrefix = secured(t.dir + "/other", "SocB");
    t.masterA = t.master("SocA", {"-e", "50", "-a", "3"});
    t.masterB = t.master("SocB", {"-a", "3"});
    t.clientA = t.client("Sensor");
    t.clientB = t.client("Planner");
    const int timeoutMs = static_cast<int>(30000 * timeScale());
    CHECK(waitFor(t.masterA, timeoutMs) == 1);
    CHECK(waitFor(t.masterB, timeoutMs) == 1);
    CHECK(waitFor(t.clientA, timeoutMs) != 0);
    CHECK(waitFor(t.clientB, timeoutMs) != 0);
    INFO(t.out("masterSocA") << t.out("masterSocB"));
    CHECK(t.out("masterSocA").find("no master of SoC 'SocB' was ready within -a 3 s") != std::string::npos);
    CHECK(t.out("masterSocB").find("no master of SoC 'SocA' was ready within -a 3 s") != std::string::npos);
    CHECK(t.out("masterSocA").find("certificate signature failure") != std::string::npos);  // Cyclone says why
    CHECK(t.shmClean());
  }
}

TEST_CASE("only the primary's -e decides the last iteration: a follower's own -e is ignored", "[multisoc][exit]") {
  // A follower whose -e is smaller than the primary's must not stop its clients early (the primary
  // would wait for their ends); one whose -e is larger stops with the primary all the same.
  struct Case {
    std::string primary, follower;
    std::uint64_t iterations;
    int domain;
  };
  for (const Case& c : {Case{"100", "10", 100, 41}, Case{"30", "300", 30, 42}}) {
    DYNAMIC_SECTION("SocA -e " << c.primary << ", SocB -e " << c.follower) {
      TwoSocs t("soc_limit" + c.follower, c.domain);
      t.masterA = t.master("SocA", {"-e", c.primary, "-a", "30"});
      t.masterB = t.master("SocB", {"-e", c.follower, "-a", "30"});
      t.clientA = t.client("Sensor");
      t.clientB = t.client("Planner");
      const int timeoutMs = static_cast<int>(30000 * timeScale());
      CHECK(waitFor(t.masterA, timeoutMs) == 0);
      CHECK(waitFor(t.masterB, timeoutMs) == 0);
      CHECK(waitFor(t.clientA, timeoutMs) == 0);
      CHECK(waitFor(t.clientB, timeoutMs) == 0);
      INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
      CHECK(t.out("masterSocB").find("warning: -e " + c.follower + " is ignored on SoC 'SocB'") != std::string::npos);
      CHECK(t.out("masterSocA").find("warning") == std::string::npos);
      CHECK(t.out("Planner").find("runs=" + std::to_string(c.iterations)) != std::string::npos);
      CHECK(t.out("Sensor").find("runs=" + std::to_string(2 * c.iterations)) != std::string::npos);
      CHECK(checkMergedLogs(t, c.iterations) == "");
      CHECK(t.shmClean());
    }
  }
}

TEST_CASE("a master killed on one SoC ends the run on the other, naming its SoC", "[multisoc][failure]") {
  // Killed: the primary (SocA; SocB's release threads wait for its starts) or SocB.
  for (const std::string killed : {"SocA", "SocB"}) {
    DYNAMIC_SECTION("killed " << killed) {
      TwoSocs t("soc_kill_" + killed, killed == "SocA" ? 35 : 36);
      const std::vector<std::string> args = {"-a", "30", "-o", "500000"};  // until stopped; 0.5 s lease
      t.masterA = t.master("SocA", args);
      t.masterB = t.master("SocB", args);
      t.clientA = t.client("Sensor");
      t.clientB = t.client("Planner");
      REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 0),
                                  static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
      REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                                  static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
      usleep(300000);
      const pid_t victim = killed == "SocA" ? t.masterA : t.masterB;
      const pid_t survivor = killed == "SocA" ? t.masterB : t.masterA;
      const auto killedAt = std::chrono::steady_clock::now();
      REQUIRE(kill(victim, SIGKILL) == 0);
      const int timeoutMs = static_cast<int>(15000 * timeScale());
      CHECK(waitFor(survivor, timeoutMs) == 1);
      // Within -o and half a second: the survivor used to linger 1.7 s (its last announcement
      // waited a second for the dead peer's acknowledgement: DDS kept the dead participant matched
      // for its own 10 s lease).
      const long tookMs = static_cast<long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killedAt).count());
      CHECK(waitFor(victim, 5000) == 128 + SIGKILL);
      INFO("the survivor exited " << tookMs << " ms after the kill");
      CHECK(tookMs < static_cast<long>((500 + 500) * timeScale()));
      CHECK(waitFor(t.clientA, timeoutMs) != -1);
      CHECK(waitFor(t.clientB, timeoutMs) != -1);
      const std::string survivorOut = t.out(killed == "SocA" ? "masterSocB" : "masterSocA");
      INFO(survivorOut);
      CHECK(survivorOut.find("SoC '" + killed + "' is gone: its master showed no DDS liveliness within -o 500000 us") !=
            std::string::npos);
      CHECK(t.shmClean());
    }
  }
}

TEST_CASE("a client killed on one SoC ends the run on both, naming the client", "[multisoc][failure]") {
  TwoSocs t("soc_client", 37);
  const std::vector<std::string> args = {"-a", "30"};
  t.masterA = t.master("SocA", args);
  t.masterB = t.master("SocB", args);
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                              static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
  usleep(300000);
  REQUIRE(kill(t.clientB, SIGKILL) == 0);
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(t.masterB, timeoutMs) == 1);
  CHECK(waitFor(t.masterA, timeoutMs) == 1);
  CHECK(waitFor(t.clientA, timeoutMs) != 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor"));
  CHECK(t.out("masterSocB").find("client 'Planner'") != std::string::npos);
  CHECK(t.out("masterSocA").find("SoC 'SocB' ended the run: client 'Planner'") != std::string::npos);
  CHECK(t.out("Sensor").find("SoC 'SocB' ended the run") != std::string::npos);
  CHECK(t.shmClean());
}

TEST_CASE("a SoC whose master never starts makes the start time out, naming that SoC", "[multisoc][failure]") {
  TwoSocs t("soc_absent", 38);
  t.masterA = t.master("SocA", {"-a", "2"});
  t.clientA = t.client("Sensor");
  // SocB's client pointed at SocA's segment by hand is refused: SocA's master does not run it.
  const pid_t astray = t.kids.spawn({buildPath("tests/runtime/tactus-test-client"), "--name", "Planner", "--instance",
                                     shm::socInstanceName(t.instance, 0), "--timeout-ms", "20000"},
                                    t.dir + "/astray.out");
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(astray, timeoutMs) == 3);
  CHECK(t.out("astray").find("client 'Planner' runs on SoC 'SocB' of schedule 'TwoSoc', but") != std::string::npos);
  CHECK(waitFor(t.masterA, timeoutMs) == 1);
  CHECK(waitFor(t.clientA, timeoutMs) != 0);
  INFO(t.out("masterSocA") << t.out("Sensor"));
  CHECK(t.out("masterSocA").find("no master of SoC 'SocB' was ready within -a 2 s") != std::string::npos);
  CHECK(t.out("Sensor").find("status=timeout") != std::string::npos);
  CHECK(t.shmClean());
}

TEST_CASE("a start that times out (-a) over a peer seen and then frozen ends within -a and half a second",
          "[multisoc][failure]") {
  // SocB's master comes but its client does not (it is never ready), then it freezes: within its
  // -o it is alive to DDS and never acknowledges SocA's last announcement, which SocA used to wait
  // a second for (it exited 3.1 s after its start with -a 2).
  TwoSocs t("soc_frozen_peer", 47);
  t.masterB = t.master("SocB", {"-a", "30"});
  t.masterA = t.master("SocA", {"-a", "2"});
  const auto startedAt = std::chrono::steady_clock::now();
  t.clientA = t.client("Sensor");
  usleep(1'000'000);
  REQUIRE(kill(t.masterB, SIGSTOP) == 0);
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 1);
  const long tookMs = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - startedAt).count());
  REQUIRE(kill(t.masterB, SIGCONT) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) != 0);
  CHECK(waitFor(t.masterB, timeoutMs) == 1);
  INFO(t.out("masterSocA") << t.out("masterSocB") << "SocA exited " << tookMs << " ms after its start");
  CHECK(t.out("masterSocA").find("no master of SoC 'SocB' was ready within -a 2 s") != std::string::npos);
  CHECK(tookMs < static_cast<long>(2000 + 500 * timeScale()));
  CHECK(t.shmClean());
}

TEST_CASE("masters that disagree on the primary SoC refuse the run, naming both choices", "[multisoc][failure]") {
  TwoSocs t("soc_primary", 44);
  t.masterA = t.master("SocA", {"-a", "20"});                       // the default: the first SoC
  t.masterB = t.master("SocB", {"-a", "20", "--primary", "SocB"});  // itself
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 1);
  CHECK(waitFor(t.masterB, timeoutMs) == 1);
  CHECK(waitFor(t.clientA, timeoutMs) != 0);
  CHECK(waitFor(t.clientB, timeoutMs) != 0);
  INFO(t.out("masterSocA") << t.out("masterSocB"));
  CHECK(t.out("masterSocA")
            .find("the master of SoC 'SocB' takes SoC 'SocB' for the primary, this master of SoC "
                  "'SocA' takes SoC 'SocA': give every master the same --primary") != std::string::npos);
  CHECK(t.out("masterSocB")
            .find("the master of SoC 'SocA' takes SoC 'SocA' for the primary, this master of SoC "
                  "'SocB' takes SoC 'SocB'") != std::string::npos);
  CHECK(t.shmClean());
}

namespace {

// The sample compiled as schedule `identifier` (its Identifier and name changed), for a manager's run.
std::string compileAsMode(ChildProcesses& kids, const std::string& dir, int identifier) {
  std::string text = readFile(std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/samples/multisoc/two_soc.yaml");
  const std::string id = std::to_string(identifier);
  text.replace(text.find("Identifier: 12"), 14, "Identifier: " + id);
  text.replace(text.find("TwoSoc:"), 7, "TwoSoc" + id + ":");
  const std::string yaml = dir + "/two" + id + ".yaml";
  std::string out = dir + "/two" + id + ".tsched";
  std::ofstream(yaml) << text;
  const pid_t pid = kids.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", out}, dir + "/compile.out");
  REQUIRE(waitFor(pid, 30000) == 0);
  return out;
}

// tactus-manager on the run's instance; its exit status, its output in `said`.
int manager(TwoSocs& t, const std::vector<std::string>& args, std::string* said = nullptr) {
  std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", t.instance, "-N", "mgr", "-t", "15000"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = t.kids.spawn(argv, t.dir + "/manager.out");
  const int status = waitFor(pid, static_cast<int>(30000 * timeScale()));
  if (said != nullptr) *said = t.out("manager");
  return status;
}

// The managed multi-SoC run both [managed] cases start: the sample compiled as schedules 301 and
// 302, both masters with both and -N mgr, both clients. Returns the two schedules' paths.
std::vector<std::string> startManaged(TwoSocs& t) {
  std::vector<std::string> paths = {compileAsMode(t.kids, t.dir, 301), compileAsMode(t.kids, t.dir, 302)};
  t.schedule = paths[0] + "," + paths[1];
  t.masterA = t.master("SocA", {"-N", "mgr", "-a", "30"});
  t.masterB = t.master("SocB", {"-N", "mgr", "-a", "30"});
  t.clientA = t.client("Sensor");
  t.clientB = t.client("Planner");
  return paths;
}

// Waits until the primary runs schedule `id` for `n` iterations or more (tactus-manager status).
bool awaitSchedule(TwoSocs& t, int id, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(static_cast<int>(30 * timeScale()));
  while (std::chrono::steady_clock::now() < deadline) {
    std::string said;
    if (manager(t, {"status"}, &said) == 0 &&
        said.find("running schedule " + std::to_string(id) + ", ") != std::string::npos &&
        numberAfter(said, "running schedule " + std::to_string(id) + ", ") >= static_cast<long long>(n))
      return true;
    usleep(50000);
  }
  return false;
}

// Both SoCs' logs of a managed run, schedule by schedule: every iteration the primary released of
// a schedule ran whole on both SoCs (each instance once, by its own SoC) with every dependency
// ended before its dependant started (one host: one clock), and the follower released exactly
// those iterations. The iterations of each schedule in `ran`.
std::string checkManagedLogs(const TwoSocs& t, const std::vector<std::string>& paths, std::vector<std::uint64_t>& ran) {
  auto a = readEventLog(t.dir + "/SocA.log");
  auto b = readEventLog(t.dir + "/SocB.log");
  if (!a || !b) return "a log is unreadable";
  for (const std::string& path : paths) {
    const Schedule s = loadSchedule(path);
    const auto id = static_cast<std::uint16_t>(s.identifier);
    const auto kRun = static_cast<std::uint16_t>(EventKind::kRun);
    const auto kRelease = static_cast<std::uint16_t>(EventKind::kRelease);
    std::set<std::uint32_t> releasedA, releasedB;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<EventRecord>> runs;  // (iteration, instance)
    for (const auto* log : {&*a, &*b}) {
      const std::uint32_t soc = log == &*a ? 0 : 1;
      for (const EventRecord& r : log->records) {
        if (r.schedule != id) continue;
        if (r.kind == kRelease) (soc == 0 ? releasedA : releasedB).insert(r.iteration);
        if (r.kind != kRun || r.instance >= s.instances.size()) continue;
        if (runnableSoc(s, s.instances[InstanceId{r.instance}].runnable) != soc)
          return "the log of SoC " + std::to_string(soc) + " holds another SoC's run";
        runs[{r.iteration, r.instance}].push_back(r);
      }
    }
    if (releasedA != releasedB)
      return "schedule " + std::to_string(id) + ": SocA released " + std::to_string(releasedA.size()) +
             " iterations, SocB " + std::to_string(releasedB.size()) + " (or others)";
    for (const std::uint32_t h : releasedA) {
      for (InstanceId i : s.instances.ids()) {
        const auto it = runs.find({h, index(i)});
        if (it == runs.end() || it->second.size() != 1)
          return "schedule " + std::to_string(id) + ", iteration " + std::to_string(h) + ": instance " +
                 std::to_string(index(i)) + " ran " + std::to_string(it == runs.end() ? 0 : it->second.size()) +
                 " times";
        for (InstanceId d : s.instances[i].dependencies) {
          const auto dep = runs.find({h, index(d)});
          if (dep == runs.end() || dep->second.front().endNs > it->second.front().startNs)
            return "schedule " + std::to_string(id) + ", iteration " + std::to_string(h) + ": instance " +
                   std::to_string(index(i)) + " started before its dependency " + std::to_string(index(d)) + " ended";
        }
      }
    }
    ran.push_back(releasedA.size());
  }
  return "";
}

}  // namespace

TEST_CASE("a multi-SoC run under a schedule manager: every SoC follows the primary's start, rollover and exit",
          "[multisoc][order][managed]") {
  // Both masters get both schedules and -N; the manager talks to the primary (SocA): start 301,
  // rollover to 302, exit. SocB starts, switches and ends where SocA does, its clients' switch
  // callbacks run at the rollover, and each schedule's iterations run whole, in order, on both.
  TwoSocs t("soc_managed", 45);
  const std::vector<std::string> paths = startManaged(t);
  std::string said;
  REQUIRE(manager(t, {"start", "301"}, &said) == 0);
  INFO(said << t.out("masterSocA") << t.out("masterSocB"));
  REQUIRE(awaitSchedule(t, 301, 30));
  REQUIRE(manager(t, {"rollover", "302", "301"}, &said) == 0);
  REQUIRE(awaitSchedule(t, 302, 30));
  // Back and forth: each SoC keeps every activation's stop apart (a queue of stops per hyperepoch).
  REQUIRE(manager(t, {"rollover", "301", "302"}, &said) == 0);
  REQUIRE(manager(t, {"rollover", "302", "301"}, &said) == 0);
  REQUIRE(awaitSchedule(t, 302, 70));
  REQUIRE(manager(t, {"exit"}, &said) == 0);
  const int timeoutMs = static_cast<int>(20000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 0);
  CHECK(waitFor(t.masterB, timeoutMs) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) == 0);
  CHECK(waitFor(t.clientB, timeoutMs) == 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
  CHECK(t.out("masterSocB").find("the master of the primary SoC 'SocA' ended the run") != std::string::npos);
  CHECK(t.out("Sensor").find("status=exit-requested") != std::string::npos);
  CHECK(t.out("Planner").find("status=exit-requested") != std::string::npos);
  std::vector<std::uint64_t> ran;
  CHECK(checkManagedLogs(t, paths, ran) == "");
  REQUIRE(ran.size() == 2);
  CHECK(ran[0] >= 30);
  CHECK(ran[1] >= 30);
  // SocB's log: 302 started twice as a rollover from 301 and 301 once from 302 (their starts name
  // the schedule they took over from), as on SocA.
  auto b = readEventLog(t.dir + "/SocB.log");
  REQUIRE(b.has_value());
  int to302 = 0, to301 = 0;
  for (const EventRecord& r : b->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStart)) continue;
    to302 += r.schedule == 302 && r.aux == 301 ? 1 : 0;
    to301 += r.schedule == 301 && r.aux == 302 ? 1 : 0;
  }
  CHECK(to302 == 2);
  CHECK(to301 == 1);
  CHECK(t.shmClean());
  CHECK_FALSE(segmentPresent(shm::managerInstanceName(t.instance)));
  CHECK_FALSE(segmentPresent(shm::scheduleInstanceName(shm::socInstanceName(t.instance, 1), 1)));
}

TEST_CASE("under a schedule manager a signal to a follower SoC's master ends the run on every SoC",
          "[multisoc][exit][managed]") {
  // Nothing runs yet (the manager started nothing): SocB's master stops at once and SocA's, told
  // by SocB's stop request (or, were that lost, by SocB ending first), ends its run too.
  TwoSocs t("soc_managed_signal", 46);
  const std::vector<std::string> paths = startManaged(t);
  REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 0),
                              static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
  REQUIRE(waitForSegmentState(shm::socInstanceName(t.instance, 1),
                              static_cast<std::uint32_t>(shm::SegmentState::kRunning), 20000));
  REQUIRE(kill(t.masterB, SIGTERM) == 0);
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(t.masterB, timeoutMs) == 0);
  CHECK(waitFor(t.masterA, timeoutMs) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) == 0);
  CHECK(waitFor(t.clientB, timeoutMs) == 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("Sensor") << t.out("Planner"));
  CHECK(t.out("masterSocA").find("another SoC's master asked to stop the run") != std::string::npos);
  CHECK(t.shmClean());
  CHECK_FALSE(segmentPresent(shm::managerInstanceName(t.instance)));
}

TEST_CASE(
    "under a schedule manager SIGTERM to the primary while a rollover waits on a frozen client ends every "
    "SoC cleanly, naming the client",
    "[multisoc][exit][managed]") {
  // The rollover from 301 waits for 301's last iteration, which frozen Planner (SocB) never
  // finishes. The follower used to learn only that the primary ended (its stop for the aborted
  // hyperepoch said "a switch", or the frame limit), wait out -o, exit 1 blaming the link, and fail
  // its clients.
  TwoSocs t("soc_managed_roll_signal", 48);
  startManaged(t);
  std::string said;
  REQUIRE(manager(t, {"start", "301"}, &said) == 0);
  REQUIRE(awaitSchedule(t, 301, 20));
  REQUIRE(kill(t.clientB, SIGSTOP) == 0);
  usleep(50000);
  const pid_t roll = t.kids.spawn(
      {buildPath("tools/tactus-manager"), "-D", t.instance, "-N", "mgr", "-t", "15000", "rollover", "302", "301"},
      t.dir + "/roll.out");
  usleep(300000);
  const auto signalledAt = std::chrono::steady_clock::now();
  REQUIRE(kill(t.masterA, SIGTERM) == 0);
  const int timeoutMs = static_cast<int>(15000 * timeScale());
  CHECK(waitFor(t.masterA, timeoutMs) == 0);
  CHECK(waitFor(t.masterB, timeoutMs) == 0);
  const long tookMs = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - signalledAt).count());
  CHECK(waitFor(roll, timeoutMs) == 1);
  REQUIRE(kill(t.clientB, SIGCONT) == 0);
  CHECK(waitFor(t.clientA, timeoutMs) == 0);
  CHECK(waitFor(t.clientB, timeoutMs) == 0);
  INFO(t.out("masterSocA") << t.out("masterSocB") << t.out("roll") << t.out("Sensor") << t.out("Planner")
                           << "both masters ended " << tookMs << " ms after SIGTERM");
  // Each SoC's grace (SocB's from the primary's stop, sent as the primary ends): about 1 s.
  CHECK(tookMs < static_cast<long>(2000 * timeScale()));
  const std::string held = "client 'Planner' did not finish runnable 'Planner.Plan' within 500ms";
  CHECK(t.out("masterSocA").find("the master was stopped by a signal; " + held + " (on SoC 'SocB')") !=
        std::string::npos);
  CHECK(t.out("masterSocB").find("the master of the primary SoC 'SocA' was stopped by a signal; " + held) !=
        std::string::npos);
  CHECK(t.out("roll").find("the run ended during the rollover: the master was stopped by a signal; " + held) !=
        std::string::npos);
  CHECK(t.out("Sensor").find("status=stopped-by-signal") != std::string::npos);
  CHECK(t.out("Planner").find("status=stopped-by-signal") != std::string::npos);
  CHECK(t.shmClean());
  CHECK_FALSE(segmentPresent(shm::managerInstanceName(t.instance)));
}
