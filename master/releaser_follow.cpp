// The release loop of a multi-SoC run's non-primary master (see releaser.hpp, iteration_sync.hpp):
// each iteration starts when the primary's release of it arrives (its start mapped to this host's
// clock), never on this master's own period boundary; the primary's stop ends it at the same
// iteration boundary as every SoC. The frame releases inside an iteration are those of releaseLoop.
//
//   primary   |start h ....... rel f1 ........ |start h+1
//                 `-> DDS sample (h, start)         `-> DDS sample (h+1, start)
//   follower   await h -> |rel f0 ... rel f1 ...  await h+1 -> (own h done?) |rel f0
#include "releaser.hpp"

#include <algorithm>

#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

void Releaser::followLoop(HyperepochId he) {
  const HyperepochPlan& hp = plan_.hyperepochs[he];
  shm::HyperepochSlot& slot = view_.hyperepoch(he);
  MasterEventRing& events = rings_[he];
  Track& own = tracks_[index(he)];
  auto leave = [&] {
    finished_.fetch_add(1);
    ipc::signalWord(view_.header().attention);
  };
  bool frameLate = false;
  std::uint64_t h = 0;
  for (;; ++h) {
    // While this SoC's part of iteration h - 1 runs, the wait for the primary's start of h is a
    // wait for it too: shown to the stall watch, which names a client of this SoC that hangs.
    if (h > 0) showPending(own, hp.instances, h - 1);
    const std::optional<std::int64_t> start = sync_->awaitStart(he, h);
    own.waitSinceNs.store(0, std::memory_order_release);
    if (control_.aborted()) return leave();
    if (!start) {
      slot.stopAt.store(h, std::memory_order_seq_cst);  // no frame of h was released
      break;
    }
    std::int64_t iterStart = *start;
    if (h > 0) {
      if (instancesDone(hp.instances, h - 1)) {
        judge(own, frameLate);
      } else {
        // This SoC's part of iteration h - 1 overran the primary's start of h: h starts once it ends.
        judge(own, true);
        if (!waitInstances(he, hp.instances, h - 1)) return leave();
        const std::int64_t now = ipc::monotonicNs();
        events.push({static_cast<std::uint16_t>(EventKind::kSkipped), 0, index(he), static_cast<std::uint32_t>(h), 0,
                     iterStart, now});
        iterStart = std::max(iterStart, now);
      }
      slot.completed.store(h);
      frameLate = false;
    }
    // As releaseLoop: each frame at its offset, gated on the previous frame of its epoch.
    if (!releaseFrames(he, h, iterStart, 0, frameLate)) return leave();
  }
  // Stopping at iteration h: let iteration h - 1 finish.
  if (h > 0 && !waitInstances(he, hp.instances, h - 1)) return leave();
  own.endNs.store(ipc::monotonicNs(), std::memory_order_release);
  slot.completed.store(h);
  leave();
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
