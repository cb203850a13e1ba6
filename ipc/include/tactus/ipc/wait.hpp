// The hot path: waiting for a 32-bit sequence word in shared memory to reach a target, and
// publishing a new value. Spin first (a cache-line read costs a fraction of a microsecond), then
// sleep on a futex (microseconds to wake). The waker calls FUTEX_WAKE only when the waiter count
// says someone sleeps, so an uncontended hand-off costs no system call.
//
// Correctness of the sleep: the waiter increments `waiters`, re-reads `word` and sleeps only while
// `word` still holds the value it read (FUTEX_WAIT compares atomically). The publisher stores
// `word`, then reads `waiters`; both sides use sequentially consistent operations, so either the
// waiter sees the new value or the publisher sees the waiter and wakes it.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"

namespace tactus::ipc {

/// How long one futex sleep lasts before the waiter re-checks its abort condition (ns). Bounds
/// how late a waiter notices a dead master or an aborted run even if no one wakes it.
inline constexpr std::int64_t kSleepSliceNs = 10'000'000;

/// Default spin budget before sleeping (ns); see spinBudgetNs().
inline constexpr std::int64_t kDefaultSpinNs = 20'000;

/// The spin budget in ns: TACTUS_SPIN_NS from the environment if set (benchmarks sweep it),
/// else kDefaultSpinNs. Read once per process.
std::int64_t spinBudgetNs();

/// Default lead before a frame's ideal release at which a waiting worker stops sleeping (ns).
inline constexpr std::int64_t kDefaultReleaseLeadNs = 200'000;

/// How long before the next ideal release of its epoch a worker that waits for that release
/// wakes and spins, instead of sleeping on the futex until the master wakes it (which costs tens
/// of microseconds at every frame): TACTUS_RELEASE_LEAD_NS if set, else kDefaultReleaseLeadNs;
/// 0 turns it off. Read once per process.
std::int64_t releaseLeadNs();

/// Default lead before a predecessor's planned end at which a worker that slept waiting for it
/// wakes and spins (ns); see planLeadNs().
inline constexpr std::int64_t kDefaultPlanLeadNs = 100'000;

/// Plan-guided waiting: a worker whose predecessor is expected to end more than this lead (plus
/// kMinPlanSleepNs) ahead sleeps on the predecessor's completion word until the lead before its
/// expected end, then spins: TACTUS_PLAN_LEAD_NS if set, else kDefaultPlanLeadNs; 0 turns it off
/// (then it spins TACTUS_SPIN_NS and sleeps until woken, as before). Read once per process.
std::int64_t planLeadNs();

/// The shortest plan-guided sleep worth a system call (ns): a planned end nearer than lead + this
/// is waited for by spinning.
inline constexpr std::int64_t kMinPlanSleepNs = 20'000;

/// A duration in ns from environment variable `name` (a non-negative integer), else `fallback`.
std::int64_t envDurationNs(const char* name, std::int64_t fallback);

/// How a wait ended.
enum class WaitOutcome {
  kReached,  ///< the word reached the target
  kAborted,  ///< `abort()` returned true first
};

/// The CPU time a waiter spent spinning. A spin that ends in a sleep or an abort is added to
/// `spunNs` by the wait; one that ends with the target reached leaves its start in `openSinceNs`,
/// closed by the caller's next clock read (the runnable's start stamp), so that a hand-off reads
/// the clock no more often than without the meter.
struct SpinMeter {
  std::int64_t spunNs = 0;       ///< spin time counted so far
  std::int64_t openSinceNs = 0;  ///< start of a spin not yet counted; 0: none

