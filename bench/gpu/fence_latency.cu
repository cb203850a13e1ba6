// Real-GPU benchmark of issue 11: cross-process GPU-to-GPU ordering latency (end of kernel A on
// process X's stream to start of kernel B on process Y's stream, both read from %globaltimer) with
// an inter-process CUDA event against tactus's 64-bit fence in shared memory, plus the CPU time the
// submitting threads spend in their enqueue calls.
//
// This is a bare re-creation of the mechanism client_lib/src/cuda_engine.cpp uses (it does not
// drive the tactus runtime): a 64-bit counter in shared memory registered with cuMemHostRegister,
// written by X's stream with cuStreamWriteValue64 after kernel A and waited for by Y's stream with
// cuStreamWaitValue64 (geq) before kernel B; the driver calls come through
// cudaGetDriverEntryPoint, so the program links only the CUDA runtime. The reference is the same
// two kernels ordered by an inter-process event (cudaIpcGetEventHandle / cudaIpcOpenEventHandle,
// cudaEventRecord in X, cudaStreamWaitEvent in Y), in the same run.
//
// Usage: gpu-fence-latency [iterations]   (default 2000; X execs itself as Y with --peer)
// Per iteration X enqueues A (which spins 50 us on the GPU so that a blocking enqueue would show)
// and its signal, then tells Y through shared memory; Y enqueues its wait and B, then spins on B's
// start stamp in host memory. No thread calls a blocking CUDA function inside the measured loop.
// %globaltimer is one clock for every process on the GPU; its update interval is device-dependent
// (1 us on some GPUs), which bounds the resolution of the figures.
//
// Part 3, in X alone: the host side of the same fences, the hops tactus's CPU workers and GPU
// streams make. X enqueues on its stream a wait for a release word in registered host memory
// (cuStreamWaitValue64), kernel B and a write of an acknowledgement word (cuStreamWriteValue64);
// once the stream sits at the wait, X stamps CLOCK_MONOTONIC, writes the release word and spins
// on the acknowledgement. The round trip (CPU -> GPU -> CPU) is exact on one clock; its split into
// CPU -> GPU (release written -> B started) and GPU -> CPU (B started -> acknowledgement seen)
// puts %globaltimer on CLOCK_MONOTONIC as NTP does, taking the fastest trip each way as equal,
// so the split is an estimate and the round trip the measurement. Exit 77 without a CUDA device.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr long long kSpinNs = 50000;  // kernel A's time on the GPU
constexpr int kWarmup = 50;           // iterations per part not counted
constexpr int kMaxIterations = 1000000;
constexpr double kTimeoutS = 20.0;  // a peer that stops answering fails the run
constexpr int kEvent = 0;           // part 1: inter-process event
constexpr int kFence = 1;           // part 2: 64-bit fence with stream memory operations

// Driver ABI (CUresult = int, CUdeviceptr = unsigned long long), as in cuda_engine.cpp.
using DrvWaitValue64 = int (*)(cudaStream_t, unsigned long long, std::uint64_t, unsigned int);
using DrvWriteValue64 = int (*)(cudaStream_t, unsigned long long, std::uint64_t, unsigned int);
using DrvMemHostRegister = int (*)(void*, std::size_t, unsigned int);
using DrvMemHostGetDevicePointer = int (*)(unsigned long long*, void*, unsigned int);
using DrvDeviceGetAttribute = int (*)(int*, int, int);
constexpr unsigned int kWaitGeq = 0;            // CU_STREAM_WAIT_VALUE_GEQ
constexpr unsigned int kWriteDefault = 0;       // CU_STREAM_WRITE_VALUE_DEFAULT
constexpr unsigned int kRegisterFlags = 1 | 2;  // CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP
constexpr int kAttr64BitMemOps = 122;           // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS

struct Driver {
  DrvWaitValue64 waitValue64 = nullptr;
  DrvWriteValue64 writeValue64 = nullptr;
  DrvMemHostRegister memHostRegister = nullptr;
  DrvMemHostGetDevicePointer memHostGetDevicePointer = nullptr;
  DrvDeviceGetAttribute deviceGetAttribute = nullptr;
};

// The shared page both processes map; the sample arrays follow it.
struct alignas(4096) Header {
  alignas(64) std::uint64_t fence;               // written by X's stream, waited for by Y's stream
  alignas(64) std::atomic<std::int64_t> go;      // X: sequence number of the iteration submitted
  alignas(64) std::atomic<std::int64_t> done;    // Y: sequence number of the iteration whose B started
  alignas(64) std::atomic<std::int32_t> failed;  // either side: 1 after an error
  alignas(64) std::uint64_t release;             // part 3: written by X's CPU, waited for by X's stream
  alignas(64) std::uint64_t ack;                 // part 3: written by X's stream, spun on by X's CPU
  std::atomic<std::int32_t> handleReady;
  cudaIpcEventHandle_t handle;
};

