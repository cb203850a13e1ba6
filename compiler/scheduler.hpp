// The scheduler: turns a checked Graph into a static Schedule (list scheduling per hyperepoch).
//
// Each hyperepoch is scheduled on its own (hyperepochs share no resources). Every epoch's frames
// are unrolled over the hyperepoch period, one instance per (runnable, frame), and the instances
// are placed by a priority list scheduler with insertion into idle gaps:
//
//   ready instances --(most urgent first)--> earliest start on every requested resource
//   CPU0 |A f0|    |C f0|          priority: latest start time (ALAP), which for an epoch
//   CPU1 |B f0|D f0|  gap  |A f1|  without deadlines is the b-level (critical path) order
//
// A few priority rules are tried and the best schedule per hyperepoch is kept; the result is
// deterministic (same graph, same schedule). With a budget, a branch and bound (or, for large
// hyperepochs, iterated list scheduling with perturbed priorities) improves on it.
//
// Lower bounds (the report's lower_bound_ns is the best): critical path with StartTimes;
// static heads and tails strengthened by the work of ancestors / descendants confined to a
// candidate set of m resources (they need ceil(work / m) after the earliest of them starts);
// per candidate set the load with release dates and tails, where resources still busy enter
// by a water level (the unplaced work fills the resources from when each is free); at the
// root, energetic reasoning over intervals [t1, t2) for m identical resources, bisected on the
// length; at inner nodes with few instances left, the same reasoning against the incumbent
// (windows from the current earliest starts, busy resources as fixed work); and the best
// length once the whole tree is exhausted. All are rounded up to the gcd
// of WCETs and releases (left-shifted schedules start and end on that grain).
//
// The pieces live under schedule/, each with its own header and unit tests: free_time (idle
// gaps), problem (one hyperepoch's instances and levels), list_scheduler, bounds (shared with
// the report), search_problem and search_state (the branch and bound's view and state),
// branch_and_bound, perturbed_search, fusion, workers; scheduler.cpp composes them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// When runnable fusion runs (`-wt`, `-nrf`).
///
/// Fusion, as STM does it: a chain of short CPU runnables (each link a -> b where b is a's only
/// successor and a is b's only predecessor, one client and epoch, the same resource requests,
/// both WCETs below the threshold, no StartTime on b, no Deadline on a, no submitter, submittee
/// or round-robin group) becomes one scheduling unit with the chain's summed WCET; after
/// scheduling it is split back into consecutive instances on the same resources, so the
/// schedule lists the original runnables. It shrinks the problem, but it forbids schedules that
/// run something between two links or put them on different cores, and so can lose the
/// optimum (the fusion test shows a 900us fused optimum where 800us exists). Measured with
/// stg-bench --steps 100000 (reproducible) on the STG 50-task set with every task below the
/// threshold (--wt 11; 29 of 180 graphs have fusible links, 63 links in all): fusion saved
/// up to a fifth of the search time at P = 2 but lost an optimum at P = 8 (158 -> 157 of 180)
/// and gained none; at budget 0 it lost one optimum at each of P = 2, 4, 8. On the generated
/// 5,000-runnable graph (WCETs 10-400us) the first schedule changed by about 1us in 679ms. Hence
/// kAuto: fuse only hyperepochs beyond the exact search's size (more than 400 instances),
/// where the search is heuristic anyway and fewer units mean more perturbed runs per second;
/// give `-wt` to fuse everywhere. With fusion the reported lower bound is the unfused
/// problem's, never the fused one's, so a fused schedule is called optimal only when it
/// meets a bound that holds for every schedule.
enum class Fusion {
  kAuto,  ///< default: fuse hyperepochs of more than 400 instances (beyond the exact search)
  kOn,    ///< `-wt`: fuse every hyperepoch
  kOff,   ///< `-nrf`: never fuse
};