  /// Counts the open spin up to `nowNs`.
  void close(std::int64_t nowNs) noexcept {
    if (openSinceNs != 0) spunNs += nowNs - openSinceNs;
    openSinceNs = 0;
  }
};

/// How a waiter spins before it sleeps.
enum class SpinStyle {
  kPause,  ///< a pause-hinted busy loop: the fastest hand-off, for a word another core writes
  /// sched_yield between polls: for a word that a thread of the master writes (a cross-SoC end
  /// the master's DDS listener mirrors), which may need this very core to deliver it; a busy loop
  /// would hold the core against it until the kernel preempts (on 2 cores: hundreds of us).
  kYield,
};

/// Waits until sequenceReached(word, target). `abort` is polled while spinning (every 64 spins,
/// every poll with kYield) and after every futex wake or time-out; it must be cheap. Spinning is
/// counted in `meter`.
template <typename Abort>
WaitOutcome waitForSequence(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters, std::uint32_t target,
                            std::int64_t spinNs, Abort&& abort, SpinMeter& meter, SpinStyle style = SpinStyle::kPause) {
  if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
  if (spinNs > 0) {
    const std::int64_t spinStart = monotonicNs();
    meter.close(spinStart);
    const std::int64_t spinEnd = spinStart + spinNs;
    const bool yield = style == SpinStyle::kYield;
    for (std::uint32_t n = 1;; ++n) {
      if (yield) {
        ::sched_yield();
      } else {
        cpuRelax();
      }
      if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) {
        meter.openSinceNs = spinStart;
        return WaitOutcome::kReached;
      }
      if ((n & 63u) == 0 || yield) {
        const bool stop = abort();
        const std::int64_t now = monotonicNs();
        if (stop || now > spinEnd) {
          meter.spunNs += now - spinStart;
          if (stop) return WaitOutcome::kAborted;
          break;
        }
      }
    }
  }
  for (;;) {
    waiters.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    if (!shm::sequenceReached(seen, target)) futexWait(word, seen, kSleepSliceNs);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
    if (abort()) return WaitOutcome::kAborted;
  }
}

/// waitForSequence without spin accounting.
template <typename Abort>
WaitOutcome waitForSequence(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters, std::uint32_t target,
                            std::int64_t spinNs, Abort&& abort) {
  SpinMeter meter;
  return waitForSequence(word, waiters, target, spinNs, abort, meter);
}

/// What a plan-guided wait knows of one CPU predecessor (all times CLOCK_MONOTONIC ns).
struct PlannedPredecessor {
  std::int64_t plannedEndNs = 0;  ///< its planned end, from the iteration's start
  std::int64_t planGapNs = 0;     ///< its planned end - when the plan has the waiter ready to wait
  std::int64_t wcetNs = 0;        ///< its planned length
  /// How long after its end the end may be seen here: 0 for a predecessor on this SoC; the
  /// schedule's cross-SoC latency for one on another SoC (its end comes over DDS). A bound, not the
  /// usual delay (tens of us on loopback): the expected end does not include it, the spin window
  /// after it does (waitForSequencePlanned's `lateNs`).
  std::int64_t linkNs = 0;
};

/// When a CPU predecessor is expected to end, for waitForSequencePlanned: a WCET after its start
/// once it started (`startedNs` > 0, lying between the iteration's start and now). Before that, not
/// before a WCET from now (it has yet to run), and:
/// - when its WCET is at least twice the waiter's lead (`leadNs` > 0; and exceeds it by more than
///   kMinPlanSleepNs), exactly a WCET from now, the earliest it can end. The wait asks again after
///   every sleep, so a waiter sleeps in steps of (WCET - lead), at least a lead long, until the
///   predecessor starts, then until a lead before its start + WCET: it is awake when a predecessor
///   that starts at any moment ends, however far ahead of its plan that is (by the plan alone it
///   would sleep through an early start and pay a futex wake-up, tens of us on a VM, on the
///   hand-off). Only for a predecessor whose start this process can see (not one on another SoC,
///   whose start is not mirrored: pass `leadNs` 0 there);
/// - otherwise (a short predecessor: its steps would wake the waiter too often) by the plan: its
///   planned end, or as far ahead of now as the plan puts it ahead of the waiter's readiness,
///   whichever is sooner. The second keeps a chain that runs ahead of its plan (runnables that end
///   before their WCET) spinning from one hand-off to the next.
/// <= 0: unknown (`iterationStartNs` <= 0). WCETs and planned times are bounded by
/// limits::kMaxDurationNs: the sums cannot overflow.
inline std::int64_t expectedPredecessorEndNs(const PlannedPredecessor& p, std::int64_t iterationStartNs,
                                             std::int64_t startedNs, std::int64_t nowNs, std::int64_t leadNs = 0) {
  if (iterationStartNs <= 0) return -1;
  if (startedNs >= iterationStartNs && startedNs <= nowNs) return startedNs + p.wcetNs;
  if (leadNs > 0 && p.wcetNs - leadNs >= std::max(leadNs, kMinPlanSleepNs + 1)) return nowNs + p.wcetNs;
  return std::max(std::min(iterationStartNs + p.plannedEndNs, nowNs + p.planGapNs), nowNs + p.wcetNs);
}

