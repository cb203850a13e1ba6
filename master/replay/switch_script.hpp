// The recorded switches of a managed run (-N), as its replay makes them (docs/design/recording.md):
// the recording's switch records, read in order, become a list of steps (start, rollover, stop) and,
// for every activation of a schedule, the iteration it stopped at. The replaying master makes the
// steps itself (managed/replay_switches.cpp), each activation's stop set when it is armed, so every
// switch happens at its recorded iteration whatever the replay's timing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/record/reader.hpp"

namespace tactus::master::replay {

/// One recorded switch.
struct SwitchStep {
  shm::ManagerOp op = shm::ManagerOp::kNone;  ///< kStart, kRollover or kStop
  std::uint32_t schedule = 0;                 ///< the schedule started, rolled over to, or stopped
  std::uint32_t from = 0;                     ///< a rollover's old schedule
  std::uint64_t iteration = 0;  ///< a start's or rollover's first iteration of `schedule`; a stop's stop iteration
};

class SwitchScript {
 public:
  static constexpr std::uint64_t kNoStop = ~std::uint64_t{0};

  /// The steps of `file`'s switch records. `released`: per schedule identifier, one past the last
  /// iteration it released in the recording (where an activation that no record stops ends: a
  /// recording cut short, or a run ended while a schedule ran). Refused (naming the record) when a
  /// record does not follow from the ones before it.
  static Result<SwitchScript> read(const tactus::record::RecordingFile& file,
                                   const std::map<std::uint32_t, std::uint64_t>& released);

  const std::vector<SwitchStep>& steps() const { return steps_; }
  /// Where the activation of `schedule` that begins at `firstIteration` stops (kNoStop: none recorded).
  std::uint64_t stopIteration(std::uint32_t schedule, std::uint64_t firstIteration) const;
  /// "start 45 at iteration 0" (the step in words, for messages).
  static std::string describe(const SwitchStep& step);

 private:
  std::vector<SwitchStep> steps_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> stops_;  // (schedule, first) -> stop
};

}  // namespace tactus::master::replay
