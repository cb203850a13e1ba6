// The SoCs of one multi-SoC run on one time axis: each follower's file holds clock offset records
// (its estimate of the primary's clock, and its bound), the primary's a record naming itself.
// mergeReleases moves every file's releases onto the primary's clock by the estimate in force
// when each was released, as tactus-report merges the masters' event logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/record/reader.hpp"

namespace tactus::record {

/// A file's clock: the primary's SoC index, and whether this file is the primary's.
struct FileClock {
  std::uint32_t primary = 0;
  bool isPrimary = true;
  std::size_t records = 0;  ///< clock offset records in the file
};

/// The clock a file's records say it ran on: a single-SoC file, or one of a multi-SoC run's
/// primary (a record naming its own SoC), or a follower (records naming the primary). Refused,
/// named, when a file of a run of several SoCs holds no clock record (a follower's, recorded by a
/// master that did not write them), or names two primaries.
Result<FileClock> fileClock(const RecordingFile& f);

/// The primary's clock minus this file's at `atNs` (this file's clock): the last estimate recorded
/// at or before it (else the first); an estimate under 1 ms is one clock (masters on one host) and
/// gives 0, as the event logs' merge does. `uncertaintyNs` gets its bound (-1: none known).
std::int64_t offsetToPrimary(const RecordingFile& f, std::int64_t atNs, std::int64_t* uncertaintyNs = nullptr);

struct MergedRelease {
  std::uint32_t soc = 0;      ///< the file's SoC
  ReleaseRecord rec{};        ///< idealNs and actualNs on the primary's clock
  std::int64_t offsetNs = 0;  ///< what was added to this file's times
  std::int64_t uncertaintyNs = 0;
};

/// Every file's releases on the primary's clock, ordered by actual release time (then SoC);
/// refused when the files do not form one run (two primaries, a follower without clock records).
Result<std::vector<MergedRelease>> mergeReleases(const std::vector<RecordingFile>& files);

/// The merged releases as CSV: soc, schedule, epoch, iteration, frame, ideal_ns, actual_ns (the
/// primary's clock), offset_ns, uncertainty_ns.
std::string mergedReleasesCsv(const std::vector<MergedRelease>& releases);

}  // namespace tactus::record
