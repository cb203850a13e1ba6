// The client's tables of the channels (tactus/channel.hpp): per schedule, where each channel's ring
// lies in the segment and which channel each instance writes or reads, with which buffer; built
// once at init, read on the workers' threads without locks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tactus/core/ids.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::client {

struct Runtime;

/// One channel an instance writes or reads.
struct ChannelUse {
  std::uint32_t channel = 0;  ///< the schedule's channel index
  std::uint32_t slot = 0;     ///< ChannelWrite::slot, or the read writer run's slot
  std::uint32_t writer = 0;   ///< a read: the writer instance whose version it reads
  bool write = false;
  bool previousIteration = false;  ///< a read of the writer run of iteration h - 1
};

/// The channels of one schedule of the client.
struct ScheduleChannels {
  std::uint16_t scheduleId = 0;
  std::string scheduleName;
  const shm::SegmentView* view = nullptr;
  std::byte* area = nullptr;            ///< the segment's channel area
  std::vector<shm::ChannelRing> rings;  ///< per channel of the schedule
  std::vector<std::uint32_t> localOf;   ///< per channel id of the client: its index here, or kNone
  std::vector<std::uint32_t> useBegin;  ///< per instance + 1: its uses are uses[useBegin[i], useBegin[i+1])
  std::vector<ChannelUse> uses;         ///< by instance
  std::vector<std::uint32_t> epochOf;   ///< per instance: its epoch's index (its frame release)
  std::vector<std::string> runnableOf;  ///< per instance: its runnable as Client.Runnable (messages)

  /// The use of channel `local` by instance `instance` (a write when `write`), or null.
  const ChannelUse* use(std::uint32_t instance, std::uint32_t local, bool write) const {
    if (std::size_t{instance} + 1 >= useBegin.size()) return nullptr;  // no wrap at 0xFFFFFFFF
    for (std::uint32_t k = useBegin[instance]; k < useBegin[instance + 1]; ++k)
      if (uses[k].channel == local && uses[k].write == write) return &uses[k];
    return nullptr;
  }
  /// The version header of buffer `k` of channel `local`'s ring.
  shm::ChannelVersion* version(std::uint32_t local, std::uint64_t k) const {
    const shm::ChannelRing& r = rings[local];
    return reinterpret_cast<shm::ChannelVersion*>(area + r.offset + k * r.stride);
  }
};

/// Every schedule's channels of a client, and the names of every channel of them (a Channel's id
/// is its index there).
struct ChannelDirectory {
  std::vector<std::string> names;  ///< sorted, unique over the schedules
  std::vector<ScheduleChannels> schedules;

  /// The tables of the schedule with identifier `id`, or null.
  const ScheduleChannels* schedule(std::uint16_t id) const {
    for (const ScheduleChannels& s : schedules)
      if (s.scheduleId == id) return &s;
    return nullptr;
  }
};

/// The tables of schedule `s` (`allNames`: every channel name of the client's schedules, sorted),
/// with no segment: `view` and `area` null; `areaBytes` (if not null) gets the channel area's size
/// the rings need. Also what a test or fuzz entry point builds a directory from.
ScheduleChannels channelTables(const Schedule& s, const std::vector<std::string>& allNames,
                               std::uint64_t* areaBytes = nullptr);

/// Builds the directory of `modes` (the primary first, then its other schedules), checking each
/// segment's channel area against the schedule's rings (kIncompatible when they differ).
Result<std::unique_ptr<ChannelDirectory>> buildChannelDirectory(const std::vector<Runtime*>& modes);

/// Makes `directory` (or none) the one Channel::find and the channels' calls use.
void publishChannelDirectory(const ChannelDirectory* directory);

}  // namespace tactus::client
