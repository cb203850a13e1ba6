// The worker threads' hot path: each worker runs its client's instances on one hardware resource
// in the compiled timeline order, iteration after iteration. Per instance it waits for its frame's
// release, then for what it waits on, runs the runnable, logs it (DeferredLog: into the worker's
// ring when it next waits, or before its iteration's last completion) and publishes its
// completion. A CPU predecessor expected to end far ahead (by the plan, or by its start plus its
// WCET) is waited for by sleeping on its completion word until a lead before that time, then
// spinning (plan-guided waiting, TACTUS_PLAN_LEAD_NS); other waits spin, then sleep on the futex.
// The spin time before each run goes into its log record. Everything it reads besides those
// shared words is resolved before the loop into one table of steps (instance, epoch slot,
// completion slot, frame, the registered function) and one flat array of waits: the path from a
// runnable's end to the next one's start touches those and the shared words, nothing else of the
// schedule (after a runnable of a millisecond, each further line is a miss on the hand-off).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <thread>

#include "check_hook.hpp"
#include "fence_wait.hpp"
#include "runtime.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

thread_local const RuntimeInfo* tCurrentInfo __attribute__((tls_model("initial-exec"))) = nullptr;

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
                      std::int64_t hyperPeriodNs, std::uint32_t frame, std::int64_t leadNs, Stopped&& stopped,
                      ipc::SpinMeter& meter) {
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
  const std::int64_t pollStart = ipc::monotonicNs();
  meter.close(pollStart);
  meter.openSinceNs = pollStart;  // the polling below counts as spinning
  for (std::int64_t now = pollStart; epoch.released.load(std::memory_order_acquire) == released;
       now = ipc::monotonicNs()) {
    if (now >= giveUp || stopped()) {
      meter.close(now);
      return;
    }
    ::sched_yield();
  }
}

// A wait on a submittee that a GPU engine runs (its GpuSlot says kFences; known once the run
// has started) is a wait on its fence: the GPU writes it, no host callback. Returns false when
// the run was aborted; `handled` is false when the submittee has no fence (then the caller
// waits on its done word).
template <typename Aborted>
bool waitForGpuWork(const shm::GpuSlot* slot, std::uint64_t target, std::int64_t spinNs, Aborted&& aborted,
                    bool& handled) {
  handled = slot != nullptr &&
            slot->mode.load(std::memory_order_acquire) == static_cast<std::uint32_t>(shm::GpuMode::kFences);
  return !handled || waitForFence(slot->fence, target, spinNs, aborted);
}

// The run record's spin field: the spin time before the run in units of EventRecord's
// kSpinUnitNs, rounded, saturated.
std::uint16_t spinField(std::int64_t spunNs) {
  const std::int64_t units = (spunNs + kSpinUnitNs / 2) / kSpinUnitNs;
  return static_cast<std::uint16_t>(std::clamp<std::int64_t>(units, 0, 0xffff));
}

void pinToCore(std::uint32_t core) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % cores, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);  // best effort: a cpuset may forbid it
}

// A worker's run records on their way to its event ring. A record is pushed when the worker is
// about to wait anyway, before the last completion of each iteration it publishes (the master's
// last drain follows the last completion, so no record of a finished iteration is left behind),
// and when the worker leaves; a hand-off from one runnable to the next on the same worker writes
// no ring line (those lines are the master's to read, so after a long runnable each is a miss,
// and the completion's fence waits for the stores to them). The buffer is a short queue: full, it
// pushes its oldest record only, so a worker that never waits pays one push per run as without
// it, never a burst of pushes on one hand-off. A run that ends early finds the rest when the
// workers leave (the master drains once more after its clients have gone); a client killed
// outright loses what it had queued, at most kCapacity - 1 records of runs whose completions
// were published (pushing those before each completion another client waits for cost the
// hand-off benchmark its p99: 25-40x the framed bare chain instead of 1.5-3x).
class DeferredLog {
 public:
  DeferredLog(shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity, std::uint64_t knownTail)
      : slot_(slot), ring_(ring), capacity_(capacity), knownTail_(knownTail) {}
  DeferredLog(const DeferredLog&) = delete;
  DeferredLog& operator=(const DeferredLog&) = delete;
  ~DeferredLog() { flush(); }

