// The event log file: what tactus-master writes with `-l` (start and end of every runnable
// instance, frame releases, skipped frames, overruns, dropped records), and how to read it back.
//
// File layout (little-endian, as the host writes it; version 2):
//
//   offset 0   EventLogHeader (64 bytes)
//   offset 64  EventRecord[n] (40 bytes each; 32 in version 1) until the end of the file
//
// Records appear in the order the master drained them: per worker in execution order, workers
// interleaved. Sort by time when a global order is needed. All times are CLOCK_MONOTONIC ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus {

/// The first 8 bytes of an event log file.
inline constexpr char kEventLogMagic[8] = {'T', 'A', 'C', 'T', 'L', 'O', 'G', '\0'};
/// The event log format version this build writes; it reads kEventLogOldestVersion up to this.
/// Version 2 added 8 bytes to every record (the schedule tag of a run with a schedule manager),
/// the run records' spin field, the schedule start/stop records and tactus-check's violation
/// records; version 1 logs (32-byte records, none of these) are read as well. Version 3 added the
/// clock offset record of a multi-SoC run's masters (kClockOffset); a reader of version 2 refuses
/// a version 3 log by its version. Version 4 added the header's runFlags (how the master ran:
/// unpinned, free running, with unregistered runnables allowed), which older logs read as 0.
inline constexpr std::uint32_t kEventLogVersion = 4;
/// EventLogHeader::runFlags: the master ran with -C, no worker pinned to its planned core (the
/// plan's core assignment did not hold: cores the machine lacks, allowed knowingly).
inline constexpr std::uint32_t kRunUnpinned = 1u;
/// EventLogHeader::runFlags: the master ran with -m (a late iteration starts at once, no period skipped).
inline constexpr std::uint32_t kRunFreeRunning = 2u;
/// EventLogHeader::runFlags: the master ran with --allow-unregistered-runnables.
inline constexpr std::uint32_t kRunAllowUnregistered = 4u;
/// A kClockOffset estimate below this (in magnitude) is taken as one clock: the estimate is then
/// the link's one-way latency (masters on one host, one CLOCK_MONOTONIC). Two hosts' monotonic
/// clocks differ by the difference of their boot times, never set, so practically never this little.
inline constexpr std::int64_t kOneClockBelowNs = 1'000'000;
/// Whether a kClockOffset estimate says the two SoCs run on separate clocks (see kOneClockBelowNs).
constexpr bool separateClocks(std::int64_t offsetNs) {
  return offsetNs >= kOneClockBelowNs || offsetNs <= -kOneClockBelowNs;
}
/// The oldest event log version this build reads.
inline constexpr std::uint32_t kEventLogOldestVersion = 1;
/// The size of a version 1 record.
inline constexpr std::uint32_t kEventRecordSizeV1 = 32;
/// The unit of kRun's spin field, in ns.
inline constexpr std::int64_t kSpinUnitNs = 100;

/// Whether this build reads event logs of `version`.
constexpr bool readsEventLogVersion(std::uint32_t version) {
  return version >= kEventLogOldestVersion && version <= kEventLogVersion;
}