/// How the scheduler searches.
struct ScheduleOptions {
  /// Seconds of search per hyperepoch beyond the first schedules (`-t`). 0 = keep the first
  /// schedules found by the list scheduler's priority rules (unless searchSteps is set). A
  /// wall-clock budget may give different (always valid) schedules from run to run.
  double timeBudgetSeconds = 0;
  /// Search steps per hyperepoch (`--search-steps`, one step = one instance placed); 0 = no
  /// step limit. With steps and no time budget the result is reproducible for any `workers`.
  std::uint64_t searchSteps = 0;
  /// Parallel search workers (`-j`). The search is split into pieces and rounds that do not
  /// depend on it, so a step budget gives the same schedule for every worker count.
  int workers = 1;
  /// Accept a hyperepoch whose schedule is longer than its period (the verifier warns).
  bool allowOverlength = false;
  /// When chains of short CPU runnables are fused before scheduling (see Fusion).
  Fusion fusion = Fusion::kAuto;
  /// Fusion threshold (`-wt`): both runnables of a link have a WCET strictly below it.
  std::int64_t fusionThresholdNs = 500000;
  /// Client grouping (schedule/grouping.hpp): a client's instances on a core moved together
  /// where the schedule stays as good, so a core switches between processes less often.
  /// `--no-grouping` turns it off.
  bool groupClients = true;
  /// Called during a search after each round: the hyperepoch searched, seconds since its search
  /// started, best length, lower bound, steps. Empty: nothing (tactus-compile prints it).
  std::function<void(const std::string& hyperepoch, double seconds, std::int64_t bestNs, std::int64_t lowerBoundNs,
                     std::uint64_t steps)>
      progress;
};

/// What the search did for one hyperepoch.
struct HyperepochSearchInfo {
  bool searched = false;           ///< a budget was given and the search ran
  std::int64_t firstLengthNs = 0;  ///< length of the best first (list) schedule
  /// A lower bound on the length of every valid schedule of the hyperepoch that the search
  /// established (0 = none): its root bound, or the best length once the whole tree was
  /// explored without deadlines shaping it.
  std::int64_t lowerBoundNs = 0;
  std::uint64_t steps = 0;   ///< search steps spent
  bool exhausted = false;    ///< nothing better exists in the search space
  double secondsToBest = 0;  ///< wall time from the search's start to its best schedule (0: the first)
  /// Hand-offs between two clients on one CPU core, before and after client grouping.
  std::uint64_t clientSwitchesBefore = 0;
  std::uint64_t clientSwitchesAfter = 0;
};

/// What the search did, per hyperepoch (index = hyperepoch index).
struct SearchInfo {
  IdVector<HyperepochId, HyperepochSearchInfo> hyperepochs;
};

/// A schedule made for a graph that does not fit, and the first thing that does not fit.
struct UnfitSchedule {
  Schedule schedule;          ///< every hyperepoch scheduled, as it came out
  HyperepochId hyperepoch{};  ///< the first hyperepoch that does not fit
  /// kNone: its schedule is longer than its period; else this epoch's `frame` ends after the
  /// release of the epoch's next frame.
  EpochId epoch = kNone;
  std::uint32_t frame = 0;
};

/// Schedules every hyperepoch of a checked graph; with a budget in `options`, searches for a
/// better schedule (fewer boundary misses, fits the period, fewer deadline misses, shorter, in
/// that order) by branch and bound, and fills `info` when given. Errors: kInfeasible when a
/// hyperepoch's schedule is longer than its period (unless allowOverlength) or a frame ends
/// after its epoch's next frame is released; kBadParameter for a graph whose indices or
/// durations are out of range. The result is not verified here: callers run verifySchedule on it.
/// With `unfit`, a graph whose only fault is that a hyperepoch does not fit (kInfeasible) is
/// scheduled to the end anyway and that schedule is stored there, for the report and the HTML
/// view to show what does not fit.
Result<Schedule> scheduleGraph(const Graph& graph, const ScheduleOptions& options, SearchInfo* info = nullptr,
                               std::optional<UnfitSchedule>* unfit = nullptr);

}  // namespace tactus::compiler
