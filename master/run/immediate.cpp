// The immediate activation (activation.hpp): one schedule, whose first frame is released shortly
// after every client entered, which ends at its frame limit (-e) or at a stop (a signal, a
// client's exit request). A SoC that follows its primary without a manager is activated the
// same way: its link (soc/soc_run.hpp) makes its releases follow the primary's and end where the
// primary's stop samples say.
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "run/activation.hpp"
#include "run/run.hpp"
#include "run/run_state.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;
using namespace run_detail;

class ImmediateActivation final : public Activation {
 public:
  explicit ImmediateActivation(Run& run) : run_(run) {}

  Result<void> check() override { return {}; }

  // A follower SoC's workers stop where the primary's stop sample says (SocRun, followLoop),
  // never at its own -e: a smaller one would stop this SoC's clients while the other SoCs wait.
  std::uint64_t stopAt() const override {
    const bool followsPrimary = run_.socOptions_ && run_.socOptions_->soc != run_.socOptions_->primary;
    return run_.iterations_ == 0 || followsPrimary ? std::numeric_limits<std::uint64_t>::max() : run_.iterations_;
  }

  void startRun() override {
    Mode& m = *run_.modes_.front();
    run_.runStartNs_ = ipc::monotonicNs() + kFirstReleaseLeadNs;
    run_.log_.setRunStart(run_.runStartNs_);
    m.owner->startRun(run_.runStartNs_);
    if (run_.soc_) run_.soc_->start();
    m.releaser->start(run_.runStartNs_);
    m.running = true;
    // The loop's own work (drain, checks) runs in the plan's idle windows (idle_windows.hpp), or
    // every kSliceNs where the plan has none to use; a client's attention signal wakes it at once.
    const char* windowsOn = std::getenv("TACTUS_IDLE_WINDOWS");
    run_.windows_.emplace(m.schedule, m.plan, run_.o_.core, m.owner->view().ringCapacity(), kSliceNs,
                          windowsOn == nullptr || std::string_view(windowsOn) != "0");
  }

  bool stopped(const Mode& mode) const override { return mode.releaser->finished(); }

  void exitRequested(Mode& mode, ClientId c) override { mode.control.requestStop(StopReason::kExitRequested, c); }

  // The release threads stop at the request; endOfFrames ends the run once they have.
  std::optional<RunEnd> exitProgress() override { return std::nullopt; }

  std::optional<RunEnd> watch() override { return std::nullopt; }

  std::optional<RunEnd> round() override { return run_.endOfFrames(); }

  std::int64_t waitSliceNs() const override { return kWaitSliceNs; }

  bool switchesSchedules() const override { return false; }

  Result<void> prepare() override { return {}; }

  std::string published() override { return "clients"; }

  void stopForSignal(Mode* running, bool first) override {
    if (!first) return;
    running->control.requestStop(StopReason::kSignal, kNone);
    if (run_.soc_) run_.soc_->requestStop();  // a follower: the primary stops every SoC
  }

  std::string peerStopMessage(const std::string& message) const override { return message; }

  bool signalStopRequested() const override {
    const RunControl& control = run_.modes_.front()->control;
    return control.stopRequested() && control.stopReason() == StopReason::kSignal;
  }

  // A SoC that follows its primary (without a manager): the reason its link carried.
  std::optional<shm::StopReason> primaryStopReason() const override {
    if (run_.soc_ == nullptr || !run_.soc_->follower()) return std::nullopt;
    return run_.linkStopReason();
  }

  std::optional<const Mode*> switchInFlight() const override { return std::nullopt; }  // one schedule, no switch

  std::string switchBlocker(ClientId& /*client*/, std::string& /*name*/) const override { return ""; }

  void closing(const RunEnd& /*end*/) override {}

  void ended() override {}

  void closed() override {}

 private:
  Run& run_;
};

std::unique_ptr<Activation> makeImmediateActivation(Run& run) { return std::make_unique<ImmediateActivation>(run); }

// The end once the schedule's release threads have ended (its frame limit, or an exit request
// they stopped at).
std::optional<RunEnd> Run::endOfFrames() {
  Mode& m = *modes_.front();
  if (!runStarted_ || !m.releaser->finished()) return std::nullopt;
  m.releaser->join();
  if (auto failure = drainAll()) return failure;
  const StopReason reason = m.control.stopRequested() ? m.control.stopReason() : StopReason::kFrameLimit;
  // A follower SoC's release threads end where the primary stopped, for the primary's reason.
  if (soc_ && soc_->follower() && !m.control.stopRequested()) {
    if (const auto primary = activation_->primaryStopReason(); primary && *primary != StopReason::kFrameLimit) {
      const std::string who = "the master of the primary SoC " + soc_->socName(soc_->primary());
      return RunEnd{SegmentState::kFinished, *primary, kNone,
                    *primary == StopReason::kSignal ? who + " was stopped by a signal"
                                                    : who + " stopped the run at a client's exit request"};
    }
  }
  switch (reason) {
    case StopReason::kExitRequested:
      return RunEnd{SegmentState::kFinished, reason, m.control.stopClient(),
                    m.monitor->exitText(m.control.stopClient())};
    case StopReason::kSignal:
      return RunEnd{SegmentState::kFinished, reason, kNone, "the master was stopped by a signal"};
    default:
      return RunEnd{SegmentState::kFinished, StopReason::kFrameLimit, kNone,
                    "ran " + std::to_string(m.releaser->iterationsCompleted()) + " hyperepoch iterations"};
  }
}

}  // namespace tactus::master
