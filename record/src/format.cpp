#include "tactus/record/format.hpp"

#include <bit>
#include <cstring>

#include "tactus/record/crc32.hpp"

namespace tactus::record {

static_assert(std::endian::native == std::endian::little, "the recording format is little-endian");

const char* chunkTypeName(std::uint16_t type) {
  switch (static_cast<ChunkType>(type)) {
    case ChunkType::kRun: return "run";
    case ChunkType::kSchedule: return "schedule";
    case ChunkType::kVersion: return "version";
    case ChunkType::kRelease: return "release";
    case ChunkType::kSwitch: return "switch";
    case ChunkType::kLost: return "lost";
    case ChunkType::kEnd: return "end";
    case ChunkType::kClockOffset: return "clock offset";
  }
  return "unknown";
}

std::size_t fixedSize(std::uint16_t type) {
  switch (static_cast<ChunkType>(type)) {
    case ChunkType::kRun: return sizeof(RunRecord);
    case ChunkType::kSchedule: return sizeof(ScheduleRecord);
    case ChunkType::kVersion: return sizeof(VersionRecord);
    case ChunkType::kRelease: return sizeof(ReleaseRecord);
    case ChunkType::kSwitch: return sizeof(SwitchRecord);
    case ChunkType::kLost: return sizeof(LostRecord);
    case ChunkType::kEnd: return sizeof(EndRecord);
    case ChunkType::kClockOffset: return sizeof(ClockOffsetRecord);
  }
  return 0;
}

FileHeader makeFileHeader(std::uint64_t scheduleHash, std::uint32_t soc, std::uint32_t flags) {
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, sizeof h.magic);
  h.version = kFormatVersion;
  h.headerSize = sizeof(FileHeader);
  h.flags = flags;
  h.scheduleHash = scheduleHash;
  h.soc = soc;
  h.headerCrc = crc32(0, &h, offsetof(FileHeader, headerCrc));
  return h;
}

ChunkHeader makeChunkHeader(ChunkType type, std::uint32_t payloadSize, std::uint32_t payloadCrc) {
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.type = static_cast<std::uint16_t>(type);
  h.size = payloadSize;
  h.payloadCrc = payloadCrc;
  h.headerCrc = crc32(0, &h, offsetof(ChunkHeader, headerCrc));
  return h;
}

std::string recordingFileName(std::uint32_t soc) { return "soc" + std::to_string(soc) + ".trec"; }

}  // namespace tactus::record
