// The CPU side of GPU fences (shm::GpuSlot::fence): which instances must signal one when they
// end, and how a CPU worker waits for one (spin, then sleep: a fence written by the GPU wakes
// no one). The GPU side (cuStreamWaitValue64 / cuStreamWriteValue64) is in cuda_engine.cpp.
#pragma once

#include <atomic>
#include <cstdint>

#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::client {

/// How long a CPU worker sleeps between looks at a fence once its spin budget is spent (ns).
inline constexpr std::int64_t kFencePollNs = 20'000;

/// Per instance: whether some submittee (GPU work, of any client) waits for it, so whoever
/// completes it on a CPU must write its fence. The same for every client (from the plan).
inline IdVector<InstanceId, char> fenceWanted(const Schedule& s, const RunPlan& plan) {
  IdVector<InstanceId, char> wanted(s.instances.size(), 0);
  for (InstanceId t : s.instances.ids()) {
    if (s.runnables[s.instances[t].runnable].kind != RunnableKind::kSubmittee) continue;
    for (const WaitCondition& c : plan.waits[t]) wanted[c.instance] = 1;
  }
  return wanted;
}

/// Waits until `fence` >= target: spins for `spinNs`, then sleeps kFencePollNs between looks.
/// Returns false when `stopped()` says stop first.
template <typename Stopped>
bool waitForFence(const std::atomic<std::uint64_t>& fence, std::uint64_t target, std::int64_t spinNs,
                  Stopped&& stopped) {
  if (fence.load(std::memory_order_acquire) >= target) return true;
  const std::int64_t spinEnd = ipc::monotonicNs() + spinNs;
  while (fence.load(std::memory_order_acquire) < target) {
    const std::int64_t now = ipc::monotonicNs();
    if (now < spinEnd) {
      ipc::cpuRelax();
      continue;
    }
    if (stopped()) return false;
    ipc::sleepUntilNs(now + kFencePollNs, 0);
  }
  return true;
}

}  // namespace tactus::client
