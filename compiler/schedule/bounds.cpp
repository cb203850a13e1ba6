// Lower bounds shared by the search and the compile report.
#include "schedule/bounds.hpp"

#include <limits>

#include "schedule/search_problem.hpp"
#include "schedule/search_state.hpp"

namespace tactus::compiler::schedule {

std::int64_t gcd64(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

std::vector<std::uint32_t> topologicalOrder(const std::vector<std::vector<std::uint32_t>>& succs,
                                            std::vector<std::uint32_t> indegree) {
  const std::size_t n = succs.size();
  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) order.push_back(i);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (std::uint32_t s : succs[order[k]]) {
      if (--indegree[s] == 0) order.push_back(s);
    }
  }
  return order;
}

std::vector<std::int64_t> longestHeads(const std::vector<std::uint32_t>& order,
                                       const std::vector<std::vector<std::uint32_t>>& preds,
                                       const std::vector<std::int64_t>& release, const std::vector<std::int64_t>& p) {
  std::vector<std::int64_t> head(preds.size(), 0);
  for (std::uint32_t i : order) {
    std::int64_t t = release[i];
    for (std::uint32_t d : preds[i]) t = std::max(t, head[d] + p[d]);
    head[i] = t;
  }
  return head;
}

std::vector<std::int64_t> longestTails(const std::vector<std::uint32_t>& order,
                                       const std::vector<std::vector<std::uint32_t>>& succs,
                                       const std::vector<std::int64_t>& p) {
  std::vector<std::int64_t> tail(succs.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    std::int64_t t = 0;
    for (std::uint32_t s : succs[*it]) t = std::max(t, p[s] + tail[s]);
    tail[*it] = t;
  }
  return tail;
}

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
      // Saturated: a capacity beyond int64 holds any work of these jobs.
      std::int64_t cap = 0;
      if (__builtin_mul_overflow(m, t2 - t1, &cap)) cap = std::numeric_limits<std::int64_t>::max();
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

void strengthenHeadsTails(SProblem& sp) {
  const std::size_t n = sp.n;
  sp.head = longestHeads(sp.order, sp.preds, sp.release, sp.p);
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

}  // namespace tactus::compiler::schedule
