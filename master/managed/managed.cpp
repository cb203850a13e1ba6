// The managed activation (run/activation.hpp): nothing runs until the schedule manager or the
// policy starts a schedule; the monitor loop hands the manager's requests and the policy's
// decisions to the switch thread (manager_requests.cpp, policy_run.cpp, schedule_switch.cpp); a
// client's exit request or a signal stops the running schedule at its iteration boundary.
// makeActivation chooses a run's activation.
#include "managed/managed.hpp"

#include <memory>
#include <optional>

#include "run/activation.hpp"
#include "run/run.hpp"
#include "run/run_state.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;
using namespace run_detail;

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

 private:
  Run& run_;
};

std::unique_ptr<Activation> makeManagedActivation(Run& run) { return std::make_unique<ManagedActivation>(run); }

std::unique_ptr<Activation> makeActivation(Run& run) {
  if (!run.managed()) return makeImmediateActivation(run);
  return run.follower() ? makeFollowerActivation(run) : makeManagedActivation(run);
}

}  // namespace tactus::master
