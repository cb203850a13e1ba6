// The cross-SoC hand-off of a real run: two tactus-masters (SocA primary, SocB) of
// bench/multisoc/handoff.yaml on this machine over loopback DDS, each with its client
// (tactus-test-client), N iterations of a 1 ms period. From both masters' event logs:
//   - hand-off: the end of Sensor.Capture on SocA to the start of Planner.Plan on SocB, and the end
//     of Plan to the start of Sensor.Fuse on SocA (worker end -> master's exporter -> DDS -> the
//     other master's receiver -> completion word -> waiting worker), p50/p99;
//   - frame-release skew: SocB's release of each iteration minus SocA's (the same host's clock);
// then the bare Cyclone DDS ping-pong of the same run (dds-pingpong, back to back and paced at the
// run's 1 ms period, received by a waitset and by a listener) and the ratios (the target's against
// the paced one-way latency received by a listener, the strictest).
//
//   soc-run-handoff BUILD_ROOT DDS_PINGPONG [ITERATIONS] [--hosts]   (default 10000)
//
// --hosts (root; exit 77 where not permitted): the two SoCs on emulated hosts, each master and
// client in a network namespace of its own (one veth pair between, 10.79.0.1/2, Cyclone DDS with
// multicast off and the other side its only peer) and SoC B on a clock 5000 s ahead (a time
// namespace): SoC B's times move onto SoC A's clock by its master's last recorded estimate, and
// the benchmark prints the estimate's error over the run (every estimate SoC B's log recorded,
// against the 5000 s the harness set), its bound, and the dependency violations and resource
// overlaps of the merged run once that bound is allowed for (must be 0). The bare ping-pong
// (loopback) is not run then.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "emulated_hosts.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

double percentileUs(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))]) / 1e3;
}

// The bare ping-pong's figures (us): back to back (round trip / 2) and paced like the run (one
// ping per period, each way from the writer's stamp to the take).
struct Bare {
  double p50 = 0, p99 = 0;            // back to back
  double pacedP50 = 0, pacedP99 = 0;  // paced, received by a waitset and take
  double heardP50 = 0, heardP99 = 0;  // paced, received by a listener
};

// Runs dds-pingpong paced at the run's period and reads its figures from its output.
bool barePingPong(const std::string& program, long iterations, long periodUs, Bare& bare) {
  const std::string cmd = program + " " + std::to_string(iterations) + " --period-us " + std::to_string(periodUs);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  char line[256];
  int found = 0;
  while (std::fgets(line, sizeof line, p) != nullptr) {
    std::fputs(line, stdout);
    long period = 0;
    if (std::sscanf(line, " one way (round trip / 2): p50 %lf us p99 %lf us", &bare.p50, &bare.p99) == 2) ++found;
    if (std::sscanf(line, " one way, paced (%ld us period, write stamp to take, both ways): p50 %lf us p99 %lf us",
                    &period, &bare.pacedP50, &bare.pacedP99) == 3)
      ++found;
    if (std::sscanf(line,
                    " one way, paced, listener (%ld us period, write stamp to the listener's call, both ways): p50 %lf "
                    "us p99 %lf us",
                    &period, &bare.heardP50, &bare.heardP99) == 3)
      ++found;
  }
  return pclose(p) == 0 && found == 3;
}

// --hosts: SoC B's clock is this far ahead of SoC A's (its time namespace's monotonic offset).
constexpr std::int64_t kClockAheadNs = 5000LL * 1'000'000'000;

// Per iteration: the run records of instance `i` (start, end) and the release of each master.
struct Runs {
  std::vector<std::int64_t> start, end;
};

