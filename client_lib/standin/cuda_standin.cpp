// STAND-IN, NOT CUDA: the host-only implementation of the CUDA runtime subset declared in
// standin/include/cuda_runtime_api.h. A stream is a thread that executes its queued operations
// in order (host functions, event records, event waits); events live in a shared-memory table
// (/dev/shm/<$TACTUS_CUDA_STANDIN_TABLE or tactus_cuda_standin>) so that IPC handles opened in
// another process name the same event; the driver's 64-bit stream memory operations wait for and
// write a counter in (shared) host memory from the stream's thread. Used only by tests and
// benchmarks.
#include "cuda_runtime_api.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"

namespace {

using tactus::shm::sequenceReached;

constexpr std::uint32_t kTableSlots = 16384;
constexpr std::uint32_t kHandleMagic = 0x45534354;  // "TCSE"
constexpr std::int64_t kStreamSpinNs = 5'000;       // a stream thread spins this long before sleeping
// An idle stream thread sleeps at most this long before it looks at its queue again: enqueueing
// makes no system call (a GPU's doorbell is a memory write; a futex wake per enqueue cost the
// submitting thread 3-4 us of its ~4 us per submitter on a loaded 2-core machine).
constexpr std::int64_t kStreamIdlePollNs = 100'000;

// One event in the shared table; 32-bit counters (futex words) compared with wrap-around.
struct EventCell {
  std::atomic<std::uint32_t> recorded;   // records issued (cudaEventRecord calls)
  std::atomic<std::uint32_t> completed;  // the highest record ticket that has executed
  std::atomic<std::uint32_t> waiters;    // stream threads sleeping on `completed`
  std::uint32_t reserved;
};
static_assert(sizeof(EventCell) == 16);

struct Table {
  std::atomic<std::uint32_t> next;  // allocation cursor (cell 0 is this header)
  std::uint32_t reserved[3];
  EventCell cells[kTableSlots];
};

Table* table() {
  static Table* t = [] {
    const char* env = std::getenv("TACTUS_CUDA_STANDIN_TABLE");
    const std::string name = std::string("/") + (env != nullptr && *env != '\0' ? env : "tactus_cuda_standin");
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0) return static_cast<Table*>(nullptr);
    if (::ftruncate(fd, sizeof(Table)) != 0) {
      ::close(fd);
      return static_cast<Table*>(nullptr);
    }
    void* p = ::mmap(nullptr, sizeof(Table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    return p == MAP_FAILED ? static_cast<Table*>(nullptr) : static_cast<Table*>(p);
  }();
  return t;
}

struct Stats {
  std::atomic<unsigned long long> syncCalls{0}, syncOnSubmit{0}, hostFunctions{0}, streamWaits{0}, blocked{0},
      records{0}, valueWaits{0}, valueBlocked{0}, valueWrites{0};
} gStats;

thread_local bool tEnqueued = false;  // this thread has queued work on a stream

void countSync() {
  gStats.syncCalls.fetch_add(1, std::memory_order_relaxed);
  if (tEnqueued) gStats.syncOnSubmit.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

struct CUevent_st {
  EventCell* cell = nullptr;
  std::uint32_t index = 0;
  unsigned int flags = 0;
  bool opened = false;  // opened from an IPC handle (not owned)
};

namespace {

enum class OpKind { kHost, kRecord, kWait, kMarker, kWaitValue, kWriteValue, kWriteClock };
constexpr std::int64_t kValuePollNs = 20'000;  // a stream waiting for a counter polls this often once it sleeps

struct Op {
  OpKind kind = OpKind::kHost;
  cudaHostFn_t fn = nullptr;
  void* arg = nullptr;
  EventCell* cell = nullptr;
  std::uint32_t ticket = 0;
  std::atomic<std::uint32_t>* marker = nullptr;
  std::atomic<std::uint64_t>* counter = nullptr;  // kWaitValue / kWriteValue / kWriteClock
  std::atomic<std::int64_t>* clock = nullptr;     // kWriteClock: where the stream's time goes first
  std::uint64_t value = 0;
};

}  // namespace

struct CUstream_st {
  unsigned int flags = 0;
  std::mutex mutex;
  std::vector<Op> queue;                 // guarded by mutex
  std::atomic<std::uint32_t> posted{0};  // bumped on every enqueue; the idle thread sleeps on it (destroy wakes it)
  std::atomic<bool> stop{false};
  std::thread thread;

  void push(const Op& op) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(op);
    }
    tEnqueued = true;
    posted.fetch_add(1, std::memory_order_seq_cst);
  }

  void run() {
    std::vector<Op> batch;
    for (;;) {
      const std::uint32_t seen = posted.load(std::memory_order_seq_cst);
      {
        std::lock_guard<std::mutex> lock(mutex);
        batch.swap(queue);
      }
      for (const Op& op : batch) execute(op, stop);
      const bool had = !batch.empty();
      batch.clear();
      if (had) continue;
      if (stop.load()) return;
      const std::int64_t spinEnd = tactus::ipc::monotonicNs() + kStreamSpinNs;
      bool changed = false;
      while (tactus::ipc::monotonicNs() < spinEnd) {
        if (posted.load(std::memory_order_acquire) != seen) {
          changed = true;
          break;
        }
        tactus::ipc::cpuRelax();
      }
      if (changed) continue;
      if (posted.load(std::memory_order_seq_cst) == seen && !stop.load())
        tactus::ipc::futexWait(posted, seen, kStreamIdlePollNs);
    }
  }

  static void execute(const Op& op, const std::atomic<bool>& stop) {
    switch (op.kind) {
      case OpKind::kWaitValue: {
        // As the GPU's front end: nothing queued behind it runs until the counter is reached.
        // Spin briefly, then poll (a counter written by a GPU wakes no one); a destroyed stream
        // gives up, so a run that ended early does not hang its exit.
        if (op.counter->load(std::memory_order_acquire) >= op.value) break;
        gStats.valueBlocked.fetch_add(1, std::memory_order_relaxed);
        const std::int64_t spinEnd = tactus::ipc::monotonicNs() + kStreamSpinNs;
        while (op.counter->load(std::memory_order_acquire) < op.value) {
          if (tactus::ipc::monotonicNs() < spinEnd) {
            tactus::ipc::cpuRelax();
            continue;
          }
          if (stop.load()) break;
          tactus::ipc::sleepUntilNs(tactus::ipc::monotonicNs() + kValuePollNs, 0);
        }
        break;
      }
      case OpKind::kWriteValue: op.counter->store(op.value, std::memory_order_release); break;
      case OpKind::kWriteClock:
        op.clock->store(tactus::ipc::monotonicNs(), std::memory_order_relaxed);
        op.counter->store(op.value, std::memory_order_release);  // publishes the stamp too
        break;
      case OpKind::kHost:
        op.fn(op.arg);
        gStats.hostFunctions.fetch_add(1, std::memory_order_relaxed);
        break;
      case OpKind::kRecord: {
        std::uint32_t cur = op.cell->completed.load();
        while (!sequenceReached(cur, op.ticket) && !op.cell->completed.compare_exchange_weak(cur, op.ticket)) {}
        if (op.cell->waiters.load() != 0) tactus::ipc::futexWake(op.cell->completed);
        break;
      }
      case OpKind::kWait: {
        if (sequenceReached(op.cell->completed.load(std::memory_order_acquire), op.ticket)) break;
        gStats.blocked.fetch_add(1, std::memory_order_relaxed);
        for (;;) {
          op.cell->waiters.fetch_add(1);
          const std::uint32_t c = op.cell->completed.load();
          if (!sequenceReached(c, op.ticket)) tactus::ipc::futexWait(op.cell->completed, c, 10'000'000);
          op.cell->waiters.fetch_sub(1);
          if (sequenceReached(op.cell->completed.load(std::memory_order_acquire), op.ticket)) break;
        }
        break;
      }
      case OpKind::kMarker:
        op.marker->store(1);
        tactus::ipc::futexWake(*op.marker);
        break;
    }
  }
};

namespace {

int deviceCount() {
  const char* env = std::getenv("TACTUS_CUDA_STANDIN_DEVICES");
  if (env == nullptr || *env == '\0') return 1;
  return std::atoi(env);
}

bool special(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

thread_local int tDevice = 0;

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = deviceCount();
  return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = tDevice;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= deviceCount()) return cudaErrorInvalidDevice;
  tDevice = device;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  if (deviceCount() <= 0) return cudaErrorNoDevice;
  auto* s = new (std::nothrow) CUstream_st;
  if (s == nullptr) return cudaErrorMemoryAllocation;
  s->flags = flags;
  s->thread = std::thread([s] { s->run(); });
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (special(stream)) return cudaErrorInvalidResourceHandle;
  stream->stop.store(true);
  stream->posted.fetch_add(1);
  tactus::ipc::futexWake(stream->posted);
  stream->thread.join();
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  if (flags == nullptr) return cudaErrorInvalidValue;
  *flags = special(stream) ? cudaStreamDefault : stream->flags;  // the default streams are blocking
  return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t, int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  if (special(stream) || event == nullptr) return cudaErrorInvalidResourceHandle;
  gStats.streamWaits.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t target = event->cell->recorded.load(std::memory_order_acquire);
  if (target == 0) return cudaSuccess;  // never recorded: nothing to wait for (as in CUDA)
  Op op;
  op.kind = OpKind::kWait;
  op.cell = event->cell;
  op.ticket = target;
  stream->push(op);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  countSync();
  if (special(stream)) return cudaSuccess;
  std::atomic<std::uint32_t> done{0};
  Op op;
  op.kind = OpKind::kMarker;
  op.marker = &done;
  const bool before = tEnqueued;
  stream->push(op);
  tEnqueued = before;  // a synchronize is not a submission
  while (done.load() == 0) tactus::ipc::futexWait(done, 0, 10'000'000);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (special(stream)) return cudaErrorInvalidResourceHandle;  // the stand-in has no default stream
  if (fn == nullptr) return cudaErrorInvalidValue;
  Op op;
  op.kind = OpKind::kHost;
  op.fn = fn;
  op.arg = userData;
  stream->push(op);
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return cudaErrorInvalidValue;
  if ((flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0) return cudaErrorInvalidValue;
  Table* t = table();
  if (t == nullptr) return cudaErrorMemoryAllocation;
  auto* e = new (std::nothrow) CUevent_st;
  if (e == nullptr) return cudaErrorMemoryAllocation;
  e->index = t->next.fetch_add(1) % kTableSlots;
  e->cell = &t->cells[e->index];
  // A reused cell starts from where it is: waits compare against `recorded` at call time.
  e->cell->completed.store(e->cell->recorded.load());
  e->flags = flags;
  *event = e;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr || special(stream)) return cudaErrorInvalidResourceHandle;
  gStats.records.fetch_add(1, std::memory_order_relaxed);
  Op op;
  op.kind = OpKind::kRecord;
  op.cell = event->cell;
  op.ticket = event->cell->recorded.fetch_add(1) + 1;
  stream->push(op);
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  countSync();
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  return sequenceReached(event->cell->completed.load(), event->cell->recorded.load()) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  countSync();
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  const std::uint32_t target = event->cell->recorded.load();
  while (!sequenceReached(event->cell->completed.load(), target)) {
    event->cell->waiters.fetch_add(1);
    const std::uint32_t c = event->cell->completed.load();
    if (!sequenceReached(c, target)) tactus::ipc::futexWait(event->cell->completed, c, 10'000'000);
    event->cell->waiters.fetch_sub(1);
  }
  return cudaSuccess;
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  if (handle == nullptr || event == nullptr) return cudaErrorInvalidValue;
  if ((event->flags & cudaEventInterprocess) == 0) return cudaErrorInvalidResourceHandle;
  std::memset(handle, 0, sizeof *handle);
  const std::uint32_t words[2] = {kHandleMagic, event->index};
  std::memcpy(handle->reserved, words, sizeof words);
  return cudaSuccess;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  if (event == nullptr) return cudaErrorInvalidValue;
  std::uint32_t words[2];
  std::memcpy(words, handle.reserved, sizeof words);
  if (words[0] != kHandleMagic || words[1] >= kTableSlots) return cudaErrorInvalidResourceHandle;
  Table* t = table();
  if (t == nullptr) return cudaErrorMemoryAllocation;
  auto* e = new (std::nothrow) CUevent_st;
  if (e == nullptr) return cudaErrorMemoryAllocation;
  e->index = words[1];
  e->cell = &t->cells[e->index];
  e->flags = cudaEventInterprocess | cudaEventDisableTiming;
  e->opened = true;
  *event = e;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  countSync();
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) { return cudaGetErrorName(error); }

tactusCudaStandinStats tactusCudaStandinGetStats(void) {
  tactusCudaStandinStats s{};
  s.syncCalls = gStats.syncCalls.load();
  s.syncCallsOnSubmitThreads = gStats.syncOnSubmit.load();
  s.hostFunctions = gStats.hostFunctions.load();
  s.streamWaits = gStats.streamWaits.load();
  s.streamWaitsThatBlocked = gStats.blocked.load();
  s.records = gStats.records.load();
  s.valueWaits = gStats.valueWaits.load();
  s.valueWaitsThatBlocked = gStats.valueBlocked.load();
  s.valueWrites = gStats.valueWrites.load();
  return s;
}

}  // extern "C"

