// The scheduler: the composition of the pieces under schedule/ (see scheduler.hpp): per
// hyperepoch, its problem, the first schedules by the priority rules, the search under a
// budget, fusion, the checks of the result, and the Schedule.
#include "scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "schedule/bounds.hpp"
#include "schedule/branch_and_bound.hpp"
#include "schedule/free_time.hpp"
#include "schedule/fusion.hpp"
#include "schedule/grouping.hpp"
#include "schedule/list_scheduler.hpp"
#include "schedule/perturbed_search.hpp"
#include "schedule/problem.hpp"
#include "schedule/search_problem.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

using namespace schedule;

// Whether the order of submissions to one engine queue (stream) can hold work back: two
// submitters may submit to the same queue, and some queue work waits for more than its submitter
// (its top level is later than its submitter's end), so that work queued behind it waits too.
bool queuedWorkMayWait(const Problem& pb) {
  const Graph& g = *pb.graph;
  const IdVector<RunnableId, std::int64_t>& wcet = *pb.wcet;
  bool waits = false;
  for (std::uint32_t l = 0; l < pb.localSubmitter.size() && !waits; ++l) {
    const std::uint32_t by = pb.localSubmitter[l];
    waits = by != kNone && pb.topLevel[l] > pb.topLevel[by] + wcet[pb.runnables[by]];
  }
  if (!waits) return false;
  std::vector<std::uint8_t> seen(g.resources.size(), 0);
  for (RunnableId r : pb.runnables) {
    if (g.runnables[r].kind != RunnableKind::kSubmitter) continue;
    for (const ResourceRequest& q : *(*pb.requests)[r]) {
      if (!isEngineQueue(q.kind)) continue;
      for (ResourceId c : q.candidates)
        if (seen[index(c)]++ != 0) return true;
    }
  }
  return false;
}

// Search steps allowed to find an order of the streams' submissions where every priority rule
// got stuck (see findStreamOrder); ends at once on small graphs, which are the ones it can take.
constexpr std::uint64_t kStreamOrderSteps = 1000000;

// Where every priority rule got stuck (Attempt::stuck: each found no order of the streams'
// submissions in which no work is queued behind work that waits for it), the branch and bound
// from no schedule at all: it tries every order, and its first complete schedule is one. Returns
// that schedule, or the stuck attempt with `proven` set where the whole tree was searched (no
// order exists). Hyperepochs too large for the tree, or with transfer times, keep the stuck one.
Attempt findStreamOrder(const Problem& pb, const HyperepochInfo& he, const ScheduleOptions& options, Attempt stuck,
                        bool& proven) {
  proven = false;
  if (pb.nodes.empty() || pb.nodes.size() > kSearchNodeLimit || pb.hasCrossSocLag) return stuck;
  SearchLimits lim;
  lim.started = Clock::now();
  lim.steps = std::max(options.searchSteps, kStreamOrderSteps);
  lim.workers = std::max(1, options.workers);
  lim.allowOverlength = true;
  Attempt none;  // scores worse than any schedule
  none.boundaryMisses = std::numeric_limits<std::uint64_t>::max();
  none.lengthNs = kInfinity;
  SearchResult sr = branchAndBound(buildSearchProblem(pb, he.periodNs), none, lim);
  if (sr.improved) return std::move(sr.attempt);
  proven = sr.exhausted;
  return stuck;
}

