// The follower activation (run/activation.hpp): a SoC of a multi-SoC schedule under a manager. It
// has no manager channel and decides no start or stop itself: it activates, follows and parks each
// hyperepoch as the primary's switches arrive (Switching::followSwitches, schedule_switch.cpp), and a
// client's exit request on this SoC asks the primary to stop the running schedule on every SoC.
#include <memory>
#include <optional>

#include "managed/managed.hpp"
#include "managed/switching.hpp"
#include "master.hpp"
#include "run/activation.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"
#include "run/run_state.hpp"
#include "tactus/core/text.hpp"

namespace tactus::master {

using namespace run_detail;

class FollowerActivation final : public Activation {
 public:
  explicit FollowerActivation(RunCore& core) : core_(core), switching_(core) {}

  // The primary's switches, followed over the link; the policy is the primary's.
  Result<void> check() override {
    SocRunOptions& so = *core_.socOptions();
    so.managed = true;
    if (!core_.options().policyPath.empty()) {
      const Schedule& s = core_.modes().front()->schedule;
      return fail(ErrorCode::kValidation, "--policy is given to the master of the primary SoC " +
                                              quoted(s.socs[so.primary].name) + " only: SoC " +
                                              quoted(core_.options().soc) + " follows its switches");
    }
    return {};
  }

  std::uint64_t stopAt() const override { return 0; }  // every hyperepoch waits for the primary's start

  void startRun() override { switching_.startAwaitingSwitches(); }

  bool stopped(const Mode& mode) const override { return everyHyperepochStopped(mode); }

  void exitRequested(Mode& /*mode*/, ClientId /*c*/) override { core_.soc()->requestStop(); }

  std::optional<RunEnd> exitProgress() override { return std::nullopt; }  // the primary's stop ends it

  std::optional<RunEnd> watch() override { return std::nullopt; }  // no manager channel here

  std::optional<RunEnd> round() override { return core_.runStarted() ? switching_.followSwitches() : std::nullopt; }

  std::int64_t waitSliceNs() const override { return kSliceNs; }

  bool switchesSchedules() const override { return true; }

  Result<void> prepare() override { return {}; }

  std::string published() override { return "clients and the switches of the primary SoC's master"; }

  void stopForSignal(Mode* /*running*/, bool first) override {
    if (first) core_.soc()->requestStop();  // the primary stops the running schedule on every SoC
  }

  std::string peerStopMessage(const std::string& /*message*/) const override { return kPeerStopMessage; }

  bool signalStopRequested() const override { return false; }

  std::optional<shm::StopReason> primaryStopReason() const override { return core_.linkStopReason(); }

  std::optional<const Mode*> switchInFlight() const override { return std::nullopt; }  // no switch job here

  std::string switchBlocker(ClientId& /*client*/, std::string& /*name*/) const override { return ""; }

  void closing(const RunEnd& /*end*/) override {
    for (const auto& m : core_.modes()) {
      if (m->soc) m->soc->ending();
    }
  }

  void ended() override {}

  void closed() override {}

 private:
  RunCore& core_;
  Switching switching_;
};

std::unique_ptr<Activation> makeFollowerActivation(RunCore& core) { return std::make_unique<FollowerActivation>(core); }

}  // namespace tactus::master
