// The replay segment (tactus-master --replay DIR, docs/design/recording.md): the recorded versions
// of the replayed sources, which a client's worker puts into their channel buffers at their writer
// runs in place of calling the source runnable. The master creates it, whole, before it publishes
// any schedule segment (a client reads it after its acquire of the schedule segment's state), at
// replayInstanceName(instance); the schedule segments' header flag kFlagReplay says that one
// exists. Passive structs only, fixed-size, frozen by static_assert; bump kReplayLayoutVersion on
// ANY change. A client never trusts the geometry read here: it checks every offset and size
// against the segment's size and against its own schedule before it uses it.
//
//   offset 0              ReplayHeader                        (2 cache lines)
//   sourceOffset          ReplaySource[sourceCount]           a replayed (schedule, writer instance)
//   entryOffset           ReplayEntry[entryCount]             per source, by channel then iteration
//   releaseOffset         ReplayRelease[releaseCount]         the recorded frame releases, by
//                                                             (schedule, epoch, iteration, frame)
//   dataOffset            the entries' bytes (dataSize bytes; each entry's at a 64-byte boundary)
#pragma once

#include <cstdint>
#include <string>

namespace tactus::shm {

/// The schedule segments' header flag (shm::HeaderFlags, SegmentHeader::flags) of a replay: the
/// replay segment exists. Kept here, beside the layout it announces.
inline constexpr std::uint32_t kFlagReplay = 1u << 3;

/// "TACTRPLY" as a little-endian integer.
inline constexpr std::uint64_t kReplayMagic = 0x594c505254434154ULL;
inline constexpr std::uint32_t kReplayLayoutVersion = 2;

struct ReplayHeader {
  std::uint64_t magic;  ///< kReplayMagic
  std::uint32_t layoutVersion;
  std::uint32_t headerSize;  ///< sizeof(ReplayHeader)
  std::uint64_t totalSize;   ///< bytes of the segment
  std::uint32_t sourceCount;
  std::uint32_t entryCount;
  std::uint64_t sourceOffset;
  std::uint64_t entryOffset;
  std::uint64_t dataOffset;
  std::uint64_t dataSize;
  std::uint64_t releaseOffset;  ///< version 2: the recorded releases (the logical clock's values)
  std::uint32_t releaseCount;
  std::uint32_t reserved0;
  std::uint64_t reserved[6];
};
static_assert(sizeof(ReplayHeader) == 128);

/// A replayed writer instance: the client's worker fills its buffers instead of calling it.
struct ReplaySource {
  std::uint32_t scheduleId;  ///< the schedule's identifier
  std::uint32_t instance;    ///< the schedule's InstanceId
  std::uint32_t firstEntry;  ///< its entries: [firstEntry, firstEntry + entryCount)
  std::uint32_t entryCount;
};
static_assert(sizeof(ReplaySource) == 16);

/// One recorded version of a source: what its writer run of `iteration` left in `channel`.
struct ReplayEntry {
  std::uint64_t iteration;  ///< the writer run's hyperepoch iteration (not + 1)
  std::int64_t writtenNs;   ///< the recorded stamps
  std::int64_t sourceNs;
  std::uint64_t dataOffset;  ///< from the segment start
  std::uint32_t channel;     ///< the schedule's channel index
  std::uint32_t size;        ///< bytes (the channel's buffer size)
  std::uint64_t reserved[3];
};
static_assert(sizeof(ReplayEntry) == 64);

/// A recorded frame release (the recording's ReleaseRecord): what tactus::logicalNowNs() gives a
/// runnable of that frame in the replay, whatever the replay's own release times.
struct ReplayRelease {
  std::uint64_t iteration;  ///< hyperepoch iteration (low 32 bits, as the recording's)
  std::int64_t idealNs;     ///< the recorded run's ideal release time
  std::uint32_t scheduleId;
  std::uint32_t epoch;  ///< EpochId
  std::uint32_t frame;  ///< within the iteration
  std::uint32_t reserved;
};
static_assert(sizeof(ReplayRelease) == 32);

/// The instance name of the replay segment of `instance` (the master's schedule 0's).
inline std::string replayInstanceName(const std::string& instance) { return instance + ".replay"; }

}  // namespace tactus::shm
