// Futex system call wrappers (Linux).
#include "tactus/ipc/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace tactus::ipc {

FutexWaitResult futexWait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeoutNs) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeoutNs >= 0) {
    ts.tv_sec = static_cast<time_t>(timeoutNs / 1000000000);
    ts.tv_nsec = static_cast<long>(timeoutNs % 1000000000);
    tsp = &ts;
  }
  const long rc = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, tsp, nullptr, 0);
  if (rc == -1 && errno == ETIMEDOUT) return FutexWaitResult::kTimedOut;
  return FutexWaitResult::kWoken;  // woken, EAGAIN (value changed) or EINTR: the caller re-checks
}

FutexWaitResult futexWaitUntil(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t deadlineNs) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadlineNs / 1000000000);
  ts.tv_nsec = static_cast<long>(deadlineNs % 1000000000);
  const long rc = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_BITSET, expected, &ts,
                            nullptr, FUTEX_BITSET_MATCH_ANY);
  if (rc == -1 && errno == ETIMEDOUT) return FutexWaitResult::kTimedOut;
  return FutexWaitResult::kWoken;
}

void futexWake(std::atomic<std::uint32_t>& word, int count) noexcept {
  const int savedErrno = errno;  // keep errno intact for callers in signal handlers
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, count, nullptr, nullptr, 0);
  errno = savedErrno;
}

}  // namespace tactus::ipc