// The arrays after the header, each [2][total] int64: A's end, B's start (ns of globaltimer) and
// the enqueue time of X and Y (ns of CLOCK_MONOTONIC); part 3's B starts (globaltimer, [total]).
struct Arrays {
  std::int64_t* aEnd;
  std::int64_t* bStart;
  std::int64_t* enqX;
  std::int64_t* enqY;
  std::int64_t* hostB;
};

constexpr std::size_t kArrays = 5;

std::size_t sharedBytes(int total) {
  const std::size_t bytes = sizeof(Header) + kArrays * 2 * static_cast<std::size_t>(total) * sizeof(std::int64_t);
  return (bytes + 4095) / 4096 * 4096;
}

Arrays arraysOf(void* base, int total) {
  auto* p = reinterpret_cast<std::int64_t*>(static_cast<char*>(base) + sizeof(Header));
  const std::size_t each = 2 * static_cast<std::size_t>(total);
  return {p, p + each, p + 2 * each, p + 3 * each, p + 4 * each};
}

[[noreturn]] void die(const char* who, const std::string& what, Header* h = nullptr) {
  std::fprintf(stderr, "gpu-fence-latency (%s): %s\n", who, what.c_str());
  if (h != nullptr) h->failed.store(1);
  std::exit(1);
}

void check(cudaError_t e, const char* call, const char* who, Header* h) {
  if (e != cudaSuccess)
    die(who, std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")", h);
}

void checkDrv(int rc, const char* call, const char* who, Header* h) {
  if (rc != 0) die(who, std::string(call) + " failed with CUresult " + std::to_string(rc), h);
}

std::int64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Spins until `value` reaches `want`, or fails the run when the peer failed or stopped answering.
void spinUntil(const std::atomic<std::int64_t>& value, std::int64_t want, const char* who, Header* h) {
  const std::int64_t deadline = nowNs() + static_cast<std::int64_t>(kTimeoutS * 1e9);
  while (value.load(std::memory_order_acquire) < want) {
    if (h->failed.load() != 0) die(who, "the other process failed");
    if (nowNs() > deadline) die(who, "the other process did not answer within 20 s", h);
  }
}

void entryPoint(const char* symbol, void** fn, const char* who, Header* h) {
  cudaDriverEntryPointQueryResult status{};
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &status);
#else
  const cudaError_t e = cudaGetDriverEntryPoint(symbol, fn, cudaEnableDefault, &status);
#endif
  check(e, symbol, who, h);
  if (status != cudaDriverEntryPointSuccess || *fn == nullptr) die(who, std::string(symbol) + ": not in the driver", h);
}

Driver loadDriver(const char* who, Header* h) {
  Driver d;
  entryPoint("cuStreamWaitValue64", reinterpret_cast<void**>(&d.waitValue64), who, h);
  entryPoint("cuStreamWriteValue64", reinterpret_cast<void**>(&d.writeValue64), who, h);
  entryPoint("cuMemHostRegister", reinterpret_cast<void**>(&d.memHostRegister), who, h);
  entryPoint("cuMemHostGetDevicePointer", reinterpret_cast<void**>(&d.memHostGetDevicePointer), who, h);
  entryPoint("cuDeviceGetAttribute", reinterpret_cast<void**>(&d.deviceGetAttribute), who, h);
  return d;
}

__device__ __forceinline__ long long globalTimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Kernel A: spins for `ns` on the GPU, then stamps its end.
__global__ void kernelA(long long* end, long long ns) {
  const long long start = globalTimer();
  while (globalTimer() - start < ns) {}
  *reinterpret_cast<volatile long long*>(end) = globalTimer();
  __threadfence_system();
}

// Kernel B: stamps its start.
__global__ void kernelB(long long* start) {
  *reinterpret_cast<volatile long long*>(start) = globalTimer();
  __threadfence_system();
}

// The state each process sets up: the shared memory registered with the device, its stream.
struct Side {
  const char* who;
  Header* header;
  Arrays host;
  Arrays device;
  unsigned long long fenceDevice;
  unsigned long long releaseDevice;
  unsigned long long ackDevice;
  cudaStream_t stream;
  Driver driver;
};

