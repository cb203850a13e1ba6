// The scheduler: priority list scheduling with insertion into idle gaps, per hyperepoch.
#include "scheduler.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "report.hpp"
#include "tactus/core/text.hpp"

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
    // Exact (the earliest gap that fits) while the resource has few gaps, which covers every
    // hyperepoch the exact search handles. On a huge timeline the idle fragments behind the
    // frontier pile up and a full scan would make list scheduling quadratic, so the scan stops
    // after kMaxGapScan gaps and takes the unbounded last gap: still a valid placement, and the
    // same one for the same input.
    const bool capped = gaps_.size() > kExactGapCount;
    std::size_t scanned = 0;
    for (; it != gaps_.end(); ++it) {
      if (it->second - it->first >= w) {
        if (gapStart) *gapStart = it->first;
        return it->first;
      }
      if (capped && ++scanned == kMaxGapScan) {
        auto last = std::prev(gaps_.end());
        if (gapStart) *gapStart = last->first;
        return last->first;
      }
    }
    return kInfinity;  // unreachable: the last gap is unbounded
  }

  /// Gaps on a resource up to which fit() is exact.
  static constexpr std::size_t kExactGapCount = 512;
  /// Gaps fit() scans beyond that before it takes the last, unbounded gap.
  static constexpr std::size_t kMaxGapScan = 32;

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
  std::vector<std::int64_t> localDeadline; // local: Deadline from the frame release, or kNoDuration

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
  // When set, replaces the first key per instance (perturbed priorities of the improvement
  // search for large hyperepochs); the latest start stays the second key.
  const std::vector<std::int64_t>* keyOverride = nullptr;
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
    if (rule_.keyOverride != nullptr) {
      k.key1 = (*rule_.keyOverride)[n];
      k.key2 = ls;
    } else switch (rule_.key) {
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
    const std::int64_t w = (*pb_.wcet)[nd.runnable];
    Placement& pl = at_.placements[n];
    pl.startNs = c.start;
    pl.endNs = c.start + w;
    pl.seq = seq_++;
    pl.resources = std::move(c.resources);
    for (std::uint32_t r : pl.resources) free_[r].reserve(pl.startNs, w);
    at_.lengthNs = std::max(at_.lengthNs, pl.endNs);
    if (pl.endNs > nd.boundaryNs) ++at_.boundaryMisses;
    const std::int64_t dl = pb_.localDeadline[nd.local];
    if (dl != kNoDuration && pl.endNs > nd.frameNs + dl) ++at_.deadlineMisses;
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

// ---------------------------------------------------------------------------------------------
// The search beyond the first schedules (-t, --search-steps, -j).
//
// Branch and bound over time-ordered list-scheduling decisions. A node is a partial schedule
// built by placing instances one at a time, each at its earliest start on the resources chosen,
// never before the previous placement's start. Every schedule can be left-shifted and rebuilt
// that way without getting longer (sort it by (start, end, topological index) and replay), so
// the tree holds an optimal schedule; the order (start, end, topological index) of the
// placements is enforced, which removes the permutations of one schedule. Among the candidates
// of a request only resources that differ somewhere in the hyperepoch's requests are branched
// on; equivalent ones (e.g. idle identical cores) are one branch. Children are ordered like the
// time-driven list scheduler (earliest start, then latest start), so the first leaf is a list
// schedule. The tree is cut into pieces (subtrees near the root) that run in rounds of a fixed
// number of steps; after each round the best schedule of all pieces becomes everyone's bound.
// Pieces and rounds do not depend on -j, so a step budget gives the same schedule for any -j.
//
//   round 1: piece0 |#####|  piece1 |#####|  piece2 |#####|   -> merge best (piece order)
//   round 2: piece0 |#####|  piece1 |##| done  piece2 |#####| -> merge best ...

using Clock = std::chrono::steady_clock;

// The lexicographic objective: boundary misses, longer than the period, deadline misses, length.
struct Score {
  std::uint64_t boundaryMisses = 0;
  int over = 0;
  std::uint64_t deadlineMisses = 0;
  std::int64_t lengthNs = 0;
  auto tie() const { return std::make_tuple(boundaryMisses, over, deadlineMisses, lengthNs); }
  bool operator<(const Score& o) const { return tie() < o.tie(); }
  bool operator>=(const Score& o) const { return !(*this < o); }
};

Score scoreOf(const Attempt& a, std::int64_t periodNs) {
  return {a.boundaryMisses, a.lengthNs > periodNs ? 1 : 0, a.deadlineMisses, a.lengthNs};
}

std::int64_t roundUp(std::int64_t v, std::int64_t grain) {
  if (grain <= 1 || v <= 0) return v;
  return (v + grain - 1) / grain * grain;
}

// Limits of one hyperepoch's search.
struct SearchLimits {
  std::uint64_t steps = 0;  // 0 = no step limit
  bool timed = false;
  Clock::time_point deadline{};
  Clock::time_point started{};
  int workers = 1;
  bool allowOverlength = false;
};

// What one hyperepoch's search found.
struct SearchResult {
  bool improved = false;
  Attempt attempt;
  std::int64_t lowerBoundNs = 0;
  bool exhausted = false;
  std::uint64_t steps = 0;
  double secondsToBest = 0;
};

// Up to this many unplaced instances per candidate set, the load bound also takes tail thresholds.
constexpr std::size_t kTwoSidedLimit = 64;
// Up to this many unplaced instances, inner nodes also take energetic reasoning
// (SearchState::energeticCut). Measured with stg-bench --budgets 1 -j 1: at 12 it closes three
// of the four P = 8 rows that ended 1 above the optimum and cuts the P = 8 search time by a sixth.
constexpr std::size_t kInnerEnergeticLimit = 12;

// The hyperepoch's instances as the branch and bound sees them.
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

std::int64_t gcd64(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

void strengthenHeadsTails(SProblem& sp);

SProblem buildSearchProblem(const Problem& pb, std::int64_t periodNs) {
  const Graph& g = *pb.graph;
  SProblem sp;
  sp.graph = &g;
  sp.periodNs = periodNs;
  sp.resourceCount = g.resources.size();
  const std::size_t n = pb.nodes.size();
  sp.n = n;
  sp.p.resize(n);
  sp.release.resize(n);
  sp.boundary.resize(n);
  sp.deadline.resize(n);
  sp.key.resize(n);
  sp.preds.resize(n);
  sp.succs.resize(n);
  sp.submitter.assign(n, kNone);
  sp.options.resize(n);
  std::int64_t grain = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Node& nd = pb.nodes[i];
    const GraphRunnable& gr = g.runnables[nd.runnable];
    sp.p[i] = (*pb.wcet)[nd.runnable];
    sp.release[i] = nd.releaseNs;
    sp.boundary[i] = nd.boundaryNs;
    const std::int64_t dl = pb.localDeadline[nd.local];
    sp.deadline[i] = dl != kNoDuration ? nd.frameNs + dl : kInfinity;
    if (dl != kNoDuration) sp.anyDeadline = true;
    sp.key[i] = nd.frameNs + pb.latestStart[nd.local];
    for (std::uint32_t d : pb.localDeps[nd.local]) sp.preds[i].push_back(pb.nodeOf(d, nd.frame));
    for (std::uint32_t s : pb.localSuccs[nd.local]) sp.succs[i].push_back(pb.nodeOf(s, nd.frame));
    if (gr.kind == RunnableKind::kSubmittee && pb.localSubmitter[nd.local] != kNone) {
      sp.submitter[i] = pb.nodeOf(pb.localSubmitter[nd.local], nd.frame);
    }
    grain = gcd64(grain, sp.p[i]);
    grain = gcd64(grain, sp.release[i]);
  }
  sp.grain = grain > 0 ? grain : 1;

  // Topological order (Kahn, by node index) and tails.
  std::vector<std::uint32_t> indeg(n);
  for (std::uint32_t i = 0; i < n; ++i) indeg[i] = static_cast<std::uint32_t>(sp.preds[i].size());
  for (std::uint32_t i = 0; i < n; ++i) {
    if (indeg[i] == 0) sp.order.push_back(i);
  }
  for (std::size_t k = 0; k < sp.order.size(); ++k) {
    for (std::uint32_t s : sp.succs[sp.order[k]]) {
      if (--indeg[s] == 0) sp.order.push_back(s);
    }
  }
  sp.topo.assign(n, 0);
  for (std::uint32_t k = 0; k < sp.order.size(); ++k) sp.topo[sp.order[k]] = k;
  sp.tail.assign(n, 0);
  for (auto it = sp.order.rbegin(); it != sp.order.rend(); ++it) {
    std::int64_t t = 0;
    for (std::uint32_t s : sp.succs[*it]) t = std::max(t, sp.p[s] + sp.tail[s]);
    sp.tail[*it] = t;
  }

  // Candidate sets, and resource classes: two resources are equivalent when every candidate
  // set holds both or neither and neither is tied to a stream/device pairing.
  std::map<std::vector<std::uint32_t>, std::uint32_t> setIds;
  std::vector<std::vector<std::vector<std::uint32_t>>> nodeSets(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (const ResourceRequest& q : *(*pb.requests)[pb.nodes[i].runnable]) {
      std::vector<std::uint32_t> set = q.candidates;
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      setIds.emplace(set, static_cast<std::uint32_t>(setIds.size()));
      nodeSets[i].push_back(std::move(set));
    }
  }
  std::vector<std::vector<std::uint32_t>> signature(sp.resourceCount);
  for (const auto& [set, id] : setIds) {
    for (std::uint32_t r : set) signature[r].push_back(id);
  }
  for (std::uint32_t r = 0; r < sp.resourceCount; ++r) {
    const ResourceInfo& ri = g.resources[r];
    if (ri.kind == ResourceKind::kCudaStream) {
      signature[r].push_back(0x80000000u | r);
      if (ri.device != kNone && ri.device < sp.resourceCount) signature[ri.device].push_back(0x40000000u | ri.device);
    }
  }
  std::map<std::vector<std::uint32_t>, std::uint32_t> classIds;
  std::vector<std::uint32_t> classOf(sp.resourceCount);
  for (std::uint32_t r = 0; r < sp.resourceCount; ++r) {
    std::sort(signature[r].begin(), signature[r].end());
    classOf[r] = classIds.emplace(signature[r], static_cast<std::uint32_t>(classIds.size())).first->second;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    for (const auto& set : nodeSets[i]) {
      std::vector<std::vector<std::uint32_t>> opts;
      std::vector<std::uint32_t> optClass;
      for (std::uint32_t r : set) {
        auto it = std::find(optClass.begin(), optClass.end(), classOf[r]);
        if (it == optClass.end()) {
          optClass.push_back(classOf[r]);
          opts.push_back({r});
        } else {
          opts[static_cast<std::size_t>(it - optClass.begin())].push_back(r);
        }
      }
      sp.options[i].push_back(std::move(opts));
    }
  }

  // Load sets: every candidate set, with the nodes that have a request confined to it.
  for (const auto& [set, id] : setIds) {
    (void)id;
    std::vector<std::uint32_t> nodes;
    for (std::uint32_t i = 0; i < n; ++i) {
      for (const auto& own : nodeSets[i]) {
        if (!own.empty() && std::includes(set.begin(), set.end(), own.begin(), own.end())) {
          nodes.push_back(i);
          break;
        }
      }
    }
    if (nodes.empty()) continue;
    sp.loadSets.push_back(set);
    sp.loadSetNodes.push_back(std::move(nodes));
  }
  strengthenHeadsTails(sp);
  return sp;
}

// One candidate decision: place `node` at `start` on the resources pool[resBegin, +resCount).
struct Child {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t key = 0;
  std::uint32_t topo = 0;
  std::uint32_t node = 0;
  std::uint32_t resBegin = 0;
  std::uint32_t resCount = 0;
};

// A decision as replayed from a piece's root path.
struct Decision {
  std::uint32_t node = 0;
  std::int64_t start = 0;
  std::vector<std::uint32_t> resources;
};

// The best complete schedule one search holds.
struct Incumbent {
  bool valid = false;
  Score score;
  std::vector<std::int64_t> start;
  std::vector<std::uint32_t> seq;
  std::vector<std::vector<std::uint32_t>> resources;
  std::uint64_t foundAtStep = 0;
  double foundAtSeconds = 0;
};

// A partial schedule with undo, the bounds on its completions, and the depth-first search.
// A job for energetic reasoning: (release, due, work) on one set of identical resources.
using EnergyJob = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

// Energetic reasoning: false when a job cannot fit its window, or when some interval [t1, t2)
// must hold more work than the m resources offer, m (t2 - t1). Only the bounds of windows need
// checking as t1 and t2. `t1s`, `t2s` are scratch buffers.
bool energyFits(const std::vector<EnergyJob>& jobs, std::int64_t m, std::vector<std::int64_t>& t1s,
                std::vector<std::int64_t>& t2s) {
  t1s.clear();
  t2s.clear();
  for (const auto& [r, d, p] : jobs) {
    if (r + p > d) return false;
    t1s.push_back(r);
    t1s.push_back(d - p);
    t2s.push_back(d);
    t2s.push_back(r + p);
  }
  std::sort(t1s.begin(), t1s.end());
  t1s.erase(std::unique(t1s.begin(), t1s.end()), t1s.end());
  std::sort(t2s.begin(), t2s.end());
  t2s.erase(std::unique(t2s.begin(), t2s.end()), t2s.end());
  for (std::int64_t t1 : t1s) {
    for (std::int64_t t2 : t2s) {
      if (t2 <= t1) continue;
      const std::int64_t cap = m * (t2 - t1);
      std::int64_t energy = 0;
      for (const auto& [r, d, p] : jobs) {
        const std::int64_t e = std::min({p, t2 - t1, r + p - t1, t2 - d + p});
        if (e > 0) energy += e;
        if (energy > cap) return false;
      }
    }
  }
  return true;
}

class SearchState {
 public:
  explicit SearchState(const SProblem& sp)
      : sp_(sp),
        maxEnd_(sp.resourceCount, 0),
        start_(sp.n, 0),
        end_(sp.n, 0),
        placed_(sp.n, 0),
        waiting_(sp.n, 0),
        chosen_(sp.n),
        est_(sp.n, 0),
        frames_(sp.n + 2) {
    for (std::uint32_t i = 0; i < sp.n; ++i) {
      waiting_[i] = static_cast<std::uint32_t>(sp.preds[i].size());
      if (waiting_[i] == 0) ready_.push_back(i);
    }
  }

  // Lower bound on the score of every completion of the current partial schedule.
  Score bound() {
    std::uint64_t bm = bm_, dm = dm_;
    std::int64_t lb = makespan_;
    for (std::uint32_t i : sp_.order) {
      if (placed_[i]) continue;
      std::int64_t t = std::max({sp_.release[i], sp_.head[i], sLast_});
      for (std::uint32_t d : sp_.preds[i]) t = std::max(t, placed_[d] ? end_[d] : est_[d] + sp_.p[d]);
      est_[i] = t;
      const std::int64_t e = t + sp_.p[i];
      lb = std::max(lb, e + sp_.tail[i]);
      if (e > sp_.boundary[i]) ++bm;
      if (e > sp_.deadline[i]) ++dm;
    }
    // Per candidate set S of m resources: the unplaced work confined to S that cannot start
    // before t, on resources free from a_r = max(their last end, the last start, t), ends no
    // earlier than the water level F with sum over r of max(0, F - a_r) = work; the schedule
    // then needs the shortest tail among that work after F; maximised over t. (Not the mean
    // of the a_r plus work over m: a resource busy long after F would add to it, and the
    // tail of work that can finish early elsewhere does not follow a busy resource.)
    for (std::size_t k = 0; k < sp_.loadSets.size(); ++k) {
      items_.clear();
      for (std::uint32_t i : sp_.loadSetNodes[k]) {
        if (!placed_[i]) items_.push_back(i);
      }
      if (items_.empty()) continue;
      const auto& set = sp_.loadSets[k];
      avail_.clear();
      for (std::uint32_t r : set) avail_.push_back(std::max(maxEnd_[r], sLast_));
      std::sort(avail_.begin(), avail_.end());
      prefix_.assign(avail_.size() + 1, 0);
      for (std::size_t a = 0; a < avail_.size(); ++a) prefix_[a + 1] = prefix_[a] + avail_[a];
      std::sort(items_.begin(), items_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return est_[a] > est_[b] || (est_[a] == est_[b] && a < b);
      });
      std::int64_t work = 0;
      std::int64_t minTail = kInfinity;
      std::size_t below = avail_.size();  // resources free before t: avail_[0, below)
      // The water level of `w` on the resources free from max(avail_, t), ascending.
      auto level = [&](std::int64_t t, std::int64_t w) {
        const std::size_t total = avail_.size();
        for (std::size_t k = std::max<std::size_t>(below, 1); k <= total; ++k) {
          const std::int64_t filled = static_cast<std::int64_t>(std::min(k, below)) * t +
                                      (k > below ? prefix_[k] - prefix_[below] : 0);
          const auto kk = static_cast<std::int64_t>(k);
          const std::int64_t f = (w + filled + kk - 1) / kk;
          if (k == total || f <= std::max(avail_[k], t)) return f;
        }
        return t;
      };
      // Small sets also take the tail threshold q: only the work with a tail of at least q,
      // which must end q before the schedule does.
      const bool twoSided = items_.size() <= kTwoSidedLimit;
      tails_.clear();
      for (std::size_t x = 0; x < items_.size(); ++x) {
        const std::uint32_t i = items_[x];
        const std::int64_t t = est_[i];
        work += sp_.p[i];
        minTail = std::min(minTail, sp_.tail[i]);
        while (below > 0 && avail_[below - 1] >= t) --below;
        lb = std::max(lb, level(t, work) + minTail);
        if (!twoSided) continue;
        // Keep (tail, p) sorted by tail, largest first.
        std::pair<std::int64_t, std::int64_t> item{sp_.tail[i], sp_.p[i]};
        tails_.insert(std::upper_bound(tails_.begin(), tails_.end(), item,
                                       [](const auto& a, const auto& b) { return a.first > b.first; }),
                      item);
        if (x + 1 < items_.size() && est_[items_[x + 1]] == t) continue;  // same t: add all first
        std::int64_t w = 0;
        for (const auto& [q, pq] : tails_) {
          w += pq;
          lb = std::max(lb, level(t, w) + q);
        }
      }
    }
    lb = roundUp(lb, sp_.grain);
    return {bm, lb > sp_.periodNs ? 1 : 0, dm, lb};
  }

  // Energetic reasoning at an inner node with few instances left (after bound(), whose
  // earliest starts it uses): true when no completion is shorter than `best` with no misses.
  // Per candidate set, the unplaced instances confined to it run inside [est, C - tail) for
  // C = best - 1, and each resource of the set is taken from the last start until it is free.
  bool energeticCut(const Score& best) {
    if (best.boundaryMisses != 0 || best.over != 0 || best.deadlineMisses != 0) return false;
    const std::size_t left = sp_.n - placedCount_;
    if (left < 2 || left > kInnerEnergeticLimit) return false;
    const std::int64_t C = best.lengthNs - 1;
    for (std::size_t k = 0; k < sp_.loadSets.size(); ++k) {
      jobs_.clear();
      for (std::uint32_t i : sp_.loadSetNodes[k]) {
        if (placed_[i] || sp_.p[i] == 0) continue;
        jobs_.push_back({est_[i], C - sp_.tail[i], sp_.p[i]});
      }
      if (jobs_.size() < 2) continue;
      for (std::uint32_t r : sp_.loadSets[k]) {
        const std::int64_t a = std::max(maxEnd_[r], sLast_);
        if (a > sLast_) jobs_.push_back({sLast_, a, a - sLast_});
      }
      if (!energyFits(jobs_, static_cast<std::int64_t>(sp_.loadSets[k].size()), t1s_, t2s_)) return true;
    }
    return false;
  }

  // The score of the complete schedule.
  Score leafScore() const { return {bm_, makespan_ > sp_.periodNs ? 1 : 0, dm_, makespan_}; }
  bool complete() const { return placedCount_ == sp_.n; }

  // Places a decision; `undo` records what to restore.
  void apply(std::uint32_t j, std::int64_t s, const std::uint32_t* res, std::uint32_t resCount) {
    UndoRecord u;
    u.node = j;
    u.sLast = sLast_;
    u.eLast = eLast_;
    u.topoLast = topoLast_;
    u.makespan = makespan_;
    u.bm = bm_;
    u.dm = dm_;
    u.resBegin = static_cast<std::uint32_t>(undoRes_.size());
    const std::int64_t e = s + sp_.p[j];
    for (std::uint32_t k = 0; k < resCount; ++k) {
      undoRes_.push_back({res[k], maxEnd_[res[k]]});
      maxEnd_[res[k]] = std::max(maxEnd_[res[k]], e);
    }
    chosen_[j].assign(res, res + resCount);
    placed_[j] = 1;
    ++placedCount_;
    start_[j] = s;
    end_[j] = e;
    sLast_ = s;
    eLast_ = e;
    topoLast_ = sp_.topo[j];
    makespan_ = std::max(makespan_, e);
    if (e > sp_.boundary[j]) ++bm_;
    if (e > sp_.deadline[j]) ++dm_;
    auto pos = std::find(ready_.begin(), ready_.end(), j);
    u.readyPos = static_cast<std::uint32_t>(pos - ready_.begin());
    *pos = ready_.back();
    ready_.pop_back();
    u.pushed = 0;
    for (std::uint32_t s2 : sp_.succs[j]) {
      if (--waiting_[s2] == 0) {
        ready_.push_back(s2);
        ++u.pushed;
      }
    }
    undo_.push_back(u);
  }

  void undo() {
    const UndoRecord u = undo_.back();
    undo_.pop_back();
    const std::uint32_t j = u.node;
    for (std::uint32_t k = 0; k < u.pushed; ++k) ready_.pop_back();
    for (std::uint32_t s2 : sp_.succs[j]) ++waiting_[s2];
    ready_.push_back(ready_.size() > u.readyPos ? ready_[u.readyPos] : j);
    ready_[u.readyPos] = j;
    while (undoRes_.size() > u.resBegin) {
      maxEnd_[undoRes_.back().first] = undoRes_.back().second;
      undoRes_.pop_back();
    }
    placed_[j] = 0;
    --placedCount_;
    sLast_ = u.sLast;
    eLast_ = u.eLast;
    topoLast_ = u.topoLast;
    makespan_ = u.makespan;
    bm_ = u.bm;
    dm_ = u.dm;
  }

  // The decisions possible at the current node, best first, into `out` (resources in `pool`).
  void children(std::vector<Child>& out, std::vector<std::uint32_t>& pool) {
    out.clear();
    pool.clear();
    const Graph& g = *sp_.graph;
    for (std::uint32_t j : ready_) {
      std::int64_t readyT = std::max(sp_.release[j], sLast_);
      for (std::uint32_t d : sp_.preds[j]) readyT = std::max(readyT, end_[d]);
      const auto& reqs = sp_.options[j];
      // A submittee takes its submitter's stream and that stream's device.
      std::uint32_t stream = kNone;
      if (sp_.submitter[j] != kNone) {
        for (std::uint32_t r : chosen_[sp_.submitter[j]]) {
          if (g.resources[r].kind == ResourceKind::kCudaStream) {
            stream = r;
            break;
          }
        }
      }
      const std::uint32_t device = stream != kNone ? g.resources[stream].device : kNone;
      // Options per request, after the stream's constraints.
      reqOpts_.clear();
      for (std::size_t q = 0; q < reqs.size(); ++q) {
        reqOpts_.emplace_back();
        auto& mine = reqOpts_.back();
        for (const auto& opt : reqs[q]) {
          mine.emplace_back();
          for (std::uint32_t c : opt) {
            if (c == stream) continue;
            if (stream != kNone && q == 0 && g.resources[c].kind == ResourceKind::kGpu && c != device) continue;
            mine.back().push_back(c);
          }
          if (mine.back().empty()) mine.pop_back();
        }
      }
      // Every combination of options (an odometer over the requests).
      odo_.assign(reqOpts_.size(), 0);
      while (true) {
        picked_.clear();
        std::int64_t s = readyT;
        bool ok = true;
        for (std::size_t q = 0; q < reqOpts_.size(); ++q) {
          if (reqOpts_[q].empty()) continue;  // nothing left; the verifier reports it
          std::uint32_t best = kNone;
          for (std::uint32_t c : reqOpts_[q][odo_[q]]) {
            if (std::find(picked_.begin(), picked_.end(), c) != picked_.end()) continue;
            if (stream == c) continue;
            if (best == kNone || maxEnd_[c] < maxEnd_[best]) best = c;
          }
          if (best == kNone) {
            ok = false;
            break;
          }
          picked_.push_back(best);
          s = std::max(s, maxEnd_[best]);
        }
        if (ok && stream != kNone) {
          picked_.push_back(stream);
          s = std::max(s, maxEnd_[stream]);
        }
        if (ok) {
          const std::int64_t e = s + sp_.p[j];
          // Canonical order: (start, end, topological index) increases along the path.
          if (s > sLast_ || std::make_pair(e, sp_.topo[j]) > std::make_pair(eLast_, topoLast_)) {
            Child c;
            c.start = s;
            c.end = e;
            c.key = sp_.key[j];
            c.topo = sp_.topo[j];
            c.node = j;
            c.resBegin = static_cast<std::uint32_t>(pool.size());
            c.resCount = static_cast<std::uint32_t>(picked_.size());
            pool.insert(pool.end(), picked_.begin(), picked_.end());
            out.push_back(c);
          }
        }
        std::size_t q = 0;
        for (; q < odo_.size(); ++q) {
          if (reqOpts_[q].empty()) continue;
          if (++odo_[q] < reqOpts_[q].size()) break;
          odo_[q] = 0;
        }
        if (q == odo_.size()) break;
      }
    }
    std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) {
      return std::tie(a.start, a.key, a.topo, a.resBegin) < std::tie(b.start, b.key, b.topo, b.resBegin);
    });
  }

  // Copies the complete schedule into `inc`.
  void record(Incumbent& inc, const Score& score) const {
    inc.valid = true;
    inc.score = score;
    inc.start = start_;
    inc.resources = chosen_;
    inc.seq.assign(sp_.n, 0);
    for (std::uint32_t k = 0; k < undo_.size(); ++k) inc.seq[undo_[k].node] = k;
  }

  std::size_t depth() const { return undo_.size(); }
  std::int64_t tailOf(std::uint32_t j) const { return sp_.tail[j]; }
  std::int64_t makespan() const { return makespan_; }

  // Per-depth scratch for the depth-first search.
  struct Frame {
    std::vector<Child> children;
    std::vector<std::uint32_t> pool;
    std::size_t next = 0;
    std::uint32_t discrepancies = 0;  // children left on the path to this node other than the first
  };
  std::vector<Frame>& frames() { return frames_; }

 private:
  struct UndoRecord {
    std::uint32_t node = 0;
    std::int64_t sLast = 0, eLast = 0;
    std::uint32_t topoLast = 0;
    std::int64_t makespan = 0;
    std::uint64_t bm = 0, dm = 0;
    std::uint32_t resBegin = 0;
    std::uint32_t readyPos = 0;
    std::uint32_t pushed = 0;
  };

  const SProblem& sp_;
  std::vector<std::int64_t> maxEnd_;
  std::vector<std::int64_t> start_, end_;
  std::vector<std::uint8_t> placed_;
  std::vector<std::uint32_t> waiting_;
  std::vector<std::vector<std::uint32_t>> chosen_;
  std::vector<std::uint32_t> ready_;
  std::vector<std::int64_t> est_;
  std::size_t placedCount_ = 0;
  std::int64_t sLast_ = 0, eLast_ = -1;
  std::uint32_t topoLast_ = 0;
  std::int64_t makespan_ = 0;
  std::uint64_t bm_ = 0, dm_ = 0;
  std::vector<UndoRecord> undo_;
  std::vector<std::pair<std::uint32_t, std::int64_t>> undoRes_;
  std::vector<Frame> frames_;
  // scratch
  std::vector<std::uint32_t> items_;
  std::vector<std::int64_t> avail_, prefix_;
  std::vector<std::pair<std::int64_t, std::int64_t>> tails_;
  std::vector<EnergyJob> jobs_;  // scratch for energeticCut
  std::vector<std::int64_t> t1s_, t2s_;
  std::vector<std::vector<std::vector<std::uint32_t>>> reqOpts_;
  std::vector<std::size_t> odo_;
  std::vector<std::uint32_t> picked_;
};