// The first schedules and, with a budget, the search, for one hyperepoch's problem: tries the
// priority rules (insertion with each key, and the time-driven variants too where the graph is
// small enough for their per-event scan of the available instances; the queue-order key where
// queued work may wait, see queuedWorkMayWait), keeps the best (fewest boundary misses, fits the
// period, fewest deadline misses, shortest, then the first rule), then improves it under the
// budget. A schedule as short as the critical path cannot be beaten.
Attempt solveHyperepoch(const Problem& pb, const HyperepochInfo& he, const ScheduleOptions& options,
                        const std::vector<std::uint32_t>& touched, std::vector<FreeTime>& free,
                        HyperepochSearchInfo& searchInfo, bool& noOrderProven) {
  const IdVector<RunnableId, std::int64_t>& wcet = *pb.wcet;
  std::int64_t criticalPath = 0;
  for (const Node& nd : pb.nodes) {
    criticalPath = std::max(criticalPath, nd.frameNs + pb.topLevel[nd.local] + wcet[nd.runnable]);
  }
  std::vector<Rule> rules{{0, false}, {1, false}, {2, false}};
  if (pb.nodes.size() <= kTimedRuleLimit) {
    rules.push_back({0, true});
    rules.push_back({1, true});
    rules.push_back({2, true});
    // A queue runs its work in submission order: where queued work may wait for more than its
    // submitter, also try submitting first the work that can start first.
    if (queuedWorkMayWait(pb)) rules.push_back({3, false});
  }
  Attempt best;
  bool haveBest = false;
  Attempt firstStuck;
  auto score = [&](const Attempt& a) {
    return std::make_tuple(a.boundaryMisses, a.lengthNs > he.periodNs ? 1 : 0, a.deadlineMisses, a.lengthNs);
  };
  for (Rule& rule : rules) {
    for (std::uint32_t r : touched) free[r].clear();
    // A rule stops once it cannot beat the best so far (ties keep the earlier rule).
    rule.cutoff = haveBest ? &best : nullptr;
    rule.periodNs = he.periodNs;
    Attempt a = listSchedule(pb, rule, free);
    if (a.stuck && !firstStuck.stuck) firstStuck = a;
    if (!a.abandoned && (!haveBest || score(a) < score(best))) {
      best = std::move(a);
      haveBest = true;
    }
    if (haveBest && best.boundaryMisses == 0 && best.deadlineMisses == 0 && best.lengthNs <= criticalPath) break;
  }
  noOrderProven = false;
  if (!haveBest) {
    best = findStreamOrder(pb, he, options, std::move(firstStuck), noOrderProven);
    if (best.stuck) return best;
  }

  searchInfo = HyperepochSearchInfo{};
  searchInfo.firstLengthNs = best.lengthNs;
  // The search's model knows no transfer times: a hyperepoch with cross-SoC lags keeps its list
  // schedule.
  if ((options.timeBudgetSeconds > 0 || options.searchSteps > 0) && !pb.nodes.empty() && !pb.hasCrossSocLag) {
    SearchLimits lim;
    lim.started = Clock::now();
    lim.steps = options.searchSteps;
    lim.timed = options.timeBudgetSeconds > 0;
    if (lim.timed) {
      lim.deadline = lim.started + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(options.timeBudgetSeconds));
    }
    lim.workers = std::max(1, options.workers);
    lim.allowOverlength = options.allowOverlength;
    if (options.progress) {
      lim.onRound = [&options, &he, started = lim.started](std::int64_t bestNs, std::int64_t boundNs,
                                                           std::uint64_t steps) {
        options.progress(he.name, std::chrono::duration<double>(Clock::now() - started).count(), bestNs, boundNs,
                         steps);
      };
    }
    const SProblem sp = buildSearchProblem(pb, he.periodNs);
    SearchResult sr = pb.nodes.size() <= kSearchNodeLimit ? branchAndBound(sp, best, lim)
                                                          : perturbedLists(pb, sp, best, touched, lim);
    if (sr.improved && scoreOf(sr.attempt, he.periodNs) < scoreOf(best, he.periodNs)) best = std::move(sr.attempt);
    searchInfo.lowerBoundNs = sr.lowerBoundNs;
    searchInfo.steps = sr.steps;
    searchInfo.exhausted = sr.exhausted;
    searchInfo.secondsToBest = sr.improved ? sr.secondsToBest : 0;
    searchInfo.searched = true;
  }
  return best;
}

// `file:line: ` where the graph wrote something (nothing for a graph built in code).
template <StrongId Id>
std::string at(const Graph& g, const IdVector<Id, int>& lines, Id i) {
  if (g.sourceFile.empty() || !lines.contains(i) || lines[i] <= 0) return {};
  return g.sourceFile + ":" + std::to_string(lines[i]) + ": ";
}

