// The statistics publisher: from the records the log drain empties, the segment's statistics
// block (tactus/core/stats_layout.hpp) that tactus-top and tactus-manager status read: per runnable
// durations and overruns, per hyperepoch releases, release jitter and skips, the switch history,
// and (through its ChainWatch) per chain the measured reactions and data ages and per channel its
// writer runs' versions. It reads no ring of its own and adds nothing to the workers' path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "roles/chain_watch.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/stats_layout.hpp"

namespace tactus::master {

/// Writes one schedule's statistics block. Used on the master's drain (monitor) thread only: the
/// block's one writer.
class StatsPublisher {
 public:
  /// `schedule` and `view` outlive the publisher; `view` has its geometry, and its statistics
  /// block was initialized for the schedule (SegmentView::initialize).
  StatsPublisher(const Schedule& schedule, const shm::SegmentView& view)
      : schedule_(schedule), block_(view.stats()), chains_(schedule, view) {}

  /// Applies drained records (runs, releases, overruns, skips, switches; the chains' and
  /// channels' figures) as one batch of the block's sequence lock; `nowNs` stamps the batch.
  void see(const EventRecord* records, std::size_t count, std::int64_t nowNs);

 private:
  void seeRun(const EventRecord& r) const;
  void seeRelease(const EventRecord& r) const;
  void seeSwitch(const EventRecord& r) const;

  const Schedule& schedule_;
  shm::StatsView block_;
  ChainWatch chains_;
};

}  // namespace tactus::master