// Up to this many instances per hyperepoch, heads and tails are strengthened by the work of
// ancestors and descendants (quadratic in the instances).
constexpr std::size_t kHeadTailLimit = 1500;
// Up to this many instances per candidate set, the root bound adds energetic reasoning (cubic).
constexpr std::size_t kEnergeticLimit = 160;

// Strengthens the static heads (earliest starts) and tails of `sp` where the graph is small
// enough: besides the longest paths, every instance starts after all its ancestors that are
// confined to a candidate set S of m resources have run, and those that cannot start before t
// need ceil(work / m) after t; tails likewise with descendants. Rounded up to the grain (the
// optimum is a left-shifted schedule, whose starts and ends are multiples of it).
void strengthenHeadsTails(SProblem& sp) {
  const std::size_t n = sp.n;
  sp.head.assign(n, 0);
  for (std::uint32_t i : sp.order) {
    std::int64_t t = sp.release[i];
    for (std::uint32_t d : sp.preds[i]) t = std::max(t, sp.head[d] + sp.p[d]);
    sp.head[i] = t;
  }
  if (n == 0 || n > kHeadTailLimit || sp.loadSets.empty()) return;
  const std::size_t words = (n + 63) / 64;
  // Membership of the nodes in each load set, and ancestor / descendant bit sets.
  std::vector<std::vector<std::uint8_t>> member(sp.loadSets.size(), std::vector<std::uint8_t>(n, 0));
  for (std::size_t k = 0; k < sp.loadSets.size(); ++k) {
    for (std::uint32_t i : sp.loadSetNodes[k]) member[k][i] = 1;
  }
  std::vector<std::uint64_t> anc(n * words, 0), desc(n * words, 0);
  for (std::uint32_t i : sp.order) {
    for (std::uint32_t d : sp.preds[i]) {
      for (std::size_t w = 0; w < words; ++w) anc[i * words + w] |= anc[d * words + w];
      anc[i * words + d / 64] |= std::uint64_t{1} << (d % 64);
    }
  }
  for (auto it = sp.order.rbegin(); it != sp.order.rend(); ++it) {
    const std::uint32_t i = *it;
    for (std::uint32_t s : sp.succs[i]) {
      for (std::size_t w = 0; w < words; ++w) desc[i * words + w] |= desc[s * words + w];
      desc[i * words + s / 64] |= std::uint64_t{1} << (s % 64);
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> items;  // (head or tail, p), largest first
  auto collect = [&](const std::vector<std::uint64_t>& bits, std::uint32_t i, std::size_t k,
                     const std::vector<std::int64_t>& key) {
    items.clear();
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t b = bits[i * words + w];
      while (b != 0) {
        const auto j = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b)));
        b &= b - 1;
        if (member[k][j] && sp.p[j] > 0) items.emplace_back(key[j], sp.p[j]);
      }
    }
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  };
  // Heads, in topological order (ancestors' heads are final when a node is reached).
  for (std::uint32_t i : sp.order) {
    std::int64_t t = sp.release[i];
    for (std::uint32_t d : sp.preds[i]) t = std::max(t, sp.head[d] + sp.p[d]);
    for (std::size_t k = 0; k < sp.loadSets.size(); ++k) {
      collect(anc, i, k, sp.head);
      const auto m = static_cast<std::int64_t>(sp.loadSets[k].size());
      std::int64_t work = 0;
      for (const auto& [h, p] : items) {
        work += p;
        t = std::max(t, h + (work + m - 1) / m);
      }
    }
    sp.head[i] = roundUp(t, sp.grain);
  }
  // Tails, in reverse topological order.
  for (auto it = sp.order.rbegin(); it != sp.order.rend(); ++it) {
    const std::uint32_t i = *it;
    std::int64_t q = sp.tail[i];
    for (std::size_t k = 0; k < sp.loadSets.size(); ++k) {
      collect(desc, i, k, sp.tail);
      const auto m = static_cast<std::int64_t>(sp.loadSets[k].size());
      std::int64_t work = 0;
      for (const auto& [tl, p] : items) {
        work += p;
        q = std::max(q, tl + (work + m - 1) / m);
      }
    }
    for (std::uint32_t s : sp.succs[i]) q = std::max(q, sp.p[s] + sp.tail[s]);
    sp.tail[i] = roundUp(q, sp.grain);
  }
}

