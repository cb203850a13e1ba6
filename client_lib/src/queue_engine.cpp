// The engine-neutral queue engine (queue_engine.hpp) and the queue-wait rule it shares with the
// CUDA engine.
#include "queue_engine.hpp"

#include <unistd.h>

#include <algorithm>

#include "fence_wait.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

namespace {

std::atomic<std::uint64_t> gWaits{0};
std::atomic<std::uint64_t> gSignals{0};
std::atomic<std::uint64_t> gSubmissions{0};

// The adapter's view of a fence word: the 64-bit word itself (std::atomic<std::uint64_t> is
// lock-free and has the word's layout), as the CUDA engine hands its device address to the GPU.
volatile std::uint64_t* word(std::atomic<std::uint64_t>& fence) {
  static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t) &&
                std::atomic<std::uint64_t>::is_always_lock_free);
  return reinterpret_cast<volatile std::uint64_t*>(&fence);
}

}  // namespace

ResourceId engineQueueOf(const Schedule& s, InstanceId i) {
  for (const ResourceId res : s.instances[i].resources) {
    if (isEngineQueue(s.resources[res].kind)) return res;
  }
  return kNone;
}

std::vector<WaitCondition> queueWaits(const Schedule& s, const RunPlan& plan,
                                      const IdVector<RunnableId, std::vector<InstanceId>>& byRunnableFrame,
                                      InstanceId submitter, InstanceId work, ResourceId queue) {
  std::vector<WaitCondition> out;
  const auto& declared = s.instances[work].dependencies;
  for (const WaitCondition& c : plan.waits[work]) {
    if (c.instance == submitter) continue;  // the submitter itself: the queue is fed by it
    const InstanceInfo& other = s.instances[c.instance];
    const RunnableKind kind = s.runnables[other.runnable].kind;
    const bool isDeclared = std::find(declared.begin(), declared.end(), c.instance) != declared.end();
    // Another submitter before us on our queue (not a declared dependency): its work is ahead
    // of ours in the queue's FIFO order, and the worker enqueues after it (its `submitted`).
    if (kind == RunnableKind::kSubmitter && !isDeclared && engineQueueOf(s, c.instance) == queue) continue;
    // Work submitted on our own queue is ahead of ours already.
    if (kind == RunnableKind::kSubmittee) {
      const InstanceId j = instanceAt(byRunnableFrame, s.runnables[other.runnable].submittedBy, other.frame);
      if (j != kNone && engineQueueOf(s, j) == queue) continue;
    }
    out.push_back(c);
  }
  return out;
}

Result<void> QueueEngine::prepare(const QueueSetup& setup, RunnableId& refusedSubmitter) {
  setup_ = setup;
  const Schedule& s = *setup.schedule;
  const auto n = static_cast<std::uint32_t>(s.instances.size());
  planOf_.assign(n, -1);
  runsSubmittee_.assign(n, 0);
  plans_.clear();
  const auto byRunnableFrame = instancesByRunnableFrame(s);
  for (InstanceId i : s.instances.ids()) {
    const RunnableInfo& r = s.runnables[s.instances[i].runnable];
    if (r.client != setup.clientIndex || r.kind != RunnableKind::kSubmitter) continue;
    const ResourceId queue = engineQueueOf(s, i);
    if (queue == kNone || !isDlaOrPvaQueue(s.resources[queue].kind)) continue;
    if ((*setup.cudaSubmitters)[s.instances[i].runnable].registered) continue;  // the CUDA engine refuses it
    const InstanceId work = instanceAt(byRunnableFrame, r.submits, s.instances[i].frame);
    if (work == kNone) continue;  // a submitter without a scheduled submittee runs as a plain call
    const EngineQueueRegistration& reg = (*setup.queues)[queue];
    if (reg.queue == nullptr) {
      if (setup.allowUnregistered) continue;  // the engine-less path: its engine's worker marks it done
      refusedSubmitter = s.instances[i].runnable;
      const std::string kind = s.resources[queue].kind == ResourceKind::kDlaHandle ? "DLA_HANDLE" : "PVA_STREAM";
      return fail(ErrorCode::kInvalidState, kind + " " + quoted(s.resources[queue].name) + " of submitter " +
                                                quoted(qualifiedName(s, s.instances[i].runnable)) +
                                                " is not registered (register it with tactus::registerEngineQueue or "
                                                "tactusRegisterEngineQueue before enterScheduler)");
    }
    planOf_[i] = static_cast<std::int32_t>(plans_.size());
    runsSubmittee_[work] = 1;
    plans_.push_back({i, work, s.instances[i].runnable, queue, reg.queue, reg.adapter,
                      queueWaits(s, *setup.plan, byRunnableFrame, i, work, queue)});
  }
  for (const Plan& p : plans_) {
    shm::GpuSlot& slot = setup.view.gpu(p.submittee);
    slot.eventCount = 0;
    slot.ownerPid = static_cast<std::uint32_t>(::getpid());
    // kNone, not kFences: CPU successors wait for the work's done word, which the engine's worker
    // publishes after it saw the fence and took the time it logs. The queue has no clock of its
    // own (a GPU stamps its work), so this keeps the event log's order exact; streams and queues
    // still wait on the fence itself.
    slot.mode.store(static_cast<std::uint32_t>(shm::GpuMode::kNone), std::memory_order_release);
  }
  return {};
}