  void add(const EventRecord& record) noexcept {
    if (count_ == kCapacity) {
      push(buffer_[first_]);
      first_ = (first_ + 1) % kCapacity;
      --count_;
    }
    buffer_[(first_ + count_) % kCapacity] = record;
    ++count_;
  }
  /// Pushes what is buffered, in order.
  void flush() noexcept {
    for (; count_ > 0; --count_, first_ = (first_ + 1) % kCapacity) push(buffer_[first_]);
  }
  bool empty() const noexcept { return count_ == 0; }

 private:
  static constexpr std::uint32_t kCapacity = 8;
  void push(const EventRecord& record) noexcept { ipc::pushEvent(slot_, ring_, capacity_, record, knownTail_); }
  shm::WorkerSlot& slot_;
  EventRecord* ring_;
  std::uint32_t capacity_;
  std::uint64_t knownTail_;  // the master's tail as last read (pushEvent)
  std::uint32_t first_ = 0;  // the oldest record's place
  std::uint32_t count_ = 0;
  std::array<EventRecord, kCapacity> buffer_{};
};

// Right after a runnable returns: starts fetching the lines the rest of the hand-off touches (its
// completion word, for writing, and what the next step reads), so that their misses overlap
// instead of following one another: after a long runnable each is a cold line, and the
// completion's locked write lets no later load start before it. The addresses come from the step
// itself (a line just read), so no prefetch waits for another miss.
template <typename StepT>
void warmHandOff(const StepT& step) {
  __builtin_prefetch(step.self, 1);
  for (const void* p : step.next) __builtin_prefetch(p);
}

// Publishes that iteration h of an instance began at `startNs` (CLOCK_MONOTONIC): the time
// first, then the iteration (release), as InstanceSlot describes.
void publishStarted(shm::InstanceSlot& slot, std::int64_t startNs, std::uint64_t h) {
  slot.startedNs.store(startNs, std::memory_order_relaxed);
  slot.started.store(static_cast<std::uint32_t>(h + 1), std::memory_order_release);
}

// What each instance waits for. A CUDA submitter waits for the previous submittee on its own
// stream only until that one is SUBMITTED: the stream's FIFO order does the rest on the GPU.
struct WaitRef {
  std::atomic<std::uint32_t>* word;
  std::atomic<std::uint32_t>* waiters;
  bool previousIteration;
  shm::GpuSlot* gpuWork = nullptr;    ///< a submittee's slot: its fence, when a GPU engine runs it
  bool planned = false;               ///< a CPU predecessor of the same iteration: waited for by the plan
  ipc::PlannedPredecessor plan{};     ///< its planned end and length
  shm::InstanceSlot* slot = nullptr;  ///< the predecessor's slot (its start), with a plan
  /// kYield for a predecessor on another SoC (the master mirrors its end)
  ipc::SpinStyle spin = ipc::SpinStyle::kPause;
  bool seesStart = false;  ///< its start is published here (not on another SoC: only its end is mirrored)
};

// Everything the hot path needs of each instance that no iteration changes, resolved here into
// one contiguous table (and the waits into one flat array): after a long runnable the lines
// and pages the path touches are cold, and every lookup through the schedule (instance, epoch,
// runnable, registration) was a chain of misses on the hand-off.
struct Step {
  InstanceId instance;
  std::uint32_t frame;      ///< its frame in the epoch
  std::uint64_t frames;     ///< the epoch's frames per hyperepoch iteration (>= 1)
  std::uint32_t firstWait;  ///< its waits: waits[firstWait, endWait)
  std::uint32_t endWait;
  shm::EpochSlot* epoch;    ///< its epoch's release word
  shm::InstanceSlot* self;  ///< its completion word and start
  EpochId epochId;
  RunnableId runnable;                  ///< its runnable (an alias group's: runnableForFrame per frame)
  bool aliasGroup;                      ///< round-robin: the runnable changes with the frame
  bool observed;                        ///< GPU work the engine runs: no user code here
  bool submitter;                       ///< a CUDA submitter the engine runs
  bool signalFence;                     ///< GPU work waits for its fence
  std::int64_t frameOffsetNs;           ///< frame * the epoch's period: the iteration's start = release - this
  std::int64_t startTimeNs;             ///< its runnable's StartTime (0: none)
  RunnableFunction function = nullptr;  ///< a registered plain function, called directly (else the engine)
  void* userdata = nullptr;
  /// What the hand-off after it reads next (the next step, its release word, its first wait's
  /// word, the hyperepoch's stop word): prefetched as it returns (warmHandOff).
  std::array<const void*, 4> next;
};

