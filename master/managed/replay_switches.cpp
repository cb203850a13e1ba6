// A managed replay (-N --replay DIR) makes the recorded switches itself (replay/switch_script.hpp):
// each recorded start, rollover and stop is handed to the switch job as the manager's would be,
// once the previous one is answered and the schedule it stops has reached its recorded stop
// iteration (armActivation set each activation's stop there, so its release loop ends at that
// iteration by itself, whatever the replay's timing). After the last one the run ends as a
// frame limit would end it. The manager's own switch requests are refused meanwhile; its status
// and exit requests are answered.
#include "managed/managed.hpp"
#include "managed/switching.hpp"
#include "master.hpp"
#include "replay/switch_script.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

namespace {

// Whether `mode`'s hyperepochs that run something start at `iteration` (the recorded step's).
bool startsAt(const Mode& mode, std::uint64_t iteration) {
  for (HyperepochId he : mode.schedule.hyperepochs.ids())
    if (!mode.plan.hyperepochs[he].instances.empty() && mode.nextIteration[he] != iteration) return false;
  return true;
}

std::uint64_t firstIteration(const Mode& mode) {
  for (HyperepochId he : mode.schedule.hyperepochs.ids())
    if (!mode.plan.hyperepochs[he].instances.empty()) return mode.nextIteration[he];
  return 0;
}

}  // namespace

// A manager's start, stop or rollover during a replay is refused at once (the replay switches).
bool ManagedActivation::refusedInReplay(const Request& r) {
  if (core_.switchScript() == nullptr) return false;
  if (r.op != ManagerOp::kStart && r.op != ManagerOp::kStop && r.op != ManagerOp::kRollover) return false;
  const Answer answer{ManagerResult::kBadState,
                      "the run replays a recording (--replay " + core_.options().replayDir +
                          "): it makes the recorded switches itself, the manager's start, stop and rollover are "
                          "refused"};
  core_.err() << "tactus-master: manager request refused: " << answer.message << "\n";
  port_.publish(r.seq, answer, runningIdentifier(core_));
  return true;
}

std::optional<RunEnd> ManagedActivation::replaySwitches() {
  const replay::SwitchScript* script = core_.switchScript();
  if (script == nullptr || core_.runEnded() || !core_.clientsEntered()) return std::nullopt;
  if (!publishAnswer() || job_.exitEnd()) return std::nullopt;  // a switch in flight, or the manager's exit
  const auto& steps = script->steps();
  if (!replayFailure_.empty()) {
    return RunEnd{SegmentState::kAborted, StopReason::kError, kNone,
                  "--replay: the recorded switch " + replay::SwitchScript::describe(steps[replayStep_ - 1]) +
                      " failed: " + replayFailure_};
  }
  if (replayStep_ == steps.size()) {
    const replay::SwitchStep& last = steps.back();
    return RunEnd{SegmentState::kFinished, StopReason::kFrameLimit, kNone,
                  "the replay made the " + std::to_string(steps.size()) + " recorded switches (the last: stop " +
                      std::to_string(last.schedule) + " at iteration " + std::to_string(last.iteration) + ")"};
  }
  const replay::SwitchStep& step = steps[replayStep_];
  Mode* running = core_.runningMode();
  // A rollover or a stop waits until the running schedule's release loops ended at their recorded stop.
  if (running != nullptr && !everyHyperepochStopped(*running)) return std::nullopt;
  const bool starts = step.op == ManagerOp::kStart || step.op == ManagerOp::kRollover;
  if (const Mode* to = modeByIdentifier(core_, step.schedule);
      starts && to != nullptr && !startsAt(*to, step.iteration)) {
    return RunEnd{SegmentState::kAborted, StopReason::kError, kNone,
                  "--replay: the recorded switch " + replay::SwitchScript::describe(step) + " would start schedule " +
                      std::to_string(step.schedule) + " at iteration " + std::to_string(firstIteration(*to)) +
                      " here: the replay cannot follow the recording"};
  }
  Request r;
  r.op = step.op;
  r.arg0 = step.schedule;
  r.arg1 = step.op == ManagerOp::kRollover ? step.from : 0;
  r.takenNs = ipc::monotonicNs();
  r.rule = kReplayRule;
  ++replayStep_;
  job_.launch(r);
  return std::nullopt;
}

}  // namespace tactus::master
