// The logs of one multi-SoC run (one per SoC's master) merged into one, so the report shows every
// SoC in one set of statistics, one HTML view and one trace (`tactus-report LOG... SCHEDULE`).
#pragma once

#include <vector>

#include "analysis.hpp"
#include "tactus/core/result.hpp"

namespace tactus::report {

/// Merges the logs of one run of one schedule: each must match the schedule's identifier and
/// content hash (else kValidation naming the file). Every log's run, overrun and skip records are
/// kept, each follower's moved onto the primary's clock by the offset its master recorded
/// (kClockOffset); the frame releases are the primary's alone (the log its kClockOffset names the
/// primary; in logs without one, the log whose first ideal release is the earliest), and so is
/// the header (run start).
Result<LogFile> mergeSocLogs(std::vector<LogFile> logs);

}  // namespace tactus::report