/// What an EventRecord says. The fields' meanings per kind are listed at each enumerator.
enum class EventKind : std::uint16_t {
  /// An instance ran. instance = InstanceId, iteration = hyperepoch iteration (low 32 bits),
  /// aux = RunnableId that actually ran (differs from the instance's runnable for a round-robin
  /// group; kNone for an empty round-robin step or a submittee without an engine),
  /// startNs/endNs = when it started and ended, detail = the CPU time its worker spent spinning
  /// while waiting for it (release and predecessors) in kSpinUnitNs, saturated at 65535. For a
  /// submittee a GPU engine runs, startNs/endNs are the GPU side's: stamped by its stream right
  /// before and right after the work (a GPU's %globaltimer moved onto CLOCK_MONOTONIC; the CUDA
  /// stand-in's stream thread), or, with the stamps off (TACTUS_GPU_STAMPS=0), when the client's
  /// GPU worker saw the stream's start and completion words.
  kRun = 1,
  /// A frame was released. instance = EpochId, iteration = hyperepoch iteration, aux = frame
  /// within the iteration, startNs = ideal release time, endNs = actual release time.
  kRelease = 2,
  /// A hyperepoch iteration overran: iteration - 1 was not finished when iteration should
  /// start. instance = HyperepochId, iteration = the iteration that came late, aux = periods
  /// skipped (skip mode: the start moves to the next period boundary; 0 with -m, which starts
  /// at once), startNs = the planned start it missed, endNs = the start it got.
  kSkipped = 3,
  /// A frame overran inside a hyperepoch iteration: frame aux of the epoch was not finished at
  /// the epoch's next release, which then waited for it. instance = EpochId, iteration =
  /// hyperepoch iteration, aux = the late frame, startNs = the release deadline, endNs = when
  /// the next frame was released.
  kOverrun = 4,
  /// A client's ring was full and records were lost. instance = ClientId, aux = worker index,
  /// iteration = number of records lost (saturated), startNs = endNs = when the master noticed.
  kDropped = 5,
  /// A runnable broke its contract under tactus-check (allocated, blocked, started a thread, ...).
  /// Layout and the records that follow it: tactus/core/violation.hpp.
  kViolation = 6,
  /// Part of the first call site of the kViolation record before it (text, see violation.hpp).
  kViolationSite = 7,
  /// A schedule started on a hyperepoch (a master with a schedule manager, -N). schedule = the
  /// identifier started, instance = its HyperepochId, iteration = the first iteration it runs,
  /// aux = the identifier it rolled over from (0xffffffff for a plain start), startNs = when the
  /// master took the manager's request, endNs = the ideal time of the first release.
  kScheduleStart = 10,
  /// A schedule stopped on a hyperepoch. schedule = the identifier stopped, instance = its
  /// HyperepochId, iteration = the first iteration it did not run, aux = the identifier it rolled
  /// over to (0xffffffff for a plain stop), startNs = when the master took the request, endNs =
  /// when the master saw the last runnable of its last iteration end (an iteration a dead client
  /// left unfinished: when its release loop stopped; 0 in logs of masters before 2026-12, which
  /// readers replace by startNs).
  kScheduleStop = 11,
  /// A rule of the master's switching policy (--policy) fired. schedule = the schedule it watched
  /// (client death: a schedule that uses the client), instance = the rule's index in the policy
  /// file, detail = its trigger (1 overruns, 2 clean iterations, 3 client death), iteration = the
  /// HyperepochId (overruns) or ClientId in `schedule` (client death), aux = the identifier rolled
  /// over to (0xffffffff: nothing ran that needed a switch, or the switch failed), startNs = when
  /// the master decided, endNs = when the switch was done.
  kPolicyDecision = 12,
  /// A multi-SoC run's clocks (version 3): written by each SoC's master at the end of its run.
  /// instance = the primary SoC's index, aux = this log's SoC's index (equal: the primary's log),
  /// iteration = the samples the estimate rests on, startNs = this host's CLOCK_MONOTONIC minus
  /// the primary's (0 on the primary), endNs = the estimate's error bound in ns, or -1 when it is
  /// not known (the minimum of receive - send time over the primary's releases: it includes the
  /// one-way link latency). tactus-report moves a SoC's records onto the primary's clock by it.
  kClockOffset = 13,
};

/// The file header.
struct EventLogHeader {
  char magic[8];                     ///< kEventLogMagic
  std::uint32_t version;             ///< kEventLogVersion
  std::uint32_t headerSize;          ///< sizeof(EventLogHeader): records start here
  std::uint32_t recordSize;          ///< sizeof(EventRecord)
  std::uint16_t scheduleIdentifier;  ///< the schedule's identifier (with several: the first's)
  /// Schedules of the run: 0 or 1 for one schedule; N for a master with a schedule manager, whose
  /// records name their schedule in EventRecord::schedule.
  std::uint16_t scheduleCount;
  std::uint64_t scheduleContentHash;  ///< content hash of the schedule file that ran
  std::int64_t runStartNs;            ///< CLOCK_MONOTONIC ns of the first release
  std::uint32_t runFlags;             ///< kRunUnpinned, kRunFreeRunning, kRunAllowUnregistered (version 4; else 0)
  std::uint8_t reserved[20];          ///< zero
};
static_assert(sizeof(EventLogHeader) == 64, "event log header layout is frozen");

