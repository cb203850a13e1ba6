// Lower bounds on a hyperepoch's schedule length, shared by the search and the compile report
// (one copy of each rule): longest paths (critical path, heads and tails), the water level of
// work on a candidate set of resources, energetic reasoning, and the grain every left-shifted
// schedule's starts and ends are multiples of.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace tactus::compiler::schedule {

struct SProblem;

/// Up to this many instances per hyperepoch, heads and tails are strengthened by the work of
/// ancestors and descendants (quadratic in the instances).
inline constexpr std::size_t kHeadTailLimit = 1500;
/// Up to this many instances per candidate set, the root bound adds energetic reasoning (cubic).
inline constexpr std::size_t kEnergeticLimit = 160;

/// Greatest common divisor, non-negative (gcd64(0, x) = |x|).
std::int64_t gcd64(std::int64_t a, std::int64_t b);

/// `v` rounded up to a multiple of `grain` (unchanged for grain <= 1 or v <= 0).
inline std::int64_t roundUp(std::int64_t v, std::int64_t grain) {
  if (grain <= 1 || v <= 0) return v;
  return (v + grain - 1) / grain * grain;
}

/// Kahn's topological order of a graph given its successors and in-degrees (consumed): the
/// sources by index, then each node once its last predecessor is ordered. Shorter than the
/// graph when it has a cycle.
std::vector<std::uint32_t> topologicalOrder(const std::vector<std::vector<std::uint32_t>>& succs,
                                            std::vector<std::uint32_t> indegree);

/// Heads along `order` (topological): head[i] = max(release[i], head[d] + p[d] over the
/// predecessors d); the earliest start of every node with releases and unlimited resources.
std::vector<std::int64_t> longestHeads(const std::vector<std::uint32_t>& order,
                                       const std::vector<std::vector<std::uint32_t>>& preds,
                                       const std::vector<std::int64_t>& release, const std::vector<std::int64_t>& p);

/// Tails along `order` (topological, walked backwards): tail[i] = max(p[s] + tail[s] over the
/// successors s); the least time a schedule needs after node i ends.
std::vector<std::int64_t> longestTails(const std::vector<std::uint32_t>& order,
                                       const std::vector<std::vector<std::uint32_t>>& succs,
                                       const std::vector<std::int64_t>& p);

/// The water level of work on one candidate set of m resources, each free from its own time
/// a_r: the earliest F with sum over r of max(0, F - max(a_r, t)) >= work, for work that cannot
/// start before t. The load bound of the set is level(t, work(t)) + the shortest tail of that
/// work, maximised over t; with every a_r = 0 and t >= 0 the level is t + ceil(work / m).
/// Thresholds t are visited in decreasing order (lowerTo).
class WaterLevel {
 public:
  /// Starts over with the resources' free-from times `avail` (any order; sorted here).
  void reset(std::vector<std::int64_t>& avail) {
    std::sort(avail.begin(), avail.end());
    avail_ = &avail;
    prefix_.assign(avail.size() + 1, 0);
    for (std::size_t a = 0; a < avail.size(); ++a) prefix_[a + 1] = prefix_[a] + avail[a];
    below_ = avail.size();
  }

  /// Moves the threshold down to t (never up): the resources free before t are avail[0, below).
  void lowerTo(std::int64_t t) {
    const auto& avail = *avail_;
    while (below_ > 0 && avail[below_ - 1] >= t) --below_;
  }

  /// The water level of `w` on the resources free from max(avail, t), for the t of lowerTo.
  std::int64_t level(std::int64_t t, std::int64_t w) const {
    const auto& avail = *avail_;
    const std::size_t total = avail.size();
    for (std::size_t k = std::max<std::size_t>(below_, 1); k <= total; ++k) {
      const std::int64_t filled =
          static_cast<std::int64_t>(std::min(k, below_)) * t + (k > below_ ? prefix_[k] - prefix_[below_] : 0);
      const auto kk = static_cast<std::int64_t>(k);
      const std::int64_t f = (w + filled + kk - 1) / kk;
      if (k == total || f <= std::max(avail[k], t)) return f;
    }
    return t;
  }

 private:
  const std::vector<std::int64_t>* avail_ = nullptr;
  std::vector<std::int64_t> prefix_;
  std::size_t below_ = 0;
};

/// A job for energetic reasoning: (release, due, work) on one set of identical resources.
using EnergyJob = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

/// Energetic reasoning: false when a job cannot fit its window, or when some interval [t1, t2)
/// must hold more work than the m resources offer, m (t2 - t1). Only the bounds of windows need
/// checking as t1 and t2. `t1s`, `t2s` are scratch buffers.
bool energyFits(const std::vector<EnergyJob>& jobs, std::int64_t m, std::vector<std::int64_t>& t1s,
                std::vector<std::int64_t>& t2s);

/// Strengthens the static heads (earliest starts) and tails of `sp` where the graph is small
/// enough: besides the longest paths, every instance starts after all its ancestors that are
/// confined to a candidate set S of m resources have run, and those that cannot start before t
/// need ceil(work / m) after t; tails likewise with descendants. Rounded up to the grain (the
/// optimum is a left-shifted schedule, whose starts and ends are multiples of it).
void strengthenHeadsTails(SProblem& sp);

/// Energetic reasoning on one candidate set of m resources for a schedule length C: each
/// instance runs inside [head, C - tail). False: no schedule of length C.
bool energeticFeasible(const SProblem& sp, const std::vector<std::uint32_t>& nodes, std::int64_t m, std::int64_t C,
                       std::vector<EnergyJob>& jobs, std::vector<std::int64_t>& t1s, std::vector<std::int64_t>& t2s);

/// The best lower bound on the length of every schedule of the hyperepoch, at the root: the
/// search state's bound (critical path with heads and tails, load with release and tail) and
/// energetic reasoning per candidate set, searched by bisection on the length below `upperNs`
/// (a length known to be reachable).
std::int64_t rootLowerBound(const SProblem& sp, std::int64_t upperNs);

}  // namespace tactus::compiler::schedule
