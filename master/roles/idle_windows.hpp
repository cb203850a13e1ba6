// Where the master does its own work (log drain, client checks): in the plan's idle windows, so it
// never takes a core in the middle of a planned chain.
//
//   period  |A0 A1 ....... B0 ....|        idle        |A0 A1 ...
//           0                     lastEnd              period
//                                            ^ the master wakes here, in the middle (and in any
//                                              other planned gap on its cores)
//
// The middle, not the start: work runs late by the release's lateness and its own jitter, so a
// wake at the planned end lands on the late work. On a 2-core VM (releases ~80 us late, p50) it
// did: every one of the slowest starts of a 10 ms period's runnable waited behind the monitor loop,
// whose wake at the runnable's planned end had preempted the worker.
//
// A window is a stretch of the hyperepoch period in which no CPU instance is planned on any core
// the master may run on: its own core with -c, else every core the plan uses. The release threads
// keep their exact times; only the monitor loop follows the windows.
#pragma once

#include <cstdint>
#include <vector>

#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::master {

/// One planned idle stretch, from the iteration's start.
struct IdleWindow {
  std::int64_t startNs = 0;  ///< offset in the period
  std::int64_t endNs = 0;    ///< offset in the period (> startNs)
  /// Where the loop wakes in it: the middle, as far as can be from the planned work on either side.
  std::int64_t wakeNs() const { return startNs + (endNs - startNs) / 2; }
};

/// When the monitor loop wakes next: idle windows of the plan, or a fixed slice where the plan
/// gives none to use.
class IdleWindows {
 public:
  /// Windows shorter than this are not used (waking costs tens of microseconds).
  static constexpr std::int64_t kMinWindowNs = 200'000;
  /// The longest the loop sleeps between looks even with windows (dead clients, stop requests).
  static constexpr std::int64_t kMaxSleepNs = 100'000'000;

  /// From a verified schedule and its plan; `masterCore`: -c, or -1 (not pinned). `ringCapacity`:
  /// records per worker ring: the loop wakes often enough that no ring fills beyond half.
  /// `enabled`: false keeps the fixed slice (TACTUS_IDLE_WINDOWS=0; the windows are the default:
  /// with 1 ms runnables on two cores, a loop waking every 2 ms preempted a worker ~500 times a
  /// second).
  IdleWindows(const Schedule& schedule, const RunPlan& plan, int masterCore, std::uint32_t ringCapacity,
              std::int64_t fallbackSliceNs, bool enabled);

  /// Whether the plan's windows are used (one hyperepoch with CPU work on the master's cores and
  /// a gap of at least kMinWindowNs); otherwise every wake is `fallbackSliceNs` apart, or, on a
  /// core the plan leaves free (-c), the master wakes whenever it likes: its work disturbs nothing.
  bool planned() const { return planned_; }
  /// The windows, ascending (empty unless planned()).
  const std::vector<IdleWindow>& windows() const { return windows_; }
  /// The longest sleep before the next look (bounded by kMaxSleepNs and by the ring fill).
  std::int64_t maxSleepNs() const { return maxSleepNs_; }

  /// The next wake after `afterNs` (when the loop last did its work): the middle of the next
  /// window at least `fallbackSliceNs` later, for a run whose iterations start at `runStartNs` +
  /// k * period. An overrun shifts the iterations; the wake is then early or late by that shift,
  /// never lost: maxSleepNs() bounds it.
  std::int64_t nextWakeNs(std::int64_t runStartNs, std::int64_t afterNs) const;

 private:
  bool planned_ = false;
  std::int64_t periodNs_ = 0;
  std::int64_t maxSleepNs_ = 0;
  std::int64_t minGapNs_ = 0;  // the fixed slice: the least time between two wakes by the windows
  std::vector<IdleWindow> windows_;
};

}  // namespace tactus::master