/// One event; see EventKind for the meaning of each field per kind.
struct EventRecord {
  std::uint16_t kind;  ///< an EventKind
  /// By kind (version 2; zero in version 1): kRun: the spin time before the run in kSpinUnitNs,
  /// saturated; kViolation: the ViolationKind; kViolationSite: the first bytes of its text.
  std::uint16_t detail;
  std::uint32_t instance;   ///< InstanceId / EpochId / HyperepochId / ClientId, by kind
  std::uint32_t iteration;  ///< hyperepoch iteration (low 32 bits), by kind
  std::uint32_t aux;        ///< RunnableId / frame / count / worker, by kind
  std::int64_t startNs;     ///< CLOCK_MONOTONIC ns, by kind
  std::int64_t endNs;       ///< CLOCK_MONOTONIC ns, by kind
  /// The identifier of the schedule the record belongs to when the header's scheduleCount > 1;
  /// zero otherwise.
  std::uint16_t schedule = 0;
  std::uint16_t reserved0 = 0;  ///< zero
  std::uint32_t reserved1 = 0;  ///< zero
};
static_assert(sizeof(EventRecord) == 40, "event record layout is frozen");
static_assert(offsetof(EventRecord, schedule) == 32, "version 2 added its fields after version 1's 32 bytes");

/// The size of one record in a log of `version` (which this build reads).
constexpr std::uint32_t eventRecordSize(std::uint32_t version) {
  return version == 1 ? kEventRecordSizeV1 : static_cast<std::uint32_t>(sizeof(EventRecord));
}

/// A whole log read back.
struct EventLog {
  EventLogHeader header{};
  std::vector<EventRecord> records;
};

/// A header for a log of the schedule with this identifier and content hash: magic, version and
/// sizes filled in, runStartNs 0 (the writer sets it once the run has started).
EventLogHeader makeEventLogHeader(std::uint16_t scheduleIdentifier, std::uint64_t contentHash);

/// Decodes `count` records of `recordSize` bytes each (eventRecordSize of the log's version) at
/// `bytes` into `out`: a version 1 record gets zero in the fields version 2 added.
void decodeEventRecords(const unsigned char* bytes, std::size_t count, std::uint32_t recordSize, EventRecord* out);

/// Reads an event log file; checks magic, version and sizes (a truncated last record is an error).
Result<EventLog> readEventLog(const std::string& path);

/// Writes an event log: header at open, then records appended through a buffer.
class EventLogWriter {
 public:
  EventLogWriter() = default;
  EventLogWriter(const EventLogWriter&) = delete;
  EventLogWriter& operator=(const EventLogWriter&) = delete;
  ~EventLogWriter();

  /// Creates (truncates) the file and writes the header.
  Result<void> open(const std::string& path, std::uint16_t scheduleIdentifier, std::uint64_t contentHash);
  /// Rewrites the header's runStartNs (call once the run has started).
  void setRunStart(std::int64_t runStartNs);
  /// Appends records (buffered by stdio).
  void append(const EventRecord* records, std::size_t count);
  /// Records appended from now on get `identifier` in their `schedule` field (< 0: left as they are).
  void setScheduleTag(std::int32_t identifier) { tag_ = identifier; }
  /// Sets the header's scheduleCount (call right after open).
  void setScheduleCount(std::uint16_t count);
  /// Sets the header's runFlags (call right after open).
  void setRunFlags(std::uint32_t flags);
  /// Flushes and closes; reports a write error if one happened.
  Result<void> close();
  /// Whether a file is open.
  bool isOpen() const { return file_ != nullptr; }

 private:
  void rewriteHeader();  // the header written again over the file's first bytes (a failure is kept)
  std::FILE* file_ = nullptr;
  std::string path_;
  EventLogHeader header_{};
  bool failed_ = false;
  std::int32_t tag_ = -1;
  std::vector<EventRecord> tagged_;  // reused for stamping
};

}  // namespace tactus
