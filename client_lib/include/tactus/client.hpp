// libtactus's C++ API: a client process attaches to a tactus master, registers its runnables by
// the names of the compiled schedule, and hands its threads to the runtime until the run ends.
//
//   tactus::init("Client0", {.instance = "demo"});           // blocks until a master publishes
//   tactus::registerRunnable("ReadCamera", [] { ... });
//   tactus::RunOutcome outcome = tactus::enterScheduler();  // runs this client's part
//   tactus::shutdown();
//
// One client per process (as in STM); every function is thread-safe except where noted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus {

/// A CPU runnable as a C function with user data (STM's stmRunnable_t).
using RunnableFunction = void (*)(void* userdata);

/// Scheduling policy of a client's worker threads (STM: thread priority per client).
enum class WorkerPolicy {
  kInherit,     ///< TACTUS_WORKER_POLICY decides; unset: the threads keep the process's policy
  kOther,       ///< SCHED_OTHER (drops a real-time policy the process inherited)
  kFifo,        ///< SCHED_FIFO at workerPriority
  kRoundRobin,  ///< SCHED_RR at workerPriority
};

/// Options for init.
struct InitOptions {
  /// The instance (STM: discriminator) to attach to; must equal the master's -D. Empty: the
  /// environment variable TACTUS_INSTANCE, else "default" (what systemd units set per client).
  std::string instance;
  /// How long init waits for a master, in milliseconds; < 0 waits forever.
  std::int64_t timeoutMs = -1;
  /// Policy of the worker threads that run runnables; kInherit reads TACTUS_WORKER_POLICY
  /// (`fifo:PRIO`, `rr:PRIO` or `other`). init refuses (kBadParameter) a policy the process may
  /// not use, naming RLIMIT_RTPRIO and the unit setting LimitRTPRIO=.
  WorkerPolicy workerPolicy = WorkerPolicy::kInherit;
  /// Priority for kFifo and kRoundRobin, 1..99.
  int workerPriority = 0;
  /// Lock the process's memory (mlockall, current and future pages) at init; TACTUS_LOCK_MEMORY=1
  /// asks for it too. init refuses when RLIMIT_MEMLOCK forbids it, naming LimitMEMLOCK=.
  bool lockMemory = false;
};

/// Why enterScheduler returned.
enum class RunStatus {
  kFrameLimit,       ///< the master ran its -e iterations
  kExitRequested,    ///< some client called exitScheduler
  kStoppedBySignal,  ///< the master got SIGTERM or SIGINT
  kTimeout,          ///< a client did not come in time (RunOutcome::peer names it)
  kPeerDied,  ///< a client or the master died, or a client was stuck (RunOutcome::peer names it; "master" for the
              ///< master)
  kError,     ///< anything else (a refusal, a damaged segment); RunOutcome::message says what
};

/// Lower-case name of a status (`frame-limit`, `peer-died`, ...).
const char* runStatusName(RunStatus status);

/// What enterScheduler reports.
struct RunOutcome {
  RunStatus status = RunStatus::kError;
  std::string peer;     ///< the client (or "master") the status names, if any
  std::string message;  ///< a sentence saying what happened
};

/// What a runnable can ask about the frame it runs in.
struct RuntimeInfo {
  std::uint64_t hyperepochIteration = 0;  ///< iteration of the runnable's hyperepoch, from 0
  std::uint64_t epochIteration = 0;       ///< frames of the runnable's epoch before this one (STM's epochIterations)
  std::uint32_t frame = 0;                ///< frame within the hyperepoch iteration
  std::uint16_t scheduleId = 0;           ///< the running schedule's identifier
  std::uint32_t instance = 0;             ///< the schedule's InstanceId
};

/// Attaches to the master of `options.instance` as client `clientName`, waiting for the master
/// (kTimeout after options.timeoutMs). Errors: kBadParameter (bad name), kNotFound (the schedule
/// has no such client), kAlreadyExists (the client is attached already), kIncompatible (segment
/// of another layout version), kInvalidState (already initialized).
Result<void> init(const std::string& clientName, const InitOptions& options = {});

/// Registers a CPU runnable by its client-local name in the schedule. Errors: kInvalidState
/// (not initialized, or after enterScheduler), kNotFound (this client has no such runnable),
/// kAlreadyExists (registered twice), kBadParameter (null function).
Result<void> registerRunnable(const std::string& name, RunnableFunction function, void* userdata);

/// Registers a CPU runnable as a C++ callable; same errors.
Result<void> registerRunnable(const std::string& name, std::function<void()> function);

/// The client-local names of the runnables this client must register (kInvalidState before init).
Result<std::vector<std::string>> scheduledRunnables();

/// Runs this client's part of the schedule: one worker thread per CPU resource the client uses,
/// pinned to its core. Returns when the run ends, saying why. A scheduled runnable that was not
/// registered is an error (naming it) unless the master runs with --allow-unregistered-runnables.
RunOutcome enterScheduler();

/// Asks every client to return from enterScheduler at the next hyperepoch boundary. Callable
/// from a runnable, another thread or a signal handler (async-signal-safe: atomic stores and a
/// futex wake). Does nothing before init.
void exitScheduler() noexcept;

/// Registers a schedule-switch callback (STM's stmRegisterCallBack): under a schedule manager,
/// during a rollover it is called once per hyperepoch this client runs in, before the new
/// schedule's first frame there, with the starting schedule's identifier and the hyperepoch's
/// index; the frame waits for it. Call between init and enterScheduler. Errors: kInvalidState,
/// kBadParameter (empty function).
Result<void> registerSwitchCallback(std::function<void(std::uint16_t scheduleId, std::uint16_t hyperepoch)> callback);

/// Inside a runnable: the frame it runs in (kInvalidState elsewhere).
Result<RuntimeInfo> runtimeInfo();

/// Inside a runnable: the logical clock, for a runnable that needs "now" (to stamp its output,
/// to age data): its frame's ideal release time, CLOCK_MONOTONIC ns, the same for every runnable
/// of the frame and for every call during it. Under `tactus-master --replay` it is the recorded
/// run's value for the same frame (schedule, epoch, iteration, frame), whatever the replay's rate,
/// so output stamped with it is byte-identical in the recorded run and its replays. Errors:
/// kInvalidState (outside a runnable), kNotFound (a replay whose recording holds no release of the
/// frame).
Result<std::int64_t> logicalNowNs();

/// Detaches from the master and forgets the registrations; init may be called again. While
/// enterScheduler runs in another thread it only requests exit (call it again after it returned).
/// Not for a signal handler: call exitScheduler there (async-signal-safe).
void shutdown();

}  // namespace tactus
