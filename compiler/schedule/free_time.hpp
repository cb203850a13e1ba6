// The free time of one resource while a hyperepoch is scheduled: its idle gaps, and the earliest
// common start on several resources (list scheduler and perturbed search).
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace tactus::compiler::schedule {

/// A time later than any schedule's end (room left for sums of a few of them).
inline constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;

// The free time of one resource: disjoint gaps [start, end), keyed by start. Two gaps may touch:
// the point between them holds a zero-length instance that nothing may straddle.
//
//   busy  |////|      |///|
//   gaps       [ g1  )    [ g2 ............ infinity)
/// The idle gaps of one resource (see below).
class FreeTime {
 public:
  FreeTime() { gaps_.emplace(0, kInfinity); }

  // Earliest s >= t with [s, s + w) inside one gap (for w = 0: s inside or at the end of a gap).
  // `gapStart` receives the start of that gap (used to prefer the tightest fit).
  std::int64_t fit(std::int64_t t, std::int64_t w, std::int64_t* gapStart = nullptr) const {
    // At or after the start of the last gap (where much of a list schedule is placed): the
    // answer of the search below, without walking the tree (the last node is at hand).
    if (!gaps_.empty()) {
      const auto last = std::prev(gaps_.end());
      if (t >= last->first && last->second >= t + w) {
        if (gapStart) *gapStart = last->first;
        return t;
      }
    }
    auto it = gaps_.upper_bound(t);
    if (it != gaps_.begin()) {
      auto p = std::prev(it);
      if (p->second >= t + w) {
        if (gapStart) *gapStart = p->first;
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
    for (; it != gaps_.end(); ++it) {
      if (it->second - it->first >= w) {
        if (gapStart) *gapStart = it->first;
        return it->first;
      }
      if (capped && ++scanned == kMaxGapScan) {
        auto last = std::prev(gaps_.end());
        if (gapStart) *gapStart = last->first;
        return last->first;
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
    auto it = gaps_.upper_bound(s);
    if (it == gaps_.begin()) return;
    auto p = std::prev(it);
    const std::int64_t gs = p->first;
    const std::int64_t ge = p->second;
    if (ge < s + w) return;
    if (w == 0) {
      if (gs < s && s < ge) {  // split: nothing may run across the zero-length point
        p->second = s;
        gaps_.emplace_hint(it, s, ge);
      }
      return;
    }
    // The gap's node is kept (shortened, or moved past the instance) rather than erased and
    // allocated again: the same gaps, one allocation fewer per reservation.
    if (gs < s) {
      p->second = s;
      if (s + w < ge) gaps_.emplace_hint(it, s + w, ge);
    } else if (s + w < ge) {
      auto node = gaps_.extract(p);
      node.key() = s + w;
      gaps_.insert(it, std::move(node));
    } else {
      gaps_.erase(p);
    }
  }

 private:
  std::map<std::int64_t, std::int64_t> gaps_;
};

/// The earliest common start >= t of length w on every resource in `set`; `lastGapStart`, when
/// given and `set` is not empty, receives the start of the gap that holds it on set.back().
std::int64_t commonFit(const std::vector<FreeTime>& free, const std::vector<std::uint32_t>& set, std::int64_t t,
                       std::int64_t w, std::int64_t* lastGapStart = nullptr);

}  // namespace tactus::compiler::schedule
