// The logs of one multi-SoC run (one per SoC's master) merged into one, so the report shows every
// SoC in one set of statistics, one HTML view and one trace (`tactus-report LOG... SCHEDULE`).
#pragma once

#include <vector>

#include "analysis.hpp"
#include "tactus/core/result.hpp"

namespace tactus::report {

/// Merges the logs of one run of one schedule: each must match the schedule's identifier and
/// content hash (else kValidation naming the file). Every log's run, overrun and skip records are
/// kept; the frame releases are the primary's alone (the log whose first ideal release is the
/// earliest: the others release the same frames after it), and so is the header (run start).
Result<LogFile> mergeSocLogs(std::vector<LogFile> logs);

}  // namespace tactus::report
