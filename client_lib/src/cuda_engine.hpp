// The GPU engine of libtactus (implemented with the CUDA runtime in cuda_engine.cpp; tests compile
// the same source against the host stand-in runtime). No CUDA header here: streams are opaque.
//
// One submitter instance i of iteration h, with submittee s, on its CPU worker:
//
//   CPU worker:  wait i's own predecessors (CPU done words) -- as for any CPU runnable
//                for each predecessor p of s:  GPU (engine-run) p: wait p's SUBMISSION word, then
//                                                cudaStreamWaitEvent(stream, event[p][h' % ring])
//                                              CPU p: wait p's done word
//                cudaLaunchHostFunc(stream, gpuStart)   (GPU-side start time of s)
//                submitter(userdata, stream)             (the user's kernels)
//                cudaEventRecord(event[s][h % ring], stream)   if s has GPU successors
//                submitted[s] = h + 1 (+ futex wake)
//                cudaLaunchHostFunc(stream, gpuEnd)     (logs s, done[s] = h + 1, futex wake)
//   i is then done on the CPU; the worker never calls a synchronising CUDA function.
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
  std::uint32_t clientIndex = 0;
  std::int64_t spinNs = 0;
  const std::vector<CudaSubmitterRegistration>* submitters = nullptr;  ///< per RunnableId
  std::vector<CUstream_st*> streams;  ///< per ResourceId: the registered stream, or null
};

/// Per CPU worker: counters and overhead samples, touched only by that worker.
struct GpuWorkerStats {
  std::uint64_t submissions = 0, streamWaits = 0, submissionWaits = 0, hotPathSyncCalls = 0;
  std::vector<std::int32_t> overheadNs;  ///< ring of samples (capacity fixed at start)
  std::uint64_t samples = 0;
};

/// The GPU engine of one client process for one run.
class CudaEngine {
 public:
  CudaEngine();
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;
  ~CudaEngine();

  /// Creates the completion events of this client's engine-run submittees and publishes their
  /// IPC handles and mode in shared memory (before the client enters). kIo on a CUDA failure.
  Result<void> prepare(const GpuSetup& setup);

  /// Whether submittee instance `i` is run by this engine (its GPU worker must not run it).
  bool runsSubmittee(std::uint32_t i) const;
  /// Whether submitter instance `i` goes through submit().
  bool runsSubmitter(std::uint32_t i) const;
  /// Whether submitter `i` may treat its wait for `other` as a wait for other's submission: other
  /// is a submittee this engine runs on i's own stream and not a declared dependency of i.
  bool submissionSuffices(std::uint32_t i, std::uint32_t other) const;

  /// The hot path (see the file comment). Returns false when `abort()` said stop while waiting
  /// (nothing was enqueued then). `bodyStartNs`/`bodyEndNs` get the submitter body's times.
  bool submit(std::uint32_t i, std::uint64_t h, const std::function<bool()>& abort, GpuWorkerStats& stats,
              std::int64_t& bodyStartNs, std::int64_t& bodyEndNs);

  /// After the workers stopped: waits for queued GPU work when the run ended cleanly
  /// (`clean`), and folds the workers' statistics into engineStats().
  void finish(bool clean, const std::vector<GpuWorkerStats*>& workers);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tactus::client
