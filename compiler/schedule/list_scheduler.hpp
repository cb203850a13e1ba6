// The priority list scheduler: places one hyperepoch's instances, most urgent first, at their
// earliest start on every requested resource (insertion into idle gaps, or time-driven).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedule/free_time.hpp"
#include "schedule/problem.hpp"

namespace tactus::compiler::schedule {

/// Up to this many instances per hyperepoch the time-driven rules are tried as well.
inline constexpr std::size_t kTimedRuleLimit = 20000;

/// One priority rule: how the ready list is ordered, and whether instances are inserted into
/// the earliest gap (list order = placement order) or started as time advances (Graham's list
/// scheduling: at each event time the most urgent instance that can start now starts).
struct Rule {
  int key = 0;         // 0 latest start (b-level); 1 minus top level (longest path through);
                       // 2 latest start, then most successors; 3 latest start, but a
                       // submitter by the earliest start of its work (its submittee's top
                       // level): a stream runs its work in submission order, so work that
                       // can start early is submitted before work still waiting on others
  bool timed = false;  // false: insertion; true: time-driven
  // When set, replaces the first key per instance (perturbed priorities of the improvement
  // search for large hyperepochs); the latest start stays the second key.
  const std::vector<std::int64_t>* keyOverride = nullptr;
  // When set, the schedule is abandoned (Attempt::abandoned) as soon as its score so far
  // (scoreOf with `periodNs`) is no better than this one's: every part of a score only grows as
  // instances are placed, so it could not end better, and the caller keeps the earlier one.
  const Attempt* cutoff = nullptr;
  std::int64_t periodNs = 0;
};

/// Runs the list scheduler with `rule` over the instances of `pb`. `free` holds the free time
/// of every resource of the graph (those the hyperepoch touches reset by the caller); the
/// placements are reserved in it.
Attempt listSchedule(const Problem& pb, const Rule& rule, std::vector<FreeTime>& free);

}  // namespace tactus::compiler::schedule
