#include "tactus/record/reader.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "tactus/core/file_io.hpp"
#include "tactus/record/crc32.hpp"

namespace tactus::record {
namespace {

std::string at(const std::string& path, std::uint64_t offset) {
  return path + ": offset " + std::to_string(offset) + ": ";
}

Result<void> checkHeader(const RecordingFile& f) {
  const std::string& b = f.bytes;
  if (b.size() < sizeof(FileHeader)) {
    if (b.size() >= sizeof kFileMagic || std::memcmp(b.data(), kFileMagic, b.size()) == 0)
      return fail(ErrorCode::kParse, at(f.path, 0) + "truncated file header (" + std::to_string(b.size()) + " of " +
                                         std::to_string(sizeof(FileHeader)) + " bytes)");
    return fail(ErrorCode::kIncompatible, at(f.path, 0) + "not a tactus recording (no TACTREC magic)");
  }
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  if (std::memcmp(h.magic, kFileMagic, sizeof h.magic) != 0)
    return fail(ErrorCode::kIncompatible, at(f.path, 0) + "not a tactus recording (no TACTREC magic)");
  if (crc32(0, &h, offsetof(FileHeader, headerCrc)) != h.headerCrc)
    return fail(ErrorCode::kParse, at(f.path, 28) + "file header checksum mismatch (damaged header)");
  if (h.version != kFormatVersion)
    return fail(ErrorCode::kIncompatible, at(f.path, 8) + "recording format version " + std::to_string(h.version) +
                                              ", this build reads " + std::to_string(kFormatVersion));
  if (h.headerSize != sizeof(FileHeader))
    return fail(ErrorCode::kParse, at(f.path, 10) + "file header size " + std::to_string(h.headerSize));
  return {};
}

// The channel names of a schedule record: `count` names, each ended by '\n', none empty.
Result<void> splitChannelNames(std::string_view text, std::uint32_t count, std::vector<std::string>& out) {
  if (count > text.size())
    return fail(ErrorCode::kParse,
                std::to_string(count) + " channels named in " + std::to_string(text.size()) + " bytes");
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos || nl == from)
      return fail(ErrorCode::kParse, "channel names not ended by newlines");
    out.emplace_back(text.substr(from, nl - from));
    from = nl + 1;
  }
  if (out.size() != count)
    return fail(ErrorCode::kParse,
                std::to_string(out.size()) + " channel names for " + std::to_string(count) + " channels");
  return {};
}

// The per-type checks of one whole, checksummed chunk's payload, and its storing.
Result<void> takeChunk(RecordingFile& f, const ChunkHeader& h, std::uint64_t offset) {
  const std::uint64_t p = offset + sizeof(ChunkHeader);
  const char* payload = f.bytes.data() + p;
  const auto type = static_cast<ChunkType>(h.type);
  const std::size_t fixed = fixedSize(h.type);
  const std::string where = at(f.path, offset) + chunkTypeName(h.type) + " chunk: ";
  if (f.end) return fail(ErrorCode::kParse, where + "after the end record");
  const bool first = offset == sizeof(FileHeader);
  if (first != (type == ChunkType::kRun))
    return fail(ErrorCode::kParse, where + (first ? "the first chunk is not the run record" : "a second run record"));
  if (type != ChunkType::kVersion && type != ChunkType::kSchedule && h.size != fixed)
    return fail(ErrorCode::kParse, where + "size " + std::to_string(h.size) + ", expected " + std::to_string(fixed));
  switch (type) {
    case ChunkType::kRun: std::memcpy(&f.run, payload, fixed); break;
    case ChunkType::kSchedule: {
      RecordedSchedule s;
      std::memcpy(&s.rec, payload, fixed);
      if (std::uint64_t{s.rec.nameSize} + s.rec.channelNamesSize != h.size - fixed || s.rec.reserved != 0)
        return fail(ErrorCode::kParse, where + "name and channel names of " + std::to_string(s.rec.nameSize) + " and " +
                                           std::to_string(s.rec.channelNamesSize) + " bytes in " +
                                           std::to_string(h.size - fixed));
      if (f.schedule(s.rec.identifier) != nullptr)
        return fail(ErrorCode::kParse, where + "schedule " + std::to_string(s.rec.identifier) + " recorded twice");
      s.name.assign(payload + fixed, s.rec.nameSize);
      if (auto ok = splitChannelNames(std::string_view(payload + fixed + s.rec.nameSize, s.rec.channelNamesSize),
                                      s.rec.channelCount, s.channels);
          !ok)
        return fail(ErrorCode::kParse, where + ok.error().message);
      f.schedules.push_back(std::move(s));
      break;
    }
    case ChunkType::kVersion: {
      RecordedVersion v;
      std::memcpy(&v.rec, payload, fixed);
      v.offset = offset;
      v.dataOffset = p + fixed;
      if (v.rec.dataSize != h.size - fixed)
        return fail(ErrorCode::kParse, where + "data of " + std::to_string(v.rec.dataSize) + " bytes in " +
                                           std::to_string(h.size - fixed));
      const RecordedSchedule* s = f.schedule(v.rec.scheduleId);
      if (s == nullptr)
        return fail(ErrorCode::kParse, where + "schedule " + std::to_string(v.rec.scheduleId) + " was not recorded");
      if (v.rec.channel >= s->rec.channelCount || v.rec.writerInstance >= s->rec.instanceCount || v.rec.iteration == 0)
        return fail(ErrorCode::kParse, where + "channel " + std::to_string(v.rec.channel) + ", writer instance " +
                                           std::to_string(v.rec.writerInstance) + ", iteration " +
                                           std::to_string(v.rec.iteration) + ": out of the schedule's range");
      f.versions.push_back(v);
      break;
    }
    case ChunkType::kRelease:
      f.releases.push_back({});
      std::memcpy(&f.releases.back(), payload, fixed);
      break;
    case ChunkType::kSwitch:
      f.switches.push_back({});
      std::memcpy(&f.switches.back(), payload, fixed);
      break;
    case ChunkType::kLost:
      f.losses.push_back({});
      std::memcpy(&f.losses.back(), payload, fixed);
      break;
    case ChunkType::kClockOffset: {
      ClockOffsetRecord c;
      std::memcpy(&c, payload, fixed);
      // A run of n SoCs names SoC 0..n-1; a bound is -1 (none known: a one-way estimate) or more.
      if (c.peerSoc >= f.run.socCount || c.uncertaintyNs < -1 || c.reserved != 0)
        return fail(ErrorCode::kParse, where + "SoC " + std::to_string(c.peerSoc) + " of a run of " +
                                           std::to_string(f.run.socCount) + " SoCs, bound " +
                                           std::to_string(c.uncertaintyNs) + " ns: out of range");
      f.clockOffsets.push_back(c);
      break;
    }
    case ChunkType::kEnd:
      f.end.emplace();
      std::memcpy(&*f.end, payload, fixed);
      break;
  }
  return {};
}

}  // namespace

