// The schedule verifier: structure first (verify_structure.cpp), then the timing invariants of a
// static schedule (here): timelines, stream order, releases and deadlines, and no wait cycle.
#include "tactus/core/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "tactus/core/channels.hpp"
#include "tactus/core/text.hpp"
#include "verifier.hpp"

namespace tactus::verify_detail {

VerifyReport Verifier::run() {
  if (withinLimits() && structure() && instanceCounts()) {
    instancesStructure();
    uniqueNames();
    if (report_.ok()) socPlacement();
    if (report_.ok()) timelines();
    if (report_.ok()) streamOrder();
    if (report_.ok()) timing();
    if (report_.ok()) acyclic();
    // Channels and chains: the mapping stored is the one the plan gives (channels.hpp).
    if (report_.ok())
      for (std::string& e : channelErrors(s_)) error(std::move(e));
  }
  return std::move(report_);
}

// Multi-SoC: an instance holds resources of its own client's SoC only.
void Verifier::socPlacement() {
  if (s_.socs.empty()) return;
  for (InstanceId i : s_.instances.ids()) {
    if (full()) break;
    const InstanceInfo& in = s_.instances[i];
    const std::uint32_t soc = runnableSoc(s_, in.runnable);
    for (ResourceId r : in.resources)
      if (s_.resources.contains(r) && s_.resources[r].soc != soc)
        error(inst(i) + " holds " + res(r) + " of another SoC than its client's");
  }
}

// Each timeline lists exactly the instances holding its resource, without overlap, in order.
void Verifier::timelines() {
  const std::size_t nR = s_.resources.size();
  IdVector<ResourceId, std::size_t> holders(nR, 0);
  for (const InstanceInfo& in : s_.instances)
    for (ResourceId x : in.resources) ++holders[x];
  IdVector<ResourceId, char> seenRes(nR, 0);
  IdVector<InstanceId, ResourceId> onLine(s_.instances.size(), kNone);
  for (const TimelineInfo& t : s_.timelines) {
    if (full()) return;
    if (!s_.resources.contains(t.resource)) {
      error("timeline for resource " + std::to_string(index(t.resource)) + " which does not exist");
      continue;
    }
    if (seenRes[t.resource]) {
      error("two timelines for " + res(t.resource));
      continue;
    }
    seenRes[t.resource] = 1;
    if (t.instances.size() != holders[t.resource])
      error("timeline of " + res(t.resource) + " lists " + std::to_string(t.instances.size()) + " instances but " +
            std::to_string(holders[t.resource]) + " hold it");
    for (std::size_t k = 0; k < t.instances.size() && !full(); ++k) {
      const InstanceId i = t.instances[k];
      if (!s_.instances.contains(i)) {
        error("timeline of " + res(t.resource) + " lists instance " + std::to_string(index(i)) +
              " which does not exist");
        continue;
      }
      const InstanceInfo& in = s_.instances[i];
      if (!holds(i, t.resource)) {
        error("timeline of " + res(t.resource) + " lists " + inst(i) + " which does not hold it");
        continue;
      }
      if (onLine[i] == t.resource) {
        error("timeline of " + res(t.resource) + " lists " + inst(i) + " twice");
        continue;
      }
      onLine[i] = t.resource;
      if (k > 0 && s_.instances.contains(t.instances[k - 1])) {
        const InstanceInfo& prev = s_.instances[t.instances[k - 1]];
        if (prev.endNs > in.startNs)
          error("on " + res(t.resource) + ", " + inst(i) + " (" + humanDuration(in.startNs) + ".." +
                humanDuration(in.endNs) + ") overlaps or precedes " + inst(t.instances[k - 1]) + " (" +
                humanDuration(prev.startNs) + ".." + humanDuration(prev.endNs) + ")");
      }
    }
  }
  for (ResourceId r : s_.resources.ids())
    if (holders[r] && !seenRes[r]) error(res(r) + " is held but has no timeline");
}

// A CUDA stream (DLA handle, PVA stream) runs its work in submission order: the work of the submitters on a stream's
// timeline runs in that order on the stream's device. Otherwise the runtime, which enqueues in
// submitter order, would queue work behind what the plan runs after it (a GPU wait on it could
// never end). The submitters hold the stream while they submit; the work does not need to.
void Verifier::streamOrder() {
  // Position of every instance on each device timeline.
  IdVector<InstanceId, std::uint32_t> onDevice(s_.instances.size(), kNone);
  for (const TimelineInfo& t : s_.timelines) {
    if (!isEngine(s_.resources[t.resource].kind)) continue;
    for (std::size_t k = 0; k < t.instances.size(); ++k) onDevice[t.instances[k]] = static_cast<std::uint32_t>(k);
  }
  for (const TimelineInfo& t : s_.timelines) {
    if (full()) return;
    if (!isEngineQueue(s_.resources[t.resource].kind)) continue;
    InstanceId previous = kNone;  // the work of the last submitter so far, in timeline order
    for (InstanceId i : t.instances) {
      const InstanceInfo& in = s_.instances[i];
      const RunnableInfo& r = s_.runnables[in.runnable];
      if (r.kind != RunnableKind::kSubmitter || !s_.runnables.contains(r.submits)) continue;
      if (in.frame >= slot_[r.submits].size()) continue;
      const InstanceId work = slot_[r.submits][in.frame];
      if (work == kNone || onDevice[work] == kNone) continue;
      if (previous != kNone && s_.instances[work].resources[0] == s_.instances[previous].resources[0] &&
          onDevice[work] < onDevice[previous]) {
        const InstanceId first =
            slot_[s_.runnables[s_.instances[previous].runnable].submittedBy][s_.instances[previous].frame];
        error("on " + res(t.resource) + ", " + inst(work) + " runs before " + inst(previous) + ", the work of " +
              inst(first) + ", which is submitted first (a stream runs its work in submission order)");
        break;
      }
      previous = work;
    }
  }
}

// Releases, StartTime, dependencies, epoch boundaries, period, deadlines.
void Verifier::timing() {
  IdVector<HyperepochId, std::int64_t> length(s_.hyperepochs.size(), 0);
  // Every time was checked against limits::kMaxDurationNs and frames against
  // kMaxFramesPerEpoch, so release + StartTime or Deadline stays far inside int64.
  for (InstanceId i : s_.instances.ids()) {
    if (full()) break;
    const InstanceInfo& in = s_.instances[i];
    const RunnableInfo& r = s_.runnables[in.runnable];
    const EpochInfo& e = s_.epochs[r.epoch];
    std::int64_t release = e.periodNs * in.frame;
    // Named only where a message needs it (a large schedule has 100,000s of instances).
    auto what = [&] { return inst(i); };
    if (in.startNs < release + r.startTimeNs)
      error(what() + " starts at " + humanDuration(in.startNs) + ", before its release + StartTime " +
            humanDuration(release + r.startTimeNs));
    for (InstanceId d : in.dependencies) {
      // A dependency across SoCs adds the transfer time of its pair of SoCs.
      const bool cross = !s_.socs.empty() && crossesSocs(s_, s_.instances[d].runnable, in.runnable);
      const std::int64_t lag = cross ? dependencyLatencyNs(s_, s_.instances[d].runnable, in.runnable) : 0;
      const std::int64_t ready = s_.instances[d].endNs + lag;
      if (in.startNs < ready) {
        std::string message = what() + " starts at " + humanDuration(in.startNs) + " before its dependency " + inst(d) +
                              " ends at " + humanDuration(s_.instances[d].endNs);
        if (cross) {
          message += " plus the cross-SoC latency " + humanDuration(lag) + " from SoC " +
                     quoted(s_.socs[runnableSoc(s_, s_.instances[d].runnable)].name) + " to SoC " +
                     quoted(s_.socs[runnableSoc(s_, in.runnable)].name);
        }
        error(message);
      }
    }
    if (in.endNs > release + e.periodNs) {
      // The last frame's boundary is the next hyperepoch iteration: crossing it is overlength.
      std::string msg = what() + " ends at " + humanDuration(in.endNs) + ", after epoch " + quoted(e.name) +
                        " releases its next frame at " + humanDuration(release + e.periodNs);
      if (opt_.allowOverlength && in.frame + 1 == e.frames) warning(msg);
      else error(msg);
    }
    if (r.deadlineNs != kNoDuration && in.endNs > release + r.deadlineNs)
      warning(what() + " misses its deadline: ends at " + humanDuration(in.endNs - release) +
              " after its release, deadline " + humanDuration(r.deadlineNs));
    length[e.hyperepoch] = std::max(length[e.hyperepoch], in.endNs);
  }
  for (HyperepochId h : s_.hyperepochs.ids()) {
    const HyperepochInfo& hi = s_.hyperepochs[h];
    if (length[h] > hi.periodNs) {
      std::string msg = "hyperepoch " + quoted(hi.name) + ": schedule length " + humanDuration(length[h]) +
                        " exceeds its period " + humanDuration(hi.periodNs);
      if (opt_.allowOverlength) warning(msg);
      else error(msg);
    }
  }
}

// The runtime waits along dependencies and timeline order: together they must not form a cycle
// (possible only with zero-length instances at the same time, or with cyclic dependencies; on a
// CUDA stream, its submission order plus a dependency is a GPU wait cycle). The message names
// the instances of one cycle and what orders each after the one before.
void Verifier::acyclic() {
  const std::size_t nI = s_.instances.size();
  // An edge into an instance: its predecessor, and the timeline resource that orders them
  // (kNone: a dependency).
  struct Edge {
    InstanceId from;
    ResourceId line;
  };
  // The edges out of each instance in one array (offsets per instance), not a list per
  // instance: a large schedule has 100,000s of instances. Which instances Kahn's pass leaves,
  // and their in-degrees left, do not depend on the order it takes them in.
  IdVector<InstanceId, std::uint32_t> indeg(nI, 0);
  std::vector<std::uint32_t> first(nI + 1, 0);  // edges out of i: out[first[i], first[i + 1])
  for (InstanceId i : s_.instances.ids())
    for (InstanceId d : s_.instances[i].dependencies) {
      ++first[index(d) + 1];
      ++indeg[i];
    }
  for (const TimelineInfo& t : s_.timelines)
    for (std::size_t k = 1; k < t.instances.size(); ++k) {
      ++first[index(t.instances[k - 1]) + 1];
      ++indeg[t.instances[k]];
    }
  for (std::size_t i = 0; i < nI; ++i) first[i + 1] += first[i];
  std::vector<InstanceId> out(first[nI]);
  {
    std::vector<std::uint32_t> at(first.begin(), first.end() - 1);
    for (InstanceId i : s_.instances.ids())
      for (InstanceId d : s_.instances[i].dependencies) out[at[index(d)]++] = i;
    for (const TimelineInfo& t : s_.timelines)
      for (std::size_t k = 1; k < t.instances.size(); ++k) out[at[index(t.instances[k - 1])]++] = t.instances[k];
  }
  std::vector<InstanceId> ready;
  for (InstanceId i : s_.instances.ids())
    if (!indeg[i]) ready.push_back(i);
  std::size_t done = 0;
  while (!ready.empty()) {
    const InstanceId i = ready.back();
    ready.pop_back();
    ++done;
    for (std::uint32_t e = first[index(i)]; e < first[index(i) + 1]; ++e)
      if (--indeg[out[e]] == 0) ready.push_back(out[e]);
  }
  if (done == nI) return;
  // A cycle (rare): the edges into each instance, to walk it back.
  IdVector<InstanceId, std::vector<Edge>> prev(nI);
  for (InstanceId i : s_.instances.ids())
    for (InstanceId d : s_.instances[i].dependencies) prev[i].push_back({d, kNone});
  for (const TimelineInfo& t : s_.timelines)
    for (std::size_t k = 1; k < t.instances.size(); ++k)
      prev[t.instances[k]].push_back({t.instances[k - 1], t.resource});
  // Every instance left has a predecessor left: walking back along those from the first one
  // left must come round to an instance already passed, which closes a cycle.
  InstanceId at = kNone;
  for (InstanceId i : s_.instances.ids())
    if (indeg[i]) {
      at = i;
      break;
    }
  IdVector<InstanceId, std::uint32_t> step(nI, 0);  // 1 + position on the walk; 0: not passed
  std::vector<Edge> walk;                           // walk[k]: the edge into the k-th instance passed
  while (step[at] == 0) {
    step[at] = static_cast<std::uint32_t>(walk.size() + 1);
    const auto e = std::find_if(prev[at].begin(), prev[at].end(), [&](const Edge& p) { return indeg[p.from] != 0; });
    walk.push_back(*e);  // always found: `at` was left, so one of its predecessors was too
    at = e->from;
  }
  // The walk went backwards: from the repeated instance, the edges into walk[k]'s instance
  // lead forwards through the cycle.
  std::vector<InstanceId> cycle;
  std::vector<ResourceId> lines;
  for (std::size_t k = walk.size(); k-- > step[at] - 1;) {
    cycle.push_back(walk[k].from);
    lines.push_back(walk[k].line);
  }
  constexpr std::size_t kShown = 12;
  std::string msg = "dependencies and timeline order form a cycle: " + inst(cycle[0]);
  for (std::size_t k = 0; k < cycle.size() && k < kShown; ++k) {
    const InstanceId to = k + 1 < cycle.size() ? cycle[k + 1] : cycle[0];
    msg += " -> " + inst(to) + (lines[k] == kNone ? " (dependency)" : " (after it on " + res(lines[k]) + ")");
  }
  if (cycle.size() > kShown) msg += " -> ... (" + std::to_string(cycle.size()) + " instances in all)";
  error(msg + "; the runtime would wait forever");
}

}  // namespace tactus::verify_detail

namespace tactus {

using verify_detail::Verifier;

VerifyReport verifySchedule(const Schedule& schedule, const VerifyOptions& options) {
  try {
    return Verifier(schedule, options).run();
  } catch (const std::bad_alloc&) {
    // Tables are bounded by the limits and the schedule's own size; a machine short of memory
    // still gets a message, not an exception through every caller.
    VerifyReport report;
    report.errors.push_back("out of memory while verifying the schedule (" + std::to_string(schedule.instances.size()) +
                            " instances)");
    return report;
  }
}

Result<void> verifyScheduleResult(const Schedule& schedule, const VerifyOptions& options) {
  VerifyReport report = verifySchedule(schedule, options);
  if (report.ok()) return {};
  std::string msg = "schedule " + quoted(schedule.name) + " fails verification:";
  std::size_t shown = 0;
  for (const std::string& e : report.errors) {
    if (shown++ == 10) {
      msg += "\n  (" + std::to_string(report.errors.size() - 10) + " more)";
      break;
    }
    msg += "\n  " + e;
  }
  return fail(ErrorCode::kVerification, msg);
}

}  // namespace tactus
