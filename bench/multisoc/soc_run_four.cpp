// Four SoCs in one run: four tactus-masters (SocA primary, SocB, SocC, SocD) of
// bench/multisoc/four_soc.yaml over loopback DDS, each with its client (tactus-test-client), N
// iterations of a 5 ms period whose dependencies go round the ring A -> B -> C -> D -> A once per
// iteration. As root, where time namespaces may be made, SoC k's master and client run on a clock
// k * 1000 s ahead of SoC A's (`unshare -T`): each follower's times move onto SoC A's clock by
// its master's last recorded estimate. From the four logs:
//   - each hop's hand-off (a runnable's end on one SoC to its successor's start on the next), p50/p99;
//   - each follower's clock estimates against the offset set (error p50, max; within its bound);
//   - dependency violations beyond the bounds, iterations missing a run (both must be 0).
//
//   soc-run-four BUILD_ROOT [ITERATIONS]   (default 10000)
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "soc_run.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::bench;

namespace {

constexpr int kSocs = 4;
const std::array<const char*, kSocs> kSocNames{"SocA", "SocB", "SocC", "SocD"};
const std::array<const char*, kSocs> kClients{"Head", "B", "C", "D"};

int run(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: soc-run-four BUILD_ROOT [ITERATIONS]\n");
    return 2;
  }
  const long iterations = socRunIterations("soc-run-four", argc > 2 ? argv[2] : nullptr);
  if (iterations == 0) return 2;
  const bool clocksApart =
      ::geteuid() == 0 && std::system("unshare -T --monotonic 1000 true >/dev/null 2>&1") == 0;  // NOLINT
  SocRun soc("soc-run-four", "four", argv[1], iterations, "42");
  if (!soc.compile("four_soc.yaml")) return 1;
  for (int k = 0; k < kSocs; ++k) {
    std::vector<std::string> prefix, extra;
    if (clocksApart && k > 0) prefix = {"/usr/bin/unshare", "-T", "--monotonic", std::to_string(1000 * k)};
    if (k == 0) extra = {"-e", std::to_string(iterations)};
    soc.start(kSocNames[k], kClients[k], prefix, extra);
  }
  if (!soc.wait()) return 1;
  auto parsed = loadScheduleFile(soc.schedule());
  if (!parsed) {
    std::fprintf(stderr, "soc-run-four: %s\n", parsed.error().message.c_str());
    return 1;
  }
  // The ring's instances in order: Capture (A), Stage (B), Stage (C), Stage (D), Fuse (A).
  std::array<std::uint32_t, kSocs + 1> ring{};
  for (InstanceId i : parsed->instances.ids()) {
    const RunnableInfo& r = parsed->runnables[parsed->instances[i].runnable];
    const std::string& client = parsed->clients[r.client].name;
    const std::size_t at =
        r.name == "Capture" ? 0
        : r.name == "Fuse"
            ? kSocs
            : static_cast<std::size_t>(std::find(kClients.begin(), kClients.end(), client) - kClients.begin());
    ring[at] = index(i);
  }
  const auto n = static_cast<std::size_t>(iterations);
  std::vector<Runs> runs = soc.emptyRuns(parsed->instances.size());
  std::array<std::int64_t, kSocs> bound{};
  std::printf("four SoCs in a ring (four masters, loopback DDS, %s, 5 ms period), %ld iterations\n",
              clocksApart ? "SoC k's clock k * 1000 s ahead (time namespaces)" : "one clock", iterations);
  for (int k = 0; k < kSocs; ++k) {
    auto log = soc.log(kSocNames[k]);
    if (!log) return 1;
    std::int64_t offset = 0;
    if (k > 0) {
      const std::vector<ClockEstimate> estimates = clockEstimates(*log);
      const auto [error, within] = estimateErrors(estimates, clocksApart ? 1000LL * k * 1'000'000'000 : 0);
      if (!estimates.empty()) {
        offset = clocksApart ? estimates.back().first : 0;
        bound[k] = estimates.back().second;
      }
      std::printf(
          "  %s clock estimate: %zu recorded; error against the offset set: p50 %.1f us  max %.1f us; within "
          "its bound %zu of %zu; last bound %.1f us\n",
          kSocNames[k], error.size(), percentileUs(error, 0.5), percentileUs(error, 1.0), within, error.size(),
          static_cast<double>(bound[k]) / 1e3);
    }
    collectRuns(*log, offset, runs);
  }
  std::size_t violations = 0, missing = 0;
  const std::size_t warmup = n / 100;
  for (int hop = 0; hop < kSocs; ++hop) {
    const Runs& from = runs[ring[hop]];
    const Runs& to = runs[ring[hop + 1]];
    // The tolerance of the hop: the bounds of the two SoCs' estimates (SoC A's is exact).
    const std::int64_t tolerance = bound[hop % kSocs] + bound[(hop + 1) % kSocs];
    std::vector<std::int64_t> handoff;
    for (std::size_t h = 0; h < n; ++h) {
      if (from.end[h] == 0 || to.start[h] == 0) {
        ++missing;
        continue;
      }
      if (to.start[h] < from.end[h] - tolerance) ++violations;
      if (h >= warmup) handoff.push_back(to.start[h] - from.end[h]);
    }
    std::printf("  hand-off %s -> %s: p50 %.1f us  p99 %.1f us  (%zu)\n", kSocNames[hop], kSocNames[(hop + 1) % kSocs],
                percentileUs(handoff, 0.5), percentileUs(handoff, 0.99), handoff.size());
  }
  std::printf("  merged run: %zu dependency violations beyond the bounds, %zu hops missing a run\n", violations,
              missing);
  std::fputs(soc.masterOutput("SocA").c_str(), stdout);
  return violations == 0 && missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return guardedMain("soc-run-four", run, argc, argv); }
