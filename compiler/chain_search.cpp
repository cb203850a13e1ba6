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

// A reader of the chains' channel hops and the writers it reads on them.
struct ReaderHop {
  RunnableId reader{};
  std::vector<RunnableId> writers;  // the runnables before it on a chain, over a channel
};

// Whether `to`, after `from` on a chain, gets its data over a channel (else by a dependency or a
// submission of the same epoch, as ChainMap decides).
bool channelLink(const Graph& g, RunnableId from, RunnableId to) {
  const GraphRunnable& a = g.runnables[from];
  const GraphRunnable& b = g.runnables[to];
  const bool dependency =
      a.epoch == b.epoch &&
      (std::find(b.dependencies.begin(), b.dependencies.end(), from) != b.dependencies.end() || a.submits == to);
  return !dependency;
}

// The readers of the channel hops of every chain with a requirement (favouring: of every chain),
// in chain order, each once with the writers it reads on a chain.
std::vector<ReaderHop> readerHops(const Graph& g, bool favour) {
  std::vector<ReaderHop> hops;
  for (const GraphChain& c : g.chains) {
    if (!favour && c.maxReactionNs == kNoDuration && c.maxAgeNs == kNoDuration) continue;
    for (std::size_t k = 0; k + 1 < c.runnables.size(); ++k) {
      if (!channelLink(g, c.runnables[k], c.runnables[k + 1])) continue;
      auto it =
          std::find_if(hops.begin(), hops.end(), [&](const ReaderHop& h) { return h.reader == c.runnables[k + 1]; });
      if (it == hops.end()) it = hops.insert(hops.end(), ReaderHop{c.runnables[k + 1], {}});
      if (std::find(it->writers.begin(), it->writers.end(), c.runnables[k]) == it->writers.end())
        it->writers.push_back(c.runnables[k]);
    }
  }
  return hops;
}

// Runnable r and its ancestors (dependencies and submitters, transitively), marked in `seen`.
void markAncestors(const Graph& g, RunnableId r, std::vector<char>& seen) {
  std::vector<RunnableId> todo{r};
  while (!todo.empty()) {
    const RunnableId x = todo.back();
    todo.pop_back();
    if (seen[index(x)]) continue;
    seen[index(x)] = 1;
    for (RunnableId d : g.runnables[x].dependencies) todo.push_back(d);
    if (g.runnables[x].submittedBy != kNone) todo.push_back(g.runnables[x].submittedBy);
  }
}

// Whether the plan of every chain runnable with a requirement is fixed by the StartTimes alone, so
// that the StartTimes of the readers decide every chain bound a schedule can have: each of them
// and each of their ancestors is a plain CPU-like runnable (no submission, no round robin) whose
// resources no other runnable may hold, so each run starts as soon as its release, StartTime and
// predecessors allow; and no reader is an ancestor of a writer that an earlier reader reads (the
// search fixes the readers' StartTimes in that order).
bool startTimesDecide(const Graph& g, const std::vector<ReaderHop>& hops) {
  std::vector<char> involved(g.runnables.size(), 0);
  for (const GraphChain& c : g.chains)
    for (RunnableId r : c.runnables) markAncestors(g, r, involved);
  std::vector<int> users(g.resources.size(), 0);
  for (const GraphRunnable& r : g.runnables)
    for (const ResourceRequest& q : r.resources)
      for (ResourceId c : q.candidates) ++users[index(c)];
  for (RunnableId r : g.runnables.ids()) {
    if (!involved[index(r)]) continue;
    const GraphRunnable& x = g.runnables[r];
    if (x.kind == RunnableKind::kSubmitter || x.kind == RunnableKind::kSubmittee || x.aliasGroup != kNone ||
        x.kind == RunnableKind::kAliasGroup)
      return false;
    for (const ResourceRequest& q : x.resources)
      if (q.candidates.size() != 1 || users[index(q.candidates[0])] != 1) return false;
  }
  for (std::size_t k = 0; k < hops.size(); ++k) {
    std::vector<char> above(g.runnables.size(), 0);
    for (RunnableId w : hops[k].writers) markAncestors(g, w, above);
    for (std::size_t j = k + 1; j < hops.size(); ++j)
      if (above[index(hops[j].reader)]) return false;
  }
  return true;
}

