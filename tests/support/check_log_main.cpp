// tactus-check-log: checks an event log against its schedule with the test harness's checkLog
// (every instance once per iteration, after its dependencies, in timeline order, not before its
// release + StartTime), over the iterations the log completed. For scripts that run real
// programs outside the test executables (scripts/device-check.sh); never shipped.
//
//   tactus-check-log SCHEDULE.tsched LOG.tlog [MIN_ITERATIONS]
//
// Prints `order ok: N iterations, M runs` (exit 0), or the first problem (exit 1); exit 2 on a bad
// command line or a file it cannot read.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule_file.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: tactus-check-log SCHEDULE.tsched LOG.tlog [MIN_ITERATIONS]\n");
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
  const std::string problem = tactus::test::checkLog(*schedule, complete, iterations);
  if (!problem.empty()) {
    std::printf("order violated: %s\n", problem.c_str());
    return 1;
  }
  std::printf("order ok: %llu iterations, %llu runs\n", static_cast<unsigned long long>(iterations),
              static_cast<unsigned long long>(iterations * perIteration));
  return 0;
}