// The error of a hyperepoch for which no order of the streams' submissions was found (or none
// exists, `proven`), located at a submitter that could not queue its work.
Error noStreamOrder(const Graph& g, const Problem& pb, const HyperepochInfo& he, const Attempt& stuck, bool proven) {
  std::string where, what;
  if (stuck.stuckAt < pb.nodes.size()) {
    const Node& nd = pb.nodes[stuck.stuckAt];
    const GraphRunnable& r = g.runnables[nd.runnable];
    if (r.loc.line > 0 && !g.sourceFile.empty()) where = g.sourceFile + ":" + std::to_string(r.loc.line) + ": ";
    std::string streams;
    for (const ResourceRequest& q : *(*pb.requests)[nd.runnable]) {
      if (!isEngineQueue(q.kind)) continue;
      for (ResourceId c : q.candidates) streams += (streams.empty() ? "'" : " or '") + g.resources[c].name + "'";
    }
    what = ": '" + g.clients[r.client].name + "." + r.name + "' frame " + std::to_string(nd.frame) +
           " would queue its work on " + (streams.empty() ? std::string("its stream") : streams) +
           " behind work that waits for it";
  }
  return Error{ErrorCode::kInfeasible,
               where + "hyperepoch '" + he.name +
                   "': no order of the submissions lets every stream run its work in submission order" + what +
                   (proven ? " (every order was searched)"
                           : " (none found; orders are searched exhaustively up to " +
                                 std::to_string(kSearchNodeLimit) + " instances)")};
}

std::string epochName(const Graph& g, EpochId e) {
  const EpochInfo& ep = g.epochs[e];
  if (g.hyperepochs.contains(ep.hyperepoch)) return g.hyperepochs[ep.hyperepoch].name + "." + ep.name;
  return ep.name;
}

// The schedule's header: what the graph declares, copied as is.
Schedule scheduleHeader(const Graph& g) {
  Schedule out;
  out.name = g.name;
  out.identifier = g.identifier;
  out.sourceHash = g.sourceHash;
  out.clients = g.clients;
  out.resources = g.resources;
  out.hyperepochs = g.hyperepochs;
  out.epochs = g.epochs;
  out.socs = g.socs;
  out.crossSocLatencyNs = g.socs.empty() ? 0 : g.crossSocLatencyNs;
  if (!g.socs.empty()) out.socLatencies = g.socLatencies;
  return out;
}

// A runnable as scheduled, with its modelled WCET.
RunnableInfo scheduledRunnable(const Graph& g, RunnableId i, std::int64_t wcetNs) {
  const GraphRunnable& r = g.runnables[i];
  RunnableInfo ri;
  ri.name = r.name;
  ri.client = r.client;
  ri.epoch = r.epoch;
  ri.kind = r.kind;
  ri.wcetNs = wcetNs;
  ri.startTimeNs = r.startTimeNs;
  ri.deadlineNs = r.deadlineNs;
  ri.endMonitorThresholdNs = r.endMonitorThresholdNs;
  ri.priority = r.priority;
  // Dependencies as scheduled: on round-robin groups, with the submitter, sorted.
  for (RunnableId d : r.dependencies) {
    const RunnableId to = g.runnables[d].aliasGroup != kNone ? g.runnables[d].aliasGroup : d;
    if (to != i) ri.dependencies.push_back(to);
  }
  if (r.kind == RunnableKind::kSubmittee && r.submittedBy != kNone) ri.dependencies.push_back(r.submittedBy);
  std::sort(ri.dependencies.begin(), ri.dependencies.end());
  ri.dependencies.erase(std::unique(ri.dependencies.begin(), ri.dependencies.end()), ri.dependencies.end());
  ri.submits = r.submits;
  ri.submittedBy = r.submittedBy;
  ri.aliasGroup = r.aliasGroup;
  ri.steps = r.steps;
  return ri;
}

