// The test "kernel" on a real GPU: a one-thread kernel that spins for the given time on the GPU's
// %globaltimer and stamps its start and end into mapped host memory (see gpu_work.hpp). The
// globaltimer is one clock for every process on a GPU, so stamps compare across processes.
#include <cuda_runtime.h>

#include "gpu_work.hpp"

namespace tactus::gpuwork {

namespace {

__device__ __forceinline__ long long globalTimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spinKernel(TraceSlot* slot, long long ns) {
  const long long start = globalTimer();
  slot->startNs = start;
  while (globalTimer() - start < ns) {}
  slot->endNs = globalTimer();
  __threadfence_system();
}

}  // namespace

bool available(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    why = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ", " + std::to_string(n) +
          " devices)";
    return false;
  }
  return true;
}

TraceSlot* allocateSlots(std::size_t count) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, count * sizeof(TraceSlot), cudaHostAllocMapped) != cudaSuccess) return nullptr;
  return static_cast<TraceSlot*>(p);
}

bool enqueue(cudaStream_t stream, std::int64_t us, TraceSlot* slot) {
  TraceSlot* device = nullptr;
  if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), slot, 0) != cudaSuccess) return false;
  spinKernel<<<1, 1, 0, stream>>>(device, static_cast<long long>(us) * 1000);
  return cudaGetLastError() == cudaSuccess;
}

bool createStream(cudaStream_t* stream, bool nonBlocking) {
  return cudaStreamCreateWithFlags(stream, nonBlocking ? cudaStreamNonBlocking : cudaStreamDefault) == cudaSuccess;
}

void destroyStream(cudaStream_t stream) { cudaStreamDestroy(stream); }

long long syncCallsOnSubmitThreads() { return -1; }

long long valueWaitsThatBlocked() { return -1; }

const char* clockName() { return "globaltimer"; }

}  // namespace tactus::gpuwork
