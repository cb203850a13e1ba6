// libtactus: attaching to the master's segment, registration, and the worker threads that run
// this client's part of the schedule in the compiled order.
#include "tactus/client.hpp"
#include "tactus/cuda.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "cuda_engine.hpp"
#include "engine.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus {

const char* runStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kFrameLimit: return "frame-limit";
    case RunStatus::kExitRequested: return "exit-requested";
    case RunStatus::kStoppedBySignal: return "stopped-by-signal";
    case RunStatus::kTimeout: return "timeout";
    case RunStatus::kPeerDied: return "peer-died";
    case RunStatus::kError: return "error";
  }
  return "unknown";
}

namespace client {

void CpuEngine::execute(const EngineTask& task) {
  if (task.runnable >= registrations_.size()) return;  // an empty round-robin step
  const Registration& r = registrations_[task.runnable];
  if (!r.registered) return;  // allowed by --allow-unregistered-runnables
  if (r.function != nullptr) {
    r.function(r.userdata);
  } else if (r.callable) {
    r.callable();
  }
}

namespace {

using shm::ClientState;
using shm::SegmentState;
using shm::StopReason;

constexpr std::int64_t kPollNs = 10'000'000;         // master polling while waiting in init
constexpr std::int64_t kStartTimeSpinNs = 20'000;    // spin before a StartTime deadline

// A worker about to wait for the very next release of its epoch sleeps until `leadNs` before
// that release's ideal time, then polls for it, yielding the core between polls: the master's
// futex wake-up would otherwise cost tens of microseconds at every frame, and a plain spin would
// keep a master that shares this core from releasing. The next ideal release follows from the
// latest one: a period later within the iteration, or the next iteration's start for frame 0
// (the master never releases earlier; after an overrun it may release later, and then the
// caller's wait takes over). Gives up after twice the lead. Does nothing for the first frame,
// when released already, or with lead 0.
template <typename Stopped>
void awaitReleaseLead(const shm::EpochSlot& epoch, std::uint32_t target, const EpochInfo& info,
                      std::int64_t hyperPeriodNs, std::uint32_t frame, std::int64_t leadNs, Stopped&& stopped) {
  if (leadNs <= 0) return;
  const std::uint32_t released = epoch.released.load(std::memory_order_acquire);
  if (released + 1 != target) return;  // released already, or more than one release away
  const std::int64_t lastIdeal = epoch.releaseNs.load(std::memory_order_relaxed);
  if (lastIdeal <= 0) return;
  const std::int64_t frames = std::max<std::uint32_t>(1, info.frames);
  const std::int64_t next = frame > 0 ? lastIdeal + info.periodNs
                                      : lastIdeal - (frames - 1) * info.periodNs + hyperPeriodNs;
  const std::int64_t wake = next - leadNs;
  for (std::int64_t now = ipc::monotonicNs(); now < wake; now = ipc::monotonicNs()) {
    if (stopped() || epoch.released.load(std::memory_order_acquire) != released) return;
    ipc::sleepUntilNs(std::min(wake, now + ipc::kSleepSliceNs), 0);
  }
  const std::int64_t giveUp = wake + 2 * leadNs;
  while (epoch.released.load(std::memory_order_acquire) == released && ipc::monotonicNs() < giveUp) {
    if (stopped()) return;
    ::sched_yield();
  }
}

enum class Phase { kNone, kAttached, kEntered, kDone };

thread_local const RuntimeInfo* tCurrentInfo = nullptr;

// Pointers for exitScheduler, which must be async-signal-safe: no locks, just atomics.
std::atomic<std::atomic<std::uint32_t>*> gExitFlag{nullptr};
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};

struct Runtime {
  std::string name;
  std::string instance;
  std::uint32_t clientIndex = 0;
  ipc::Segment segment;
  shm::SegmentView view;
  Schedule schedule;
  RunPlan plan;
  std::vector<Registration> registrations;  // per RunnableId
  std::vector<CudaSubmitterRegistration> cudaSubmitters;  // per RunnableId
  std::vector<CUstream_st*> streams;        // per ResourceId: registered CUDA streams
  std::unique_ptr<CudaEngine> gpu;          // set in enterScheduler when CUDA submitters exist
  std::vector<std::unique_ptr<GpuWorkerStats>> gpuStats;  // per worker index
  ipc::ProcessWatch masterWatch;
  std::atomic<bool> masterDead{false};
  std::atomic<std::uint32_t> workersRunning{0};
  Phase phase = Phase::kNone;
};

std::mutex gMutex;  // guards gRuntime's set-up and registration (not the hot path)
std::unique_ptr<Runtime> gRuntime;

// Whether the runnable is one a client must register (CPU functions and submitters).
bool needsRegistration(const RunnableInfo& r) {
  return r.kind == RunnableKind::kCpu || r.kind == RunnableKind::kSubmitter;
}

Result<void> attach(Runtime& rt, const InitOptions& options) {
  const std::int64_t deadline = options.timeoutMs < 0 ? INT64_MAX : ipc::monotonicNs() + options.timeoutMs * 1'000'000;
  for (;;) {
    auto segment = ipc::Segment::open(rt.instance);
    if (segment) {
      shm::SegmentView view(segment->bytes());
      if (view.hasHeader()) {
        shm::SegmentHeader& h = view.header();
        const std::uint32_t pid = h.masterPid.load(std::memory_order_acquire);
        const auto state = static_cast<SegmentState>(h.state.load(std::memory_order_acquire));
        const bool alive = pid != 0 && ipc::processAlive(static_cast<pid_t>(pid), h.masterStartTime);
        if (alive && state == SegmentState::kPublished) {
          if (auto ok = view.validate(); !ok) {
            return fail(ok.error().code, ipc::segmentPath(rt.instance) + ": " + ok.error().message);
          }
          rt.segment = std::move(*segment);
          rt.view = shm::SegmentView(rt.segment.bytes());
          rt.masterWatch = ipc::ProcessWatch(static_cast<pid_t>(pid), h.masterStartTime);
          return {};
        }
        if (alive && state == SegmentState::kRunning) {
          return fail(ErrorCode::kInvalidState, "instance '" + rt.instance + "' is already running a schedule (master pid " +
                                                    std::to_string(pid) + ") that started without client '" + rt.name + "'");
        }
        // Otherwise: a master still creating it, a finished run, or a stale segment: wait for the next.
      }
    } else if (segment.error().code != ErrorCode::kNotFound) {
      return segment.error();
    }
    if (ipc::monotonicNs() >= deadline) {
      return fail(ErrorCode::kTimeout, "client '" + rt.name + "': no master for instance '" + rt.instance + "' within " +
                                           std::to_string(options.timeoutMs) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
  }
}

Result<void> initLocked(const std::string& clientName, const InitOptions& options) {
  if (gRuntime) return fail(ErrorCode::kInvalidState, "client '" + gRuntime->name + "' is already initialized");
  if (clientName.empty()) return fail(ErrorCode::kBadParameter, "the client name is empty");
  if (auto ok = ipc::validateInstanceName(options.instance); !ok) return ok.error();
  auto rt = std::make_unique<Runtime>();
  rt->name = clientName;
  rt->instance = options.instance;
  if (auto ok = attach(*rt, options); !ok) return ok.error();
  shm::SegmentHeader& h = rt->view.header();
  const std::string origin = ipc::segmentPath(rt->instance);
  std::uint64_t contentHash = 0;
  auto schedule = readSchedule(rt->view.scheduleText(), origin, &contentHash);
  if (!schedule) return schedule.error();
  rt->schedule = std::move(*schedule);
  if (contentHash != h.scheduleContentHash) {
    return fail(ErrorCode::kIncompatible, origin + ": the published schedule does not match its content hash");
  }
  auto plan = makeRunPlan(rt->schedule);
  if (!plan) return fail(plan.error().code, origin + ": " + plan.error().message);
  rt->plan = std::move(*plan);
  if (rt->plan.workers.size() != h.workerCount || rt->schedule.instances.size() != h.instanceCount ||
      rt->schedule.clients.size() != h.clientCount || rt->schedule.epochs.size() != h.epochCount ||
      rt->schedule.hyperepochs.size() != h.hyperepochCount) {
    return fail(ErrorCode::kIncompatible, origin + ": the segment's geometry does not match its schedule");
  }
  rt->clientIndex = kNone;
  std::string names;
  for (std::uint32_t c = 0; c < rt->schedule.clients.size(); ++c) {
    if (rt->schedule.clients[c].name == clientName) rt->clientIndex = c;
    names += (names.empty() ? "" : ", ") + rt->schedule.clients[c].name;
  }
  if (rt->clientIndex == kNone) {
    return fail(ErrorCode::kNotFound, "client '" + clientName + "' is not in schedule '" + rt->schedule.name +
                                          "' (its clients: " + names + ")");
  }
  shm::ClientSlot& slot = rt->view.client(rt->clientIndex);
  std::uint32_t expected = 0;
  const auto self = static_cast<std::uint32_t>(::getpid());
  if (!slot.pid.compare_exchange_strong(expected, self)) {
    return fail(ErrorCode::kAlreadyExists, "client '" + clientName + "' is already attached to instance '" +
                                               rt->instance + "' (pid " + std::to_string(expected) + ")");
  }
  slot.startTime.store(ipc::processStartTime(::getpid()), std::memory_order_relaxed);
  slot.state.store(static_cast<std::uint32_t>(ClientState::kAttached), std::memory_order_release);
  ipc::signalWord(h.attention);
  rt->registrations.resize(rt->schedule.runnables.size());
  rt->cudaSubmitters.resize(rt->schedule.runnables.size());
  rt->streams.assign(rt->schedule.resources.size(), nullptr);
  rt->phase = Phase::kAttached;
  gExitFlag.store(&slot.exitRequested);
  gAttention.store(&h.attention);
  gRuntime = std::move(rt);
  return {};
}

// The checks every registration starts with: initialized, CUDA built in (when needed), not yet
// entered. `what` names the call in messages: `register runnable 'X'`.
Result<Runtime*> registrationRuntime(const std::string& what, bool needsCuda) {
  if (!gRuntime) return fail(ErrorCode::kInvalidState, what + ": the client is not initialized");
  if (needsCuda && !cudaEngineAvailable()) return fail(ErrorCode::kInvalidState, what + ": libtactus was built without CUDA");
  if (gRuntime->phase != Phase::kAttached) return fail(ErrorCode::kInvalidState, what + ": registration after enterScheduler");
  return gRuntime.get();
}

Result<void> registerLocked(const std::string& name, Registration registration) {
  auto target = registrationRuntime("register runnable '" + name + "'", false);
  if (!target) return target.error();
  Runtime& rt = **target;
  for (std::uint32_t r = 0; r < rt.schedule.runnables.size(); ++r) {
    const RunnableInfo& info = rt.schedule.runnables[r];
    if (info.client != rt.clientIndex || info.name != name || !needsRegistration(info)) continue;
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered) {
      return fail(ErrorCode::kAlreadyExists, "runnable '" + rt.name + "." + name + "' is already registered");
    }
    registration.registered = true;
    rt.registrations[r] = std::move(registration);
    return {};
  }
  return fail(ErrorCode::kNotFound, "runnable '" + name + "' is not a CPU runnable of client '" + rt.name +
                                        "' in schedule '" + rt.schedule.name + "'");
}

Result<void> registerCudaSubmitterLocked(const std::string& name, CudaSubmitterRegistration registration) {
  auto target = registrationRuntime("register CUDA submitter '" + name + "'", true);
  if (!target) return target.error();
  Runtime& rt = **target;
  for (std::uint32_t r = 0; r < rt.schedule.runnables.size(); ++r) {
    const RunnableInfo& info = rt.schedule.runnables[r];
    if (info.client != rt.clientIndex || info.name != name) continue;
    if (info.kind != RunnableKind::kSubmitter) {
      return fail(ErrorCode::kNotFound, "runnable '" + rt.name + "." + name + "' is not a submitter in schedule '" +
                                            rt.schedule.name + "' (it has no Submits)");
    }
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered) {
      return fail(ErrorCode::kAlreadyExists, "runnable '" + rt.name + "." + name + "' is already registered");
    }
    registration.registered = true;
    rt.cudaSubmitters[r] = std::move(registration);
    return {};
  }
  return fail(ErrorCode::kNotFound, "runnable '" + name + "' is not a submitter of client '" + rt.name +
                                        "' in schedule '" + rt.schedule.name + "'");
}

Result<void> registerStreamLocked(const std::string& name, CUstream_st* stream) {
  auto target = registrationRuntime("register CUDA stream '" + name + "'", true);
  if (!target) return target.error();
  Runtime& rt = **target;
  std::uint32_t found = kNone;
  for (std::uint32_t r = 0; r < rt.schedule.resources.size(); ++r) {
    const ResourceInfo& info = rt.schedule.resources[r];
    if (info.kind == ResourceKind::kCudaStream && info.client == rt.clientIndex && info.name == name) found = r;
  }
  if (found == kNone) {
    return fail(ErrorCode::kNotFound, "CUDA stream '" + name + "' is not a CUDA_STREAM resource of client '" + rt.name +
                                          "' in schedule '" + rt.schedule.name + "'");
  }
  const std::string what = "register CUDA stream '" + rt.name + "." + name + "'";
  if (auto ok = checkCudaStream(stream, what); !ok) return ok;
  if (rt.streams[found] != nullptr) return fail(ErrorCode::kAlreadyExists, what + ": the name is registered already");
  for (std::uint32_t r = 0; r < rt.streams.size(); ++r) {
    if (rt.streams[r] == stream) {
      return fail(ErrorCode::kAlreadyExists, what + ": this stream is registered already as '" +
                                                 rt.schedule.resources[r].name + "'");
    }
  }
  const std::uint32_t device = rt.schedule.resources[found].device;
  std::uint32_t onDevice = 1;
  for (std::uint32_t r = 0; r < rt.streams.size(); ++r) {
    if (rt.streams[r] != nullptr && rt.schedule.resources[r].device == device) ++onDevice;
  }
  std::uint32_t limit = deviceStreamLimit();
  std::string why = "the device's " + std::to_string(limit) + " hardware queues (CUDA_DEVICE_MAX_CONNECTIONS)";
  if (device < rt.schedule.resources.size() && rt.schedule.resources[device].streamLimit < limit) {
    limit = rt.schedule.resources[device].streamLimit;
    why = "its stream limit of " + std::to_string(limit) + " in the graph";
  }
  if (onDevice > limit) {
    const std::string dev = device < rt.schedule.resources.size() ? rt.schedule.resources[device].name : "?";
    return fail(ErrorCode::kValidation, what + ": " + std::to_string(onDevice) + " streams on '" + dev + "' exceed " + why);
  }
  rt.streams[found] = stream;
  return {};
}

// The runnables this client must register: CPU functions and submitters its instances run
// (round-robin steps included).
std::vector<std::uint32_t> requiredRunnables(const Runtime& rt) {
  std::vector<char> needed(rt.schedule.runnables.size(), 0);
  for (const InstanceInfo& inst : rt.schedule.instances) {
    const RunnableInfo& r = rt.schedule.runnables[inst.runnable];
    if (r.client != rt.clientIndex) continue;
    if (r.kind == RunnableKind::kAliasGroup) {
      for (const std::uint32_t step : r.steps) {
        if (step < needed.size() && needsRegistration(rt.schedule.runnables[step])) needed[step] = 1;
      }
    } else if (needsRegistration(r)) {
      needed[inst.runnable] = 1;
    }
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < needed.size(); ++r) {
    if (needed[r]) out.push_back(r);
  }
  return out;
}

void pinToCore(std::uint32_t core) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % cores, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);  // best effort: a cpuset may forbid it
}

