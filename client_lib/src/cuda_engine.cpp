// The GPU engine over the CUDA runtime API and three driver calls taken through
// cudaGetDriverEntryPoint (so libtactus links only the runtime): streams wait on 64-bit fences in
// the run's shared memory (cuStreamWaitValue64, geq) and the GPU signals its own start and
// completion (cuStreamWriteValue64); the segment is registered with the device
// (cuMemHostRegister). A submitter never waits, and no host callback is queued: the client's GPU
// worker watches the fences for the event log and the master. Compiled against the real CUDA runtime for
// libtactus, and against the host stand-in (client_lib/standin) for the tests, so this very code
// is what CI runs.
#include "cuda_engine.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if !defined(TACTUS_CUDA_STANDIN)
#include <cuda.h>  // only for the constants checked below; the driver is not linked
#endif

#include "fence_wait.hpp"
#include "queue_engine.hpp"
#include "tactus/core/text.hpp"
#include "tactus/cuda.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

namespace {

constexpr std::size_t kOverheadSamples = 1u << 16;

// The driver calls, with the driver's ABI (CUresult = int, CUdeviceptr = unsigned long long,
// CUstream = CUstream_st*), so no driver header reaches the engine's interface.
using DrvWaitValue64 = int (*)(CUstream_st*, unsigned long long, std::uint64_t, unsigned int);
using DrvWriteValue64 = int (*)(CUstream_st*, unsigned long long, std::uint64_t, unsigned int);
using DrvMemHostRegister = int (*)(void*, std::size_t, unsigned int);
using DrvMemHostUnregister = int (*)(void*);
using DrvMemHostGetDevicePointer = int (*)(unsigned long long*, void*, unsigned int);
using DrvDeviceGetAttribute = int (*)(int*, int, int);
using DrvGetErrorText = int (*)(int, const char**);
using DrvModuleLoadData = int (*)(void**, const void*);
using DrvModuleGetFunction = int (*)(void**, void*, const char*);
using DrvLaunchKernel = int (*)(void*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                                unsigned int, unsigned int, CUstream_st*, void**, void**);
// The stand-in's own: its stream's thread stores its clock at the first address, then the value.
using DrvStreamWriteClockValue64 = int (*)(CUstream_st*, unsigned long long, unsigned long long, std::uint64_t,
                                           unsigned int);

// The GPU-side time stamp: one thread stores %globaltimer + offset (CLOCK_MONOTONIC ns, the offset
// measured when the engine starts) at `out`, which lies in the registered segment. Loaded with
// cuModuleLoadData (the driver compiles it for the device), so libtactus needs no nvcc.
[[maybe_unused]] constexpr const char* kStampPtx = R"(.version 6.0
.target sm_60
.address_size 64
.visible .entry tactus_stamp(.param .u64 out, .param .u64 offset)
{
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [offset];
  mov.u64 %rd3, %globaltimer;
  add.s64 %rd4, %rd3, %rd2;
  st.volatile.global.u64 [%rd1], %rd4;
  membar.sys;
  ret;
}
)";
constexpr unsigned int kWaitGeq = 0;            // CU_STREAM_WAIT_VALUE_GEQ
constexpr unsigned int kWriteDefault = 0;       // CU_STREAM_WRITE_VALUE_DEFAULT
constexpr unsigned int kRegisterFlags = 1 | 2;  // CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP
constexpr int kAttr64BitMemOps = 122;           // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS
constexpr int kDrvAlreadyRegistered = 712;      // CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
#if !defined(TACTUS_CUDA_STANDIN)
static_assert(CU_STREAM_WAIT_VALUE_GEQ == kWaitGeq && CU_STREAM_WRITE_VALUE_DEFAULT == kWriteDefault);
static_assert((CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP) == kRegisterFlags);
static_assert(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS == kAttr64BitMemOps);
static_assert(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED == kDrvAlreadyRegistered);
static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long) && sizeof(CUresult) == sizeof(int));
#endif

