// What the master reads from its environment for a deployment, beside its command line (a
// systemd unit sets these): how many earlier event logs to keep (TACTUS_LOG_KEEP) and the group
// that may attach to the instance's segments (TACTUS_SEGMENT_GROUP). The run of one schedule and
// the managed run (-N) both use these.
#pragma once

#include <cstdint>
#include <string>

#include "tactus/core/event_log.hpp"
#include "tactus/core/result.hpp"

namespace tactus::master {

/// The earlier event logs kept when none is configured.
inline constexpr unsigned kDefaultKeptLogs = 5;

/// Before the master writes the event log `path`, moves the log an earlier run left there to
/// `path.1`, `path.1` to `path.2`, ... keeping TACTUS_LOG_KEEP earlier logs (default 5, 0: the
/// new log overwrites the old as before; the oldest beyond the limit is replaced). Nothing when
/// `path` does not exist. Errors (kBadParameter for a malformed TACTUS_LOG_KEEP, kIo for a rename
/// the system refuses) name the variable or the file.
Result<void> keepEarlierLogs(const std::string& path);

/// Opens the run's event log at `path` (keepEarlierLogs first) for the schedule `identifier` with
/// `contentHash`; nothing when `path` is empty (no -l). Errors of either step, as they are.
Result<void> openEventLog(EventLogWriter& log, const std::string& path, std::uint16_t identifier,
                          std::uint64_t contentHash);

/// With TACTUS_SEGMENT_GROUP set (a group name or number), gives the segment `instance` (the
/// instance's, a managed run's other schedules' and its manager channel's) to that group with mode
/// 0660, so that clients and a manager running as other users of the group can attach; unset,
/// the segment stays 0600 (this user's processes only). Errors name the variable, the group and
/// the system's reason (kBadParameter, kIo).
Result<void> shareSegmentWithGroup(const std::string& instance);

}  // namespace tactus::master
