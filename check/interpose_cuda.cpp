// The check library's interposers for STM's CUDA rules, on the CUDA runtime's exported functions
// (libcudart.so, or the stand-in in libtactus_standin.so): synchronizing calls (cuda-sync), work
// on the legacy default stream (default-stream), cudaMallocManaged (unified-memory) and
// asynchronous copies from pageable host memory (pageable-copy). Calls into the runtime are a
// submitter's job, but what the runtime does inside a runnable's call (its allocations, locks,
// futex waits, ioctls) is reported as information (kind info, with the call it happened in).
// The types are the runtime's ABI (pointers and ints), so no CUDA header is needed; a function
// the loaded runtime lacks answers cudaErrorNotSupported (801).
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

// Resolves the runtime's next definition once, then calls it inside a CudaScope: what the
// runtime does meanwhile is reported as information when a runnable made the call.
#define TACTUS_CUDA_FORWARD(call, name, ...)                                                         \
  static decltype(&name) real = nullptr;                                                             \
  if (real == nullptr) real = reinterpret_cast<decltype(&name)>(::tactus::check::nextSymbol(#name)); \
  if (real == nullptr) return kNotSupported;                                                         \
  ::tactus::check::CudaScope scope(::tactus::CheckCall::call, __builtin_return_address(0));          \
  return real(__VA_ARGS__)

// Notes a violation of a CUDA rule by a runnable's own call (not the runtime calling itself).
#define TACTUS_CUDA_NOTE(kind, call)                                       \
  do {                                                                     \
    if (::tactus::check::tCudaContext == 0) TACTUS_CHECK_NOTE(kind, call); \
  } while (false)

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
  TACTUS_CUDA_NOTE(kCudaSync, kCudaDeviceSynchronize);
  TACTUS_CUDA_FORWARD(kCudaDeviceSynchronize, cudaDeviceSynchronize);
}

TACTUS_EXPORT CudaError cudaStreamSynchronize(Stream stream) {
  TACTUS_CUDA_NOTE(kCudaSync, kCudaStreamSynchronize);
  TACTUS_CUDA_FORWARD(kCudaStreamSynchronize, cudaStreamSynchronize, stream);
}

TACTUS_EXPORT CudaError cudaEventSynchronize(Event event) {
  TACTUS_CUDA_NOTE(kCudaSync, kCudaEventSynchronize);
  TACTUS_CUDA_FORWARD(kCudaEventSynchronize, cudaEventSynchronize, event);
}

TACTUS_EXPORT CudaError cudaMallocManaged(void** pointer, std::size_t size, unsigned flags) {
  TACTUS_CUDA_NOTE(kUnifiedMemory, kCudaMallocManaged);
  TACTUS_CUDA_FORWARD(kCudaMallocManaged, cudaMallocManaged, pointer, size, flags);
}

TACTUS_EXPORT CudaError cudaLaunchHostFunc(Stream stream, void (*fn)(void*), void* data) {
  if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaLaunchHostFunc);
  TACTUS_CUDA_FORWARD(kCudaLaunchHostFunc, cudaLaunchHostFunc, stream, fn, data);
}

TACTUS_EXPORT CudaError cudaEventRecord(Event event, Stream stream) {
  if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaEventRecord);
  TACTUS_CUDA_FORWARD(kCudaEventRecord, cudaEventRecord, event, stream);
}

TACTUS_EXPORT CudaError cudaStreamWaitEvent(Stream stream, Event event, unsigned flags) {
  if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaStreamWaitEvent);
  TACTUS_CUDA_FORWARD(kCudaStreamWaitEvent, cudaStreamWaitEvent, stream, event, flags);
}

TACTUS_EXPORT CudaError cudaMemcpyAsync(void* destination, const void* source, std::size_t size, int kind,
                                        Stream stream) {
  if (::tactus::check::checking() && ::tactus::check::tCudaContext == 0) {
    if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaMemcpyAsync);
    if (((kind == kMemcpyHostToDevice || kind == kMemcpyDefault) && pageable(source)) ||
        (kind == kMemcpyDeviceToHost && pageable(destination)))
      TACTUS_CUDA_NOTE(kPageableCopy, kCudaMemcpyAsync);
  }
  TACTUS_CUDA_FORWARD(kCudaMemcpyAsync, cudaMemcpyAsync, destination, source, size, kind, stream);
}

// Calls the CUDA rules allow (or, cudaMemcpy, forbid): their runtime work is information.
struct Dim3 {
  unsigned x, y, z;
};

TACTUS_EXPORT CudaError cudaLaunchKernel(const void* function, Dim3 grid, Dim3 block, void** args,
                                         std::size_t sharedBytes, Stream stream) {
  if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaLaunchKernel);
  TACTUS_CUDA_FORWARD(kCudaLaunchKernel, cudaLaunchKernel, function, grid, block, args, sharedBytes, stream);
}

TACTUS_EXPORT CudaError cudaMemsetAsync(void* pointer, int value, std::size_t size, Stream stream) {
  if (legacyStream(stream)) TACTUS_CUDA_NOTE(kDefaultStream, kCudaMemsetAsync);
  TACTUS_CUDA_FORWARD(kCudaMemsetAsync, cudaMemsetAsync, pointer, value, size, stream);
}

TACTUS_EXPORT CudaError cudaMemcpy(void* destination, const void* source, std::size_t size, int kind) {
  TACTUS_CUDA_NOTE(kCudaSync, kCudaMemcpy);  // synchronous: the host waits for the copy
  TACTUS_CUDA_FORWARD(kCudaMemcpy, cudaMemcpy, destination, source, size, kind);
}

TACTUS_EXPORT CudaError cudaMalloc(void** pointer, std::size_t size) {
  TACTUS_CUDA_FORWARD(kCudaMalloc, cudaMalloc, pointer, size);
}

TACTUS_EXPORT CudaError cudaFree(void* pointer) { TACTUS_CUDA_FORWARD(kCudaFree, cudaFree, pointer); }

TACTUS_EXPORT CudaError cudaMallocHost(void** pointer, std::size_t size) {
  TACTUS_CUDA_FORWARD(kCudaMallocHost, cudaMallocHost, pointer, size);
}

TACTUS_EXPORT CudaError cudaFreeHost(void* pointer) { TACTUS_CUDA_FORWARD(kCudaFreeHost, cudaFreeHost, pointer); }

TACTUS_EXPORT CudaError cudaEventQuery(Event event) { TACTUS_CUDA_FORWARD(kCudaEventQuery, cudaEventQuery, event); }

TACTUS_EXPORT CudaError cudaStreamQuery(Stream stream) {
  TACTUS_CUDA_FORWARD(kCudaStreamQuery, cudaStreamQuery, stream);
}