void runWorker(Runtime& rt, std::uint32_t w) {
  const WorkerPlan& wp = rt.plan.workers[w];
  const ResourceInfo& resource = rt.schedule.resources[wp.resource];
  const shm::SegmentView& view = rt.view;
  shm::SegmentHeader& header = view.header();
  std::unique_ptr<Engine> engine;
  CudaEngine* gpu = rt.gpu.get();
  GpuWorkerStats* gpuStats = rt.gpuStats[w].get();
  // Submittees run by the GPU engine are not this worker's: their completion comes from the GPU.
  std::vector<std::uint32_t> instances;
  for (const std::uint32_t i : wp.instances) {
    if (gpu == nullptr || !gpu->runsSubmittee(i)) instances.push_back(i);
  }
  if (instances.empty()) return;
  // What each instance waits for. A CUDA submitter waits for the previous submittee on its own
  // stream only until that one is SUBMITTED: the stream's FIFO order does the rest on the GPU.
  struct WaitRef {
    std::atomic<std::uint32_t>* word;
    std::atomic<std::uint32_t>* waiters;
    bool previousIteration;
  };
  std::vector<std::vector<WaitRef>> waitRefs(instances.size());  // by position in `instances`
  for (std::size_t k = 0; k < instances.size(); ++k) {
    const std::uint32_t i = instances[k];
    std::vector<WaitRef>& refs = waitRefs[k];
    for (const WaitCondition& c : rt.plan.waits[i]) {
      if (gpu != nullptr && gpu->runsSubmitter(i) && gpu->submissionSuffices(i, c.instance)) {
        refs.push_back({&view.gpu(c.instance).submitted, &view.gpu(c.instance).waiters, c.previousIteration});
      } else {
        refs.push_back({&view.instance(c.instance).done, &view.instance(c.instance).waiters, c.previousIteration});
      }
    }
  }
  if (resource.kind == ResourceKind::kCpu) {
    if ((header.flags & shm::kFlagNoPinning) == 0 && resource.core != kNone) pinToCore(resource.core);
    engine = std::make_unique<CpuEngine>(rt.registrations);
  } else {
    engine = std::make_unique<NullEngine>();
  }
  shm::WorkerSlot& ringSlot = view.worker(w);
  EventRecord* ring = view.ring(w);
  const std::uint32_t capacity = header.ringCapacity;
  shm::HyperepochSlot& hyper = view.hyperepoch(wp.hyperepoch);
  const std::int64_t spinNs = ipc::spinBudgetNs();
  const std::int64_t releaseLeadNs = ipc::releaseLeadNs();
  // A run that ended (aborted, or finished before it started, e.g. SIGTERM while waiting for
  // clients) releases nothing more: stop waiting. A normal finish comes after every worker has
  // reached stopAt, so this never cuts a running iteration short.
  auto aborted = [&] {
    return header.state.load(std::memory_order_relaxed) >= static_cast<std::uint32_t>(SegmentState::kFinished) ||
           rt.masterDead.load(std::memory_order_relaxed);
  };
  RuntimeInfo info;
  info.scheduleId = rt.schedule.identifier;
  const std::function<bool()> gpuAbort = aborted;
  for (std::uint64_t h = 0;; ++h) {
    for (std::size_t k = 0; k < instances.size(); ++k) {
      const std::uint32_t i = instances[k];
      if (h >= hyper.stopAt.load(std::memory_order_acquire)) return;
      const InstanceInfo& inst = rt.schedule.instances[i];
      const std::uint32_t e = rt.plan.instanceEpoch[i];
      const std::uint64_t frames = std::max<std::uint32_t>(1, rt.schedule.epochs[e].frames);
      const std::uint64_t epochFrame = h * frames + inst.frame;
      shm::EpochSlot& epoch = view.epoch(e);
      const auto releaseTarget = static_cast<std::uint32_t>(epochFrame + 1);
      auto stopped = [&] { return aborted() || h >= hyper.stopAt.load(std::memory_order_relaxed); };
      awaitReleaseLead(epoch, releaseTarget, rt.schedule.epochs[e], rt.schedule.hyperepochs[wp.hyperepoch].periodNs,
                       inst.frame, releaseLeadNs, stopped);
      if (ipc::waitForSequence(epoch.released, epoch.waiters, releaseTarget, spinNs, stopped) !=
          ipc::WaitOutcome::kReached) {
        return;  // stopped at this iteration, or the run was aborted
      }
      for (const WaitRef& c : waitRefs[k]) {
        const auto target = static_cast<std::uint32_t>(c.previousIteration ? h : h + 1);
        if (ipc::waitForSequence(*c.word, *c.waiters, target, spinNs, aborted) != ipc::WaitOutcome::kReached) return;
      }
      const std::int64_t startTime = rt.schedule.runnables[inst.runnable].startTimeNs;
      if (startTime > 0) ipc::sleepUntilNs(epoch.releaseNs.load(std::memory_order_relaxed) + startTime, kStartTimeSpinNs);
      info.hyperepochIteration = h;
      info.epochIteration = epochFrame;
      info.frame = inst.frame;
      info.instance = i;
      const std::uint32_t runnable = runnableForFrame(rt.schedule, i, epochFrame);
      tCurrentInfo = &info;
      std::int64_t start = 0;
      std::int64_t end = 0;
      if (gpu != nullptr && gpu->runsSubmitter(i)) {
        if (!gpu->submit(i, h, gpuAbort, *gpuStats, start, end)) {
          tCurrentInfo = nullptr;
          return;  // the run was aborted while waiting for a GPU predecessor's submission
        }
      } else {
        start = ipc::monotonicNs();
        engine->execute({i, runnable, &info});
        end = ipc::monotonicNs();
      }
      tCurrentInfo = nullptr;
      ipc::pushEvent(ringSlot, ring, capacity,
                     {static_cast<std::uint16_t>(EventKind::kRun), 0, i, static_cast<std::uint32_t>(h), runnable, start, end});
      shm::InstanceSlot& self = view.instance(i);
      ipc::publishSequence(self.done, self.waiters, static_cast<std::uint32_t>(h + 1));
    }
  }
}

