// The recording file format (docs/design/recording.md). A recording is a folder with one file per
// SoC, soc<k>.trec. A file is a 32-byte FileHeader, then chunks appended one after the other:
// a 24-byte ChunkHeader ("CHNK", type, payload size, payload CRC-32, header CRC-32) and its
// payload, whose first bytes are the fixed struct of its type (little-endian, frozen below); a
// version chunk's channel bytes follow its struct, a schedule chunk's name follows its struct.
// Append-only: a file cut anywhere holds a readable prefix of whole chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tactus::record {

/// "TACTREC\0": the first 8 bytes of a recording file.
inline constexpr char kFileMagic[8] = {'T', 'A', 'C', 'T', 'R', 'E', 'C', '\0'};
/// The format version this build writes and reads.
inline constexpr std::uint16_t kFormatVersion = 1;
/// "CHNK" (little-endian): the first 4 bytes of every chunk.
inline constexpr std::uint32_t kChunkMagic = 0x4B4E4843U;
/// The largest payload a chunk may carry (a channel of at most 256 MiB plus its struct).
inline constexpr std::uint32_t kMaxPayload = (256U << 20) + 4096U;

/// FileHeader::flags bits.
inline constexpr std::uint32_t kFlagReplay = 1U;  ///< the run was itself a replay

struct FileHeader {
  char magic[8];
  std::uint16_t version;
  std::uint16_t headerSize;  ///< sizeof(FileHeader)
  std::uint32_t flags;
  std::uint64_t scheduleHash;  ///< content hash of the first schedule
  std::uint32_t soc;           ///< the SoC index that wrote the file (0 single-SoC)
  std::uint32_t headerCrc;     ///< CRC-32 of the 28 bytes before it
};
static_assert(sizeof(FileHeader) == 32);

struct ChunkHeader {
  std::uint32_t magic;  ///< kChunkMagic
  std::uint16_t type;   ///< ChunkType
  std::uint16_t reserved;
  std::uint32_t size;        ///< payload bytes after this header
  std::uint32_t payloadCrc;  ///< CRC-32 of the payload
  std::uint32_t reserved2;
  std::uint32_t headerCrc;  ///< CRC-32 of the 20 bytes before it
};
static_assert(sizeof(ChunkHeader) == 24);

/// The record kinds.
enum class ChunkType : std::uint16_t {
  kRun = 1,          ///< RunRecord: the run began
  kSchedule = 2,     ///< ScheduleRecord + name + channel names: a schedule of the run
  kVersion = 3,      ///< VersionRecord + channel bytes: a version a writer run left in a channel
  kRelease = 4,      ///< ReleaseRecord: a frame release, ideal and actual
  kSwitch = 5,       ///< SwitchRecord: a schedule switch (managed runs)
  kLost = 6,         ///< LostRecord: what the recorder could not record
  kEnd = 7,          ///< EndRecord: the run ended; nothing follows
  kClockOffset = 8,  ///< ClockOffsetRecord: this SoC's clock against another's (multi-SoC)
};

/// Name of a chunk type ("version"), or "unknown".
const char* chunkTypeName(std::uint16_t type);

struct RunRecord {
  std::int64_t runStartNs;   ///< CLOCK_MONOTONIC ns the run began
  std::int64_t wallStartNs;  ///< CLOCK_REALTIME ns at the same instant
  std::uint32_t pid;         ///< the master's
  std::uint32_t socCount;
  std::uint64_t reserved;
};
static_assert(sizeof(RunRecord) == 32);

struct ScheduleRecord {
  std::uint64_t contentHash;
  std::uint32_t identifier;
  std::uint32_t channelCount;
  std::uint32_t instanceCount;
  std::uint32_t nameSize;           ///< bytes of the schedule's name after the struct
  std::uint64_t channelLayoutHash;  ///< hash of every channel's id, name, size and depth
  /// Bytes after the name: the channels' names in id order, each ended by '\n'.
  std::uint32_t channelNamesSize;
  std::uint32_t reserved;
};
static_assert(sizeof(ScheduleRecord) == 40);

struct VersionRecord {
  std::uint64_t iteration;  ///< the writer run's hyperepoch iteration + 1
  std::int64_t writtenNs;
  std::int64_t sourceNs;
  std::uint32_t scheduleId;
  std::uint32_t channel;
  std::uint32_t writerInstance;
  std::uint32_t dataSize;  ///< channel bytes after the struct
};
static_assert(sizeof(VersionRecord) == 40);

struct ReleaseRecord {
  std::uint64_t iteration;  ///< hyperepoch iteration (low 32 bits, as the event log's)
  std::int64_t idealNs;
  std::int64_t actualNs;
  std::uint32_t scheduleId;
  std::uint32_t epoch;  ///< EpochId
  std::uint32_t frame;  ///< within the iteration
  std::uint32_t reserved;
};
static_assert(sizeof(ReleaseRecord) == 40);

struct SwitchRecord {
  std::uint64_t iteration;  ///< the hyperepoch iteration at which it took effect
  std::int64_t atNs;
  std::uint32_t fromSchedule;  ///< 0xFFFFFFFF: none
  std::uint32_t toSchedule;    ///< 0xFFFFFFFF: none
};
static_assert(sizeof(SwitchRecord) == 24);

/// LostRecord::reason values.
enum class LossReason : std::uint32_t {
  kQueueFull = 1,    ///< the writer fell behind: the bounded queue was full
  kTornCopy = 2,     ///< a buffer was rewritten while it was copied
  kOverwritten = 3,  ///< the buffer held a later version when the copier came to it
  kWriteFailed = 4,  ///< the disk refused a write
};

struct LostRecord {
  std::uint64_t count;           ///< versions (or bytes for kWriteFailed) lost
  std::uint64_t firstIteration;  ///< the first lost one's iteration + 1
  std::uint32_t reason;          ///< LossReason
  std::uint32_t channel;         ///< 0xFFFFFFFF: several or none
};
static_assert(sizeof(LostRecord) == 24);

struct EndRecord {
  std::int64_t endNs;
  std::uint64_t versions;  ///< versions recorded
  std::uint64_t lost;      ///< versions lost
  std::uint32_t exitCode;  ///< the master's
  std::uint32_t reserved;
};
static_assert(sizeof(EndRecord) == 32);

struct ClockOffsetRecord {
  std::int64_t offsetNs;       ///< peer clock minus this SoC's clock
  std::int64_t uncertaintyNs;  ///< half the round trip of the estimate
  std::int64_t atNs;
  std::uint32_t peerSoc;
  std::uint32_t reserved;
};
static_assert(sizeof(ClockOffsetRecord) == 32);

/// The fixed struct size of a chunk type (0: unknown type).
std::size_t fixedSize(std::uint16_t type);

/// Makes a file header for `scheduleHash`, SoC `soc` and `flags`, with its CRC.
FileHeader makeFileHeader(std::uint64_t scheduleHash, std::uint32_t soc, std::uint32_t flags);

/// Fills a chunk header for `type` over `payloadSize` bytes whose CRC-32 is `payloadCrc`.
ChunkHeader makeChunkHeader(ChunkType type, std::uint32_t payloadSize, std::uint32_t payloadCrc);

/// The file name of SoC `soc`'s recording in a recording folder: "soc<k>.trec".
std::string recordingFileName(std::uint32_t soc);

}  // namespace tactus::record
