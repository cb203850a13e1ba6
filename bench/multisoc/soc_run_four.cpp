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
#include <exception>
#include <string>
#include <vector>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kSocs = 4;
const std::array<const char*, kSocs> kSocNames{"SocA", "SocB", "SocC", "SocD"};
const std::array<const char*, kSocs> kClients{"Head", "B", "C", "D"};

double percentileUs(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))]) / 1e3;
}

// One run record per iteration of one instance, on SoC A's clock.
struct Runs {
  std::vector<std::int64_t> start, end;
};

int run(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: soc-run-four BUILD_ROOT [ITERATIONS]\n");
    return 2;
  }
  const std::string build = argv[1];
  const long iterations = argc > 2 ? std::atol(argv[2]) : 10000;
  if (iterations < 100 || iterations > 1'000'000) {
    std::fprintf(stderr, "soc-run-four: ITERATIONS must be 100..1000000\n");
    return 2;
  }
  setenv("CYCLONEDDS_URI", "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml", 1);
  setenv("TACTUS_BUILD_ROOT", build.c_str(), 1);
  const bool clocksApart =
      ::geteuid() == 0 && std::system("unshare -T --monotonic 1000 true >/dev/null 2>&1") == 0;  // NOLINT
  const std::string dir = scratchDir("soc_run_four");
  const std::string instance = uniqueInstance("four");
  const std::string schedule = dir + "/four.tsched";
  ChildProcesses kids;
  const std::string graph = std::string(TACTUS_SOURCE_ROOT) + "/bench/multisoc/four_soc.yaml";
  if (waitFor(kids.spawn({build + "/compiler/tactus-compile", "-i", graph, "-o", schedule}, dir + "/compile.out"),
              60000) != 0) {
    std::fprintf(stderr, "soc-run-four: the graph does not compile:\n%s", readFile(dir + "/compile.out").c_str());
    return 1;
  }
  std::vector<pid_t> pids;
  setenv("TACTUS_INSTANCE", instance.c_str(), 1);
  for (int k = 0; k < kSocs; ++k) {
    std::vector<std::string> prefix;
    if (clocksApart && k > 0) prefix = {"/usr/bin/unshare", "-T", "--monotonic", std::to_string(1000 * k)};
    std::vector<std::string> master = prefix;
    for (const std::string& a :
         {build + "/master/tactus-master", std::string("-s"), schedule, std::string("-x"), std::string(kSocNames[k]),
          std::string("-D"), instance, std::string("-l"), dir + "/" + kSocNames[k] + ".log",
          std::string("--dds-domain"), std::string("42"), std::string("-a"), std::string("60")})
      master.push_back(a);
    if (k == 0) master.insert(master.end(), {"-e", std::to_string(iterations)});
    pids.push_back(kids.spawn(master, dir + "/master" + kSocNames[k] + ".out"));
    std::vector<std::string> client = prefix;
    client.insert(client.end(), {build + "/tests/runtime/tactus-test-client", "--name", kClients[k]});
    pids.push_back(kids.spawn(client, dir + "/client" + kSocNames[k] + ".out"));
  }
  const int limitMs = static_cast<int>(iterations) * 20 + 60000;
  for (std::size_t p = 0; p < pids.size(); ++p) {
    if (waitFor(pids[p], limitMs) != 0) {
      std::fprintf(stderr, "soc-run-four: the run failed (%s of %s):\n", p % 2 == 0 ? "master" : "client",
                   kSocNames[p / 2]);
      for (const char* soc : kSocNames) std::fputs(readFile(dir + "/master" + soc + ".out").c_str(), stderr);
      return 1;
    }
  }
  auto text = readRegularFile(schedule, "schedule file", kMaxScheduleFileBytes);
  auto parsed = text ? readSchedule(*text, schedule) : Result<Schedule>(text.error());
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
  std::vector<Runs> runs(parsed->instances.size(),
                         Runs{std::vector<std::int64_t>(n, 0), std::vector<std::int64_t>(n, 0)});
  std::array<std::int64_t, kSocs> bound{};
  std::printf("four SoCs in a ring (four masters, loopback DDS, %s, 5 ms period), %ld iterations\n",
              clocksApart ? "SoC k's clock k * 1000 s ahead (time namespaces)" : "one clock", iterations);
  for (int k = 0; k < kSocs; ++k) {
    auto log = readEventLog(dir + "/" + kSocNames[k] + ".log");
    if (!log) {
      std::fprintf(stderr, "soc-run-four: the log of %s is unreadable\n", kSocNames[k]);
      return 1;
    }
    std::int64_t offset = 0;
    std::vector<std::int64_t> error;
    std::size_t within = 0;
    const std::int64_t set = clocksApart ? 1000LL * k * 1'000'000'000 : 0;
    for (const EventRecord& r : log->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kClockOffset) || k == 0) continue;
      offset = clocksApart ? r.startNs : 0;
      bound[k] = r.endNs;
      error.push_back(std::llabs(r.startNs - set));
      if (error.back() <= r.endNs) ++within;
    }
    if (k > 0) {
      std::printf(
          "  %s clock estimate: %zu recorded; error against the offset set: p50 %.1f us  max %.1f us; within "
          "its bound %zu of %zu; last bound %.1f us\n",
          kSocNames[k], error.size(), percentileUs(error, 0.5), percentileUs(error, 1.0), within, error.size(),
          static_cast<double>(bound[k]) / 1e3);
    }
    for (const EventRecord& r : log->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.iteration >= n ||
          r.instance >= parsed->instances.size())
        continue;
      runs[r.instance].start[r.iteration] = r.startNs - offset;
      runs[r.instance].end[r.iteration] = r.endNs - offset;
    }
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
  std::fputs(readFile(dir + "/masterSocA.out").c_str(), stdout);
  return violations == 0 && missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soc-run-four: %s\n", e.what());
    return 1;
  }
}