// --hosts: SoC B's clock estimates against the offset the harness set, and the merged run's
// dependency violations (across the SoCs beyond the estimate's bound; on one SoC, any) and
// resource overlaps (Capture and Fuse share SocA.CPU0, Plan has SocB.CPU1; one clock each). The
// exit status: 0 when there are none.
int reportAcrossHosts(const std::vector<Runs>& runs, const std::array<std::uint32_t, 3>& which, std::size_t n,
                      const std::vector<std::pair<std::int64_t, std::int64_t>>& estimates, std::int64_t bound) {
  const auto [capture, plan, fuse] = which;
  std::vector<std::int64_t> error;
  std::size_t within = 0;
  for (const auto& [e, b] : estimates) {
    error.push_back(std::llabs(e - kClockAheadNs));
    if (error.back() <= b) ++within;
  }
  std::printf(
      "  SoC B's clock offset estimate: %zu recorded; error against the 5000 s set: p50 %.1f us  max %.1f us; "
      "within its stated bound: %zu of %zu; last bound %.1f us\n",
      estimates.size(), percentileUs(error, 0.5), percentileUs(error, 1.0), within, estimates.size(),
      static_cast<double>(bound) / 1e3);
  std::size_t violations = 0, overlaps = 0, missing = 0;
  for (std::size_t h = 0; h < n; ++h) {
    const Runs &c = runs[capture], &p = runs[plan], &f = runs[fuse];
    if (c.end[h] == 0 || p.start[h] == 0 || f.start[h] == 0) {
      ++missing;
      continue;
    }
    if (p.start[h] < c.end[h] - bound) ++violations;                                // across: Capture (A) -> Plan (B)
    if (f.start[h] < p.end[h] - bound) ++violations;                                // across: Plan (B) -> Fuse (A)
    if (h + 1 < n && c.start[h + 1] != 0 && c.start[h + 1] < f.end[h]) ++overlaps;  // SocA.CPU0
    if (h + 1 < n && p.start[h + 1] != 0 && p.start[h + 1] < p.end[h]) ++overlaps;  // SocB.CPU1
  }
  std::printf(
      "  merged run, SoC B's times moved by its last estimate: %zu dependency violations beyond the bound, "
      "%zu resource overlaps, %zu iterations missing a run\n",
      violations, overlaps, missing);
  return violations == 0 && overlaps == 0 && missing == 0 && !estimates.empty() ? 0 : 1;
}

// --hosts: the emulated hosts (the multi-SoC test's are 10.77.0.x).
const EmulatedHostsLayout kHosts{"tactusHA", "tactusHB", "hA", "hB", "10.79.0"};

