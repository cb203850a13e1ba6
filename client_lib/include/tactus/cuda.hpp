// libtactus's CUDA API: register CUDA streams and CUDA submitters by their names in the graph.
// Built and installed when the CUDA toolkit is found. The runtime makes each registered stream
// wait for the GPU work its submittee depends on (in any process) before the submitter runs, and
// signals the submittee's completion to every successor (CPU or GPU, in any process) after it
// returns; neither step blocks the CPU worker on the GPU.
//
//   cudaStream_t stream;
//   cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
//   tactus::cuda::registerStream("CUDA_STREAM0", stream);
//   tactus::cuda::registerSubmitter("PreProcess", [](cudaStream_t s) { kernel<<<1, 32, 0, s>>>(); });
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tactus/client.hpp"
#include "tactus/core/result.hpp"

// CUDA's own declaration (driver_types.h), repeated so this header needs no CUDA header.
typedef struct CUstream_st* cudaStream_t;

namespace tactus::cuda {

/// A CUDA submitter as a C function (STM's stmCudaSubmitter_t): enqueue the submittee's work on
/// `stream` and return without waiting for it.
using SubmitterFunction = void (*)(void* userdata, cudaStream_t stream);

/// Registers a CUDA stream under its client-local resource name in the graph (`CUDA_STREAM0`).
/// Errors: kInvalidState (not initialized, after enterScheduler, or a library built without CUDA),
/// kBadParameter (the null, legacy or per-thread default stream; a blocking stream, i.e. one
/// created without cudaStreamNonBlocking), kNotFound (the client has no such stream in the graph),
/// kAlreadyExists (the name or the stream registered twice), kValidation (more streams on one
/// device than its limit: the graph's stream limit or $CUDA_DEVICE_MAX_CONNECTIONS, default 8),
/// kIo (a CUDA call failed).
Result<void> registerStream(const std::string& name, cudaStream_t stream);

/// Registers a CUDA submitter by its client-local runnable name. Errors: kInvalidState,
/// kBadParameter (null function), kNotFound (no such submitter of this client), kAlreadyExists.
Result<void> registerSubmitter(const std::string& name, SubmitterFunction function, void* userdata);

/// Registers a CUDA submitter as a C++ callable; same errors.
Result<void> registerSubmitter(const std::string& name, std::function<void(cudaStream_t)> function);

/// Counters of this process's GPU engine, for tests and benchmarks.
struct EngineStats {
  std::uint64_t submissions = 0;      ///< submitter calls made through the engine
  std::uint64_t streamWaits = 0;      ///< cuStreamWaitValue64 calls enqueued (fence waits for predecessors)
  std::uint64_t gpuEnds = 0;          ///< submittee completions the client's GPU worker saw (their fences)
  std::uint64_t overheadSamples = 0;  ///< samples behind the percentiles below
  /// Wall time (CLOCK_MONOTONIC ns) on the CPU worker per submitter beyond its body, median:
  /// submit() never waits, so this bounds its CPU time from above (a preemption counts in it).
  std::int64_t overheadP50Ns = 0;
  std::int64_t overheadP99Ns = 0;  ///< the same, 99th percentile
  std::int64_t overheadMaxNs = 0;  ///< the same, maximum
  /// A GPU: how far the logged GPU-side times (%globaltimer moved onto CLOCK_MONOTONIC) may be
  /// off, ns: half the tightest bracket of the offset's measurement at start (0 on the stand-in,
  /// whose stream stamps CLOCK_MONOTONIC itself). Compare a CPU time with a GPU-side time only
  /// to within this.
  std::int64_t clockOffsetErrorNs = 0;
};

/// The GPU engine's counters so far (all zero before a run that used CUDA submitters).
EngineStats engineStats();

}  // namespace tactus::cuda