// Energetic reasoning on one candidate set of m resources for a schedule length C: each
// instance runs inside [head, C - tail). False: no schedule of length C.
bool energeticFeasible(const SProblem& sp, const std::vector<std::uint32_t>& nodes, std::int64_t m, std::int64_t C,
                       std::vector<EnergyJob>& jobs, std::vector<std::int64_t>& t1s, std::vector<std::int64_t>& t2s) {
  jobs.clear();
  for (std::uint32_t i : nodes) {
    const std::int64_t r = sp.head[i], d = C - sp.tail[i], p = sp.p[i];
    if (r + p > d) return false;
    if (p != 0) jobs.push_back({r, d, p});
  }
  return energyFits(jobs, m, t1s, t2s);
}

// The best lower bound on the length of every schedule of the hyperepoch, at the root: the
// search state's bound (critical path with heads and tails, load with release and tail) and
// energetic reasoning per candidate set, searched by bisection on the length below `upperNs`
// (a length known to be reachable).
std::int64_t rootLowerBound(const SProblem& sp, std::int64_t upperNs) {
  SearchState root(sp);
  std::int64_t lb = root.bound().lengthNs;
  std::vector<EnergyJob> jobs;
  std::vector<std::int64_t> t1s, t2s;
  for (std::size_t k = 0; k < sp.loadSets.size(); ++k) {
    const auto& nodes = sp.loadSetNodes[k];
    if (nodes.size() > kEnergeticLimit || lb >= upperNs) continue;
    const auto m = static_cast<std::int64_t>(sp.loadSets[k].size());
    // Smallest C in [lb, upper] (in grains) that passes; C = upper passes by assumption.
    std::int64_t lo = lb / sp.grain, hi = upperNs / sp.grain;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (energeticFeasible(sp, nodes, m, mid * sp.grain, jobs, t1s, t2s)) hi = mid;
      else lo = mid + 1;
    }
    lb = std::max(lb, lo * sp.grain);
  }
  return lb;
}