const RecordedSchedule* RecordingFile::schedule(std::uint32_t identifier) const {
  for (const RecordedSchedule& s : schedules)
    if (s.rec.identifier == identifier) return &s;
  return nullptr;
}

Result<RecordingFile> parseRecording(std::string bytes, const std::string& path) {
  RecordingFile f;
  f.path = path;
  f.bytes = std::move(bytes);
  if (auto ok = checkHeader(f); !ok) return ok.error();
  std::memcpy(&f.header, f.bytes.data(), sizeof f.header);
  std::uint64_t offset = sizeof(FileHeader);
  const std::uint64_t size = f.bytes.size();
  while (offset < size) {
    if (size - offset < sizeof(ChunkHeader)) {
      f.stop = at(path, offset) + "cut inside a chunk header (" + std::to_string(size - offset) + " bytes)";
      break;
    }
    ChunkHeader h;
    std::memcpy(&h, f.bytes.data() + offset, sizeof h);
    if (h.magic != kChunkMagic) return fail(ErrorCode::kParse, at(path, offset) + "no CHNK magic (damaged chunk)");
    if (crc32(0, &h, offsetof(ChunkHeader, headerCrc)) != h.headerCrc)
      return fail(ErrorCode::kParse, at(path, offset) + "chunk header checksum mismatch (damaged chunk)");
    if (h.reserved != 0 || h.reserved2 != 0 || fixedSize(h.type) == 0 || h.size > kMaxPayload ||
        h.size < fixedSize(h.type))
      return fail(ErrorCode::kParse, at(path, offset) + "chunk of type " + std::to_string(h.type) + " and " +
                                         std::to_string(h.size) + " bytes: not one this build writes");
    if (size - offset - sizeof h < h.size) {
      f.stop = at(path, offset) + "cut inside a " + chunkTypeName(h.type) + " chunk (" +
               std::to_string(size - offset - sizeof h) + " of " + std::to_string(h.size) + " payload bytes)";
      break;
    }
    if (crc32(0, f.bytes.data() + offset + sizeof h, h.size) != h.payloadCrc)
      return fail(ErrorCode::kParse, at(path, offset) + chunkTypeName(h.type) + " chunk payload checksum mismatch");
    if (auto ok = takeChunk(f, h, offset); !ok) return ok.error();
    offset += sizeof h + h.size;
    f.wholeBytes = offset;
  }
  if (f.wholeBytes == 0) f.wholeBytes = sizeof(FileHeader);
  if (!f.end && f.stop.empty()) f.stop = at(path, offset) + "no end record (the run did not end cleanly)";
  if (!f.stop.empty()) f.stop += "; read up to offset " + std::to_string(f.wholeBytes);
  return f;
}

Result<RecordingFile> readRecordingFile(const std::string& path) {
  auto bytes = readRegularFile(path, "recording", std::uint64_t{1} << 40);
  if (!bytes) return bytes.error();
  return parseRecording(std::move(*bytes), path);
}

Result<std::vector<RecordingFile>> readRecordingDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return fail(ErrorCode::kNotFound, "recording " + dir + ": not a folder");
  std::map<std::uint32_t, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 9 || name.rfind("soc", 0) != 0 || name.substr(name.size() - 5) != ".trec") continue;
    const std::string digits = name.substr(3, name.size() - 8);
    if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    files[static_cast<std::uint32_t>(std::stoul(digits))] = e.path().string();
  }
  if (ec) return fail(ErrorCode::kIo, "recording " + dir + ": " + ec.message());
  if (files.empty()) return fail(ErrorCode::kNotFound, "recording " + dir + ": no soc<k>.trec file in it");
  std::vector<RecordingFile> out;
  for (const auto& [soc, path] : files) {
    if (soc != out.size()) {
      std::string message = "recording " + dir + ": ";
      message += recordingFileName(static_cast<std::uint32_t>(out.size()));
      message += " is missing (" + path + " is there)";
      return fail(ErrorCode::kParse, message);
    }
    auto f = readRecordingFile(path);
    if (!f) return f.error();
    if (f->header.soc != soc)
      return fail(ErrorCode::kParse, path + ": offset 24: written by SoC " + std::to_string(f->header.soc));
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace tactus::record