/// A worker's steps in timeline order, and the waits they index into.
struct StepTable {
  std::vector<Step> steps;
  std::vector<WaitRef> waits;
};

// Builds worker w's step table (read-only on rt: its schedule, plan, segment view, registrations
// and GPU engine).
StepTable buildSteps(const Runtime& rt, std::uint32_t w) {
  const WorkerPlan& wp = rt.plan.workers[w];
  const std::vector<InstanceId>& instances = wp.instances;
  const shm::SegmentView& view = rt.view;
  // Submittees run by the GPU engine are ordered by the GPU; their worker only watches them
  // (CudaEngine::observe) to log them and publish their done word.
  const CudaEngine* gpu = rt.gpu.get();
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
    step.observed = gpu != nullptr && gpu->runsSubmittee(i);
    step.submitter = gpu != nullptr && gpu->runsSubmitter(i);
    step.signalFence = signalFence[i] != 0;
    step.frameOffsetNs = static_cast<std::int64_t>(self.frame) * epochInfo.periodNs;
    step.startTimeNs = runnableInfo.startTimeNs;
    if (cpuWorker && !step.aliasGroup && !step.submitter && rt.registrations.contains(self.runnable)) {
      const Registration& r = rt.registrations[self.runnable];
      if (r.registered && r.function != nullptr) {
        step.function = r.function;
        step.userdata = r.userdata;
      }
    }
    step.firstWait = static_cast<std::uint32_t>(waits.size());
    std::int64_t plannedReady = step.frameOffsetNs;
    if (k > 0) plannedReady = std::max(plannedReady, rt.schedule.instances[instances[k - 1]].endNs);
    if (!step.observed) {  // the GPU waits for a submittee's predecessors
      for (const WaitCondition& c : rt.plan.waits[i]) {
        if (step.submitter && gpu->submissionSuffices(i, c.instance)) {
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
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Step& following = steps[(k + 1) % steps.size()];
    steps[k].next = {&following, &following.epoch->released,
                     following.firstWait != following.endWait
                         ? static_cast<const void*>(waits[following.firstWait].word)
                         : static_cast<const void*>(&following.self->started),
                     &view.hyperepoch(wp.hyperepoch).stopAt};
  }
  return {std::move(steps), std::move(waits)};
}

}  // namespace

std::uint64_t runWorker(Runtime& rt, std::uint32_t w, std::uint64_t firstIteration) {
  const WorkerPlan& wp = rt.plan.workers[w];
  const ResourceInfo& resource = rt.schedule.resources[wp.resource];
  const shm::SegmentView& view = rt.view;
  shm::SegmentHeader& header = view.header();
  std::unique_ptr<Engine> engine;
  CudaEngine* gpu = rt.gpu.get();
  GpuWorkerStats* gpuStats = rt.gpuStats[w].get();
  if (wp.instances.empty()) return firstIteration;
  const StepTable table = buildSteps(rt, w);
  const std::vector<Step>& steps = table.steps;
  const bool cpuWorker = resource.kind == ResourceKind::kCpu;
  if (gpu != nullptr && !gpu->bindThread()) {
    rt.halted.store(true);  // enterScheduler reports gpu->failure()
    return firstIteration;
  }
  if (cpuWorker) {
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
  const std::int64_t planLeadNs = ipc::planLeadNs();
  if (planLeadNs > 0) ipc::preciseTimerSlack();  // a plan-guided sleep must not end after its lead
  ipc::SpinMeter meter;
  DeferredLog log(ringSlot, ring, capacity, ringSlot.tail.load(std::memory_order_acquire));
  // A wait for a predecessor expected to end more than this ahead pushes the buffered records first.
  constexpr std::int64_t kFlushAheadNs = 20'000;
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
  const CheckHooks* const check = checkHooks();  // non-null only under tactus-check
  const std::int64_t hyperPeriodNs = rt.schedule.hyperepochs[wp.hyperepoch].periodNs;
  const WaitRef* const waitTable = table.waits.data();
  for (std::uint64_t h = firstIteration;; ++h) {
    // Once per iteration, whatever waits satisfied: a worker whose every wait is met at once (words
    // written over far ahead, with its master gone) would otherwise never look at the run's end.
    if (aborted()) return h;
    for (const Step& step : steps) {
      if (h >= hyper.stopAt.load(std::memory_order_acquire)) return h;
      const InstanceId i = step.instance;
      const std::uint64_t epochFrame = h * step.frames + step.frame;
      shm::EpochSlot& epoch = *step.epoch;
      const auto releaseTarget = static_cast<std::uint32_t>(epochFrame + 1);
      if (!shm::sequenceReached(epoch.released.load(std::memory_order_acquire), releaseTarget)) {
        log.flush();  // waiting for a release: there is time
        auto stopped = [&] { return aborted() || h >= hyper.stopAt.load(std::memory_order_relaxed); };
        awaitReleaseLead(epoch, releaseTarget, rt.schedule.epochs[step.epochId], hyperPeriodNs, step.frame,
                         releaseLeadNs, stopped, meter);
        if (ipc::waitForSequence(epoch.released, epoch.waiters, releaseTarget, spinNs, stopped, meter) !=
            ipc::WaitOutcome::kReached) {
          return h;  // stopped at this iteration, or the run was aborted
        }
      }
      info.hyperepochIteration = h;
      info.epochIteration = epochFrame;
      info.frame = step.frame;
      info.instance = index(i);
      const RunnableId runnable = step.aliasGroup ? runnableForFrame(rt.schedule, i, epochFrame) : step.runnable;
      // The iteration's start by the plan, for plan-guided waiting, read when a wait first needs
      // it (a predecessor that has ended already needs none): known while this frame is the
      // epoch's latest release (a worker behind by a frame or more waits without the plan).
      constexpr std::int64_t kNotRead = -2;
      std::int64_t iterationStart = kNotRead;
      auto readIterationStart = [&]() -> std::int64_t {
        if (iterationStart != kNotRead) return iterationStart;
        iterationStart = -1;
        if (epoch.released.load(std::memory_order_acquire) == releaseTarget) {
          // Acquire: the re-read of `released` below cannot move before this read (a fence would
          // do the same, but ThreadSanitizer does not model fences).
          const std::int64_t ideal = epoch.releaseNs.load(std::memory_order_acquire);
          if (epoch.released.load(std::memory_order_relaxed) == releaseTarget && ideal > 0 &&
              ideal < std::numeric_limits<std::int64_t>::max() / 4) {
            iterationStart = ideal - step.frameOffsetNs;
          }
        }
        return iterationStart;
      };
      for (const WaitRef* c = waitTable + step.firstWait; c != waitTable + step.endWait; ++c) {
        const std::uint64_t iterationTarget = c->previousIteration ? h : h + 1;  // a fence counts in 64 bits
        const auto target = static_cast<std::uint32_t>(iterationTarget);
        if (c->gpuWork != nullptr) [[unlikely]] {
          log.flush();  // the GPU's time: there is time
          bool handled = false;
          if (!waitForGpuWork(c->gpuWork, iterationTarget, spinNs, aborted, handled)) return h;
          if (handled) continue;
        }
        // When the predecessor should end (ipc::expectedPredecessorEndNs); its start, written by
        // another process, counts only once it is published for this iteration.
        auto expectedEnd = [&](std::int64_t now) -> std::int64_t {
          if (!c->planned) return -1;
          const bool started = c->slot->started.load(std::memory_order_acquire) == target;
          return ipc::expectedPredecessorEndNs(c->plan, readIterationStart(),
                                               started ? c->slot->startedNs.load(std::memory_order_relaxed) : 0, now,
                                               c->seesStart ? planLeadNs : 0);
        };
        if (!log.empty() && !shm::sequenceReached(c->word->load(std::memory_order_acquire), target)) {
          const std::int64_t now = ipc::monotonicNs();
          const std::int64_t expected = expectedEnd(now);
          // Pushed unless the end is due within kFlushAheadNs: a predecessor with no plan, far
          // ahead, or overdue (stalled, perhaps for good) leaves time, and a run that ends while
          // this worker waits must not find its records still queued here.
          if (expected <= now || expected > now + kFlushAheadNs) log.flush();
        }
        if (ipc::waitForSequencePlanned(*c->word, *c->waiters, target, expectedEnd, planLeadNs, spinNs, aborted, meter,
                                        c->spin, c->plan.linkNs) != ipc::WaitOutcome::kReached) {
          return h;
        }
      }
      if (step.startTimeNs > 0) [[unlikely]] {
        // The frame was released already, so its ideal release time lies in the past: a value
        // beyond now was written over, and must not put this worker to sleep for ever.
        log.flush();  // a StartTime wait: there is time
        const std::int64_t now = ipc::monotonicNs();
        const std::int64_t release = std::min(epoch.releaseNs.load(std::memory_order_relaxed), now);
        ipc::sleepUntilNs(release + step.startTimeNs, kStartTimeSpinNs);
      }
      tCurrentInfo = &info;
      std::int64_t start = 0;
      std::int64_t end = 0;
      if (check != nullptr && !step.observed) [[unlikely]]
        check->begin(index(i), index(runnable));
      if (step.submitter) [[unlikely]] {
        // A submitter publishes its start like any CPU runnable (its successors' plan-guided
        // waits read it); its body's own times come back from submit().
        publishStarted(*step.self, ipc::monotonicNs(), h);
        if (!gpu->submit(i, h, gpuAbort, *gpuStats, start, end)) {
          // A stream memory operation failed (gpu->failure() names it): the stream's order is
          // lost, so every worker of this client stops and enterScheduler reports the failure.
          if (check != nullptr) (void)check->end(nullptr, 0);
          tCurrentInfo = nullptr;
          rt.halted.store(true);
          return h;
        }
      } else if (step.observed) [[unlikely]] {
        log.flush();  // waiting for the GPU: there is time
        if (!gpu->observe(i, h, gpuAbort, spinNs, start, end)) {
          tCurrentInfo = nullptr;
          return h;  // the run was aborted before the GPU work ended
        }
      } else {
        start = ipc::monotonicNs();
        publishStarted(*step.self, start, h);  // for the successors' plan-guided waits
        if (step.function != nullptr) [[likely]] {
          step.function(step.userdata);  // a registered plain function: no lookup, no engine
        } else {
          engine->execute({i, runnable, &info});
        }
        end = ipc::monotonicNs();
        warmHandOff(step);
      }
      tCurrentInfo = nullptr;
      meter.close(start);
      // The record is queued (DeferredLog); it goes into the ring before the completion is
      // published when the step is the iteration's last, and under tactus-check (whose reports
      // follow it in the ring).
      log.add({static_cast<std::uint16_t>(EventKind::kRun), spinField(meter.spunNs), index(i),
               static_cast<std::uint32_t>(h), index(runnable), start, end});
      meter.spunNs = 0;
      if (&step == &steps.back() || check != nullptr) log.flush();
      if (check != nullptr && !step.observed) [[unlikely]]
        endCheck(*check, ringSlot, ring, capacity);
      ipc::publishSequence(step.self->done, step.self->waiters, static_cast<std::uint32_t>(h + 1));
      if (step.signalFence && !step.observed) [[unlikely]]
        view.gpu(i).fence.store(h + 1, std::memory_order_release);
    }
  }
}

}  // namespace tactus::client
