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
// deterministic (same graph, same schedule).
#pragma once

#include "graph.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// How the scheduler searches.
struct ScheduleOptions {
  /// Seconds of search per hyperepoch beyond the first schedules (`-t`). 0 = keep the first
  /// schedules found by the list scheduler's priority rules; a budget is accepted but the search
  /// beyond them (branch and bound) is not implemented yet.
  double timeBudgetSeconds = 0;
  /// Parallel search workers (`-j`); accepted, the list scheduler runs on the calling thread.
  int workers = 1;
  /// Accept a hyperepoch whose schedule is longer than its period (the verifier warns).
  bool allowOverlength = false;
};

/// Schedules every hyperepoch of a checked graph. Errors: kInfeasible when a hyperepoch's
/// schedule is longer than its period (unless allowOverlength) or a frame ends after its epoch's
/// next frame is released; kBadParameter for a graph whose indices or durations are out of range.
/// The result is not verified here: callers run verifySchedule on it.
Result<Schedule> scheduleGraph(const Graph& graph, const ScheduleOptions& options);

}  // namespace tactus::compiler
