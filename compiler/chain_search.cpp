// Chain-guided scheduling (chain_search.hpp).
#include "chain_search.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "channel_analysis.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

// A schedule's chains against their requirements, and what the comparison of two schedules needs.
struct Measure {
  bool ok = false;                   // its channels and chains could be analysed
  std::uint64_t deadlineMisses = 0;  // of the graph's own deadlines
  std::int64_t overNs = 0;           // every chain's excess over MaxReaction and MaxAge, summed
  std::int64_t sumNs = 0;            // every chain's reaction and age bounds, summed
  std::vector<ChainInfo> chains;     // bounds with the allowance
  std::vector<ChainBounds> bounds;   // the costliest runnables
};

// An instance's end from its frame's release.
std::int64_t endInFrame(const Schedule& s, const InstanceInfo& in) {
  const EpochInfo& e = s.epochs[s.runnables[in.runnable].epoch];
  return in.endNs - e.periodNs * static_cast<std::int64_t>(in.frame);
}

Measure measure(const Graph& graph, const Schedule& schedule, std::int64_t hopAllowanceNs) {
  Measure m;
  Schedule s = schedule;
  auto analysed = analyseChannels(graph, s, hopAllowanceNs);
  if (!analysed && analysed.error().code != ErrorCode::kInfeasible) return m;
  for (const InstanceInfo& in : s.instances) {
    const std::int64_t deadline = graph.runnables[in.runnable].deadlineNs;
    if (deadline != kNoDuration && endInFrame(s, in) > deadline) ++m.deadlineMisses;
  }
  for (const ChainInfo& c : s.chains) {
    auto b = computeChainBounds(s, c);
    if (!b) return m;
    if (c.maxReactionNs != kNoDuration) m.overNs += std::max<std::int64_t>(0, c.reactionNs - c.maxReactionNs);
    if (c.maxAgeNs != kNoDuration) m.overNs += std::max<std::int64_t>(0, c.ageNs - c.maxAgeNs);
    m.sumNs += c.reactionNs + c.ageNs;
    m.bounds.push_back(std::move(*b));
  }
  m.chains = std::move(s.chains);
  m.ok = true;
  return m;
}

// Whether `b` is no worse than `a`: analysed, no more real deadline misses, no more over the
// requirements.
bool noWorse(const Measure& b, const Measure& a) {
  return b.ok && b.deadlineMisses <= a.deadlineMisses && b.overNs <= a.overNs;
}

// Whether `b` is better than `a`: no worse, and less over the requirements or (favouring) shorter
// chains.
bool better(const Measure& b, const Measure& a, bool favour) {
  if (!noWorse(b, a)) return false;
  return b.overNs < a.overNs || (favour && b.sumNs < a.sumNs);
}

// Gives `r` a scheduler's deadline `cutNs` before its latest planned end within a frame (never
// below its StartTime + WCET, never later than the one it has). False when nothing changed.
bool tighten(Graph& g, const Schedule& s, RunnableId r, std::int64_t cutNs) {
  if (r == kNone || cutNs <= 0) return false;
  std::int64_t latest = 0;
  for (const InstanceInfo& in : s.instances)
    if (in.runnable == r) latest = std::max(latest, endInFrame(s, in));
  GraphRunnable& runnable = g.runnables[r];
  const std::int64_t want = std::max(latest - cutNs, runnable.startTimeNs + runnable.wcetNs);
  if (runnable.deadlineNs != kNoDuration && runnable.deadlineNs <= want) return false;
  runnable.deadlineNs = want;
  return true;
}

// One round's deadlines on `g` from the chains of the best schedule: for each chain over its
// requirement, its costliest runnable by what it is over; favouring, every chain's costliest by
// half of its waiting.
bool tightenChains(Graph& g, const Schedule& best, const Measure& m, bool favour) {
  bool changed = false;
  for (std::size_t k = 0; k < m.chains.size(); ++k) {
    const ChainInfo& c = m.chains[k];
    const ChainBounds& b = m.bounds[k];
    const std::int64_t overReaction = c.maxReactionNs != kNoDuration ? c.reactionNs - c.maxReactionNs : 0;
    const std::int64_t overAge = c.maxAgeNs != kNoDuration ? c.ageNs - c.maxAgeNs : 0;
    if (overReaction > 0) changed |= tighten(g, best, b.reactionCostliest, overReaction);
    if (overAge > 0) changed |= tighten(g, best, b.ageCostliest, overAge);
    if (favour && overReaction <= 0 && overAge <= 0 && b.reactionCostliest != kNone) {
      const std::int64_t waiting = b.reactionCostliestNs - g.runnables[b.reactionCostliest].wcetNs;
      changed |= tighten(g, best, b.reactionCostliest, waiting / 2);
    }
  }
  return changed;
}

}  // namespace

std::string ChainSearchNote::text() const {
  return "chain-guided scheduling: " + std::to_string(rounds) + (rounds == 1 ? " round" : " rounds") + ", " +
         std::to_string(improvements) + " kept; chains over their requirements by " + humanDuration(overBeforeNs) +
         " -> " + humanDuration(overAfterNs) + ", bounds " + humanDuration(sumBeforeNs) + " -> " +
         humanDuration(sumAfterNs) + " in sum";
}

bool chainsToShorten(const Graph& graph, const Schedule& schedule, std::int64_t hopAllowanceNs, bool favour) {
  if (graph.chains.empty()) return false;
  if (favour) return true;
  const Measure m = measure(graph, schedule, hopAllowanceNs);
  return m.ok && m.overNs > 0;
}

Schedule chainGuidedSchedule(const Graph& graph, const ScheduleOptions& options, std::int64_t hopAllowanceNs,
                             bool favour, Schedule first, ChainSearchNote& note) {
  Schedule best = std::move(first);
  Measure bestMeasure = measure(graph, best, hopAllowanceNs);
  note.overBeforeNs = note.overAfterNs = bestMeasure.overNs;
  note.sumBeforeNs = note.sumAfterNs = bestMeasure.sumNs;
  if (!bestMeasure.ok) return best;
  // Each round tightens from the last schedule that fits no worse than the best (a round may move
  // a chain's cost to another of its runnables without shortening it yet: the next tightens that).
  Graph guided = graph;  // the graph with the scheduler's deadlines of every round so far
  Schedule current = best;
  Measure currentMeasure = bestMeasure;
  for (int round = 0; round < kChainRounds; ++round) {
    if (!favour && bestMeasure.overNs == 0) break;
    if (!tightenChains(guided, current, currentMeasure, favour)) break;
    ++note.rounds;
    auto candidate = scheduleGraph(guided, options);
    if (!candidate) continue;  // these deadlines do not fit: the next round tightens others
    for (RunnableId r : candidate->runnables.ids()) candidate->runnables[r].deadlineNs = graph.runnables[r].deadlineNs;
    Measure m = measure(graph, *candidate, hopAllowanceNs);
    if (!noWorse(m, bestMeasure)) continue;
    if (better(m, bestMeasure, favour)) {
      ++note.improvements;
      best = *candidate;
      bestMeasure = m;
    }
    current = std::move(*candidate);
    currentMeasure = std::move(m);
  }
  note.overAfterNs = bestMeasure.overNs;
  note.sumAfterNs = bestMeasure.sumNs;
  return best;
}

}  // namespace tactus::compiler
