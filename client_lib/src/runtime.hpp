// The client runtime's state, shared by its three parts: attach.cpp (finding the master and
// taking a validated copy of what it published), worker.cpp (the worker threads' hot path) and
// client.cpp (registration and the public API).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_engine.hpp"
#include "engine.hpp"
#include "realtime.hpp"
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

/// Everything one initialized client holds. The schedule, plan, counts and the master's pid are
/// this process's own copies, taken and validated at attach; shared memory is read afterwards only
/// for the words that change during a run.
struct Runtime {
  std::string name;
  std::string instance;
  std::uint32_t clientIndex = 0;
  ipc::Segment segment;
  shm::SegmentView view;  ///< its geometry is the private copy validated at attach
  Schedule schedule;
  RunPlan plan;
  std::vector<Registration> registrations;                ///< per RunnableId
  std::vector<CudaSubmitterRegistration> cudaSubmitters;  ///< per RunnableId
  std::vector<CUstream_st*> streams;                      ///< per ResourceId: registered CUDA streams
  std::unique_ptr<CudaEngine> gpu;                        ///< set in enterScheduler when CUDA submitters exist
  std::vector<std::unique_ptr<GpuWorkerStats>> gpuStats;  ///< per worker index
  std::uint32_t masterPid = 0;                            ///< validated at attach; never re-read
  std::uint32_t flags = 0;                                ///< shm::HeaderFlags, copied at attach
  ipc::ProcessWatch masterWatch;
  std::atomic<bool> masterDead{false};  ///< the master process is gone
  std::atomic<bool> halted{false};      ///< the workers must stop: master gone or segment damaged
  std::string damage;                   ///< what damaged the segment (set before `halted`)
  std::atomic<std::uint32_t> workersRunning{0};
  Phase phase = Phase::kNone;
  std::string instanceSource;  ///< where `instance` came from, for messages ("TACTUS_INSTANCE", ...)
  RealtimePolicy realtime;     ///< the worker threads' policy, checked at init
};

/// Sets rt.instance (and rt.instanceSource) from options.instance, else $TACTUS_INSTANCE, else
/// "default", and checks the name (kBadParameter naming where it came from).
Result<void> chooseInstance(Runtime& rt, const InitOptions& options);

/// Attaches to the instance's published segment: waits for a live master (saying once per reason
/// why it waits), removes a segment whose master is dead, validates the header, takes the private
/// copies of the geometry, flags, schedule and plan, and claims the slot of client `rt.name`.
Result<void> attach(Runtime& rt, const InitOptions& options);

/// The body of one worker thread: runs worker `w`'s instances in timeline order, iteration after
/// iteration, until the hyperepoch's stopAt or an abort.
void runWorker(Runtime& rt, std::uint32_t w);

/// The RuntimeInfo of the runnable running on this thread (null outside runnables).
extern thread_local const RuntimeInfo* tCurrentInfo;

}  // namespace tactus::client
