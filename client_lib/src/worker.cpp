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
#include <sched.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>

#include "check_hook.hpp"
#include "fence_wait.hpp"
#include "runtime.hpp"
#include "step_table.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus_trace.hpp"

namespace tactus::client {

thread_local const RuntimeInfo* tCurrentInfo __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local const FrameClock* tCurrentClock = nullptr;

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

// One worker thread's loop over its step table, iteration after iteration: per step it waits for
// the frame's release (awaitRelease), then for what the step waits on (awaitWaits), runs it
// (runStep) and queues its record and publishes its completion (complete). The parts are inlined
// into the one loop: the hand-off from one runnable to the next is the hot path.
class WorkerLoop {
 public:
  WorkerLoop(Runtime& rt, std::uint32_t w)
      : rt_(rt),
        plan_(rt.plan.workers[w]),
        view_(rt.view),
        header_(view_.header()),
        hyper_(view_.hyperepoch(plan_.hyperepoch)),
        table_(buildSteps(rt, w)),
        gpu_(rt.gpu.get()),
        queues_(rt.queues.get()),
        gpuStats_(rt.gpuStats[w].get()),
        ringSlot_(view_.worker(w)),
        ring_(view_.ring(w)),
        capacity_(view_.ringCapacity()),
        log_(ringSlot_, ring_, capacity_, ringSlot_.tail.load(std::memory_order_acquire)),
        hyperPeriodNs_(rt.schedule.hyperepochs[plan_.hyperepoch].periodNs),
        check_(checkHooks()) {
    info_.scheduleId = rt.schedule.identifier;
    clock_.replay = rt.replay;
  }

  /// Binds the GPU engine and pins the thread; false when the GPU engine cannot bind it.
  bool prepare() {
    if (gpu_ != nullptr && !gpu_->bindThread()) {
      rt_.halted.store(true);  // enterScheduler reports gpu->failure()
      return false;
    }
    const ResourceInfo& resource = rt_.schedule.resources[plan_.resource];
    if (resource.kind == ResourceKind::kCpu) {
      // enterScheduler refused a core the process cannot pin to (client.cpp, refuseMissingCore): a
      // failure here is a core taken away since (a cpuset changed mid-run); the worker runs unpinned.
      if ((rt_.flags & shm::kFlagNoPinning) == 0 && resource.core != kNone) pinned_ = ipc::pinThisThread(resource.core);
      engine_ = std::make_unique<CpuEngine>(rt_.registrations);
    } else {
      engine_ = std::make_unique<NullEngine>();
    }
    if (planLeadNs_ > 0) ipc::preciseTimerSlack();  // a plan-guided sleep must not end after its lead
    return true;
  }

  /// The clock of the step that runs (tCurrentClock while the loop runs).
  const FrameClock* clock() const { return &clock_; }

  /// Runs from iteration `h` until the hyperepoch's stopAt or the run's end; returns the
  /// iteration it stopped at.
  std::uint64_t run(std::uint64_t h) {
    for (;; ++h) {
      // Once per iteration, whatever waits satisfied: a worker whose every wait is met at once
      // (words written over far ahead, with its master gone) would otherwise never look at the
      // run's end.
      if (aborted()) return h;
      for (const Step& step : table_.steps) {
        if (h >= hyper_.stopAt.load(std::memory_order_acquire)) return h;
        const std::uint64_t epochFrame = h * step.frames + step.frame;
        const auto releaseTarget = static_cast<std::uint32_t>(epochFrame + 1);
        if (!awaitCoreTurn(step, h) || !awaitRelease(step, h, releaseTarget) || !awaitWaits(step, h, releaseTarget))
          return h;
        std::int64_t start = 0;
        std::int64_t end = 0;
        const RunnableId runnable =
            step.aliasGroup ? runnableForFrame(rt_.schedule, step.instance, epochFrame) : step.runnable;
        if (!runStep(step, h, epochFrame, runnable, start, end)) return h;
        complete(step, h, runnable, start, end);
      }
    }
  }

