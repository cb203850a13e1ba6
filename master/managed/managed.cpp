// The managed activation (managed.hpp): nothing runs until the schedule manager or the policy
// starts a schedule; the monitor loop hands the manager's requests and the policy's decisions to
// the switch job (manager_requests.cpp, policy_run.cpp, switch_job.hpp, schedule_switch.cpp); a
// client's exit request or a signal stops the running schedule at its iteration boundary.
// makeActivation chooses a run's activation.
#include "managed/managed.hpp"

#include <memory>
#include <optional>

#include "deploy/deploy_env.hpp"
#include "master.hpp"
#include "run/activation.hpp"
#include "run/run_state.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;
using namespace run_detail;

const char* const kPeerStopMessage =
    "another SoC's master asked to stop the run (its signal, or a client's exit request)";

bool everyHyperepochStopped(const Mode& mode) {
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!mode.releaser->hyperepochFinished(he)) return false;
  }
  return true;
}

ManagedActivation::ManagedActivation(RunCore& core)
    : core_(core),
      switching_(core),
      policy_(core),
      port_(core.options().instance, core.options().managerName, core.err()),
      job_(
          [this](SwitchJob& job, const Request& r) {
            Answer answer = handle(job, r);
            if (r.rule >= 0) policy_.log(r, answer, ipc::monotonicNs());
            return answer;
          },
          [this] { ipc::signalWord(core_.modes().front()->owner->view().header().attention); }) {}

Result<void> ManagedActivation::check() {
  if (core_.socOptions()) core_.socOptions()->managed = true;  // the primary's switches, followed over the link
  return policy_.load();
}

void ManagedActivation::startRun() { switching_.startAwaitingSwitches(); }

// The first request stops the running schedule at its boundary (stopForExit), then ends the run.
void ManagedActivation::exitRequested(Mode& mode, ClientId c) {
  if (!clientExit_)
    clientExit_ = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c, mode.monitor->exitText(c)};
}

// A switch in flight answers first.
std::optional<RunEnd> ManagedActivation::exitProgress() {
  if (!clientExit_ || job_.inFlight()) return std::nullopt;
  return stopForExit();
}

// After a client's exit request: the running schedule is asked to stop at its boundary (once no
// switch is in flight: a switch answers first), and the end comes once it has stopped, the
// monitor loop watching the clients meanwhile (a client that does not finish its iteration is
// named stuck within -t, one that dies is named). (closeRun used to stop it on the monitor
// loop's thread: a frozen or dead client in its last iteration then held the master for good.)
std::optional<RunEnd> ManagedActivation::stopForExit() {
  Mode* running = core_.runningMode();
  if (running == nullptr || stopped(*running)) return clientExit_;
  if (running != exitStopped_) {
    if (exitStopped_ == nullptr) {
      for (const auto& m : core_.modes()) {
        if (m->soc) m->soc->ending();  // the other SoCs end with this one: no failure of theirs
      }
    }
    exitStopped_ = running;
    if (running->soc) running->control.requestStop(StopReason::kExitRequested, kNone);  // the followers' reason
    switching_.askBoundaryStop(*running);
  }
  return std::nullopt;
}

std::optional<RunEnd> ManagedActivation::round() {
  takeRequest();  // again after answerFirst: an answer the switch job gave during the round's checks
  evaluatePolicy();
  if (auto end = replaySwitches()) return end;
  // In flight first: the switch job writes its exit end before it answers.
  if (!job_.inFlight() && job_.exitEnd()) return job_.exitEnd();
  return std::nullopt;
}

std::int64_t ManagedActivation::waitSliceNs() const { return kSliceNs; }

Result<void> ManagedActivation::prepare() {
  std::vector<std::uint32_t> identifiers;
  for (const auto& m : core_.modes()) identifiers.push_back(m->schedule.identifier);
  if (auto ok = port_.create(identifiers); !ok) return ok;
  // The manager (tactus-manager, the application's) may run as another user of the group too.
  return shareSegmentWithGroup(shm::managerInstanceName(core_.options().instance));
}

std::string ManagedActivation::published() {
  port_.setOpen(1);
  return "clients and the schedule manager " + quoted(core_.options().managerName);
}

