// A client's run (client_run.hpp): each schedule made ready to enter, the workers started and
// watched, and the end read from the master's segment.
#include "client_run.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "registration.hpp"
#include "run_watch.hpp"
#include "runtime.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/notes.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {
namespace {

using shm::ClientState;
using shm::SegmentState;
using shm::StopReason;

constexpr std::int64_t kPollNs = 10'000'000;  // how often a client waiting for the end looks at its master

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
    if (w.client != rt.clientIndex || r.kind != ResourceKind::kCpu || r.core == kNone || ipc::canPinThisThread(r.core))
      continue;
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

}  // namespace

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

// Runs the client's workers of every schedule it is in until they have all left, watching the
// master and the segments meanwhile, and says how the run ended. Without a schedule manager a
// worker runs at once (runWorker); under one (-N, one schedule or several), while the manager has
// its hyperepoch active (runSwitchingWorker).
RunOutcome runWorkers(ClientSession& session) {
  Runtime& primary = session.primary();
  const std::vector<Runtime*> all = session.all();
  const bool managed = primary.managed();
  WorkerExits exits;
  std::vector<std::thread> workers;
  std::string startFailure;  // a worker thread the system would not start (a pids limit, memory)
  for (std::size_t k = 0; k < all.size() && startFailure.empty(); ++k) {
    Runtime* rt = all[k];
    for (std::uint32_t w = 0; rt->member() && w < rt->plan.workers.size() && startFailure.empty(); ++w) {
      if (rt->plan.workers[w].client != rt->clientIndex) continue;
      primary.workersRunning.fetch_add(1);
      const std::string name =
          "tactus-" + (managed ? "s" + std::to_string(k) : std::string()) + "w" + std::to_string(w);
      try {
        startWorker(workers, [&session, &primary, &exits, rt, w, managed, name] {
          // At most 15 characters (`top -H`, perf and /proc show it): tactus's workers, not the process's.
          (void)::pthread_setname_np(::pthread_self(), name.c_str());
          applyWorkerRealtime(session.realtime);  // realtime.cpp: the policy init checked
          if (managed) {
            runSwitchingWorker(*rt, w, session);
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
    if (primary.managed()) removeDeadMastersChannel(primary);
  }
  const bool clean = !primary.masterDead.load() && outcome.status != RunStatus::kPeerDied &&
                     outcome.status != RunStatus::kError && outcome.status != RunStatus::kTimeout;
  endGpuEngines(all, clean);
  return outcome;
}

}  // namespace tactus::client
