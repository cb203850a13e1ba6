// The search's view of one hyperepoch (SProblem): its instances with WCETs, windows, heads and
// tails, the resource options per request up to equivalent resources, and the candidate sets of
// the load bound; with the limits and result of one search.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "graph.hpp"
#include "schedule/problem.hpp"

namespace tactus::compiler::schedule {

/// The clock of time budgets.
using Clock = std::chrono::steady_clock;

/// Limits of one hyperepoch's search.
struct SearchLimits {
  std::uint64_t steps = 0;  // 0 = no step limit
  bool timed = false;
  Clock::time_point deadline{};
  Clock::time_point started{};
  int workers = 1;
  bool allowOverlength = false;
  /// Called on the searching thread after each round (best length, lower bound, steps so far);
  /// empty: nothing. For the progress tactus-compile prints.
  std::function<void(std::int64_t bestNs, std::int64_t lowerBoundNs, std::uint64_t steps)> onRound;
};

/// What one hyperepoch's search found.
struct SearchResult {
  bool improved = false;
  Attempt attempt;
  std::int64_t lowerBoundNs = 0;
  bool exhausted = false;
  std::uint64_t steps = 0;
  double secondsToBest = 0;
};

/// The hyperepoch's instances as the branch and bound sees them.
struct SProblem {
  std::size_t n = 0;
  std::vector<std::int64_t> p, release, boundary, deadline, tail, key;
  std::vector<std::int64_t> head;    // static earliest start (strengthenHeadsTails)
  std::vector<std::uint32_t> topo;   // node -> position in `order`
  std::vector<std::uint32_t> order;  // topological order of the nodes
  std::vector<std::vector<std::uint32_t>> preds, succs;
  std::vector<std::uint32_t> submitter;  // submittee node -> its submitter's node
  // Per node, per request: the options, each a class of equivalent candidates (ascending).
  std::vector<std::vector<std::vector<std::vector<std::uint32_t>>>> options;
  std::vector<std::vector<std::uint32_t>> loadSets;      // candidate sets for the load bound
  std::vector<std::vector<std::uint32_t>> loadSetNodes;  // nodes with a request confined to it
  std::int64_t grain = 1;
  std::int64_t periodNs = 0;
  std::size_t resourceCount = 0;
  const Graph* graph = nullptr;
  bool anyDeadline = false;
};

/// The search problem of `pb` (a hyperepoch of period `periodNs`), heads and tails strengthened.
SProblem buildSearchProblem(const Problem& pb, std::int64_t periodNs);

/// The same problem backwards in time, where that is one: every edge turned round, so that a
/// schedule of length C of either gives one of the other (start' = C - end, the placement order
/// reversed) and both have the same optimum. Empty where time does not run both ways: releases,
/// deadlines, frames with boundaries of their own, or submitters and their queues (a queue runs
/// its work in submission order). A search that is stuck at the end of a tight schedule may be
/// quick at its start: on STG-50, rand0050 at P = 8 (36 with 2 units idle in all) is found in
/// 30 ms backwards and not in 3 s forwards.
std::optional<SProblem> reversedProblem(const SProblem& sp);

}  // namespace tactus::compiler::schedule