/// The driver entry points the engine uses.
struct Driver {
  DrvWaitValue64 waitValue64 = nullptr;
  DrvWriteValue64 writeValue64 = nullptr;
  DrvMemHostRegister memHostRegister = nullptr;
  DrvMemHostUnregister memHostUnregister = nullptr;
  DrvMemHostGetDevicePointer memHostGetDevicePointer = nullptr;
  DrvDeviceGetAttribute deviceGetAttribute = nullptr;
  DrvModuleLoadData moduleLoadData = nullptr;
  DrvModuleGetFunction moduleGetFunction = nullptr;
  DrvLaunchKernel launchKernel = nullptr;
  DrvStreamWriteClockValue64 streamWriteClockValue64 = nullptr;  ///< the stand-in's (a GPU: kStampPtx)
  DrvGetErrorText getErrorName = nullptr;                        ///< optional: null where the driver lacks it
  DrvGetErrorText getErrorString = nullptr;                      ///< optional
};

// A driver call's failure as text: "CUDA_ERROR_INVALID_VALUE (invalid argument)", with the code
// where the driver cannot name it.
std::string driverError(const Driver& d, int rc) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.getErrorName != nullptr && d.getErrorName(rc, &name) != 0) name = nullptr;
  if (d.getErrorString != nullptr && d.getErrorString(rc, &text) != 0) text = nullptr;
  std::string out = name != nullptr ? std::string(name) : "CUresult " + std::to_string(rc);
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

std::mutex gStatsMutex;
cuda::EngineStats gStats;            // guarded by gStatsMutex
std::vector<std::int32_t> gSamples;  // guarded by gStatsMutex: every worker's overhead samples of the last run
std::atomic<std::uint64_t> gGpuEnds{0};
std::atomic<std::int64_t> gClockOffsetErrorNs{0};  // the latest engine's (EngineStats::clockOffsetErrorNs)

Error cudaFailure(const std::string& what, cudaError_t e) {
  return {ErrorCode::kIo, what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")"};
}

bool isDefaultStream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

// One driver function by name, through the runtime (CUDA 12 ABI of the symbol).
Result<void> entryPoint(const char* symbol, void** fn) {
#if defined(TACTUS_CUDA_STANDIN)
  const cudaError_t e = tactusCudaStandinDriverEntryPoint(symbol, fn);
#elif CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &status);
  if (e == cudaSuccess && status != cudaDriverEntryPointSuccess) *fn = nullptr;
#else
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e = cudaGetDriverEntryPoint(symbol, fn, cudaEnableDefault, &status);
  if (e == cudaSuccess && status != cudaDriverEntryPointSuccess) *fn = nullptr;
#endif
  if (e != cudaSuccess) return cudaFailure(std::string("cudaGetDriverEntryPoint(") + symbol + ")", e);
  if (*fn == nullptr)
    return fail(ErrorCode::kIo,
                std::string("cudaGetDriverEntryPoint(") + symbol + "): the driver has no such function");
  return {};
}

Result<Driver> loadDriver() {
  Driver d;
  const std::pair<const char*, void**> wanted[] = {
    {"cuStreamWaitValue64", reinterpret_cast<void**>(&d.waitValue64)},
    {"cuStreamWriteValue64", reinterpret_cast<void**>(&d.writeValue64)},
    {"cuMemHostRegister", reinterpret_cast<void**>(&d.memHostRegister)},
    {"cuMemHostUnregister", reinterpret_cast<void**>(&d.memHostUnregister)},
    {"cuMemHostGetDevicePointer", reinterpret_cast<void**>(&d.memHostGetDevicePointer)},
    {"cuDeviceGetAttribute", reinterpret_cast<void**>(&d.deviceGetAttribute)},
#if defined(TACTUS_CUDA_STANDIN)
    {"tactusStreamWriteClockValue64", reinterpret_cast<void**>(&d.streamWriteClockValue64)},
#else
    {"cuModuleLoadData", reinterpret_cast<void**>(&d.moduleLoadData)},
    {"cuModuleGetFunction", reinterpret_cast<void**>(&d.moduleGetFunction)},
    {"cuLaunchKernel", reinterpret_cast<void**>(&d.launchKernel)},
#endif
  };
  for (const auto& [name, slot] : wanted) {
    if (auto ok = entryPoint(name, slot); !ok) return ok.error();
  }
  // Only for messages: a driver without them still runs (failures then name the code).
  if (!entryPoint("cuGetErrorName", reinterpret_cast<void**>(&d.getErrorName))) d.getErrorName = nullptr;
  if (!entryPoint("cuGetErrorString", reinterpret_cast<void**>(&d.getErrorString))) d.getErrorString = nullptr;
  return d;
}

