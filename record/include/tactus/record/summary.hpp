// What tactus-report --recording shows of a recording: a listing (per SoC file: schedules,
// channels with their versions, bytes and iterations, releases, switches, losses, where it
// stops), a channel's stamps as CSV and its versions as raw files.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/record/reader.hpp"

namespace tactus::record {

/// The listing of a recording's files, for people.
std::string describeRecording(const std::vector<RecordingFile>& files);

/// One channel of a recording: its file, schedule and id. Refused naming the channels there are
/// when no schedule of the recording has a channel `name`.
struct ChannelRef {
  std::size_t file = 0;
  std::uint32_t schedule = 0;
  std::uint32_t channel = 0;
};
Result<ChannelRef> findChannel(const std::vector<RecordingFile>& files, const std::string& name);

/// The versions of `channel` (every file, every schedule when `ref` is null) as CSV: soc,
/// schedule, channel, writer_instance, iteration, written_ns, source_ns, bytes.
void writeStampsCsv(std::ostream& out, const std::vector<RecordingFile>& files, std::uint32_t channel);

/// Writes each version of the channel as OUT/<channel>_<iteration>_<writer>.bin and its stamps as
/// OUT/<channel>.csv; returns how many versions were written.
Result<std::uint64_t> exportChannel(const std::vector<RecordingFile>& files, const ChannelRef& ref,
                                    const std::string& outDir);

}  // namespace tactus::record
