// The scheduler: priority list scheduling with insertion into idle gaps, per hyperepoch.
#include "scheduler.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "report.hpp"

namespace tactus::compiler {
namespace {

constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;
// Up to this many instances per hyperepoch the time-driven rules are tried as well.
constexpr std::size_t kTimedRuleLimit = 20000;

// The free time of one resource: disjoint gaps [start, end), keyed by start. Two gaps may touch:
// the point between them holds a zero-length instance that nothing may straddle.
//
//   busy  |////|      |///|
//   gaps       [ g1  )    [ g2 ............ infinity)
class FreeTime {
 public:
  FreeTime() { gaps_.emplace(0, kInfinity); }

  // Earliest s >= t with [s, s + w) inside one gap (for w = 0: s inside or at the end of a gap).
  // `gapStart` receives the start of that gap (used to prefer the tightest fit).
  std::int64_t fit(std::int64_t t, std::int64_t w, std::int64_t* gapStart = nullptr) const {
    auto it = gaps_.upper_bound(t);
    if (it != gaps_.begin()) {
      auto p = std::prev(it);
      if (p->second >= t + w) {
        if (gapStart) *gapStart = p->first;
        return t;
      }
    }
    for (; it != gaps_.end(); ++it) {
      if (it->second - it->first >= w) {
        if (gapStart) *gapStart = it->first;
        return it->first;
      }
    }
    return kInfinity;  // unreachable: the last gap is unbounded
  }

  // Takes [s, s + w) out of the gap that holds it (fit() returned s for w).
  void reserve(std::int64_t s, std::int64_t w) {
    auto it = gaps_.upper_bound(s);
    if (it == gaps_.begin()) return;
    auto p = std::prev(it);
    const std::int64_t gs = p->first;
    const std::int64_t ge = p->second;
    if (ge < s + w) return;
    if (w == 0) {
      if (gs < s && s < ge) {  // split: nothing may run across the zero-length point
        p->second = s;
        gaps_.emplace_hint(it, s, ge);
      }
      return;
    }
    gaps_.erase(p);
    if (gs < s) gaps_.emplace(gs, s);
    if (s + w < ge) gaps_.emplace(s + w, ge);
  }

 private:
  std::map<std::int64_t, std::int64_t> gaps_;
};

// One unrolled instance while a hyperepoch is scheduled.
struct Node {
  std::uint32_t runnable = 0;  // global runnable index
  std::uint32_t local = 0;     // index into the hyperepoch's runnable list
  std::uint32_t frame = 0;
  std::int64_t releaseNs = 0;  // frame release + StartTime
  std::int64_t frameNs = 0;    // frame release
  std::int64_t boundaryNs = 0; // next frame's release
};

// Where one instance was placed.
struct Placement {
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::uint64_t seq = 0;  // placement order, a topological order of the instances
  std::vector<std::uint32_t> resources;
};

// The outcome of one priority rule on one hyperepoch.
struct Attempt {
  std::vector<Placement> placements;
  std::int64_t lengthNs = 0;
  std::uint64_t boundaryMisses = 0;
  std::uint64_t deadlineMisses = 0;
};

// The per-hyperepoch problem, shared by the priority rules.
struct Problem {
  const Graph* graph = nullptr;
  const std::vector<std::int64_t>* wcet = nullptr;  // effective WCET per global runnable
  const std::vector<const std::vector<ResourceRequest>*>* requests = nullptr;
  std::vector<std::uint32_t> runnables;                // local -> global
  std::vector<std::vector<std::uint32_t>> localDeps;   // local -> local predecessors
  std::vector<std::vector<std::uint32_t>> localSuccs;  // local -> local successors
  std::vector<std::uint32_t> localSubmitter;           // local -> local submitter or kNone
  std::vector<Node> nodes;
  std::vector<std::uint32_t> nodeBase;  // local runnable -> node of its frame 0 (+ frame * stride)
  std::vector<std::uint32_t> nodeStride;
  std::vector<std::int64_t> latestStart;  // local: ALAP start from the frame release
  std::vector<std::int64_t> topLevel;     // local: longest path to its start from the release
  std::vector<std::int64_t> succCount;    // local: number of immediate successors

