/* STAND-IN, NOT CUDA: a host-only replacement for the few CUDA runtime functions that the
 * tactus CUDA engine calls (streams, events, host functions, IPC event handles), with CUDA's own
 * names, types and signatures. Tests and benchmarks compile the real engine source
 * (client_lib/src/cuda_engine.cpp) against this header and link libtactus_cuda_standin, so the
 * engine's ordering logic runs on machines without a GPU. A stream is a host thread executing its
 * queued operations in order; "kernels" are host functions; events live in a small shared-memory
 * table so handles work across processes. Never installed; never mixed with the real runtime. */
#ifndef TACTUS_CUDA_STANDIN_RUNTIME_API_H
#define TACTUS_CUDA_STANDIN_RUNTIME_API_H

#define TACTUS_CUDA_STANDIN 1

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The subset of CUDA's error codes the stand-in returns (same values as CUDA's). */
typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorUnknown = 999
} cudaError_t;

typedef struct CUstream_st* cudaStream_t; /**< as in CUDA's driver_types.h */
typedef struct CUevent_st* cudaEvent_t;   /**< as in CUDA's driver_types.h */
typedef void (*cudaHostFn_t)(void* userData);
/** An inter-process event handle: 64 opaque bytes, as in CUDA. */
typedef struct cudaIpcEventHandle_st {
  char reserved[64];
} cudaIpcEventHandle_t;

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04

/** Devices: $TACTUS_CUDA_STANDIN_DEVICES (default 1; 0 simulates a machine without a GPU). */
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
/** Waits for the stream's queued work, then ends its thread. */
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags);
cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device);
/** Work queued on `stream` after this call waits for the event's most recent record (at call time). */
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
/** Runs fn(userData) on the stream's thread, in stream order. */
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
/** Needs an event created with cudaEventInterprocess | cudaEventDisableTiming. */
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event);
cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle);
cudaError_t cudaDeviceSynchronize(void);
const char* cudaGetErrorName(cudaError_t error);

/** The driver entry points the engine takes (as cudaGetDriverEntryPoint gives them): `symbol` one
 * of cuStreamWaitValue64 (the stream's thread blocks until *addr >= value), cuStreamWriteValue64
 * (stores value at addr in stream order), cuMemHostRegister / cuMemHostUnregister (no-ops),
 * cuMemHostGetDevicePointer (the host address), cuDeviceGetAttribute (1 for
 * CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 122, unless
 * $TACTUS_CUDA_STANDIN_NO_MEMOPS is set), cuGetErrorName / cuGetErrorString, and the stand-in's
 * own tactusStreamWriteClockValue64(stream, clock, addr, value, flags): in stream order the
 * stream's thread stores its CLOCK_MONOTONIC ns (int64) at clock, then value at addr (the engine
 * runs its %globaltimer kernel and cuStreamWriteValue64 on a GPU). With
 * $TACTUS_CUDA_STANDIN_FAIL=<function>[@<n>] that function returns CUDA_ERROR_INVALID_VALUE from
 * its (n+1)-th call on. Their signatures are the driver's (CUresult = int,
 * CUdeviceptr = unsigned long long). Others: *funcPtr = NULL and cudaErrorInvalidValue. */
cudaError_t tactusCudaStandinDriverEntryPoint(const char* symbol, void** funcPtr);
const char* cudaGetErrorString(cudaError_t error);

/** Memory (cuda_standin_memory.cpp): every kind is host memory, remembered by kind so that
 * cudaPointerGetAttributes answers as CUDA does (pageable host memory is "unregistered"). */
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
/** As CUDA 10+ lays it out (the type first). */
struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
#define cudaMemAttachGlobal 0x01
cudaError_t cudaMalloc(void** pointer, size_t size);
cudaError_t cudaMallocHost(void** pointer, size_t size);
cudaError_t cudaMallocManaged(void** pointer, size_t size, unsigned int flags);
cudaError_t cudaFree(void* pointer);
cudaError_t cudaFreeHost(void* pointer);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* pointer);
/** Copies on the stream's thread, in stream order. */
cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t size, enum cudaMemcpyKind kind,
                            cudaStream_t stream);

/** Stand-in only: counters for tests and benchmarks. */
typedef struct tactusCudaStandinStats {
  unsigned long long syncCalls; /**< cudaStreamSynchronize/cudaEventSynchronize/cudaDeviceSynchronize/cudaEventQuery */
  unsigned long long syncCallsOnSubmitThreads; /**< of those, made by a thread that had enqueued work (a CPU worker) */
  unsigned long long hostFunctions;            /**< host functions run */
  unsigned long long streamWaits;              /**< cudaStreamWaitEvent calls */
  unsigned long long streamWaitsThatBlocked;   /**< waits a stream thread actually had to sleep in */
  unsigned long long records;                  /**< cudaEventRecord calls */
  unsigned long long valueWaits;               /**< cuStreamWaitValue64 calls */
  unsigned long long valueWaitsThatBlocked;    /**< of those, waits a stream thread had to poll in */
  unsigned long long valueWrites;              /**< cuStreamWriteValue64 calls */
} tactusCudaStandinStats;
/** Stand-in only: the counters of this process. */
tactusCudaStandinStats tactusCudaStandinGetStats(void);

#ifdef __cplusplus
}
#endif

#endif /* TACTUS_CUDA_STANDIN_RUNTIME_API_H */
