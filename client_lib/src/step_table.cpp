// The worker's step table (step_table.hpp).
#include "step_table.hpp"

#include <algorithm>

#include "fence_wait.hpp"

namespace tactus::client {

namespace {

// A step of a registered CPU runnable calls it; under --replay a replayed source's step puts its
// recorded versions into its buffers in place of the call.
void chooseCall(Step& step, const Runtime& rt, bool cpuWorker) {
  if (cpuWorker && !step.aliasGroup && step.kind == StepKind::kEngine && rt.registrations.contains(step.runnable)) {
    const Registration& r = rt.registrations[step.runnable];
    if (r.registered && r.function != nullptr) {
      step.kind = StepKind::kCall;
      step.function = r.function;
      step.userdata = r.userdata;
    }
  }
  // --replay: a replayed source's recorded versions go into its buffers in place of its call.
  if (const ReplaySourceFeed* feed =
          rt.replay ? rt.replay->find(rt.schedule.identifier, index(step.instance)) : nullptr;
      feed != nullptr && cpuWorker && !step.aliasGroup &&
      (step.kind == StepKind::kCall || step.kind == StepKind::kEngine)) {
    step.kind = StepKind::kCall;
    step.function = &replayStep;
    step.userdata = const_cast<ReplaySourceFeed*>(feed);
  }
}

// Each step's `next`: what its worker prefetches at the hand-off to the following step (the
// following step's three lines, its release word, the word its first wait watches and that wait's
// entry, the hyperepoch's stop word, its start word). The first wait's entry lies in `waits`'
// buffer, which the move into the StepTable keeps.
void linkNext(std::vector<Step>& steps, const std::vector<WaitRef>& waits, const void* stopAt) {
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Step& following = steps[(k + 1) % steps.size()];
    const bool waitsFirst = following.firstWait != following.endWait;
    const auto* line = reinterpret_cast<const char*>(&following);
    const auto* wait = reinterpret_cast<const char*>(waitsFirst ? &waits[following.firstWait] : nullptr);
    steps[k].next = {line,
                     line + shm::kCacheLine,
                     line + 2 * shm::kCacheLine,
                     &following.epoch->released,
                     waitsFirst ? static_cast<const void*>(waits[following.firstWait].word)
                                : static_cast<const void*>(&following.self->started),
                     waitsFirst ? wait : line,
                     waitsFirst ? wait + sizeof(WaitRef) - 1 : line,
                     stopAt,
                     &following.self->started};
  }
}

}  // namespace