  std::uint32_t nodeOf(std::uint32_t local, std::uint32_t frame) const {
    return nodeBase[local] + frame * nodeStride[local];
  }
};

// Ready-list entry: smaller compares first.
struct ReadyKey {
  std::int64_t key1;
  std::int64_t key2;
  std::uint32_t priority;
  std::uint32_t frame;
  std::uint32_t runnable;
  std::uint32_t node;
  bool operator>(const ReadyKey& o) const {
    return std::tie(key1, key2, priority, frame, runnable, node) >
           std::tie(o.key1, o.key2, o.priority, o.frame, o.runnable, o.node);
  }
  bool operator<(const ReadyKey& o) const { return o > *this; }
};

// The earliest common start >= t of length w on every resource in `set`.
std::int64_t commonFit(const std::vector<FreeTime>& free, const std::vector<std::uint32_t>& set,
                       std::int64_t t, std::int64_t w) {
  std::int64_t s = t;
  bool moved = true;
  while (moved) {
    moved = false;
    for (std::uint32_t r : set) {
      const std::int64_t s2 = free[r].fit(s, w);
      if (s2 != s) {
        s = s2;
        moved = true;
      }
    }
  }
  return s;
}

// One priority rule: how the ready list is ordered, and whether instances are inserted into
// the earliest gap (list order = placement order) or started as time advances (Graham's list
// scheduling: at each event time the most urgent instance that can start now starts).
struct Rule {
  int key = 0;          // 0 latest start (b-level); 1 minus top level (longest path through);
                        // 2 latest start, then most successors
  bool timed = false;   // false: insertion; true: time-driven
};

// Runs the list scheduler with one rule over one hyperepoch's instances.
class ListScheduler {
 public:
  ListScheduler(const Problem& pb, Rule rule, std::vector<FreeTime>& free)
      : pb_(pb), g_(*pb.graph), rule_(rule), free_(free) {
    at_.placements.resize(pb.nodes.size());
    waiting_.resize(pb.nodes.size());
    if (rule_.timed) {
      busyUntil_.assign(free.size(), 0);
      for (std::uint32_t r : pb.runnables) {
        const auto& reqs = *(*pb.requests)[r];
        if (!reqs.empty()) hardware_.insert(hardware_.end(), reqs[0].candidates.begin(), reqs[0].candidates.end());
      }
      std::sort(hardware_.begin(), hardware_.end());
      hardware_.erase(std::unique(hardware_.begin(), hardware_.end()), hardware_.end());
    }
  }

  Attempt run() {
    for (std::uint32_t n = 0; n < pb_.nodes.size(); ++n) {
      waiting_[n] = static_cast<std::uint32_t>(pb_.localDeps[pb_.nodes[n].local].size());
      if (waiting_[n] == 0) becomeReady(n);
    }
    if (rule_.timed) {
      runTimed();
    } else {
      while (!ready_.empty()) {
        const std::uint32_t n = ready_.top().node;
        ready_.pop();
        Choice c = choose(n, earliest(n));
        place(n, c);
      }
    }
    return std::move(at_);
  }

 private:
  struct Choice {
    std::int64_t start = 0;
    std::vector<std::uint32_t> resources;  // hardware first, then software, then the stream
  };

  ReadyKey keyOf(std::uint32_t n) const {
    const Node& nd = pb_.nodes[n];
    ReadyKey k{};
    const std::int64_t ls = nd.frameNs + pb_.latestStart[nd.local];
    switch (rule_.key) {
      case 1: k.key1 = ls - pb_.topLevel[nd.local]; k.key2 = ls; break;
      case 2: k.key1 = ls; k.key2 = -pb_.succCount[nd.local]; break;
      default: k.key1 = ls; k.key2 = 0; break;
    }
    k.priority = g_.runnables[nd.runnable].priority;
    k.frame = nd.frame;
    k.runnable = nd.runnable;
    k.node = n;
    return k;
  }

  void becomeReady(std::uint32_t n) {
    if (rule_.timed) {
      pending_.emplace(earliest(n), n);
    } else {
      ready_.push(keyOf(n));
    }
  }

