// The recorded switches as steps (switch_script.hpp).
#include "replay/switch_script.hpp"

namespace tactus::master::replay {

using shm::ManagerOp;

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFU;  // SwitchRecord's "no schedule"

std::string scheduleText(std::uint32_t id) { return id == kNone ? "none" : std::to_string(id); }

}  // namespace

std::string SwitchScript::describe(const SwitchStep& step) {
  switch (step.op) {
    case ManagerOp::kStart:
      return "start " + std::to_string(step.schedule) + " at iteration " + std::to_string(step.iteration);
    case ManagerOp::kRollover:
      return "rollover from " + std::to_string(step.from) + " to " + std::to_string(step.schedule) +
             " (its iteration " + std::to_string(step.iteration) + ")";
    case ManagerOp::kStop:
      return "stop " + std::to_string(step.schedule) + " at iteration " + std::to_string(step.iteration);
    default: return "?";
  }
}

// Each record, in the recording's order: a start (from none), a stop (to none), or one half of a
// rollover (the old schedule's stop, then the new one's start, both naming the two schedules).
Result<SwitchScript> SwitchScript::read(const tactus::record::RecordingFile& file,
                                        const std::map<std::uint32_t, std::uint64_t>& released) {
  SwitchScript script;
  std::uint32_t running = kNone;
  std::uint64_t first = 0;                                     // the running activation's first iteration
  std::pair<std::uint32_t, std::uint32_t> half{kNone, kNone};  // a rollover whose old side stopped
  std::uint64_t halfStop = 0;                                  // where it stopped
  const auto close = [&](std::uint64_t at) { script.stops_[{running, first}] = at; };
  for (std::size_t k = 0; k < file.switches.size(); ++k) {
    const tactus::record::SwitchRecord& r = file.switches[k];
    const std::string which = "--replay " + file.path + ": switch record " + std::to_string(k) + " (from " +
                              scheduleText(r.fromSchedule) + " to " + scheduleText(r.toSchedule) + " at iteration " +
                              std::to_string(r.iteration) + ")";
    if (r.fromSchedule == kNone && r.toSchedule != kNone && running == kNone && half.first == kNone) {
      script.steps_.push_back({ManagerOp::kStart, r.toSchedule, kNone, r.iteration});
      running = r.toSchedule;
      first = r.iteration;
    } else if (r.toSchedule == kNone && r.fromSchedule == running && running != kNone) {
      close(r.iteration);
      script.steps_.push_back({ManagerOp::kStop, running, kNone, r.iteration});
      running = kNone;
    } else if (r.fromSchedule != kNone && r.toSchedule != kNone && r.fromSchedule == running) {
      close(r.iteration);  // the old schedule's side: it stopped here
      half = {r.fromSchedule, r.toSchedule};
      halfStop = r.iteration;
      running = kNone;
    } else if (r.fromSchedule != kNone && half == std::pair{r.fromSchedule, r.toSchedule}) {
      script.steps_.push_back({ManagerOp::kRollover, r.toSchedule, r.fromSchedule, r.iteration});
      running = r.toSchedule;
      first = r.iteration;
      half = {kNone, kNone};
    } else {
      return fail(ErrorCode::kBadParameter, which + " does not follow from the records before it (a schedule " +
                                                "of several hyperepochs, or a damaged recording): its switches " +
                                                "cannot be replayed");
    }
  }
  if (half.first != kNone) {  // cut between a rollover's two halves: the old schedule's stop
    script.steps_.push_back({ManagerOp::kStop, half.first, kNone, halfStop});
  }
  if (running != kNone) {  // still running when the recording ended: it stops where its releases did
    const auto it = released.find(running);
    const std::uint64_t at = it == released.end() ? first : std::max(first, it->second);
    close(at);
    script.steps_.push_back({ManagerOp::kStop, running, kNone, at});
  }
  return script;
}

std::uint64_t SwitchScript::stopIteration(std::uint32_t schedule, std::uint64_t firstIteration) const {
  const auto it = stops_.find({schedule, firstIteration});
  return it == stops_.end() ? kNoStop : it->second;
}

}  // namespace tactus::master::replay