/// How much longer than `leadNs` past an expected time a poll may go on for a word that may come
/// up to `lateNs` late (a cross-SoC latency): `lateNs`, but at most 4 leads, so that a bound given
/// for a slow network does not keep a waiter polling for most of a period.
inline std::int64_t pollLateNs(std::int64_t lateNs, std::int64_t leadNs) {
  return std::clamp<std::int64_t>(lateNs, 0, 4 * std::max<std::int64_t>(leadNs, 0));
}

/// Plan-guided waitForSequence. `expectedNs(now)` says when the word is expected to reach the
/// target (absolute CLOCK_MONOTONIC; <= 0: unknown), asked again after every sleep, so the
/// estimate can follow what happened meanwhile (a predecessor that started late). While that lies
/// more than `leadNs` + kMinPlanSleepNs ahead, sleeps on the futex until `leadNs` before it (in
/// slices of kSleepSliceNs, polling `abort`); a publish before then wakes it at once (a
/// predecessor that ended early). Then waits as waitForSequence, spinning until `leadNs` past the
/// expected time plus `lateNs` (at least `spinNs`), so that a predecessor ending when expected, or
/// a little later, is followed within the spin cost; `lateNs` is how much later than expected the
/// word may still be reached by plan (a cross-SoC end's transfer time, PlannedPredecessor::linkNs;
/// capped by pollLateNs). With SpinStyle::kYield the spin yields the core between polls; note that
/// under a real-time policy (SCHED_FIFO/RR) sched_yield gives the core only to threads of the same
/// priority, not to lower ones.
template <typename Expected, typename Abort>
WaitOutcome waitForSequencePlanned(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                                   std::uint32_t target, Expected&& expectedNs, std::int64_t leadNs,
                                   std::int64_t spinNs, Abort&& abort, SpinMeter& meter,
                                   SpinStyle style = SpinStyle::kPause, std::int64_t lateNs = 0) {
  if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
  if (leadNs <= 0) return waitForSequence(word, waiters, target, spinNs, abort, meter, style);
  std::int64_t now = monotonicNs();
  std::int64_t expected = expectedNs(now);
  if (expected <= 0) return waitForSequence(word, waiters, target, spinNs, abort, meter, style);
  while (expected - leadNs - now > kMinPlanSleepNs) {
    meter.close(now);
    const std::int64_t wakeAt = std::min(expected - leadNs, now + kSleepSliceNs);
    waiters.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    if (!shm::sequenceReached(seen, target)) futexWaitUntil(word, seen, wakeAt);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
    if (abort()) return WaitOutcome::kAborted;
    now = monotonicNs();
    expected = expectedNs(now);
  }
  return waitForSequence(word, waiters, target, std::max(spinNs, expected + leadNs + pollLateNs(lateNs, leadNs) - now),
                         abort, meter, style);
}

/// Publishes `value` and wakes sleepers, if any.
inline void publishSequence(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                            std::uint32_t value) noexcept {
  word.store(value, std::memory_order_seq_cst);
  if (waiters.load(std::memory_order_seq_cst) != 0) futexWake(word);
}

/// Appends a record to a worker's ring without ever blocking: a full ring counts a drop.
/// Single producer (the worker owning the slot); the master drains. `knownTail` is the
/// producer's copy of the master's tail: the shared tail (a cache line the master writes) is read
/// only when the ring looks full by the copy, so a hand-off does not wait for that line.
inline void pushEvent(shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity, const EventRecord& record,
                      std::uint64_t& knownTail) noexcept {
  const std::uint64_t head = slot.head.load(std::memory_order_relaxed);
  if (head - knownTail >= capacity) {
    knownTail = slot.tail.load(std::memory_order_acquire);
    if (head - knownTail >= capacity) {
      slot.dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  ring[head & (capacity - 1)] = record;
  slot.head.store(head + 1, std::memory_order_release);
}

/// pushEvent reading the master's tail every time.
inline void pushEvent(shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity,
                      const EventRecord& record) noexcept {
  std::uint64_t tail = slot.tail.load(std::memory_order_acquire);
  pushEvent(slot, ring, capacity, record, tail);
}

}  // namespace tactus::ipc