 private:
  // A run that ended (aborted, or finished before it started, e.g. SIGTERM while waiting for
  // clients) releases nothing more: stop waiting. A normal finish comes after every worker has
  // reached stopAt, so this never cuts a running iteration short.
  bool aborted() const {
    return header_.state.load(std::memory_order_relaxed) >= static_cast<std::uint32_t>(SegmentState::kFinished) ||
           rt_.halted.load(std::memory_order_relaxed);
  }

  // Whether a worker waiting in iteration h leaves: the run ended, or it stops at h.
  bool leaving(std::uint64_t h) const { return aborted() || h >= hyper_.stopAt.load(std::memory_order_relaxed); }

  // Waits, asleep, until the instance before the step on this core has ended, when another
  // client's worker on this core runs that one: until then the core is that thread's by the plan,
  // and a waiter that spins (or polls for its release) takes the core from it, or under
  // SCHED_FIFO holds it until its spin ends. The predecessor's completion wakes this worker (one
  // futex wake and one context switch), and only then does it wait for its release and its other
  // waits, spinning as the core's owner. Every step of a core's timeline waits so for the one
  // before it, so at any time one worker per core is awake to run next. Only for a pinned worker:
  // an unpinned one may run beside its predecessor. False when the run stopped or was aborted.
  [[gnu::always_inline]] bool awaitCoreTurn(const Step& step, std::uint64_t h) {
    if (step.coreWait == kNoCoreWait || !pinned_) return true;
    const WaitRef& c = table_.waits[step.coreWait];
    const auto target = static_cast<std::uint32_t>(c.previousIteration ? h : h + 1);
    if (shm::sequenceReached(c.word->load(std::memory_order_acquire), target)) return true;
    log_.flush();  // asleep until the core is this worker's: there is time
    auto stopped = [&] { return leaving(h); };
    return ipc::waitForSequence(*c.word, *c.waiters, target, 0, stopped, meter_) == ipc::WaitOutcome::kReached;
  }

  // Waits for the step's frame to be released; false when the run stopped at this iteration or
  // was aborted.
  [[gnu::always_inline]] bool awaitRelease(const Step& step, std::uint64_t h, std::uint32_t releaseTarget) {
    shm::EpochSlot& epoch = *step.epoch;
    if (shm::sequenceReached(epoch.released.load(std::memory_order_acquire), releaseTarget)) return true;
    log_.flush();  // waiting for a release: there is time
    auto stopped = [&] { return leaving(h); };
    awaitReleaseLead(epoch, releaseTarget, rt_.schedule.epochs[step.epochId], hyperPeriodNs_, step.frame,
                     releaseLeadNs_, stopped, meter_);
    return ipc::waitForSequence(epoch.released, epoch.waiters, releaseTarget, spinNs_, stopped, meter_) ==
           ipc::WaitOutcome::kReached;
  }

  // The iteration's start by the plan, for plan-guided waiting: known while this frame is the
  // epoch's latest release (a worker behind by a frame or more waits without the plan); -1 when
  // not known.
  static std::int64_t iterationStartNs(const Step& step, std::uint32_t releaseTarget) {
    const shm::EpochSlot& epoch = *step.epoch;
    if (epoch.released.load(std::memory_order_acquire) != releaseTarget) return -1;
    // Acquire: the re-read of `released` below cannot move before this read (a fence would do
    // the same, but ThreadSanitizer does not model fences).
    const std::int64_t ideal = epoch.releaseNs.load(std::memory_order_acquire);
    if (epoch.released.load(std::memory_order_relaxed) != releaseTarget || ideal <= 0 ||
        ideal >= std::numeric_limits<std::int64_t>::max() / 4) {
      return -1;
    }
    return ideal - step.frameOffsetNs;
  }