StepTable buildSteps(const Runtime& rt, std::uint32_t w) {
  const WorkerPlan& wp = rt.plan.workers[w];
  const std::vector<InstanceId>& instances = wp.instances;
  const shm::SegmentView& view = rt.view;
  // Submittees run by the GPU engine are ordered by the GPU; their worker only watches them
  // (CudaEngine::observe) to log them and publish their done word.
  const CudaEngine* gpu = rt.gpu.get();
  const QueueEngine* queues = rt.queues.get();                                       // DLA and VPU work, the same way
  const IdVector<InstanceId, char> signalFence = fenceWanted(rt.schedule, rt.plan);  // GPU work waits for it
  // The SoC of this worker's client (kNone in a single-SoC schedule): a predecessor of another
  // client's SoC ends elsewhere, and this SoC's master writes its completion when the DDS sample
  // comes (master/soc_run.cpp).
  const std::uint32_t ownSoc = rt.schedule.clients[rt.clientIndex].soc;
  std::vector<WaitRef> waits;
  std::vector<Step> steps(instances.size());
  const bool cpuWorker = rt.schedule.resources[wp.resource].kind == ResourceKind::kCpu;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    const InstanceId i = instances[k];
    Step& step = steps[k];
    // When the plan has this instance ready to wait: its frame's release, or the planned end of
    // the worker's instance before it, whichever is later.
    const InstanceInfo& self = rt.schedule.instances[i];
    const EpochId e = rt.plan.instanceEpoch[i];
    const EpochInfo& epochInfo = rt.schedule.epochs[e];
    const RunnableInfo& runnableInfo = rt.schedule.runnables[self.runnable];
    step.instance = i;
    step.frame = self.frame;
    step.frames = std::max<std::uint32_t>(1, epochInfo.frames);
    step.epoch = &view.epoch(e);
    step.self = &view.instance(i);
    step.epochId = e;
    step.runnable = self.runnable;
    step.aliasGroup = runnableInfo.kind == RunnableKind::kAliasGroup;
    step.onQueue = queues != nullptr && (queues->runsSubmittee(i) || queues->runsSubmitter(i));
    step.kind = gpu != nullptr && gpu->runsSubmittee(i)   ? StepKind::kObserve
                : gpu != nullptr && gpu->runsSubmitter(i) ? StepKind::kSubmit
                                                          : StepKind::kEngine;
    if (step.onQueue) step.kind = queues->runsSubmittee(i) ? StepKind::kObserve : StepKind::kSubmit;
    step.signalFence = signalFence[i] != 0;
    step.frameOffsetNs = static_cast<std::int64_t>(self.frame) * epochInfo.periodNs;
    step.startTimeNs = runnableInfo.startTimeNs;
    chooseCall(step, rt, cpuWorker);
    step.firstWait = static_cast<std::uint32_t>(waits.size());
    std::int64_t plannedReady = step.frameOffsetNs;
    if (k > 0) plannedReady = std::max(plannedReady, rt.schedule.instances[instances[k - 1]].endNs);
    // The GPU waits for a submittee's predecessors, and its worker only watches it. The worker
    // of queue-run work (DLA, VPU) waits for their done words before it watches: the queue has
    // no clock, so the times that worker logs must follow its predecessors' logged ends.
    if (step.kind != StepKind::kObserve || step.onQueue) {
      for (const WaitCondition& c : rt.plan.waits[i]) {
        const bool suffices =
            step.kind == StepKind::kSubmit &&
            (step.onQueue ? queues->submissionSuffices(i, c.instance) : gpu->submissionSuffices(i, c.instance));
        if (suffices) {
          waits.push_back({&view.gpu(c.instance).submitted, &view.gpu(c.instance).waiters, c.previousIteration});
        } else {
          // A CPU predecessor of the same iteration ends by its plan (a plain CPU runnable: a
          // submitter's end depends on its stream); a GPU one's end is the GPU's.
          const InstanceInfo& pred = rt.schedule.instances[c.instance];
          const RunnableKind kind = rt.schedule.runnables[pred.runnable].kind;
          const bool work = kind == RunnableKind::kSubmittee;
          const bool planned = !c.previousIteration && kind == RunnableKind::kCpu && !pred.resources.empty() &&
                               rt.schedule.resources[pred.resources[0]].kind == ResourceKind::kCpu;
          const std::uint32_t predSoc = rt.schedule.clients[rt.schedule.runnables[pred.runnable].client].soc;
          // Its core's timeline predecessor (the plan's first wait) of the same iteration, run by
          // another client's worker. Not the previous iteration's last (the first of a core's
          // timeline): that one ended before this frame's release, which the worker waits for
          // anyway, and waking for it at the iteration's end would put a thread beside the release
          // thread that has to see that end.
          if (cpuWorker && waits.size() == step.firstWait && !c.previousIteration &&
              pred.resources.front() == wp.resource && rt.plan.instanceWorker[c.instance] != w)
            step.coreWait = static_cast<std::uint32_t>(waits.size());
          const bool remote = predSoc != ownSoc && predSoc != kNone && ownSoc != kNone;
          waits.push_back({&view.instance(c.instance).done,
                           &view.instance(c.instance).waiters,
                           c.previousIteration,
                           work ? &view.gpu(c.instance) : nullptr,
                           planned,
                           {pred.endNs, pred.endNs - plannedReady, pred.endNs - pred.startNs,
                            remote ? socLatencyNs(rt.schedule, predSoc, ownSoc) : 0},
                           &view.instance(c.instance),
                           remote ? ipc::SpinStyle::kYield : ipc::SpinStyle::kPause,
                           !remote});
        }
      }
    }
    step.endWait = static_cast<std::uint32_t>(waits.size());
  }
  linkNext(steps, waits, &view.hyperepoch(wp.hyperepoch).stopAt);
  return {std::move(steps), std::move(waits)};
}

}  // namespace tactus::client
