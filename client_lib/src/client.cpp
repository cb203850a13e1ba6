// libtactus's public API: init (attach.cpp does the attaching), registering runnables, CUDA
// submitters and streams (registration.cpp holds the rules), entering the scheduler (client_run.cpp
// runs the client's part of the run, worker.cpp the workers), exitScheduler, the stop signals and
// shutdown.
#include "tactus/client.hpp"
#include "tactus/cuda.hpp"
#include "tactus/engine_queue.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include "client_run.hpp"
#include "registration.hpp"
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

using shm::ClientState;

// Pointers for exitScheduler, which must be async-signal-safe: no locks, just atomics.
std::atomic<std::atomic<std::uint32_t>*> gExitFlag{nullptr};
std::atomic<std::atomic<std::uint32_t>*> gExitSignal{nullptr};  // the slot's exitSignal, beside gExitFlag
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};
// exitScheduler calls between reading the pointers above and their last store: shutdown clears the
// pointers, then waits for these before it unmaps what they point to (all seq_cst: either a call
// counts itself before shutdown looks, or it reads the cleared pointers).
std::atomic<int> gExitCallsInFlight{0};

std::mutex gMutex;  // guards gSession's set-up and registration (not the hot path)
std::unique_ptr<ClientSession> gSession;

// Attaches schedules 1..N-1 of a master with several schedules; the client must be in one at least.
Result<void> attachModes(ClientSession& session, const InitOptions& options) {
  const Runtime& primary = session.primary();
  for (std::uint32_t k = 1; k < primary.scheduleCount; ++k) {
    auto mode = std::make_unique<Runtime>();
    if (auto ok = attachMode(*mode, primary, k, options); !ok) return ok.error();
    session.attachments.push_back(std::move(mode));
  }
  std::string names;
  for (const Runtime* rt : session.all()) {
    if (rt->member()) return {};
    names += (names.empty() ? "" : ", ") + quoted(rt->schedule.name);
  }
  (void)ipc::sendNote(noteBoxOf(primary), primary.name, "it is in none of the instance's schedules (" + names + ")");
  return fail(ErrorCode::kNotFound,
              "client " + quoted(primary.name) + " is in none of the instance's schedules (" + names + ")");
}

Result<void> initLocked(const std::string& clientName, const InitOptions& options) {
  if (gSession)
    return fail(ErrorCode::kInvalidState, "client " + quoted(gSession->primary().name) + " is already initialized");
  if (clientName.empty()) return fail(ErrorCode::kBadParameter, "the client name is empty");
  auto session = std::make_unique<ClientSession>();
  Runtime& rt = *session->attachments.emplace_back(std::make_unique<Runtime>());
  rt.name = clientName;
  if (auto ok = chooseInstance(rt, options); !ok) return ok.error();
  if (auto ok = setUpRealtime(clientName, options, session->realtime); !ok) return ok.error();
  if (auto ok = attach(rt, options); !ok) return ok.error();
  if (rt.scheduleCount > 1) {
    if (auto ok = attachModes(*session, options); !ok) return ok.error();
  }
  const std::vector<Runtime*> all = session->all();
  for (Runtime* schedule : all) {
    schedule->registrations.resize(schedule->schedule.runnables.size());
    schedule->cudaSubmitters.resize(schedule->schedule.runnables.size());
    schedule->streams.assign(schedule->schedule.resources.size(), nullptr);
    schedule->engineQueues.assign(schedule->schedule.resources.size(), EngineQueueRegistration{});
    schedule->phase = Phase::kAttached;
  }
  auto channels = buildChannelDirectory(all);
  if (!channels) return channels.error();
  session->channels = std::move(*channels);
  publishChannelDirectory(session->channels.get());
  if ((rt.flags & shm::kFlagReplay) != 0) {  // --replay: the sources' recorded versions (replay_feed.hpp)
    auto feed = attachReplay(rt.instance, *session->channels);
    if (!feed) return feed.error();
    session->replay = std::move(*feed);
    for (Runtime* schedule : all) schedule->replay = session->replay.get();
  }
  // Exit requests go through the first schedule that has the client (attachModes: there is one).
  Runtime& home = **std::find_if(all.begin(), all.end(), [](const Runtime* m) { return m->member(); });
  gExitFlag.store(&home.view.client(home.clientIndex).exitRequested);
  gExitSignal.store(&home.view.client(home.clientIndex).exitSignal);
  gAttention.store(&home.view.header().attention);
  gSession = std::move(session);
  return {};
}

// The checks every registration starts with: initialized, CUDA built in (when needed), not yet
// entered. `what` names the call in messages: `register runnable 'X'`.
Result<void> mayRegister(const std::string& what, bool needsCuda) {
  if (!gSession) return fail(ErrorCode::kInvalidState, what + ": the client is not initialized");
  if (needsCuda && !cudaEngineAvailable())
    return fail(ErrorCode::kInvalidState, what + ": libtactus was built without CUDA");
  if (gSession->primary().phase != Phase::kAttached)
    return fail(ErrorCode::kInvalidState, what + ": registration after enterScheduler");
  return {};
}

Result<void> registerLocked(const std::string& name, const Registration& registration) {
  if (auto ok = mayRegister("register runnable '" + name + "'", false); !ok) return ok;
  return registerRunnableIn(*gSession, name, registration);
}

Result<void> registerCudaSubmitterLocked(const std::string& name, CudaSubmitterRegistration registration) {
  if (auto ok = mayRegister("register CUDA submitter '" + name + "'", true); !ok) return ok;
  return registerCudaSubmitterIn(*gSession, name, std::move(registration));
}

