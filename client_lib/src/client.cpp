// libtactus's public API: init (attach.cpp does the attaching), registering runnables, CUDA
// submitters and streams (registration.cpp holds the rules), entering the scheduler (worker.cpp
// runs the workers), and the end of the run as the client sees it.
#include "tactus/client.hpp"
#include "tactus/cuda.hpp"
#include "tactus/engine_queue.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "registration.hpp"
#include "run_watch.hpp"
#include "runtime.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/notes.hpp"
#include "tactus/ipc/notify.hpp"
#include "tactus/ipc/process.hpp"
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
  if (!registrations_.contains(task.runnable)) return;  // an empty round-robin step
  const Registration& r = registrations_[task.runnable];
  if (r.registered) r.call();  // unregistered: allowed by --allow-unregistered-runnables
}

namespace {

// The manager channel of a run under a schedule manager whose master died: removed like the
// schedules' segments, when it is still that master's (its pid and start time in the channel).
void removeDeadMastersChannel(const Runtime& primary) {
  // A multi-SoC run's channel is the instance's, not its SoC segment's (`<instance>.soc<k>`).
  std::string instance = primary.instance;
  if (const std::size_t soc = instance.rfind(shm::kSocInstanceMarker);
      soc != std::string::npos && soc + shm::kSocInstanceMarker.size() < instance.size() &&
      instance.find_first_not_of("0123456789", soc + shm::kSocInstanceMarker.size()) == std::string::npos)
    instance.resize(soc);
  const std::string name = shm::managerInstanceName(instance);
  auto channel = ipc::Segment::open(name);
  if (!channel || channel->bytes().size() < sizeof(shm::ManagerChannel)) return;
  const auto* c = reinterpret_cast<const shm::ManagerChannel*>(channel->bytes().data());
  if (c->magic.load(std::memory_order_acquire) != shm::kManagerMagic || c->masterPid.load() != primary.masterPid ||
      c->masterStartTime.load() != primary.view.header().masterStartTime.load())
    return;
  (void)channel->removeNameIfStillOurs(name);
}

using shm::ClientState;
using shm::SegmentState;
using shm::StopReason;

constexpr std::int64_t kPollNs = 10'000'000;  // how often a client waiting for the end looks at its master

// Pointers for exitScheduler, which must be async-signal-safe: no locks, just atomics.
std::atomic<std::atomic<std::uint32_t>*> gExitFlag{nullptr};
std::atomic<std::atomic<std::uint32_t>*> gExitSignal{nullptr};  // the slot's exitSignal, beside gExitFlag
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};
// exitScheduler calls between reading the pointers above and their last store: shutdown clears the
// pointers, then waits for these before it unmaps what they point to (all seq_cst: either a call
// counts itself before shutdown looks, or it reads the cleared pointers).
std::atomic<int> gExitCallsInFlight{0};

std::mutex gMutex;  // guards gRuntime's set-up and registration (not the hot path)
std::unique_ptr<Runtime> gRuntime;

// Attaches schedules 1..N-1 of a master with several schedules; the client must be in one at least.
Result<void> attachModes(Runtime& primary, const InitOptions& options) {
  for (std::uint32_t k = 1; k < primary.scheduleCount; ++k) {
    auto mode = std::make_unique<Runtime>();
    if (auto ok = attachMode(*mode, primary, k, options); !ok) return ok.error();
    primary.modes.push_back(std::move(mode));
  }
  std::string names;
  for (Runtime* rt : allModes(primary)) {
    if (rt->member) return {};
    names += (names.empty() ? "" : ", ") + quoted(rt->schedule.name);
  }
  (void)ipc::sendNote(noteBoxOf(primary), primary.name, "it is in none of the instance's schedules (" + names + ")");
  return fail(ErrorCode::kNotFound,
              "client " + quoted(primary.name) + " is in none of the instance's schedules (" + names + ")");
}