#if !defined(TACTUS_CUDA_STANDIN)
// CUDA's lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2) loads a kernel's
// module at its first launch, and that load may wait for the device to go idle. Under tactus a
// stream routinely waits on the GPU for a fence that CPU work after the launch will write (a
// submitter's kernel waits for another process's kernel, which is submitted after this client's
// next CPU runnable): the first launch then waits for the device, the device for the fence, the
// fence for the launch. Seen on an H100 (driver 580, CUDA 13): every submitter whose kernel
// waits on a later fence hung in its first launch. So libtactus asks for eager loading before
// the program's first CUDA call (the driver reads the variable once, at cuInit); a program that
// sets CUDA_MODULE_LOADING itself keeps its choice, and a lazy one is refused by the engine.
[[gnu::constructor]] void preferEagerModuleLoading() { ::setenv("CUDA_MODULE_LOADING", "EAGER", 0); }

using DrvModuleGetLoadingMode = int (*)(int*);
constexpr int kLazyLoading = 2;  // CU_MODULE_LAZY_LOADING
static_assert(CU_MODULE_LAZY_LOADING == kLazyLoading);

// "" when modules load eagerly, else why the engine cannot run.
std::string lazyLoadingProblem() {
  DrvModuleGetLoadingMode getMode = nullptr;
  if (!entryPoint("cuModuleGetLoadingMode", reinterpret_cast<void**>(&getMode))) return "";  // older driver: eager
  int mode = 0;
  if (getMode(&mode) != 0 || mode != kLazyLoading) return "";
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  return std::string("CUDA loads modules lazily here (CUDA_MODULE_LOADING=") + (env != nullptr ? env : "unset") +
         "): a submitter's first kernel launch can then wait for the device while the device waits for a tactus "
         "fence, which hangs the run; set CUDA_MODULE_LOADING=EAGER (libtactus sets it when the program has not, "
         "before its first CUDA call)";
}
#endif

}  // namespace

bool cudaEngineAvailable() { return true; }

Result<void> checkCudaStream(CUstream_st* stream, const std::string& what) {
  if (isDefaultStream(stream)) {
    return fail(ErrorCode::kBadParameter, what +
                                              ": the null, legacy or per-thread default stream cannot be scheduled "
                                              "(create one with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))");
  }
  unsigned int flags = 0;
  if (const cudaError_t e = cudaStreamGetFlags(stream, &flags); e != cudaSuccess) {
    return cudaFailure(what + ": cudaStreamGetFlags", e);
  }
  if ((flags & cudaStreamNonBlocking) == 0) {
    return fail(ErrorCode::kBadParameter, what +
                                              ": the stream is blocking (it synchronizes with the legacy default "
                                              "stream); create it with cudaStreamNonBlocking");
  }
  return {};
}

std::uint32_t deviceStreamLimit() {
  const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (env == nullptr || *env == '\0') return 8;
  const long v = std::strtol(env, nullptr, 10);
  return static_cast<std::uint32_t>(std::clamp(v, 1L, 32L));
}

// What the stream waits for before the submittee's work: an instance's fence reaching h + 1
// (or h for the previous iteration), as a device address.
struct FenceWait {
  InstanceId instance{};
  bool previousIteration = false;
  unsigned long long address = 0;
};

struct SubmitPlan {
  InstanceId submitter{};  // the submitter's instance
  InstanceId submittee{};  // its submittee's instance
  RunnableId runnable{};   // the submitter
  cudaStream_t stream = nullptr;
  ResourceId streamResource{};  // its resource in the schedule
  std::vector<FenceWait> waits;
  unsigned long long started = 0;  // device address of the submittee's `started`
  unsigned long long fence = 0;    // device address of the submittee's own fence
  unsigned long long times = 0;    // device address of the submittee's gpuTimesNs
};