  // Release + StartTime, and the end of every dependency (all placed by now).
  std::int64_t earliest(std::uint32_t n) const {
    const Node& nd = pb_.nodes[n];
    std::int64_t t = nd.releaseNs;
    for (std::uint32_t d : pb_.localDeps[nd.local]) {
      t = std::max(t, at_.placements[pb_.nodeOf(d, nd.frame)].endNs);
    }
    return t;
  }

  // Resource choice: requests with one candidate (and a submittee's stream) are fixed first,
  // then each open request takes the candidate giving the earliest common start.
  Choice choose(std::uint32_t n, std::int64_t t) {
    const Node& nd = pb_.nodes[n];
    const GraphRunnable& gr = g_.runnables[nd.runnable];
    const std::int64_t w = (*pb_.wcet)[nd.runnable];
    const auto& reqs = *(*pb_.requests)[nd.runnable];
    chosen_.assign(reqs.size(), kNone);
    fixed_.clear();
    std::uint32_t stream = kNone;
    if (gr.kind == RunnableKind::kSubmittee && pb_.localSubmitter[nd.local] != kNone) {
      const Placement& sp = at_.placements[pb_.nodeOf(pb_.localSubmitter[nd.local], nd.frame)];
      for (std::uint32_t r : sp.resources) {
        if (g_.resources[r].kind == ResourceKind::kCudaStream) {
          stream = r;
          break;
        }
      }
      if (stream != kNone) fixed_.push_back(stream);
    }
    auto allowed = [&](std::size_t q, std::uint32_t c) {
      if (std::find(fixed_.begin(), fixed_.end(), c) != fixed_.end()) return false;
      // A submittee runs on the device its submitter's stream maps to.
      if (stream != kNone && q == 0 && g_.resources[c].kind == ResourceKind::kGpu) {
        return g_.resources[stream].device == c;
      }
      return true;
    };
    for (std::size_t q = 0; q < reqs.size(); ++q) {
      std::uint32_t only = kNone;
      std::size_t count = 0;
      for (std::uint32_t c : reqs[q].candidates) {
        if (allowed(q, c)) {
          ++count;
          only = c;
        }
      }
      if (count == 1) {
        chosen_[q] = only;
        fixed_.push_back(only);
      }
    }
    std::int64_t s = commonFit(free_, fixed_, t, w);
    for (std::size_t q = 0; q < reqs.size(); ++q) {
      if (chosen_[q] != kNone) continue;
      std::int64_t best = kInfinity;
      std::int64_t bestGap = -1;
      std::uint32_t bestC = kNone;
      for (std::uint32_t c : reqs[q].candidates) {
        if (!allowed(q, c)) continue;
        fixed_.push_back(c);
        const std::int64_t sc = commonFit(free_, fixed_, s, w);
        fixed_.pop_back();
        std::int64_t gapStart = 0;
        free_[c].fit(sc, w, &gapStart);
        // Earliest start; on a tie the tightest fit (the gap that opened last), then the index.
        if (sc < best || (sc == best && gapStart > bestGap)) {
          best = sc;
          bestGap = gapStart;
          bestC = c;
        }
      }
      if (bestC == kNone) continue;  // no candidate left; the verifier reports the instance
      chosen_[q] = bestC;
      fixed_.push_back(bestC);
      s = best;
    }
    Choice c;
    c.start = commonFit(free_, fixed_, s, w);
    for (std::uint32_t r : chosen_) {
      if (r != kNone) c.resources.push_back(r);
    }
    if (stream != kNone) c.resources.push_back(stream);
    return c;
  }