void ManagedActivation::stopForSignal(Mode* running, bool first) {
  if (first) {
    // Multi-SoC: every schedule's stop samples from now on say the signal (a switch in flight
    // may stop or abort one that is not the running one), so each follower ends as stopped.
    for (const auto& m : core_.modes()) {
      if (!m->soc) continue;
      m->soc->ending();
      m->control.requestStop(StopReason::kSignal, kNone);
    }
  }
  // The running schedule stops at its boundary: asked once it is known (a switch in flight at
  // the signal answers first, within the grace).
  if (running != nullptr && running != signalStopped_) {
    signalStopped_ = running;
    // Multi-SoC: the stop samples carry the reason, so the followers' clients see the signal.
    if (running->soc) running->control.requestStop(StopReason::kSignal, kNone);
    switching_.askBoundaryStop(*running);
  }
}

std::optional<const Mode*> ManagedActivation::switchInFlight() const {
  if (!job_.inFlight()) return std::nullopt;
  return job_.waitingOn().mode;
}

// What the switch waits for once no release thread holds it up: a client's switch callbacks or
// its workers' leaving the previous activation of the schedule it activates (shm::SwitchSlot
// counts them per hyperepoch, not per client: the clients it may be are named, the one when one).
std::string ManagedActivation::switchBlocker(ClientId& client, std::string& name) const {
  const SwitchWait wait = job_.waitingOn();
  const std::string within = " within " + humanDuration(kStopGraceNs);
  if (wait.state != SwitchState::kWaitingForClients || wait.mode == nullptr || wait.hyperepoch == kNone)
    return "; a schedule switch (" + std::string(switchStateName(job_.state())) + ") did not end" + within;
  const Mode& mode = *wait.mode;
  const shm::SegmentView& view = mode.owner->view();
  std::vector<ClientId> candidates;
  for (const ClientId c : mode.clientsWith[wait.hyperepoch]) {
    if (!wait.acks || view.client(c).switchCallbacks.load(std::memory_order_acquire) != 0) candidates.push_back(c);
  }
  std::string who;
  for (const ClientId c : candidates) who += (who.empty() ? "" : ", ") + quoted(mode.schedule.clients[c].name);
  const std::string where = "hyperepoch " + quoted(mode.schedule.hyperepochs[wait.hyperepoch].name) + " of schedule " +
                            std::to_string(mode.schedule.identifier);
  const std::string what =
      wait.acks ? "run its switch callbacks for the switch to " + where : "leave the previous activation of " + where;
  if (candidates.size() == 1) {
    client = candidates.front();
    name = mode.schedule.clients[client].name;
    return "; client " + who + " did not " + what + within;
  }
  return "; one of clients " + who + " did not " + what + within;
}

void ManagedActivation::closing(const RunEnd& end) {
  // A finished request is answered before the end is published: a manager that sees the run
  // ended without its answer reports a failure (the exit request itself would fail).
  const bool idle = publishAnswer();
  for (const auto& m : core_.modes()) {
    if (m->soc) m->soc->ending();
  }
  // After an exit request or a signal the running schedule has stopped at its iteration
  // boundary already (stopForExit, stopBySignal): its stop is recorded here. One that has not
  // (the grace ran out) is not waited for: the abort ends it.
  if (idle && (end.reason == StopReason::kExitRequested || end.reason == StopReason::kSignal)) {
    Mode* running = core_.runningMode();
    if (running && stopped(*running)) {
      if (running->soc) running->control.requestStop(end.reason, kNone);  // the followers' reason
      (void)switching_.stop(nullptr, Request{}, *running, kNoSchedule);
    }
  }
}

void ManagedActivation::ended() {
  // A request the end cut short (its waits see the abort) is answered before the channel says
  // the run ended, so the manager learns why (e.g. the client a rollover waited for died).
  const std::int64_t answerBy = ipc::monotonicNs() + kSwitcherEndWaitNs;
  while (job_.inFlight() && ipc::monotonicNs() < answerBy) ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
  (void)publishAnswer();
  port_.setOpen(2);
}

void ManagedActivation::closed() {
  job_.stop();
  (void)publishAnswer();
}

std::unique_ptr<Activation> makeManagedActivation(RunCore& core) { return std::make_unique<ManagedActivation>(core); }

std::unique_ptr<Activation> makeActivation(RunCore& core) {
  const MasterOptions& o = core.options();
  if (o.managerName.empty()) return makeImmediateActivation(core);
  // A multi-SoC run's SoC other than the primary follows the primary's switches.
  const SocRunOptions* so = core.socOptions();
  const bool follower = so != nullptr && so->soc != so->primary;
  return follower ? makeFollowerActivation(core) : makeManagedActivation(core);
}

}  // namespace tactus::master