struct CudaEngine::Impl {
  GpuSetup setup;
  Driver driver;
  IdVector<InstanceId, std::int32_t> planOf;  // per instance: index into plans (submitter instance), or -1
  IdVector<InstanceId, char> runsSubmittee;   // per instance
  std::vector<SubmitPlan> plans;
  IdVector<ResourceId, std::string> streamNames;  // per CUDA stream resource, for messages
  std::mutex failureMutex;
  std::string failure;                  // guarded by failureMutex: the first failed CUDA call of the run
  void* registered = nullptr;           // the segment, registered with the device
  unsigned long long deviceBase = 0;    // the segment's address on the device
  int device = 0;                       // the CUDA device of the run
  bool stamps = true;                   // GPU-side time stamps around each work ($TACTUS_GPU_STAMPS=0: off)
  void* stampFunction = nullptr;        // a GPU: kStampPtx's kernel
  std::int64_t clockOffsetNs = 0;       // a GPU: CLOCK_MONOTONIC - %globaltimer, measured in prepare()
  std::int64_t clockOffsetErrorNs = 0;  // a GPU: its uncertainty (half the best bracket)

#if !defined(TACTUS_CUDA_STANDIN)
  // A GPU: enqueues the time stamp kernel writing at device address `out` (see GpuSlot).
  int stamp(cudaStream_t stream, unsigned long long out) const {
    void* params[] = {&out, const_cast<std::int64_t*>(&clockOffsetNs)};
    return driver.launchKernel(stampFunction, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
  }
#endif

  // Enqueues, in stream order, the time stamp at `clock` (when stamps are on) and then `value`
  // at `word` (cuStreamWriteValue64). Returns 0, or the failed call's CUresult with `call`
  // naming it. The stand-in does both in one operation of its stream's thread (so stamps cost
  // its submitting thread nothing more); a GPU runs the stamp kernel, then the write.
  int stampAndWrite(cudaStream_t stream, unsigned long long clock, unsigned long long word, std::uint64_t value,
                    const char*& call) const {
    call = "cuStreamWriteValue64";
#if defined(TACTUS_CUDA_STANDIN)
    if (stamps) return driver.streamWriteClockValue64(stream, clock, word, value, kWriteDefault);
#else
    if (stamps) {
      if (const int rc = stamp(stream, clock); rc != 0) {
        call = "cuLaunchKernel of the GPU time stamp kernel";
        return rc;
      }
    }
#endif
    return driver.writeValue64(stream, word, value, kWriteDefault);
  }

  // A GPU: loads the stamp kernel and measures %globaltimer against CLOCK_MONOTONIC (cold): each
  // round brackets one stamp between two host clock reads around a stream synchronize; the
  // tightest bracket of 32 gives the offset, to within half its width.
  Result<void> prepareStamps(cudaStream_t stream, unsigned long long out, std::atomic<std::int64_t>& at) {
#if defined(TACTUS_CUDA_STANDIN)
    (void)stream;
    (void)out;
    (void)at;
    return {};
#else
    void* module = nullptr;
    if (const int rc = driver.moduleLoadData(&module, kStampPtx); rc != 0) {
      return fail(ErrorCode::kIo, "cuModuleLoadData of the GPU time stamp kernel failed: " + driverError(driver, rc));
    }
    if (const int rc = driver.moduleGetFunction(&stampFunction, module, "tactus_stamp"); rc != 0) {
      return fail(ErrorCode::kIo, "cuModuleGetFunction(tactus_stamp) failed: " + driverError(driver, rc));
    }
    std::int64_t best = INT64_MAX;
    // The stamp kernel adds clockOffsetNs: 0 while measuring, so every round reads the raw
    // %globaltimer (a round stamped with an earlier round's offset measured the difference of
    // two offsets; on an H100 that put GPU work up to 75 us before the CPU work it waited for).
    clockOffsetNs = 0;
    std::int64_t offset = 0;
    for (int round = 0; round < 32; ++round) {
      const std::int64_t t0 = ipc::monotonicNs();
      if (const int rc = stamp(stream, out); rc != 0) {
        return fail(ErrorCode::kIo, "cuLaunchKernel of the GPU time stamp kernel failed: " + driverError(driver, rc));
      }
      if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) {
        return cudaFailure("cudaStreamSynchronize after the GPU time stamp kernel", e);
      }
      const std::int64_t t1 = ipc::monotonicNs();
      const std::int64_t g = at.load(std::memory_order_acquire);
      if (t1 - t0 < best) {
        best = t1 - t0;
        clockOffsetErrorNs = best / 2;
        offset = t0 + (t1 - t0) / 2 - g;
      }
    }
    clockOffsetNs = offset;
    gClockOffsetErrorNs.store(clockOffsetErrorNs, std::memory_order_relaxed);
    at.store(0, std::memory_order_relaxed);
    return {};
#endif
  }

