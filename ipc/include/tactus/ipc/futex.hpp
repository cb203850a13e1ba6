// Futex wait and wake on 32-bit atomics that live in shared memory (process-shared futexes).
#pragma once

#include <atomic>
#include <cstdint>

namespace tactus::ipc {

static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word must be a plain lock-free 32-bit atomic");

/// Why futexWait returned.
enum class FutexWaitResult {
  kWoken,     ///< woken, or the word no longer held `expected` (re-check the condition)
  kTimedOut,  ///< the relative timeout passed
};

/// Sleeps while `*word == expected`, at most `timeoutNs` (< 0: no limit). Process-shared (no
/// FUTEX_PRIVATE_FLAG) so it works across processes mapping the same segment. Spurious returns
/// happen; callers loop on their condition.
FutexWaitResult futexWait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeoutNs);

/// Sleeps while `*word == expected`, until the absolute CLOCK_MONOTONIC time `deadlineNs` at the
/// latest (FUTEX_WAIT_BITSET, so the deadline does not drift with the time the call takes to
/// start). Process-shared; spurious returns happen, as with futexWait.
FutexWaitResult futexWaitUntil(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t deadlineNs);

/// Wakes up to `count` sleepers on `word`. Async-signal-safe (a single system call).
void futexWake(std::atomic<std::uint32_t>& word, int count = 0x7fffffff) noexcept;

/// Counts an event on `word` and wakes its sleepers: how a process tells another "look again"
/// (the master's `attention`). Async-signal-safe.
inline void signalWord(std::atomic<std::uint32_t>& word) noexcept {
  word.fetch_add(1, std::memory_order_seq_cst);
  futexWake(word);
}

}  // namespace tactus::ipc
