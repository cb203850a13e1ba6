// The engine-neutral queue engine (<tactus/engine_queue.hpp>): submitters whose work runs on a
// DLA or VPU engine, through a DLA_HANDLE or PVA_STREAM queue the client registered with an
// adapter of two functions (wait for a fence, signal a fence). It mirrors the CUDA engine
// (cuda_engine.hpp) with the adapter in place of cuStreamWaitValue64 / cuStreamWriteValue64 and
// the same 64-bit fences of shm::GpuSlot, so CUDA streams and these queues of any process order
// themselves through one mechanism:
//
//   submitter instance i of iteration h, submittee s, on i's CPU worker (never waits):
//     for each predecessor p of s outside i's queue: waitValue(queue, &gpu(p).fence, h + 1)
//     signalValue(queue, &gpu(s).started, h + 1)
//     the submitter's registered function (enqueues the work)
//     signalValue(queue, &gpu(s).fence, h + 1)
//     submitted[s] = h + 1 (+ futex wake)
//   the engine's worker (DLA0, VPU0): waits for the done words of s's predecessors, watches
//   started and fence, logs s with the times it saw them, publishes done[s].
//   CPU successors of s wait for done[s] (GpuMode::kNone), not its fence. The queue has no clock
//   of its own (a GPU stamps its work), so this keeps the event log's order exact; the queues and
//   CUDA streams that wait for s wait on its fence, so the engine's work itself is never delayed
//   by a CPU (a CUDA stream's stamps may then precede the logged end of queue work it waited for).
//
// Unlike the CUDA engine this one is in every build of libtactus (it needs no toolkit).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/engine_queue.hpp"

namespace tactus::client {

/// The engine queue resource (CUDA stream, DLA handle, PVA stream) instance `i` holds, or kNone.
ResourceId engineQueueOf(const Schedule& s, InstanceId i);

/// What submittee `work`'s queue must wait for before the work: the predecessors in the plan
/// other than its submitter `submitter` and other than what is ahead of it in the same queue
/// (`queue`: a submitter before it on the queue that is not a declared dependency, work
/// submitted on the queue). Shared by the CUDA engine and the queue engine.
std::vector<WaitCondition> queueWaits(const Schedule& s, const RunPlan& plan,
                                      const IdVector<RunnableId, std::vector<InstanceId>>& byRunnableFrame,
                                      InstanceId submitter, InstanceId work, ResourceId queue);

/// A registered engine queue (per DLA_HANDLE / PVA_STREAM resource).
struct EngineQueueRegistration {
  void* queue = nullptr;  ///< null: not registered
  EngineQueueAdapter adapter{};
};

/// What the queue engine needs from the client runtime.
struct QueueSetup {
  const Schedule* schedule = nullptr;
  const RunPlan* plan = nullptr;
  shm::SegmentView view;
  ClientId clientIndex{};
  const IdVector<RunnableId, Registration>* registrations = nullptr;                ///< per runnable
  const IdVector<RunnableId, CudaSubmitterRegistration>* cudaSubmitters = nullptr;  ///< left to the CUDA engine
  const IdVector<ResourceId, EngineQueueRegistration>* queues = nullptr;            ///< per resource
  bool allowUnregistered = false;  ///< the master's --allow-unregistered-runnables: no refusal
};

/// The queue engine of one client process in one schedule for one run.
class QueueEngine {
 public:
  /// Plans the client's submitters on DLA_HANDLE / PVA_STREAM queues and publishes their
  /// submittees' GpuMode (kNone: CPU successors wait for done, see prepare()). kInvalidState naming the queue and the
  /// submitter when a queue such a submitter holds is not registered (unless setup.allowUnregistered: it then keeps the
  /// engine-less path). `refusedSubmitter` gets the submitter a refusal names.
  Result<void> prepare(const QueueSetup& setup, RunnableId& refusedSubmitter);

  /// Whether the engine runs anything (prepare planned a submitter).
  bool active() const { return !plans_.empty(); }
  /// Whether submittee instance `i` is run by this engine (its engine's worker only watches it).
  bool runsSubmittee(InstanceId i) const { return active() && runsSubmittee_[i] != 0; }
  /// Whether submitter instance `i` goes through submit().
  bool runsSubmitter(InstanceId i) const { return active() && planOf_[i] >= 0; }
  /// Whether submitter `i` may wait only for the submission of `other` (CudaEngine's rule).
  bool submissionSuffices(InstanceId i, InstanceId other) const;

  /// The hot path on the submitter's CPU worker (see the file comment); never waits. False when
  /// an adapter call failed: failure() names it and the run must stop.
  bool submit(InstanceId i, std::uint64_t h, std::int64_t& bodyStartNs, std::int64_t& bodyEndNs);

  /// On the engine's worker: waits until submittee `i`'s work of iteration h has started and
  /// ended, with the times it saw them. False when `abort()` said stop first.
  bool observe(InstanceId i, std::uint64_t h, const std::function<bool()>& abort, std::int64_t spinNs,
               std::int64_t& startNs, std::int64_t& endNs) const;

  /// The first failed adapter call (call, submitter, queue, value returned), or "". Any thread.
  std::string failure() const;

 private:
  struct Plan {
    InstanceId submitter{}, submittee{};
    RunnableId runnable{};
    ResourceId queueResource{};
    void* queue = nullptr;
    EngineQueueAdapter adapter{};
    std::vector<WaitCondition> waits;
  };
  void recordFailure(const Plan& p, std::uint64_t h, const char* call, int rc);

  QueueSetup setup_;
  IdVector<InstanceId, std::int32_t> planOf_;  ///< per instance: index into plans_, or -1
  IdVector<InstanceId, char> runsSubmittee_;
  std::vector<Plan> plans_;
  mutable std::mutex failureMutex_;
  std::string failure_;  ///< guarded by failureMutex_
};

}  // namespace tactus::client
