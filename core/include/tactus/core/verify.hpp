// The schedule verifier: checks every invariant of a finished schedule, independent of the
// scheduler that made it. The compiler runs it before writing; the master runs it on load.
#pragma once

#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus {

/// How strict verification is.
struct VerifyOptions {
  /// Accept a hyperepoch whose schedule is longer than its period (reported as a warning).
  bool allowOverlength = false;
};

/// The outcome of verification: errors break the schedule, warnings do not.
struct VerifyReport {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

/// Checks the shared limits first (limits.hpp: counts, name lengths, every time within
/// 0..kMaxDurationNs, frames per epoch and in all, instances per hyperepoch and in all), before
/// any table is sized by a count from the schedule; then structure (indices, kinds,
/// submitter/submittee pairs, round-robin groups), and the
/// scheduling invariants: intervals on a resource do not overlap and run in timeline order;
/// every instance starts after its dependencies end and not before its StartTime; each frame
/// ends before its epoch's next frame; everything fits the hyperepoch period; deadlines missed
/// are warnings. Messages name the hyperepoch, resource, runnable and frame.
VerifyReport verifySchedule(const Schedule& schedule, const VerifyOptions& options = {});

/// verifySchedule as a Result: the first errors joined into one kVerification message.
Result<void> verifyScheduleResult(const Schedule& schedule, const VerifyOptions& options = {});

}  // namespace tactus
