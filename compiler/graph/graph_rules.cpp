// Graph-level rules on a built Graph (no YAML).
#include "graph/graph_rules.hpp"

#include <algorithm>
#include <limits>

#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {
namespace {

using u32 = std::uint32_t;

// A kValidation error at `line` of the graph's file.
Error failAt(const Graph& g, std::int64_t line, const std::string& what) {
  return fail(ErrorCode::kValidation, g.sourceFile + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::string runnableName(const Graph& g, RunnableId r) {
  return g.clients[g.runnables[r].client].name + "." + g.runnables[r].name;
}

void sortUnique(std::vector<RunnableId>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

Result<void> redirectToGroups(Graph& g) {
  bool any = false;
  for (const GraphRunnable& gr : g.runnables) any = any || gr.aliasGroup != kNone;
  if (!any) return {};
  auto target = [&](RunnableId d) { return g.runnables[d].aliasGroup != kNone ? g.runnables[d].aliasGroup : d; };
  for (GraphRunnable& gr : g.runnables) {
    if (gr.aliasGroup != kNone) {
      GraphRunnable& group = g.runnables[gr.aliasGroup];
      for (RunnableId d : gr.dependencies) group.dependencies.push_back(target(d));
      gr.dependencies.clear();
    } else if (gr.kind != RunnableKind::kAliasGroup) {
      for (RunnableId& d : gr.dependencies) d = target(d);
      sortUnique(gr.dependencies);
    }
  }
  for (RunnableId r : g.runnables.ids()) {
    GraphRunnable& gr = g.runnables[r];
    if (gr.kind != RunnableKind::kAliasGroup) continue;
    gr.dependencies.erase(std::remove(gr.dependencies.begin(), gr.dependencies.end(), r), gr.dependencies.end());
    sortUnique(gr.dependencies);
  }
  for (const GraphRunnable& gr : g.runnables) {
    if (gr.kind != RunnableKind::kAliasGroup) continue;
    for (RunnableId d : gr.dependencies) {
      const GraphRunnable& p = g.runnables[d];
      if (p.kind == RunnableKind::kAliasGroup && p.steps.size() != gr.steps.size())
        return failAt(g, gr.loc.line,
                      "alias group " + quoted(gr.name) + " (" + std::to_string(gr.steps.size()) +
                          " steps) depends on alias group " + quoted(p.name) + " (" + std::to_string(p.steps.size()) +
                          " steps): round-robinned parents and children need equal step counts");
    }
  }
  return {};
}

namespace {

// The one engine queue (CUDA stream, DLA handle, PVA stream) a submitter is bound to, or kNone
// when its request leaves a choice.
ResourceId fixedStream(const GraphRunnable& r) {
  for (const ResourceRequest& q : r.resources)
    if (isEngineQueue(q.kind) && q.candidates.size() == 1) return q.candidates.front();
  return kNone;
}

// Forward reachability over dependency edges (d -> r when r depends on d), with the parent of
// every reached runnable, so that a path can be named.
class Reach {
 public:
  explicit Reach(const Graph& g) : g_(g), succ_(g.runnables.size()) {
    for (RunnableId r : g.runnables.ids())
      for (RunnableId d : g.runnables[r].dependencies) succ_[d].push_back(r);
  }
  // Everything that transitively depends on `from` (parent_ filled, `from` itself has kNone).
  void from(RunnableId root) {
    parent_.assign(g_.runnables.size(), kUnseen);
    parent_[root] = kNone;
    std::vector<RunnableId> todo{root};
    while (!todo.empty()) {
      const RunnableId x = todo.back();
      todo.pop_back();
      for (RunnableId y : succ_[x])
        if (parent_[y] == kUnseen) {
          parent_[y] = x;
          todo.push_back(y);
        }
    }
  }
  bool reached(RunnableId r) const { return parent_[r] != kUnseen; }
  // `'A.X' -> 'A.Y' -> 'B.Z'`: the path from the last root to `to` (reached).
  std::string path(RunnableId to) const {
    std::vector<RunnableId> rev;
    for (RunnableId x = to; x != kNone; x = parent_[x]) rev.push_back(x);
    std::string out;
    for (auto it = rev.rbegin(); it != rev.rend(); ++it)
      out += (out.empty() ? "" : " -> ") + quoted(runnableName(g_, *it));
    return out;
  }

 private:
  static constexpr RunnableId kUnseen{std::numeric_limits<u32>::max() - 1};
  const Graph& g_;
  IdVector<RunnableId, std::vector<RunnableId>> succ_;
  IdVector<RunnableId, RunnableId> parent_;
};

}  // namespace

Result<void> orderStreams(Graph& g) {
  // Submitters bound to one stream, per (stream, epoch), in declaration order.
  std::vector<std::pair<std::pair<ResourceId, EpochId>, RunnableId>> bound;  // ((stream, epoch), submitter)
  for (RunnableId r : g.runnables.ids()) {
    const GraphRunnable& gr = g.runnables[r];
    if (gr.kind != RunnableKind::kSubmitter || gr.submits == kNone) continue;
    const ResourceId st = fixedStream(gr);
    if (st != kNone) bound.push_back({{st, gr.epoch}, r});
  }
  std::sort(bound.begin(), bound.end());
  for (std::size_t lo = 0; lo < bound.size();) {
    std::size_t hi = lo;
    while (hi < bound.size() && bound[hi].first == bound[lo].first) ++hi;
    const std::size_t n = hi - lo;
    if (n < 2) {
      lo = hi;
      continue;
    }
    const ResourceId stream = bound[lo].first.first;
    std::vector<RunnableId> sub(n), work(n);
    for (std::size_t k = 0; k < n; ++k) {
      sub[k] = bound[lo + k].second;
      work[k] = g.runnables[sub[k]].submits;
    }
    // before[p][q]: p must submit before q. Either q's submitter transitively depends on p's
    // submitter, or q's work on p's work (then q's work queued first would wait for work queued
    // behind it). Work that waits for the other submitter only is no reason: the stream waits
    // on the device for that submitter's end, whichever was queued first.
    Reach reach(g);
    std::vector<std::vector<std::uint8_t>> before(n, std::vector<std::uint8_t>(n, 0));
    std::vector<std::vector<std::string>> why(n, std::vector<std::string>(n));
    for (std::size_t p = 0; p < n; ++p)
      for (int side = 0; side < 2; ++side) {
        reach.from(side == 0 ? sub[p] : work[p]);
        for (std::size_t q = 0; q < n; ++q) {
          const RunnableId to = side == 0 ? sub[q] : work[q];
          if (q == p || before[p][q] || !reach.reached(to)) continue;
          before[p][q] = 1;
          why[p][q] = reach.path(to);
        }
      }
    // A pair forced both ways is a GPU wait cycle: whichever submitter runs first queues its work
    // first, and that work waits for work queued behind it.
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q)
        if (before[p][q] && before[q][p])
          return failAt(g, g.runnables[work[q]].loc.line,
                        "GPU wait cycle through stream " + quoted(g.resources[stream].name) + ": " + why[p][q] +
                            " and " + why[q][p] + "; " + quoted(runnableName(g, sub[p])) + " and " +
                            quoted(runnableName(g, sub[q])) +
                            " share the stream, which runs work in submission order, so one of " +
                            quoted(runnableName(g, work[p])) + " and " + quoted(runnableName(g, work[q])) +
                            " would wait for work queued behind it");
    // A forced pair submits in the one order that works, so its submitters and its work follow
    // each other: implied by the stream's FIFO order, and stated so that the scheduler need not
    // find it. Other pairs keep no order: the scheduler chooses it, and keeps the work of the
    // stream in the order it chose for the submitters.
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = 0; q < n; ++q) {
        if (!before[p][q]) continue;
        auto& sd = g.runnables[sub[q]].dependencies;
        sd.push_back(sub[p]);
        sortUnique(sd);
        auto& wd = g.runnables[work[q]].dependencies;
        wd.push_back(work[p]);
        sortUnique(wd);
      }
    lo = hi;
  }
  return {};
}

Result<void> checkCycles(const Graph& g, const char* why) {
  IdVector<RunnableId, std::uint8_t> color(g.runnables.size(), 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<RunnableId, u32>> stack;                    // runnable, next dependency to visit
  for (RunnableId root : g.runnables.ids()) {
    if (color[root] != 0) continue;
    stack.push_back({root, 0});
    color[root] = 1;
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      const auto& deps = g.runnables[r].dependencies;
      if (next == deps.size()) {
        color[r] = 2;
        stack.pop_back();
        continue;
      }
      RunnableId d = deps[next++];
      if (color[d] == 1) {
        // the path from d to r, then back to d
        std::size_t from = 0;
        while (stack[from].first != d) ++from;
        std::string cycle;
        for (std::size_t i = from; i < stack.size(); ++i) cycle += quoted(runnableName(g, stack[i].first)) + " -> ";
        cycle += quoted(runnableName(g, d));
        return failAt(g, g.runnables[d].loc.line, "dependency cycle: " + cycle + " (each depends on the next)" + why);
      }
      if (color[d] == 0) {
        color[d] = 1;
        stack.push_back({d, 0});
      }
    }
  }
  return {};
}

Result<void> checkStreamLimits(const Graph& g, const IdVector<ResourceId, std::uint32_t>& resourceLines) {
  IdVector<ResourceId, u32> count(g.resources.size(), 0);
  for (const ResourceInfo& r : g.resources)
    if (isEngineQueue(r.kind)) ++count[r.device];
  for (ResourceId r : g.resources.ids()) {
    const ResourceInfo& gpu = g.resources[r];
    if (isEngine(gpu.kind) && gpu.streamLimit != kNone && count[r] > gpu.streamLimit)
      return failAt(g, resourceLines[r],
                    std::string(typeKeyOf(gpu.kind)) + " " + quoted(gpu.name) + " allows " +
                        std::to_string(gpu.streamLimit) + " client streams but " + std::to_string(count[r]) +
                        " map to it");
  }
  return {};
}

void finishHyperepochs(Graph& g) {
  for (ResourceId r : g.resources.ids())
    if (g.resources[r].hyperepoch != kNone) g.hyperepochs[g.resources[r].hyperepoch].resources.push_back(r);
}

}  // namespace tactus::compiler::parse