RunOutcome outcomeFromSegment(const Runtime& rt) {
  const shm::SegmentHeader& h = rt.view.header();
  RunOutcome out;
  const std::uint32_t peer = h.stopClient.load();
  if (peer < rt.schedule.clients.size()) out.peer = rt.schedule.clients[peer].name;
  out.message = rt.view.message();
  switch (static_cast<StopReason>(h.stopReason.load())) {
    case StopReason::kFrameLimit: out.status = RunStatus::kFrameLimit; break;
    case StopReason::kExitRequested: out.status = RunStatus::kExitRequested; break;
    case StopReason::kSignal: out.status = RunStatus::kStoppedBySignal; break;
    case StopReason::kTimeout: out.status = RunStatus::kTimeout; break;
    case StopReason::kPeerDied: out.status = RunStatus::kPeerDied; break;
    default: out.status = RunStatus::kError; break;
  }
  return out;
}

RunOutcome masterDiedOutcome() {
  return {RunStatus::kPeerDied, "master", "the master died during the run"};
}

// Waits for the master's final state; watches the master meanwhile.
RunOutcome awaitEnd(Runtime& rt) {
  shm::SegmentHeader& h = rt.view.header();
  for (;;) {
    const std::uint32_t state = h.state.load(std::memory_order_acquire);
    if (state >= static_cast<std::uint32_t>(SegmentState::kFinished)) return outcomeFromSegment(rt);
    if (rt.masterDead.load() || rt.masterWatch.exited()) return masterDiedOutcome();
    h.stateWaiters.fetch_add(1);
    ipc::futexWait(h.state, state, kPollNs);
    h.stateWaiters.fetch_sub(1);
  }
}