Side attach(const char* who, void* base, std::size_t bytes, int total) {
  Side s{who, static_cast<Header*>(base), arraysOf(base, total), {}, 0, 0, 0, nullptr, {}};
  check(cudaSetDevice(0), "cudaSetDevice", who, s.header);
  s.driver = loadDriver(who, s.header);
  int can = 0;
  checkDrv(s.driver.deviceGetAttribute(&can, kAttr64BitMemOps, 0), "cuDeviceGetAttribute", who, s.header);
  if (can == 0) die(who, "device 0 cannot run 64-bit stream memory operations", s.header);
  checkDrv(s.driver.memHostRegister(base, bytes, kRegisterFlags), "cuMemHostRegister", who, s.header);
  unsigned long long dev = 0;
  checkDrv(s.driver.memHostGetDevicePointer(&dev, base, 0), "cuMemHostGetDevicePointer", who, s.header);
  s.device = arraysOf(reinterpret_cast<void*>(static_cast<std::uintptr_t>(dev)), total);
  s.fenceDevice = dev + offsetof(Header, fence);
  s.releaseDevice = dev + offsetof(Header, release);
  s.ackDevice = dev + offsetof(Header, ack);
  check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", who, s.header);
  return s;
}

std::size_t slot(int part, int total, int i) {
  return static_cast<std::size_t>(part) * static_cast<std::size_t>(total) + static_cast<std::size_t>(i);
}

// Process Y: waits (on its stream) for X's signal, then runs kernel B.
int runPeer(int fd, int total) {
  const std::size_t bytes = sharedBytes(total);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) die("Y", std::string("mmap: ") + std::strerror(errno));
  Side s = attach("Y", base, bytes, total);
  Header* h = s.header;
  const std::int64_t handleDeadline = nowNs() + static_cast<std::int64_t>(kTimeoutS * 1e9);
  while (h->handleReady.load(std::memory_order_acquire) == 0) {
    if (h->failed.load() != 0) die("Y", "the other process failed");
    if (nowNs() > handleDeadline) die("Y", "no event handle from X within 20 s", h);
  }
  cudaEvent_t event = nullptr;
  check(cudaIpcOpenEventHandle(&event, h->handle), "cudaIpcOpenEventHandle", "Y", h);
  std::int64_t seq = 0;
  for (int part : {kEvent, kFence}) {
    for (int i = 0; i < total; ++i) {
      ++seq;
      spinUntil(h->go, seq, "Y", h);
      const std::size_t k = slot(part, total, i);
      const std::int64_t t0 = nowNs();
      if (part == kEvent) {
        check(cudaStreamWaitEvent(s.stream, event, 0), "cudaStreamWaitEvent", "Y", h);
      } else {
        checkDrv(s.driver.waitValue64(s.stream, s.fenceDevice, static_cast<std::uint64_t>(i) + 1, kWaitGeq),
                 "cuStreamWaitValue64", "Y", h);
      }
      kernelB<<<1, 1, 0, s.stream>>>(reinterpret_cast<long long*>(s.device.bStart + k));
      check(cudaGetLastError(), "kernelB launch", "Y", h);
      s.host.enqY[k] = nowNs() - t0;
      const std::int64_t deadline = nowNs() + static_cast<std::int64_t>(kTimeoutS * 1e9);
      while (__atomic_load_n(&s.host.bStart[k], __ATOMIC_ACQUIRE) == 0) {
        if (h->failed.load() != 0) die("Y", "the other process failed");
        if (nowNs() > deadline) die("Y", "kernel B did not start within 20 s", h);
      }
      h->done.store(seq, std::memory_order_release);
    }
  }
  check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize", "Y", h);
  return 0;
}

struct Stats {
  double p50;
  double p99;
  double max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  return {at(0.5), at(0.99), v.back()};
}

