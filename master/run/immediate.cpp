// The immediate activation (activation.hpp): one schedule, whose first frame is released shortly
// after every client entered, which ends at its frame limit (-e) or at a stop (a signal, a
// client's exit request). A SoC that follows its primary without a manager is activated the
// same way: its link (soc/soc_run.hpp) makes its releases follow the primary's and end where the
// primary's stop samples say.
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "run/activation.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"
#include "run/run_state.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;
using namespace run_detail;

/// Without a manager: the first frame is released this long after every client entered.
constexpr std::int64_t kFirstReleaseLeadNs = 2'000'000;

class ImmediateActivation final : public Activation {
 public:
  explicit ImmediateActivation(RunCore& core) : core_(core) {}

  Result<void> check() override { return {}; }

  // A follower SoC's workers stop where the primary's stop sample says (SocRun, followLoop),
  // never at its own -e: a smaller one would stop this SoC's clients while the other SoCs wait.
  std::uint64_t stopAt() const override {
    const SocRunOptions* so = core_.socOptions();
    const bool followsPrimary = so != nullptr && so->soc != so->primary;
    const std::uint64_t limit = core_.iterations();
    return limit == 0 || followsPrimary ? std::numeric_limits<std::uint64_t>::max() : limit;
  }

  void startRun() override {
    Mode& m = *core_.modes().front();
    const std::int64_t startNs = ipc::monotonicNs() + kFirstReleaseLeadNs;
    core_.setRunStart(startNs);
    m.owner->startRun(startNs);
    if (core_.soc()) core_.soc()->start();
    m.releaser->start(startNs);
    m.running = true;
    // The loop's own work (drain, checks) runs in the plan's idle windows (idle_windows.hpp), or
    // every kSliceNs where the plan has none to use; a client's attention signal wakes it at once.
    core_.wakeInIdleWindows(m);
  }

  bool stopped(const Mode& mode) const override { return mode.releaser->finished(); }

  void exitRequested(Mode& mode, ClientId c) override { mode.control.requestStop(StopReason::kExitRequested, c); }

  // The release threads stop at the request; endOfFrames ends the run once they have.
  std::optional<RunEnd> exitProgress() override { return std::nullopt; }

  std::optional<RunEnd> watch() override { return std::nullopt; }

  std::optional<RunEnd> round() override { return endOfFrames(); }

  std::int64_t waitSliceNs() const override { return kWaitSliceNs; }

  bool switchesSchedules() const override { return false; }

  Result<void> prepare() override { return {}; }

  std::string published() override { return "clients"; }

  void stopForSignal(Mode* running, bool first) override {
    if (!first) return;
    running->control.requestStop(StopReason::kSignal, kNone);
    if (core_.soc()) core_.soc()->requestStop();  // a follower: the primary stops every SoC
  }

  std::string peerStopMessage(const std::string& message) const override { return message; }

  bool signalStopRequested() const override {
    const RunControl& control = core_.modes().front()->control;
    return control.stopRequested() && control.stopReason() == StopReason::kSignal;
  }

  // A SoC that follows its primary (without a manager): the reason its link carried.
  std::optional<shm::StopReason> primaryStopReason() const override {
    if (core_.soc() == nullptr || !core_.soc()->follower()) return std::nullopt;
    return core_.linkStopReason();
  }

  std::optional<const Mode*> switchInFlight() const override { return std::nullopt; }  // one schedule, no switch

  std::string switchBlocker(ClientId& /*client*/, std::string& /*name*/) const override { return ""; }

  void closing(const RunEnd& /*end*/) override {}

  void ended() override {}

  void closed() override {}

 private:
  std::optional<RunEnd> endOfFrames();

  RunCore& core_;
};

// The end once the schedule's release threads have ended (its frame limit, or an exit request
// they stopped at).
std::optional<RunEnd> ImmediateActivation::endOfFrames() {
  Mode& m = *core_.modes().front();
  if (!core_.runStarted() || !m.releaser->finished()) return std::nullopt;
  m.releaser->join();
  if (auto failure = core_.drainAll()) return failure;
  const StopReason reason = m.control.stopRequested() ? m.control.stopReason() : StopReason::kFrameLimit;
  // A follower SoC's release threads end where the primary stopped, for the primary's reason.
  SocRun* soc = core_.soc();
  if (soc && soc->follower() && !m.control.stopRequested()) {
    if (const auto primary = primaryStopReason(); primary && *primary != StopReason::kFrameLimit) {
      const std::string who = "the master of the primary SoC " + soc->socName(soc->primary());
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

std::unique_ptr<Activation> makeImmediateActivation(RunCore& core) {
  return std::make_unique<ImmediateActivation>(core);
}

}  // namespace tactus::master