  unsigned long long deviceAddress(const void* p) const {
    const auto* base = reinterpret_cast<const std::byte*>(setup.view.bytes().data());
    return deviceBase + static_cast<unsigned long long>(static_cast<const std::byte*>(p) - base);
  }
  unsigned long long fenceAddress(InstanceId instance) const { return deviceAddress(&setup.view.gpu(instance).fence); }

  // A stream memory operation of submitter plan `p` failed (cold: the run stops): keeps the
  // first failure's message, naming the call, the submitter, its stream and CUDA's error.
  void recordFailure(const std::string& call, const SubmitPlan& p, std::uint64_t h, const std::string& error) {
    const Schedule& s = *setup.schedule;
    std::string what = call + " for CUDA submitter " + quoted(qualifiedName(s, p.runnable)) + " on stream " +
                       quoted(streamNames[p.streamResource]) + " (hyperepoch iteration " + std::to_string(h) +
                       ") failed: " + error + "; the stream's order can no longer be kept, so the run stops";
    const std::lock_guard<std::mutex> lock(failureMutex);
    if (failure.empty()) failure = std::move(what);
  }

  // The device must run 64-bit stream memory operations and see the segment.
  Result<void> attachDevice() {
    auto d = loadDriver();
    if (!d) return d.error();
    driver = *d;
#if !defined(TACTUS_CUDA_STANDIN)
    if (const std::string lazy = lazyLoadingProblem(); !lazy.empty()) return fail(ErrorCode::kInvalidState, lazy);
#endif
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cudaFailure("cudaGetDevice", e);
    // The driver calls below need the device's context current on this thread, whichever thread
    // created the streams.
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return cudaFailure("cudaSetDevice", e);
    int can = 0;
    if (const int rc = driver.deviceGetAttribute(&can, kAttr64BitMemOps, device); rc != 0) {
      return fail(ErrorCode::kIo,
                  "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) of CUDA device " +
                      std::to_string(device) + " failed: " + driverError(driver, rc));
    }
    if (can == 0) {
      return fail(ErrorCode::kInvalidState,
                  "CUDA device " + std::to_string(device) +
                      " cannot run 64-bit stream memory operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS "
                      "is 0); tactus orders GPU work with cuStreamWaitValue64/cuStreamWriteValue64, supported by "
                      "default since CUDA 12");
    }
    const std::span<std::byte> bytes = setup.view.bytes();
    // The mapping is whole pages (the segment starts on a page); register all of them.
    const auto page = static_cast<std::size_t>(std::max(4096L, ::sysconf(_SC_PAGESIZE)));
    const std::size_t length = (bytes.size() + page - 1) / page * page;
    const int rc = driver.memHostRegister(bytes.data(), length, kRegisterFlags);
    if (rc != 0 && rc != kDrvAlreadyRegistered) {
      return fail(ErrorCode::kIo, "cuMemHostRegister of the run's shared memory (" + std::to_string(length) +
                                      " bytes) failed: " + driverError(driver, rc));
    }
    if (rc == 0) registered = bytes.data();
    if (const int p = driver.memHostGetDevicePointer(&deviceBase, bytes.data(), 0); p != 0) {
      return fail(ErrorCode::kIo,
                  "cuMemHostGetDevicePointer of the run's shared memory failed: " + driverError(driver, p));
    }
    return {};
  }
};

CudaEngine::CudaEngine() = default;
CudaEngine::~CudaEngine() = default;

