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

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "emulated_hosts.hpp"
#include "soc_run.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::bench;
using namespace tactus::test;

namespace {

// --hosts: SoC B's clock is this far ahead of SoC A's (its time namespace's monotonic offset).
constexpr std::int64_t kClockAheadNs = 5000LL * 1'000'000'000;

// --hosts: SoC B's clock estimates against the offset the harness set, and the merged run's
// dependency violations (across the SoCs beyond the estimate's bound; on one SoC, any) and
// resource overlaps (Capture and Fuse share SocA.CPU0, Plan has SocB.CPU1; one clock each). The
// exit status: 0 when there are none.
int reportAcrossHosts(const std::vector<Runs>& runs, const std::array<std::uint32_t, 3>& which, std::size_t n,
                      const std::vector<ClockEstimate>& estimates, std::int64_t bound) {
  const auto [capture, plan, fuse] = which;
  const auto [error, within] = estimateErrors(estimates, kClockAheadNs);
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

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool hostsMode = std::erase(args, std::string("--hosts")) > 0;
  if (args.size() < 2 || args.size() > 3) {
    std::fprintf(stderr, "usage: soc-run-handoff BUILD_ROOT DDS_PINGPONG [ITERATIONS] [--hosts]\n");
    return 2;
  }
  const long iterations = socRunIterations("soc-run-handoff", args.size() > 2 ? args[2].c_str() : nullptr);
  if (iterations == 0) return 2;
  SocRun soc("soc-run-handoff", "handoff", args[0], iterations, "41");
  if (!soc.compile("handoff.yaml")) return 1;
  std::optional<EmulatedHosts> hosts;
  std::vector<std::string> prefixA, prefixB;  // what each SoC's processes start under
  if (hostsMode) {
    std::string why = ::geteuid() != 0             ? "needs root (ip netns, unshare -T)"
                      : !timeNamespacesPermitted() ? "unshare -T is not permitted here"
                                                   : hosts.emplace(soc.dir(), kHosts).create();
    if (!why.empty()) {
      std::printf("soc-run-handoff --hosts: skipped: %s\n", why.c_str());
      return 77;
    }
    if (why = hosts->prefixes(prefixA, prefixB); !why.empty()) {
      std::fprintf(stderr, "soc-run-handoff: %s\n", why.c_str());
      return 1;
    }
  }
  soc.start("SocA", "Sensor", prefixA, {"-e", std::to_string(iterations)});
  // The follower takes its last iteration from the primary (its own -e would be ignored, warned).
  soc.start("SocB", "Planner", prefixB);
  if (!soc.wait()) return 1;
  std::fputs(soc.masterOutput("SocB").c_str(), stdout);  // SocB's clock-offset estimate
  auto logA = soc.log("SocA");
  auto logB = soc.log("SocB");
  if (!logA || !logB) return 1;
  // The instances of Capture, Plan and Fuse, by runnable name from the schedule file.
  auto parsed = loadScheduleFile(soc.schedule());
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
  std::vector<Runs> runs = soc.emptyRuns(3);
  std::vector<std::int64_t> releaseA(n, 0), releaseB(n, 0);
  // SoC B's clock estimates (the last moves its times, with --hosts).
  const std::vector<ClockEstimate> estimates = clockEstimates(*logB);
  const ClockEstimate last = hostsMode && !estimates.empty() ? estimates.back() : ClockEstimate{0, 0};
  collectRuns(*logA, 0, runs, &releaseA);
  collectRuns(*logB, last.first, runs, &releaseB);
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
  if (hostsMode) return reportAcrossHosts(runs, {capture, plan, fuse}, n, estimates, last.second);
  BarePingPong bare;
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

int main(int argc, char** argv) { return guardedMain("soc-run-handoff", run, argc, argv); }
