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

// One Work per trace slot, allocated with the slots: a slot is written once per run, so its Work
// is never reused while a host function may still read it, and nothing is allocated per launch
// (a pool per worker thread used to be dropped unfreed, which LeakSanitizer reports).
TraceSlot* gSlots = nullptr;
Work* gWorks = nullptr;
std::size_t gSlotCount = 0;

void run(void* arg) {
  auto* w = static_cast<Work*>(arg);
  w->slot->startNs = nowNs();
  const std::int64_t end = w->slot->startNs + w->us * 1000;
  while (nowNs() < end) {}
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

TraceSlot* allocateSlots(std::size_t count) {
  // One set of slots per process (the test client allocates them once); a second call replaces
  // nothing the first one's work may still use.
  if (gSlots != nullptr) return nullptr;
  auto* slots = new (std::nothrow) TraceSlot[count]();
  auto* works = new (std::nothrow) Work[count]();
  if (slots == nullptr || works == nullptr) {
    delete[] slots;
    delete[] works;
    return nullptr;
  }
  gSlots = slots;
  gWorks = works;
  gSlotCount = count;
  return slots;
}

bool enqueue(cudaStream_t stream, std::int64_t us, TraceSlot* slot) {
  if (gSlots == nullptr || slot < gSlots || slot >= gSlots + gSlotCount) return false;
  Work* w = &gWorks[slot - gSlots];
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

long long valueWaitsThatBlocked() { return static_cast<long long>(tactusCudaStandinGetStats().valueWaitsThatBlocked); }

const char* clockName() { return "monotonic"; }

}  // namespace tactus::gpuwork
