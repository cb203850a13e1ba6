// The free time of one resource while a hyperepoch is scheduled: its idle gaps, and the earliest
// common start on several resources (list scheduler and perturbed search).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tactus::compiler::schedule {

/// A time later than any schedule's end (room left for sums of a few of them).
inline constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;

// The free time of one resource: disjoint gaps [start, end), ascending. Two gaps may touch:
// the point between them holds a zero-length instance that nothing may straddle.
//
//   busy  |////|      |///|
//   gaps       [ g1  )    [ g2 ............ infinity)
//
// Held in one sorted array, not a tree: a list schedule looks gaps up far more often than it
// splits them, and most splits are near the end (the frontier), so a binary search over
// contiguous gaps and a short move on insertion beat a tree's node per gap (an allocation per
// split and a cache miss per level of every look-up).
/// The idle gaps of one resource (see below).
class FreeTime {
 public:
  FreeTime() { gaps_.push_back({0, kInfinity}); }

  /// Back to one unbounded gap, keeping the array's capacity for the next schedule.
  void clear() {
    gaps_.clear();
    gaps_.push_back({0, kInfinity});
  }

  // Earliest s >= t with [s, s + w) inside one gap (for w = 0: s inside or at the end of a gap).
  // `gapStart` receives the start of that gap (used to prefer the tightest fit).
  std::int64_t fit(std::int64_t t, std::int64_t w, std::int64_t* gapStart = nullptr) const {
    // At or after the start of the last gap (where much of a list schedule is placed): the
    // answer of the search below, without it.
    if (!gaps_.empty()) {
      const Gap& last = gaps_.back();
      if (t >= last.start && last.end >= t + w) {
        if (gapStart) *gapStart = last.start;
        return t;
      }
    }
    std::size_t i = upperBound(t);
    if (i != 0) {
      const Gap& p = gaps_[i - 1];
      if (p.end >= t + w) {
        if (gapStart) *gapStart = p.start;
        return t;
      }
    }
    // Exact (the earliest gap that fits) while the resource has few gaps, which covers every
    // hyperepoch the exact search handles. On a huge timeline the idle fragments behind the
    // frontier pile up and a full scan would make list scheduling quadratic, so the scan stops
    // after kMaxGapScan gaps and takes the unbounded last gap: still a valid placement, and the
    // same one for the same input.
    const bool capped = gaps_.size() > kExactGapCount;
    std::size_t scanned = 0;
    for (; i < gaps_.size(); ++i) {
      const Gap& g = gaps_[i];
      if (g.end - g.start >= w) {
        if (gapStart) *gapStart = g.start;
        return g.start;
      }
      if (capped && ++scanned == kMaxGapScan) {
        if (gapStart) *gapStart = gaps_.back().start;
        return gaps_.back().start;
      }
    }
    return kInfinity;  // unreachable: the last gap is unbounded
  }

  /// Gaps on a resource up to which fit() is exact.
  static constexpr std::size_t kExactGapCount = 512;
  /// Gaps fit() scans beyond that before it takes the last, unbounded gap.
  static constexpr std::size_t kMaxGapScan = 32;

  // Takes [s, s + w) out of the gap that holds it (fit() returned s for w).
  void reserve(std::int64_t s, std::int64_t w) {
    const std::size_t i = upperBound(s);
    if (i == 0) return;
    Gap& p = gaps_[i - 1];
    const std::int64_t gs = p.start;
    const std::int64_t ge = p.end;
    if (ge < s + w) return;
    if (w == 0) {
      if (gs < s && s < ge) {  // split: nothing may run across the zero-length point
        p.end = s;
        gaps_.insert(gaps_.begin() + static_cast<std::ptrdiff_t>(i), Gap{s, ge});
      }
      return;
    }
    if (gs < s) {
      p.end = s;
      if (s + w < ge) gaps_.insert(gaps_.begin() + static_cast<std::ptrdiff_t>(i), Gap{s + w, ge});
    } else if (s + w < ge) {
      p.start = s + w;  // still before the next gap, which starts at ge or later
    } else {
      gaps_.erase(gaps_.begin() + static_cast<std::ptrdiff_t>(i - 1));
    }
  }

 private:
  struct Gap {
    std::int64_t start;
    std::int64_t end;
  };

  // The index of the first gap starting after t (gaps_.size() when none does).
  std::size_t upperBound(std::int64_t t) const {
    std::size_t lo = 0, n = gaps_.size();
    while (n > 0) {  // branch-light binary search over the starts
      const std::size_t half = n / 2;
      if (gaps_[lo + half].start <= t) {
        lo += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    return lo;
  }

  std::vector<Gap> gaps_;
};

/// The earliest common start >= t of length w on every resource in `set`; `lastGapStart`, when
/// given and `set` is not empty, receives the start of the gap that holds it on set.back().
std::int64_t commonFit(const std::vector<FreeTime>& free, const std::vector<std::uint32_t>& set, std::int64_t t,
                       std::int64_t w, std::int64_t* lastGapStart = nullptr);

}  // namespace tactus::compiler::schedule
