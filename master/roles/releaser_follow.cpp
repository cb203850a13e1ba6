// The release loop of a multi-SoC run's non-primary master (see releaser.hpp, iteration_sync.hpp):
// each iteration starts when the primary's release of it arrives (its start mapped to this host's
// clock), never on this master's own period boundary; the primary's stop ends it at the same
// iteration boundary as every SoC. Its other phases are releaseLoop's (release_phases.hpp): the
// iteration close, the frame releases and the drain exist once, in releaser.cpp.
//
//   primary   |start h ....... rel f1 ........ |start h+1
//                 `-> DDS sample (h, start)         `-> DDS sample (h+1, start)
//   follower   await h -> |rel f0 ... rel f1 ...  await h+1 -> (own h done?) |rel f0
#include "roles/releaser.hpp"

#include <limits>

#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

// A follower's loop: releaseLoop's phases, with each boundary at the primary's start (awaitPrimary)
// and no stop decided here. Under a manager it follows one activation, from the iteration the
// primary's starts with (startHyperepoch's).
void Releaser::followLoop(HyperepochId he) {
  Track& own = tracks_[index(he)];
  const std::uint64_t first = own.switchable ? own.firstIteration : 0;
  Loop loop{.he = he,
            .own = own,
            .slot = view_.hyperepoch(he),
            .plan = plan_.hyperepochs[he],
            .follower = true,
            .limit = std::numeric_limits<std::uint64_t>::max(),  // none: the primary decides the stop
            .first = first,
            .periodNs = schedule_.hyperepochs[he].periodNs,
            .iterStartNs = 0,
            .h = first};
  runLoop(loop);
}

// kStartIteration and kAwaitBoundary of a follower: awaits the primary's start of iteration h,
// its boundary, or its stop (recorded as stopAt: no frame of h was released).
PhaseResult Releaser::awaitPrimary(Loop& loop) {
  // While this SoC's part of iteration h - 1 runs, the wait for the primary's start of h is a
  // wait for it too: shown to the stall watch, which names a client of this SoC that hangs.
  if (loop.h > loop.first) showPending(loop.own, loop.plan.instances, loop.h - 1);
  const std::optional<std::int64_t> start = sync_->awaitStart(loop.he, loop.h);
  loop.own.waitSinceNs.store(0, std::memory_order_release);
  if (control_.aborted()) return PhaseResult::kAborted;
  if (!start) {
    loop.slot.stopAt.store(loop.h, std::memory_order_seq_cst);
    return PhaseResult::kStop;
  }
  // The primary skipped periods (its h - 1 overran, say while a link outage held up an end): h
  // starts whole periods after h - 1 did. Counted here too, so every SoC's master says them
  // (logged by the primary alone: a merged report counts each once).
  if (loop.h > loop.first && !freeRunning_ && loop.periodNs > 0) {
    const std::int64_t periods = (*start - loop.boundaryNs + loop.periodNs / 2) / loop.periodNs;
    if (periods > 1) loop.slot.skipped.fetch_add(static_cast<std::uint64_t>(periods - 1));
  }
  // Done with h - 1 by then, h starts here (closePrevious); else once it is (overrun, restartFollowing).
  loop.boundaryNs = *start;
  loop.iterStartNs = *start;
  return PhaseResult::kNext;
}

void Releaser::showPending(Track& track, const std::vector<InstanceId>& instances, std::uint64_t iteration) {
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  for (const InstanceId i : instances) {
    if (shm::sequenceReached(view_.instance(i).done.load(std::memory_order_acquire), target)) continue;
    track.waitInstance.store(index(i), std::memory_order_relaxed);
    track.waitTarget.store(target, std::memory_order_relaxed);
    track.waitSinceNs.store(ipc::monotonicNs(), std::memory_order_release);
    return;
  }
}

}  // namespace tactus::master