// The StartTimes worth trying for a hop's reader on schedule `s`: each starts a frame of it right
// at the end of a run of one of its writers that it can still follow within its frame (the idea
// of the refusal's freshness hint), above the StartTime it has; ascending. Between two of them
// every frame reads the same versions, and a later start only ends later.
std::vector<std::int64_t> startCandidates(const Graph& g, const Schedule& s, const ReaderHop& hop) {
  const GraphRunnable& reader = g.runnables[hop.reader];
  const std::int64_t period = g.epochs[reader.epoch].periodNs;
  std::vector<std::int64_t> out;
  for (const InstanceInfo& r : s.instances) {
    if (r.runnable != hop.reader) continue;
    const std::int64_t release = static_cast<std::int64_t>(r.frame) * period;
    for (const InstanceInfo& w : s.instances) {
      if (std::find(hop.writers.begin(), hop.writers.end(), w.runnable) == hop.writers.end()) continue;
      const std::int64_t offset = w.endNs - release;
      if (offset > reader.startTimeNs && offset + reader.wcetNs <= period) out.push_back(offset);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The search over the StartTimes of the chains' readers: depth first, in chain order, each reader
// kept where it is or started at one of its candidates on the schedule made with the StartTimes
// chosen before it. Every node is one schedule (list scheduling, no search budget). Within the
// budget it tries every combination of candidates; with startTimesDecide that is every schedule
// the graph can have, as far as its chains go, so none meeting them proves none exists.
class StartTimeSearch {
 public:
  StartTimeSearch(const Graph& graph, const ScheduleOptions& options, std::int64_t hopAllowanceNs, bool favour,
                  const Measure& first)
      : graph_(graph),
        allowance_(hopAllowanceNs),
        favour_(favour),
        hops_(readerHops(graph, favour)),
        options_(options),
        bestMeasure_(first) {
    options_.timeBudgetSeconds = 0;
    options_.searchSteps = 0;
    options_.progress = {};
    // Each node schedules the whole graph: the budget shrinks with its size.
    std::size_t instances = 0;
    for (const GraphRunnable& r : graph.runnables)
      instances += std::max<std::uint32_t>(1, graph.epochs[r.epoch].frames);
    budget_ = std::clamp<std::size_t>(kChainStartTimeWork / std::max<std::size_t>(1, instances), 8, 512);
  }

  void run(const Schedule& first) {
    if (hops_.empty()) return;
    Graph g = graph_;
    visit(0, g, first);
  }

  int schedules() const { return schedules_; }
  bool found() const { return best_.has_value(); }
  /// No schedule meets the chains' requirements: all tried, none met, and the StartTimes decide.
  bool proven() const { return complete_ && !met_ && !favour_ && startTimesDecide(graph_, hops_); }
  const Graph& bestGraph() const { return *bestGraph_; }
  Schedule& best() { return *best_; }
  const Measure& bestMeasure() const { return bestMeasure_; }

 private:
  bool done() const { return !favour_ && bestMeasure_.ok && bestMeasure_.overNs == 0 && best_.has_value(); }

  void visit(std::size_t level, Graph& g, const Schedule& s) {
    for (std::size_t k = level; k < hops_.size() && !done(); ++k) {
      GraphRunnable& reader = g.runnables[hops_[k].reader];
      const std::int64_t kept = reader.startTimeNs;
      for (std::int64_t start : startCandidates(g, s, hops_[k])) {
        if (done()) break;
        if (static_cast<std::size_t>(schedules_) >= budget_) {
          complete_ = false;
          break;
        }
        ++schedules_;
        reader.startTimeNs = start;
        auto candidate = scheduleGraph(g, options_);
        if (candidate) {
          Measure m = measure(graph_, *candidate, allowance_);
          met_ = met_ || (m.ok && m.overNs == 0);
          if (better(m, bestMeasure_, favour_)) {
            bestMeasure_ = m;
            best_ = *candidate;
            bestGraph_ = g;
          }
          visit(k + 1, g, *candidate);
        }
        reader.startTimeNs = kept;
      }
    }
  }

  const Graph& graph_;
  std::int64_t allowance_;
  bool favour_;
  std::vector<ReaderHop> hops_;
  ScheduleOptions options_;
  std::size_t budget_ = 0;
  int schedules_ = 0;
  bool complete_ = true;
  bool met_ = false;
  Measure bestMeasure_;
  std::optional<Schedule> best_;
  std::optional<Graph> bestGraph_;
};

// Rounds of scheduler's deadlines (the header's drawing) from `base` (the graph, or the graph
// with StartTimes the search gave its readers), improving `best`.
void deadlineRounds(const Graph& graph, const Graph& base, const ScheduleOptions& options, std::int64_t hopAllowanceNs,
                    bool favour, Schedule& best, Measure& bestMeasure, ChainSearchNote& note) {
  // Each round tightens from the last schedule that fits no worse than the best (a round may move
  // a chain's cost to another of its runnables without shortening it yet: the next tightens that).
  Graph guided = base;  // with the scheduler's deadlines of every round so far
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
}

// The StartTime search schedules without a budget; with one, the graph with the StartTimes found
// is scheduled again with it, and that schedule kept when its chains are no worse.
void keepSearched(const Graph& graph, const Graph& withStarts, const ScheduleOptions& options,
                  std::int64_t hopAllowanceNs, Schedule& best, Measure& bestMeasure) {
  auto searched = scheduleGraph(withStarts, options);
  if (!searched) return;
  Measure m = measure(graph, *searched, hopAllowanceNs);
  if (!noWorse(m, bestMeasure) || m.sumNs > bestMeasure.sumNs) return;
  best = std::move(*searched);
  bestMeasure = std::move(m);
}

// `StartTime 42ms on 'P.Plan', ...`: the StartTimes `s` gives beyond the graph's.
std::string startTimesGiven(const Graph& graph, const Schedule& s) {
  std::string out;
  for (RunnableId r : s.runnables.ids()) {
    if (s.runnables[r].startTimeNs == graph.runnables[r].startTimeNs) continue;
    out += std::string(out.empty() ? "" : ", ") + "StartTime " + humanDuration(s.runnables[r].startTimeNs) + " on " +
           quoted(qualifiedName(s, r));
  }
  return out;
}

}  // namespace

std::string ChainSearchNote::text() const {
  std::string out = "chain-guided scheduling: " + std::to_string(rounds) + (rounds == 1 ? " round" : " rounds") + ", " +
                    std::to_string(improvements) + " kept; chains over their requirements by " +
                    humanDuration(overBeforeNs) + " -> " + humanDuration(overAfterNs) + ", bounds " +
                    humanDuration(sumBeforeNs) + " -> " + humanDuration(sumAfterNs) + " in sum";
  if (startTimeSearched) {
    out += "; readers' StartTimes: " + std::to_string(startTimeSchedules) +
           (startTimeSchedules == 1 ? " schedule" : " schedules") + " tried";
    if (!startTimes.empty()) out += ", kept " + startTimes;
  }
  if (impossible)
    out +=
        "; no schedule meets the chains' requirements: every StartTime of their readers that changes the data "
        "they read was tried, and nothing else moves their runs (each holds its resources alone)";
  return out;
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
  const Schedule unguided = best;
  deadlineRounds(graph, graph, options, hopAllowanceNs, favour, best, bestMeasure, note);
  if (favour || bestMeasure.overNs > 0) {
    // The deadlines never delay a reader: search its StartTimes, from the first schedule.
    StartTimeSearch search(graph, options, hopAllowanceNs, favour, bestMeasure);
    search.run(unguided);
    note.startTimeSearched = !readerHops(graph, favour).empty();
    note.startTimeSchedules = search.schedules();
    note.impossible = search.proven();  // then nothing below meets the chains either
    if (search.found()) {
      ++note.improvements;
      best = std::move(search.best());
      bestMeasure = search.bestMeasure();
      if (options.timeBudgetSeconds > 0 || options.searchSteps > 0)
        keepSearched(graph, search.bestGraph(), options, hopAllowanceNs, best, bestMeasure);
      if (favour || bestMeasure.overNs > 0)
        deadlineRounds(graph, search.bestGraph(), options, hopAllowanceNs, favour, best, bestMeasure, note);
    }
  }
  note.impossible = note.impossible && bestMeasure.overNs > 0;
  note.startTimes = startTimesGiven(graph, best);
  note.overAfterNs = bestMeasure.overNs;
  note.sumAfterNs = bestMeasure.sumNs;
  return best;
}

}  // namespace tactus::compiler
