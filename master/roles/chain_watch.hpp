// The chain and channel watch: from the records the log drain empties, each chain's measured
// reactions and data ages and each channel's writer runs' versions, published in the statistics
// block's tables (tactus/core/stats_layout.hpp) for tactus-top. It reads the runs' and releases'
// times the drain already holds and, for a channel, the version word of the writer run's buffer
// in the segment: nothing is added to the workers' path.
//
//   chain occurrence (the definitions of tactus/core/channels.hpp, as tactus-report measures a log)
//   reaction  source run S ended  --ChainMap::reactionPath-->  last run L: waits for L's end
//   data age  last run L ended    --ChainMap::dataPath-->      source run S: waits for S's end
//   either    length = end of L - ideal release of S's frame (the master's kRelease record)
//
// An occurrence waits (in a table allocated once) until the drain has seen both runs' ends and the
// release; one still waiting when the hyperepoch has run kChainWindow - 1 iterations past the older
// of its runs (whose end would next be written over) is counted unmatched.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tactus/core/channels.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/stats_layout.hpp"

namespace tactus::master {

/// Measures one schedule's chains and counts its channels' versions. Used on the master's drain
/// (monitor) thread only, between the statistics block's beginWrite and endWrite.
class ChainWatch {
 public:
  /// `schedule` and `view` outlive the watch; `view` has its geometry (the channel area, the statistics
  /// block initialized for the schedule's chains and channels).
  ChainWatch(const Schedule& schedule, const shm::SegmentView& view);

  /// Looks at one drained record: a run of a chain's source or last runnable or of a channel's
  /// writer, or a release of a chain source's epoch.
  void see(const EventRecord& r);
  /// Measures the occurrences whose runs and release are all seen now, gives up those that waited
  /// too long, and writes the chain table.
  void publish();

 private:
  // A time seen for a run or a release: `tag` is its iteration + 1 (0: empty).
  struct Seen {
    std::uint64_t tag = 0;
    std::int64_t ns = 0;
  };
  // An occurrence waiting for its runs' ends and its source's release.
  struct Pending {
    ChainRun source, last;
    bool reaction = true;
  };
  struct Chain {
    ChainMap map;
    std::uint32_t lastPosition = 0;
    HyperepochId hyperepoch{};
    std::vector<Pending> pending;  // capacity reserved once
  };

  void seeChannelWrite(const EventRecord& r, InstanceId instance);
  const Seen* end(ChainRun run) const;
  const Seen* release(ChainRun run) const;
  void measure(std::uint32_t chain, const Pending& p, std::int64_t ns, std::int64_t endNs);
  void enqueue(Chain& c, const Pending& p);

  const Schedule& schedule_;
  const shm::SegmentView& view_;  // the hyperepochs' completed counts (a run's whole iteration)
  shm::StatsView block_;
  std::span<std::byte> channelArea_;
  std::vector<shm::ChannelRing> rings_;
  std::vector<Chain> chains_;               // the measured ones (the block's chainCount)
  std::vector<std::int32_t> endSlot_;       // per instance: its row in ends_, or -1
  std::vector<Seen> ends_;                  // rows of kChainWindow, at iteration % kChainWindow
  std::vector<std::int32_t> releaseSlot_;   // per epoch: its first row in releases_, or -1
  std::vector<Seen> releases_;              // per frame a row of kChainWindow
  std::vector<std::uint32_t> writesBegin_;  // per instance + 1: its range in writesOf_ (CSR)
  std::vector<std::uint32_t> writesOf_;     // indices into schedule.channelWrites
  std::vector<std::uint8_t> startsChain_;   // per instance: a source run of a measured chain
  std::vector<std::uint8_t> endsChain_;     // per instance: a last run of a measured chain
  std::vector<std::int64_t> latestOf_;      // per hyperepoch: the newest iteration of a chain run seen
  std::vector<ChainRun> path_;              // reused: a chain's runs
};

}  // namespace tactus::master