// Part 3 (X alone, after the peer has gone): CPU -> GPU -> CPU through the release and
// acknowledgement words.
void runHostPart(Side& s, int total) {
  Header* h = s.header;
  std::vector<std::int64_t> released(static_cast<std::size_t>(total)), seen(static_cast<std::size_t>(total));
  auto* release = reinterpret_cast<volatile std::uint64_t*>(&h->release);
  auto* ack = reinterpret_cast<volatile std::uint64_t*>(&h->ack);
  for (int i = 0; i < total; ++i) {
    const auto v = static_cast<std::uint64_t>(i) + 1;
    checkDrv(s.driver.waitValue64(s.stream, s.releaseDevice, v, kWaitGeq), "cuStreamWaitValue64", "X", h);
    kernelB<<<1, 1, 0, s.stream>>>(reinterpret_cast<long long*>(s.device.hostB + i));
    check(cudaGetLastError(), "kernelB launch", "X", h);
    checkDrv(s.driver.writeValue64(s.stream, s.ackDevice, v, kWriteDefault), "cuStreamWriteValue64", "X", h);
    // Let the stream reach its wait, so the figure is the fence's and not the launch's.
    const std::int64_t settle = nowNs() + 50'000;
    while (nowNs() < settle) {}
    released[static_cast<std::size_t>(i)] = nowNs();
    __atomic_store_n(release, v, __ATOMIC_RELEASE);
    const std::int64_t deadline = nowNs() + static_cast<std::int64_t>(kTimeoutS * 1e9);
    while (__atomic_load_n(ack, __ATOMIC_ACQUIRE) < v) {
      if (nowNs() > deadline) die("X", "the stream did not acknowledge the release within 20 s", h);
    }
    seen[static_cast<std::size_t>(i)] = nowNs();
  }
  check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize", "X", h);
  std::vector<double> roundTrip, up, down;
  // up + offset and down - offset: the offset of %globaltimer to CLOCK_MONOTONIC is what makes the
  // fastest trip each way equal (min up = min down).
  std::vector<std::int64_t> rawUp, rawDown;
  for (int i = kWarmup; i < total; ++i) {
    const auto k = static_cast<std::size_t>(i);
    roundTrip.push_back(static_cast<double>(seen[k] - released[k]) / 1000.0);
    rawUp.push_back(s.host.hostB[k] - released[k]);
    rawDown.push_back(seen[k] - s.host.hostB[k]);
  }
  const std::int64_t minUp = *std::min_element(rawUp.begin(), rawUp.end());
  const std::int64_t minDown = *std::min_element(rawDown.begin(), rawDown.end());
  const std::int64_t shift = (minDown - minUp) / 2;  // added to up, taken from down
  for (std::size_t k = 0; k < rawUp.size(); ++k) {
    up.push_back(static_cast<double>(rawUp[k] + shift) / 1000.0);
    down.push_back(static_cast<double>(rawDown[k] - shift) / 1000.0);
  }
  const Stats rt = stats(roundTrip), u = stats(up), d = stats(down);
  std::printf("host fence    CPU -> GPU -> CPU round trip: p50 %.2f us  p99 %.2f us  max %.2f us\n", rt.p50, rt.p99,
              rt.max);
  std::printf("host fence    CPU -> GPU (release word -> B start): p50 %.2f us  p99 %.2f us  (split estimated)\n",
              u.p50, u.p99);
  std::printf("host fence    GPU -> CPU (B start -> ack seen): p50 %.2f us  p99 %.2f us  (split estimated)\n", d.p50,
              d.p99);
}