// One hyperepoch's problem solved, fused where runnable fusion applies (see
// ScheduleOptions::fusion: solve the fused problem, split it back), else as is.
Result<Attempt> solveProblem(const Problem& pb, const HyperepochInfo& he,
                             const IdVector<RunnableId, std::int64_t>& wcet, const ScheduleOptions& options,
                             const std::vector<std::uint32_t>& touched, std::vector<FreeTime>& free,
                             HyperepochSearchInfo& searchInfo, bool& noOrderProven) {
  Attempt best;
  bool fused = false;
  if (fusionApplies(options, pb.nodes.size())) {
    FusedProblem fp = fuseChains(pb, wcet, options.fusionThresholdNs);
    if (!fp.chains.empty()) {
      if (auto ok = computeLevels(fp.pb, he); !ok) return ok.error();
      Attempt fa = solveHyperepoch(fp.pb, he, options, touched, free, searchInfo, noOrderProven);
      if (fa.stuck) {
        best = std::move(fa);
        best.stuckAt = kNone;  // a node of the fused problem: solved unfused below
      } else {
        best = splitFused(pb, fp, fa);
        fused = true;
      }
      if (searchInfo.searched) {
        // The fused problem's bounds and proofs hold for fused schedules only: the bound
        // reported is the unfused problem's, and fused search proves nothing about it.
        const SProblem sp = buildSearchProblem(pb, he.periodNs);
        searchInfo.lowerBoundNs = rootLowerBound(sp, best.lengthNs);
        searchInfo.exhausted =
            best.boundaryMisses == 0 && best.deadlineMisses == 0 && best.lengthNs <= searchInfo.lowerBoundNs;
      }
    }
  }
  if (!fused) best = solveHyperepoch(pb, he, options, touched, free, searchInfo, noOrderProven);
  if (!best.stuck && !options.groupClients) {
    searchInfo.clientSwitchesBefore = searchInfo.clientSwitchesAfter = clientSwitches(pb, best);
  } else if (!best.stuck) {
    GroupingInfo grouping;
    best = groupClients(pb, std::move(best), grouping);
    searchInfo.clientSwitchesBefore = grouping.switchesBefore;
    searchInfo.clientSwitchesAfter = grouping.switchesAfter;
  }
  return best;
}

// Errors: the hyperepoch does not fit its period, or a frame runs into its next frame. The
// frame is named, not the runnable that happens to end last: what makes it late is the
// frame's work and what else holds its resources (compile.cpp's diagnosis says which). Where
// one is found, `what` says where.
std::optional<Error> fitError(const Graph& g, const Problem& pb, HyperepochId h, const Attempt& best,
                              const ScheduleOptions& options, UnfitSchedule& what) {
  const HyperepochInfo& he = g.hyperepochs[h];
  if (best.lengthNs > he.periodNs && !options.allowOverlength) {
    what.hyperepoch = h;
    return Error{ErrorCode::kInfeasible, at(g, g.hyperepochLines, h) + "hyperepoch '" + he.name +
                                             "': schedule length " + humanDuration(best.lengthNs) +
                                             " exceeds its period " + humanDuration(he.periodNs)};
  }
  for (std::size_t i = 0; i < pb.nodes.size(); ++i) {
    const Node& nd = pb.nodes[i];
    if (best.placements[i].endNs <= nd.boundaryNs) continue;
    const EpochId e = g.runnables[nd.runnable].epoch;
    // The last frame's boundary is the hyperepoch's end: overlength, accepted on request.
    if (options.allowOverlength && nd.frame + 1 == g.epochs[e].frames) continue;
    std::int64_t frameEnd = 0;
    for (std::size_t j = 0; j < pb.nodes.size(); ++j)
      if (g.runnables[pb.nodes[j].runnable].epoch == e && pb.nodes[j].frame == nd.frame)
        frameEnd = std::max(frameEnd, best.placements[j].endNs);
    what.hyperepoch = h;
    what.epoch = e;
    what.frame = nd.frame;
    return Error{ErrorCode::kInfeasible, at(g, g.epochLines, e) + "epoch '" + epochName(g, e) + "' frame " +
                                             std::to_string(nd.frame) + " ends at " + humanDuration(frameEnd) +
                                             ", after its next frame's release at " + humanDuration(nd.boundaryNs)};
  }
  return std::nullopt;
}

// Instances of a hyperepoch: by (start, end, placement order), which keeps zero-length
// instances before a longer one starting at the same time and dependencies first.
// Sorted as contiguous keys (the placement order makes them unique), not as indices whose
// comparisons read the placements at random.
std::vector<std::uint32_t> instanceOrder(const Attempt& best, std::size_t nodes) {
  struct Key {
    std::int64_t start, end;
    std::uint64_t seq;
    std::uint32_t node;
  };
  std::vector<Key> keys(nodes);
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    const Placement& pl = best.placements[i];
    keys[i] = {pl.startNs, pl.endNs, pl.seq, i};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.start, a.end, a.seq, a.node) < std::tie(b.start, b.end, b.seq, b.node);
  });
  std::vector<std::uint32_t> idx(nodes);
  for (std::uint32_t i = 0; i < keys.size(); ++i) idx[i] = keys[i].node;
  return idx;
}