// Discrepancy limits of the passes over a piece before the unlimited one (see Piece::run).
constexpr std::array<std::uint32_t, 2> kDiscrepancyLimits{1, 2};

// One subtree of the search, resumable: a root path and a depth-first stack under it.
class Piece {
 public:
  Piece(const SProblem& sp, std::vector<Decision> path) : sp_(sp), path_(std::move(path)), state_(sp) {}

  // Replays the root path and opens its children; false when the subtree is cut at once.
  void open(const Score& best) {
    for (const Decision& d : path_) state_.apply(d.node, d.start, d.resources.data(), static_cast<std::uint32_t>(d.resources.size()));
    rootDepth_ = state_.depth();
    const Score b = state_.bound();
    if (b >= bestOf(best)) {
      done_ = true;
      return;
    }
    if (state_.complete()) {
      consider(state_.leafScore(), 0, 0);
      done_ = true;
      return;
    }
    auto& f = state_.frames()[rootDepth_];
    state_.children(f.children, f.pool);
    f.next = 0;
  }

  // Runs up to `steps` placements (or until the deadline); returns the steps used.
  std::uint64_t run(std::uint64_t steps, const Score& globalBest, const SearchLimits& lim, std::uint64_t stepBase,
                    std::atomic<bool>& timeUp) {
    std::uint64_t used = 0;
    auto& frames = state_.frames();
    while (!done_ && used < steps) {
      if (lim.timed && (used & 255) == 0 && used > 0) {
        if (timeUp.load(std::memory_order_relaxed) || Clock::now() >= lim.deadline) {
          timeUp = true;
          break;
        }
      }
      const std::size_t d = state_.depth();
      auto& f = frames[d];
      // Limited discrepancy first: a pass may leave the first child (the list scheduler's
      // choice) only `limit` times along a path; later passes allow more, the last any.
      const bool overLimit = f.next > 0 && limitIndex_ < kDiscrepancyLimits.size() &&
                             f.discrepancies + 1 > kDiscrepancyLimits[limitIndex_];
      if (overLimit && f.next < f.children.size()) limitHit_ = true;
      if (f.next >= f.children.size() || overLimit) {
        if (d == rootDepth_) {
          if (limitHit_) {  // next pass, from the piece's root again
            ++limitIndex_;
            limitHit_ = false;
            f.next = 0;
            continue;
          }
          done_ = true;
          break;
        }
        state_.undo();
        continue;
      }
      const std::uint32_t discrepancies = f.discrepancies + (f.next > 0 ? 1 : 0);
      const Child c = f.children[f.next++];
      const Score best = bestOf(globalBest);
      if (best.boundaryMisses == 0 && best.over == 0 && best.deadlineMisses == 0 &&
          roundUp(std::max(state_.makespan(), c.end + state_.tailOf(c.node)), sp_.grain) >= best.lengthNs) {
        continue;
      }
      state_.apply(c.node, c.start, f.pool.data() + c.resBegin, c.resCount);
      ++used;
      if (state_.complete()) {
        consider(state_.leafScore(), stepBase + used, lim.timed ? 1 : 0, &lim);
        state_.undo();
        continue;
      }
      if (state_.bound() >= best || state_.energeticCut(best)) {
        state_.undo();
        continue;
      }
      auto& nf = frames[d + 1];
      state_.children(nf.children, nf.pool);
      nf.next = 0;
      nf.discrepancies = discrepancies;
    }
    return used;
  }