Result<void> initLocked(const std::string& clientName, const InitOptions& options) {
  if (gRuntime) return fail(ErrorCode::kInvalidState, "client " + quoted(gRuntime->name) + " is already initialized");
  if (clientName.empty()) return fail(ErrorCode::kBadParameter, "the client name is empty");
  auto rt = std::make_unique<Runtime>();
  rt->name = clientName;
  if (auto ok = chooseInstance(*rt, options); !ok) return ok.error();
  if (auto ok = setUpRealtime(clientName, options, rt->realtime); !ok) return ok.error();
  if (auto ok = attach(*rt, options); !ok) return ok.error();
  if (rt->scheduleCount > 1) {
    if (auto ok = attachModes(*rt, options); !ok) return ok.error();
  }
  const std::vector<Runtime*> all = allModes(*rt);
  for (Runtime* schedule : all) {
    schedule->registrations.resize(schedule->schedule.runnables.size());
    schedule->cudaSubmitters.resize(schedule->schedule.runnables.size());
    schedule->streams.assign(schedule->schedule.resources.size(), nullptr);
    schedule->engineQueues.assign(schedule->schedule.resources.size(), EngineQueueRegistration{});
    schedule->phase = Phase::kAttached;
  }
  auto channels = buildChannelDirectory(all);
  if (!channels) return channels.error();
  rt->channels = std::move(*channels);
  publishChannelDirectory(rt->channels.get());
  // Exit requests go through the first schedule that has the client (attachModes: there is one).
  Runtime& home = **std::find_if(all.begin(), all.end(), [](const Runtime* m) { return m->member; });
  gExitFlag.store(&home.view.client(home.clientIndex).exitRequested);
  gExitSignal.store(&home.view.client(home.clientIndex).exitSignal);
  gAttention.store(&home.view.header().attention);
  gRuntime = std::move(rt);
  return {};
}

// The checks every registration starts with: initialized, CUDA built in (when needed), not yet
// entered. `what` names the call in messages: `register runnable 'X'`.
Result<void> mayRegister(const std::string& what, bool needsCuda) {
  if (!gRuntime) return fail(ErrorCode::kInvalidState, what + ": the client is not initialized");
  if (needsCuda && !cudaEngineAvailable())
    return fail(ErrorCode::kInvalidState, what + ": libtactus was built without CUDA");
  if (gRuntime->phase != Phase::kAttached)
    return fail(ErrorCode::kInvalidState, what + ": registration after enterScheduler");
  return {};
}

Result<void> registerLocked(const std::string& name, const Registration& registration) {
  if (auto ok = mayRegister("register runnable '" + name + "'", false); !ok) return ok;
  return registerRunnableIn(*gRuntime, name, registration);
}

Result<void> registerCudaSubmitterLocked(const std::string& name, CudaSubmitterRegistration registration) {
  if (auto ok = mayRegister("register CUDA submitter '" + name + "'", true); !ok) return ok;
  return registerCudaSubmitterIn(*gRuntime, name, std::move(registration));
}

Result<void> registerStreamLocked(const std::string& name, CUstream_st* stream) {
  if (auto ok = mayRegister("register CUDA stream '" + name + "'", true); !ok) return ok;
  return registerStreamIn(*gRuntime, name, stream);
}

Result<void> registerEngineQueueLocked(const std::string& name, const EngineQueueRegistration& queue) {
  if (auto ok = mayRegister("register engine queue '" + name + "'", false); !ok) return ok;
  return registerEngineQueueIn(*gRuntime, name, queue);
}

// The master's published end, taken only through fields that hold what a master writes; a header
// written over (a reason out of range, a message that is no text) makes the segment the cause.
RunOutcome outcomeFromSegment(const Runtime& rt) {
  const shm::SegmentHeader& h = rt.view.header();
  if (const std::string fault = rt.view.endFault(); !fault.empty())
    return {RunStatus::kError, "", "segment " + ipc::segmentPath(rt.instance) + " damaged: " + fault};
  RunOutcome out;  // its peer: runWorkers looks in every schedule
  out.message = rt.view.message();
  switch (static_cast<StopReason>(h.stopReason.load())) {
    case StopReason::kFrameLimit: out.status = RunStatus::kFrameLimit; break;
    case StopReason::kExitRequested: out.status = RunStatus::kExitRequested; break;
    case StopReason::kSignal: out.status = RunStatus::kStoppedBySignal; break;
    case StopReason::kTimeout: out.status = RunStatus::kTimeout; break;
    case StopReason::kPeerDied:
    case StopReason::kStuck:  // a stuck client ends the run the way a dead client does
      out.status = RunStatus::kPeerDied;
      break;
    default: out.status = RunStatus::kError; break;  // kError, kDamaged, and any value out of range
  }
  return out;
}

