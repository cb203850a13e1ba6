// The client runtime's state, shared by its parts: attach.cpp (finding the master and taking a
// validated copy of what it published), worker.cpp (the worker threads' hot path), client_run.cpp
// (a run) and client.cpp (registration and the public API). A ClientSession is one initialized
// client; it owns one Runtime, its attachment, per schedule of its instance.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "channels.hpp"
#include "cuda_engine.hpp"
#include "engine.hpp"
#include "queue_engine.hpp"
#include "realtime.hpp"
#include "replay_feed.hpp"
#include "tactus/client.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::client {

/// Where the client is in its life.
enum class Phase { kNone, kAttached, kEntered, kDone };

/// A client's attachment to one schedule of its instance (its segment). The schedule, plan, counts
/// and the master's pid are this process's own copies, taken and validated at attach; shared
/// memory is read afterwards only for the words that change during a run. What belongs to the
/// client as a whole is its ClientSession's.
struct Runtime {
  std::string name;
  std::string instance;
  ClientId clientIndex{};
  ipc::Segment segment;
  shm::SegmentView view;  ///< its geometry is the private copy validated at attach
  Schedule schedule;
  RunPlan plan;
  IdVector<RunnableId, Registration> registrations;                ///< per runnable
  IdVector<RunnableId, CudaSubmitterRegistration> cudaSubmitters;  ///< per runnable
  IdVector<ResourceId, CUstream_st*> streams;                      ///< per resource: registered CUDA streams
  std::unique_ptr<CudaEngine> gpu;                                 ///< set in enterScheduler when CUDA submitters exist
  IdVector<ResourceId, EngineQueueRegistration> engineQueues;      ///< per resource: registered DLA/PVA queues
  std::unique_ptr<QueueEngine> queues;  ///< set in enterScheduler when DLA/VPU submitters run on queues
  std::vector<std::unique_ptr<GpuWorkerStats>> gpuStats;  ///< per worker index
  std::uint32_t masterPid = 0;                            ///< validated at attach; never re-read
  std::int64_t remainsSweptNs = 0;  ///< when attach last looked for a dead master's remains (monotonic)
  std::uint32_t flags = 0;          ///< shm::HeaderFlags, copied at attach
  ipc::ProcessWatch masterWatch;
  std::atomic<bool> masterDead{false};  ///< the master process is gone
  std::atomic<bool> halted{false};      ///< the workers must stop: master gone or segment damaged
  std::string damage;                   ///< what damaged the segment (set before `halted`)
  std::atomic<std::uint32_t> workersRunning{0};
  Phase phase = Phase::kNone;
  std::string instanceSource;  ///< where `instance` came from, for messages ("TACTUS_INSTANCE", ...)
  std::string noteTo;          ///< schedule k > 0: the instance its master hears notes at (noteBoxOf)
  // A master with several schedules (-N) has one segment per schedule; the client is attached
  // to each (ClientSession::attachments), and takes part in those that list it.
  std::uint32_t scheduleCount = 1;     ///< schedules of the instance (the header's scheduleCount)
  const ReplayFeed* replay = nullptr;  ///< --replay: the session's feed (its sources' steps replay)

  /// Whether this client is in this schedule (attach leaves clientIndex kNone when it is not).
  bool member() const { return clientIndex != kNone; }
  /// Whether a schedule manager starts and switches the instance's schedules (-N, with one
  /// schedule or several): workers then run only while their hyperepoch is active.
  bool managed() const { return scheduleCount > 1 || (flags & shm::kFlagManaged) != 0; }
};

/// One initialized client: its attachment to every schedule of its instance, and what belongs to
/// the client as a whole (the worker threads' real-time policy, the switch callbacks, the
/// channels). The first attachment (schedule 0's, always present, member or not) is where exit
/// requests and the run's end are watched, and its `phase` and `workersRunning` are the client's.
struct ClientSession {
  std::vector<std::unique_ptr<Runtime>> attachments;  ///< schedule k's at k, 0..scheduleCount-1
  RealtimePolicy realtime;  ///< the worker threads' policy, checked at init (every schedule's)
  /// Called with the starting schedule's identifier and the hyperepoch's index before a
  /// rollover's first frame.
  std::vector<std::function<void(std::uint16_t, std::uint16_t)>> switchCallbacks;
  std::unique_ptr<ChannelDirectory> channels;  ///< every schedule's channels (tactus/channel.hpp), built at init
  std::unique_ptr<ReplayFeed> replay;          ///< --replay: the replay segment (replay_feed.hpp), attached at init

