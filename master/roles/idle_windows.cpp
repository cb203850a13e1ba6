// The plan's idle windows for the master's own work (see idle_windows.hpp).
#include "roles/idle_windows.hpp"

#include <algorithm>
#include <utility>

namespace tactus::master {

IdleWindows::IdleWindows(const Schedule& schedule, const RunPlan& plan, int masterCore, std::uint32_t ringCapacity,
                         std::int64_t fallbackSliceNs, bool enabled)
    : maxSleepNs_(fallbackSliceNs), minGapNs_(fallbackSliceNs) {
  if (!enabled) return;
  // Which hyperepochs have work, and the busy stretches on the cores the master may run on.
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;
  HyperepochId only = kNone;
  bool several = false;
  for (HyperepochId h : plan.hyperepochs.ids()) {
    if (plan.hyperepochs[h].instances.empty()) continue;
    if (only != kNone) several = true;
    only = h;
  }
  if (only == kNone || several) return;  // nothing runs, or periods that do not line up
  periodNs_ = schedule.hyperepochs[only].periodNs;
  if (periodNs_ <= 0) return;
  bool onMasterCore = false;
  for (InstanceId i : plan.hyperepochs[only].instances) {
    const InstanceInfo& in = schedule.instances[i];
    const ResourceInfo& hw = schedule.resources[in.resources.front()];
    if (hw.kind != ResourceKind::kCpu) continue;  // GPU work leaves the cores free
    if (masterCore >= 0 && hw.core != static_cast<std::uint32_t>(masterCore)) continue;
    onMasterCore = true;
    busy.emplace_back(in.startNs, in.endNs);
  }
  if (!onMasterCore) {
    // A core of its own (-c on a core the plan does not use), or no CPU work: the master's work
    // disturbs nothing where it runs, so the fixed slice stays.
    return;
  }
  std::sort(busy.begin(), busy.end());
  std::int64_t at = 0;
  for (const auto& [start, end] : busy) {
    if (start - at >= kMinWindowNs) windows_.push_back({at, start});
    at = std::max(at, end);
  }
  if (periodNs_ - at >= kMinWindowNs) windows_.push_back({at, periodNs_});
  if (windows_.empty()) return;
  // No worker's ring may fill beyond half between two looks: with n records per worker and
  // period, look at least every period * (capacity / 2) / n.
  std::size_t perWorker = 1;
  for (const WorkerPlan& w : plan.workers) perWorker = std::max(perWorker, w.instances.size());
  const auto ringBound = static_cast<std::int64_t>(static_cast<__int128>(periodNs_) * (ringCapacity / 2) /
                                                   static_cast<__int128>(perWorker));
  // At least once per period, or a period plus the slice the loop keeps between looks
  // (nextWakeNs); bounded by kMaxSleepNs and the ring fill.
  const std::int64_t perPeriod = std::max(periodNs_, std::min(periodNs_ + fallbackSliceNs, kMaxSleepNs));
  maxSleepNs_ = std::max<std::int64_t>(std::min({kMaxSleepNs, ringBound, perPeriod}), fallbackSliceNs);
  planned_ = ringBound >= fallbackSliceNs;
  if (!planned_) {
    windows_.clear();
    maxSleepNs_ = fallbackSliceNs;
  }
}

std::int64_t IdleWindows::nextWakeNs(std::int64_t runStartNs, std::int64_t afterNs) const {
  if (!planned_) return afterNs + maxSleepNs_;
  const std::int64_t bound = afterNs + maxSleepNs_;
  // Not sooner than the fixed slice after the last look: windows that repeat faster (a period of
  // a millisecond) would wake the loop more often than the slice did.
  const std::int64_t from = afterNs + minGapNs_;
  if (from < runStartNs) return std::min(bound, runStartNs + windows_.front().wakeNs());
  const std::int64_t iteration = (from - runStartNs) / periodNs_;
  const std::int64_t offset = (from - runStartNs) % periodNs_;
  for (const IdleWindow& w : windows_) {
    if (offset <= w.wakeNs()) return std::min(bound, runStartNs + iteration * periodNs_ + w.wakeNs());
  }
  return std::min(bound, runStartNs + (iteration + 1) * periodNs_ + windows_.front().wakeNs());
}

}  // namespace tactus::master
