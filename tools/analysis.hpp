// tactus-report's logic: reading an event log tolerantly and turning schedule + log into
// statistics per runnable, per epoch frame, per resource, per client, per hyperepoch and per chain.
//
// Times of a run are judged against the plan of its hyperepoch iteration:
//
//   iteration start S (ideal release of the iteration's frame 0, from its kRelease records)
//   planned start    = S + instance.startNs          start jitter = actual start - planned start
//   frame release R  = ideal release of (epoch, frame) in that iteration
//   deadline miss    : end - R > Deadline
//   WCET overrun     : end - start > WCET             end-monitor violation: end - start > WCET + EndMonitorThreshold
//   monitor violation: the iteration's last end - S > the hyperepoch's Monitor budget
//   chains           : each occurrence's reaction and data age on measured times (chains.hpp)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/channels.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::report {

/// An event log as read: header, the complete records, and warnings about what was left out.
struct LogFile {
  std::string path;  ///< where it was read from (for messages)
  EventLogHeader header{};
  std::vector<EventRecord> records;
  std::vector<std::string> warnings;  ///< e.g. a truncated last record
};

/// Reads a log; a truncated last record is dropped with a warning (the readable part is kept).
/// Bad magic, another version, a short header: kParse / kIncompatible errors naming the file.
Result<LogFile> readLogFile(const std::string& path);

/// Same from bytes in memory; `origin` names them in messages.
Result<LogFile> parseLog(const std::string& bytes, const std::string& origin);

/// Checks that the log was written for this schedule (content hash); kValidation otherwise.
Result<void> checkLogMatches(const LogFile& log, const Schedule& schedule, const std::string& scheduleOrigin);

/// Count, extremes, median, 99th percentile (nearest rank) and mean of a sample.
struct Quantiles {
  std::uint64_t count = 0;
  std::int64_t minNs = 0;
  std::int64_t medianNs = 0;
  std::int64_t p99Ns = 0;
  std::int64_t maxNs = 0;
  double meanNs = 0;
};

/// Sorts `values` and summarizes them.
Quantiles summarize(std::vector<std::int64_t>& values);

/// Nearest-rank percentile (0 < p <= 100) of an ascending sample; 0 when empty.
std::int64_t percentileOfSorted(const std::vector<std::int64_t>& sorted, double p);

/// Per runnable (the runnable that actually ran; round-robin members count on their own).
struct RunnableStats {
  Quantiles duration;                      ///< end - start
  Quantiles startJitter;                   ///< actual start - planned start (negative: early)
  std::uint64_t overrunsWcet = 0;          ///< runs longer than the WCET
  std::int64_t worstOverrunNs = 0;         ///< largest duration - WCET among them
  std::uint64_t endMonitorViolations = 0;  ///< runs longer than WCET + EndMonitorThreshold (the master's overrun rule)
  std::uint64_t deadlineMisses = 0;        ///< ends later than Deadline after release
  std::vector<std::int64_t> durations;     ///< every measured duration, ascending
};

/// Per epoch frame (epoch, frame within the hyperepoch iteration).
struct FrameStats {
  EpochId epoch{};
  std::uint32_t frame = 0;
  std::uint64_t releases = 0;        ///< kRelease records seen
  Quantiles releaseJitter;           ///< actual - ideal release
  Quantiles span;                    ///< last end of the frame's runs - ideal release
  std::uint64_t overruns = 0;        ///< kOverrun records (frame not done at the next release)
  std::uint64_t deadlineMisses = 0;  ///< runs of this frame that missed their Deadline
};

/// Per resource: busy time per hyperepoch iteration, planned and measured.
struct ResourceStats {
  std::int64_t plannedBusyNs = 0;  ///< sum of planned lengths of the instances holding it
  double measuredBusyNs = 0;       ///< measured run time on it per iteration (mean)
  std::int64_t periodNs = 0;       ///< its hyperepoch's period (0: unused)
  std::uint64_t runs = 0;          ///< runs that held it
  /// CPU time its worker spun waiting (release, predecessors) per iteration (mean; from the run
  /// records' spin field, event log version 2; counted on the hardware resource only).
  double spinNs = 0;
};

/// Per client.
struct ClientStats {
  std::uint64_t runs = 0;
  std::int64_t busyNs = 0;  ///< total run time of its runnables
  std::uint64_t overrunsWcet = 0;
  std::uint64_t deadlineMisses = 0;
  std::uint64_t endMonitorViolations = 0;
  std::uint64_t droppedRecords = 0;  ///< records its ring lost (kDropped)
};

/// Per hyperepoch.
struct HyperepochStats {
  std::uint64_t iterations = 0;         ///< iterations with a release or a run
  Quantiles span;                       ///< last end - iteration start
  std::uint64_t monitorViolations = 0;  ///< iterations whose span exceeds Monitor
  std::uint64_t skipEvents = 0;         ///< kSkipped records
  std::uint64_t skippedPeriods = 0;     ///< periods skipped in total
  std::uint64_t overrunRecords = 0;     ///< kOverrun records of its epochs
};

/// One measured occurrence of a chain (chains.hpp): from the source run's frame release to the
/// end of a run of the last runnable, along the schedule's ChainMap.
struct ChainOccurrence {
  ChainRun source;             ///< the source run (instance, iteration)
  ChainRun last;               ///< the last runnable's run
  std::int64_t releaseNs = 0;  ///< the source frame's ideal release, as logged
  std::int64_t endNs = 0;      ///< the last run's measured end
  /// The measured reaction or data age.
  std::int64_t ns() const { return endNs - releaseNs; }
};

