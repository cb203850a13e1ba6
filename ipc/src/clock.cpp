// CLOCK_MONOTONIC helpers.
#include "tactus/ipc/clock.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace tactus::ipc {

bool preciseTimerSlack() noexcept { return ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0; }

std::int64_t sleepUntilNs(std::int64_t deadlineNs, std::int64_t spinNs) noexcept {
  const std::int64_t sleepTo = deadlineNs - (spinNs > 0 ? spinNs : 0);
  if (monotonicNs() < sleepTo) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(sleepTo / 1000000000);
    ts.tv_nsec = static_cast<long>(sleepTo % 1000000000);
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {}
  }
  std::int64_t now = monotonicNs();
  while (now < deadlineNs) {
    cpuRelax();
    now = monotonicNs();
  }
  return now;
}

}  // namespace tactus::ipc
