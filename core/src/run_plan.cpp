// Derives workers, wait conditions and release points from a Schedule.
#include "tactus/core/run_plan.hpp"

#include <algorithm>
#include <map>
#include <new>
#include <string>

#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus {
namespace {

// The bounds every table of the plan is sized by: checked here too, since a client derives the
// plan from the schedule in shared memory, and the tables must never be sized by a count the
// schedule merely claims.
Result<void> checkPlanLimits(const Schedule& s) {
  if (s.instances.size() > limits::kMaxInstancesTotal)
    return fail(ErrorCode::kValidation, "the schedule has " + std::to_string(s.instances.size()) +
                                            " runnable instances, above the limit of " +
                                            std::to_string(limits::kMaxInstancesTotal));
  if (s.epochs.size() > limits::kMaxEpochs)
    return fail(ErrorCode::kValidation, "the schedule has " + std::to_string(s.epochs.size()) +
                                            " epochs, above the limit of " + std::to_string(limits::kMaxEpochs));
  std::uint64_t frames = 0;
  for (const EpochInfo& e : s.epochs) {
    if (e.frames > limits::kMaxFramesPerEpoch)
      return fail(ErrorCode::kValidation, "epoch " + quoted(e.name) + " has " + std::to_string(e.frames) +
                                              " frames, above the limit of " +
                                              std::to_string(limits::kMaxFramesPerEpoch) + " per epoch");
    if (e.periodNs < 0 || e.periodNs > limits::kMaxDurationNs)
      return fail(ErrorCode::kValidation,
                  "epoch " + quoted(e.name) + " has a period outside 0.." + humanDuration(limits::kMaxDurationNs));
    frames += std::max<std::uint32_t>(1, e.frames);
  }
  if (frames > limits::kMaxFramesTotal)
    return fail(ErrorCode::kValidation, "the epochs have " + std::to_string(frames) +
                                            " frames in all, above the limit of " +
                                            std::to_string(limits::kMaxFramesTotal));
  return {};
}

// Position of every resource's timeline in the schedule's list (-1: none).
Result<IdVector<ResourceId, std::int64_t>> timelinePositions(const Schedule& s) {
  IdVector<ResourceId, std::int64_t> timelineOf(s.resources.size(), -1);
  for (std::size_t t = 0; t < s.timelines.size(); ++t) {
    if (!s.resources.contains(s.timelines[t].resource)) {
      return fail(ErrorCode::kValidation, "timeline " + std::to_string(t) + " names an unknown resource");
    }
    timelineOf[s.timelines[t].resource] = static_cast<std::int64_t>(t);
  }
  return timelineOf;
}

// Each instance's epoch and the workers: one per client and hardware resource (an instance's
// first), numbered in (client, resource) order.
Result<void> planWorkers(const Schedule& s, RunPlan& plan) {
  std::map<std::pair<ClientId, ResourceId>, std::uint32_t> workerIndex;
  for (InstanceId i : s.instances.ids()) {
    const InstanceInfo& inst = s.instances[i];
    if (!s.runnables.contains(inst.runnable)) {
      return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " names an unknown runnable");
    }
    const RunnableInfo& r = s.runnables[inst.runnable];
    if (inst.resources.empty() || !s.resources.contains(inst.resources[0])) {
      return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " of " +
                                              quoted(qualifiedName(s, inst.runnable)) + " has no hardware resource");
    }
    if (!s.clients.contains(r.client) || !s.epochs.contains(r.epoch)) {
      return fail(ErrorCode::kValidation, "runnable " + quoted(r.name) + " has no valid client or epoch");
    }
    plan.instanceEpoch[i] = r.epoch;
    workerIndex.emplace(std::make_pair(r.client, inst.resources[0]), 0);
  }
  for (auto& [key, worker] : workerIndex) {
    worker = static_cast<std::uint32_t>(plan.workers.size());
    WorkerPlan w;
    w.client = key.first;
    w.resource = key.second;
    w.hyperepoch = s.resources[key.second].hyperepoch;
    plan.workers.push_back(std::move(w));
  }
  for (InstanceId i : s.instances.ids()) {
    const InstanceInfo& inst = s.instances[i];
    plan.instanceWorker[i] = workerIndex.at({s.runnables[inst.runnable].client, inst.resources[0]});
  }
  return {};
}

// Each worker's instances, in the order of its resource's timeline; every instance on one.
Result<void> fillWorkers(const Schedule& s, const IdVector<ResourceId, std::int64_t>& timelineOf, RunPlan& plan) {
  IdVector<InstanceId, char> seen(s.instances.size(), 0);
  for (WorkerPlan& w : plan.workers) {
    const std::int64_t t = timelineOf[w.resource];
    if (t < 0) {
      return fail(ErrorCode::kValidation, "resource " + quoted(s.resources[w.resource].name) + " has no timeline");
    }
    for (const InstanceId i : s.timelines[static_cast<std::size_t>(t)].instances) {
      if (!s.instances.contains(i)) return fail(ErrorCode::kValidation, "a timeline names an unknown instance");
      if (plan.instanceWorker[i] == static_cast<std::uint32_t>(&w - plan.workers.data()) && !seen[i]) {
        w.instances.push_back(i);
        seen[i] = 1;
      }
    }
    if (!s.hyperepochs.contains(w.hyperepoch) && !w.instances.empty()) {
      w.hyperepoch = instanceHyperepoch(s, w.instances.front());
    }
  }
  for (InstanceId i : s.instances.ids()) {
    if (!seen[i]) {
      return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " of " +
                                              quoted(qualifiedName(s, s.instances[i].runnable)) +
                                              " is missing from the timeline of its hardware resource");
    }
  }
  return {};
}

