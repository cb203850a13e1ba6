// The worker threads' hot path: each worker runs its client's instances on one hardware resource
// in the compiled timeline order, iteration after iteration. Per instance it waits for its frame's
// release, then for what it waits on (spin, then futex), runs the runnable, logs it into the
// worker's ring and publishes its completion. Everything it reads besides those shared words is
// the client's private copy (schedule, plan, geometry), resolved to pointers before the loop.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <thread>

#include "runtime.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

thread_local const RuntimeInfo* tCurrentInfo = nullptr;

namespace {

using shm::SegmentState;

constexpr std::int64_t kStartTimeSpinNs = 20'000;  // spin before a StartTime deadline

// A worker about to wait for the very next release of its epoch sleeps until `leadNs` before
// that release's ideal time, then polls for it, yielding the core between polls: the master's
// futex wake-up would otherwise cost tens of microseconds at every frame, and a plain spin would
// keep a master that shares this core from releasing. The next ideal release follows from the
// latest one: a period later within the iteration, or the next iteration's start for frame 0
// (the master never releases earlier; after an overrun it may release later, and then the
// caller's wait takes over). Gives up after twice the lead. Does nothing for the first frame,
// when released already, or with lead 0.
template <typename Stopped>
void awaitReleaseLead(const shm::EpochSlot& epoch, std::uint32_t target, const EpochInfo& info,
                      std::int64_t hyperPeriodNs, std::uint32_t frame, std::int64_t leadNs, Stopped&& stopped) {
  if (leadNs <= 0) return;
  const std::uint32_t released = epoch.released.load(std::memory_order_acquire);
  if (released + 1 != target) return;  // released already, or more than one release away
  const std::int64_t lastIdeal = epoch.releaseNs.load(std::memory_order_relaxed);
  if (lastIdeal <= 0 || lastIdeal > std::numeric_limits<std::int64_t>::max() / 4) return;  // none yet, or written over
  const std::int64_t frames = std::max<std::uint32_t>(1, info.frames);
  const std::int64_t next =
      frame > 0 ? lastIdeal + info.periodNs : lastIdeal - (frames - 1) * info.periodNs + hyperPeriodNs;
  const std::int64_t wake = next - leadNs;
  for (std::int64_t now = ipc::monotonicNs(); now < wake; now = ipc::monotonicNs()) {
    if (stopped() || epoch.released.load(std::memory_order_acquire) != released) return;
    ipc::sleepUntilNs(std::min(wake, now + ipc::kSleepSliceNs), 0);
  }
  const std::int64_t giveUp = wake + 2 * leadNs;
  while (epoch.released.load(std::memory_order_acquire) == released && ipc::monotonicNs() < giveUp) {
    if (stopped()) return;
    ::sched_yield();
  }
}

void pinToCore(std::uint32_t core) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % cores, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);  // best effort: a cpuset may forbid it
}

}  // namespace

