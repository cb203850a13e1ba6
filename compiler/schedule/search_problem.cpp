// Building the search's view of one hyperepoch from its problem.
#include "schedule/search_problem.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "schedule/bounds.hpp"
#include "schedule/free_time.hpp"

namespace tactus::compiler::schedule {

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
  sp.order = topologicalOrder(sp.succs, std::move(indeg));
  sp.topo.assign(n, 0);
  for (std::uint32_t k = 0; k < sp.order.size(); ++k) sp.topo[sp.order[k]] = k;
  sp.tail = longestTails(sp.order, sp.succs, sp.p);

  // Candidate sets, and resource classes: two resources are equivalent when every candidate
  // set holds both or neither and neither is tied to a stream/device pairing.
  std::map<std::vector<std::uint32_t>, std::uint32_t> setIds;
  std::vector<std::vector<std::vector<std::uint32_t>>> nodeSets(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (const ResourceRequest& q : *(*pb.requests)[pb.nodes[i].runnable]) {
      std::vector<std::uint32_t> set;
      for (ResourceId c : q.candidates) set.push_back(index(c));
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
    if (isEngineQueue(ri.kind)) {
      signature[r].push_back(0x80000000u | r);
      const std::uint32_t device = index(ri.device);
      if (ri.device != kNone && device < sp.resourceCount) signature[device].push_back(0x40000000u | device);
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

std::optional<SProblem> reversedProblem(const SProblem& sp) {
  if (sp.n == 0 || sp.anyDeadline) return std::nullopt;
  for (std::uint32_t i = 0; i < sp.n; ++i) {
    if (sp.release[i] != 0 || sp.boundary[i] != sp.boundary[0] || sp.submitter[i] != kNone) return std::nullopt;
    for (const auto& request : sp.options[i]) {
      for (const auto& option : request) {
        for (std::uint32_t r : option) {
          if (isEngineQueue(sp.graph->resources[r].kind)) return std::nullopt;
        }
      }
    }
  }
  SProblem rev = sp;
  std::swap(rev.preds, rev.succs);
  rev.order.assign(sp.order.rbegin(), sp.order.rend());
  for (std::uint32_t k = 0; k < rev.order.size(); ++k) rev.topo[rev.order[k]] = k;
  rev.tail = longestTails(rev.order, rev.succs, rev.p);
  // The children's order: latest start backwards, from the heads of the forward problem.
  const std::vector<std::int64_t> heads = longestHeads(sp.order, sp.preds, sp.release, sp.p);
  std::int64_t length = 0;
  for (std::uint32_t i = 0; i < sp.n; ++i) length = std::max(length, heads[i] + sp.p[i]);
  for (std::uint32_t i = 0; i < sp.n; ++i) rev.key[i] = length - heads[i] - sp.p[i];
  strengthenHeadsTails(rev);
  return rev;
}

}  // namespace tactus::compiler::schedule