  bool done() const { return done_; }
  Incumbent& local() { return local_; }

 private:
  Score bestOf(const Score& global) const { return local_.valid && local_.score < global ? local_.score : global; }

  void consider(const Score& s, std::uint64_t step, int timed, const SearchLimits* lim = nullptr) {
    if (local_.valid && !(s < local_.score)) return;
    state_.record(local_, s);
    local_.foundAtStep = step;
    (void)timed;
    if (lim != nullptr) local_.foundAtSeconds = std::chrono::duration<double>(Clock::now() - lim->started).count();
  }

  const SProblem& sp_;
  std::vector<Decision> path_;
  SearchState state_;
  std::size_t rootDepth_ = 0;
  bool done_ = false;
  std::size_t limitIndex_ = 0;  // into kDiscrepancyLimits; past its end: no limit
  bool limitHit_ = false;       // this pass cut a child for the limit
  Incumbent local_;
};

constexpr std::size_t kPieces = 8;               // subtrees searched side by side
constexpr std::uint64_t kRoundSteps = 2048;      // steps per piece per round
constexpr std::size_t kSearchNodeLimit = 400;    // above this, improvement by perturbed lists

// Cuts the tree near the root into at least kPieces subtrees (fewer when the tree is small),
// in depth-first order, dropping subtrees whose bound cannot beat `best`.
std::vector<std::vector<Decision>> cutPieces(const SProblem& sp, const Score& best) {
  std::vector<std::vector<Decision>> level{{}};
  for (int depthLimit = 0; depthLimit < 6 && level.size() < kPieces; ++depthLimit) {
    std::vector<std::vector<Decision>> next;
    bool expanded = false;
    for (const auto& path : level) {
      SearchState st(sp);
      for (const Decision& d : path) st.apply(d.node, d.start, d.resources.data(), static_cast<std::uint32_t>(d.resources.size()));
      if (st.complete()) {
        next.push_back(path);
        continue;
      }
      std::vector<Child> kids;
      std::vector<std::uint32_t> pool;
      st.children(kids, pool);
      expanded = true;
      for (const Child& c : kids) {
        st.apply(c.node, c.start, pool.data() + c.resBegin, c.resCount);
        const bool keep = st.complete() ? st.leafScore() < best : st.bound() < best;
        st.undo();
        if (!keep) continue;
        auto child = path;
        child.push_back({c.node, c.start, std::vector<std::uint32_t>(pool.begin() + c.resBegin,
                                                                      pool.begin() + c.resBegin + c.resCount)});
        next.push_back(std::move(child));
      }
    }
    level = std::move(next);
    if (!expanded) break;
  }
  return level;
}