void runWorker(Runtime& rt, std::uint32_t w) {
  applyWorkerRealtime(rt.realtime);  // realtime.cpp: the policy init checked
  const WorkerPlan& wp = rt.plan.workers[w];
  const ResourceInfo& resource = rt.schedule.resources[wp.resource];
  const shm::SegmentView& view = rt.view;
  shm::SegmentHeader& header = view.header();
  std::unique_ptr<Engine> engine;
  CudaEngine* gpu = rt.gpu.get();
  GpuWorkerStats* gpuStats = rt.gpuStats[w].get();
  // Submittees run by the GPU engine are not this worker's: their completion comes from the GPU.
  std::vector<std::uint32_t> instances;
  for (const std::uint32_t i : wp.instances) {
    if (gpu == nullptr || !gpu->runsSubmittee(i)) instances.push_back(i);
  }
  if (instances.empty()) return;
  // What each instance waits for. A CUDA submitter waits for the previous submittee on its own
  // stream only until that one is SUBMITTED: the stream's FIFO order does the rest on the GPU.
  struct WaitRef {
    std::atomic<std::uint32_t>* word;
    std::atomic<std::uint32_t>* waiters;
    bool previousIteration;
  };
  std::vector<std::vector<WaitRef>> waitRefs(instances.size());  // by position in `instances`
  for (std::size_t k = 0; k < instances.size(); ++k) {
    const std::uint32_t i = instances[k];
    std::vector<WaitRef>& refs = waitRefs[k];
    for (const WaitCondition& c : rt.plan.waits[i]) {
      if (gpu != nullptr && gpu->runsSubmitter(i) && gpu->submissionSuffices(i, c.instance)) {
        refs.push_back({&view.gpu(c.instance).submitted, &view.gpu(c.instance).waiters, c.previousIteration});
      } else {
        refs.push_back({&view.instance(c.instance).done, &view.instance(c.instance).waiters, c.previousIteration});
      }
    }
  }
  if (resource.kind == ResourceKind::kCpu) {
    if ((rt.flags & shm::kFlagNoPinning) == 0 && resource.core != kNone) pinToCore(resource.core);
    engine = std::make_unique<CpuEngine>(rt.registrations);
  } else {
    engine = std::make_unique<NullEngine>();
  }
  shm::WorkerSlot& ringSlot = view.worker(w);
  EventRecord* ring = view.ring(w);
  const std::uint32_t capacity = view.ringCapacity();
  shm::HyperepochSlot& hyper = view.hyperepoch(wp.hyperepoch);
  const std::int64_t spinNs = ipc::spinBudgetNs();
  const std::int64_t releaseLeadNs = ipc::releaseLeadNs();
  // A run that ended (aborted, or finished before it started, e.g. SIGTERM while waiting for
  // clients) releases nothing more: stop waiting. A normal finish comes after every worker has
  // reached stopAt, so this never cuts a running iteration short.
  auto aborted = [&] {
    return header.state.load(std::memory_order_relaxed) >= static_cast<std::uint32_t>(SegmentState::kFinished) ||
           rt.halted.load(std::memory_order_relaxed);
  };
  RuntimeInfo info;
  info.scheduleId = rt.schedule.identifier;
  const std::function<bool()> gpuAbort = aborted;
  for (std::uint64_t h = 0;; ++h) {
    for (std::size_t k = 0; k < instances.size(); ++k) {
      const std::uint32_t i = instances[k];
      if (h >= hyper.stopAt.load(std::memory_order_acquire)) return;
      const InstanceInfo& inst = rt.schedule.instances[i];
      const std::uint32_t e = rt.plan.instanceEpoch[i];
      const std::uint64_t frames = std::max<std::uint32_t>(1, rt.schedule.epochs[e].frames);
      const std::uint64_t epochFrame = h * frames + inst.frame;
      shm::EpochSlot& epoch = view.epoch(e);
      const auto releaseTarget = static_cast<std::uint32_t>(epochFrame + 1);
      auto stopped = [&] { return aborted() || h >= hyper.stopAt.load(std::memory_order_relaxed); };
      awaitReleaseLead(epoch, releaseTarget, rt.schedule.epochs[e], rt.schedule.hyperepochs[wp.hyperepoch].periodNs,
                       inst.frame, releaseLeadNs, stopped);
      if (ipc::waitForSequence(epoch.released, epoch.waiters, releaseTarget, spinNs, stopped) !=
          ipc::WaitOutcome::kReached) {
        return;  // stopped at this iteration, or the run was aborted
      }
      for (const WaitRef& c : waitRefs[k]) {
        const auto target = static_cast<std::uint32_t>(c.previousIteration ? h : h + 1);
        if (ipc::waitForSequence(*c.word, *c.waiters, target, spinNs, aborted) != ipc::WaitOutcome::kReached) return;
      }
      const std::int64_t startTime = rt.schedule.runnables[inst.runnable].startTimeNs;
      if (startTime > 0) {
        // The frame was released already, so its ideal release time lies in the past: a value
        // beyond now was written over, and must not put this worker to sleep for ever.
        const std::int64_t now = ipc::monotonicNs();
        const std::int64_t release = std::min(epoch.releaseNs.load(std::memory_order_relaxed), now);
        ipc::sleepUntilNs(release + startTime, kStartTimeSpinNs);
      }
      info.hyperepochIteration = h;
      info.epochIteration = epochFrame;
      info.frame = inst.frame;
      info.instance = i;
      const std::uint32_t runnable = runnableForFrame(rt.schedule, i, epochFrame);
      tCurrentInfo = &info;
      std::int64_t start = 0;
      std::int64_t end = 0;
      if (gpu != nullptr && gpu->runsSubmitter(i)) {
        if (!gpu->submit(i, h, gpuAbort, *gpuStats, start, end)) {
          tCurrentInfo = nullptr;
          return;  // the run was aborted while waiting for a GPU predecessor's submission
        }
      } else {
        start = ipc::monotonicNs();
        engine->execute({i, runnable, &info});
        end = ipc::monotonicNs();
      }
      tCurrentInfo = nullptr;
      ipc::pushEvent(
          ringSlot, ring, capacity,
          {static_cast<std::uint16_t>(EventKind::kRun), 0, i, static_cast<std::uint32_t>(h), runnable, start, end});
      shm::InstanceSlot& self = view.instance(i);
      ipc::publishSequence(self.done, self.waiters, static_cast<std::uint32_t>(h + 1));
    }
  }
}

}  // namespace tactus::client
