// The overrun watch: from the records the log drain empties, what overran, said at once and
// summed up at the end. Overruns do not end a run (the plan's skip or free-running mode absorbs
// them, and the stuck check ends a run that makes no progress); they must not pass in silence.
//
//   a run     a runnable ran longer than its WCET plus its EndMonitorThreshold (default 0)
//   a frame   a frame of an epoch was not finished at the epoch's next release (kOverrun)
//   a period  an iteration was not finished when the next should start: periods skipped (kSkipped)
//
// The first overrun of each runnable, epoch and hyperepoch is reported at once (a line on the
// master's stderr); later ones are counted, and the counts reported every kSummaryEveryNs at most
// while they grow, and at the end.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::master {

/// Watches one schedule's records for overruns. Used on the master's monitor thread only.
class OverrunWatch {
 public:
  /// How often, at most, a line of counts follows the first reports while overruns go on.
  static constexpr std::int64_t kSummaryEveryNs = 10'000'000'000;

  /// `schedule` outlives the watch; reports go to `err` (each line starts with "tactus-master: ").
  OverrunWatch(const Schedule& schedule, std::ostream& err);

  /// Looks at drained records (runs from the clients' rings, overruns and skips from the release
  /// threads'); `nowNs` is when, for the rate limit.
  void see(const EventRecord* records, std::size_t count, std::int64_t nowNs);

  /// Whether any run, frame or period overran.
  bool any() const { return runs_ + frames_ + skippedPeriods_ + lateIterations_ > 0; }
  /// "19 runs beyond WCET (most: ...), 2 frames late, 3 iterations late, 19 periods skipped", or ""
  /// when nothing overran; `brief`: without the "(most: ...)" part.
  std::string summary(bool brief = false) const;

 private:
  void sayRun(const EventRecord& r, RunnableId runnable, std::int64_t limitNs);
  const Schedule& schedule_;
  std::ostream& err_;
  std::vector<std::uint64_t> runsOf_;  // per runnable: its runs beyond the limit
  std::vector<std::int64_t> worstOf_;  // per runnable: its longest run beyond the limit
  std::vector<bool> epochSaid_, hyperepochSaid_;
  std::uint64_t runs_ = 0, frames_ = 0, skippedPeriods_ = 0, lateIterations_ = 0;
  std::uint64_t countsSaid_ = 0;  // runs_ + frames_ + lateIterations_ when the counts were last said
  std::int64_t countsSaidNs_ = 0;
};

}  // namespace tactus::master
