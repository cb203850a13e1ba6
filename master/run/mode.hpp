// One loaded schedule of a run and the master's roles acting on its segment (run.hpp): what the
// run core, its activation (activation.hpp) and its hooks (run_hook.hpp) share about a schedule.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "roles/client_monitor.hpp"
#include "roles/log_drain.hpp"
#include "roles/overrun_watch.hpp"
#include "roles/releaser.hpp"
#include "roles/run_control.hpp"
#include "roles/segment_owner.hpp"
#include "roles/stall_watch.hpp"
#include "soc/soc_run.hpp"
#include "tactus/core/ids.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::master {

/// No schedule (a plain start's `from`, a plain stop's `to`, the manager channel's idle `running`).
constexpr std::uint32_t kNoSchedule = 0xffffffffu;

/// A hyperepoch of a follower SoC under a manager (Run::followSwitches): parked until the primary
/// starts it, then (a rollover with switch callbacks) awaiting the clients' acknowledgements, then
/// following the primary's iterations until its stop.
enum class FollowStep : std::uint8_t { kParked, kAwaitingAcks, kFollowing };

/// One loaded schedule and the master's roles acting on its segment.
struct Mode {
  RunControl control;  ///< first: the releaser refers to it; aborted with the run (stops are per hyperepoch)
  std::string path;
  std::string text;
  Schedule schedule;
  RunPlan plan;
  std::uint64_t contentHash = 0;
  std::unique_ptr<SegmentOwner> owner;
  std::unique_ptr<ClientMonitor> monitor;
  std::unique_ptr<OverrunWatch> overruns;  ///< before drain: the drain shows it every record
  std::unique_ptr<LogDrain> drain;
  std::unique_ptr<SocRun> soc;  ///< a multi-SoC run's link for this schedule; before releaser: its threads call it
  std::unique_ptr<Releaser> releaser;
  std::unique_ptr<StallWatch> stalls;                         ///< after releaser and monitor: it refers to both
  IdVector<HyperepochId, std::uint64_t> nextIteration;        ///< per hyperepoch: where its next activation starts
  IdVector<HyperepochId, std::uint32_t> activations;          ///< per hyperepoch: activations so far
  IdVector<HyperepochId, std::uint32_t> acksExpected;         ///< per hyperepoch: cumulative switch acknowledgements
  IdVector<HyperepochId, std::uint32_t> workersIn;            ///< per hyperepoch: workers of the plan
  IdVector<HyperepochId, std::vector<ClientId>> clientsWith;  ///< per hyperepoch: the clients with a worker in it
  IdVector<HyperepochId, std::set<std::string>> hardware;     ///< per hyperepoch: its hardware resources by name
  /// Per hyperepoch, on a follower SoC under a manager: where it stands in following the primary's switches.
  IdVector<HyperepochId, FollowStep> follow;
  IdVector<HyperepochId, std::uint32_t> followFrom;   ///< per hyperepoch: the schedule a followed rollover came from
  IdVector<HyperepochId, std::uint8_t> switchedAway;  ///< per hyperepoch: its last stop was a rollover's
  bool running = false;
};

}  // namespace tactus::master
