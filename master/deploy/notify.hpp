// What the master tells systemd when it runs as a Type=notify service: ready once the schedule is
// loaded and the segment published, the watchdog kept from the release loop, stopping at the end.
// Every call does nothing (one load and compare) when systemd did not ask for it.
#pragma once

#include <ostream>
#include <string>

namespace tactus::master {

/// Sends READY=1 with the STATUS line `status` (what was published on which instance, what the
/// master waits for), and arms the watchdog when WatchdogSec= is set. Both runs call it: the
/// single-schedule run once its segment is published, the managed run (-N) once every schedule's
/// segment is published and the manager channel is open. A notification that cannot be sent is
/// printed to `err`.
void notifyReady(const std::string& status, std::ostream& err);

/// Sends WATCHDOG=1 when half the watchdog interval has passed since the last one; otherwise (and
/// without a watchdog) returns after one relaxed load and a clock read at most. Thread-safe: the
/// release threads and the monitor loops (both runs' while they wait for clients, the managed
/// run's all along) may all call it.
void keepWatchdogAlive() noexcept;

/// Sends STOPPING=1 with a STATUS line saying why.
void notifyStopping(const std::string& why) noexcept;

}  // namespace tactus::master
