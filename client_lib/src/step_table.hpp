// A worker's step table: everything the hot path (worker.cpp) needs of each of its instances that
// no iteration changes, resolved before the loop by one function of the client's runtime (its
// schedule, plan, segment view, registrations and GPU engine), so that it can be tested without
// running anything.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

/// Step::coreWait of a step with no predecessor on its core that another worker runs.
inline constexpr std::uint32_t kNoCoreWait = 0xffffffffu;

/// How a step runs.
enum class StepKind : std::uint8_t {
  kCall,     ///< a registered plain function, called directly: no lookup, no engine
  kEngine,   ///< through the worker's engine (alias groups, STM-style registrations; nothing on a non-CPU worker)
  kSubmit,   ///< a submitter on a CUDA stream (GPU engine) or a DLA/PVA queue (queue engine, Step::onQueue)
  kObserve,  ///< work an engine runs (GPU, DLA, VPU): the worker only watches its end, to log it and publish it
};

// What each instance waits for. A CUDA submitter waits for the previous submittee on its own
// stream only until that one is SUBMITTED: the stream's FIFO order does the rest on the GPU.
struct WaitRef {
  std::atomic<std::uint32_t>* word;
  std::atomic<std::uint32_t>* waiters;
  bool previousIteration;
  shm::GpuSlot* gpuWork = nullptr;    ///< a submittee's slot: its fence, when a GPU engine runs it
  bool planned = false;               ///< a CPU predecessor of the same iteration: waited for by the plan
  ipc::PlannedPredecessor plan{};     ///< its planned end and length
  shm::InstanceSlot* slot = nullptr;  ///< the predecessor's slot (its start), with a plan
  /// kYield for a predecessor on another SoC (the master mirrors its end)
  ipc::SpinStyle spin = ipc::SpinStyle::kPause;
  bool seesStart = false;  ///< its start is published here (not on another SoC: only its end is mirrored)
};

// Everything the hot path needs of each instance that no iteration changes, resolved here into
// one contiguous table (and the waits into one flat array): after a long runnable the lines
// and pages the path touches are cold, and every lookup through the schedule (instance, epoch,
// runnable, registration) was a chain of misses on the hand-off. A step is three whole cache
// lines (alignas), all of which the hand-off prefetches (Step::next): its function and userdata
// lie past the first, and before they were warmed each run's call began with a miss after its
// start stamp (STG-50 at 100 us units: runs 0.2 us longer than their WCET at the median, against
// 14 ns in the bare run).
struct alignas(shm::kCacheLine) Step {
  StepKind kind;
  InstanceId instance;
  std::uint32_t frame;      ///< its frame in the epoch
  std::uint64_t frames;     ///< the epoch's frames per hyperepoch iteration (>= 1)
  std::uint32_t firstWait;  ///< its waits: waits[firstWait, endWait)
  std::uint32_t endWait;
  /// The wait (an index into StepTable::waits, among its own) on the instance before it in its
  /// core's timeline in the same iteration when another worker runs that one (another client's
  /// thread on this core); kNoCoreWait otherwise. A pinned worker sleeps on it before anything
  /// else: until that instance ends, the core is another thread's by the plan.
  std::uint32_t coreWait = kNoCoreWait;
  shm::EpochSlot* epoch;    ///< its epoch's release word
  shm::InstanceSlot* self;  ///< its completion word and start
  EpochId epochId;
  RunnableId runnable;                  ///< its runnable (an alias group's: runnableForFrame per frame)
  bool aliasGroup;                      ///< round-robin: the runnable changes with the frame
  bool signalFence;                     ///< GPU work waits for its fence
  bool onQueue;                         ///< kSubmit / kObserve of the queue engine (DLA, VPU), not the GPU's
  std::int64_t frameOffsetNs;           ///< frame * the epoch's period: the iteration's start = release - this
  std::int64_t startTimeNs;             ///< its runnable's StartTime (0: none)
  RunnableFunction function = nullptr;  ///< kCall: the registered plain function
  void* userdata = nullptr;
  /// What the hand-off after it reads next: the next step's three lines, its release word, its
  /// first wait's entry (both its lines) and the word that one waits on (or the step's own start
  /// word), and the hyperepoch's stop word: prefetched as it returns (warmHandOff).
  std::array<const void*, 9> next;
};
static_assert(sizeof(Step) == 3 * shm::kCacheLine, "Step::next prefetches three lines per step");

/// A worker's steps in timeline order, and the waits they index into.
struct StepTable {
  std::vector<Step> steps;
  std::vector<WaitRef> waits;
};

/// Builds worker w's step table (reads rt, changes nothing).
StepTable buildSteps(const Runtime& rt, std::uint32_t w);

}  // namespace tactus::client