// The master's end message says every schedule's overruns (its "; overruns: ..." parts); a client
// says its own instead, once: the runs of its runnables beyond their WCET over all its schedules,
// from the statistics blocks the master's drain fills (read after the end, off the workers' path).
std::string withOwnOverruns(const std::string& message, const std::vector<Runtime*>& all) {
  std::string out = message.substr(0, message.find("; overruns: "));
  std::uint64_t runs = 0, most = 0;
  std::string mostName;
  for (const Runtime* rt : all) {
    auto stats = shm::readStats(rt->view.stats());
    if (!stats) continue;
    for (RunnableId r : rt->schedule.runnables.ids()) {
      if (rt->schedule.runnables[r].client != rt->clientIndex || index(r) >= stats->runnables.size()) continue;
      const std::uint64_t n = stats->runnables[index(r)].overruns;
      runs += n;
      if (n > most) {
        most = n;
        mostName = qualifiedName(rt->schedule, r);
      }
    }
  }
  if (runs == 0) return out;
  return out + "; overruns: " + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") +
         " beyond WCET (most: " + quoted(mostName) + " " + std::to_string(most) + (most == 1 ? " time)" : " times)");
}

// Waits for the master's final state; watches the master and the segment meanwhile.
RunOutcome awaitEnd(Runtime& rt) {
  shm::SegmentHeader& h = rt.view.header();
  for (;;) {
    const std::uint32_t state = h.state.load(std::memory_order_acquire);
    // A damaged segment first: its state word may be anything, or a private zero page.
    watchMasterAndSegment(rt);
    if (!rt.damage.empty()) return {RunStatus::kError, "", rt.damage};
    if (state >= static_cast<std::uint32_t>(SegmentState::kFinished)) return outcomeFromSegment(rt);
    if (rt.masterDead.load()) return {RunStatus::kPeerDied, "master", "the master died during the run"};
    h.stateWaiters.fetch_add(1);
    ipc::futexWait(h.state, state, kPollNs);
    h.stateWaiters.fetch_sub(1);
  }
}

// Where a message names one of the client's schedules: nowhere when the instance has one.
std::string ofSchedule(const Runtime& rt) {
  return rt.scheduleCount > 1 ? " of schedule " + quoted(rt.schedule.name) : std::string();
}

// Refuses to enter: the client's slot in schedule `rt` says why (`refusal`, with `detail`: a
// runnable or a core), so the master ends the run naming this client and the cause.
RunOutcome refuse(Runtime& primary, Runtime& rt, shm::Refusal refusal, std::uint32_t detail, std::string message) {
  shm::ClientSlot& slot = rt.view.client(rt.clientIndex);
  slot.refusalDetail.store(detail, std::memory_order_relaxed);
  slot.refusal.store(static_cast<std::uint32_t>(refusal), std::memory_order_relaxed);
  slot.state.store(static_cast<std::uint32_t>(ClientState::kRefused), std::memory_order_release);
  ipc::signalWord(rt.view.header().attention);
  if (&rt != &primary) ipc::signalWord(primary.view.header().attention);
  primary.phase = Phase::kDone;
  return {RunStatus::kError, "", std::move(message)};
}

// Whether a thread of this process can be pinned to `core`: tried on a thread of its own (an
// affinity mask from taskset does not forbid it; a core that is offline, absent or outside the
// process's cpuset does).
bool canPin(std::uint32_t core) {
  bool pinned = false;
  std::thread([&] { pinned = ipc::pinThisThread(core); }).join();
  return pinned;
}

// The machine's online cores as the kernel lists them ("0-1"), "" when unknown.
std::string onlineCores() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string list;
  std::getline(in, list);
  return list;
}

// Refuses when a worker of rt's client would be pinned to a core it cannot be pinned to (CPU<n>
// of a graph written for a larger machine): that worker used to run on core n % cores, sharing
// it with another of the plan's parallel lanes. Nothing to check when the master runs without
// pinning (-C).
std::optional<RunOutcome> refuseMissingCore(Runtime& primary, Runtime& rt) {
  if ((primary.flags & shm::kFlagNoPinning) != 0) return std::nullopt;
  for (const WorkerPlan& w : rt.plan.workers) {
    const ResourceInfo& r = rt.schedule.resources[w.resource];
    if (w.client != rt.clientIndex || r.kind != ResourceKind::kCpu || r.core == kNone || canPin(r.core)) continue;
    const std::string online = onlineCores();
    return refuse(primary, rt, shm::Refusal::kCore, r.core,
                  "client '" + rt.name + "' cannot run " + r.name + ofSchedule(rt) +
                      ": its worker would be pinned to core " + std::to_string(r.core) +
                      ", which this process cannot be pinned to (not online, or outside its cpuset" +
                      (online.empty() ? "" : "; online cores: " + online) +
                      "): compile the graph for this machine's cores, or start the master with -C to run without "
                      "pinning");
  }
  return std::nullopt;
}

