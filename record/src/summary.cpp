#include "tactus/record/summary.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/text.hpp"

namespace tactus::record {
namespace {

struct ChannelStats {
  std::uint64_t versions = 0;
  std::uint64_t bytes = 0;
  std::uint64_t firstIteration = 0;
  std::uint64_t lastIteration = 0;
};

// A multi-SoC file's clock: the primary's, or a follower's last estimate of the primary's clock.
void describeClock(std::ostringstream& out, const RecordingFile& f) {
  const ClockOffsetRecord& last = f.clockOffsets.back();
  if (last.peerSoc == f.header.soc) {
    out << "  clock: the primary SoC's (the others' times move onto it)\n";
    return;
  }
  out << "  clock: the primary SoC " << last.peerSoc << "'s is this one's + " << last.offsetNs / 1000 << " us";
  if (last.uncertaintyNs >= 0) out << " within " << (last.uncertaintyNs + 999) / 1000 << " us";
  else out << " (one-way: no bound known)";
  out << " (last of " << f.clockOffsets.size() << " estimates"
      << (separateClocks(last.offsetNs) ? "" : "; under 1 ms: taken as one clock") << ")\n";
}

void describeFile(std::ostringstream& out, const RecordingFile& f) {
  out << f.path << ": SoC " << f.header.soc << ", " << f.bytes.size() << " bytes"
      << ((f.header.flags & kFlagReplay) != 0U ? ", a replay" : "") << "\n";
  std::map<std::pair<std::uint32_t, std::uint32_t>, ChannelStats> stats;
  for (const RecordedVersion& v : f.versions) {
    ChannelStats& s = stats[{v.rec.scheduleId, v.rec.channel}];
    if (s.versions++ == 0) s.firstIteration = v.rec.iteration - 1;
    s.bytes += v.rec.dataSize;
    s.lastIteration = v.rec.iteration - 1;
  }
  for (const RecordedSchedule& s : f.schedules) {
    out << "  schedule " << tactus::quoted(s.name) << " id " << s.rec.identifier << ", content hash "
        << hashToHex(s.rec.contentHash) << ", " << s.rec.channelCount << " channels\n";
    for (std::uint32_t c = 0; c < s.channels.size(); ++c) {
      const ChannelStats st = stats[{s.rec.identifier, c}];
      out << "    channel " << tactus::quoted(s.channels[c]) << ": " << st.versions << " versions, " << st.bytes
          << " bytes";
      if (st.versions > 0) out << ", iterations " << st.firstIteration << ".." << st.lastIteration;
      out << "\n";
    }
  }
  out << "  " << f.versions.size() << " versions, " << f.releases.size() << " releases, " << f.switches.size()
      << " switches, " << f.clockOffsets.size() << " clock offsets\n";
  if (!f.clockOffsets.empty()) describeClock(out, f);
  std::uint64_t lost = 0;
  for (const LostRecord& l : f.losses) lost += l.count;
  if (lost > 0) out << "  LOST: " << lost << " versions in " << f.losses.size() << " loss records\n";
  if (f.end) out << "  ended cleanly (master exit " << f.end->exitCode << ")\n";
  else out << "  stops: " << f.stop << "\n";
}

constexpr const char* kCsvHeader = "soc,schedule,channel,writer_instance,iteration,written_ns,source_ns,bytes\n";

void writeStampRows(std::ostream& out, const RecordingFile& f, std::uint32_t channel) {
  for (const RecordedVersion& v : f.versions)
    if (v.rec.channel == channel)
      out << f.header.soc << ',' << v.rec.scheduleId << ',' << v.rec.channel << ',' << v.rec.writerInstance << ','
          << v.rec.iteration - 1 << ',' << v.rec.writtenNs << ',' << v.rec.sourceNs << ',' << v.rec.dataSize << '\n';
}

// A channel name as a file name: bytes other than letters, digits, '-', '_' and '.' become '_'.
std::string fileNameOf(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.')) c = '_';
  if (out.empty() || out[0] == '.') out.insert(0, "_");
  return out;
}

}  // namespace

std::string describeRecording(const std::vector<RecordingFile>& files) {
  std::ostringstream out;
  for (const RecordingFile& f : files) describeFile(out, f);
  return out.str();
}

Result<ChannelRef> findChannel(const std::vector<RecordingFile>& files, const std::string& name) {
  std::string known;
  std::optional<ChannelRef> found;
  for (std::size_t i = 0; i < files.size(); ++i)
    for (const RecordedSchedule& s : files[i].schedules)
      for (std::uint32_t c = 0; c < s.channels.size(); ++c) {
        if (s.channels[c] != name) {
          known += (known.empty() ? "" : ", ") + s.channels[c];
          continue;
        }
        // Every SoC's file names every channel; the channel's own SoC's holds its versions.
        const ChannelRef ref{i, s.rec.identifier, c};
        for (const RecordedVersion& v : files[i].versions)
          if (v.rec.scheduleId == ref.schedule && v.rec.channel == c) return ref;
        if (!found) found = ref;
      }
  if (found) return *found;
  return fail(ErrorCode::kNotFound, "no channel " + tactus::quoted(name) + " in the recording (channels: " +
                                        (known.empty() ? std::string("none") : known) + ")");
}

void writeStampsCsv(std::ostream& out, const std::vector<RecordingFile>& files, std::uint32_t channel) {
  out << kCsvHeader;
  for (const RecordingFile& f : files) writeStampRows(out, f, channel);
}

Result<std::uint64_t> exportChannel(const std::vector<RecordingFile>& files, const ChannelRef& ref,
                                    const std::string& outDir) {
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  if (ec) return fail(ErrorCode::kIo, "export folder " + outDir + ": " + ec.message());
  const RecordingFile& f = files.at(ref.file);
  const std::string name = fileNameOf(f.schedule(ref.schedule)->channels.at(ref.channel));
  std::uint64_t n = 0;
  for (const RecordedVersion& v : f.versions) {
    if (v.rec.scheduleId != ref.schedule || v.rec.channel != ref.channel) continue;
    std::string path = outDir;
    path += "/" + name + "_" + std::to_string(v.rec.iteration - 1);
    path += "_" + std::to_string(v.rec.writerInstance) + ".bin";
    if (auto ok = writeFileAtomically(path, f.data(v), "exported version"); !ok) return ok.error();
    ++n;
  }
  std::ostringstream csv;
  csv << kCsvHeader;
  writeStampRows(csv, f, ref.channel);
  if (auto ok = writeFileAtomically(outDir + "/" + name + ".csv", csv.str(), "exported stamps"); !ok) return ok.error();
  return n;
}

}  // namespace tactus::record