  void place(std::uint32_t n, Choice& c) {
    const Node& nd = pb_.nodes[n];
    const GraphRunnable& gr = g_.runnables[nd.runnable];
    const std::int64_t w = (*pb_.wcet)[nd.runnable];
    Placement& pl = at_.placements[n];
    pl.startNs = c.start;
    pl.endNs = c.start + w;
    pl.seq = seq_++;
    pl.resources = std::move(c.resources);
    for (std::uint32_t r : pl.resources) free_[r].reserve(pl.startNs, w);
    at_.lengthNs = std::max(at_.lengthNs, pl.endNs);
    if (pl.endNs > nd.boundaryNs) ++at_.boundaryMisses;
    if (gr.deadlineNs != kNoDuration && pl.endNs > nd.frameNs + gr.deadlineNs) ++at_.deadlineMisses;
    if (rule_.timed) {
      ends_.push(pl.endNs);
      for (std::uint32_t r : pl.resources) busyUntil_[r] = std::max(busyUntil_[r], pl.endNs);
    }
    for (std::uint32_t sl : pb_.localSuccs[nd.local]) {
      const std::uint32_t m = pb_.nodeOf(sl, nd.frame);
      if (--waiting_[m] == 0) becomeReady(m);
    }
  }

  // Time-driven: at each event time, start the available instances in priority order where
  // their resources are free now; then move to the next end or release.
  void runTimed() {
    std::set<ReadyKey, std::less<>> available;
    std::int64_t now = 0;
    std::size_t placed = 0;
    while (placed < pb_.nodes.size()) {
      while (!pending_.empty() && pending_.top().first <= now) {
        available.insert(keyOf(pending_.top().second));
        pending_.pop();
      }
      bool progress = false;
      // In time-driven mode nothing is placed after `now`, so a resource is free now exactly
      // when its last instance has ended: a cheap filter before the exact choice, and the scan
      // ends once every hardware resource is busy.
      auto freeNow = [&](std::uint32_t r) { return busyUntil_[r] <= now; };
      auto anyHardwareFree = [&] {
        return std::any_of(hardware_.begin(), hardware_.end(), freeNow);
      };
      for (auto it = available.begin(); it != available.end();) {
        if (!anyHardwareFree()) break;
        const std::uint32_t n = it->node;
        bool possible = true;
        for (const auto& q : *(*pb_.requests)[pb_.nodes[n].runnable]) {
          if (std::none_of(q.candidates.begin(), q.candidates.end(), freeNow)) {
            possible = false;
            break;
          }
        }
        if (!possible) {
          ++it;
          continue;
        }
        Choice c = choose(n, now);
        if (c.start != now) {
          ++it;
          continue;
        }
        it = available.erase(it);
        place(n, c);
        ++placed;
        progress = true;
        // Zero-length instances may make successors available at this very time.
        if (!pending_.empty() && pending_.top().first <= now) break;
      }
      if (progress) continue;
      std::int64_t next = kInfinity;
      while (!ends_.empty() && ends_.top() <= now) ends_.pop();
      if (!ends_.empty()) next = ends_.top();
      if (!pending_.empty()) next = std::min(next, pending_.top().first);
      if (next == kInfinity) {
        // Nothing runs and nothing is pending: what is left can never start at `now`; place it
        // at its earliest (cannot happen with free resources, kept as a guard against hangs).
        for (const ReadyKey& k : available) {
          Choice c = choose(k.node, now);
          place(k.node, c);
          ++placed;
        }
        available.clear();
        if (placed < pb_.nodes.size() && pending_.empty()) break;
        continue;
      }
      now = next;
    }
  }