// Ends the GPU engines of the client's schedules and publishes their statistics (engineStats).
// After a run that did not end cleanly, work may stay queued behind fences that will never be
// reached, its streams still reading and writing the segment: that segment's mapping stays for
// the life of the process (reachable, so neither exit nor LeakSanitizer takes it), never unmapped
// under a waiting stream.
void endGpuEngines(const std::vector<Runtime*>& all, bool clean) {
  std::vector<GpuWorkerStats*> stats;  // every engine's workers (none without an engine)
  for (Runtime* rt : all) {
    const bool queued = rt->queues && rt->queues->active();  // its queues may still write the segment
    rt->queues.reset();
    if (!rt->gpu && !queued) continue;
    if (rt->gpu) {
      for (auto& s : rt->gpuStats) stats.push_back(s.get());
      rt->gpu->finish(clean);
      rt->gpu.reset();
    }
    if (clean) continue;
    static std::mutex keptMutex;
    static auto* kept = new std::vector<ipc::Segment>();
    const std::lock_guard<std::mutex> keep(keptMutex);
    kept->push_back(std::move(rt->segment));
  }
  if (!stats.empty()) publishEngineStats(stats);
}

// Starts the queue engine of one schedule (DLA and VPU submitters on registered engine queues);
// the refusal when a queue such a submitter holds is not registered.
std::optional<RunOutcome> startQueueEngine(Runtime& primary, Runtime& rt) {
  rt.queues = std::make_unique<QueueEngine>();
  RunnableId submitter = kNone;
  const QueueSetup setup{.schedule = &rt.schedule,
                         .plan = &rt.plan,
                         .view = rt.view,
                         .clientIndex = rt.clientIndex,
                         .registrations = &rt.registrations,
                         .cudaSubmitters = &rt.cudaSubmitters,
                         .queues = &rt.engineQueues,
                         .allowUnregistered = (primary.flags & shm::kFlagAllowUnregistered) != 0};
  if (auto ok = rt.queues->prepare(setup, submitter); !ok) {
    rt.queues.reset();
    return refuse(
        primary, rt, shm::Refusal::kGpuEngine, index(submitter),
        "client '" + rt.name + "' cannot start its engine queues" + ofSchedule(rt) + ": " + ok.error().message);
  }
  return std::nullopt;
}

// Makes one schedule of the client ready to enter: every runnable the client runs there is
// registered, and its GPU engine is started when it has CUDA submitters there. Returns the
// refusal (published to the master) when it cannot enter.
std::optional<RunOutcome> prepareSchedule(Runtime& primary, Runtime& rt) {
  if (auto refused = refuseMissingCore(primary, rt)) return refused;
  const bool allow = (primary.flags & shm::kFlagAllowUnregistered) != 0;
  for (const RunnableId r : requiredRunnables(rt)) {
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered || allow) continue;
    return refuse(primary, rt, shm::Refusal::kUnregistered, index(r),
                  "runnable '" + qualifiedName(rt.schedule, r) + "'" + ofSchedule(rt) + " is scheduled for client '" +
                      rt.name + "' but was not registered (or start the master with --allow-unregistered-runnables)");
  }
  if (auto refused = startQueueEngine(primary, rt)) return refused;
  rt.gpuStats.clear();
  for (std::size_t w = 0; w < rt.plan.workers.size(); ++w) rt.gpuStats.push_back(std::make_unique<GpuWorkerStats>());
  RunnableId submitter = kNone;  // named by a refusal: the master ends the run naming this client
  for (RunnableId r : rt.cudaSubmitters.ids()) {
    if (rt.cudaSubmitters[r].registered) submitter = r;
  }
  if (submitter == kNone) return std::nullopt;
  rt.gpu = std::make_unique<CudaEngine>();
  const GpuSetup setup{.schedule = &rt.schedule,
                       .plan = &rt.plan,
                       .view = rt.view,
                       .clientIndex = rt.clientIndex,
                       .spinNs = ipc::spinBudgetNs(),
                       .submitters = &rt.cudaSubmitters,
                       .streams = rt.streams};
  if (auto ok = rt.gpu->prepare(setup); !ok) {
    rt.gpu.reset();
    return refuse(primary, rt, shm::Refusal::kGpuEngine, index(submitter),
                  "client '" + rt.name + "' cannot start its GPU engine" + ofSchedule(rt) + ": " + ok.error().message);
  }
  for (auto& stats : rt.gpuStats) stats->overheadNs.assign(gpuOverheadSampleCapacity(), 0);
  return std::nullopt;
}

