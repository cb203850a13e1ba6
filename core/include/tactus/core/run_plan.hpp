// The run plan: what the runtime derives from a Schedule before running it (which workers
// exist, what each instance waits for, when frames are released). The master and every client
// derive it from the same schedule text, so they agree on worker and instance numbering.
//
// Order, not time, is enforced. Instance i of hyperepoch iteration h starts once
//   - its frame is released (EpochSlot::released),
//   - on every resource it holds, its predecessor in that resource's timeline has finished
//     (the first of a timeline waits for the last one of iteration h - 1),
//   - its graph dependencies (and a submittee's submitter) have finished in iteration h,
//   - a channel's reader run: the writer run of iteration h whose version it reads; a channel's
//     writer run: the reader runs of iteration h of the version it overwrites (channels.hpp),
//   - and release time + StartTime has passed.
#pragma once

#include <cstdint>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus {

/// One thing an instance waits for: another instance finishing iteration h (or h - 1).
struct WaitCondition {
  InstanceId instance{};           ///< the instance waited for
  bool previousIteration = false;  ///< true: its iteration h - 1 (timeline wrap-around)
};

/// A thread of a client: runs, in timeline order, that client's instances whose hardware
/// resource is `resource`. CPU resources get a pinned thread; other hardware (GPUs) is handled
/// by an engine (see the client library's Engine seam).
struct WorkerPlan {
  ClientId client{};                  ///< the client running it
  ResourceId resource{};              ///< its hardware resource
  HyperepochId hyperepoch{};          ///< the resource's hyperepoch
  std::vector<InstanceId> instances;  ///< in the resource's timeline order
};

/// A frame release within a hyperepoch iteration.
struct ReleasePoint {
  std::int64_t offsetNs = 0;  ///< from the iteration's start
  EpochId epoch{};            ///< the epoch released
  std::uint32_t frame = 0;    ///< frame within the iteration
};

/// Per hyperepoch: its release points in time order and all its instances.
struct HyperepochPlan {
  std::vector<ReleasePoint> releases;
  std::vector<InstanceId> instances;  ///< every instance of the hyperepoch
};

/// Everything the runtime needs beyond the Schedule itself.
struct RunPlan {
  std::vector<WorkerPlan> workers;                         ///< by client, then resource (ascending)
  IdVector<InstanceId, std::vector<WaitCondition>> waits;  ///< per instance
  IdVector<InstanceId, std::uint32_t> instanceWorker;      ///< per instance: WorkerPlan index
  IdVector<InstanceId, EpochId> instanceEpoch;             ///< per instance: its epoch
  IdVector<EpochId, std::uint32_t> epochFrameBase;         ///< per epoch: index of its frame 0 in frameInstances
  std::vector<std::vector<InstanceId>> frameInstances;     ///< per (epoch, frame): its instances
  IdVector<HyperepochId, HyperepochPlan> hyperepochs;      ///< per hyperepoch
};

/// Derives the run plan. Fails (kValidation) on a schedule the runtime cannot run: an instance
/// without a hardware resource or client, one missing from its resource's timeline, or frame and
/// instance counts above the shared limits (checked again here: clients derive the plan too).
Result<RunPlan> makeRunPlan(const Schedule& schedule);

/// The runnable an alias-group (round-robin) instance runs in epoch frame count `epochFrame`
/// (= iteration * frames + frame); the instance's own runnable for other kinds; kNone for an
/// empty step.
RunnableId runnableForFrame(const Schedule& schedule, InstanceId instance, std::uint64_t epochFrame);

}  // namespace tactus
