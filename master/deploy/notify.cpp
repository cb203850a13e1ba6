// The master's systemd notifications (see notify.hpp): readiness, the watchdog, stopping.
#include "deploy/notify.hpp"

#include <unistd.h>

#include <atomic>
#include <limits>

#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/notify.hpp"

namespace tactus::master {

namespace {

// When the next WATCHDOG=1 is due (CLOCK_MONOTONIC ns); the maximum while there is no watchdog.
std::atomic<std::int64_t> gNextKeepNs{std::numeric_limits<std::int64_t>::max()};
std::atomic<std::int64_t> gKeepEveryNs{0};

// A STATUS= value on one line: a control character (a newline in a schedule's path, say) would
// start another field of the message, such as WATCHDOG=trigger.
std::string oneLine(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

}  // namespace

void notifyReady(const std::string& status, std::ostream& err) {
  const std::int64_t interval = ipc::watchdogIntervalNs();
  auto sent = ipc::notifySystemd("READY=1\nSTATUS=" + oneLine(status) + "\nMAINPID=" + std::to_string(::getpid()));
  if (!sent) {
    err << "tactus-master: warning: cannot notify systemd: " << sent.error().message << "\n";
    return;
  }
  if (interval > 0) {
    gKeepEveryNs.store(interval / 2, std::memory_order_relaxed);
    gNextKeepNs.store(ipc::monotonicNs() + interval / 2, std::memory_order_relaxed);
  }
}

void keepWatchdogAlive() noexcept {
  const std::int64_t due = gNextKeepNs.load(std::memory_order_relaxed);
  if (due == std::numeric_limits<std::int64_t>::max()) return;
  const std::int64_t now = ipc::monotonicNs();
  if (now < due) return;
  std::int64_t expected = due;
  // One caller per interval sends; the others see the new deadline.
  if (!gNextKeepNs.compare_exchange_strong(expected, now + gKeepEveryNs.load(std::memory_order_relaxed))) return;
  try {
    (void)ipc::notifySystemd("WATCHDOG=1");
  } catch (...) {  // out of memory for the message: the next call tries again
    gNextKeepNs.store(now, std::memory_order_relaxed);
  }
}

void notifyStopping(const std::string& why) noexcept {
  try {
    (void)ipc::notifySystemd("STOPPING=1\nSTATUS=" + oneLine(why));
  } catch (...) {  // nothing to do: systemd sees the exit anyway
  }
  gNextKeepNs.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
}

}  // namespace tactus::master
