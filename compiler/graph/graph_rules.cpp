// Graph-level rules on a built Graph (no YAML).
#include "graph/graph_rules.hpp"

#include <algorithm>

#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {
namespace {

using u32 = std::uint32_t;

// A kValidation error at `line` of the graph's file.
Error failAt(const Graph& g, std::int64_t line, const std::string& what) {
  return fail(ErrorCode::kValidation, g.sourceFile + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::string runnableName(const Graph& g, std::uint32_t r) {
  return g.clients[g.runnables[r].client].name + "." + g.runnables[r].name;
}

void sortUnique(std::vector<std::uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

Result<void> redirectToGroups(Graph& g) {
  const u32 count = static_cast<u32>(g.runnables.size());
  bool any = false;
  for (u32 r = 0; r < count; ++r) any = any || g.runnables[r].aliasGroup != kNone;
  if (!any) return {};
  auto target = [&](u32 d) { return g.runnables[d].aliasGroup != kNone ? g.runnables[d].aliasGroup : d; };
  for (u32 r = 0; r < count; ++r) {
    GraphRunnable& gr = g.runnables[r];
    if (gr.aliasGroup != kNone) {
      GraphRunnable& group = g.runnables[gr.aliasGroup];
      for (u32 d : gr.dependencies) group.dependencies.push_back(target(d));
      gr.dependencies.clear();
    } else if (gr.kind != RunnableKind::kAliasGroup) {
      for (u32& d : gr.dependencies) d = target(d);
      sortUnique(gr.dependencies);
    }
  }
  for (u32 r = 0; r < count; ++r) {
    GraphRunnable& gr = g.runnables[r];
    if (gr.kind != RunnableKind::kAliasGroup) continue;
    gr.dependencies.erase(std::remove(gr.dependencies.begin(), gr.dependencies.end(), r), gr.dependencies.end());
    sortUnique(gr.dependencies);
  }
  for (u32 r = 0; r < count; ++r) {
    const GraphRunnable& gr = g.runnables[r];
    if (gr.kind != RunnableKind::kAliasGroup) continue;
    for (u32 d : gr.dependencies) {
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

void orderSubmissions(Graph& g) {
  const u32 count = static_cast<u32>(g.runnables.size());
  for (u32 x = 0; x < count; ++x) {
    const GraphRunnable& gr = g.runnables[x];
    if (gr.kind != RunnableKind::kSubmittee || gr.submittedBy == kNone) continue;
    const u32 s = gr.submittedBy;
    std::vector<u32> extra;
    for (u32 d : gr.dependencies) {
      if (d == s) continue;
      const GraphRunnable& dr = g.runnables[d];
      const u32 before = dr.kind == RunnableKind::kSubmittee ? dr.submittedBy : d;
      if (before != kNone && before != s) extra.push_back(before);
    }
    if (extra.empty()) continue;
    auto& deps = g.runnables[s].dependencies;
    deps.insert(deps.end(), extra.begin(), extra.end());
    sortUnique(deps);
  }
}

Result<void> checkCycles(const Graph& g, const char* why) {
  const u32 count = static_cast<u32>(g.runnables.size());
  std::vector<std::uint8_t> color(count, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<u32, u32>> stack;     // runnable, next dependency to visit
  for (u32 root = 0; root < count; ++root) {
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
      u32 d = deps[next++];
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

Result<void> checkStreamLimits(const Graph& g, const std::vector<std::uint32_t>& resourceLines) {
  std::vector<u32> count(g.resources.size(), 0);
  for (const ResourceInfo& r : g.resources)
    if (r.kind == ResourceKind::kCudaStream) ++count[r.device];
  for (u32 r = 0; r < g.resources.size(); ++r) {
    const ResourceInfo& gpu = g.resources[r];
    if (gpu.kind == ResourceKind::kGpu && gpu.streamLimit != kNone && count[r] > gpu.streamLimit)
      return failAt(g, resourceLines[r],
                    "GPU " + quoted(gpu.name) + " allows " + std::to_string(gpu.streamLimit) + " client streams but " +
                        std::to_string(count[r]) + " map to it");
  }
  return {};
}

void finishHyperepochs(Graph& g) {
  for (u32 r = 0; r < g.resources.size(); ++r)
    if (g.resources[r].hyperepoch != kNone) g.hyperepochs[g.resources[r].hyperepoch].resources.push_back(r);
}

}  // namespace tactus::compiler::parse