int runMain(const char* self, int iterations) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices <= 0) {
    std::printf("gpu-fence-latency: no CUDA device (cudaGetDeviceCount: %s, %d devices); skipped\n",
                cudaGetErrorName(e), devices);
    return 77;
  }
  const int total = iterations + kWarmup;
  const std::size_t bytes = sharedBytes(total);
  const int fd = memfd_create("gpu-fence-latency", 0);  // inherited by Y across exec
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) die("X", std::string("memfd: ") + std::strerror(errno));
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) die("X", std::string("mmap: ") + std::strerror(errno));
  const pid_t peer = fork();
  if (peer < 0) die("X", std::string("fork: ") + std::strerror(errno));
  if (peer == 0) {
    const std::string fdArg = std::to_string(fd);
    const std::string totalArg = std::to_string(total);
    execl(self, self, "--peer", fdArg.c_str(), totalArg.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "gpu-fence-latency: exec %s: %s\n", self, std::strerror(errno));
    _exit(1);
  }
  Side s = attach("X", base, bytes, total);
  Header* h = s.header;
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming), "cudaEventCreateWithFlags",
        "X", h);
  check(cudaIpcGetEventHandle(&h->handle, event), "cudaIpcGetEventHandle", "X", h);
  h->handleReady.store(1, std::memory_order_release);
  std::int64_t seq = 0;
  for (int part : {kEvent, kFence}) {
    for (int i = 0; i < total; ++i) {
      ++seq;
      const std::size_t k = slot(part, total, i);
      const std::int64_t t0 = nowNs();
      kernelA<<<1, 1, 0, s.stream>>>(reinterpret_cast<long long*>(s.device.aEnd + k), kSpinNs);
      check(cudaGetLastError(), "kernelA launch", "X", h);
      if (part == kEvent) {
        check(cudaEventRecord(event, s.stream), "cudaEventRecord", "X", h);
      } else {
        checkDrv(s.driver.writeValue64(s.stream, s.fenceDevice, static_cast<std::uint64_t>(i) + 1, kWriteDefault),
                 "cuStreamWriteValue64", "X", h);
      }
      s.host.enqX[k] = nowNs() - t0;
      h->go.store(seq, std::memory_order_release);
      spinUntil(h->done, seq, "X", h);
    }
  }
  check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize", "X", h);
  int status = 0;
  if (waitpid(peer, &status, 0) != peer || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    die("X", "the peer process (Y) failed");
  }

  int driverVersion = 0;
  int runtimeVersion = 0;
  cudaDriverGetVersion(&driverVersion);
  cudaRuntimeGetVersion(&runtimeVersion);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", "X", h);
  std::printf(
      "device 0: %s, driver %d.%d, runtime %d.%d; %d iterations per part (%d warm-up dropped), "
      "kernel A spins %lld us\n",
      prop.name, driverVersion / 1000, driverVersion % 1000 / 10, runtimeVersion / 1000, runtimeVersion % 1000 / 10,
      iterations, kWarmup, kSpinNs / 1000);
  Stats latency[2]{};
  double enqueueMax[2]{};
  int negative[2]{};
  for (int part : {kEvent, kFence}) {
    std::vector<double> l;
    std::vector<double> x;
    std::vector<double> y;
    for (int i = kWarmup; i < total; ++i) {
      const std::size_t k = slot(part, total, i);
      const std::int64_t d = s.host.bStart[k] - s.host.aEnd[k];
      if (d < 0) ++negative[part];
      l.push_back(static_cast<double>(d) / 1000.0);
      x.push_back(static_cast<double>(s.host.enqX[k]) / 1000.0);
      y.push_back(static_cast<double>(s.host.enqY[k]) / 1000.0);
    }
    latency[part] = stats(l);
    const Stats sx = stats(x);
    const Stats sy = stats(y);
    enqueueMax[part] = std::max(sx.max, sy.max);
    const char* name = part == kEvent ? "ipc event" : "64-bit fence";
    std::printf("%-12s  A end -> B start (globaltimer): p50 %.2f us  p99 %.2f us  max %.2f us%s\n", name,
                latency[part].p50, latency[part].p99, latency[part].max,
                negative[part] != 0 ? "  (B STARTED BEFORE A ENDED in some iterations)" : "");
    std::printf("%-12s  enqueue CPU time X (A + %s): p50 %.2f us  p99 %.2f us  max %.2f us\n", name,
                part == kEvent ? "cudaEventRecord" : "cuStreamWriteValue64", sx.p50, sx.p99, sx.max);
    std::printf("%-12s  enqueue CPU time Y (%s + B): p50 %.2f us  p99 %.2f us  max %.2f us\n", name,
                part == kEvent ? "cudaStreamWaitEvent" : "cuStreamWaitValue64", sy.p50, sy.p99, sy.max);
  }
  runHostPart(s, total);
  const double r50 = latency[kFence].p50 / std::max(latency[kEvent].p50, 1e-3);
  const double r99 = latency[kFence].p99 / std::max(latency[kEvent].p99, 1e-3);
  std::printf("fence/event latency ratio: p50 %.2f  p99 %.2f (target: within 2x)\n", r50, r99);
  // A blocking enqueue call would have waited for kernel A's spin.
  std::printf("longest fence enqueue call: %.2f us against kernel A's %lld us on the GPU (%s)\n", enqueueMax[kFence],
              kSpinNs / 1000,
              enqueueMax[kFence] * 1000.0 < static_cast<double>(kSpinNs) ? "no call waited for the GPU"
                                                                         : "A CALL MAY HAVE WAITED FOR THE GPU");
  if (negative[kEvent] + negative[kFence] != 0) {
    std::printf("ORDER VIOLATED: kernel B started before kernel A ended (%d event, %d fence iterations)\n",
                negative[kEvent], negative[kFence]);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--peer") == 0) {
    return runPeer(std::atoi(argv[2]), std::atoi(argv[3]));
  }
  int iterations = 2000;
  if (argc == 2) {
    char* end = nullptr;
    const long v = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || v < 1 || v > kMaxIterations) {
      std::fprintf(stderr, "gpu-fence-latency: iterations must be a whole number from 1 to %d, got '%s'\n",
                   kMaxIterations, argv[1]);
      return 2;
    }
    iterations = static_cast<int>(v);
  } else if (argc > 2) {
    std::fprintf(stderr, "usage: gpu-fence-latency [iterations]\n");
    return 2;
  }
  return runMain("/proc/self/exe", iterations);
}