// `argv` with `prefix` before it.
std::vector<std::string> under(const std::vector<std::string>& prefix, std::vector<std::string> argv) {
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  return argv;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool hostsMode = std::erase(args, std::string("--hosts")) > 0;
  if (args.size() < 2 || args.size() > 3) {
    std::fprintf(stderr, "usage: soc-run-handoff BUILD_ROOT DDS_PINGPONG [ITERATIONS] [--hosts]\n");
    return 2;
  }
  const std::string build = args[0];
  const long iterations = args.size() > 2 ? std::atol(args[2].c_str()) : 10000;
  if (iterations < 100 || iterations > 1'000'000) {
    std::fprintf(stderr, "soc-run-handoff: ITERATIONS must be 100..1000000\n");
    return 2;
  }
  setenv("CYCLONEDDS_URI", "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml", 1);
  setenv("TACTUS_BUILD_ROOT", build.c_str(), 1);
  const std::string dir = scratchDir("soc_run_handoff");
  const std::string instance = uniqueInstance("handoff");
  const std::string schedule = dir + "/handoff.tsched";
  ChildProcesses kids;
  const std::string graph = std::string(TACTUS_SOURCE_ROOT) + "/bench/multisoc/handoff.yaml";
  if (waitFor(kids.spawn({build + "/compiler/tactus-compile", "-i", graph, "-o", schedule}, dir + "/compile.out"),
              60000) != 0) {
    std::fprintf(stderr, "soc-run-handoff: the graph does not compile:\n%s", readFile(dir + "/compile.out").c_str());
    return 1;
  }
  std::optional<EmulatedHosts> hosts;
  std::vector<std::string> prefixA, prefixB;  // what each SoC's processes start under
  if (hostsMode) {
    std::string why = ::geteuid() != 0             ? "needs root (ip netns, unshare -T)"
                      : !timeNamespacesPermitted() ? "unshare -T is not permitted here"
                                                   : hosts.emplace(dir, kHosts).create();
    if (!why.empty()) {
      std::printf("soc-run-handoff --hosts: skipped: %s\n", why.c_str());
      return 77;
    }
    if (why = hosts->prefixes(prefixA, prefixB); !why.empty()) {
      std::fprintf(stderr, "soc-run-handoff: %s\n", why.c_str());
      return 1;
    }
  }
  const std::string e = std::to_string(iterations);
  const pid_t a =
      kids.spawn(under(prefixA, {build + "/master/tactus-master", "-s", schedule, "-x", "SocA", "-D", instance, "-e", e,
                                 "-l", dir + "/a.log", "--dds-domain", "41", "-a", "60"}),
                 dir + "/a.out");
  // The follower takes its last iteration from the primary (its own -e would be ignored, warned).
  const pid_t b = kids.spawn(under(prefixB, {build + "/master/tactus-master", "-s", schedule, "-x", "SocB", "-D",
                                             instance, "-l", dir + "/b.log", "--dds-domain", "41", "-a", "60"}),
                             dir + "/b.out");
  setenv("TACTUS_INSTANCE", instance.c_str(), 1);
  const pid_t ca =
      kids.spawn(under(prefixA, {build + "/tests/runtime/tactus-test-client", "--name", "Sensor"}), dir + "/ca.out");
  const pid_t cb =
      kids.spawn(under(prefixB, {build + "/tests/runtime/tactus-test-client", "--name", "Planner"}), dir + "/cb.out");
  const int limitMs = static_cast<int>(iterations) * 20 + 60000;
  const int codes[] = {waitFor(a, limitMs), waitFor(b, limitMs), waitFor(ca, limitMs), waitFor(cb, limitMs)};
  for (const int code : codes) {
    if (code != 0) {
      std::fprintf(stderr, "soc-run-handoff: the run failed:\n%s%s", readFile(dir + "/a.out").c_str(),
                   readFile(dir + "/b.out").c_str());
      return 1;
    }
  }
  std::fputs(readFile(dir + "/b.out").c_str(), stdout);  // SocB's clock-offset estimate
  auto logA = readEventLog(dir + "/a.log");
  auto logB = readEventLog(dir + "/b.log");
  if (!logA || !logB) {
    std::fprintf(stderr, "soc-run-handoff: a log is unreadable\n");
    return 1;
  }
  // The instances of Capture, Plan and Fuse, by runnable name from the schedule file.
  auto text = readRegularFile(schedule, "schedule file", kMaxScheduleFileBytes);
  auto parsed = text ? readSchedule(*text, schedule) : Result<Schedule>(text.error());
  if (!parsed) {
    std::fprintf(stderr, "soc-run-handoff: %s\n", parsed.error().message.c_str());
    return 1;
  }
  std::uint32_t capture = 0, plan = 0, fuse = 0;
  for (InstanceId i : parsed->instances.ids()) {
    const std::string& name = parsed->runnables[parsed->instances[i].runnable].name;
    (name == "Capture" ? capture : name == "Plan" ? plan : fuse) = index(i);
  }
  const auto n = static_cast<std::size_t>(iterations);
  std::vector<Runs> runs(3, Runs{std::vector<std::int64_t>(n, 0), std::vector<std::int64_t>(n, 0)});
  std::vector<std::int64_t> releaseA(n, 0), releaseB(n, 0);
  // SoC B's clock estimates (each a kClockOffset record of its log; the last moves its times).
  std::vector<std::pair<std::int64_t, std::int64_t>> estimates;  // estimate, its bound
  std::int64_t offsetB = 0, boundB = 0;
  for (const EventRecord& r : logB->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kClockOffset)) continue;
    estimates.emplace_back(r.startNs, r.endNs);
    offsetB = hostsMode ? r.startNs : 0;
    boundB = hostsMode ? r.endNs : 0;
  }
  for (const auto* log : {&*logA, &*logB}) {
    const std::int64_t shift = log == &*logB ? offsetB : 0;
    for (const EventRecord& r : log->records) {
      if (r.iteration >= n) continue;
      if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) {
        (log == &*logA ? releaseA : releaseB)[r.iteration] = r.endNs - shift;  // the actual release time
      } else if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.instance < 3) {
        runs[r.instance].start[r.iteration] = r.startNs - shift;
        runs[r.instance].end[r.iteration] = r.endNs - shift;
      }
    }
  }
  std::vector<std::int64_t> aToB, bToA, skew;
  const std::size_t warmup = n / 100;
  for (std::size_t h = warmup; h < n; ++h) {
    // Capture (A) -> Plan (B) -> Fuse (A).
    if (runs[capture].end[h] != 0 && runs[plan].start[h] != 0)
      aToB.push_back(runs[plan].start[h] - runs[capture].end[h]);
    if (runs[plan].end[h] != 0 && runs[fuse].start[h] != 0) bToA.push_back(runs[fuse].start[h] - runs[plan].end[h]);
    if (releaseA[h] != 0 && releaseB[h] != 0) skew.push_back(releaseB[h] - releaseA[h]);
  }
  std::printf(
      "multi-SoC run (two masters, %s, 1 ms period), %ld iterations (%zu warm-up left out)\n",
      hostsMode ? "two emulated hosts: network namespaces, a veth link, SoC B's clock 5000 s ahead" : "loopback DDS",
      iterations, warmup);
  std::printf("  hand-off SocA end -> SocB start: p50 %.1f us  p99 %.1f us  (%zu)\n", percentileUs(aToB, 0.5),
              percentileUs(aToB, 0.99), aToB.size());
  std::printf("  hand-off SocB end -> SocA start: p50 %.1f us  p99 %.1f us  (%zu)\n", percentileUs(bToA, 0.5),
              percentileUs(bToA, 0.99), bToA.size());
  std::printf("  frame-release skew SocB - SocA:  p50 %.1f us  p99 %.1f us\n", percentileUs(skew, 0.5),
              percentileUs(skew, 0.99));
  if (hostsMode) return reportAcrossHosts(runs, {capture, plan, fuse}, n, estimates, boundB);
  Bare bare;
  if (!barePingPong(args[1], iterations, 1000, bare)) {
    std::fprintf(stderr, "soc-run-handoff: the bare ping-pong failed\n");
    return 1;
  }
  // The target's yardstick is the strictest: paced like the run (1 ms), timed like the hand-off (a
  // stamp on one side to a stamp on the other, one clock), and received as tactus-master receives
  // ends (a listener on Cyclone's thread). The waitset-received one is a plain application's; the
  // back-to-back round trip / 2 keeps both processes hot and halves one way's tail by averaging
  // two. Both printed for comparison.
  const double a50 = percentileUs(aToB, 0.5), a99 = percentileUs(aToB, 0.99);
  const double p50 = a50 / bare.heardP50, p99 = a99 / bare.heardP99;
  std::printf(
      "ratio hand-off (SocA -> SocB) / bare DDS one way, paced, listener: p50 %.2fx  p99 %.2fx (target <= 1.5x: %s)\n",
      p50, p99, p50 <= 1.5 && p99 <= 1.5 ? "met" : "missed");
  std::printf("ratio hand-off (SocA -> SocB) / bare DDS one way, paced, waitset: p50 %.2fx  p99 %.2fx\n",
              a50 / bare.pacedP50, a99 / bare.pacedP99);
  std::printf("ratio hand-off (SocA -> SocB) / bare DDS round trip / 2, back to back: p50 %.2fx  p99 %.2fx\n",
              a50 / bare.p50, a99 / bare.p99);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soc-run-handoff: %s\n", e.what());
    return 1;
  }
}
