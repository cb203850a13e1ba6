// The systemd notification protocol (sd_notify): a datagram of `NAME=value` lines to the socket
// named by $NOTIFY_SOCKET, with which a Type=notify service says it is ready, keeps its watchdog
// and says it is stopping. Uses libsystemd when built with it (-Dsystemd), else the same
// protocol by hand; nothing at all when NOTIFY_SOCKET is unset.
#pragma once

#include <cstdint>
#include <string>

#include "tactus/core/result.hpp"

namespace tactus::ipc {

/// Sends `state` (e.g. "READY=1\nSTATUS=running") to $NOTIFY_SOCKET. Returns true when sent,
/// false when NOTIFY_SOCKET is unset (not run by systemd), kIo when the socket is unusable.
Result<bool> notifySystemd(const std::string& state);

/// The watchdog interval systemd asks for (WatchdogSec=, from $WATCHDOG_USEC when $WATCHDOG_PID
/// is unset or names this process), in nanoseconds; 0 when there is no watchdog.
std::int64_t watchdogIntervalNs();

/// Whether this build sends through libsystemd (false: the built-in sender).
bool notifyUsesLibsystemd();

}  // namespace tactus::ipc
