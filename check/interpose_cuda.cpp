// The check library's interposers for STM's CUDA rules, on the CUDA runtime's exported functions
// (libcudart.so, or the stand-in in libtactus_standin.so): synchronizing calls (cuda-sync), work
// on the legacy default stream (default-stream), cudaMallocManaged (unified-memory) and
// asynchronous copies from pageable host memory (pageable-copy). The CUDA runtime's own work
// inside a call (its allocations, its ioctls) is the submitter's job and is not reported. The
// types are the runtime's ABI (pointers and ints), so no CUDA header is needed; a function the
// loaded runtime lacks answers cudaErrorNotSupported (801).
#include <cstddef>

#include "check_state.hpp"

#define TACTUS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using CudaError = int;
using Stream = void*;
using Event = void*;
constexpr CudaError kNotSupported = 801;

// The legacy default stream: 0 or cudaStreamLegacy (cudaStreamPerThread, 0x2, is not legacy).
bool legacyStream(Stream s) { return s == nullptr || s == reinterpret_cast<Stream>(0x1); }

// cudaPointerAttributes as CUDA 10+ lays it out: the memory type comes first.
struct PointerAttributes {
  int type;  // cudaMemoryType: 0 unregistered (pageable), 1 host (pinned), 2 device, 3 managed
  int device;
  void* devicePointer;
  void* hostPointer;
};
constexpr int kMemoryTypeUnregistered = 0;
constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
constexpr int kMemcpyDefault = 4;

// Resolves the runtime's next definition once, then calls it as the check library's own work.
#define TACTUS_CUDA_FORWARD(name, ...)                                                               \
  static decltype(&name) real = nullptr;                                                             \
  if (real == nullptr) real = reinterpret_cast<decltype(&name)>(::tactus::check::nextSymbol(#name)); \
  if (real == nullptr) return kNotSupported;                                                         \
  ::tactus::check::OwnWork own;                                                                      \
  return real(__VA_ARGS__)

// Whether `pointer` is pageable host memory (the runtime knows it as unregistered).
bool pageable(const void* pointer) {
  using Fn = CudaError (*)(PointerAttributes*, const void*);
  static Fn query = nullptr;
  if (query == nullptr) query = reinterpret_cast<Fn>(::tactus::check::nextSymbol("cudaPointerGetAttributes"));
  if (query == nullptr) return false;
  ::tactus::check::OwnWork own;
  PointerAttributes a{};
  if (query(&a, pointer) != 0) return true;  // older runtimes fail on pageable memory
  return a.type == kMemoryTypeUnregistered;
}

}  // namespace

TACTUS_EXPORT CudaError cudaDeviceSynchronize() {
  TACTUS_CHECK_NOTE(kCudaSync, kCudaDeviceSynchronize);
  TACTUS_CUDA_FORWARD(cudaDeviceSynchronize);
}

TACTUS_EXPORT CudaError cudaStreamSynchronize(Stream stream) {
  TACTUS_CHECK_NOTE(kCudaSync, kCudaStreamSynchronize);
  TACTUS_CUDA_FORWARD(cudaStreamSynchronize, stream);
}

TACTUS_EXPORT CudaError cudaEventSynchronize(Event event) {
  TACTUS_CHECK_NOTE(kCudaSync, kCudaEventSynchronize);
  TACTUS_CUDA_FORWARD(cudaEventSynchronize, event);
}

TACTUS_EXPORT CudaError cudaMallocManaged(void** pointer, std::size_t size, unsigned flags) {
  TACTUS_CHECK_NOTE(kUnifiedMemory, kCudaMallocManaged);
  TACTUS_CUDA_FORWARD(cudaMallocManaged, pointer, size, flags);
}

TACTUS_EXPORT CudaError cudaLaunchHostFunc(Stream stream, void (*fn)(void*), void* data) {
  if (legacyStream(stream)) TACTUS_CHECK_NOTE(kDefaultStream, kCudaLaunchHostFunc);
  TACTUS_CUDA_FORWARD(cudaLaunchHostFunc, stream, fn, data);
}

TACTUS_EXPORT CudaError cudaEventRecord(Event event, Stream stream) {
  if (legacyStream(stream)) TACTUS_CHECK_NOTE(kDefaultStream, kCudaEventRecord);
  TACTUS_CUDA_FORWARD(cudaEventRecord, event, stream);
}

TACTUS_EXPORT CudaError cudaStreamWaitEvent(Stream stream, Event event, unsigned flags) {
  if (legacyStream(stream)) TACTUS_CHECK_NOTE(kDefaultStream, kCudaStreamWaitEvent);
  TACTUS_CUDA_FORWARD(cudaStreamWaitEvent, stream, event, flags);
}

TACTUS_EXPORT CudaError cudaMemcpyAsync(void* destination, const void* source, std::size_t size, int kind,
                                        Stream stream) {
  if (::tactus::check::checking()) {
    if (legacyStream(stream)) TACTUS_CHECK_NOTE(kDefaultStream, kCudaMemcpyAsync);
    if (((kind == kMemcpyHostToDevice || kind == kMemcpyDefault) && pageable(source)) ||
        (kind == kMemcpyDeviceToHost && pageable(destination)))
      TACTUS_CHECK_NOTE(kPageableCopy, kCudaMemcpyAsync);
  }
  TACTUS_CUDA_FORWARD(cudaMemcpyAsync, destination, source, size, kind, stream);
}
