// Chain-guided scheduling (tactus extension): when a chain misses its MaxReaction or MaxAge on
// the first schedule (or, with --favour-chains, to shorten every chain), the scheduler runs again
// with the runnable that costs a chain most made more urgent, round after round:
//
//   round k: bounds of every chain on the best schedule so far
//            -> for each chain to shorten, its costliest runnable on the worst path gets a
//               deadline (only for the scheduler) of its planned end within its frame minus
//               what the chain is over (or half of its waiting, favouring)
//            -> list scheduling and search again with those deadlines (the graph's own stay)
//            -> kept if it fits as well as before (no more boundary or real deadline misses, not
//               longer than the period) and its chains are over their requirements by less (or,
//               all met, shorter in sum)
//
// It stops once every requirement is met (unless favouring) or after kChainRounds rounds. The
// schedule it returns has the graph's own deadlines; its channels and chains are not analysed yet.
#pragma once

#include <cstdint>
#include <string>

#include "graph.hpp"
#include "scheduler.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Rounds of chain-guided scheduling at most.
inline constexpr int kChainRounds = 8;

/// What chain-guided scheduling did, for the report.
struct ChainSearchNote {
  int rounds = 0;                 ///< schedules made after the first
  int improvements = 0;           ///< of them kept as better
  std::int64_t overBeforeNs = 0;  ///< the first schedule's chains over their requirements, summed
  std::int64_t overAfterNs = 0;   ///< the kept schedule's
  std::int64_t sumBeforeNs = 0;   ///< the first schedule's chain bounds (reaction + age), summed
  std::int64_t sumAfterNs = 0;    ///< the kept schedule's
  /// One line for the compile report: `chain-guided scheduling: 2 rounds, chains over their
  /// requirements by 12.2ms -> 0ns, bounds 44ms -> 4.4ms in sum`.
  std::string text() const;
};

/// Whether `schedule` (made from `graph`) has a chain over its requirement, or, with `favour`,
/// any chain at all: then chainGuidedSchedule has something to do.
bool chainsToShorten(const Graph& graph, const Schedule& schedule, std::int64_t hopAllowanceNs, bool favour);

/// Reschedules `graph` guided by its chains, starting from `first` (scheduleGraph's schedule of
/// it with `options`); returns the best schedule found (`first` when none is better) and says
/// what it did in `note`.
Schedule chainGuidedSchedule(const Graph& graph, const ScheduleOptions& options, std::int64_t hopAllowanceNs,
                             bool favour, Schedule first, ChainSearchNote& note);

}  // namespace tactus::compiler
