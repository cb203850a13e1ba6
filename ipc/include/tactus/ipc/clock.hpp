// CLOCK_MONOTONIC time in nanoseconds, and precise sleeping until an absolute time.
#pragma once

#include <time.h>

#include <cstdint>

namespace tactus::ipc {

/// CLOCK_MONOTONIC now, in nanoseconds. All tactus time stamps use this clock. Inline: the stamps
/// around a runnable are taken right after it returns and right before it is called, where every
/// further code line is a miss after a long runnable.
inline std::int64_t monotonicNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The CLOCK_MONOTONIC time `timeoutMs` after `startNs`: INT64_MAX (never) for a negative
/// time-out or one too long to add to the clock without overflowing.
constexpr std::int64_t deadlineAfterMs(std::int64_t startNs, std::int64_t timeoutMs) noexcept {
  constexpr std::int64_t kNever = INT64_MAX;
  if (timeoutMs < 0 || timeoutMs > (kNever - startNs) / 1'000'000) return kNever;
  return startNs + timeoutMs * 1'000'000;
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadlineNs`: clock_nanosleep(TIMER_ABSTIME) to
/// `deadlineNs - spinNs`, then spins to the deadline (the kernel's wake-up latency is tens of
/// microseconds; the spin removes most of it). Returns the time it actually woke.
std::int64_t sleepUntilNs(std::int64_t deadlineNs, std::int64_t spinNs) noexcept;

/// Makes the calling thread's timed sleeps end when asked (timer slack 1 ns instead of the
/// default 50 us, by which Linux may postpone the wake-up of a thread without a real-time
/// policy): plan-guided sleeps wake a lead before a planned time and must not wake after it.
/// Best effort: returns false when the kernel refuses.
bool preciseTimerSlack() noexcept;

/// A CPU hint for spin loops (x86 `pause`), so a spinning thread yields pipeline resources.
inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace tactus::ipc