// Branch and bound for one hyperepoch, starting from the best list schedule `first`.
SearchResult branchAndBound(const SProblem& sp, const Attempt& first, const SearchLimits& lim) {
  SearchResult res;
  Score best = scoreOf(first, sp.periodNs);
  SearchState root(sp);
  const Score rootBound = root.bound();
  res.lowerBoundNs = rootLowerBound(sp, best.lengthNs);
  auto provenNow = [&] {
    return best.boundaryMisses == 0 && best.over == 0 && best.deadlineMisses == 0 && best.lengthNs <= res.lowerBoundNs;
  };
  Incumbent inc;
  if (provenNow() || rootBound >= best) {
    res.exhausted = true;
  } else {
    std::vector<Piece> pieces;
    for (auto& path : cutPieces(sp, best)) pieces.emplace_back(sp, std::move(path));
    for (Piece& pc : pieces) pc.open(best);
    std::atomic<bool> timeUp{false};
    while (true) {
      std::vector<std::size_t> active;
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        if (!pieces[k].done()) active.push_back(k);
      }
      if (active.empty()) {
        res.exhausted = true;
        break;
      }
      if (provenNow() || timeUp) break;
      std::uint64_t per = kRoundSteps;
      if (lim.steps > 0) {
        if (res.steps >= lim.steps) break;
        per = std::min<std::uint64_t>(per, std::max<std::uint64_t>(1, (lim.steps - res.steps) / active.size()));
      }
      std::vector<std::uint64_t> used(active.size(), 0);
      std::atomic<std::size_t> nextIdx{0};
      const Score roundBest = best;
      const std::uint64_t base = res.steps;
      auto work = [&] {
        for (std::size_t k = nextIdx++; k < active.size(); k = nextIdx++) {
          used[k] = pieces[active[k]].run(per, roundBest, lim, base + k * per, timeUp);
        }
      };
      const int threads = std::min<int>(lim.workers, static_cast<int>(active.size()));
      if (threads <= 1) {
        work();
      } else {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) pool.emplace_back(work);
        for (auto& t : pool) t.join();
      }
      for (std::uint64_t u : used) res.steps += u;
      // Merge in piece order: the first strictly better schedule wins.
      for (std::size_t k : active) {
        Incumbent& loc = pieces[k].local();
        if (loc.valid && loc.score < best) {
          best = loc.score;
          inc = loc;
        }
      }
      for (Piece& pc : pieces) {
        if (pc.local().valid && best < pc.local().score) pc.local().valid = false;
      }
    }
  }
  if (inc.valid) {
    res.improved = true;
    res.secondsToBest = inc.foundAtSeconds;
    Attempt& a = res.attempt;
    a.placements.resize(sp.n);
    for (std::uint32_t i = 0; i < sp.n; ++i) {
      Placement& pl = a.placements[i];
      pl.startNs = inc.start[i];
      pl.endNs = inc.start[i] + sp.p[i];
      pl.seq = inc.seq[i];
      pl.resources = inc.resources[i];
      a.lengthNs = std::max(a.lengthNs, pl.endNs);
      if (pl.endNs > sp.boundary[i]) ++a.boundaryMisses;
      if (pl.endNs > sp.deadline[i]) ++a.deadlineMisses;
    }
  }
  // An exhausted tree proves the best schedule optimal for the lexicographic objective; that
  // is a bound on the length of every valid schedule when no deadline shaped it.
  if (res.exhausted && !sp.anyDeadline && !lim.allowOverlength && best.boundaryMisses == 0 && best.over == 0) {
    res.lowerBoundNs = std::max(res.lowerBoundNs, best.lengthNs);
  }
  return res;
}