namespace {

// The driver functions, with the driver's signatures (CUresult = int, CUdeviceptr = unsigned
// long long, CUstream = CUstream_st*).
constexpr int kDrvSuccess = 0, kDrvInvalidValue = 1;
constexpr int kAttr64BitStreamMemOps = 122;  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS

// $TACTUS_CUDA_STANDIN_FAIL=<driver function>[@<n>]: that function fails with
// CUDA_ERROR_INVALID_VALUE from its (n+1)-th call on (n = 0 without @), so tests see how the
// engine reports a failed driver call. Read once.
struct InjectedFailure {
  std::string symbol;
  std::uint64_t after = 0;
  std::atomic<std::uint64_t> calls{0};
};
InjectedFailure& injected() {
  static auto* f = [] {
    auto* out = new InjectedFailure();  // never destroyed: streams may call at exit
    const char* env = std::getenv("TACTUS_CUDA_STANDIN_FAIL");
    if (env == nullptr) return out;
    const std::string v = env;
    const auto at = v.find('@');
    out->symbol = v.substr(0, at);
    if (at != std::string::npos) out->after = std::strtoull(v.c_str() + at + 1, nullptr, 10);
    return out;
  }();
  return *f;
}
// Whether this call of `symbol` is to fail.
bool failNow(const char* symbol) {
  InjectedFailure& f = injected();
  if (f.symbol.empty() || f.symbol != symbol) return false;
  return f.calls.fetch_add(1, std::memory_order_relaxed) >= f.after;
}

int drvStreamWaitValue64(CUstream_st* stream, unsigned long long addr, std::uint64_t value, unsigned int flags) {
  if (failNow("cuStreamWaitValue64")) return kDrvInvalidValue;
  if (special(stream) || addr == 0 || flags != 0) return kDrvInvalidValue;  // geq only
  gStats.valueWaits.fetch_add(1, std::memory_order_relaxed);
  Op op;
  op.kind = OpKind::kWaitValue;
  op.counter = reinterpret_cast<std::atomic<std::uint64_t>*>(addr);  // NOLINT(performance-no-int-to-ptr)
  op.value = value;
  stream->push(op);
  return kDrvSuccess;
}

int drvStreamWriteValue64(CUstream_st* stream, unsigned long long addr, std::uint64_t value, unsigned int flags) {
  if (failNow("cuStreamWriteValue64")) return kDrvInvalidValue;
  if (special(stream) || addr == 0 || flags != 0) return kDrvInvalidValue;
  gStats.valueWrites.fetch_add(1, std::memory_order_relaxed);
  Op op;
  op.kind = OpKind::kWriteValue;
  op.counter = reinterpret_cast<std::atomic<std::uint64_t>*>(addr);  // NOLINT(performance-no-int-to-ptr)
  op.value = value;
  stream->push(op);
  return kDrvSuccess;
}

// Stand-in only (on a GPU the engine runs its %globaltimer kernel, then cuStreamWriteValue64):
// in stream order, the stream's thread stores its CLOCK_MONOTONIC ns at `clock`, then `value` at
// `addr`. One operation, so the time stamp costs the submitting thread nothing more. Counted and
// failed (TACTUS_CUDA_STANDIN_FAIL) as cuStreamWriteValue64.
int drvStreamWriteClockValue64(CUstream_st* stream, unsigned long long clock, unsigned long long addr,
                               std::uint64_t value, unsigned int flags) {
  if (failNow("cuStreamWriteValue64")) return kDrvInvalidValue;
  if (special(stream) || clock == 0 || addr == 0 || flags != 0) return kDrvInvalidValue;
  gStats.valueWrites.fetch_add(1, std::memory_order_relaxed);
  Op op;
  op.kind = OpKind::kWriteClock;
  op.clock = reinterpret_cast<std::atomic<std::int64_t>*>(clock);    // NOLINT(performance-no-int-to-ptr)
  op.counter = reinterpret_cast<std::atomic<std::uint64_t>*>(addr);  // NOLINT(performance-no-int-to-ptr)
  op.value = value;
  stream->push(op);
  return kDrvSuccess;
}

int drvMemHostRegister(void* p, std::size_t bytes, unsigned int) {
  if (failNow("cuMemHostRegister")) return kDrvInvalidValue;
  return p != nullptr && bytes > 0 ? kDrvSuccess : kDrvInvalidValue;
}
int drvMemHostUnregister(void* p) {
  if (failNow("cuMemHostUnregister")) return kDrvInvalidValue;
  return p != nullptr ? kDrvSuccess : kDrvInvalidValue;
}
int drvMemHostGetDevicePointer(unsigned long long* dev, void* p, unsigned int) {
  if (failNow("cuMemHostGetDevicePointer") || dev == nullptr || p == nullptr) return kDrvInvalidValue;
  *dev = reinterpret_cast<std::uintptr_t>(p);
  return kDrvSuccess;
}
int drvDeviceGetAttribute(int* value, int attribute, int device) {
  if (failNow("cuDeviceGetAttribute") || value == nullptr || device < 0 || device >= deviceCount()) {
    return kDrvInvalidValue;
  }
  const char* off = std::getenv("TACTUS_CUDA_STANDIN_NO_MEMOPS");
  *value = attribute == kAttr64BitStreamMemOps && (off == nullptr || *off == '\0') ? 1 : 0;
  return kDrvSuccess;
}

// The driver's names and texts of the two codes the stand-in returns.
int drvGetErrorName(int rc, const char** out) {
  if (out == nullptr) return kDrvInvalidValue;
  if (rc == kDrvSuccess) *out = "CUDA_SUCCESS";
  else if (rc == kDrvInvalidValue) *out = "CUDA_ERROR_INVALID_VALUE";
  else return kDrvInvalidValue;
  return kDrvSuccess;
}
int drvGetErrorString(int rc, const char** out) {
  if (out == nullptr) return kDrvInvalidValue;
  if (rc == kDrvSuccess) *out = "no error";
  else if (rc == kDrvInvalidValue) *out = "invalid argument";
  else return kDrvInvalidValue;
  return kDrvSuccess;
}

}  // namespace

