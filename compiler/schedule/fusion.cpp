// Runnable fusion: fusing chains of short CPU runnables, and splitting a fused schedule back.
#include "schedule/fusion.hpp"

#include <algorithm>
#include <utility>

#include "schedule/branch_and_bound.hpp"

namespace tactus::compiler::schedule {
namespace {

bool sameRequests(const std::vector<ResourceRequest>& a, const std::vector<ResourceRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t q = 0; q < a.size(); ++q) {
    if (a[q].candidates != b[q].candidates) return false;
  }
  return true;
}

}  // namespace

FusedProblem fuseChains(const Problem& pb, const IdVector<RunnableId, std::int64_t>& wcet, std::int64_t thresholdNs) {
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
    const RunnableId head = pb.runnables[l];
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
  // A chain is one client's: its SoC is its members'.
  f.localSoc.assign(F, kNone);
  f.socCount = pb.socCount;
  f.socLagNs = pb.socLagNs;
  f.hasCrossSocLag = pb.hasCrossSocLag;
  for (std::uint32_t l = 0; l < L; ++l) {
    const std::uint32_t fl = fp.fusedOf[l];
    f.localSoc[fl] = pb.localSoc[l];
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
  f.nodes.reserve(static_cast<std::size_t>(
      std::count_if(pb.nodes.begin(), pb.nodes.end(), [&](const Node& nd) { return !hasPrev[nd.local]; })));
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

bool fusionApplies(const ScheduleOptions& options, std::size_t instances) {
  switch (options.fusion) {
    case Fusion::kOff: return false;
    case Fusion::kOn: return true;
    case Fusion::kAuto: break;
  }
  return instances > kSearchNodeLimit;
}

}  // namespace tactus::compiler::schedule
