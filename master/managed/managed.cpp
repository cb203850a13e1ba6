// The managed activation (run/activation.hpp): nothing runs until the schedule manager or the
// policy starts a schedule; the monitor loop hands the manager's requests and the policy's
// decisions to the switch thread (manager_requests.cpp, policy_run.cpp, schedule_switch.cpp); a
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

class ManagedActivation final : public Activation {
 public:
  explicit ManagedActivation(Run& run) : run_(run) {}

  std::uint64_t stopAt() const override { return 0; }  // every hyperepoch waits for a start

  void startRun() override { run_.startAwaitingSwitches(); }

  bool stopped(const Mode& mode) const override { return everyHyperepochStopped(mode); }

  // The first request stops the running schedule at its boundary (stopForExit), then ends the run.
  void exitRequested(Mode& mode, ClientId c) override {
    if (!run_.clientExit_)
      run_.clientExit_ = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c, mode.monitor->exitText(c)};
  }

  std::optional<RunEnd> exitProgress() override { return run_.clientExit_ ? run_.stopForExit() : std::nullopt; }

  std::optional<RunEnd> watch() override { return run_.watchManager(); }

  std::optional<RunEnd> round() override {
    run_.takeRequest();
    run_.evaluatePolicy();
    // Busy first: the switch thread writes exitEnd_ before it clears busy.
    if (!run_.switcherBusy_.load() && run_.exitEnd_) return run_.exitEnd_;
    return std::nullopt;
  }

  std::int64_t waitSliceNs() const override { return kSliceNs; }

  bool switchesSchedules() const override { return true; }

  Result<void> prepare() override {
    if (auto ok = run_.createChannel(); !ok) return ok;
    // The manager (tactus-manager, the application's) may run as another user of the group too.
    return shareSegmentWithGroup(shm::managerInstanceName(run_.o_.instance));
  }

  std::string published() override {
    run_.channel_->open.store(1, std::memory_order_seq_cst);
    ipc::futexWake(run_.channel_->open);
    return "clients and the schedule manager " + quoted(run_.o_.managerName);
  }

  void stopForSignal(Mode* running, bool first) override {
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
    if (running != nullptr && running != run_.signalStopped_) {
      run_.signalStopped_ = running;
      // Multi-SoC: the stop samples carry the reason, so the followers' clients see the signal.
      if (running->soc) running->control.requestStop(StopReason::kSignal, kNone);
      run_.askBoundaryStop(*running);
    }
  }

  std::string peerStopMessage(const std::string& /*message*/) const override { return kPeerStopMessage; }

  bool signalStopRequested() const override { return false; }

  void closing(const RunEnd& end) override {
    // A finished request is answered before the end is published: a manager that sees the run
    // ended without its answer reports a failure (the exit request itself would fail).
    const bool idle = run_.answerFinished();
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
        (void)run_.stop(Request{}, *running, kNoSchedule);
      }
    }
  }

  void ended() override {
    // A request the end cut short (its waits see the abort) is answered before the channel says
    // the run ended, so the manager learns why (e.g. the client a rollover waited for died).
    const std::int64_t answerBy = ipc::monotonicNs() + kSwitcherEndWaitNs;
    while (run_.switcherBusy_.load() && ipc::monotonicNs() < answerBy)
      ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
    (void)run_.answerFinished();
    if (run_.channel_ != nullptr) {
      run_.channel_->open.store(2, std::memory_order_seq_cst);
      ipc::futexWake(run_.channel_->open);
      ipc::futexWake(run_.channel_->resultSeq);
    }
  }

 private:
  Run& run_;
};

std::unique_ptr<Activation> makeManagedActivation(Run& run) { return std::make_unique<ManagedActivation>(run); }

std::unique_ptr<Activation> makeActivation(Run& run) {
  if (!run.managed()) return makeImmediateActivation(run);
  return run.follower() ? makeFollowerActivation(run) : makeManagedActivation(run);
}

}  // namespace tactus::master
