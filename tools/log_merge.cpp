// The logs of one multi-SoC run merged into one (see log_merge.hpp).
#include "log_merge.hpp"

#include <limits>

namespace tactus::report {

Result<LogFile> mergeSocLogs(std::vector<LogFile> logs) {
  if (logs.empty()) return fail(ErrorCode::kBadParameter, "no event log to merge");
  for (const LogFile& l : logs) {
    if (l.header.scheduleIdentifier != logs[0].header.scheduleIdentifier ||
        l.header.scheduleContentHash != logs[0].header.scheduleContentHash)
      return fail(ErrorCode::kValidation,
                  l.path + ": the log is of another schedule than " + logs[0].path + " (several logs: one run)");
  }
  // The primary releases each iteration first; a follower releases it at the start it received.
  std::size_t primary = 0;
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (std::size_t k = 0; k < logs.size(); ++k) {
    for (const EventRecord& r : logs[k].records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRelease) || r.iteration != 0) continue;
      if (r.startNs < earliest) {
        earliest = r.startNs;
        primary = k;
      }
    }
  }
  LogFile merged;
  merged.path = logs[primary].path;
  merged.header = logs[primary].header;
  for (std::size_t k = 0; k < logs.size(); ++k) {
    for (const std::string& w : logs[k].warnings) merged.warnings.push_back(w);
    for (const EventRecord& r : logs[k].records) {
      if (k != primary && r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) continue;
      merged.records.push_back(r);
    }
  }
  return merged;
}

}  // namespace tactus::report