  // Waits for everything the step waits on (predecessors, GPU fences, its StartTime); false when
  // the run was aborted.
  [[gnu::always_inline]] bool awaitWaits(const Step& step, std::uint64_t h, std::uint32_t releaseTarget) {
    // The iteration's start, read when a wait first needs it (a predecessor that has ended
    // already needs none).
    constexpr std::int64_t kNotRead = -2;
    std::int64_t iterationStart = kNotRead;
    const WaitRef* const waits = table_.waits.data();
    for (const WaitRef* c = waits + step.firstWait; c != waits + step.endWait; ++c) {
      const std::uint64_t iterationTarget = c->previousIteration ? h : h + 1;  // a fence counts in 64 bits
      const auto target = static_cast<std::uint32_t>(iterationTarget);
      if (c->gpuWork != nullptr) [[unlikely]] {
        log_.flush();  // the GPU's time: there is time
        bool handled = false;
        if (!waitForGpuWork(
                c->gpuWork, iterationTarget, spinNs_, [this] { return aborted(); }, handled))
          return false;
        if (handled) continue;
      }
      // When the predecessor should end (ipc::expectedPredecessorEndNs); its start, written by
      // another process, counts only once it is published for this iteration.
      auto expectedEnd = [&](std::int64_t now) -> std::int64_t {
        if (!c->planned) return -1;
        if (iterationStart == kNotRead) iterationStart = iterationStartNs(step, releaseTarget);
        const bool started = c->slot->started.load(std::memory_order_acquire) == target;
        return ipc::expectedPredecessorEndNs(c->plan, iterationStart,
                                             started ? c->slot->startedNs.load(std::memory_order_relaxed) : 0, now,
                                             c->seesStart ? planLeadNs_ : 0);
      };
      if (!log_.empty() && !shm::sequenceReached(c->word->load(std::memory_order_acquire), target)) {
        const std::int64_t now = ipc::monotonicNs();
        const std::int64_t expected = expectedEnd(now);
        // Pushed unless the end is due within kFlushAheadNs: a predecessor with no plan, far
        // ahead, or overdue (stalled, perhaps for good) leaves time, and a run that ends while
        // this worker waits must not find its records still queued here.
        if (expected <= now || expected > now + kFlushAheadNs) log_.flush();
      }
      if (ipc::waitForSequencePlanned(
              *c->word, *c->waiters, target, expectedEnd, planLeadNs_, spinNs_, [this] { return aborted(); }, meter_,
              c->spin, c->plan.linkNs) != ipc::WaitOutcome::kReached) {
        return false;
      }
    }
    if (step.startTimeNs > 0) [[unlikely]] {
      // The frame was released already, so its ideal release time lies in the past: a value
      // beyond now was written over, and must not put this worker to sleep for ever.
      log_.flush();  // a StartTime wait: there is time
      const std::int64_t now = ipc::monotonicNs();
      const std::int64_t release = std::min(step.epoch->releaseNs.load(std::memory_order_relaxed), now);
      ipc::sleepUntilNs(release + step.startTimeNs, kStartTimeSpinNs);
    }
    return true;
  }

  // Runs the step by its kind and returns its times in start and end; false when the worker must
  // stop (the run was aborted during GPU work, or a submission failed: then the client halts).
  [[gnu::always_inline]] bool runStep(const Step& step, std::uint64_t h, std::uint64_t epochFrame, RunnableId runnable,
                                      std::int64_t& start, std::int64_t& end) {
    const InstanceId i = step.instance;
    info_.hyperepochIteration = h;
    info_.epochIteration = epochFrame;
    info_.frame = step.frame;
    info_.instance = index(i);
    clock_.epoch = step.epoch;  // logicalNowNs: the frame's ideal release, or its recorded one
    clock_.epochId = index(step.epochId);
    tCurrentInfo = &info_;
    if (check_ != nullptr && step.kind != StepKind::kObserve) [[unlikely]]
      check_->begin(index(i), index(runnable));
    bool ok = true;
    switch (step.kind) {
      case StepKind::kCall:
      case StepKind::kEngine:
        start = ipc::monotonicNs();
        publishStarted(*step.self, start, h);  // for the successors' plan-guided waits
        TACTUS_TRACE(runnable_start, index(i), index(runnable), h, step.frame, start);
        if (step.kind == StepKind::kCall) [[likely]] {
          step.function(step.userdata);  // a registered plain function: no lookup, no engine
        } else {
          engine_->execute({i, runnable, &info_});
        }
        end = ipc::monotonicNs();
        warmHandOff(step);
        break;
      case StepKind::kSubmit:
        // A submitter publishes its start like any CPU runnable (its successors' plan-guided
        // waits read it); its body's own times come back from submit().
        publishStarted(*step.self, ipc::monotonicNs(), h);
        if (!(step.onQueue ? queues_->submit(i, h, start, end)
                           : gpu_->submit(i, h, gpuAbort_, *gpuStats_, start, end))) {
          // A stream memory operation failed (gpu->failure() names it): the stream's order is
          // lost, so every worker of this client stops and enterScheduler reports the failure.
          if (check_ != nullptr) (void)check_->end(nullptr, 0);
          rt_.halted.store(true);
          ok = false;
        }
        break;
      case StepKind::kObserve:
        log_.flush();  // waiting for the GPU: there is time
        // false: aborted before the work ended
        ok = step.onQueue ? queues_->observe(i, h, gpuAbort_, spinNs_, start, end)
                          : gpu_->observe(i, h, gpuAbort_, spinNs_, start, end);
        break;
    }
    tCurrentInfo = nullptr;
    return ok;
  }

