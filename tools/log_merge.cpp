// The logs of one multi-SoC run merged into one (see log_merge.hpp).
#include "log_merge.hpp"

#include <limits>

namespace tactus::report {

namespace {

// Whether the record's startNs and endNs are CLOCK_MONOTONIC times (tactus-check's records carry
// other things there).
bool carriesTimes(const EventRecord& r) {
  switch (static_cast<EventKind>(r.kind)) {
    case EventKind::kViolation:
    case EventKind::kViolationSite:
    case EventKind::kClockOffset: return false;
    default: return true;
  }
}

}  // namespace

Result<LogFile> mergeSocLogs(std::vector<LogFile> logs) {
  if (logs.empty()) return fail(ErrorCode::kBadParameter, "no event log to merge");
  for (const LogFile& l : logs) {
    if (l.header.scheduleIdentifier != logs[0].header.scheduleIdentifier ||
        l.header.scheduleContentHash != logs[0].header.scheduleContentHash)
      return fail(ErrorCode::kValidation,
                  l.path + ": the log is of another schedule than " + logs[0].path + " (several logs: one run)");
  }
  // Each SoC's master ends its log with its clock (kClockOffset, version 3): the primary's log says
  // it is the primary, a follower's how far its clock is from the primary's. Without them (older
  // logs) the primary is the log that released iteration 0 first, and the clocks are taken as one.
  std::size_t primary = logs.size();
  std::vector<std::int64_t> offset(logs.size(), 0);
  std::vector<std::int64_t> bound(logs.size(), -1);  // the estimate's error bound, -1: not known (one-way)
  for (std::size_t k = 0; k < logs.size(); ++k) {
    for (const EventRecord& r : logs[k].records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kClockOffset)) continue;
      if (r.instance == r.aux) {
        primary = k;
      } else if (separateClocks(r.startNs)) {
        offset[k] = r.startNs;
        bound[k] = r.endNs;
      }
    }
  }
  if (primary == logs.size()) {
    primary = 0;
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
  }
  LogFile merged;
  merged.path = logs[primary].path;
  merged.header = logs[primary].header;
  for (std::size_t k = 0; k < logs.size(); ++k) {
    for (const std::string& w : logs[k].warnings) merged.warnings.push_back(w);
    if (k != primary && offset[k] != 0) {
      merged.warnings.push_back(logs[k].path + ": its times moved by " + std::to_string(-offset[k]) +
                                " ns onto the primary SoC's clock (the master's estimate of the offset" +
                                (bound[k] >= 0 ? ", within " + std::to_string(bound[k]) +
                                                     " ns: times across the SoCs "
                                                     "are known that closely)"
                                               : "; one-way, its error not known)"));
    }
    for (EventRecord r : logs[k].records) {
      if (k != primary && r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) continue;
      if (r.kind == static_cast<std::uint16_t>(EventKind::kClockOffset)) continue;
      if (offset[k] != 0 && carriesTimes(r)) {
        r.startNs -= offset[k];
        r.endNs -= offset[k];
      }
      merged.records.push_back(r);
    }
  }
  return merged;
}

}  // namespace tactus::report
