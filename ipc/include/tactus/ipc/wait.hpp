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

/// A duration in ns from environment variable `name` (a non-negative integer), else `fallback`.
std::int64_t envDurationNs(const char* name, std::int64_t fallback);

/// How a wait ended.
enum class WaitOutcome {
  kReached,  ///< the word reached the target
  kAborted,  ///< `abort()` returned true first
};

/// Waits until sequenceReached(word, target). `abort` is polled while spinning (every 64 spins)
/// and after every futex wake or time-out; it must be cheap.
template <typename Abort>
WaitOutcome waitForSequence(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters, std::uint32_t target,
                            std::int64_t spinNs, Abort&& abort) {
  if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
  if (spinNs > 0) {
    const std::int64_t spinEnd = monotonicNs() + spinNs;
    for (std::uint32_t n = 1;; ++n) {
      cpuRelax();
      if (shm::sequenceReached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
      if ((n & 63u) == 0) {
        if (abort()) return WaitOutcome::kAborted;
        if (monotonicNs() > spinEnd) break;
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

/// Publishes `value` and wakes sleepers, if any.
inline void publishSequence(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                            std::uint32_t value) noexcept {
  word.store(value, std::memory_order_seq_cst);
  if (waiters.load(std::memory_order_seq_cst) != 0) futexWake(word);
}

/// Appends a record to a worker's ring without ever blocking: a full ring counts a drop.
/// Single producer (the worker owning the slot); the master drains.
inline void pushEvent(shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity,
                      const EventRecord& record) noexcept {
  const std::uint64_t head = slot.head.load(std::memory_order_relaxed);
  const std::uint64_t tail = slot.tail.load(std::memory_order_acquire);
  if (head - tail >= capacity) {
    slot.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ring[head & (capacity - 1)] = record;
  slot.head.store(head + 1, std::memory_order_release);
}

}  // namespace tactus::ipc