bool QueueEngine::submissionSuffices(InstanceId i, InstanceId other) const {
  if (!runsSubmitter(i) || runsSubmittee_[other] == 0) return false;
  const InstanceInfo& inst = setup_.schedule->instances[i];
  if (std::find(inst.dependencies.begin(), inst.dependencies.end(), other) != inst.dependencies.end()) return false;
  const ResourceId mine = plans_[static_cast<std::size_t>(planOf_[i])].queueResource;
  return std::any_of(plans_.begin(), plans_.end(),
                     [&](const Plan& p) { return p.submittee == other && p.queueResource == mine; });
}

void QueueEngine::recordFailure(const Plan& p, std::uint64_t h, const char* call, int rc) {
  const std::lock_guard<std::mutex> lock(failureMutex_);
  if (!failure_.empty()) return;
  failure_ = std::string("the engine queue adapter's ") + call + " returned " + std::to_string(rc) + " for queue " +
             quoted(setup_.schedule->resources[p.queueResource].name) + " of submitter " +
             quoted(qualifiedName(*setup_.schedule, p.runnable)) + " in iteration " + std::to_string(h) +
             ": the queue's order is lost, so the client stops (fix the adapter or the queue)";
}

bool QueueEngine::submit(InstanceId i, std::uint64_t h, std::int64_t& bodyStartNs, std::int64_t& bodyEndNs) {
  const Plan& p = plans_[static_cast<std::size_t>(planOf_[i])];
  const shm::SegmentView& view = setup_.view;
  // 1. The queue waits for every predecessor's fence, however late its work is submitted.
  for (const WaitCondition& w : p.waits) {
    const std::uint64_t target = w.previousIteration ? h : h + 1;
    if (target == 0) continue;  // the previous iteration of the first one: nothing to wait for
    if (const int rc = p.adapter.waitValue(p.adapter.context, p.queue, word(view.gpu(w.instance).fence), target);
        rc != 0) {
      recordFailure(p, h, "waitValue", rc);
      return false;
    }
    gWaits.fetch_add(1, std::memory_order_relaxed);
  }
  shm::GpuSlot& slot = view.gpu(p.submittee);
  if (const int rc = p.adapter.signalValue(p.adapter.context, p.queue, word(slot.started), h + 1); rc != 0) {
    recordFailure(p, h, "signalValue (the work's start)", rc);
    return false;
  }
  // 2. The user's submitter enqueues the work.
  bodyStartNs = ipc::monotonicNs();
  (*setup_.registrations)[p.runnable].call();
  bodyEndNs = ipc::monotonicNs();
  // 3. Completion: the queue stores the fence after the work; `submitted` lets the next
  //    submitter of this queue enqueue behind it.
  if (const int rc = p.adapter.signalValue(p.adapter.context, p.queue, word(slot.fence), h + 1); rc != 0) {
    recordFailure(p, h, "signalValue (the work's fence)", rc);
    return false;
  }
  gSignals.fetch_add(2, std::memory_order_relaxed);
  gSubmissions.fetch_add(1, std::memory_order_relaxed);
  ipc::publishSequence(slot.submitted, slot.waiters, static_cast<std::uint32_t>(h + 1));
  return true;
}

bool QueueEngine::observe(InstanceId i, std::uint64_t h, const std::function<bool()>& abort, std::int64_t spinNs,
                          std::int64_t& startNs, std::int64_t& endNs) const {
  const shm::GpuSlot& slot = setup_.view.gpu(i);
  if (!waitForFence(slot.started, h + 1, spinNs, abort)) return false;
  startNs = ipc::monotonicNs();
  if (!waitForFence(slot.fence, h + 1, spinNs, abort)) return false;
  endNs = ipc::monotonicNs();
  return true;
}

std::string QueueEngine::failure() const {
  const std::lock_guard<std::mutex> lock(failureMutex_);
  return failure_;
}

}  // namespace tactus::client

namespace tactus {

EngineQueueStats engineQueueStats() {
  return {client::gWaits.load(), client::gSignals.load(), client::gSubmissions.load()};
}

}  // namespace tactus
