// tactus-gpu-test-client: a client process for the GPU tests, driven by arguments. It creates one
// non-blocking stream per --stream and registers it, registers every scheduled submitter as a
// CUDA submitter (its work: gpu_work.hpp, --gpu-us long, stamped into --trace: a line per piece
// of work with its runnable, hyperepoch iteration, start, end and schedule identifier) and every
// other runnable as a CPU runnable, runs, and prints one result line:
//   status=<run status> submissions=N stream-waits=N gpu-ends=N sync-on-submit-threads=N
//   value-waits-blocked=N overhead-p50-ns=N overhead-p99-ns=N overhead-samples=N
//   clock-offset-error-ns=N message=<text>
// (sync-on-submit-threads and value-waits-blocked are the stand-in's counters; -1 on a GPU.)
// --misuse first tries every registration the runtime must refuse and prints `<case>: <error>`.
// --probe exits 77 when no device is present (0 otherwise). Built twice: against the CUDA
// stand-in (tests in CI) and, with the toolkit, against libtactus and a real kernel.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "gpu_work.hpp"
#include "tactus/client.hpp"
#include "tactus/cuda.hpp"
#include "tactus/stm.h"

namespace {

struct Args {
  std::string name;
  std::string instance = "default";
  std::vector<std::string> streams;
  std::vector<std::string> skipStreams;
  long long gpuUs = 50;
  long long busyUs = 0;
  std::string trace;
  bool stm = false;
  bool misuse = false;
  bool probe = false;
  bool blocking = false;
  bool submittersAsCpu = false;
  std::string maxConnections;
};

Args gArgs;
constexpr std::size_t kSlots = 1 << 16;
tactus::gpuwork::TraceSlot* gSlots = nullptr;
std::atomic<std::size_t> gNextSlot{0};

void spinUs(long long us) {
  if (us <= 0) return;
  timespec t0{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) >= us * 1000) return;
  }
}

void submitter(void* userdata, cudaStream_t stream) {
  const auto* name = static_cast<const std::string*>(userdata);
  auto info = tactus::runtimeInfo();
  const std::size_t k = gNextSlot.fetch_add(1);
  if (!info || k >= kSlots) {
    std::printf("submitter-error %s\n", info ? "out of trace slots" : info.error().message.c_str());
    std::fflush(stdout);
    std::_Exit(5);
  }
  tactus::gpuwork::TraceSlot* slot = &gSlots[k];
  slot->iteration = info->hyperepochIteration;
  slot->schedule = info->scheduleId;
  std::snprintf(slot->name, sizeof slot->name, "%s", name->c_str());
  if (!tactus::gpuwork::enqueue(stream, gArgs.gpuUs, slot)) {
    std::printf("submitter-error launch failed\n");
    std::fflush(stdout);
    std::_Exit(5);
  }
}

void cpuBody(void*) { spinUs(gArgs.busyUs); }

std::string describe(const tactus::Result<void>& r) {
  return r ? std::string("ok") : std::string(tactus::errorCodeName(r.error().code)) + ": " + r.error().message;
}

void misuse(const std::vector<std::string>& names) {
  const std::string stream = gArgs.streams.empty() ? "CUDA_STREAM0" : gArgs.streams.front();
  auto print = [](const char* what, const std::string& result) { std::printf("%s: %s\n", what, result.c_str()); };
  print("default-null", describe(tactus::cuda::registerStream(stream, nullptr)));
  print("default-legacy", describe(tactus::cuda::registerStream(stream, cudaStreamLegacy)));
  print("default-per-thread", describe(tactus::cuda::registerStream(stream, cudaStreamPerThread)));
  cudaStream_t blocking = nullptr;
  tactus::gpuwork::createStream(&blocking, false);
  print("blocking", describe(tactus::cuda::registerStream(stream, blocking)));
  cudaStream_t s = nullptr;
  tactus::gpuwork::createStream(&s, true);
  print("unknown-name", describe(tactus::cuda::registerStream("NO_SUCH_STREAM", s)));
  print("first", describe(tactus::cuda::registerStream(stream, s)));
  cudaStream_t other = nullptr;
  tactus::gpuwork::createStream(&other, true);
  print("same-name-twice", describe(tactus::cuda::registerStream(stream, other)));
  if (gArgs.streams.size() > 1) {
    print("same-stream-twice", describe(tactus::cuda::registerStream(gArgs.streams[1], s)));
  }
  print("stm-default-null", stmErrorCodeToString(stmRegisterCudaResource(stream.c_str(), nullptr)));
  print("stm-blocking", stmErrorCodeToString(stmRegisterCudaResource(stream.c_str(), blocking)));
  print("stm-unknown-name", stmErrorCodeToString(stmRegisterCudaResource("NO_SUCH_STREAM", other)));
  print("unknown-submitter", describe(tactus::cuda::registerSubmitter("NoSuchRunnable", submitter, nullptr)));
  if (!names.empty()) {  // the graphs used with --misuse list a CPU runnable last
    print("cpu-runnable-as-submitter", describe(tactus::cuda::registerSubmitter(names.back(), submitter, nullptr)));
  }
  print("null-submitter",
        describe(tactus::cuda::registerSubmitter("X", static_cast<tactus::cuda::SubmitterFunction>(nullptr), nullptr)));
  std::fflush(stdout);
  tactus::gpuwork::destroyStream(blocking);
  gArgs.skipStreams.push_back(stream);  // registered above
}

