// The GPU engine over the CUDA runtime API: stream waits on inter-process events for GPU
// predecessors, host functions for GPU-side start/end and completion, IPC event handles published
// in shared memory. Compiled against the real CUDA runtime for libtactus, and against the host
// stand-in (client_lib/standin) for the tests, so this very code is what CI runs.
#include "cuda_engine.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "tactus/cuda.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

namespace {

constexpr std::uint32_t kRing = shm::kGpuEventRing;
constexpr std::size_t kOverheadSamples = 1u << 16;

std::mutex gStatsMutex;
cuda::EngineStats gStats;            // guarded by gStatsMutex
std::vector<std::int32_t> gSamples;  // guarded by gStatsMutex: every worker's overhead samples of the last run
std::atomic<std::uint64_t> gGpuEnds{0};

Error cudaFailure(const std::string& what, cudaError_t e) {
  return {ErrorCode::kIo, what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")"};
}

bool isDefaultStream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

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

// A GPU-side start/end context: one per (submittee, ring slot), reused every kRing iterations.
struct HostCall {
  CudaEngine::Impl* engine = nullptr;
  std::uint32_t instance = 0;
  std::uint32_t runnable = 0;
  std::uint32_t iteration = 0;
  std::int64_t startNs = 0;
};

// A predecessor of a submittee, resolved on first use (its mode is published before its client
// entered, so it is valid once the run has started).
struct Pred {
  std::uint32_t instance = 0;
  bool previousIteration = false;
  enum class Kind : std::uint8_t { kUnknown, kEvents, kDone } kind = Kind::kUnknown;
  bool sameStream = false;         // FIFO on our own stream: no event wait needed
  bool opened = false;             // `events` were opened from IPC handles here: destroy them at the end
  cudaEvent_t events[kRing] = {};  // ours or opened from the owner's IPC handles
};

struct SubmitPlan {
  std::uint32_t submitter = 0;  // instance
  std::uint32_t submittee = 0;  // instance
  std::uint32_t runnable = 0;   // the submitter's RunnableId
  cudaStream_t stream = nullptr;
  bool record = false;  // the submittee has GPU successors
  std::vector<Pred> preds;
  cudaEvent_t events[kRing] = {};
  HostCall calls[kRing];
  std::uint32_t gpuWorker = 0;  // the ring the host functions write
};

struct CudaEngine::Impl {
  GpuSetup setup;
  std::vector<std::int32_t> planOf;  // per instance: index into plans (submitter instance), or -1
  std::vector<char> runsSubmittee;   // per instance
  std::vector<SubmitPlan> plans;
  std::vector<cudaEvent_t> ownEventsOf;     // per instance * kRing: our events (local lookups)
  std::vector<std::atomic_flag> ringLocks;  // per worker: host functions of several streams share a ring
  std::uint32_t pid = 0;

  static void gpuStart(void* arg) {
    auto* call = static_cast<HostCall*>(arg);
    call->startNs = ipc::monotonicNs();
  }

  static void gpuEnd(void* arg) {
    auto* call = static_cast<HostCall*>(arg);
    Impl& self = *call->engine;
    const std::int64_t end = ipc::monotonicNs();
    const std::uint32_t w = self.setup.plan->instanceWorker[call->instance];
    const shm::SegmentView& view = self.setup.view;
    {
      std::atomic_flag& lock = self.ringLocks[w];
      while (lock.test_and_set(std::memory_order_acquire)) ipc::cpuRelax();
      ipc::pushEvent(view.worker(w), view.ring(w), view.ringCapacity(),
                     {static_cast<std::uint16_t>(EventKind::kRun), 0, call->instance, call->iteration, call->runnable,
                      call->startNs, end});
      lock.clear(std::memory_order_release);
    }
    shm::InstanceSlot& slot = view.instance(call->instance);
    ipc::publishSequence(slot.done, slot.waiters, call->iteration + 1);
    gGpuEnds.fetch_add(1, std::memory_order_relaxed);
  }

