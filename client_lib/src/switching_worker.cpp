// A worker thread under a schedule manager: it sleeps while its hyperepoch is stopped, runs the
// client's switch callbacks before a rollover's first frame, and runs the worker's instances while
// the hyperepoch is active, iteration numbers continuing over activations.
//
//   activation a (SwitchSlot::activation bumped by the master after raising stopAt)
//     -> rollover activation and this is the client's first worker of the hyperepoch:
//        callbacks(startScheduleId, hyperepoch), then acks += 1 (the master waits for it)
//     -> runWorker(from h) until stopAt -> left += 1 (the master waits for it before the next
//        activation, so no worker is still inside the previous one)
#include <algorithm>

#include "runtime.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::client {

namespace {

// How often a stopped worker looks at the run's end by itself: a backstop only. The master bumps
// `activation` when it publishes the end and the client's watching thread wakes the parked workers
// when it halts the run, so a parked worker leaves at once; a 5 ms look took a planned core from
// the running schedule's worker 200 times a second. TACTUS_PARK_LOOK_NS sets it (at least 1 ms):
// the tests raise it to a minute, so that a lost wake shows as a client that does not end.
constexpr std::int64_t kDefaultParkLookNs = 100'000'000;

std::int64_t parkLookNs() {
  static const std::int64_t look =
      std::max<std::int64_t>(ipc::envDurationNs("TACTUS_PARK_LOOK_NS", kDefaultParkLookNs), 1'000'000);
  return look;
}

// Counts the worker in `word` and wakes the master if it sleeps on the slot.
void count(shm::SwitchSlot& slot, std::atomic<std::uint32_t>& word) {
  word.fetch_add(1, std::memory_order_seq_cst);
  if (slot.masterWaiters.load(std::memory_order_seq_cst) != 0) {
    ipc::futexWake(slot.left);
    ipc::futexWake(slot.acks);
  }
}

}  // namespace

void wakeParkedWorkers(const Runtime& rt) {
  if (!rt.member()) return;  // the counts are the client's validated copy
  for (HyperepochId he : IdRange<HyperepochId>(rt.view.counts().hyperepochs)) {
    ipc::futexWake(rt.view.switching(he).activation);
  }
}

void runSwitchingWorker(Runtime& rt, std::uint32_t w, const ClientSession& session) {
  const WorkerPlan& wp = rt.plan.workers[w];
  shm::SwitchSlot& slot = rt.view.switching(wp.hyperepoch);
  const shm::SegmentHeader& header = rt.view.header();
  // The client's first worker of the hyperepoch runs the callbacks and acknowledges them (a
  // client without callbacks is not waited for: it said so in its slot).
  bool first = !session.switchCallbacks.empty();
  for (std::uint32_t o = 0; o < w; ++o) {
    if (rt.plan.workers[o].client == wp.client && rt.plan.workers[o].hyperepoch == wp.hyperepoch) first = false;
  }
  auto ended = [&] {
    return header.state.load(std::memory_order_acquire) >= static_cast<std::uint32_t>(shm::SegmentState::kFinished) ||
           rt.halted.load(std::memory_order_relaxed);
  };
  std::uint32_t seen = 0;
  std::uint64_t h = 0;
  for (;;) {
    std::uint32_t activation = 0;
    while ((activation = slot.activation.load(std::memory_order_acquire)) == seen) {
      if (ended()) return;
      slot.activationWaiters.fetch_add(1, std::memory_order_seq_cst);
      if (slot.activation.load(std::memory_order_seq_cst) == seen) ipc::futexWait(slot.activation, seen, parkLookNs());
      slot.activationWaiters.fetch_sub(1, std::memory_order_seq_cst);
    }
    seen = activation;
    if (ended()) return;
    if (first && slot.rolloverActivation.load(std::memory_order_acquire) == activation) {
      for (const auto& callback : session.switchCallbacks) {
        callback(rt.schedule.identifier, static_cast<std::uint16_t>(wp.hyperepoch));
      }
      count(slot, slot.acks);
    }
    h = runWorker(rt, w, h);
    if (ended()) return;
    count(slot, slot.left);
  }
}

}  // namespace tactus::client