std::uint64_t splitMix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Improvement for hyperepochs too large for the tree: iterated list scheduling with perturbed
// priorities (latest start plus noise, or the best schedule's start order plus noise), in
// rounds of a fixed number of runs merged in run order, so a step budget is -j independent.
SearchResult perturbedLists(const Problem& pb, const SProblem& sp, const Attempt& first,
                            const std::vector<std::uint32_t>& touched, const SearchLimits& lim) {
  SearchResult res;
  res.lowerBoundNs = rootLowerBound(sp, first.lengthNs);
  Attempt best = first;
  Score bestScore = scoreOf(first, sp.periodNs);
  std::int64_t meanWcet = 1;
  {
    std::int64_t sum = 0;
    for (std::int64_t v : sp.p) sum += v;
    if (sp.n > 0) meanWcet = std::max<std::int64_t>(1, sum / static_cast<std::int64_t>(sp.n));
  }
  const std::uint64_t runSteps = std::max<std::size_t>(1, sp.n);
  constexpr std::uint64_t kRunsPerRound = 8;
  std::uint64_t runIndex = 0;
  while (true) {
    if (bestScore.boundaryMisses == 0 && bestScore.over == 0 && bestScore.deadlineMisses == 0 &&
        bestScore.lengthNs <= res.lowerBoundNs) {
      res.exhausted = true;
      break;
    }
    if (lim.timed && Clock::now() >= lim.deadline) break;
    std::uint64_t runs = kRunsPerRound;
    if (lim.steps > 0) {
      if (res.steps >= lim.steps) break;
      runs = std::min<std::uint64_t>(runs, (lim.steps - res.steps + runSteps - 1) / runSteps);
    }
    std::vector<Attempt> out(runs);
    std::vector<char> ran(runs, 0);
    std::atomic<std::size_t> nextIdx{0};
    const Attempt& ref = best;
    auto work = [&] {
      std::vector<FreeTime> free(pb.graph->resources.size());
      std::vector<std::int64_t> keys(sp.n);
      for (std::size_t k = nextIdx++; k < runs; k = nextIdx++) {
        if (lim.timed && Clock::now() >= lim.deadline) break;
        const std::uint64_t it = runIndex + k;
        std::uint64_t rng = splitMix(it + 1);
        const std::int64_t amp = meanWcet << ((it / 2) % 4);
        for (std::uint32_t i = 0; i < sp.n; ++i) {
          rng = splitMix(rng);
          const std::int64_t noise = static_cast<std::int64_t>(rng % static_cast<std::uint64_t>(amp));
          keys[i] = ((it & 1) != 0 ? ref.placements[i].startNs : sp.key[i]) + noise;
        }
        for (std::uint32_t r : touched) free[r] = FreeTime();
        Rule rule;
        rule.keyOverride = &keys;
        out[k] = ListScheduler(pb, rule, free).run();
        ran[k] = 1;
      }
    };
    const int threads = std::min<int>(lim.workers, static_cast<int>(runs));
    if (threads <= 1) {
      work();
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) pool.emplace_back(work);
      for (auto& t : pool) t.join();
    }
    for (std::uint64_t k = 0; k < runs; ++k) {
      if (!ran[k]) continue;
      res.steps += runSteps;
      const Score s = scoreOf(out[k], sp.periodNs);
      if (s < bestScore) {
        bestScore = s;
        best = std::move(out[k]);
        res.improved = true;
        res.secondsToBest = std::chrono::duration<double>(Clock::now() - lim.started).count();
      }
    }
    runIndex += runs;
  }
  if (res.improved) res.attempt = std::move(best);
  return res;
}

// Topological order (Kahn), then ALAP latest starts, top levels and successor counts of a
// hyperepoch's local runnables. Fails on a dependency cycle.
Result<void> computeLevels(Problem& pb, const HyperepochInfo& he) {
  const Graph& g = *pb.graph;
  const std::vector<std::int64_t>& wcet = *pb.wcet;
  const auto L = pb.runnables.size();
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
      return fail(ErrorCode::kValidation, "hyperepoch '" + he.name + "': the dependency graph has a cycle");
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
    if (pb.localDeadline[l] != kNoDuration) lf = std::min(lf, pb.localDeadline[l]);
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
  return {};
}

// The first schedules and, with a budget, the search, for one hyperepoch's problem: tries the
// priority rules (insertion with each key, and the time-driven variants too where the graph is
// small enough for their per-event scan of the available instances), keeps the best (fewest
// boundary misses, fits the period, fewest deadline misses, shortest, then the first rule),
// then improves it under the budget. A schedule as short as the critical path cannot be beaten.
Attempt solveHyperepoch(const Problem& pb, const HyperepochInfo& he, const ScheduleOptions& options,
                        const std::vector<std::uint32_t>& touched, std::vector<FreeTime>& free,
                        HyperepochSearchInfo& searchInfo) {
  const std::vector<std::int64_t>& wcet = *pb.wcet;
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
    return std::make_tuple(a.boundaryMisses, a.lengthNs > he.periodNs ? 1 : 0, a.deadlineMisses, a.lengthNs);
  };
  for (const Rule& rule : rules) {
    for (std::uint32_t r : touched) free[r] = FreeTime();
    Attempt a = ListScheduler(pb, rule, free).run();
    if (!haveBest || score(a) < score(best)) {
      best = std::move(a);
      haveBest = true;
    }
    if (best.boundaryMisses == 0 && best.deadlineMisses == 0 && best.lengthNs <= criticalPath) break;
  }

  searchInfo = HyperepochSearchInfo{};
  searchInfo.firstLengthNs = best.lengthNs;
  if ((options.timeBudgetSeconds > 0 || options.searchSteps > 0) && !pb.nodes.empty()) {
    SearchLimits lim;
    lim.started = Clock::now();
    lim.steps = options.searchSteps;
    lim.timed = options.timeBudgetSeconds > 0;
    if (lim.timed) {
      lim.deadline = lim.started + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(options.timeBudgetSeconds));
    }
    lim.workers = std::max(1, options.workers);
    lim.allowOverlength = options.allowOverlength;
    const SProblem sp = buildSearchProblem(pb, he.periodNs);
    SearchResult sr = pb.nodes.size() <= kSearchNodeLimit ? branchAndBound(sp, best, lim)
                                                          : perturbedLists(pb, sp, best, touched, lim);
    if (sr.improved && scoreOf(sr.attempt, he.periodNs) < scoreOf(best, he.periodNs)) best = std::move(sr.attempt);
    searchInfo.lowerBoundNs = sr.lowerBoundNs;
    searchInfo.steps = sr.steps;
    searchInfo.exhausted = sr.exhausted;
    searchInfo.secondsToBest = sr.improved ? sr.secondsToBest : 0;
    searchInfo.searched = true;
  }
  return best;
}

// A hyperepoch's problem with chains of short CPU runnables fused into one local runnable each.
struct FusedProblem {
  Problem pb;                                // the fused problem (heads stand for their chains)
  std::vector<std::int64_t> wcet;            // global WCETs, a head's = its chain's sum
  std::vector<std::uint32_t> fusedOf;        // unfused local -> fused local
  std::vector<std::int64_t> offsetNs;        // unfused local -> start offset inside its chain
  std::vector<std::uint32_t> position;       // unfused local -> position inside its chain
  std::vector<std::vector<std::uint32_t>> chains;  // the chains of two or more (unfused locals)
  std::uint32_t longest = 1;                 // longest chain
};

bool sameRequests(const std::vector<ResourceRequest>& a, const std::vector<ResourceRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t q = 0; q < a.size(); ++q) {
    if (a[q].candidates != b[q].candidates) return false;
  }
  return true;
}

