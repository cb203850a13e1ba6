// libtactus's engine-neutral queue registration (a tactus extension; STM has no such call): a
// client runs submitters of DLA and VPU (PVA) work, or of any engine with an in-order queue, by
// registering the queue under its graph name (a DLA_HANDLE or PVA_STREAM resource) with an
// adapter of two functions. tactus supplies the fences and values; the adapter only enqueues.
//
//   tactus::EngineQueueAdapter adapter{&myEngine, &waitOp, &signalOp};
//   tactus::registerEngineQueue("DLA_HANDLE0", myHandle, adapter);
//   tactus::registerRunnable("SubmitDetect", [] { enqueueDetect(myHandle); });  // the submitter
//
// For one submission of the submitter's submittee, in iteration h, tactus calls on the
// submitter's worker thread, in this order and without waiting itself:
//   waitValue(context, queue, F(p), v)  for each predecessor p of the work outside this queue:
//                                       the queue must not run what follows until *F(p) >= v
//   signalValue(context, queue, S, h+1) the work's start word: stored when the queue gets there
//   the submitter's registered function (it enqueues the work on the queue)
//   signalValue(context, queue, F, h+1) the work's fence: stored when the work before it ended
// (on a GPU these are cuStreamWaitValue64 and cuStreamWriteValue64). The words are 64-bit
// fences in the run's shared memory, the same ones CUDA streams wait on and write, so work on
// CPUs, GPUs and these queues in any process orders itself through them. The queue must run
// its operations in order and store the value with release semantics (a plain 64-bit store
// followed by a fence, or std::atomic_ref); it must never block the calling thread on a fence.
#pragma once

#include <cstdint>
#include <string>

#include "tactus/core/result.hpp"

namespace tactus {

/// How tactus drives an engine's in-order queue. Both functions enqueue and return at once:
/// 0 on success, anything else is a failure (the client then stops its run, naming the queue,
/// the call and the value returned).
struct EngineQueueAdapter {
  void* context = nullptr;  ///< passed back to both functions
  /// Enqueue "wait until *fence >= value" (an unsigned 64-bit compare).
  int (*waitValue)(void* context, void* queue, const volatile std::uint64_t* fence, std::uint64_t value) = nullptr;
  /// Enqueue "*fence = value once the work queued before this has ended".
  int (*signalValue)(void* context, void* queue, volatile std::uint64_t* fence, std::uint64_t value) = nullptr;
};

/// Registers `queue` as the client-local engine queue `name` (a DLA_HANDLE or PVA_STREAM resource
/// of the graph), in every schedule of the client that has it. Between init and enterScheduler.
/// kBadParameter: a null queue or adapter function; kNotFound: no such DLA_HANDLE/PVA_STREAM of
/// this client; kAlreadyExists: the name or the queue is registered already. Submitters holding
/// the queue are registered as plain runnables (registerRunnable); a scheduled DLA_HANDLE or
/// PVA_STREAM left unregistered makes enterScheduler refuse, naming it.
Result<void> registerEngineQueue(const std::string& name, void* queue, const EngineQueueAdapter& adapter);

/// The calls this process made through engine queue adapters over its last run (cumulative).
struct EngineQueueStats {
  std::uint64_t waits = 0;        ///< waitValue calls
  std::uint64_t signals = 0;      ///< signalValue calls (two per submission: start and fence)
  std::uint64_t submissions = 0;  ///< submitter calls run through a queue
};
EngineQueueStats engineQueueStats();

}  // namespace tactus