  ClientSession() = default;
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;
  /// The channels go first, then the attachments from the last schedule's to schedule 0's (the
  /// order of the recursive Runtime this replaced).
  ~ClientSession() {
    channels.reset();
    while (!attachments.empty()) attachments.pop_back();
  }

  Runtime& primary() { return *attachments.front(); }
  const Runtime& primary() const { return *attachments.front(); }
  /// Every attachment, schedule 0's first.
  std::vector<Runtime*> all() const {
    std::vector<Runtime*> out;
    out.reserve(attachments.size());
    for (const auto& a : attachments) out.push_back(a.get());
    return out;
  }
};

/// Where `rt`'s notes to its master go (ipc/notes.hpp): the master's box has the name of its first
/// schedule's segment, also for a client's attachment to schedule k > 0.
inline const std::string& noteBoxOf(const Runtime& rt) { return rt.noteTo.empty() ? rt.instance : rt.noteTo; }

/// Sets rt.instance (and rt.instanceSource) from options.instance, else $TACTUS_INSTANCE, else
/// "default", and checks the name (kBadParameter naming where it came from).
Result<void> chooseInstance(Runtime& rt, const InitOptions& options);

/// Attaches schedule `index` > 0 of the primary's instance into `mode` (waiting for its segment);
/// a client absent from that schedule is attached with clientIndex kNone (member()). Called by init.
Result<void> attachMode(Runtime& mode, const Runtime& primary, std::uint32_t index, const InitOptions& options);

/// The body of a worker thread under a schedule manager: sleeps while its hyperepoch is stopped,
/// runs the client's switch callbacks before a rollover's first frame (the client's first worker
/// of the hyperepoch), runs the worker while the hyperepoch is active, until the run ends.
void runSwitchingWorker(Runtime& rt, std::uint32_t w, const ClientSession& session);

/// Wakes the workers of `rt` parked between activations (runSwitchingWorker), so that they look at
/// the run's end or the halt now rather than at their next backstop look.
void wakeParkedWorkers(const Runtime& rt);

/// Attaches to the instance's published segment: waits for a live master (saying once per reason
/// why it waits), removes a segment whose master is dead, validates the header, takes the private
/// copies of the geometry, flags, schedule and plan, and claims the slot of client `rt.name`.
Result<void> attach(Runtime& rt, const InitOptions& options);

/// The body of one worker thread: runs worker `w`'s instances in timeline order, iteration after
/// iteration from `firstIteration`, until the hyperepoch's stopAt or an abort. Returns the
/// iteration it stopped before (none of its instances of that iteration ran).
std::uint64_t runWorker(Runtime& rt, std::uint32_t w, std::uint64_t firstIteration = 0);

/// The RuntimeInfo of the runnable running on this thread (null outside runnables).
// Initial-exec: an offset from the thread pointer, no __tls_get_addr call (its code and the
// thread's TLS vector were cold lines on the hand-off after a long runnable). 8 bytes of the static
// TLS that glibc keeps for libraries, also when libtactus is dlopen'ed.
extern thread_local const RuntimeInfo* tCurrentInfo __attribute__((tls_model("initial-exec")));

/// What tactus::logicalNowNs reads for the runnable running on this thread (with tCurrentInfo):
/// its frame's epoch slot, whose releaseNs is the frame's ideal release time while the frame runs
/// (the master releases the epoch's next frame only once this one has ended), or under --replay
/// the recorded releases. Set by the worker loop, once per loop; the step's fields per step.
struct FrameClock {
  const shm::EpochSlot* epoch = nullptr;
  std::uint32_t epochId = 0;
  const ReplayTables* replay = nullptr;
};
extern thread_local const FrameClock* tCurrentClock;

}  // namespace tactus::client
