// Why a schedule does not fit: the busiest resource with its load against the period, the
// critical path, what else holds a late frame's resources, and what to try. Computed on the
// schedule made anyway (scheduleGraph's UnfitSchedule), so that the message and the HTML view
// show the same plan.
#pragma once

#include <cstdint>
#include <string>

#include "scheduler.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Why hyperepoch h of `s` is longer than its period, as indented lines (each `\n  ...`): the
/// busiest resource and its load against the period with its largest contributors, the critical
/// path (dependencies, releases and StartTimes) and what to try. `lowerBoundNs` (0: none) is a
/// bound on every schedule's length, `searched` whether a search ran.
std::string whyOverlength(const Schedule& s, HyperepochId h, std::int64_t lowerBoundNs, bool searched);

/// Why frame `frame` of epoch e of `s` ends after its next frame's release, as indented lines:
/// the frame's own load on its busiest resource against the epoch period, its critical path,
/// the work of other epochs on its resources within its period, and what to try.
std::string whyFrameIsLate(const Schedule& s, EpochId e, std::uint32_t frame);

/// whyOverlength or whyFrameIsLate, for what `unfit` says does not fit.
std::string whyItDoesNotFit(const UnfitSchedule& unfit, std::int64_t lowerBoundNs, bool searched);

}  // namespace tactus::compiler