RunOutcome enterLocked(std::unique_lock<std::mutex>& lock) {
  if (!gRuntime) return {RunStatus::kError, "", "enterScheduler: the client is not initialized"};
  Runtime& rt = *gRuntime;
  if (rt.phase != Phase::kAttached) return {RunStatus::kError, "", "enterScheduler: the scheduler was entered already"};
  shm::SegmentHeader& h = rt.view.header();
  shm::ClientSlot& slot = rt.view.client(rt.clientIndex);
  const bool allow = (h.flags & shm::kFlagAllowUnregistered) != 0;
  // Refuses to enter: the master ends the run and names this client and `runnable`.
  auto refuse = [&](std::uint32_t runnable, std::string message) -> RunOutcome {
    slot.missingRunnable.store(runnable, std::memory_order_relaxed);
    slot.state.store(static_cast<std::uint32_t>(ClientState::kRefused), std::memory_order_release);
    ipc::signalWord(h.attention);
    rt.phase = Phase::kDone;
    return {RunStatus::kError, "", std::move(message)};
  };
  for (const std::uint32_t r : requiredRunnables(rt)) {
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered || allow) continue;
    return refuse(r, "runnable '" + qualifiedName(rt.schedule, r) + "' is scheduled for client '" + rt.name +
                         "' but was not registered (or start the master with --allow-unregistered-runnables)");
  }
  rt.gpuStats.clear();
  for (std::size_t w = 0; w < rt.plan.workers.size(); ++w) {
    rt.gpuStats.push_back(std::make_unique<GpuWorkerStats>());
  }
  bool anyCuda = false;
  for (const CudaSubmitterRegistration& c : rt.cudaSubmitters) anyCuda = anyCuda || c.registered;
  if (anyCuda) {
    GpuSetup setup;
    setup.schedule = &rt.schedule;
    setup.plan = &rt.plan;
    setup.view = rt.view;
    setup.clientIndex = rt.clientIndex;
    setup.spinNs = ipc::spinBudgetNs();
    setup.submitters = &rt.cudaSubmitters;
    setup.streams = rt.streams;
    rt.gpu = std::make_unique<CudaEngine>();
    if (auto ok = rt.gpu->prepare(setup); !ok) {
      rt.gpu.reset();
      // Refuse like a missing registration, so the master ends the run and names this client.
      std::uint32_t blame = 0;
      for (std::uint32_t r = 0; r < rt.cudaSubmitters.size(); ++r) {
        if (rt.cudaSubmitters[r].registered) blame = r;
      }
      return refuse(blame, "client '" + rt.name + "' cannot start its GPU engine: " + ok.error().message);
    }
    for (auto& stats : rt.gpuStats) stats->overheadNs.assign(gpuOverheadSampleCapacity(), 0);
  }
  rt.phase = Phase::kEntered;
  slot.state.store(static_cast<std::uint32_t>(ClientState::kEntered), std::memory_order_release);
  ipc::signalWord(h.attention);
  lock.unlock();  // exitScheduler and runtimeInfo must not wait for the run

  std::vector<std::thread> workers;
  for (std::uint32_t w = 0; w < rt.plan.workers.size(); ++w) {
    if (rt.plan.workers[w].client != rt.clientIndex) continue;
    rt.workersRunning.fetch_add(1);
    workers.emplace_back([&rt, w] {
      runWorker(rt, w);
      rt.workersRunning.fetch_sub(1);
      ipc::futexWake(rt.workersRunning);
    });
  }
  // Watch the master while the workers run: a dead master must not leave them waiting.
  for (;;) {
    const std::uint32_t running = rt.workersRunning.load();
    if (running == 0) break;
    if (rt.masterWatch.exited()) rt.masterDead.store(true);
    ipc::futexWait(rt.workersRunning, running, 5'000'000);
  }
  for (std::thread& t : workers) t.join();
  // awaitEnd prefers the master's published reason, even from a master that died after it.
  RunOutcome outcome = awaitEnd(rt);
  if (rt.masterDead.load() || rt.masterWatch.exited()) {
    // Nothing of the instance may outlive its processes: the dead master cannot remove its
    // segment, so a client that saw it die does, if the name still refers to the segment this
    // client mapped (a newer master's fresh segment under the same name is left alone).
    rt.segment.removeNameIfStillOurs(rt.instance);
  }
  if (rt.gpu) {
    std::vector<GpuWorkerStats*> stats;
    for (auto& s : rt.gpuStats) stats.push_back(s.get());
    const bool clean = !rt.masterDead.load() && outcome.status != RunStatus::kPeerDied && outcome.status != RunStatus::kError &&
                       outcome.status != RunStatus::kTimeout;
    rt.gpu->finish(clean, stats);
    rt.gpu.reset();
  }
  lock.lock();
  slot.state.store(static_cast<std::uint32_t>(ClientState::kExited), std::memory_order_release);
  rt.phase = Phase::kDone;
  return outcome;
}

}  // namespace
}  // namespace client

