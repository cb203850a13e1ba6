// tactus-check-log: checks an event log against its schedule with the test harness's checkLog
// (every instance once per iteration, after its dependencies, in timeline order, not before its
// release + StartTime), over the iterations the log completed. For scripts that run real
// programs outside the test executables (scripts/device-check.sh); never shipped.
//
//   tactus-check-log [--gpu-slack-ns N] [--gpu-drift-ppm P] SCHEDULE.tsched LOG.tlog [MIN_ITERATIONS]
//
// --gpu-slack-ns: how far an order between GPU work (its logged times are GPU stamps moved onto
// the host's clock by an offset measured once at start) and a CPU time may be off (default 0:
// exact); --gpu-drift-ppm: and, beyond that, P millionths of the time since the run started
// (the GPU's timer and CLOCK_MONOTONIC drift apart: 25 us after 9 s of a run on an H100).
// Prints `order ok: N iterations, M runs` (exit 0), or the first problem (exit 1); exit 2 on a bad
// command line or a file it cannot read. Both say how far the largest order across the two clocks
// was off.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule_file.hpp"

int main(int argc, char** argv) try {
  std::int64_t slackNs = 0, driftPpm = 0;
  while (argc >= 3 && (std::string(argv[1]) == "--gpu-slack-ns" || std::string(argv[1]) == "--gpu-drift-ppm")) {
    const bool slack = std::string(argv[1]) == "--gpu-slack-ns";
    char* end = nullptr;
    const long long value = std::strtoll(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || value < 0) {
      std::fprintf(stderr, "tactus-check-log: %s takes %s (0 or more), got '%s'\n", argv[1],
                   slack ? "nanoseconds" : "millionths", argv[2]);
      return 2;
    }
    (slack ? slackNs : driftPpm) = value;
    argv += 2;
    argc -= 2;
  }
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr,
                 "usage: tactus-check-log [--gpu-slack-ns N] [--gpu-drift-ppm P] SCHEDULE.tsched LOG.tlog "
                 "[MIN_ITERATIONS]\n");
    return 2;
  }
  const auto schedule = tactus::loadScheduleFile(argv[1]);
  if (!schedule) {
    std::fprintf(stderr, "tactus-check-log: %s\n", schedule.error().message.c_str());
    return 2;
  }
  const auto log = tactus::readEventLog(argv[2]);
  if (!log) {
    std::fprintf(stderr, "tactus-check-log: %s\n", log.error().message.c_str());
    return 2;
  }
  char* end = nullptr;
  const unsigned long long minIterations = argc == 4 ? std::strtoull(argv[3], &end, 10) : 1;
  if (argc == 4 && (end == argv[3] || *end != '\0')) {
    std::fprintf(stderr, "tactus-check-log: MIN_ITERATIONS must be a whole number, got '%s'\n", argv[3]);
    return 2;
  }
  // The iterations every instance ran in: the highest iteration of any run record, less one when
  // that last one is incomplete (a run stopped mid-iteration).
  std::uint64_t runs = 0, last = 0;
  for (const tactus::EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun)) continue;
    ++runs;
    last = std::max<std::uint64_t>(last, r.iteration);
  }
  const std::size_t perIteration = schedule->instances.size();
  std::uint64_t iterations = runs == 0 ? 0 : last + 1;
  if (iterations > 0 && runs < iterations * perIteration) --iterations;
  if (iterations < minIterations) {
    std::printf("too few iterations: the log completed %llu, at least %llu expected (%llu runs)\n",
                static_cast<unsigned long long>(iterations), minIterations, static_cast<unsigned long long>(runs));
    return 1;
  }
  // checkLog refuses records beyond its limit: keep only the complete iterations.
  tactus::EventLog complete = *log;
  std::erase_if(complete.records, [&](const tactus::EventRecord& r) {
    return r.kind == static_cast<std::uint16_t>(tactus::EventKind::kRun) && r.iteration >= iterations;
  });
  std::int64_t skewNs = 0;
  const std::string problem = tactus::test::checkLog(*schedule, complete, iterations, slackNs, &skewNs, driftPpm);
  const std::string clocks = "; largest order across the CPU and GPU clocks off by " + std::to_string(skewNs) +
                             " ns (allowed " + std::to_string(slackNs) + " ns + " + std::to_string(driftPpm) +
                             " ppm of the time since the run started)";
  if (!problem.empty()) {
    std::printf("order violated: %s%s\n", problem.c_str(), clocks.c_str());
    return 1;
  }
  std::printf("order ok: %llu iterations, %llu runs%s\n", static_cast<unsigned long long>(iterations),
              static_cast<unsigned long long>(iterations) * perIteration, clocks.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "tactus-check-log: %s\n", e.what());
  return 2;
}
