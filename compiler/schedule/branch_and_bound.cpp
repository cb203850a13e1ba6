// The search beyond the first schedules (-t, --search-steps, -j) for small hyperepochs.
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
// Where time runs both ways (reversedProblem), the same tree of the problem backwards is cut into
// pieces too, and both run in every round, sharing the best length: a schedule tight at its end
// is tight at the start backwards, where the time-ordered tree decides it early. Either tree
// exhausted proves the best optimal.
//
//   round 1: piece0 |#####|  piece1 |#####|  piece2 |#####|   -> merge best (piece order)
//   round 2: piece0 |#####|  piece1 |##| done  piece2 |#####| -> merge best ...
#include "schedule/branch_and_bound.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "schedule/bounds.hpp"
#include "schedule/search_state.hpp"
#include "schedule/workers.hpp"

namespace tactus::compiler::schedule {
namespace {

// A decision as replayed from a piece's root path.
struct Decision {
  std::uint32_t node = 0;
  std::int64_t start = 0;
  std::vector<std::uint32_t> resources;
};

// Discrepancy limits of the passes over a piece before the unlimited one (see Piece::run).
constexpr std::array<std::uint32_t, 2> kDiscrepancyLimits{1, 2};

// One subtree of the search, resumable: a root path and a depth-first stack under it.
class Piece {
 public:
  Piece(const SProblem& sp, std::vector<Decision> path, bool backwards)
      : sp_(sp), path_(std::move(path)), state_(sp), backwards_(backwards) {}

  // Replays the root path and opens its children; false when the subtree is cut at once.
  void open(const Score& best) {
    for (const Decision& d : path_)
      state_.apply(d.node, d.start, d.resources.data(), static_cast<std::uint32_t>(d.resources.size()));
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
      if (best.clean() &&
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
  bool backwards() const { return backwards_; }
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
  bool backwards_ = false;  // a piece of the problem backwards in time
  bool done_ = false;
  std::size_t limitIndex_ = 0;  // into kDiscrepancyLimits; past its end: no limit
  bool limitHit_ = false;       // this pass cut a child for the limit
  Incumbent local_;
};

constexpr std::size_t kPieces = 8;           // subtrees searched side by side
constexpr std::uint64_t kRoundSteps = 2048;  // steps per piece per round

// Cuts the tree near the root into at least kPieces subtrees (fewer when the tree is small),
// in depth-first order, dropping subtrees whose bound cannot beat `best`.
std::vector<std::vector<Decision>> cutPieces(const SProblem& sp, const Score& best) {
  std::vector<std::vector<Decision>> level{{}};
  for (int depthLimit = 0; depthLimit < 6 && level.size() < kPieces; ++depthLimit) {
    std::vector<std::vector<Decision>> next;
    bool expanded = false;
    for (const auto& path : level) {
      SearchState st(sp);
      for (const Decision& d : path)
        st.apply(d.node, d.start, d.resources.data(), static_cast<std::uint32_t>(d.resources.size()));
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
        child.push_back(
            {c.node, c.start,
             std::vector<std::uint32_t>(pool.begin() + c.resBegin, pool.begin() + c.resBegin + c.resCount)});
        next.push_back(std::move(child));
      }
    }
    level = std::move(next);
    if (!expanded) break;
  }
  return level;
}

}  // namespace

SearchResult branchAndBound(const SProblem& sp, const Attempt& first, const SearchLimits& lim) {
  SearchResult res;
  Score best = scoreOf(first, sp.periodNs);
  SearchState root(sp);
  const Score rootBound = root.bound();
  res.lowerBoundNs = rootLowerBound(sp, best.lengthNs);
  // Backwards too, from a schedule within its period (where the two problems score alike): its
  // root bound holds for the same optimum.
  std::optional<SProblem> back;
  if (best.clean()) back = reversedProblem(sp);
  if (back) res.lowerBoundNs = std::max(res.lowerBoundNs, rootLowerBound(*back, best.lengthNs));
  auto provenNow = [&] { return best.clean() && best.lengthNs <= res.lowerBoundNs; };
  Incumbent inc;
  bool incBackwards = false;
  if (provenNow() || rootBound >= best) {
    res.exhausted = true;
  } else {
    std::vector<Piece> pieces;
    for (auto& path : cutPieces(sp, best)) pieces.emplace_back(sp, std::move(path), false);
    if (back) {
      for (auto& path : cutPieces(*back, best)) pieces.emplace_back(*back, std::move(path), true);
    }
    for (Piece& pc : pieces) pc.open(best);
    // A piece whose root path is already a complete schedule ends at open(), holding it: merge
    // those before the rounds (which merge only the pieces they run), or a tree that small ends
    // "exhausted" without its best leaf and proves the first schedule optimal.
    auto merge = [&](const std::vector<std::size_t>& which) {
      // In piece order: the first strictly better schedule wins.
      for (std::size_t k : which) {
        Incumbent& loc = pieces[k].local();
        if (loc.valid && loc.score < best) {
          best = loc.score;
          inc = loc;
          incBackwards = pieces[k].backwards();
        }
      }
      for (Piece& pc : pieces) {
        if (pc.local().valid && best < pc.local().score) pc.local().valid = false;
      }
    };
    {
      std::vector<std::size_t> all(pieces.size());
      for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
      merge(all);
    }
    std::atomic<bool> timeUp{false};
    while (true) {
      std::vector<std::size_t> active;
      bool forwardLeft = false, backLeft = false;
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        if (pieces[k].done()) continue;
        active.push_back(k);
        (pieces[k].backwards() ? backLeft : forwardLeft) = true;
      }
      if (!forwardLeft || (back && !backLeft)) {  // one whole tree searched
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
      runWorkers(threads, work);
      for (std::uint64_t u : used) res.steps += u;
      merge(active);
      if (lim.onRound) lim.onRound(best.lengthNs, res.lowerBoundNs, res.steps);  // progress
    }
  }
  if (inc.valid) {
    res.improved = true;
    res.secondsToBest = inc.foundAtSeconds;
    Attempt& a = res.attempt;
    a.placements.resize(sp.n);
    // A schedule found backwards, of length C, runs forwards with start = C - end and its
    // placements in the reverse order.
    std::int64_t backLength = 0;
    for (std::uint32_t i = 0; i < sp.n; ++i) backLength = std::max(backLength, inc.start[i] + sp.p[i]);
    for (std::uint32_t i = 0; i < sp.n; ++i) {
      Placement& pl = a.placements[i];
      pl.startNs = incBackwards ? backLength - inc.start[i] - sp.p[i] : inc.start[i];
      pl.endNs = pl.startNs + sp.p[i];
      pl.seq = incBackwards ? sp.n - 1 - inc.seq[i] : inc.seq[i];
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

}  // namespace tactus::compiler::schedule