// A solved hyperepoch's instances appended to the schedule, in instance order.
void appendInstances(const Problem& pb, const Attempt& best, Schedule& out) {
  const std::vector<std::uint32_t> idx = instanceOrder(best, pb.nodes.size());
  // Reserved per hyperepoch (exact for one, still geometric for many): grown by doubling
  // alone, the instance list was the largest block of the compiler's peak memory.
  const std::size_t need = out.instances.size() + idx.size();
  if (need > out.instances.capacity()) out.instances.reserve(std::max(need, 2 * out.instances.capacity()));
  const auto first = static_cast<std::uint32_t>(out.instances.size());
  std::vector<InstanceId> globalId(pb.nodes.size());
  for (std::uint32_t i = 0; i < idx.size(); ++i) globalId[idx[i]] = InstanceId{first + i};
  for (std::uint32_t i : idx) {
    const Node& nd = pb.nodes[i];
    const Placement& pl = best.placements[i];
    InstanceInfo inst;
    inst.runnable = nd.runnable;
    inst.frame = nd.frame;
    inst.startNs = pl.startNs;
    inst.endNs = pl.endNs;
    inst.resources.reserve(pl.resources.size());
    for (std::uint32_t r : pl.resources) inst.resources.push_back(ResourceId{r});
    inst.dependencies.reserve(pb.localDeps[nd.local].size());
    for (std::uint32_t d : pb.localDeps[nd.local]) inst.dependencies.push_back(globalId[pb.nodeOf(d, nd.frame)]);
    std::sort(inst.dependencies.begin(), inst.dependencies.end());
    out.instances.push_back(std::move(inst));
  }
}

// Timelines: per resource, its instances in start order (the instance order is that already).
void addTimelines(std::size_t resources, Schedule& out) {
  IdVector<ResourceId, std::vector<InstanceId>> perResource(resources);
  for (InstanceId i : out.instances.ids()) {
    for (ResourceId r : out.instances[i].resources) perResource[r].push_back(i);
  }
  for (ResourceId r : perResource.ids()) {
    if (perResource[r].empty()) continue;
    TimelineInfo tl;
    tl.resource = r;
    tl.instances = std::move(perResource[r]);
    out.timelines.push_back(std::move(tl));
  }
}

}  // namespace

Result<Schedule> scheduleGraph(const Graph& graph, const ScheduleOptions& options, SearchInfo* info,
                               std::optional<UnfitSchedule>* unfit) {
  const Graph& g = graph;
  if (auto ok = schedule::checkGraph(g); !ok) return ok.error();

  Schedule out = scheduleHeader(g);
  const GraphModel model = modelGraph(g);
  const IdVector<RunnableId, std::int64_t>& wcet = model.wcet;
  const std::size_t n = g.runnables.size();
  out.runnables.reserve(n);
  for (RunnableId i : g.runnables.ids()) out.runnables.push_back(scheduledRunnable(g, i, wcet[i]));

  std::vector<FreeTime> free(g.resources.size());
  IdVector<RunnableId, std::uint32_t> localOf(n, kNone);
  if (info != nullptr) info->hyperepochs.assign(g.hyperepochs.size(), {});

  // The first hyperepoch that does not fit; with `unfit`, the others are still scheduled.
  std::optional<Error> doesNotFit;
  UnfitSchedule what;
  for (HyperepochId h : g.hyperepochs.ids()) {
    const HyperepochInfo& he = g.hyperepochs[h];
    Result<Problem> built = buildProblem(model, h, localOf);
    if (!built) return built.error();
    const Problem& pb = built.value();
    const std::vector<std::uint32_t> touched = touchedResources(pb, he);
    HyperepochSearchInfo searchInfo;
    bool noOrderProven = false;
    Result<Attempt> solved = solveProblem(pb, he, wcet, options, touched, free, searchInfo, noOrderProven);
    if (!solved) return solved.error();
    const Attempt& best = solved.value();
    if (info != nullptr) info->hyperepochs[h] = searchInfo;
    if (best.stuck) return noStreamOrder(g, pb, he, best, noOrderProven);
    if (!doesNotFit) doesNotFit = fitError(g, pb, h, best, options, what);
    if (doesNotFit && unfit == nullptr) return *doesNotFit;
    appendInstances(pb, best, out);
  }
  addTimelines(g.resources.size(), out);
  if (doesNotFit) {
    what.schedule = std::move(out);
    *unfit = std::move(what);
    return *doesNotFit;
  }
  return out;
}

}  // namespace tactus::compiler
