// Synthetic schedules and simulated runs: event logs with known structure for tests, benchmarks
// and demonstrations of tactus-report, without starting a master or clients.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::report {

/// Shape of a synthetic schedule: one hyperepoch with one epoch, layered chains over CPU cores.
struct SyntheticShape {
  std::uint32_t runnables = 100;  ///< runnables of the epoch
  std::uint32_t clients = 2;      ///< runnable r belongs to client r % clients
  std::uint32_t cpus = 4;         ///< runnable r runs on CPU r % cpus
  std::uint32_t frames = 1;       ///< frames of the epoch per hyperepoch iteration
};

/// Builds a verified schedule of that shape (list-scheduled in id order; WCETs 10..99 us).
Schedule makeSyntheticSchedule(const SyntheticShape& shape);

/// How a simulated run behaves.
struct SimulationOptions {
  std::uint64_t iterations = 10;    ///< hyperepoch iterations per hyperepoch
  std::uint64_t seed = 1;           ///< random seed (same seed, same log)
  double minFraction = 0.5;         ///< a run takes WCET x U(minFraction, 1) ...
  double overrunProbability = 0.0;  ///< ... or, with this probability, WCET x overrunFactor
  double overrunFactor = 1.5;
  std::int64_t runStartNs = 1'000'000'000;  ///< CLOCK_MONOTONIC time of the first release
};

/// Simulates a run honouring the schedule's order (resources, dependencies, StartTime, releases):
/// kRelease records for every frame and a kRun record for every instance of every iteration.
std::vector<EventRecord> simulateRun(const Schedule& schedule, const SimulationOptions& options);

/// Simulates a run and writes it as an event log of this schedule (content hash in the header).
Result<void> writeSimulatedLog(const std::string& path, const Schedule& schedule, const SimulationOptions& options);

}  // namespace tactus::report
