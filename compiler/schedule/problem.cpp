// The problem model of one hyperepoch: building it from the graph, and its levels.
#include "schedule/problem.hpp"

#include "schedule/free_time.hpp"

#include <algorithm>
#include <string>

namespace tactus::compiler::schedule {

Score scoreOf(const Attempt& a, std::int64_t periodNs) {
  return {a.boundaryMisses, a.lengthNs > periodNs ? 1 : 0, a.deadlineMisses, a.lengthNs};
}

Result<void> checkGraph(const Graph& g) {
  auto bad = [](std::string m) { return fail(ErrorCode::kBadParameter, std::move(m)); };
  for (std::size_t e = 0; e < g.epochs.size(); ++e) {
    if (!g.hyperepochs.contains(g.epochs[e].hyperepoch)) {
      return bad("epoch '" + g.epochs[e].name + "' names an unknown hyperepoch");
    }
    if (g.epochs[e].periodNs <= 0) return bad("epoch '" + g.epochs[e].name + "' has no period");
  }
  for (const auto& h : g.hyperepochs) {
    for (EpochId e : h.epochs) {
      if (!g.epochs.contains(e)) return bad("hyperepoch '" + h.name + "' names an unknown epoch");
    }
  }
  for (const auto& r : g.runnables) {
    const std::string who = "runnable '" + r.name + "'";
    if (!g.epochs.contains(r.epoch)) return bad(who + " has an unknown epoch");
    if (!g.clients.contains(r.client) && !g.clients.empty()) return bad(who + " has an unknown client");
    if (r.wcetNs < 0 || r.startTimeNs < 0) return bad(who + " has a negative duration");
    for (RunnableId d : r.dependencies) {
      if (!g.runnables.contains(d)) return bad(who + " depends on an unknown runnable");
    }
    for (const auto& q : r.resources) {
      for (ResourceId c : q.candidates) {
        if (!g.resources.contains(c)) return bad(who + " requests an unknown resource");
      }
    }
    if ((r.submits != kNone && !g.runnables.contains(r.submits)) ||
        (r.submittedBy != kNone && !g.runnables.contains(r.submittedBy)) ||
        (r.aliasGroup != kNone && !g.runnables.contains(r.aliasGroup))) {
      return bad(who + " names an unknown runnable");
    }
    for (RunnableId m : r.steps) {
      if (m != kNone && !g.runnables.contains(m)) return bad(who + " has an unknown round-robin step");
    }
  }
  for (const auto& res : g.resources) {
    if (isEngineQueue(res.kind) && res.device != kNone && !g.resources.contains(res.device)) {
      return bad("stream '" + res.name + "' maps to an unknown device");
    }
  }
  // Every time the scheduler and the report form (releases, ends, sums of WCETs, and resources
  // times a time in the load bounds) stays below kInfinity / 2 when the total work plus the
  // longest span, times the resources plus one, does; computed in 128 bits. The limits of the
  // graph reader keep parsed graphs far inside it unless they hold tens of thousands of
  // resources and hours of work.
  __int128 span = 0, work = 0;
  for (const auto& e : g.epochs) {
    span = std::max<__int128>(span, static_cast<__int128>(e.periodNs) * std::max<std::uint32_t>(e.frames, 1));
  }
  for (const auto& h : g.hyperepochs) span = std::max<__int128>(span, h.periodNs);
  for (const auto& r : g.runnables) {
    const std::int64_t frames = std::max<std::uint32_t>(g.epochs[r.epoch].frames, 1);
    work += static_cast<__int128>(std::max<std::int64_t>(r.wcetNs, 0)) * frames;
    span = std::max<__int128>(span, static_cast<__int128>(r.startTimeNs) + std::max<std::int64_t>(r.deadlineNs, 0));
  }
  const __int128 total = (span + work) * static_cast<__int128>(g.resources.size() + 1);
  if (total > static_cast<__int128>(kInfinity / 2)) {
    return bad(
        "the graph's durations are too large to schedule: its total WCET (runnables x frames) plus its "
        "longest period, times its resources, exceeds " +
        std::to_string(kInfinity / 2) + " ns");
  }
  return {};
}

GraphModel modelGraph(const Graph& g) {
  GraphModel model;
  model.graph = &g;

  // Round-robin groups: the slot takes the group's WCET and requests, or when the parser left
  // them empty, the longest member's WCET and the first member's requests.
  const std::size_t n = g.runnables.size();
  IdVector<RunnableId, std::int64_t>& wcet = model.wcet;
  IdVector<RunnableId, const std::vector<ResourceRequest>*>& requests = model.requests;
  wcet.resize(n);
  requests.resize(n);
  for (RunnableId i : g.runnables.ids()) {
    const GraphRunnable& r = g.runnables[i];
    wcet[i] = r.wcetNs;
    requests[i] = &r.resources;
    if (r.kind == RunnableKind::kAliasGroup) {
      std::int64_t longest = 0;
      for (RunnableId m : r.steps) {
        if (m == kNone) continue;
        longest = std::max(longest, g.runnables[m].wcetNs);
        if (requests[i]->empty()) requests[i] = &g.runnables[m].resources;
      }
      wcet[i] = std::max(wcet[i], longest);
    }
  }

  // Scheduled runnables per epoch (round-robin members run inside their group's slot).
  model.epochRunnables.resize(g.epochs.size());
  for (RunnableId i : g.runnables.ids()) {
    if (g.runnables[i].aliasGroup == kNone) model.epochRunnables[g.runnables[i].epoch].push_back(i);
  }
  return model;
}

Result<Problem> buildProblem(const GraphModel& model, HyperepochId h, IdVector<RunnableId, std::uint32_t>& localOf) {
  const Graph& g = *model.graph;
  auto scheduledAs = [&](RunnableId r) { return g.runnables[r].aliasGroup != kNone ? g.runnables[r].aliasGroup : r; };
  const HyperepochInfo& he = g.hyperepochs[h];
  Problem pb;
  pb.graph = &g;
  pb.wcet = &model.wcet;
  pb.requests = &model.requests;
  std::vector<EpochId> epochsHere = he.epochs;
  std::sort(epochsHere.begin(), epochsHere.end());
  epochsHere.erase(std::unique(epochsHere.begin(), epochsHere.end()), epochsHere.end());

  // Local runnables and their unrolled instances: epoch by epoch, frame-major. Reserved: grown
  // by doubling, the node list of a large hyperepoch kept up to half of it unused to the end.
  std::size_t nodeCount = 0;
  for (EpochId e : epochsHere) nodeCount += std::size_t{g.epochs[e].frames} * model.epochRunnables[e].size();
  pb.nodes.reserve(nodeCount);
  for (EpochId e : epochsHere) {
    const EpochInfo& ep = g.epochs[e];
    const auto& rs = model.epochRunnables[e];
    const auto base = static_cast<std::uint32_t>(pb.nodes.size());
    for (std::size_t j = 0; j < rs.size(); ++j) {
      localOf[rs[j]] = static_cast<std::uint32_t>(pb.runnables.size());
      pb.runnables.push_back(rs[j]);
      pb.nodeBase.push_back(base + static_cast<std::uint32_t>(j));
      pb.nodeStride.push_back(static_cast<std::uint32_t>(rs.size()));
    }
    for (std::uint32_t k = 0; k < ep.frames; ++k) {
      for (RunnableId r : rs) {
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
    for (RunnableId d : r.dependencies) {
      const std::uint32_t dl = localOf[scheduledAs(d)];
      const RunnableId dg = scheduledAs(d);
      if (dl == kNone || g.runnables[dg].epoch != r.epoch) {
        return fail(ErrorCode::kValidation,
                    "runnable '" + r.name + "' depends on '" + g.runnables[d].name + "' of another epoch");
      }
      if (dl == l) continue;
      pb.localDeps[l].push_back(dl);
    }
    std::sort(pb.localDeps[l].begin(), pb.localDeps[l].end());
    pb.localDeps[l].erase(std::unique(pb.localDeps[l].begin(), pb.localDeps[l].end()), pb.localDeps[l].end());
    for (std::uint32_t dl : pb.localDeps[l]) pb.localSuccs[dl].push_back(l);
    if (r.kind == RunnableKind::kSubmittee && r.submittedBy != kNone) {
      pb.localSubmitter[l] = localOf[scheduledAs(r.submittedBy)];
      if (pb.localSubmitter[l] != kNone &&
          std::find(pb.localDeps[l].begin(), pb.localDeps[l].end(), pb.localSubmitter[l]) == pb.localDeps[l].end()) {
        // The submitter is an implicit dependency; add it when the parser did not.
        pb.localDeps[l].insert(std::lower_bound(pb.localDeps[l].begin(), pb.localDeps[l].end(), pb.localSubmitter[l]),
                               pb.localSubmitter[l]);
        pb.localSuccs[pb.localSubmitter[l]].push_back(l);
      }
    }
  }

  pb.localDeadline.assign(L, kNoDuration);
  for (std::uint32_t l = 0; l < L; ++l) pb.localDeadline[l] = g.runnables[pb.runnables[l]].deadlineNs;
  pb.localSoc.assign(L, kNone);
  if (!g.socs.empty()) {
    for (std::uint32_t l = 0; l < L; ++l) pb.localSoc[l] = g.clients[g.runnables[pb.runnables[l]].client].soc;
    // The pair's CrossSocLatency where the graph gives one, else --cross-soc-latency.
    pb.socCount = static_cast<std::uint32_t>(g.socs.size());
    pb.socLagNs.assign(static_cast<std::size_t>(pb.socCount) * pb.socCount, g.crossSocLatencyNs);
    for (std::uint32_t k = 0; k < pb.socCount; ++k) pb.socLagNs[k * pb.socCount + k] = 0;
    for (const SocLatency& l : g.socLatencies) pb.socLagNs[l.from * pb.socCount + l.to] = l.latencyNs;
    for (std::uint32_t l = 0; l < L; ++l)
      for (std::uint32_t d : pb.localDeps[l]) pb.hasCrossSocLag = pb.hasCrossSocLag || pb.lagNs(d, l) > 0;
  }
  if (auto ok = computeLevels(pb, he); !ok) return ok.error();
  for (std::uint32_t l = 0; l < L; ++l) localOf[pb.runnables[l]] = kNone;
  return pb;
}

Result<void> computeLevels(Problem& pb, const HyperepochInfo& he) {
  const Graph& g = *pb.graph;
  const IdVector<RunnableId, std::int64_t>& wcet = *pb.wcet;
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
    const RunnableId r = pb.runnables[l];
    const GraphRunnable& gr = g.runnables[r];
    std::int64_t lf = g.epochs[gr.epoch].periodNs;
    if (pb.localDeadline[l] != kNoDuration) lf = std::min(lf, pb.localDeadline[l]);
    for (std::uint32_t s : pb.localSuccs[l]) lf = std::min(lf, pb.latestStart[s] - pb.lagNs(l, s));
    pb.latestStart[l] = lf - wcet[r];
    pb.succCount[l] = static_cast<std::int64_t>(pb.localSuccs[l].size());
  }
  for (std::uint32_t l : order) {
    const RunnableId r = pb.runnables[l];
    std::int64_t t = g.runnables[r].startTimeNs;
    for (std::uint32_t d : pb.localDeps[l]) t = std::max(t, pb.topLevel[d] + wcet[pb.runnables[d]] + pb.lagNs(d, l));
    pb.topLevel[l] = t;
  }
  return {};
}

std::vector<std::uint32_t> touchedResources(const Problem& pb, const HyperepochInfo& he) {
  const Graph& g = *pb.graph;
  // Marked per resource, not collected per request and deduplicated: every runnable names its
  // candidates, and that list's capacity stayed with the result through the whole hyperepoch.
  std::vector<char> seen(g.resources.size(), 0);
  for (RunnableId r : pb.runnables) {
    for (const auto& q : *(*pb.requests)[r]) {
      for (ResourceId c : q.candidates) seen[index(c)] = 1;
    }
  }
  for (ResourceId r : he.resources) {
    if (g.resources.contains(r)) seen[index(r)] = 1;
  }
  std::vector<std::uint32_t> touched;
  for (std::uint32_t r = 0; r < seen.size(); ++r)
    if (seen[r] != 0) touched.push_back(r);
  return touched;
}

}  // namespace tactus::compiler::schedule
