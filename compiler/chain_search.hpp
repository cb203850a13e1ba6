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
// It stops once every requirement is met (unless favouring) or after kChainRounds rounds.
// Deadlines only hurry runnables; a reader that reads an older writer run than it could must be
// delayed instead. So, while a chain is still over, the readers of the chains' channel hops get
// StartTimes (release offsets, which the runtime honours as it honours the graph's), searched
// depth first in chain order:
//
//   writer W (20 ms)  |W0|        |W1|        |W2|          reader R (60 ms), 2 ms
//   R at 0            |R| reads W2 of the previous iteration: age 20 ms + 2 ms
//   R at W2's end     ............................|R| reads W2: age from W2's release
//
// each reader kept where it is or started at the end of a writer run it can still follow in its
// frame (between two such StartTimes every frame reads the same versions, later only ends
// later), on the schedule made with the StartTimes chosen before it; then deadline rounds again
// from the best. Where every chain runnable and its ancestors hold their resources alone, those
// StartTimes decide every chain bound a schedule can have: the search, if it tries all of them
// within its budget without meeting the chains, proves that no schedule meets them (the note
// says so). The schedule it returns has the graph's own deadlines and the StartTimes it chose;
// its channels and chains are not analysed yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph.hpp"
#include "scheduler.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Rounds of chain-guided scheduling at most.
inline constexpr int kChainRounds = 8;

/// The StartTime search's budget in instances scheduled: it makes this many divided by the graph's
/// instances schedules at most (from 8 to 512), about a second at 5,000 runnables.
inline constexpr std::size_t kChainStartTimeWork = 40000;

/// What chain-guided scheduling did, for the report.
struct ChainSearchNote {
  int rounds = 0;                  ///< schedules made after the first
  int improvements = 0;            ///< of them kept as better
  std::int64_t overBeforeNs = 0;   ///< the first schedule's chains over their requirements, summed
  std::int64_t overAfterNs = 0;    ///< the kept schedule's
  std::int64_t sumBeforeNs = 0;    ///< the first schedule's chain bounds (reaction + age), summed
  std::int64_t sumAfterNs = 0;     ///< the kept schedule's
  bool startTimeSearched = false;  ///< the chains have readers over channels, whose StartTimes were searched
  int startTimeSchedules = 0;      ///< schedules made searching them
  std::string startTimes;   ///< the StartTimes the kept schedule gives beyond the graph's (`StartTime 42ms on 'P.R'`)
  bool impossible = false;  ///< proven: no schedule meets the chains' requirements
  /// One line for the compile report: `chain-guided scheduling: 2 rounds, chains over their
  /// requirements by 12.2ms -> 0ns, bounds 44ms -> 4.4ms in sum`, then what the StartTime search
  /// tried and kept, and whether no schedule meets the chains.
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
