// Comparing recordings: whether two recordings are of the same schedules (scheduleDifference),
// and whether every channel version both hold is byte-identical (compareRecordings).
#pragma once

#include <cstdint>
#include <string>

#include "tactus/record/reader.hpp"

namespace tactus::record {

/// "" when `a` and `b` recorded the same schedules (identifier, content hash, channel layout),
/// else the first difference in words.
std::string scheduleDifference(const RecordingFile& a, const RecordingFile& b);

struct Comparison {
  bool same = true;
  std::string firstDifference;  ///< channel, writer run, iteration, byte offset, both values
  std::uint64_t compared = 0;   ///< versions both hold
  std::uint64_t onlyA = 0;
  std::uint64_t onlyB = 0;
};

/// Compares the versions both files hold (same schedule, channel, writer instance, iteration),
/// in `b`'s order; the first that differs is named.
Comparison compareRecordings(const RecordingFile& a, const RecordingFile& b);

}  // namespace tactus::record
