// The master's stall watch: names the client that holds up a release thread. One role for every
// kind of run (one schedule, several under a manager, one SoC of several): the stuck check (a
// wait beyond the hyperepoch's Monitor budget, else -t) and the client a stop waited for beyond
// its grace after SIGTERM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "roles/client_monitor.hpp"
#include "roles/releaser.hpp"
#include "roles/run_control.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {

/// After SIGTERM the run stops at the next iteration boundary; a client that does not finish its
/// iteration within this grace is left behind, named, and the run ends anyway.
constexpr std::int64_t kStopGraceNs = 500'000'000;

/// The runnable a stalled release thread waits for, and its client (remote: on another SoC,
/// whose master watches it).
struct Blocker {
  ClientId client = kNone;
  RunnableId runnable{};
  bool remote = false;
};

/// Watches one schedule's release threads for waits that last too long.
class StallWatch {
 public:
  /// Every reference outlives the watch; `timeoutUs` is the master's -t (negative: none).
  StallWatch(const Schedule& schedule, const RunPlan& plan, const shm::SegmentView& view, const Releaser& releaser,
             const ClientMonitor& monitor, std::int64_t timeoutUs)
      : schedule_(schedule), plan_(plan), view_(view), releaser_(releaser), monitor_(monitor), timeoutUs_(timeoutUs) {}

  /// The end for a client a release thread has waited on beyond its budget at `nowNs`, if any.
  std::optional<RunEnd> stuck(std::int64_t nowNs) const;
  /// What a release thread waits for now (the runnable that holds it up), if any waits.
  std::optional<Blocker> blocker() const;
  /// "; client 'C' did not finish runnable 'C.r' within 500ms" for the end of a stop whose grace
  /// ran out ("" when no release thread waits), and the client it names.
  std::string graceText(ClientId& client) const;

 private:
  std::optional<Stall> currentStall() const;
  InstanceId blockingInstance(const Stall& stall) const;
  Blocker blockerOf(const Stall& stall) const;
  std::string socOf(const Blocker& b) const;
  /// How many budgets a wait for another SoC's runnable may last before this master ends the run.
  static constexpr std::int64_t kRemoteBudgetFactor = 2;
  std::int64_t budgetNs(HyperepochId hyperepoch) const;

  const Schedule& schedule_;
  const RunPlan& plan_;
  const shm::SegmentView& view_;
  const Releaser& releaser_;
  const ClientMonitor& monitor_;
  std::int64_t timeoutUs_;
};

}  // namespace tactus::master