// Starts a worker thread; std::system_error when the system will not, and then nothing joinable is
// left in `workers` (a joinable std::thread destroyed would terminate the process).
template <typename Body>
void startWorker(std::vector<std::thread>& workers, Body&& body) {
  workers.emplace_back();  // its place first: a thread that started is always kept
  try {
    workers.back() = std::thread(std::forward<Body>(body));
  } catch (...) {
    workers.pop_back();
    throw;
  }
}

// Runs the client's workers of every schedule it is in until they have all left, watching the
// master and the segments meanwhile, and says how the run ended. With one schedule a worker runs
// at once (runWorker); with several, while the schedule manager has its hyperepoch active
// (runSwitchingWorker).
RunOutcome runWorkers(Runtime& primary) {
  const std::vector<Runtime*> all = allModes(primary);
  const bool managed = primary.scheduleCount > 1;
  WorkerExits exits;
  std::vector<std::thread> workers;
  std::string startFailure;  // a worker thread the system would not start (a pids limit, memory)
  for (std::size_t k = 0; k < all.size() && startFailure.empty(); ++k) {
    Runtime* rt = all[k];
    for (std::uint32_t w = 0; rt->member && w < rt->plan.workers.size() && startFailure.empty(); ++w) {
      if (rt->plan.workers[w].client != rt->clientIndex) continue;
      primary.workersRunning.fetch_add(1);
      const std::string name =
          "tactus-" + (managed ? "s" + std::to_string(k) : std::string()) + "w" + std::to_string(w);
      try {
        startWorker(workers, [&primary, &exits, rt, w, managed, name] {
          // At most 15 characters (`top -H`, perf and /proc show it): tactus's workers, not the process's.
          (void)::pthread_setname_np(::pthread_self(), name.c_str());
          applyWorkerRealtime(primary.realtime);  // realtime.cpp: the policy init checked
          if (managed) {
            runSwitchingWorker(*rt, w, primary);
          } else {
            runWorker(*rt, w);
          }
          exits.leave(primary.workersRunning);
        });
      } catch (const std::system_error& e) {
        primary.workersRunning.fetch_sub(1);
        startFailure = "cannot start its worker thread " + name + " (" + e.what() +
                       "): the system allows this process no more threads (a pids limit, systemd's TasksMax, "
                       "RLIMIT_NPROC) or no memory for one";
      }
    }
  }
  // The workers that did start leave (the run cannot go on without this client's others), and the
  // master hears why (a note: it names this client leaving with it).
  if (!startFailure.empty()) {
    for (Runtime* rt : all) rt->halted.store(true);
    (void)ipc::sendNote(primary.instance, primary.name, startFailure);
    startFailure = "client '" + primary.name + "' " + startFailure;
  }
  // A dead master or a truncated segment must not leave the workers waiting.
  watchWhileWorkersRun(primary, all, exits);
  for (std::thread& t : workers) t.join();
  // A failed CUDA call on the GPU hot path stopped the workers: this client cannot go on, and
  // says why (the master sees it leave). Otherwise awaitEnd prefers the master's published
  // reason, even from a master that died after it.
  std::string gpuFailure;
  for (Runtime* rt : all) {
    if (rt->gpu && gpuFailure.empty()) gpuFailure = rt->gpu->failure();
    if (rt->queues && gpuFailure.empty()) gpuFailure = rt->queues->failure();
  }
  if (gpuFailure.empty()) gpuFailure = startFailure;
  RunOutcome outcome = gpuFailure.empty() ? awaitEnd(primary) : RunOutcome{RunStatus::kError, "", gpuFailure};
  if (gpuFailure.empty()) outcome.message = withOwnOverruns(outcome.message, all);
  for (Runtime* rt : all) {  // the client the end names may be in another schedule only
    const std::uint32_t peer = rt->view.header().stopClient.load();
    if (outcome.peer.empty() && peer < rt->schedule.clients.size()) outcome.peer = rt->schedule.clients[peer].name;
  }
  if (primary.masterDead.load() || primary.masterWatch.exited()) {
    // Nothing of the instance may outlive its processes: the dead master cannot remove its
    // segments, so a client that saw it die does, where the name still refers to the segment this
    // client mapped (a newer master's fresh segment under the same name is left alone).
    for (Runtime* rt : all) rt->segment.removeNameIfStillOurs(rt->instance);
    if (primary.scheduleCount > 1) removeDeadMastersChannel(primary);
  }
  const bool clean = !primary.masterDead.load() && outcome.status != RunStatus::kPeerDied &&
                     outcome.status != RunStatus::kError && outcome.status != RunStatus::kTimeout;
  endGpuEngines(all, clean);
  return outcome;
}