Result<void> registerStreamLocked(const std::string& name, CUstream_st* stream) {
  if (auto ok = mayRegister("register CUDA stream '" + name + "'", true); !ok) return ok;
  return registerStreamIn(*gSession, name, stream);
}

Result<void> registerEngineQueueLocked(const std::string& name, const EngineQueueRegistration& queue) {
  if (auto ok = mayRegister("register engine queue '" + name + "'", false); !ok) return ok;
  return registerEngineQueueIn(*gSession, name, queue);
}

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

// enterScheduler, over every schedule of the instance that has the client (one, or several under a
// schedule manager): checks its registrations and starts its GPU engines in each, enters each,
// tells systemd it is ready, and runs its workers until the run ends.
RunOutcome enterLocked(std::unique_lock<std::mutex>& lock) {
  if (!gSession) return {RunStatus::kError, "", "enterScheduler: the client is not initialized"};
  ClientSession& session = *gSession;
  Runtime& primary = session.primary();
  if (primary.phase != Phase::kAttached) {
    return {RunStatus::kError, "", "enterScheduler: the scheduler was entered already"};
  }
  std::vector<Runtime*> mine;
  for (Runtime* rt : session.all()) {
    if (rt->member()) mine.push_back(rt);
  }
  for (Runtime* rt : mine) {
    if (auto refused = prepareSchedule(primary, *rt)) {
      endGpuEngines(mine, true);  // those started already: nothing was queued
      return *refused;
    }
  }
  const auto callbacks = static_cast<std::uint32_t>(session.switchCallbacks.size());
  for (Runtime* rt : mine) {
    rt->phase = Phase::kEntered;
    shm::ClientSlot& slot = rt->view.client(rt->clientIndex);
    slot.switchCallbacks.store(callbacks, std::memory_order_relaxed);  // the master waits for their acks
    slot.state.store(static_cast<std::uint32_t>(ClientState::kEntered), std::memory_order_release);
    ipc::signalWord(rt->view.header().attention);
  }
  primary.phase = Phase::kEntered;
  if (!primary.member()) ipc::signalWord(primary.view.header().attention);
  (void)ipc::notifySystemd("READY=1\nSTATUS=client " + primary.name + " runs on instance " +
                           primary.instance);  // Type=notify
  lock.unlock();                               // exitScheduler and runtimeInfo must not wait for the run
  RunOutcome outcome;
  {
    const StopSignals signals;
    outcome = runWorkers(session);
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
using client::gSession;

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
  if (!gSession) return fail(ErrorCode::kInvalidState, "scheduledRunnables: the client is not initialized");
  std::vector<std::string> names;
  for (client::Runtime* rt : gSession->all()) {  // the union over the schedules
    if (!rt->member()) continue;
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
  gSession->switchCallbacks.push_back(std::move(callback));
  return {};
}

Result<RuntimeInfo> runtimeInfo() {
  if (client::tCurrentInfo == nullptr) {
    return fail(ErrorCode::kInvalidState, "runtimeInfo is only available inside a runnable");
  }
  return *client::tCurrentInfo;
}

Result<std::int64_t> logicalNowNs() {
  const RuntimeInfo* info = client::tCurrentInfo;
  const client::FrameClock* clock = client::tCurrentClock;
  if (info == nullptr || clock == nullptr || clock->epoch == nullptr)
    return fail(ErrorCode::kInvalidState, "logicalNowNs is only available inside a runnable");
  const std::string frame = "frame " + std::to_string(info->frame) + " of epoch " + std::to_string(clock->epochId) +
                            " in iteration " + std::to_string(info->hyperepochIteration) + " of schedule " +
                            std::to_string(info->scheduleId);
  if (clock->replay != nullptr) {  // --replay: the recorded run's value for the same frame
    const shm::ReplayRelease* r =
        clock->replay->release(info->scheduleId, clock->epochId, info->hyperepochIteration, info->frame);
    if (r == nullptr)
      return fail(ErrorCode::kNotFound, "logicalNowNs: the replayed recording holds no release of " + frame);
    return r->idealNs;
  }
  // The frame's ideal release time: written before its release, and over only by the epoch's next
  // release, which waits for this runnable to end.
  const auto target = static_cast<std::uint32_t>(info->epochIteration + 1);
  const shm::EpochSlot& epoch = *clock->epoch;
  if (epoch.released.load(std::memory_order_acquire) == target) {
    const std::int64_t ideal = epoch.releaseNs.load(std::memory_order_acquire);
    if (epoch.released.load(std::memory_order_relaxed) == target) return ideal;
  }
  return fail(ErrorCode::kInvalidState, "logicalNowNs: the release of " + frame + " was written over");
}

void shutdown() {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gSession) return;
  if (gSession->primary().phase == client::Phase::kEntered) {
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
  for (client::Runtime* rt : gSession->all()) {
    if (!rt->member()) continue;
    shm::ClientSlot& slot = rt->view.client(rt->clientIndex);
    // A refusal stays visible: the master names the missing runnable from it.
    std::uint32_t state = slot.state.load();
    if (state != static_cast<std::uint32_t>(shm::ClientState::kRefused)) {
      slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kExited), std::memory_order_release);
      ipc::signalWord(rt->view.header().attention);
    }
  }
  ipc::signalWord(gSession->primary().view.header().attention);
  client::publishChannelDirectory(nullptr);
  gSession.reset();
}

}  // namespace tactus
