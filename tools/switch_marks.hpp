// The switches of a run with a schedule manager as marks for pictures: every start and stop of a
// schedule on a hyperepoch and every switching-policy decision, with its time and a caption, and
// the Chrome trace of such a run (one process per schedule, the switches as global instants).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::report {

/// One switch of the run.
struct SwitchMark {
  std::int64_t atNs = 0;         ///< CLOCK_MONOTONIC ns: a start's first release, a stop's last end, a decision
  std::uint16_t schedule = 0;    ///< the schedule the record belongs to
  std::uint32_t hyperepoch = 0;  ///< its HyperepochId (decisions: 0)
  std::string text;              ///< caption, e.g. `start 102 on 'Drive' (rollover from 101)`
};

/// When a kScheduleStart or kScheduleStop record's switch happened: its endNs; for a stop stamped
/// before its request was taken (0: an older master's stop after a client's death), the request.
std::int64_t switchAtNs(const EventRecord& r);

/// The schedule with identifier `id` among `schedules` (null when none).
const Schedule* scheduleOf(const std::vector<Schedule>& schedules, std::uint32_t id);

/// The marks of `log` in time order (kScheduleStart, kScheduleStop, kPolicyDecision records),
/// hyperepochs named from `schedules`.
std::vector<SwitchMark> collectSwitchMarks(const LogFile& log, const std::vector<Schedule>& schedules);

/// A Chrome trace of a run of several schedules: process k + 1 is schedule k's executed runs (one
/// thread per resource), and every mark is a global instant event (category `switch`).
void writeManagedTrace(std::ostream& out, const LogFile& log, const std::vector<Schedule>& schedules);

}  // namespace tactus::report