// enterScheduler, over every schedule of the instance that has the client (one, or several under a
// schedule manager): checks its registrations and starts its GPU engines in each, enters each,
// tells systemd it is ready, and runs its workers until the run ends.
// A second stop signal during one run: the default comes back and the signal is raised again.
std::atomic<bool> gStopSignalSeen{false};

// SIGINT or SIGTERM while the workers run: the run ends for the whole instance as with
// exitScheduler(), the signal named (async-signal-safe: atomic stores and a futex wake). A second
// one means the run does not end: the default action (the process ends).
void onStopSignal(int sig) {
  if (gStopSignalSeen.exchange(true)) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  gExitCallsInFlight.fetch_add(1);  // as exitScheduler's own store: shutdown waits for this one
  if (auto* s = gExitSignal.load()) s->store(static_cast<std::uint32_t>(sig), std::memory_order_relaxed);
  gExitCallsInFlight.fetch_sub(1);
  tactus::exitScheduler();
}

// While the workers run, SIGINT and SIGTERM (Ctrl-C, kill, systemd's stop) end the run cleanly
// for every client instead of killing this one (which the master reports as a client that died,
// failing the run). Only where the signal's disposition is the default: an application's own
// handler, or SIG_IGN, stays as it is. TACTUS_CLIENT_SIGNALS=0 leaves both signals alone. The
// defaults come back when the run ends.
class StopSignals {
 public:
  StopSignals() {
    gStopSignalSeen.store(false);
    if (const char* e = std::getenv("TACTUS_CLIENT_SIGNALS"); e != nullptr && std::string_view(e) == "0") return;
    for (std::size_t k = 0; k < kSignals.size(); ++k) {
      struct sigaction old {};
      if (::sigaction(kSignals[k], nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 ||
          old.sa_handler != SIG_DFL) {
        continue;
      }
      struct sigaction sa {};
      sa.sa_handler = onStopSignal;
      sigemptyset(&sa.sa_mask);
      installed_[k] = ::sigaction(kSignals[k], &sa, nullptr) == 0;
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    for (std::size_t k = 0; k < kSignals.size(); ++k) {
      if (!installed_[k]) continue;
      struct sigaction sa {};
      sa.sa_handler = SIG_DFL;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kSignals[k], &sa, nullptr);
    }
  }

 private:
  static constexpr std::array<int, 2> kSignals{SIGINT, SIGTERM};
  std::array<bool, 2> installed_{false, false};
};

RunOutcome enterLocked(std::unique_lock<std::mutex>& lock) {
  if (!gRuntime) return {RunStatus::kError, "", "enterScheduler: the client is not initialized"};
  Runtime& primary = *gRuntime;
  if (primary.phase != Phase::kAttached) {
    return {RunStatus::kError, "", "enterScheduler: the scheduler was entered already"};
  }
  std::vector<Runtime*> mine;
  for (Runtime* rt : allModes(primary)) {
    if (rt->member) mine.push_back(rt);
  }
  for (Runtime* rt : mine) {
    if (auto refused = prepareSchedule(primary, *rt)) {
      endGpuEngines(mine, true);  // those started already: nothing was queued
      return *refused;
    }
  }
  const auto callbacks = static_cast<std::uint32_t>(primary.switchCallbacks.size());
  for (Runtime* rt : mine) {
    rt->phase = Phase::kEntered;
    shm::ClientSlot& slot = rt->view.client(rt->clientIndex);
    slot.switchCallbacks.store(callbacks, std::memory_order_relaxed);  // the master waits for their acks
    slot.state.store(static_cast<std::uint32_t>(ClientState::kEntered), std::memory_order_release);
    ipc::signalWord(rt->view.header().attention);
  }
  primary.phase = Phase::kEntered;
  if (!primary.member) ipc::signalWord(primary.view.header().attention);
  (void)ipc::notifySystemd("READY=1\nSTATUS=client " + primary.name + " runs on instance " +
                           primary.instance);  // Type=notify
  lock.unlock();                               // exitScheduler and runtimeInfo must not wait for the run
  RunOutcome outcome;
  {
    const StopSignals signals;
    outcome = runWorkers(primary);
  }
  lock.lock();
  for (Runtime* rt : mine) {
    rt->view.client(rt->clientIndex)
        .state.store(static_cast<std::uint32_t>(ClientState::kExited), std::memory_order_release);
    rt->phase = Phase::kDone;
  }
  primary.phase = Phase::kDone;
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
  return client::registerLocked(name, r);
}

Result<void> registerRunnable(const std::string& name, std::function<void()> function) {
  if (!function) return fail(ErrorCode::kBadParameter, "register runnable '" + name + "': empty function");
  std::lock_guard<std::mutex> lock(gMutex);
  client::Registration r;
  r.callable = std::move(function);
  return client::registerLocked(name, r);
}

Result<void> registerEngineQueue(const std::string& name, void* queue, const EngineQueueAdapter& adapter) {
  if (queue == nullptr || adapter.waitValue == nullptr || adapter.signalValue == nullptr) {
    return fail(ErrorCode::kBadParameter, "register engine queue '" + name +
                                              "': null queue or adapter function (both waitValue and signalValue "
                                              "are needed)");
  }
  try {
    std::lock_guard<std::mutex> lock(gMutex);
    return client::registerEngineQueueLocked(name, {queue, adapter});
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("registerEngineQueue: ") + e.what());
  }
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
  if (function == nullptr)
    return fail(ErrorCode::kBadParameter, "register CUDA submitter '" + name + "': null function");
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
  for (client::Runtime* rt : client::allModes(*gRuntime)) {  // the union over the schedules
    if (!rt->member) continue;
    for (const RunnableId r : client::requiredRunnables(*rt)) {
      const std::string& name = rt->schedule.runnables[r].name;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
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
  client::gExitCallsInFlight.fetch_add(1);
  auto* flag = client::gExitFlag.load();
  auto* attention = client::gAttention.load();
  if (flag != nullptr && attention != nullptr) {
    flag->store(1, std::memory_order_relaxed);
    ipc::signalWord(*attention);
  }
  client::gExitCallsInFlight.fetch_sub(1);
}

Result<void> registerSwitchCallback(std::function<void(std::uint16_t, std::uint16_t)> callback) {
  if (!callback) return fail(ErrorCode::kBadParameter, "register switch callback: empty function");
  std::lock_guard<std::mutex> lock(gMutex);
  if (auto ok = client::mayRegister("register switch callback", false); !ok) return ok;
  gRuntime->switchCallbacks.push_back(std::move(callback));
  return {};
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
  client::gExitSignal.store(nullptr);
  client::gAttention.store(nullptr);
  // An exitScheduler on another thread (or a signal handler there) that read the pointers before
  // they were cleared stores through them: the segment stays mapped until it has (a few
  // instructions; yielding after a while lets a preempted caller of lower priority finish).
  // shutdown is not for a signal handler: one that interrupted exitScheduler would wait for itself.
  for (int spins = 0; client::gExitCallsInFlight.load() != 0; ++spins) {
    if (spins < 1000) {
      ipc::cpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  for (client::Runtime* rt : client::allModes(*gRuntime)) {
    if (!rt->member) continue;
    shm::ClientSlot& slot = rt->view.client(rt->clientIndex);
    // A refusal stays visible: the master names the missing runnable from it.
    std::uint32_t state = slot.state.load();
    if (state != static_cast<std::uint32_t>(shm::ClientState::kRefused)) {
      slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kExited), std::memory_order_release);
      ipc::signalWord(rt->view.header().attention);
    }
  }
  ipc::signalWord(gRuntime->view.header().attention);
  client::publishChannelDirectory(nullptr);
  gRuntime.reset();
}

}  // namespace tactus
