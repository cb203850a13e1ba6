// The follower activation (run/activation.hpp): a SoC of a multi-SoC schedule under a manager. It
// has no manager channel and decides no start or stop itself: it activates, follows and parks each
// hyperepoch as the primary's switches arrive (Run::followSwitches, schedule_switch.cpp), and a
// client's exit request on this SoC asks the primary to stop the running schedule on every SoC.
#include <memory>
#include <optional>

#include "managed/managed.hpp"
#include "run/activation.hpp"
#include "run/run.hpp"
#include "run/run_state.hpp"
#include "tactus/core/text.hpp"

namespace tactus::master {

using namespace run_detail;

class FollowerActivation final : public Activation {
 public:
  explicit FollowerActivation(Run& run) : run_(run) {}

  // The primary's switches, followed over the link; the policy is the primary's.
  Result<void> check() override {
    SocRunOptions& so = *run_.socOptions_;
    so.managed = true;
    if (!run_.o_.policyPath.empty()) {
      const Schedule& s = run_.modes_.front()->schedule;
      return fail(ErrorCode::kValidation, "--policy is given to the master of the primary SoC " +
                                              quoted(s.socs[so.primary].name) + " only: SoC " + quoted(run_.o_.soc) +
                                              " follows its switches");
    }
    return {};
  }

  std::uint64_t stopAt() const override { return 0; }  // every hyperepoch waits for the primary's start

  void startRun() override { run_.startAwaitingSwitches(); }

  bool stopped(const Mode& mode) const override { return everyHyperepochStopped(mode); }

  void exitRequested(Mode& /*mode*/, ClientId /*c*/) override { run_.soc_->requestStop(); }

  std::optional<RunEnd> exitProgress() override { return std::nullopt; }  // the primary's stop ends it

  std::optional<RunEnd> watch() override { return std::nullopt; }  // no manager channel here

  std::optional<RunEnd> round() override { return run_.runStarted_ ? run_.followSwitches() : std::nullopt; }

  std::int64_t waitSliceNs() const override { return kSliceNs; }

  bool switchesSchedules() const override { return true; }

  Result<void> prepare() override { return {}; }

  std::string published() override { return "clients and the switches of the primary SoC's master"; }

  void stopForSignal(Mode* /*running*/, bool first) override {
    if (first) run_.soc_->requestStop();  // the primary stops the running schedule on every SoC
  }

  std::string peerStopMessage(const std::string& /*message*/) const override { return kPeerStopMessage; }

  bool signalStopRequested() const override { return false; }

  std::optional<shm::StopReason> primaryStopReason() const override { return run_.linkStopReason(); }

  std::optional<const Mode*> switchInFlight() const override { return std::nullopt; }  // no switch job here

  std::string switchBlocker(ClientId& /*client*/, std::string& /*name*/) const override { return ""; }

  void closing(const RunEnd& /*end*/) override {
    for (auto& m : run_.modes_) {
      if (m->soc) m->soc->ending();
    }
  }

  void ended() override {}

  void closed() override {}

 private:
  Run& run_;
};

std::unique_ptr<Activation> makeFollowerActivation(Run& run) { return std::make_unique<FollowerActivation>(run); }

}  // namespace tactus::master