using client::gMutex;
using client::gRuntime;

Result<void> init(const std::string& clientName, const InitOptions& options) {
  try {
    std::lock_guard<std::mutex> lock(gMutex);
    return client::initLocked(clientName, options);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("init: ") + e.what());
  }
}

Result<void> registerRunnable(const std::string& name, RunnableFunction function, void* userdata) {
  if (function == nullptr) return fail(ErrorCode::kBadParameter, "register runnable '" + name + "': null function");
  std::lock_guard<std::mutex> lock(gMutex);
  client::Registration r;
  r.function = function;
  r.userdata = userdata;
  return client::registerLocked(name, std::move(r));
}

Result<void> registerRunnable(const std::string& name, std::function<void()> function) {
  if (!function) return fail(ErrorCode::kBadParameter, "register runnable '" + name + "': empty function");
  std::lock_guard<std::mutex> lock(gMutex);
  client::Registration r;
  r.callable = std::move(function);
  return client::registerLocked(name, std::move(r));
}

namespace cuda {

Result<void> registerStream(const std::string& name, cudaStream_t stream) {
  try {
    std::lock_guard<std::mutex> lock(gMutex);
    return client::registerStreamLocked(name, stream);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("registerStream: ") + e.what());
  }
}

Result<void> registerSubmitter(const std::string& name, SubmitterFunction function, void* userdata) {
  if (function == nullptr) return fail(ErrorCode::kBadParameter, "register CUDA submitter '" + name + "': null function");
  std::lock_guard<std::mutex> lock(gMutex);
  client::CudaSubmitterRegistration r;
  r.function = function;
  r.userdata = userdata;
  return client::registerCudaSubmitterLocked(name, std::move(r));
}