  const Problem& pb_;
  const Graph& g_;
  Rule rule_;
  std::vector<FreeTime>& free_;
  Attempt at_;
  std::vector<std::uint32_t> waiting_;
  std::priority_queue<ReadyKey, std::vector<ReadyKey>, std::greater<ReadyKey>> ready_;
  using Pending = std::pair<std::int64_t, std::uint32_t>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<std::int64_t>> ends_;
  std::vector<std::uint32_t> chosen_;
  std::vector<std::uint32_t> fixed_;
  std::vector<std::int64_t> busyUntil_;   // time-driven: end of the last instance per resource
  std::vector<std::uint32_t> hardware_;   // time-driven: every hardware candidate
  std::uint64_t seq_ = 0;
};

std::string epochName(const Graph& g, std::uint32_t e) {
  const EpochInfo& ep = g.epochs[e];
  if (ep.hyperepoch < g.hyperepochs.size()) return g.hyperepochs[ep.hyperepoch].name + "." + ep.name;
  return ep.name;
}

// Checks indices and durations so that scheduling never reads out of range.
Result<void> checkGraph(const Graph& g) {
  auto bad = [](std::string m) { return fail(ErrorCode::kBadParameter, std::move(m)); };
  for (std::size_t e = 0; e < g.epochs.size(); ++e) {
    if (g.epochs[e].hyperepoch >= g.hyperepochs.size()) {
      return bad("epoch '" + g.epochs[e].name + "' names an unknown hyperepoch");
    }
    if (g.epochs[e].periodNs <= 0) return bad("epoch '" + g.epochs[e].name + "' has no period");
  }
  for (const auto& h : g.hyperepochs) {
    for (std::uint32_t e : h.epochs) {
      if (e >= g.epochs.size()) return bad("hyperepoch '" + h.name + "' names an unknown epoch");
    }
  }
  const auto n = g.runnables.size();
  for (const auto& r : g.runnables) {
    const std::string who = "runnable '" + r.name + "'";
    if (r.epoch >= g.epochs.size()) return bad(who + " has an unknown epoch");
    if (r.client >= g.clients.size() && !g.clients.empty()) return bad(who + " has an unknown client");
    if (r.wcetNs < 0 || r.startTimeNs < 0) return bad(who + " has a negative duration");
    for (std::uint32_t d : r.dependencies) {
      if (d >= n) return bad(who + " depends on an unknown runnable");
    }
    for (const auto& q : r.resources) {
      for (std::uint32_t c : q.candidates) {
        if (c >= g.resources.size()) return bad(who + " requests an unknown resource");
      }
    }
    if ((r.submits != kNone && r.submits >= n) || (r.submittedBy != kNone && r.submittedBy >= n) ||
        (r.aliasGroup != kNone && r.aliasGroup >= n)) {
      return bad(who + " names an unknown runnable");
    }
    for (std::uint32_t m : r.steps) {
      if (m != kNone && m >= n) return bad(who + " has an unknown round-robin step");
    }
  }
  for (const auto& res : g.resources) {
    if (res.kind == ResourceKind::kCudaStream && res.device != kNone && res.device >= g.resources.size()) {
      return bad("stream '" + res.name + "' maps to an unknown device");
    }
  }
  return {};
}

}  // namespace

Result<Schedule> scheduleGraph(const Graph& graph, const ScheduleOptions& options) {
  const Graph& g = graph;
  if (auto ok = checkGraph(g); !ok) return ok.error();

  Schedule out;
  out.name = g.name;
  out.identifier = g.identifier;
  out.sourceHash = g.sourceHash;
  out.clients = g.clients;
  out.resources = g.resources;
  out.hyperepochs = g.hyperepochs;
  out.epochs = g.epochs;

  // Round-robin groups: the slot takes the group's WCET and requests, or when the parser left
  // them empty, the longest member's WCET and the first member's requests.
  const std::size_t n = g.runnables.size();
  std::vector<std::int64_t> wcet(n);
  std::vector<const std::vector<ResourceRequest>*> requests(n);
  for (std::size_t i = 0; i < n; ++i) {
    const GraphRunnable& r = g.runnables[i];
    wcet[i] = r.wcetNs;
    requests[i] = &r.resources;
    if (r.kind == RunnableKind::kAliasGroup) {
      std::int64_t longest = 0;
      for (std::uint32_t m : r.steps) {
        if (m == kNone) continue;
        longest = std::max(longest, g.runnables[m].wcetNs);
        if (requests[i]->empty()) requests[i] = &g.runnables[m].resources;
      }
      wcet[i] = std::max(wcet[i], longest);
    }
  }

  out.runnables.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const GraphRunnable& r = g.runnables[i];
    RunnableInfo ri;
    ri.name = r.name;
    ri.client = r.client;
    ri.epoch = r.epoch;
    ri.kind = r.kind;
    ri.wcetNs = wcet[i];
    ri.startTimeNs = r.startTimeNs;
    ri.deadlineNs = r.deadlineNs;
    ri.endMonitorThresholdNs = r.endMonitorThresholdNs;
    ri.priority = r.priority;
    // Dependencies as scheduled: on round-robin groups, with the submitter, sorted.
    for (std::uint32_t d : r.dependencies) {
      const std::uint32_t to = g.runnables[d].aliasGroup != kNone ? g.runnables[d].aliasGroup : d;
      if (to != i) ri.dependencies.push_back(to);
    }
    if (r.kind == RunnableKind::kSubmittee && r.submittedBy != kNone) ri.dependencies.push_back(r.submittedBy);
    std::sort(ri.dependencies.begin(), ri.dependencies.end());
    ri.dependencies.erase(std::unique(ri.dependencies.begin(), ri.dependencies.end()), ri.dependencies.end());
    ri.submits = r.submits;
    ri.submittedBy = r.submittedBy;
    ri.aliasGroup = r.aliasGroup;
    ri.steps = r.steps;
    out.runnables.push_back(std::move(ri));
  }

