// The test "kernel" on the CUDA stand-in: a host function on the stream that spins for the given
// time and stamps CLOCK_MONOTONIC start and end (see gpu_work.hpp).
#include <cuda_runtime_api.h>
#include <time.h>

#include <new>

#include "gpu_work.hpp"

namespace tactus::gpuwork {

namespace {

std::int64_t nowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

struct Work {
  TraceSlot* slot;
  std::int64_t us;
};

void run(void* arg) {
  auto* w = static_cast<Work*>(arg);
  w->slot->startNs = nowNs();
  const std::int64_t end = w->slot->startNs + w->us * 1000;
  while (nowNs() < end) {
  }
  w->slot->endNs = nowNs();
}

}  // namespace

bool available(std::string& why) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    why = "the CUDA stand-in reports no device (TACTUS_CUDA_STANDIN_DEVICES)";
    return false;
  }
  return true;
}

TraceSlot* allocateSlots(std::size_t count) { return new (std::nothrow) TraceSlot[count](); }

bool enqueue(cudaStream_t stream, std::int64_t us, TraceSlot* slot) {
  // One Work per slot, stored beside it: slots are never reused within a run.
  static thread_local Work* pool = nullptr;
  static thread_local std::size_t used = 0;
  if (pool == nullptr || used == 4096) {
    pool = new Work[4096];
    used = 0;
  }
  Work* w = &pool[used++];
  w->slot = slot;
  w->us = us;
  return cudaLaunchHostFunc(stream, run, w) == cudaSuccess;
}

bool createStream(cudaStream_t* stream, bool nonBlocking) {
  return cudaStreamCreateWithFlags(stream, nonBlocking ? cudaStreamNonBlocking : cudaStreamDefault) == cudaSuccess;
}

void destroyStream(cudaStream_t stream) { cudaStreamDestroy(stream); }

long long syncCallsOnSubmitThreads() {
  return static_cast<long long>(tactusCudaStandinGetStats().syncCallsOnSubmitThreads);
}

const char* clockName() { return "monotonic"; }

}  // namespace tactus::gpuwork
