// The GPU engine of libtactus (implemented with the CUDA runtime in cuda_engine.cpp; tests compile
// the same source against the host stand-in runtime). No CUDA header here: streams are opaque.
//
// One submitter instance i of iteration h, with submittee s, on its CPU worker (which waited, as
// for any CPU runnable, for i's own predecessors; for the previous work on i's stream only until
// it was SUBMITTED):
//
//   for each predecessor p of s not on i's stream (GPU work or CPU runnable, any process):
//       cuStreamWaitValue64(stream, &gpu(p).fence, h + 1, geq)      -- the GPU waits, not the CPU
//   stamp(stream, &gpu(s).gpuTimesNs[h % 2][0])            (the GPU's clock: the work's start)
//   cuStreamWriteValue64(stream, &gpu(s).started, h + 1)   (the GPU-side start of s)
//   submitter(userdata, stream)                   (the user's kernels)
//   stamp(stream, &gpu(s).gpuTimesNs[h % 2][1])            (the work's end)
//   cuStreamWriteValue64(stream, &gpu(s).fence, h + 1)     (GPU and CPU successors wait on this)
//   submitted[s] = h + 1 (+ futex wake)           (the next submitter of the stream may enqueue)
//   i is then done on the CPU; the worker never waits for a predecessor of s nor calls a
//   synchronising CUDA function, and no host callback is queued. Every driver call's result is
//   checked: a failure stops the client's workers and failure() names it. The client's GPU worker
//   watches `started` and `fence` (observe()) to log s with the stamps and publish done[s]. A
//   stamp is a one-thread kernel storing %globaltimer plus the offset to CLOCK_MONOTONIC that
//   prepare() measured (the tightest of 32 host-bracketed stamps; on the stand-in, the stream's
//   thread stores its clock); TACTUS_GPU_STAMPS=0 leaves them out. CPU
//   runnables that GPU work waits for write their fence when they end (worker.cpp,
//   fence_wait.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"
#include "tactus/client.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::client {

/// Whether this build of the library has a GPU engine (CUDA or the stand-in).
bool cudaEngineAvailable();

/// Registration-time checks of a stream: not a default stream, non-blocking. kBadParameter or kIo.
Result<void> checkCudaStream(CUstream_st* stream, const std::string& what);

/// How many streams one device may take: $CUDA_DEVICE_MAX_CONNECTIONS (CUDA's hardware queue
/// count, default 8, at most 32). More streams than that share queues and serialize falsely.
std::uint32_t deviceStreamLimit();

/// Overhead samples kept per CPU worker (a ring; the last ones of a run count).
std::size_t gpuOverheadSampleCapacity();

/// What the engine needs from the client runtime.
struct GpuSetup {
  const Schedule* schedule = nullptr;
  const RunPlan* plan = nullptr;
  shm::SegmentView view;
  ClientId clientIndex{};
  std::int64_t spinNs = 0;
  const IdVector<RunnableId, CudaSubmitterRegistration>* submitters = nullptr;  ///< per runnable
  IdVector<ResourceId, CUstream_st*> streams;  ///< per resource: the registered stream, or null
};

/// Per CPU worker: counters and overhead samples, touched only by that worker.
struct GpuWorkerStats {
  std::uint64_t submissions = 0, streamWaits = 0;
  std::vector<std::int32_t> overheadNs;  ///< ring of samples (capacity fixed at start)
  std::uint64_t samples = 0;
};

/// Makes the statistics of these workers (every GPU engine's of the client's last run) what
/// engineStats() returns.
void publishEngineStats(const std::vector<GpuWorkerStats*>& workers);

/// The GPU engine of one client process in one schedule for one run.
class CudaEngine {
 public:
  CudaEngine();
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;
  ~CudaEngine();

  /// Takes the driver's stream memory operations, refuses a device without 64-bit ones
  /// (kInvalidState), registers the segment with the device and publishes this client's
  /// engine-run submittees (GpuMode::kFences) before the client enters. kIo on a CUDA failure.
  Result<void> prepare(const GpuSetup& setup);

  /// Whether submittee instance `i` is run by this engine (its GPU worker must not run it).
  bool runsSubmittee(InstanceId i) const;
  /// Whether submitter instance `i` goes through submit().
  bool runsSubmitter(InstanceId i) const;
  /// Whether submitter `i` may treat its wait for `other` as a wait for other's submission: other
  /// is a submittee this engine runs on i's own stream and not a declared dependency of i.
  bool submissionSuffices(InstanceId i, InstanceId other) const;

  /// The hot path (see the file comment); never waits. Returns false when a stream memory
  /// operation failed: failure() then names it, and the run must stop (the stream's order is
  /// lost). `bodyStartNs`/`bodyEndNs` get the body's times.
  bool submit(InstanceId i, std::uint64_t h, const std::function<bool()>& abort, GpuWorkerStats& stats,
              std::int64_t& bodyStartNs, std::int64_t& bodyEndNs);

  /// On the client's GPU worker, for submittee `i` this engine runs: waits (spin, then sleep)
  /// until its GPU work of iteration h has started and ended, with the times it saw them.
  /// Returns false when `abort()` said stop first.
  bool observe(InstanceId i, std::uint64_t h, const std::function<bool()>& abort, std::int64_t spinNs,
               std::int64_t& startNs, std::int64_t& endNs);

  /// On each CPU worker thread before its first submit(): makes the run's device current there
  /// (driver calls need its context). False when that failed: failure() names it.
  bool bindThread();

  /// The first failed CUDA call of the hot path (call, submitter, stream, CUDA's error), or "".
  /// Any thread; cold (it takes a lock).
  std::string failure() const;

  /// After the workers stopped: waits for queued GPU work when the run ended cleanly (`clean`);
  /// otherwise keeps the engine's device state for the life of the process.
  void finish(bool clean);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tactus::client