  // Scheduled runnables per epoch (round-robin members run inside their group's slot).
  std::vector<std::vector<std::uint32_t>> epochRunnables(g.epochs.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    if (g.runnables[i].aliasGroup == kNone) epochRunnables[g.runnables[i].epoch].push_back(i);
  }
  auto scheduledAs = [&](std::uint32_t r) {
    return g.runnables[r].aliasGroup != kNone ? g.runnables[r].aliasGroup : r;
  };

  std::vector<FreeTime> free(g.resources.size());
  std::vector<std::uint32_t> localOf(n, kNone);

  for (std::uint32_t h = 0; h < g.hyperepochs.size(); ++h) {
    const HyperepochInfo& he = g.hyperepochs[h];
    Problem pb;
    pb.graph = &g;
    pb.wcet = &wcet;
    pb.requests = &requests;
    std::vector<std::uint32_t> epochsHere = he.epochs;
    std::sort(epochsHere.begin(), epochsHere.end());
    epochsHere.erase(std::unique(epochsHere.begin(), epochsHere.end()), epochsHere.end());

    // Local runnables and their unrolled instances: epoch by epoch, frame-major.
    for (std::uint32_t e : epochsHere) {
      const EpochInfo& ep = g.epochs[e];
      const auto& rs = epochRunnables[e];
      const auto base = static_cast<std::uint32_t>(pb.nodes.size());
      for (std::size_t j = 0; j < rs.size(); ++j) {
        localOf[rs[j]] = static_cast<std::uint32_t>(pb.runnables.size());
        pb.runnables.push_back(rs[j]);
        pb.nodeBase.push_back(base + static_cast<std::uint32_t>(j));
        pb.nodeStride.push_back(static_cast<std::uint32_t>(rs.size()));
      }
      for (std::uint32_t k = 0; k < ep.frames; ++k) {
        for (std::uint32_t r : rs) {
          Node nd;
          nd.runnable = r;
          nd.local = localOf[r];
          nd.frame = k;
          nd.frameNs = static_cast<std::int64_t>(k) * ep.periodNs;
          nd.boundaryNs = nd.frameNs + ep.periodNs;
          nd.releaseNs = nd.frameNs + g.runnables[r].startTimeNs;
          pb.nodes.push_back(nd);
        }
      }
    }
    const auto L = pb.runnables.size();
    pb.localDeps.resize(L);
    pb.localSuccs.resize(L);
    pb.localSubmitter.assign(L, kNone);
    for (std::uint32_t l = 0; l < L; ++l) {
      const GraphRunnable& r = g.runnables[pb.runnables[l]];
      for (std::uint32_t d : r.dependencies) {
        const std::uint32_t dl = localOf[scheduledAs(d)];
        const std::uint32_t dg = scheduledAs(d);
        if (dl == kNone || g.runnables[dg].epoch != r.epoch) {
          return fail(ErrorCode::kValidation, "runnable '" + r.name + "' depends on '" +
                                                  g.runnables[d].name + "' of another epoch");
        }
        if (dl == l) continue;
        pb.localDeps[l].push_back(dl);
      }
      std::sort(pb.localDeps[l].begin(), pb.localDeps[l].end());
      pb.localDeps[l].erase(std::unique(pb.localDeps[l].begin(), pb.localDeps[l].end()),
                            pb.localDeps[l].end());
      for (std::uint32_t dl : pb.localDeps[l]) pb.localSuccs[dl].push_back(l);
      if (r.kind == RunnableKind::kSubmittee && r.submittedBy != kNone) {
        pb.localSubmitter[l] = localOf[scheduledAs(r.submittedBy)];
        if (pb.localSubmitter[l] != kNone &&
            std::find(pb.localDeps[l].begin(), pb.localDeps[l].end(), pb.localSubmitter[l]) ==
                pb.localDeps[l].end()) {
          // The submitter is an implicit dependency; add it when the parser did not.
          pb.localDeps[l].insert(std::lower_bound(pb.localDeps[l].begin(), pb.localDeps[l].end(),
                                                  pb.localSubmitter[l]),
                                 pb.localSubmitter[l]);
          pb.localSuccs[pb.localSubmitter[l]].push_back(l);
        }
      }
    }

    // Topological order (Kahn), then ALAP latest starts and top levels.
    std::vector<std::uint32_t> order;
    order.reserve(L);
    {
      std::vector<std::uint32_t> indeg(L);
      for (std::uint32_t l = 0; l < L; ++l) indeg[l] = static_cast<std::uint32_t>(pb.localDeps[l].size());
      for (std::uint32_t l = 0; l < L; ++l) {
        if (indeg[l] == 0) order.push_back(l);
      }
      for (std::size_t i = 0; i < order.size(); ++i) {
        for (std::uint32_t s : pb.localSuccs[order[i]]) {
          if (--indeg[s] == 0) order.push_back(s);
        }
      }
      if (order.size() != L) {
        return fail(ErrorCode::kValidation,
                    "hyperepoch '" + he.name + "': the dependency graph has a cycle");
      }
    }
    pb.latestStart.assign(L, 0);
    pb.topLevel.assign(L, 0);
    pb.succCount.assign(L, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const std::uint32_t l = *it;
      const std::uint32_t r = pb.runnables[l];
      const GraphRunnable& gr = g.runnables[r];
      std::int64_t lf = g.epochs[gr.epoch].periodNs;
      if (gr.deadlineNs != kNoDuration) lf = std::min(lf, gr.deadlineNs);
      for (std::uint32_t s : pb.localSuccs[l]) lf = std::min(lf, pb.latestStart[s]);
      pb.latestStart[l] = lf - wcet[r];
      pb.succCount[l] = static_cast<std::int64_t>(pb.localSuccs[l].size());
    }
    for (std::uint32_t l : order) {
      const std::uint32_t r = pb.runnables[l];
      std::int64_t t = g.runnables[r].startTimeNs;
      for (std::uint32_t d : pb.localDeps[l]) t = std::max(t, pb.topLevel[d] + wcet[pb.runnables[d]]);
      pb.topLevel[l] = t;
    }

    // Try the priority rules: insertion with each key, and the time-driven variants too where
    // the graph is small enough for their per-event scan of the available instances. Keep the
    // best: fewest boundary misses, fits the period, fewest deadline misses, shortest, then the
    // first rule. A schedule as short as the critical path (with releases) cannot be beaten.
    std::int64_t criticalPath = 0;
    for (const Node& nd : pb.nodes) {
      criticalPath = std::max(criticalPath, nd.frameNs + pb.topLevel[nd.local] + wcet[nd.runnable]);
    }
    std::vector<Rule> rules{{0, false}, {1, false}, {2, false}};
    if (pb.nodes.size() <= kTimedRuleLimit) {
      rules.push_back({0, true});
      rules.push_back({1, true});
      rules.push_back({2, true});
    }
    Attempt best;
    bool haveBest = false;
    auto score = [&](const Attempt& a) {
      return std::make_tuple(a.boundaryMisses, a.lengthNs > he.periodNs ? 1 : 0, a.deadlineMisses,
                             a.lengthNs);
    };
    // The resources this hyperepoch's requests may take (requests naming resources outside the
    // hyperepoch's list are the verifier's to report).
    std::vector<std::uint32_t> touched;
    for (std::uint32_t l = 0; l < L; ++l) {
      for (const auto& q : *requests[pb.runnables[l]]) {
        touched.insert(touched.end(), q.candidates.begin(), q.candidates.end());
      }
    }
    for (std::uint32_t r : he.resources) {
      if (r < free.size()) touched.push_back(r);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const Rule& rule : rules) {
      for (std::uint32_t r : touched) free[r] = FreeTime();
      Attempt a = ListScheduler(pb, rule, free).run();
      if (!haveBest || score(a) < score(best)) {
        best = std::move(a);
        haveBest = true;
      }
      if (best.boundaryMisses == 0 && best.deadlineMisses == 0 && best.lengthNs <= criticalPath) break;
    }

    // Errors: the hyperepoch does not fit its period, or a frame runs into its next frame.
    if (best.lengthNs > he.periodNs && !options.allowOverlength) {
      return fail(ErrorCode::kInfeasible, "hyperepoch '" + he.name + "': schedule length " +
                                              humanDuration(best.lengthNs) + " exceeds its period " +
                                              humanDuration(he.periodNs));
    }
    for (std::size_t i = 0; i < pb.nodes.size(); ++i) {
      const Node& nd = pb.nodes[i];
      const Placement& pl = best.placements[i];
      if (pl.endNs <= nd.boundaryNs) continue;
      const EpochInfo& ep = g.epochs[g.runnables[nd.runnable].epoch];
      // The last frame's boundary is the hyperepoch's end: overlength, accepted on request.
      if (options.allowOverlength && nd.frame + 1 == ep.frames) continue;
      return fail(ErrorCode::kInfeasible,
                  "epoch '" + epochName(g, g.runnables[nd.runnable].epoch) + "' frame " +
                      std::to_string(nd.frame) + ": runnable '" + g.runnables[nd.runnable].name +
                      "' ends at " + humanDuration(pl.endNs) + ", after the next frame's release at " +
                      humanDuration(nd.boundaryNs));
    }

    // Instances of this hyperepoch: by (start, end, placement order), which keeps zero-length
    // instances before a longer one starting at the same time and dependencies first.
    std::vector<std::uint32_t> idx(pb.nodes.size());
    for (std::uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Placement& pa = best.placements[a];
      const Placement& pb2 = best.placements[b];
      return std::tie(pa.startNs, pa.endNs, pa.seq) < std::tie(pb2.startNs, pb2.endNs, pb2.seq);
    });
    const auto first = static_cast<std::uint32_t>(out.instances.size());
    std::vector<std::uint32_t> globalId(pb.nodes.size());
    for (std::uint32_t i = 0; i < idx.size(); ++i) globalId[idx[i]] = first + i;
    for (std::uint32_t i : idx) {
      const Node& nd = pb.nodes[i];
      Placement& pl = best.placements[i];
      InstanceInfo inst;
      inst.runnable = nd.runnable;
      inst.frame = nd.frame;
      inst.startNs = pl.startNs;
      inst.endNs = pl.endNs;
      inst.resources = std::move(pl.resources);
      for (std::uint32_t d : pb.localDeps[nd.local]) inst.dependencies.push_back(globalId[pb.nodeOf(d, nd.frame)]);
      std::sort(inst.dependencies.begin(), inst.dependencies.end());
      out.instances.push_back(std::move(inst));
    }
    for (std::uint32_t l = 0; l < L; ++l) localOf[pb.runnables[l]] = kNone;
  }

  // Timelines: per resource, its instances in start order (the instance order is that already).
  std::vector<std::vector<std::uint32_t>> perResource(g.resources.size());
  for (std::uint32_t i = 0; i < out.instances.size(); ++i) {
    for (std::uint32_t r : out.instances[i].resources) perResource[r].push_back(i);
  }
  for (std::uint32_t r = 0; r < perResource.size(); ++r) {
    if (perResource[r].empty()) continue;
    TimelineInfo tl;
    tl.resource = r;
    tl.instances = std::move(perResource[r]);
    out.timelines.push_back(std::move(tl));
  }
  return out;
}

}  // namespace tactus::compiler
