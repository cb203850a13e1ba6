#include "tactus/record/merge.hpp"

#include <algorithm>
#include <sstream>

#include "tactus/core/event_log.hpp"

namespace tactus::record {

Result<FileClock> fileClock(const RecordingFile& f) {
  FileClock clock;
  clock.primary = f.header.soc;
  clock.records = f.clockOffsets.size();
  if (f.clockOffsets.empty()) {
    if (f.run.socCount > 1 && f.header.soc != 0)
      return fail(ErrorCode::kParse, f.path + ": SoC " + std::to_string(f.header.soc) + " of a run of " +
                                         std::to_string(f.run.socCount) +
                                         " SoCs holds no clock offset record: its times cannot be merged");
    clock.primary = 0;  // a single-SoC file, or a primary recorded without clock records: SoC 0's
    clock.isPrimary = f.header.soc == 0;
    return clock;
  }
  clock.primary = f.clockOffsets.front().peerSoc;
  for (const ClockOffsetRecord& c : f.clockOffsets)
    if (c.peerSoc != clock.primary)
      return fail(ErrorCode::kParse, f.path + ": clock offset records name SoC " + std::to_string(clock.primary) +
                                         " and SoC " + std::to_string(c.peerSoc) + " as the primary");
  clock.isPrimary = clock.primary == f.header.soc;
  return clock;
}

std::int64_t offsetToPrimary(const RecordingFile& f, std::int64_t atNs, std::int64_t* uncertaintyNs) {
  const ClockOffsetRecord* in = nullptr;
  for (const ClockOffsetRecord& c : f.clockOffsets)
    if (in == nullptr || c.atNs <= atNs) in = &c;
  if (uncertaintyNs != nullptr) *uncertaintyNs = in != nullptr ? in->uncertaintyNs : 0;
  if (in == nullptr || in->peerSoc == f.header.soc || !separateClocks(in->offsetNs)) return 0;
  return in->offsetNs;
}

Result<std::vector<MergedRelease>> mergeReleases(const std::vector<RecordingFile>& files) {
  std::optional<std::uint32_t> primary;
  for (const RecordingFile& f : files) {
    auto clock = fileClock(f);
    if (!clock) return clock.error();
    if (primary && *primary != clock->primary)
      return fail(ErrorCode::kParse, f.path + ": takes SoC " + std::to_string(clock->primary) +
                                         " for the primary, another file SoC " + std::to_string(*primary) +
                                         ": not the files of one run");
    primary = clock->primary;
  }
  std::vector<MergedRelease> out;
  for (const RecordingFile& f : files) {
    for (const ReleaseRecord& r : f.releases) {
      MergedRelease m;
      m.soc = f.header.soc;
      m.rec = r;
      m.offsetNs = offsetToPrimary(f, r.actualNs, &m.uncertaintyNs);
      m.rec.idealNs += m.offsetNs;
      m.rec.actualNs += m.offsetNs;
      out.push_back(m);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const MergedRelease& a, const MergedRelease& b) {
    return a.rec.actualNs != b.rec.actualNs ? a.rec.actualNs < b.rec.actualNs : a.soc < b.soc;
  });
  return out;
}

std::string mergedReleasesCsv(const std::vector<MergedRelease>& releases) {
  std::ostringstream out;
  out << "soc,schedule,epoch,iteration,frame,ideal_ns,actual_ns,offset_ns,uncertainty_ns\n";
  for (const MergedRelease& m : releases)
    out << m.soc << ',' << m.rec.scheduleId << ',' << m.rec.epoch << ',' << m.rec.iteration << ',' << m.rec.frame << ','
        << m.rec.idealNs << ',' << m.rec.actualNs << ',' << m.offsetNs << ',' << m.uncertaintyNs << '\n';
  return out.str();
}

}  // namespace tactus::record