Result<void> registerSubmitter(const std::string& name, std::function<void(cudaStream_t)> function) {
  if (!function) return fail(ErrorCode::kBadParameter, "register CUDA submitter '" + name + "': empty function");
  std::lock_guard<std::mutex> lock(gMutex);
  client::CudaSubmitterRegistration r;
  r.callable = std::move(function);
  return client::registerCudaSubmitterLocked(name, std::move(r));
}

}  // namespace cuda

Result<std::vector<std::string>> scheduledRunnables() {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gRuntime) return fail(ErrorCode::kInvalidState, "scheduledRunnables: the client is not initialized");
  std::vector<std::string> names;
  for (const std::uint32_t r : client::requiredRunnables(*gRuntime)) names.push_back(gRuntime->schedule.runnables[r].name);
  return names;
}

RunOutcome enterScheduler() {
  try {
    std::unique_lock<std::mutex> lock(gMutex);
    return client::enterLocked(lock);
  } catch (const std::exception& e) {
    return {RunStatus::kError, "", std::string("enterScheduler: ") + e.what()};
  }
}

void exitScheduler() noexcept {
  auto* flag = client::gExitFlag.load();
  auto* attention = client::gAttention.load();
  if (flag == nullptr || attention == nullptr) return;
  flag->store(1, std::memory_order_relaxed);
  ipc::signalWord(*attention);
}

Result<RuntimeInfo> runtimeInfo() {
  if (client::tCurrentInfo == nullptr) {
    return fail(ErrorCode::kInvalidState, "runtimeInfo is only available inside a runnable");
  }
  return *client::tCurrentInfo;
}

void shutdown() {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gRuntime) return;
  if (gRuntime->phase == client::Phase::kEntered) {
    // The scheduler runs in another thread: ask it to end; detaching now would pull the
    // segment from under its workers.
    exitScheduler();
    return;
  }
  client::gExitFlag.store(nullptr);
  client::gAttention.store(nullptr);
  shm::ClientSlot& slot = gRuntime->view.client(gRuntime->clientIndex);
  // A refusal stays visible: the master names the missing runnable from it.
  std::uint32_t state = slot.state.load();
  if (state != static_cast<std::uint32_t>(shm::ClientState::kRefused)) {
    slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kExited), std::memory_order_release);
    ipc::signalWord(gRuntime->view.header().attention);
  }
  gRuntime.reset();
}

}  // namespace tactus