// Fuses the chains of `pb`: a link a -> b where b is a's only successor and a is b's only
// predecessor, both plain CPU runnables (no submitter, submittee or round-robin group) of one
// client and epoch with the same requests and WCETs below `thresholdNs`; b has no StartTime
// and a no Deadline (so a chain keeps its head's StartTime and its tail's Deadline).
FusedProblem fuseChains(const Problem& pb, const std::vector<std::int64_t>& wcet, std::int64_t thresholdNs) {
  const Graph& g = *pb.graph;
  const auto L = static_cast<std::uint32_t>(pb.runnables.size());
  FusedProblem fp;
  auto fusible = [&](std::uint32_t l) {
    const GraphRunnable& r = g.runnables[pb.runnables[l]];
    return r.kind == RunnableKind::kCpu && r.aliasGroup == kNone && r.submits == kNone && r.submittedBy == kNone &&
           wcet[pb.runnables[l]] < thresholdNs;
  };
  auto linked = [&](std::uint32_t a) -> std::uint32_t {  // the b of a link a -> b, or kNone
    if (pb.localSuccs[a].size() != 1) return kNone;
    const std::uint32_t b = pb.localSuccs[a][0];
    if (pb.localDeps[b].size() != 1 || !fusible(a) || !fusible(b)) return kNone;
    const GraphRunnable& ra = g.runnables[pb.runnables[a]];
    const GraphRunnable& rb = g.runnables[pb.runnables[b]];
    if (ra.client != rb.client || ra.epoch != rb.epoch) return kNone;
    if (rb.startTimeNs != 0 || pb.localDeadline[a] != kNoDuration) return kNone;
    if (!sameRequests(*(*pb.requests)[pb.runnables[a]], *(*pb.requests)[pb.runnables[b]])) return kNone;
    return b;
  };
  std::vector<std::uint32_t> next(L, kNone);
  std::vector<std::uint8_t> hasPrev(L, 0);
  for (std::uint32_t l = 0; l < L; ++l) {
    next[l] = linked(l);
    if (next[l] != kNone) hasPrev[next[l]] = 1;
  }
  fp.fusedOf.assign(L, kNone);
  fp.offsetNs.assign(L, 0);
  fp.position.assign(L, 0);
  fp.wcet = wcet;
  Problem& f = fp.pb;
  f.graph = pb.graph;
  f.wcet = &fp.wcet;
  f.requests = pb.requests;
  for (std::uint32_t l = 0; l < L; ++l) {
    if (hasPrev[l]) continue;
    const auto id = static_cast<std::uint32_t>(f.runnables.size());
    const std::uint32_t head = pb.runnables[l];
    f.runnables.push_back(head);
    std::vector<std::uint32_t> chain;
    std::int64_t sum = 0;
    std::int64_t deadline = kNoDuration;
    for (std::uint32_t m = l; m != kNone; m = next[m]) {
      fp.fusedOf[m] = id;
      fp.offsetNs[m] = sum;
      fp.position[m] = static_cast<std::uint32_t>(chain.size());
      sum += wcet[pb.runnables[m]];
      deadline = pb.localDeadline[m];
      chain.push_back(m);
    }
    fp.wcet[head] = sum;
    f.localDeadline.push_back(deadline);
    fp.longest = std::max(fp.longest, static_cast<std::uint32_t>(chain.size()));
    if (chain.size() > 1) fp.chains.push_back(std::move(chain));
  }
  if (fp.chains.empty()) return fp;
  const auto F = static_cast<std::uint32_t>(f.runnables.size());
  f.localDeps.resize(F);
  f.localSuccs.resize(F);
  f.localSubmitter.assign(F, kNone);
  for (std::uint32_t l = 0; l < L; ++l) {
    const std::uint32_t fl = fp.fusedOf[l];
    for (std::uint32_t d : pb.localDeps[l]) {
      if (fp.fusedOf[d] != fl) f.localDeps[fl].push_back(fp.fusedOf[d]);
    }
    if (pb.localSubmitter[l] != kNone) f.localSubmitter[fl] = fp.fusedOf[pb.localSubmitter[l]];
  }
  for (std::uint32_t fl = 0; fl < F; ++fl) {
    auto& d = f.localDeps[fl];
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (std::uint32_t x : d) f.localSuccs[x].push_back(fl);
  }
  // Nodes: the heads' instances, in the unfused order (epoch by epoch, frame-major), so each
  // fused runnable's frames are again evenly strided.
  std::vector<std::uint32_t> nodeMap(pb.nodes.size(), kNone);
  for (std::uint32_t i = 0; i < pb.nodes.size(); ++i) {
    const Node& nd = pb.nodes[i];
    if (hasPrev[nd.local]) continue;
    nodeMap[i] = static_cast<std::uint32_t>(f.nodes.size());
    Node fn = nd;
    fn.local = fp.fusedOf[nd.local];
    f.nodes.push_back(fn);
  }
  f.nodeBase.assign(F, 0);
  f.nodeStride.assign(F, 1);
  for (std::uint32_t l = 0; l < L; ++l) {
    if (hasPrev[l]) continue;
    const std::uint32_t fl = fp.fusedOf[l];
    f.nodeBase[fl] = nodeMap[pb.nodeOf(l, 0)];
    const EpochInfo& ep = g.epochs[g.runnables[pb.runnables[l]].epoch];
    if (ep.frames > 1) f.nodeStride[fl] = nodeMap[pb.nodeOf(l, 1)] - f.nodeBase[fl];
  }
  return fp;
}

// Splits a schedule of the fused problem back: each chain member runs right after its
// predecessor on the same resources; the placement order keeps the chain's order.
Attempt splitFused(const Problem& pb, const FusedProblem& fp, const Attempt& fa) {
  const Graph& g = *pb.graph;
  Attempt a;
  a.placements.resize(pb.nodes.size());
  for (std::uint32_t i = 0; i < pb.nodes.size(); ++i) {
    const Node& nd = pb.nodes[i];
    const Placement& fpl = fa.placements[fp.pb.nodeOf(fp.fusedOf[nd.local], nd.frame)];
    Placement& pl = a.placements[i];
    pl.startNs = fpl.startNs + fp.offsetNs[nd.local];
    pl.endNs = pl.startNs + (*pb.wcet)[nd.runnable];
    pl.seq = fpl.seq * fp.longest + fp.position[nd.local];
    pl.resources = fpl.resources;
    a.lengthNs = std::max(a.lengthNs, pl.endNs);
    if (pl.endNs > nd.boundaryNs) ++a.boundaryMisses;
    const std::int64_t dl = g.runnables[nd.runnable].deadlineNs;
    if (dl != kNoDuration && pl.endNs > nd.frameNs + dl) ++a.deadlineMisses;
  }
  return a;
}

// Whether runnable fusion runs for a hyperepoch of `instances` unfused instances.
bool fusionApplies(const ScheduleOptions& options, std::size_t instances) {
  switch (options.fusion) {
    case Fusion::kOff: return false;
    case Fusion::kOn: return true;
    case Fusion::kAuto: break;
  }
  return instances > kSearchNodeLimit;
}

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

Result<Schedule> scheduleGraph(const Graph& graph, const ScheduleOptions& options, SearchInfo* info) {
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
  if (info != nullptr) info->hyperepochs.assign(g.hyperepochs.size(), {});

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

    pb.localDeadline.assign(L, kNoDuration);
    for (std::uint32_t l = 0; l < L; ++l) pb.localDeadline[l] = g.runnables[pb.runnables[l]].deadlineNs;
    if (auto ok = computeLevels(pb, he); !ok) return ok.error();

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

    // Runnable fusion (see ScheduleOptions::fusion): solve the fused problem, split it back.
    HyperepochSearchInfo searchInfo;
    Attempt best;
    bool fused = false;
    if (fusionApplies(options, pb.nodes.size())) {
      FusedProblem fp = fuseChains(pb, wcet, options.fusionThresholdNs);
      if (!fp.chains.empty()) {
        if (auto ok = computeLevels(fp.pb, he); !ok) return ok.error();
        Attempt fa = solveHyperepoch(fp.pb, he, options, touched, free, searchInfo);
        best = splitFused(pb, fp, fa);
        fused = true;
        if (searchInfo.searched) {
          // The fused problem's bounds and proofs hold for fused schedules only: the bound
          // reported is the unfused problem's, and fused search proves nothing about it.
          const SProblem sp = buildSearchProblem(pb, he.periodNs);
          searchInfo.lowerBoundNs = rootLowerBound(sp, best.lengthNs);
          searchInfo.exhausted = best.boundaryMisses == 0 && best.deadlineMisses == 0 &&
                                 best.lengthNs <= searchInfo.lowerBoundNs;
        }
      }
    }
    if (!fused) best = solveHyperepoch(pb, he, options, touched, free, searchInfo);
    if (info != nullptr) info->hyperepochs[h] = searchInfo;

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
