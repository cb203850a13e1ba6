// Client grouping: moves that put a client's instances on a core together, kept where the
// schedule stays as good (see grouping.hpp).
#include "schedule/grouping.hpp"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace tactus::compiler::schedule {
namespace {

// One hyperepoch's schedule as orders per resource, retimed as early as the orders allow.
class Grouper {
 public:
  Grouper(const Problem& pb, Attempt best) : pb_(pb), g_(*pb.graph), best_(std::move(best)) {
    const std::size_t n = pb.nodes.size();
    client_.resize(n);
    movable_.assign(n, 0);
    std::vector<char> onChain(g_.runnables.size(), 0);
    for (const GraphChain& c : g_.chains)
      for (RunnableId r : c.runnables) onChain[index(r)] = 1;
    for (std::uint32_t i = 0; i < n; ++i) {
      const GraphRunnable& r = g_.runnables[pb.nodes[i].runnable];
      client_[i] = index(r.client);
      const Placement& pl = best_.placements[i];
      const bool movable = r.kind == RunnableKind::kCpu && r.aliasGroup == kNone &&
                           onChain[index(pb.nodes[i].runnable)] == 0 && pl.resources.size() == 1 &&
                           g_.resources[ResourceId{*pl.resources.begin()}].kind == ResourceKind::kCpu;
      movable_[i] = movable ? 1 : 0;
    }
    // Dependencies per instance (same frame), as in the search's problem.
    preds_.resize(n);
    succs_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Node& nd = pb.nodes[i];
      for (std::uint32_t d : pb.localDeps[nd.local]) {
        const std::uint32_t p = pb.nodeOf(d, nd.frame);
        preds_[i].push_back(p);
        succs_[p].push_back(i);
      }
    }
    slotBase_.resize(n + 1);
    for (std::uint32_t i = 0; i < n; ++i) slotBase_[i + 1] = slotBase_[i] + best_.placements[i].resources.size();
    orders_.resize(g_.resources.size());
    std::vector<std::uint32_t> byStart(n);
    for (std::uint32_t i = 0; i < n; ++i) byStart[i] = i;
    std::sort(byStart.begin(), byStart.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Placement& x = best_.placements[a];
      const Placement& y = best_.placements[b];
      return std::tie(x.startNs, x.endNs, x.seq, a) < std::tie(y.startNs, y.endNs, y.seq, b);
    });
    for (std::uint32_t i : byStart)
      for (std::uint32_t r : best_.placements[i].resources) orders_[r].push_back(i);
    for (std::uint32_t r = 0; r < orders_.size(); ++r)
      if (g_.resources[ResourceId{r}].kind == ResourceKind::kCpu && orders_[r].size() > 1) cores_.push_back(r);
  }

  std::uint64_t switches() const {
    std::uint64_t s = 0;
    for (std::uint32_t r : cores_) s += switchesOn(orders_[r]);
    return s;
  }

  // Passes over every core until a pass keeps no move or the budget is spent.
  void run(std::uint64_t budget, GroupingInfo& info) {
    const std::uint64_t cost = pb_.nodes.size() + (slotBase_.back()) + edgeCount();
    if (cost * kGroupingMinMoves > budget) return;  // too few moves to matter: not worth the time
    bool kept = true;
    while (kept) {
      kept = false;
      for (std::uint32_t r : cores_) {
        for (std::size_t i = 1; i < orders_[r].size(); ++i) {
          if (spent_ + cost > budget) return;
          std::vector<std::uint32_t>& o = orders_[r];
          if (client_[o[i]] == client_[o[i - 1]] || movable_[o[i]] == 0) continue;
          std::size_t k = i;  // the run o[i..k] of one client, all movable
          while (k + 1 < o.size() && client_[o[k + 1]] == client_[o[i]] && movable_[o[k + 1]] != 0) ++k;
          // Back, after the client's previous instance on this core; else forward, before its next.
          std::size_t to = o.size();
          for (std::size_t j = i; j-- > 0;)
            if (client_[o[j]] == client_[o[i]]) {
              to = j + 1;
              break;
            }
          if (to == o.size())
            for (std::size_t j = k + 1; j < o.size(); ++j)
              if (client_[o[j]] == client_[o[i]]) {
                to = j;
                break;
              }
          if (to == o.size()) continue;
          ++info.movesTried;
          if (tryMove(r, i, k, to, cost)) {
            ++info.movesKept;
            kept = true;
          }
        }
      }
    }
  }

  Attempt take() { return std::move(best_); }

 private:
  std::uint64_t switchesOn(const std::vector<std::uint32_t>& o) const {
    std::uint64_t s = 0;
    for (std::size_t k = 1; k < o.size(); ++k) s += client_[o[k]] != client_[o[k - 1]];
    return s;
  }

  std::uint64_t edgeCount() const {
    std::uint64_t e = 0;
    for (const auto& p : preds_) e += p.size();
    return e;
  }

  // Moves o[i..k] of core `r` to before position `to` (outside i..k+1), retimes, and keeps the
  // move where the schedule is as good as before; otherwise puts the order back.
  bool tryMove(std::uint32_t r, std::size_t i, std::size_t k, std::size_t to, std::uint64_t cost) {
    std::vector<std::uint32_t>& o = orders_[r];
    const std::vector<std::uint32_t> saved = o;
    const std::uint64_t before = switchesOn(o);
    spent_ += 2 * o.size();
    const auto first = o.begin() + static_cast<std::ptrdiff_t>(i);
    const auto last = o.begin() + static_cast<std::ptrdiff_t>(k + 1);
    if (to < i) {
      std::rotate(o.begin() + static_cast<std::ptrdiff_t>(to), first, last);
    } else {
      std::rotate(first, last, o.begin() + static_cast<std::ptrdiff_t>(to));
    }
    if (switchesOn(o) >= before) {  // a client's instance there that may not move: no gain
      o = saved;
      return false;
    }
    spent_ += cost;
    if (retime() && !worse()) {
      for (std::uint32_t i = 0; i < best_.placements.size(); ++i) {
        Placement& pl = best_.placements[i];
        pl.endNs = start_[i] + (pl.endNs - pl.startNs);
        pl.startNs = start_[i];
        pl.seq = seq_[i];
      }
      best_.lengthNs = summary_.lengthNs;
      best_.boundaryMisses = summary_.boundaryMisses;
      best_.deadlineMisses = summary_.deadlineMisses;
      return true;
    }
    o = saved;
    return false;
  }

  // The retimed schedule (summary_) against the best: no longer (so no more over its period), no
  // more misses of either kind.
  bool worse() const {
    return summary_.lengthNs > best_.lengthNs || summary_.boundaryMisses > best_.boundaryMisses ||
           summary_.deadlineMisses > best_.deadlineMisses;
  }

  // Every instance as early as its release, its dependencies and its resources' orders allow
  // (start_, seq_: the order it was timed in, a topological one; summary_: length and misses);
  // an instance that may not move keeps its planned start and fails the retiming where that is
  // too early now. False also where the orders contradict the dependencies (a cycle).
  bool retime() {
    const std::size_t n = pb_.nodes.size();
    prev_.assign(slotBase_.back(), kNone);
    next_.assign(slotBase_.back(), kNone);
    for (std::uint32_t r = 0; r < orders_.size(); ++r) {
      const std::vector<std::uint32_t>& o = orders_[r];
      for (std::size_t k = 0; k < o.size(); ++k) {
        if (k > 0) prev_[slotOf(o[k], r)] = o[k - 1];
        if (k + 1 < o.size()) next_[slotOf(o[k], r)] = o[k + 1];
      }
    }
    indeg_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      indeg_[i] = static_cast<std::uint32_t>(preds_[i].size());
      for (std::size_t s = slotBase_[i]; s < slotBase_[i + 1]; ++s) indeg_[i] += prev_[s] != kNone;
    }
    queue_.clear();
    for (std::uint32_t i = 0; i < n; ++i)
      if (indeg_[i] == 0) queue_.push_back(i);
    start_.resize(n);
    end_.resize(n);
    seq_.resize(n);
    summary_.lengthNs = 0;
    summary_.boundaryMisses = summary_.deadlineMisses = 0;
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const std::uint32_t i = queue_[head];
      const Placement& old = best_.placements[i];
      std::int64_t start = pb_.nodes[i].releaseNs;
      for (std::uint32_t p : preds_[i]) start = std::max(start, end_[p]);
      for (std::size_t s = slotBase_[i]; s < slotBase_[i + 1]; ++s)
        if (prev_[s] != kNone) start = std::max(start, end_[prev_[s]]);
      if (movable_[i] == 0) {
        if (start > old.startNs) return false;
        start = old.startNs;
      }
      start_[i] = start;
      end_[i] = start + (old.endNs - old.startNs);
      seq_[i] = head;
      summary_.lengthNs = std::max(summary_.lengthNs, end_[i]);
      if (end_[i] > pb_.nodes[i].boundaryNs) ++summary_.boundaryMisses;
      const std::int64_t dl = pb_.localDeadline[pb_.nodes[i].local];
      if (dl != kNoDuration && end_[i] > pb_.nodes[i].frameNs + dl) ++summary_.deadlineMisses;
      for (std::uint32_t s : succs_[i])
        if (--indeg_[s] == 0) queue_.push_back(s);
      for (std::size_t s = slotBase_[i]; s < slotBase_[i + 1]; ++s)
        if (next_[s] != kNone && --indeg_[next_[s]] == 0) queue_.push_back(next_[s]);
    }
    return queue_.size() == n;
  }

  std::size_t slotOf(std::uint32_t node, std::uint32_t resource) const {
    const ResourceList& rs = best_.placements[node].resources;
    const auto at = std::find(rs.begin(), rs.end(), resource);
    return slotBase_[node] + static_cast<std::size_t>(at - rs.begin());
  }

  const Problem& pb_;
  const Graph& g_;
  Attempt best_;
  std::vector<std::uint32_t> client_;
  std::vector<char> movable_;
  std::vector<std::vector<std::uint32_t>> preds_, succs_;
  std::vector<std::size_t> slotBase_;               // node -> its first resource slot
  std::vector<std::vector<std::uint32_t>> orders_;  // resource -> its instances in order
  std::vector<std::uint32_t> cores_;                // CPU resources with two or more instances
  std::vector<std::uint32_t> prev_, next_, indeg_, queue_;
  std::vector<std::int64_t> start_, end_;
  std::vector<std::uint64_t> seq_;
  Attempt summary_;  // the last retiming's length and misses (no placements)
  std::uint64_t spent_ = 0;
};

}  // namespace

std::uint64_t clientSwitches(const Problem& pb, const Attempt& a) { return Grouper(pb, a).switches(); }

Attempt groupClients(const Problem& pb, Attempt best, GroupingInfo& info, std::uint64_t budget) {
  info = GroupingInfo{};
  if (pb.nodes.empty() || pb.hasCrossSocLag || best.placements.size() != pb.nodes.size()) return best;
  Grouper grouper(pb, std::move(best));
  info.switchesBefore = info.switchesAfter = grouper.switches();
  if (info.switchesBefore > 0) {
    grouper.run(budget, info);
    info.switchesAfter = grouper.switches();
  }
  return grouper.take();
}

}  // namespace tactus::compiler::schedule