struct TimelinePredecessor {
  ResourceId resource;
  InstanceId instance;     // kNone: alone on its timeline
  bool previousIteration;  // the first of a timeline waits for the last of the previous iteration
};
using Predecessors = IdVector<InstanceId, std::vector<TimelinePredecessor>>;

// Each instance's predecessor on every timeline it is on, found in one pass over the timelines
// (a search per instance would be quadratic in the timeline's length).
Result<Predecessors> timelinePredecessors(const Schedule& s) {
  Predecessors predecessors(s.instances.size());
  for (const TimelineInfo& t : s.timelines) {
    const auto& order = t.instances;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const InstanceId i = order[k];
      if (!s.instances.contains(i)) return fail(ErrorCode::kValidation, "a timeline names an unknown instance");
      if (k > 0) predecessors[i].push_back({t.resource, order[k - 1], false});
      else predecessors[i].push_back({t.resource, order.back() != i ? order.back() : InstanceId{kNone}, true});
    }
  }
  return predecessors;
}

using ChannelWaits = IdVector<InstanceId, std::vector<InstanceId>>;

// Channels (channels.hpp): a reader run waits for the writer run of its iteration whose
// version it reads, and a writer run for the reader runs of its iteration that read the version
// its buffer holds, as for dependencies. Runs of the previous iteration need no wait: the
// master releases an iteration only once every instance of the one before has ended. Empty
// without channel records.
Result<ChannelWaits> channelWaitLists(const Schedule& s) {
  ChannelWaits channelWaits(s.channelReads.empty() && s.channelWrites.empty() ? 0 : s.instances.size());
  auto channelWait = [&](InstanceId waiter, InstanceId waited) -> Result<void> {
    if (!s.instances.contains(waiter) || !s.instances.contains(waited))
      return fail(ErrorCode::kValidation, "a channel record names an unknown instance");
    channelWaits[waiter].push_back(waited);
    return {};
  };
  for (const ChannelRead& r : s.channelReads)
    if (!r.previousIteration) {
      auto added = channelWait(r.instance, r.writer);
      if (!added) return added.error();
    }
  for (const ChannelWrite& w : s.channelWrites)
    for (const InstanceId reader : w.waits) {
      auto added = channelWait(w.instance, reader);
      if (!added) return added.error();
    }
  return channelWaits;
}

// Wait conditions: timeline predecessors on every resource, graph dependencies (which hold a
// submittee's submitter: the verifier insists on it) and the channel waits.
// addedFor/addedAt find a condition already added for this instance in O(1) (a search of the
// list would be quadratic in it).
Result<void> planWaits(const Schedule& s, const IdVector<ResourceId, std::int64_t>& timelineOf,
                       const Predecessors& predecessors, const ChannelWaits& channelWaits, RunPlan& plan) {
  IdVector<InstanceId, InstanceId> addedFor(s.instances.size(), kNone);
  IdVector<InstanceId, std::uint32_t> addedAt(s.instances.size(), 0);
  for (InstanceId i : s.instances.ids()) {
    std::vector<WaitCondition>& waits = plan.waits[i];
    auto add = [&](InstanceId other, bool previous) {
      if (addedFor[other] == i) {
        WaitCondition& w = waits[addedAt[other]];
        w.previousIteration = w.previousIteration && previous;  // same iteration is the stronger need
        return;
      }
      addedFor[other] = i;
      addedAt[other] = static_cast<std::uint32_t>(waits.size());
      waits.push_back({other, previous});
    };
    for (const ResourceId res : s.instances[i].resources) {
      if (!s.resources.contains(res) || timelineOf[res] < 0) {
        return fail(ErrorCode::kValidation,
                    "instance " + std::to_string(index(i)) + " holds a resource without a timeline");
      }
      const auto found = std::find_if(predecessors[i].begin(), predecessors[i].end(),
                                      [&](const TimelinePredecessor& p) { return p.resource == res; });
      if (found == predecessors[i].end()) {
        return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " of " +
                                                quoted(qualifiedName(s, s.instances[i].runnable)) +
                                                " is missing from the timeline of " + quoted(s.resources[res].name));
      }
      if (found->instance != kNone) add(found->instance, found->previousIteration);
    }
    for (const InstanceId d : s.instances[i].dependencies) {
      if (!s.instances.contains(d))
        return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " depends on an unknown instance");
      add(d, false);
    }
    if (!channelWaits.empty())
      for (const InstanceId d : channelWaits[i]) add(d, false);
  }
  return {};
}

