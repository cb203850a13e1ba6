// The branch and bound's partial schedule: placing and undoing decisions, the bound on every
// completion (critical path with heads and tails, water-level load per candidate set, energetic
// reasoning near the leaves), and the children of a node in list-scheduler order.
//
// Defined in the header: every member is on the search's hot path and is inlined there.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "schedule/bounds.hpp"
#include "schedule/free_time.hpp"
#include "schedule/search_problem.hpp"

namespace tactus::compiler::schedule {

/// Up to this many unplaced instances per candidate set, the load bound also takes tail thresholds.
inline constexpr std::size_t kTwoSidedLimit = 64;
/// Up to this many unplaced instances, inner nodes also take energetic reasoning
/// (SearchState::energeticCut). Measured with stg-bench --budgets 1 -j 1: at 12 it closes three
/// of the four P = 8 rows that ended 1 above the optimum and cuts the P = 8 search time by a sixth.
inline constexpr std::size_t kInnerEnergeticLimit = 12;

/// One candidate decision: place `node` at `start` on the resources pool[resBegin, +resCount).
struct Child {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t key = 0;
  std::uint32_t topo = 0;
  std::uint32_t node = 0;
  std::uint32_t resBegin = 0;
  std::uint32_t resCount = 0;
};

/// The best complete schedule one search holds.
struct Incumbent {
  bool valid = false;
  Score score;
  std::vector<std::int64_t> start;
  std::vector<std::uint32_t> seq;
  std::vector<std::vector<std::uint32_t>> resources;
  std::uint64_t foundAtStep = 0;
  double foundAtSeconds = 0;
};

/// A partial schedule with undo, the bounds on its completions, and the children of its node
/// (the branch and bound's state).
class SearchState {
 public:
  explicit SearchState(const SProblem& sp)
      : sp_(sp),
        maxEnd_(sp.resourceCount, 0),
        submitted_(sp.resourceCount, 0),
        worksPlaced_(sp.resourceCount, 0),
        isSubmitter_(sp.n, 0),
        submission_(sp.n, 0),
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
      if (sp.submitter[i] != kNone) isSubmitter_[sp.submitter[i]] = 1;
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
      water_.reset(avail_);
      std::sort(items_.begin(), items_.end(),
                [&](std::uint32_t a, std::uint32_t b) { return est_[a] > est_[b] || (est_[a] == est_[b] && a < b); });
      std::int64_t work = 0;
      std::int64_t minTail = kInfinity;
      // Small sets also take the tail threshold q: only the work with a tail of at least q,
      // which must end q before the schedule does.
      const bool twoSided = items_.size() <= kTwoSidedLimit;
      tails_.clear();
      for (std::size_t x = 0; x < items_.size(); ++x) {
        const std::uint32_t i = items_[x];
        const std::int64_t t = est_[i];
        work += sp_.p[i];
        minTail = std::min(minTail, sp_.tail[i]);
        water_.lowerTo(t);
        lb = std::max(lb, water_.level(t, work) + minTail);
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
          lb = std::max(lb, water_.level(t, w) + q);
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
    // Stream order: a submitter takes the next submission number of its stream, a submittee
    // (placed only in its turn, see children) moves its stream's turn on.
    if (isSubmitter_[j]) {
      const std::uint32_t st = streamOf(j);
      if (st != kNone) submission_[j] = submitted_[st]++;
    } else if (sp_.submitter[j] != kNone) {
      const std::uint32_t st = streamOf(sp_.submitter[j]);
      if (st != kNone) ++worksPlaced_[st];
    }
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
    if (isSubmitter_[j]) {
      const std::uint32_t st = streamOf(j);
      if (st != kNone) --submitted_[st];
    } else if (sp_.submitter[j] != kNone) {
      const std::uint32_t st = streamOf(sp_.submitter[j]);
      if (st != kNone) --worksPlaced_[st];
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
      // A submittee runs on its submitter's stream's device, and in its stream's submission
      // order (FIFO): only once the work submitted before it on that stream is placed. It does
      // not hold the stream, which serialises the submitters only.
      std::uint32_t stream = kNone;
      if (sp_.submitter[j] != kNone) {
        stream = streamOf(sp_.submitter[j]);
        if (stream != kNone && worksPlaced_[stream] != submission_[sp_.submitter[j]]) continue;
      }
      const std::uint32_t device = stream != kNone ? index(g.resources[stream].device) : kNone;
      // Options per request, after the stream's constraints.
      reqOpts_.clear();
      for (std::size_t q = 0; q < reqs.size(); ++q) {
        reqOpts_.emplace_back();
        auto& mine = reqOpts_.back();
        for (const auto& opt : reqs[q]) {
          mine.emplace_back();
          for (std::uint32_t c : opt) {
            if (c == stream) continue;
            if (stream != kNone && q == 0 && isEngine(g.resources[c].kind) && c != device) continue;
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
        if (ok) {
          const std::int64_t e = s + sp_.p[j];
          // Canonical order: (start, end, topological index) increases along the path; except
          // that work of a stream follows the work submitted before it even where both are
          // zero-length at one time and the topological order says otherwise.
          if (s > sLast_ || std::make_pair(e, sp_.topo[j]) > std::make_pair(eLast_, topoLast_) ||
              (e == eLast_ && s == sLast_ && fifoFollows(j, undo_.empty() ? kNone : undo_.back().node))) {
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
  // The engine queue (CUDA stream, DLA handle, PVA stream) placed submitter `j` holds, or kNone.
  std::uint32_t streamOf(std::uint32_t j) const {
    for (std::uint32_t r : chosen_[j])
      if (isEngineQueue(sp_.graph->resources[r].kind)) return r;
    return kNone;
  }

  // Whether submittee `j` is the work submitted right after submittee `last` on their stream.
  bool fifoFollows(std::uint32_t j, std::uint32_t last) const {
    if (last == kNone || sp_.submitter[j] == kNone || sp_.submitter[last] == kNone) return false;
    const std::uint32_t a = sp_.submitter[last], b = sp_.submitter[j];
    if (!placed_[a] || !placed_[b]) return false;
    const std::uint32_t st = streamOf(b);
    return st != kNone && st == streamOf(a) && submission_[b] == submission_[a] + 1;
  }

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
  std::vector<std::uint32_t> submitted_;    // per stream: submitters placed on it
  std::vector<std::uint32_t> worksPlaced_;  // per stream: submittees placed (the FIFO's turn)
  std::vector<std::uint8_t> isSubmitter_;   // per node
  std::vector<std::uint32_t> submission_;   // per placed submitter: its number on its stream
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
  std::vector<std::int64_t> avail_;
  WaterLevel water_;
  std::vector<std::pair<std::int64_t, std::int64_t>> tails_;
  std::vector<EnergyJob> jobs_;  // scratch for energeticCut
  std::vector<std::int64_t> t1s_, t2s_;
  std::vector<std::vector<std::vector<std::uint32_t>>> reqOpts_;
  std::vector<std::size_t> odo_;
  std::vector<std::uint32_t> picked_;
};

}  // namespace tactus::compiler::schedule