/// Per chain: its measured reactions and data ages, against its planned bounds (ChainInfo's
/// reactionNs and ageNs, allowance included) and its requirements (MaxReaction, MaxAge).
struct ChainStats {
  /// Reactions: per logged source run, to the end of the first last-runnable run that sees its data
  /// or newer, when the log holds that run; by iteration, then planned start.
  std::vector<ChainOccurrence> reactions;
  /// Data ages: per logged last-runnable run, from the release of the source run whose data it
  /// decides on, when the log holds that run (none in iteration 0 for a previous iteration's).
  std::vector<ChainOccurrence> ages;
  Quantiles reaction, age;                  ///< of the measured values
  std::uint64_t reactionsOverPlanned = 0;   ///< reactions longer than the planned bound
  std::uint64_t reactionsOverRequired = 0;  ///< reactions longer than MaxReaction (0 without one)
  std::uint64_t agesOverPlanned = 0;        ///< data ages older than the planned bound
  std::uint64_t agesOverRequired = 0;       ///< data ages older than MaxAge (0 without one)
  std::string error;  ///< why the chain could not be followed on this schedule (no occurrences), else empty
};

/// Everything tactus-report derives from a schedule and a log.
struct Analysis {
  std::uint64_t runRecords = 0, releaseRecords = 0, skippedRecords = 0, overrunRecords = 0, droppedRecords = 0;
  std::uint64_t emptyRuns = 0;       ///< kRun of an empty round-robin step
  std::uint64_t invalidRecords = 0;  ///< records with an unknown kind or out-of-range index (ignored)
  std::uint64_t lostRecords = 0;     ///< records the runtime reports lost (sum of kDropped counts)
  std::int64_t baseNs = 0;           ///< earliest time of the run (trace time zero)
  /// The run's start that record times are judged against: the header's run start, or the first
  /// plausible record time when the header has none. A record with a time further than
  /// limits::kMaxLogSpanNs from it is invalid.
  std::int64_t originNs = 0;
  std::int64_t runStartNs = 0;  ///< the header's run start when plausible, else 0 (unknown)
  /// Per hyperepoch: the last iteration number that starts within limits::kMaxLogSpanNs.
  IdVector<HyperepochId, std::uint64_t> lastIteration;
  /// Per instance: its hyperepoch (for record lookups).
  IdVector<InstanceId, HyperepochId> instanceHyperepoch;
  IdVector<RunnableId, RunnableStats> runnables;        ///< per runnable
  std::vector<FrameStats> frames;                       ///< by epoch, then frame
  IdVector<ResourceId, ResourceStats> resources;        ///< per resource
  IdVector<ClientId, ClientStats> clients;              ///< per client
  IdVector<HyperepochId, HyperepochStats> hyperepochs;  ///< per hyperepoch
  /// Per hyperepoch, the iteration numbers that valid records name, ascending: every
  /// per-iteration table is sized by these (so by the records), never by a claimed number.
  IdVector<HyperepochId, std::vector<std::uint64_t>> iterations;
  IdVector<HyperepochId, std::vector<std::int64_t>> iterationStart;  ///< parallel to `iterations` (ns; 0 unknown)
  std::vector<ChainStats> chains;  ///< per chain of the schedule (measureChains, chains.hpp)
  std::vector<std::string> warnings;
};

/// Analyzes a log against its schedule. Invalid records are counted and reported as a warning,
/// never trusted as indices.
Analysis analyze(const Schedule& schedule, const LogFile& log);

/// Marks an iteration that no valid record names (iterationIndex).
inline constexpr std::size_t kNoIteration = static_cast<std::size_t>(-1);

/// Position of `iteration` in analysis.iterations[hyperepoch], or kNoIteration.
std::size_t iterationIndex(const Analysis& analysis, HyperepochId hyperepoch, std::uint64_t iteration);

/// Whether a time lies within limits::kMaxLogSpanNs of the run's start (Analysis::originNs).
bool timeValid(const Analysis& analysis, std::int64_t t);

/// Whether an iteration number starts within limits::kMaxLogSpanNs of the run's start.
bool iterationValid(const Schedule& schedule, HyperepochId hyperepoch, std::uint64_t iteration);

/// Whether a kRun record can be trusted: its indices inside the schedule, its end not before its
/// start, its times and its iteration within the log span. Every output uses this one rule
/// (with the tables analyze() made).
bool validRun(const Schedule& schedule, const Analysis& analysis, const EventRecord& record);

/// Whether a kRelease record can be trusted: its epoch and frame in the schedule, its times and
/// its iteration within the log span (the rule analyze() counts releases by).
bool validRelease(const Schedule& schedule, const Analysis& analysis, const EventRecord& record);

/// Start of a hyperepoch iteration as the analysis derived it (estimated when no release record).
std::int64_t iterationStartNs(const Schedule& schedule, const LogFile& log, const Analysis& analysis,
                              HyperepochId hyperepoch, std::uint64_t iteration);

/// An epoch as the outputs name it: "<hyperepoch>.<epoch>".
std::string epochName(const Schedule& schedule, EpochId epoch);

}  // namespace tactus::report