// Frames: each epoch's first in the plan's frame list and each frame's instances
// (checkPlanLimits bounds the sum far below 2^32).
Result<void> planFrames(const Schedule& s, RunPlan& plan) {
  plan.epochFrameBase.resize(s.epochs.size());
  std::uint32_t base = 0;
  for (EpochId e : s.epochs.ids()) {
    plan.epochFrameBase[e] = base;
    base += std::max<std::uint32_t>(1, s.epochs[e].frames);
  }
  plan.frameInstances.resize(base);
  for (InstanceId i : s.instances.ids()) {
    const EpochId e = plan.instanceEpoch[i];
    const std::uint32_t frames = std::max<std::uint32_t>(1, s.epochs[e].frames);
    if (s.instances[i].frame >= frames) {
      return fail(ErrorCode::kValidation, "instance " + std::to_string(index(i)) + " has frame " +
                                              std::to_string(s.instances[i].frame) + " beyond its epoch's frames");
    }
    plan.frameInstances[plan.epochFrameBase[e] + s.instances[i].frame].push_back(i);
  }
  return {};
}

// Release points per hyperepoch in time order, its instances, and each worker's hyperepoch.
Result<void> planHyperepochs(const Schedule& s, RunPlan& plan) {
  plan.hyperepochs.resize(s.hyperepochs.size());
  std::uint64_t releases = 0;  // an epoch listed twice must not multiply the release points
  for (HyperepochId h : s.hyperepochs.ids()) {
    HyperepochPlan& hp = plan.hyperepochs[h];
    for (const EpochId e : s.hyperepochs[h].epochs) {
      if (!s.epochs.contains(e)) return fail(ErrorCode::kValidation, "hyperepoch names an unknown epoch");
      releases += std::max<std::uint32_t>(1, s.epochs[e].frames);
      if (releases > limits::kMaxFramesTotal)
        return fail(ErrorCode::kValidation,
                    "the hyperepochs release more than " + std::to_string(limits::kMaxFramesTotal) + " frames in all");
      for (std::uint32_t f = 0; f < std::max<std::uint32_t>(1, s.epochs[e].frames); ++f) {
        hp.releases.push_back({static_cast<std::int64_t>(f) * s.epochs[e].periodNs, e, f});
      }
    }
    std::sort(hp.releases.begin(), hp.releases.end(), [](const ReleasePoint& a, const ReleasePoint& b) {
      return a.offsetNs != b.offsetNs ? a.offsetNs < b.offsetNs
                                      : (a.epoch != b.epoch ? a.epoch < b.epoch : a.frame < b.frame);
    });
  }
  for (InstanceId i : s.instances.ids()) {
    const HyperepochId h = s.epochs[plan.instanceEpoch[i]].hyperepoch;
    if (!plan.hyperepochs.contains(h)) return fail(ErrorCode::kValidation, "epoch names an unknown hyperepoch");
    plan.hyperepochs[h].instances.push_back(i);
  }
  for (WorkerPlan& w : plan.workers) {
    if (!w.instances.empty()) w.hyperepoch = s.epochs[plan.instanceEpoch[w.instances.front()]].hyperepoch;
  }
  return {};
}

Result<RunPlan> buildRunPlan(const Schedule& s) {
  auto bounded = checkPlanLimits(s);
  if (!bounded) return bounded.error();
  RunPlan plan;
  const auto instanceCount = static_cast<std::uint32_t>(s.instances.size());
  plan.waits.resize(instanceCount);
  plan.instanceWorker.assign(instanceCount, kNone);
  plan.instanceEpoch.assign(instanceCount, kNone);
  auto timelineOf = timelinePositions(s);
  if (!timelineOf) return timelineOf.error();
  if (auto ok = planWorkers(s, plan); !ok) return ok.error();
  if (auto ok = fillWorkers(s, *timelineOf, plan); !ok) return ok.error();
  auto predecessors = timelinePredecessors(s);
  if (!predecessors) return predecessors.error();
  auto channelWaits = channelWaitLists(s);
  if (!channelWaits) return channelWaits.error();
  if (auto ok = planWaits(s, *timelineOf, *predecessors, *channelWaits, plan); !ok) return ok.error();
  if (auto ok = planFrames(s, plan); !ok) return ok.error();
  if (auto ok = planHyperepochs(s, plan); !ok) return ok.error();
  return plan;
}

}  // namespace

Result<RunPlan> makeRunPlan(const Schedule& s) {
  try {
    return buildRunPlan(s);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kValidation,
                "out of memory deriving the run plan (" + std::to_string(s.instances.size()) + " instances)");
  }
}

RunnableId runnableForFrame(const Schedule& s, InstanceId instance, std::uint64_t epochFrame) {
  const RunnableInfo& r = s.runnables[s.instances[instance].runnable];
  if (r.kind != RunnableKind::kAliasGroup) return s.instances[instance].runnable;
  if (r.steps.empty()) return kNone;
  return r.steps[epochFrame % r.steps.size()];
}

}  // namespace tactus
