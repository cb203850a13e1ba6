// The "kernel" of the GPU test client and the GPU sample: work of a given length enqueued on a
// stream, which stamps its own start and end into a trace slot. Two implementations:
// gpu_work_standin.cpp (a host function on the CUDA stand-in; stamps are CLOCK_MONOTONIC) and
// gpu_work_kernel.cu (a real kernel; stamps are the GPU's %globaltimer, comparable across
// processes on one GPU).
#pragma once

#include <cstdint>
#include <string>

typedef struct CUstream_st* cudaStream_t;

namespace tactus::gpuwork {

/// Where one piece of work stamps its times.
struct TraceSlot {
  std::int64_t startNs;
  std::int64_t endNs;
  std::uint64_t iteration;
  std::uint32_t schedule;  ///< the identifier of the schedule whose submitter enqueued it
  char name[40];
};

/// Whether work can run here (a device exists); `why` says why not.
bool available(std::string& why);

/// `count` trace slots the work may write (host-visible memory; mapped for a real GPU).
TraceSlot* allocateSlots(std::size_t count);

/// Enqueues work of `us` microseconds on `stream` that stamps `slot` when it starts and ends.
/// Returns false when the launch failed.
bool enqueue(cudaStream_t stream, std::int64_t us, TraceSlot* slot);

/// Creates a non-blocking stream (false on failure) and destroys one.
bool createStream(cudaStream_t* stream, bool nonBlocking);
void destroyStream(cudaStream_t stream);

/// Synchronising calls made by threads that enqueued work (the stand-in counts them; -1 = unknown).
long long syncCallsOnSubmitThreads();

/// Fence waits (cuStreamWaitValue64) a stream had to block in: the counter was not reached when
/// the stream got to the wait (the stand-in counts them; -1 = unknown).
long long valueWaitsThatBlocked();

/// Which clock the stamps use ("monotonic" or "globaltimer").
const char* clockName();

}  // namespace tactus::gpuwork
