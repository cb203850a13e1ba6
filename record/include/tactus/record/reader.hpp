// The strict recording reader: every check of the format (magic, version, CRCs, sizes, record
// order, references to recorded schedules) is made, and any damage is refused naming the file and
// the byte offset. A file cut inside its last chunk (a master killed mid-write) is read up to its
// last whole chunk, and `stop` says where and why it stops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/record/format.hpp"

namespace tactus::record {

struct RecordedSchedule {
  ScheduleRecord rec{};
  std::string name;
  std::vector<std::string> channels;  ///< names, by channel id
};

struct RecordedVersion {
  VersionRecord rec{};
  std::uint64_t offset = 0;      ///< of the chunk in the file
  std::uint64_t dataOffset = 0;  ///< of the channel bytes in RecordingFile::bytes
};

struct RecordingFile {
  std::string path;
  std::string bytes;  ///< the whole file as read
  FileHeader header{};
  RunRecord run{};
  std::vector<RecordedSchedule> schedules;
  std::vector<RecordedVersion> versions;
  std::vector<ReleaseRecord> releases;
  std::vector<SwitchRecord> switches;
  std::vector<LostRecord> losses;
  std::vector<ClockOffsetRecord> clockOffsets;
  std::optional<EndRecord> end;
  std::uint64_t wholeBytes = 0;  ///< bytes of whole chunks (and the header) read
  /// Empty when the file ends with its end record; else where and why the recording stops.
  std::string stop;

  std::string_view data(const RecordedVersion& v) const {
    return std::string_view(bytes).substr(v.dataOffset, v.rec.dataSize);
  }
  /// The recorded schedule with `identifier`, or null.
  const RecordedSchedule* schedule(std::uint32_t identifier) const;
};

/// Reads a recording file's bytes; `path` names it in messages.
Result<RecordingFile> parseRecording(std::string bytes, const std::string& path);

/// Reads the file at `path`.
Result<RecordingFile> readRecordingFile(const std::string& path);

/// Reads every soc<k>.trec of a recording folder, in SoC order; refused when there is none, or
/// when the files are not soc0..soc<n-1>.
Result<std::vector<RecordingFile>> readRecordingDir(const std::string& dir);

}  // namespace tactus::record