Result<void> CudaEngine::prepare(const GpuSetup& setup) {
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.setup = setup;
  const Schedule& s = *setup.schedule;
  const RunPlan& plan = *setup.plan;
  const auto n = static_cast<std::uint32_t>(s.instances.size());
  m.planOf.assign(n, -1);
  m.runsSubmittee.assign(n, 0);
  m.streamNames.assign(static_cast<std::uint32_t>(s.resources.size()), std::string());
  for (ResourceId r : s.resources.ids()) m.streamNames[r] = s.resources[r].name;

  const auto byRunnableFrame = instancesByRunnableFrame(s);
  auto streamOf = [&](InstanceId instance) -> ResourceId {
    for (const ResourceId res : s.instances[instance].resources) {
      if (s.resources[res].kind == ResourceKind::kCudaStream) return res;
    }
    return kNone;
  };
  for (InstanceId i : s.instances.ids()) {
    const RunnableInfo& r = s.runnables[s.instances[i].runnable];
    if (r.client != setup.clientIndex || r.kind != RunnableKind::kSubmitter) continue;
    if (!(*setup.submitters)[s.instances[i].runnable].registered) continue;
    SubmitPlan p;
    p.submitter = i;
    p.runnable = s.instances[i].runnable;
    p.submittee = instanceAt(byRunnableFrame, r.submits, s.instances[i].frame);
    if (p.submittee == kNone) continue;  // a submitter without a scheduled submittee runs as a plain call
    const ResourceId streamResource = streamOf(i);
    if (streamResource == kNone || setup.streams[streamResource] == nullptr) {
      return fail(
          ErrorCode::kInvalidState,
          "CUDA submitter '" + qualifiedName(s, p.runnable) + "' holds no registered CUDA stream" +
              (streamResource == kNone ? std::string()
                                       : " (register '" + s.resources[streamResource].name + "' with registerStream)"));
    }
    p.stream = setup.streams[streamResource];
    p.streamResource = streamResource;
    for (const WaitCondition& c : queueWaits(s, plan, byRunnableFrame, i, p.submittee, streamResource)) {
      p.waits.push_back({c.instance, c.previousIteration, 0});
    }
    m.runsSubmittee[p.submittee] = 1;
    m.planOf[i] = static_cast<std::int32_t>(m.plans.size());
    m.plans.push_back(std::move(p));
  }
  if (m.plans.empty()) return {};
  if (auto ok = m.attachDevice(); !ok) return ok.error();
  const char* stampsEnv = std::getenv("TACTUS_GPU_STAMPS");
  m.stamps = stampsEnv == nullptr || std::strcmp(stampsEnv, "0") != 0;
  if (m.stamps) {
    SubmitPlan& first = m.plans.front();
    std::atomic<std::int64_t>& at = setup.view.gpu(first.submittee).gpuTimesNs[0][0];
    if (auto ok = m.prepareStamps(first.stream, m.deviceAddress(&at), at); !ok) return ok.error();
  }
  for (SubmitPlan& p : m.plans) {
    for (FenceWait& w : p.waits) w.address = m.fenceAddress(w.instance);
    p.started = m.deviceAddress(&setup.view.gpu(p.submittee).started);
    p.fence = m.fenceAddress(p.submittee);
    p.times = m.deviceAddress(&setup.view.gpu(p.submittee).gpuTimesNs);
    shm::GpuSlot& slot = setup.view.gpu(p.submittee);
    for (auto& pair : slot.gpuTimesNs)
      for (auto& t : pair) t.store(0, std::memory_order_relaxed);
    slot.eventCount = 0;
    slot.ownerPid = static_cast<std::uint32_t>(::getpid());
    slot.mode.store(static_cast<std::uint32_t>(shm::GpuMode::kFences), std::memory_order_release);
  }
  return {};
}

