// The managed activation (managed.hpp): nothing runs until the schedule manager or the policy
// starts a schedule; the monitor loop hands the manager's requests and the policy's decisions to
// the switch job (manager_requests.cpp, policy_run.cpp, switch_job.hpp, schedule_switch.cpp); a
// client's exit request or a signal stops the running schedule at its iteration boundary.
// makeActivation chooses a run's activation.
#include "managed/managed.hpp"

#include <memory>
#include <optional>

#include "deploy/deploy_env.hpp"
#include "run/activation.hpp"
#include "run/run.hpp"
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

// Every client has entered: the run starts and waits for the first start (the manager's, or on a
// follower SoC the primary's).
void Run::startAwaitingSwitches() {
  runStartNs_ = ipc::monotonicNs();
  log_.setRunStart(runStartNs_);
  for (auto& m : modes_) {
    m->owner->startRun(runStartNs_);
    if (!m->soc) continue;
    m->soc->start();
    // A follower: the primary's starts wake the loop (but of a hyperepoch with nothing on this SoC).
    for (HyperepochId he : m->schedule.hyperepochs.ids())
      m->soc->setFollowing(he, m->plan.hyperepochs[he].instances.empty(),
                           &modes_.front()->owner->view().header().attention);
  }
}

ManagedActivation::ManagedActivation(Run& run)
    : run_(run),
      port_(run.o_.instance, run.o_.managerName, run.err_),
      job_(
          [this](SwitchJob& job, const Request& r) {
            Answer answer = run_.handle(job, r);
            if (r.rule >= 0) run_.logPolicy(r, answer, ipc::monotonicNs());
            return answer;
          },
          [this] { ipc::signalWord(run_.modes_.front()->owner->view().header().attention); }) {}

Result<void> ManagedActivation::check() {
  if (run_.socOptions_) run_.socOptions_->managed = true;  // the primary's switches, followed over the link
  return {};
}

void ManagedActivation::startRun() { run_.startAwaitingSwitches(); }

// The first request stops the running schedule at its boundary (stopForExit), then ends the run.
void ManagedActivation::exitRequested(Mode& mode, ClientId c) {
  if (!run_.clientExit_)
    run_.clientExit_ = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c, mode.monitor->exitText(c)};
}

// A switch in flight answers first.
std::optional<RunEnd> ManagedActivation::exitProgress() {
  if (!run_.clientExit_ || job_.inFlight()) return std::nullopt;
  return run_.stopForExit();
}

std::optional<RunEnd> ManagedActivation::round() {
  takeRequest();
  evaluatePolicy();
  if (auto end = replaySwitches()) return end;
  // In flight first: the switch job writes its exit end before it answers.
  if (!job_.inFlight() && job_.exitEnd()) return job_.exitEnd();
  return std::nullopt;
}

std::int64_t ManagedActivation::waitSliceNs() const { return kSliceNs; }

Result<void> ManagedActivation::prepare() {
  std::vector<std::uint32_t> identifiers;
  for (const auto& m : run_.modes_) identifiers.push_back(m->schedule.identifier);
  if (auto ok = port_.create(identifiers); !ok) return ok;
  // The manager (tactus-manager, the application's) may run as another user of the group too.
  return shareSegmentWithGroup(shm::managerInstanceName(run_.o_.instance));
}

std::string ManagedActivation::published() {
  port_.setOpen(1);
  return "clients and the schedule manager " + quoted(run_.o_.managerName);
}

void ManagedActivation::stopForSignal(Mode* running, bool first) {
  if (first) {
    // Multi-SoC: every schedule's stop samples from now on say the signal (a switch in flight
    // may stop or abort one that is not the running one), so each follower ends as stopped.
    for (auto& m : run_.modes_) {
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
    run_.askBoundaryStop(*running);
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
  for (auto& m : run_.modes_) {
    if (m->soc) m->soc->ending();
  }
  // After an exit request or a signal the running schedule has stopped at its iteration
  // boundary already (stopForExit, stopBySignal): its stop is recorded here. One that has not
  // (the grace ran out) is not waited for: the abort ends it.
  if (idle && (end.reason == StopReason::kExitRequested || end.reason == StopReason::kSignal)) {
    Mode* running = run_.runningMode();
    if (running && run_.stopped(*running)) {
      if (running->soc) running->control.requestStop(end.reason, kNone);  // the followers' reason
      (void)run_.stop(nullptr, Request{}, *running, kNoSchedule);
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

std::unique_ptr<Activation> makeManagedActivation(Run& run) { return std::make_unique<ManagedActivation>(run); }

std::unique_ptr<Activation> makeActivation(Run& run) {
  if (run.o_.managerName.empty()) return makeImmediateActivation(run);
  // A multi-SoC run's SoC other than the primary follows the primary's switches.
  const bool follower = run.socOptions_ && run.socOptions_->soc != run.socOptions_->primary;
  return follower ? makeFollowerActivation(run) : makeManagedActivation(run);
}

}  // namespace tactus::master
