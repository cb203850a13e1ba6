// The managed run's requests: taken from the manager channel (manager_port.hpp) by the monitor
// loop, answered one at a time by the switch job (switch_job.hpp) after checking them against the
// loaded schedules, and the answers published.
#include <algorithm>
#include <ostream>

#include "managed/managed.hpp"
#include "master.hpp"
#include "tactus/core/text.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

Answer ManagedActivation::handle(SwitchJob& job, const Request& r) {
  auto unknown = [&](std::uint32_t id) {
    return Answer{ManagerResult::kUnknownSchedule,
                  "no schedule has identifier " + std::to_string(id) + " (loaded: " + core_.loadedList() + ")"};
  };
  Mode* running = core_.runningMode();
  switch (r.op) {
    case ManagerOp::kStart: {
      Mode* mode = modeByIdentifier(core_, r.arg0);
      if (mode == nullptr) return unknown(r.arg0);
      if (const std::string dead = policy_.deadClientOf(*mode); !dead.empty()) {
        return {ManagerResult::kBadState, "cannot start schedule " + std::to_string(r.arg0) + ": it uses client " +
                                              quoted(dead) + ", which died"};
      }
      if (running != nullptr) {
        return {ManagerResult::kBadState, "cannot start schedule " + std::to_string(r.arg0) + ": schedule " +
                                              std::to_string(running->schedule.identifier) +
                                              " is running (stop it, or roll over)"};
      }
      return switching_.start(job, r, *mode);
    }
    case ManagerOp::kStop: {
      Mode* mode = modeByIdentifier(core_, r.arg0);
      if (mode == nullptr) return unknown(r.arg0);
      if (mode != running) {
        return {ManagerResult::kBadState, "cannot stop schedule " + std::to_string(r.arg0) + ": it is not running"};
      }
      return switching_.stop(&job, r, *mode, kNoSchedule);
    }
    case ManagerOp::kRollover: {
      Mode* to = modeByIdentifier(core_, r.arg0);
      Mode* from = modeByIdentifier(core_, r.arg1);
      if (to == nullptr) return unknown(r.arg0);
      if (from == nullptr) return unknown(r.arg1);
      if (from != running) {
        return {ManagerResult::kBadState,
                "cannot roll over from schedule " + std::to_string(r.arg1) + ": it is not running"};
      }
      if (const std::string dead = policy_.deadClientOf(*to); !dead.empty()) {
        return {ManagerResult::kBadState, "cannot roll over to schedule " + std::to_string(r.arg0) +
                                              ": it uses client " + quoted(dead) + ", which died"};
      }
      if (to == from) {
        return {ManagerResult::kBadState, "cannot roll over schedule " + std::to_string(r.arg0) + " to itself"};
      }
      return switching_.rollover(job, r, *from, *to);
    }
    case ManagerOp::kExit: {
      if (running != nullptr) (void)switching_.stop(&job, r, *running, kNoSchedule);
      job.endRun(RunEnd{SegmentState::kFinished, StopReason::kExitRequested, kNone,
                        "the schedule manager " + quoted(core_.options().managerName) + " ended the run"});
      return {ManagerResult::kOk, "the run ends"};
    }
    case ManagerOp::kStatus: return {ManagerResult::kOk, running ? "running" : "idle"};
    default:
      return {ManagerResult::kBadRequest,
              "request " + std::to_string(static_cast<std::uint32_t>(r.op)) + " is no manager operation"};
  }
}

// Publishes the answer of a switch that has answered; false while one is in flight.
bool ManagedActivation::publishAnswer() {
  if (job_.inFlight()) return false;
  const auto taken = job_.takeAnswer();
  if (!taken) return true;
  const auto& [r, answer] = *taken;
  if (r.rule == kReplayRule) {  // a managed replay's recorded switch: no manager asked for it
    if (answer.code != ManagerResult::kOk) replayFailure_ = answer.message;
    else if (core_.options().verbose) core_.out() << "tactus-master: replay: " << answer.message << "\n";
    return true;
  }
  if (r.rule >= 0) {  // a policy rule's switch: the master's output, not the manager's channel
    const PolicyRule& rule = policy_.rule(r.rule);
    if (answer.code != ManagerResult::kOk) {
      core_.err() << "tactus-master: policy rule " << quoted(rule.name) << " could not switch: " << answer.message
                  << "\n";
    } else {
      core_.out() << "tactus-master: policy rule " << quoted(rule.name) << ": " << answer.message << std::endl;
    }
    return true;
  }
  if (answer.code != ManagerResult::kOk) {
    core_.err() << "tactus-master: manager request refused: " << answer.message << "\n";
  } else if (core_.options().verbose) {
    core_.out() << "tactus-master: " << answer.message << "\n";
  }
  port_.publish(r.seq, answer, runningIdentifier(core_));
  return true;
}

// Takes a new request from the channel and hands it to the switch job (one at a time).
void ManagedActivation::takeRequest() {
  if (!publishAnswer() || job_.exitEnd()) return;
  // Status words, refreshed every round.
  std::uint64_t iterations = 0;
  std::uint64_t skipped = 0;
  if (Mode* running = core_.runningMode()) {
    for (HyperepochId he : running->schedule.hyperepochs.ids()) {
      iterations = std::max<std::uint64_t>(iterations, running->owner->view().hyperepoch(he).completed.load());
      skipped += running->owner->view().hyperepoch(he).skipped.load();
    }
  }
  port_.status(runningIdentifier(core_), iterations, skipped);
  const std::optional<Request> r = port_.next(pendingSeq_);
  if (!r) return;
  pendingSeq_ = r->seq;
  if (refusedInReplay(*r)) return;
  if (r->op == ManagerOp::kStatus) {  // answered at once, even while the clients are coming
    port_.publish(r->seq, handle(job_, *r), runningIdentifier(core_));
    return;
  }
  job_.launch(*r);
}

// Fires at most one rule while the switch job is idle and the manager has nothing pending.
void ManagedActivation::evaluatePolicy() {
  // The exit end only once the switch job is idle: it writes it.
  if (!policy_.active() || core_.runEnded() || !publishAnswer() || job_.exitEnd()) return;
  if (const std::optional<Request> r = policy_.request(port_.requestPending())) job_.launch(*r);
}

}  // namespace tactus::master