bool CudaEngine::bindThread() {
  if (!impl_ || impl_->plans.empty()) return true;
  if (const cudaError_t e = cudaSetDevice(impl_->device); e != cudaSuccess) {
    const std::lock_guard<std::mutex> lock(impl_->failureMutex);
    if (impl_->failure.empty()) {
      impl_->failure = "cudaSetDevice(" + std::to_string(impl_->device) +
                       ") on a worker thread failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    }
    return false;
  }
  return true;
}

std::string CudaEngine::failure() const {
  if (!impl_) return {};
  const std::lock_guard<std::mutex> lock(impl_->failureMutex);
  return impl_->failure;
}

bool CudaEngine::runsSubmittee(InstanceId i) const { return impl_ && impl_->runsSubmittee[i] != 0; }
bool CudaEngine::runsSubmitter(InstanceId i) const { return impl_ && impl_->planOf[i] >= 0; }

bool CudaEngine::submissionSuffices(InstanceId i, InstanceId other) const {
  if (!impl_ || impl_->planOf[i] < 0 || impl_->runsSubmittee[other] == 0) return false;
  const Schedule& s = *impl_->setup.schedule;
  const InstanceInfo& inst = s.instances[i];
  if (std::find(inst.dependencies.begin(), inst.dependencies.end(), other) != inst.dependencies.end()) return false;
  const cudaStream_t mine = impl_->plans[static_cast<std::size_t>(impl_->planOf[i])].stream;
  for (const SubmitPlan& p : impl_->plans) {
    if (p.submittee == other) return p.stream == mine;
  }
  return false;
}

bool CudaEngine::submit(InstanceId i, std::uint64_t h, const std::function<bool()>& /*abort*/, GpuWorkerStats& stats,
                        std::int64_t& bodyStartNs, std::int64_t& bodyEndNs) {
  Impl& m = *impl_;
  SubmitPlan& p = m.plans[static_cast<std::size_t>(m.planOf[i])];
  const std::int64_t t0 = ipc::monotonicNs();
  // 1. On the GPU: the stream waits for every predecessor's fence, however late the work that
  //    signals it is submitted. The CPU waits for nothing here.
  for (const FenceWait& w : p.waits) {
    const std::uint64_t target = w.previousIteration ? h : h + 1;
    if (target == 0) continue;  // the previous iteration of the first one: nothing to wait for
    if (const int rc = m.driver.waitValue64(p.stream, w.address, target, kWaitGeq); rc != 0) {
      m.recordFailure("cuStreamWaitValue64", p, h, driverError(m.driver, rc));
      return false;
    }
    ++stats.streamWaits;
  }
  const unsigned long long times = p.times + (h % 2) * 2 * sizeof(std::int64_t);  // gpuTimesNs[h % 2]
  const char* call = nullptr;
  if (const int rc = m.stampAndWrite(p.stream, times, p.started, h + 1, call); rc != 0) {
    m.recordFailure(std::string(call) + " (the work's start)", p, h, driverError(m.driver, rc));
    return false;
  }
  // 2. The user's submitter enqueues the submittee's work.
  bodyStartNs = ipc::monotonicNs();
  (*m.setup.submitters)[p.runnable].call(p.stream);
  bodyEndNs = ipc::monotonicNs();
  // 3. Completion: the GPU writes the fence after the work; `submitted` lets the next submitter
  //    of this stream enqueue behind it.
  if (const int rc = m.stampAndWrite(p.stream, times + sizeof(std::int64_t), p.fence, h + 1, call); rc != 0) {
    // The work is queued but its completion will never be signalled: nothing may follow it.
    m.recordFailure(std::string(call) + " (the work's fence)", p, h, driverError(m.driver, rc));
    return false;
  }
  shm::GpuSlot& slot = m.setup.view.gpu(p.submittee);
  ipc::publishSequence(slot.submitted, slot.waiters, static_cast<std::uint32_t>(h + 1));
  const std::int64_t t3 = ipc::monotonicNs();
  ++stats.submissions;
  if (!stats.overheadNs.empty()) {
    const std::int64_t overhead = (bodyStartNs - t0) + (t3 - bodyEndNs);
    stats.overheadNs[stats.samples % stats.overheadNs.size()] =
        static_cast<std::int32_t>(std::min<std::int64_t>(overhead, INT32_MAX));
    ++stats.samples;
  }
  return true;
}

bool CudaEngine::observe(InstanceId i, std::uint64_t h, const std::function<bool()>& abort, std::int64_t spinNs,
                         std::int64_t& startNs, std::int64_t& endNs) {
  const shm::GpuSlot& slot = impl_->setup.view.gpu(i);
  if (!waitForFence(slot.started, h + 1, spinNs, abort)) return false;
  startNs = ipc::monotonicNs();
  if (!waitForFence(slot.fence, h + 1, spinNs, abort)) return false;
  endNs = ipc::monotonicNs();
  // The stream stamped the work's start and end before it wrote `started` and `fence`: those
  // are the logged times. The times this worker saw the fences are kept only where a stamp is
  // missing or implausible (after the fence was seen, or end before start).
  const auto& stamps = slot.gpuTimesNs[h % 2];
  const std::int64_t gpuStart = stamps[0].load(std::memory_order_acquire);
  const std::int64_t gpuEnd = stamps[1].load(std::memory_order_acquire);
  if (gpuStart > 0 && gpuStart <= gpuEnd && gpuEnd <= endNs + impl_->clockOffsetErrorNs) {
    startNs = gpuStart;
    endNs = gpuEnd;
  }
  gGpuEnds.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void CudaEngine::finish(bool clean) {
  if (impl_ && clean) {
    // Cold path, on the enterScheduler thread after every worker stopped: let queued work run
    // before the registration it writes through goes away.
    for (const SubmitPlan& p : impl_->plans) {
      if (const cudaError_t e = cudaStreamSynchronize(p.stream); e != cudaSuccess) {
        std::fprintf(stderr, "tactus: cudaStreamSynchronize of stream %s after the run failed: %s (%s)\n",
                     quoted(impl_->streamNames[p.streamResource]).c_str(), cudaGetErrorName(e), cudaGetErrorString(e));
      }
    }
    if (impl_->registered != nullptr) {
      if (const int rc = impl_->driver.memHostUnregister(impl_->registered); rc != 0) {
        std::fprintf(stderr, "tactus: cuMemHostUnregister of the run's shared memory failed: %s\n",
                     driverError(impl_->driver, rc).c_str());
      }
    }
  } else if (impl_) {
    // A failed run may leave work queued behind fences that will never be reached: keep the
    // engine (and the registration) alive rather than unregister memory a stream may still
    // write. It stays reachable from a process-wide list that is never destroyed (kept on
    // purpose, so neither exit nor LeakSanitizer frees or reports them).
    static std::mutex abandonedMutex;
    static auto* abandoned = new std::vector<std::unique_ptr<Impl>>();
    const std::lock_guard<std::mutex> keep(abandonedMutex);
    abandoned->push_back(std::move(impl_));
  }
}

void publishEngineStats(const std::vector<GpuWorkerStats*>& workers) {
  std::lock_guard<std::mutex> lock(gStatsMutex);
  gStats = {};
  gSamples.clear();
  for (const GpuWorkerStats* w : workers) {
    gStats.submissions += w->submissions;
    gStats.streamWaits += w->streamWaits;
    const std::size_t have = std::min<std::uint64_t>(w->samples, w->overheadNs.size());
    gSamples.insert(gSamples.end(), w->overheadNs.begin(), w->overheadNs.begin() + static_cast<std::ptrdiff_t>(have));
  }
}

}  // namespace tactus::client

namespace tactus::cuda {

EngineStats engineStats() {
  std::lock_guard<std::mutex> lock(client::gStatsMutex);
  EngineStats s = client::gStats;
  s.gpuEnds = client::gGpuEnds.load();
  s.clockOffsetErrorNs = client::gClockOffsetErrorNs.load(std::memory_order_relaxed);
  std::vector<std::int32_t> v = client::gSamples;
  s.overheadSamples = v.size();
  if (!v.empty()) {
    std::sort(v.begin(), v.end());
    s.overheadP50Ns = v[v.size() / 2];
    s.overheadP99Ns = v[std::min(v.size() - 1, v.size() * 99 / 100)];
    s.overheadMaxNs = v.back();
  }
  return s;
}

}  // namespace tactus::cuda

namespace tactus::client {
/// The sample capacity the client runtime gives each worker.
std::size_t gpuOverheadSampleCapacity() { return kOverheadSamples; }
}  // namespace tactus::client