int usage() {
  std::fprintf(stderr,
               "usage: tactus-gpu-test-client --name CLIENT [--instance I] [--stream NAME]... [--skip-stream NAME]...\n"
               "  [--gpu-us N] [--busy-us N] [--trace FILE] [--stm] [--misuse] [--blocking] [--submitters-as-cpu]\n"
               "  [--max-connections N] | --probe\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--name") gArgs.name = next();
    else if (a == "--instance") gArgs.instance = next();
    else if (a == "--stream") gArgs.streams.push_back(next());
    else if (a == "--skip-stream") gArgs.skipStreams.push_back(next());
    else if (a == "--gpu-us") gArgs.gpuUs = std::atoll(next().c_str());
    else if (a == "--busy-us") gArgs.busyUs = std::atoll(next().c_str());
    else if (a == "--trace") gArgs.trace = next();
    else if (a == "--stm") gArgs.stm = true;
    else if (a == "--misuse") gArgs.misuse = true;
    else if (a == "--probe") gArgs.probe = true;
    else if (a == "--blocking") gArgs.blocking = true;
    else if (a == "--submitters-as-cpu") gArgs.submittersAsCpu = true;
    else if (a == "--max-connections") gArgs.maxConnections = next();
    else return usage();
  }
  std::string why;
  if (!tactus::gpuwork::available(why)) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  if (gArgs.probe) return 0;
  if (gArgs.name.empty()) return usage();
  if (!gArgs.maxConnections.empty()) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", gArgs.maxConnections.c_str(), 1);
  gSlots = tactus::gpuwork::allocateSlots(kSlots);
  if (gSlots == nullptr) return 3;

  ::setenv("TACTUS_INSTANCE", gArgs.instance.c_str(), 1);
  if (const stmErrorCode_t rc = stmClientInit(gArgs.name.c_str()); rc != STM_SUCCESS) {
    std::printf("init-error code=%s message=%s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
    return 3;
  }
  auto names = tactus::scheduledRunnables();
  if (!names) return 3;
  if (gArgs.misuse) misuse(*names);

  std::vector<cudaStream_t> streams;
  for (const std::string& s : gArgs.streams) {
    bool skip = false;
    for (const std::string& k : gArgs.skipStreams) skip = skip || k == s;
    if (skip) continue;
    cudaStream_t stream = nullptr;
    if (!tactus::gpuwork::createStream(&stream, !gArgs.blocking)) return 3;
    streams.push_back(stream);
    const stmErrorCode_t rc = gArgs.stm ? stmRegisterCudaResource(s.c_str(), stream)
                                        : (tactus::cuda::registerStream(s, stream) ? STM_SUCCESS : STM_ERROR_GENERIC);
    if (rc != STM_SUCCESS) {
      auto again = gArgs.stm ? tactus::Result<void>{} : tactus::cuda::registerStream(s, stream);
      std::printf("stream-error %s code=%s message=%s\n", s.c_str(), stmErrorCodeToString(rc),
                  gArgs.stm ? tactusLastErrorMessage() : describe(again).c_str());
      std::fflush(stdout);
      return 4;
    }
  }
  static std::vector<std::string> kept;
  kept = *names;
  for (std::string& n : kept) {
    stmErrorCode_t rc = STM_ERROR_NOT_FOUND;
    if (!gArgs.submittersAsCpu) {
      rc = gArgs.stm ? stmRegisterCudaSubmitter(submitter, n.c_str(), &n)
                     : (tactus::cuda::registerSubmitter(n, submitter, &n) ? STM_SUCCESS : STM_ERROR_NOT_FOUND);
    }
    if (rc == STM_ERROR_NOT_FOUND) rc = stmRegisterCpuRunnable(cpuBody, n.c_str(), &n);
    if (rc != STM_SUCCESS) {
      std::printf("register-error %s code=%s message=%s\n", n.c_str(), stmErrorCodeToString(rc),
                  tactusLastErrorMessage());
      std::fflush(stdout);
      return 4;
    }
  }
  const stmErrorCode_t rc = stmEnterScheduler();
  const tactus::cuda::EngineStats st = tactus::cuda::engineStats();
  std::printf(
      "status=%s submissions=%llu stream-waits=%llu gpu-ends=%llu sync-on-submit-threads=%lld "
      "value-waits-blocked=%lld overhead-p50-ns=%lld overhead-p99-ns=%lld overhead-samples=%llu "
      "clock-offset-error-ns=%lld message=%s\n",
      stmErrorCodeToString(rc), static_cast<unsigned long long>(st.submissions),
      static_cast<unsigned long long>(st.streamWaits), static_cast<unsigned long long>(st.gpuEnds),
      tactus::gpuwork::syncCallsOnSubmitThreads(), tactus::gpuwork::valueWaitsThatBlocked(),
      static_cast<long long>(st.overheadP50Ns), static_cast<long long>(st.overheadP99Ns),
      static_cast<unsigned long long>(st.overheadSamples), static_cast<long long>(st.clockOffsetErrorNs),
      tactusLastErrorMessage());
  std::fflush(stdout);
  stmClientExit();
  for (cudaStream_t s : streams) tactus::gpuwork::destroyStream(s);
  // The trace after the streams are gone: their threads write the slots until then.
  if (!gArgs.trace.empty()) {
    if (std::FILE* f = std::fopen(gArgs.trace.c_str(), "w")) {
      std::fprintf(f, "# clock %s\n", tactus::gpuwork::clockName());
      const std::size_t n = std::min(gNextSlot.load(), kSlots);
      for (std::size_t k = 0; k < n; ++k) {
        std::fprintf(f, "%s %llu %lld %lld %u\n", gSlots[k].name, static_cast<unsigned long long>(gSlots[k].iteration),
                     static_cast<long long>(gSlots[k].startNs), static_cast<long long>(gSlots[k].endNs),
                     gSlots[k].schedule);
      }
      std::fclose(f);
    }
  }
  return rc == STM_SUCCESS ? 0 : 10 + static_cast<int>(rc);
}