extern "C" cudaError_t tactusCudaStandinDriverEntryPoint(const char* symbol, void** funcPtr) {
  if (symbol == nullptr || funcPtr == nullptr) return cudaErrorInvalidValue;
  const std::string s = symbol;
  if (s == "cuStreamWaitValue64") *funcPtr = reinterpret_cast<void*>(&drvStreamWaitValue64);
  else if (s == "cuStreamWriteValue64") *funcPtr = reinterpret_cast<void*>(&drvStreamWriteValue64);
  else if (s == "cuMemHostRegister") *funcPtr = reinterpret_cast<void*>(&drvMemHostRegister);
  else if (s == "cuMemHostUnregister") *funcPtr = reinterpret_cast<void*>(&drvMemHostUnregister);
  else if (s == "cuMemHostGetDevicePointer") *funcPtr = reinterpret_cast<void*>(&drvMemHostGetDevicePointer);
  else if (s == "cuDeviceGetAttribute") *funcPtr = reinterpret_cast<void*>(&drvDeviceGetAttribute);
  else if (s == "tactusStreamWriteClockValue64") *funcPtr = reinterpret_cast<void*>(&drvStreamWriteClockValue64);
  else if (s == "cuGetErrorName") *funcPtr = reinterpret_cast<void*>(&drvGetErrorName);
  else if (s == "cuGetErrorString") *funcPtr = reinterpret_cast<void*>(&drvGetErrorString);
  else *funcPtr = nullptr;
  return *funcPtr != nullptr ? cudaSuccess : cudaErrorInvalidValue;
}
