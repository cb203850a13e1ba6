// What the master tells systemd when it runs as a Type=notify service: ready once the schedule is
// loaded and the segment published, the watchdog kept from the release loop, stopping at the end.
// Every call does nothing (one load and compare) when systemd did not ask for it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace tactus::master {

/// Sends READY=1 with a STATUS line naming the schedule and the instance, and arms the
/// watchdog when WatchdogSec= is set. A notification that cannot be sent is printed to `err`.
void notifyReady(const std::string& instance, const std::string& scheduleName, std::ostream& err);

/// Sends WATCHDOG=1 when half the watchdog interval has passed since the last one; otherwise (and
/// without a watchdog) returns after one relaxed load and a clock read at most. Thread-safe: the
/// release threads and the monitor may all call it.
void keepWatchdogAlive() noexcept;

/// Sends STOPPING=1 with a STATUS line saying why.
void notifyStopping(const std::string& why) noexcept;

}  // namespace tactus::master