  // Queues the step's run record and publishes its completion (and its fence for GPU work).
  [[gnu::always_inline]] void complete(const Step& step, std::uint64_t h, RunnableId runnable, std::int64_t start,
                                       std::int64_t end) {
    meter_.close(start);
    // The record is queued (DeferredLog); it goes into the ring before the completion is
    // published when the step is the iteration's last, and under tactus-check (whose reports
    // follow it in the ring).
    log_.add({static_cast<std::uint16_t>(EventKind::kRun), spinField(meter_.spunNs), index(step.instance),
              static_cast<std::uint32_t>(h), index(runnable), start, end});
    meter_.spunNs = 0;
    TACTUS_TRACE(runnable_end, index(step.instance), index(runnable), h, start, end);
    if (&step == &table_.steps.back() || check_ != nullptr) log_.flush();
    const bool observed = step.kind == StepKind::kObserve;
    if (check_ != nullptr && !observed) [[unlikely]]
      endCheck(*check_, ringSlot_, ring_, capacity_);
    ipc::publishSequence(step.self->done, step.self->waiters, static_cast<std::uint32_t>(h + 1));
    if (step.signalFence && !observed) [[unlikely]]
      view_.gpu(step.instance).fence.store(h + 1, std::memory_order_release);
  }

  // A wait for a predecessor expected to end more than this ahead pushes the buffered records first.
  static constexpr std::int64_t kFlushAheadNs = 20'000;

  Runtime& rt_;
  const WorkerPlan& plan_;
  const shm::SegmentView& view_;
  shm::SegmentHeader& header_;
  shm::HyperepochSlot& hyper_;
  const StepTable table_;
  CudaEngine* gpu_;
  QueueEngine* queues_;  ///< DLA and VPU submitters and work (Step::onQueue)
  GpuWorkerStats* gpuStats_;
  std::unique_ptr<Engine> engine_;
  shm::WorkerSlot& ringSlot_;
  EventRecord* ring_;
  std::uint32_t capacity_;
  DeferredLog log_;
  ipc::SpinMeter meter_;
  const std::int64_t spinNs_ = ipc::spinBudgetNs();
  // A replay at another rate releases off the plan's times: waits go without the plan's lead.
  const bool planned_ = (rt_.flags & shm::kFlagUnplannedReleases) == 0;
  const std::int64_t releaseLeadNs_ = planned_ ? ipc::releaseLeadNs() : 0;
  const std::int64_t planLeadNs_ = planned_ ? ipc::planLeadNs() : 0;
  const std::int64_t hyperPeriodNs_;
  bool pinned_ = false;  // pinned to its core: it sleeps while another worker's instance has the core (awaitCoreTurn)
  const CheckHooks* const check_;  // non-null only under tactus-check
  const std::function<bool()> gpuAbort_ = [this] { return aborted(); };
  RuntimeInfo info_;
  FrameClock clock_;
};

}  // namespace

std::uint64_t runWorker(Runtime& rt, std::uint32_t w, std::uint64_t firstIteration) {
  if (rt.plan.workers[w].instances.empty()) return firstIteration;
  WorkerLoop loop(rt, w);
  if (!loop.prepare()) return firstIteration;
  tCurrentClock = loop.clock();
  const std::uint64_t stopped = loop.run(firstIteration);
  tCurrentClock = nullptr;
  return stopped;
}

}  // namespace tactus::client