  // Resolves a predecessor on first use. Called on the worker that runs the submitter owning
  // `p`, and touches nothing but `p` and read-only state: two submitters of one client on two
  // cores resolve their predecessors at the same time. The events it opens stay in `p` (no shared
  // list), and finish() destroys them after the workers have stopped.
  Result<void> resolve(Pred& p) {
    shm::GpuSlot& slot = setup.view.gpu(p.instance);
    if (static_cast<shm::GpuMode>(slot.mode.load(std::memory_order_acquire)) != shm::GpuMode::kEvents) {
      p.kind = Pred::Kind::kDone;
      return {};
    }
    if (slot.ownerPid == pid) {
      for (std::uint32_t k = 0; k < kRing; ++k) p.events[k] = ownEventsOf[p.instance * kRing + k];
    } else {
      for (std::uint32_t k = 0; k < kRing; ++k) {
        cudaIpcEventHandle_t handle;
        std::memcpy(&handle, slot.eventHandle[k], sizeof handle);
        cudaEvent_t e = nullptr;
        if (const cudaError_t rc = cudaIpcOpenEventHandle(&e, handle); rc != cudaSuccess) {
          return cudaFailure("cudaIpcOpenEventHandle for '" +
                                 qualifiedName(*setup.schedule, setup.schedule->instances[p.instance].runnable) + "'",
                             rc);
        }
        p.events[k] = e;
        p.opened = true;
      }
    }
    p.kind = Pred::Kind::kEvents;
    return {};
  }
};

CudaEngine::CudaEngine() = default;
CudaEngine::~CudaEngine() = default;

static_assert(sizeof(cudaIpcEventHandle_t) == shm::kIpcEventHandleSize, "IPC event handle size");

Result<void> CudaEngine::prepare(const GpuSetup& setup) {
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.setup = setup;
  m.pid = static_cast<std::uint32_t>(::getpid());
  const Schedule& s = *setup.schedule;
  const RunPlan& plan = *setup.plan;
  const auto n = static_cast<std::uint32_t>(s.instances.size());
  m.planOf.assign(n, -1);
  m.runsSubmittee.assign(n, 0);
  m.ownEventsOf.assign(std::size_t{n} * kRing, nullptr);
  m.ringLocks = std::vector<std::atomic_flag>(plan.workers.size());
  for (auto& f : m.ringLocks) f.clear();

  // Which submittees are GPU predecessors of another submittee (they need a record).
  std::vector<char> gpuSuccessor(n, 0);
  for (std::uint32_t t = 0; t < n; ++t) {
    if (s.runnables[s.instances[t].runnable].kind != RunnableKind::kSubmittee) continue;
    for (const WaitCondition& c : plan.waits[t]) {
      if (c.instance != t && s.runnables[s.instances[c.instance].runnable].kind == RunnableKind::kSubmittee) {
        gpuSuccessor[c.instance] = 1;
      }
    }
  }
  const auto byRunnableFrame = instancesByRunnableFrame(s);
  auto instanceOf = [&](std::uint32_t runnable, std::uint32_t frame) {
    if (runnable >= byRunnableFrame.size() || frame >= byRunnableFrame[runnable].size()) return kNone;
    return byRunnableFrame[runnable][frame];
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const RunnableInfo& r = s.runnables[s.instances[i].runnable];
    if (r.client != setup.clientIndex || r.kind != RunnableKind::kSubmitter) continue;
    if (!(*setup.submitters)[s.instances[i].runnable].registered) continue;
    SubmitPlan p;
    p.submitter = i;
    p.runnable = s.instances[i].runnable;
    p.submittee = instanceOf(r.submits, s.instances[i].frame);
    if (p.submittee == kNone) continue;  // a submitter without a scheduled submittee runs as a plain call
    std::uint32_t streamResource = kNone;
    for (const std::uint32_t res : s.instances[i].resources) {
      if (s.resources[res].kind == ResourceKind::kCudaStream) streamResource = res;
    }
    if (streamResource == kNone || setup.streams[streamResource] == nullptr) {
      return fail(
          ErrorCode::kInvalidState,
          "CUDA submitter '" + qualifiedName(s, p.runnable) + "' holds no registered CUDA stream" +
              (streamResource == kNone ? std::string()
                                       : " (register '" + s.resources[streamResource].name + "' with registerStream)"));
    }
    p.stream = setup.streams[streamResource];
    p.record = gpuSuccessor[p.submittee] != 0;
    p.gpuWorker = plan.instanceWorker[p.submittee];
    for (const WaitCondition& c : plan.waits[p.submittee]) {
      if (c.instance == i) continue;  // the submitter itself: we are it
      // Another submitter before us on the stream's timeline is no GPU predecessor: the stream's
      // FIFO order places our work after whatever it enqueued, and waiting for it here could wait
      // for a submitter that runs after us on the same CPU. Declared dependencies stay.
      const auto& declared = s.instances[p.submittee].dependencies;
      if (s.runnables[s.instances[c.instance].runnable].kind == RunnableKind::kSubmitter &&
          std::find(declared.begin(), declared.end(), c.instance) == declared.end()) {
        continue;
      }
      Pred pred;
      pred.instance = c.instance;
      pred.previousIteration = c.previousIteration;
      const InstanceInfo& other = s.instances[c.instance];
      if (s.runnables[other.runnable].kind != RunnableKind::kSubmittee) {
        pred.kind = Pred::Kind::kDone;
      } else {
        // Same stream: the stream's FIFO order already puts us after it.
        const std::uint32_t j = instanceOf(s.runnables[other.runnable].submittedBy, other.frame);
        if (j != kNone) {
          for (const std::uint32_t res : s.instances[j].resources) {
            if (res == streamResource) pred.sameStream = true;
          }
        }
      }
      p.preds.push_back(pred);
    }
    shm::GpuSlot& slot = setup.view.gpu(p.submittee);
    for (std::uint32_t k = 0; k < kRing; ++k) {
      if (const cudaError_t e = cudaEventCreateWithFlags(&p.events[k], cudaEventDisableTiming | cudaEventInterprocess);
          e != cudaSuccess) {
        return cudaFailure("cudaEventCreateWithFlags for '" + qualifiedName(s, s.instances[p.submittee].runnable) + "'",
                           e);
      }
      cudaIpcEventHandle_t handle;
      if (const cudaError_t e = cudaIpcGetEventHandle(&handle, p.events[k]); e != cudaSuccess) {
        return cudaFailure("cudaIpcGetEventHandle for '" + qualifiedName(s, s.instances[p.submittee].runnable) + "'",
                           e);
      }
      std::memcpy(slot.eventHandle[k], &handle, sizeof handle);
      m.ownEventsOf[p.submittee * kRing + k] = p.events[k];
      p.calls[k].instance = p.submittee;
      p.calls[k].runnable = s.instances[p.submittee].runnable;
    }
    slot.eventCount = kRing;
    slot.ownerPid = m.pid;
    slot.mode.store(static_cast<std::uint32_t>(shm::GpuMode::kEvents), std::memory_order_release);
    m.runsSubmittee[p.submittee] = 1;
    m.planOf[i] = static_cast<std::int32_t>(m.plans.size());
    m.plans.push_back(std::move(p));
  }
  for (SubmitPlan& p : m.plans) {
    for (HostCall& c : p.calls) c.engine = &m;
  }
  return {};
}

bool CudaEngine::runsSubmittee(std::uint32_t i) const { return impl_ && impl_->runsSubmittee[i] != 0; }
bool CudaEngine::runsSubmitter(std::uint32_t i) const { return impl_ && impl_->planOf[i] >= 0; }

bool CudaEngine::submissionSuffices(std::uint32_t i, std::uint32_t other) const {
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

bool CudaEngine::submit(std::uint32_t i, std::uint64_t h, const std::function<bool()>& abort, GpuWorkerStats& stats,
                        std::int64_t& bodyStartNs, std::int64_t& bodyEndNs) {
  Impl& m = *impl_;
  SubmitPlan& p = m.plans[static_cast<std::size_t>(m.planOf[i])];
  const shm::SegmentView& view = m.setup.view;
  std::int64_t t0 = ipc::monotonicNs();
  // 1. On the CPU: every predecessor of the submittee has been SUBMITTED (GPU ones; their record
  //    is issued) or has finished (CPU ones). Never a GPU completion.
  for (Pred& pred : p.preds) {
    if (pred.kind == Pred::Kind::kUnknown) {
      if (auto ok = m.resolve(pred); !ok) {
        pred.kind = Pred::Kind::kDone;  // cannot open the handle: fall back to its done word (a CPU wait)
      }
    }
    const auto target = static_cast<std::uint32_t>(pred.previousIteration ? h : h + 1);
    std::atomic<std::uint32_t>* word;
    std::atomic<std::uint32_t>* waiters;
    if (pred.kind == Pred::Kind::kEvents) {
      word = &view.gpu(pred.instance).submitted;
      waiters = &view.gpu(pred.instance).waiters;
    } else {
      word = &view.instance(pred.instance).done;
      waiters = &view.instance(pred.instance).waiters;
    }
    if (shm::sequenceReached(word->load(std::memory_order_acquire), target)) continue;
    ++stats.submissionWaits;
    if (ipc::waitForSequence(*word, *waiters, target, m.setup.spinNs, abort) != ipc::WaitOutcome::kReached)
      return false;
    t0 = ipc::monotonicNs();  // waiting is not overhead
  }
  // 2. On the GPU: the stream waits for the GPU predecessors' records.
  for (const Pred& pred : p.preds) {
    if (pred.kind != Pred::Kind::kEvents || pred.sameStream) continue;
    const std::uint64_t target = pred.previousIteration ? h : h + 1;
    if (target == 0) continue;  // the previous iteration of the first one: nothing to wait for
    if (cudaStreamWaitEvent(p.stream, pred.events[(target - 1) % kRing], 0) == cudaSuccess) ++stats.streamWaits;
  }
  const std::uint32_t k = static_cast<std::uint32_t>(h % kRing);
  HostCall& call = p.calls[k];
  call.iteration = static_cast<std::uint32_t>(h);
  cudaLaunchHostFunc(p.stream, &Impl::gpuStart, &call);
  // 3. The user's submitter enqueues the submittee's work.
  bodyStartNs = ipc::monotonicNs();
  const CudaSubmitterRegistration& reg = (*m.setup.submitters)[p.runnable];
  if (reg.function != nullptr) {
    reg.function(reg.userdata, p.stream);
  } else if (reg.callable) {
    reg.callable(p.stream);
  }
  bodyEndNs = ipc::monotonicNs();
  // 4. Completion: the record for GPU successors, then the submission word, then the host
  //    function for CPU successors (and the master, and the event log).
  if (p.record) cudaEventRecord(p.events[k], p.stream);
  shm::GpuSlot& slot = view.gpu(p.submittee);
  ipc::publishSequence(slot.submitted, slot.waiters, static_cast<std::uint32_t>(h + 1));
  cudaLaunchHostFunc(p.stream, &Impl::gpuEnd, &call);
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

void CudaEngine::finish(bool clean, const std::vector<GpuWorkerStats*>& workers) {
  if (impl_ && clean) {
    // Cold path, on the enterScheduler thread after every worker stopped: let queued host
    // functions run before the contexts they point to go away.
    for (const SubmitPlan& p : impl_->plans) cudaStreamSynchronize(p.stream);
    for (SubmitPlan& p : impl_->plans) {
      for (cudaEvent_t& e : p.events) cudaEventDestroy(e);
    }
    for (const SubmitPlan& p : impl_->plans) {
      for (const Pred& pred : p.preds) {
        if (!pred.opened) continue;
        for (cudaEvent_t e : pred.events) {
          if (e != nullptr) cudaEventDestroy(e);
        }
      }
    }
  } else if (impl_) {
    // A failed run may leave work queued behind events that will never complete: keep the
    // contexts alive rather than free memory a host function may still touch. They stay
    // reachable from a process-wide list that is never destroyed (kept on purpose, so neither
    // exit nor LeakSanitizer frees or reports them).
    static std::mutex abandonedMutex;
    static auto* abandoned = new std::vector<std::unique_ptr<Impl>>();
    const std::lock_guard<std::mutex> keep(abandonedMutex);
    abandoned->push_back(std::move(impl_));
  }
  std::lock_guard<std::mutex> lock(gStatsMutex);
  gStats = {};
  gSamples.clear();
  for (const GpuWorkerStats* w : workers) {
    gStats.submissions += w->submissions;
    gStats.streamWaits += w->streamWaits;
    gStats.submissionWaits += w->submissionWaits;
    gStats.hotPathSyncCalls += w->hotPathSyncCalls;
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
