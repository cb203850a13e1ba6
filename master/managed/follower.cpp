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

namespace tactus::master {

using namespace run_detail;

class FollowerActivation final : public Activation {
 public:
  explicit FollowerActivation(Run& run) : run_(run) {}

  std::uint64_t stopAt() const override { return 0; }  // every hyperepoch waits for the primary's start

  void startRun() override { run_.startAwaitingSwitches(); }

  bool stopped(const Mode& mode) const override { return everyHyperepochStopped(mode); }

  void exitRequested(Mode& /*mode*/, ClientId /*c*/) override { run_.soc_->requestStop(); }

  std::optional<RunEnd> exitProgress() override { return std::nullopt; }  // the primary's stop ends it

  std::optional<RunEnd> watch() override { return std::nullopt; }  // no manager channel here

  std::optional<RunEnd> round() override { return run_.runStarted_ ? run_.followSwitches() : std::nullopt; }

  std::int64_t waitSliceNs() const override { return kSliceNs; }

 private:
  Run& run_;
};

std::unique_ptr<Activation> makeFollowerActivation(Run& run) { return std::make_unique<FollowerActivation>(run); }

}  // namespace tactus::master
