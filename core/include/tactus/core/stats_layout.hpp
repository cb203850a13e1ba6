// The statistics block: a fixed-size area at the end of every schedule's segment that the
// master's log drain fills from the records it drains (per runnable durations and overruns, per
// hyperepoch releases, jitter and skips, the switch history, per chain its measured reactions and
// data ages, per channel its writer runs' versions), so that a reader outside the run
// (tactus-top, tactus-manager status) sees them without reading the event rings or adding any
// work to the workers' path. Passive structs only, frozen by static_assert; bump kStatsVersion
// on any change (the segment's layout version covers its place, this one its contents).
//
//   statsOffset    StatsHeader                              master: counts once; drain: seq, totals
//                  RunnableStats[runnableCount]              the drain writes
//                  HyperepochStats[hyperepochCount]          the drain writes
//                  SwitchEntry[kStatsSwitchCapacity]         the drain writes (a ring of the latest)
//                  ChainStats[kStatsChainCapacity]           the drain writes (the first chainCount used)
//                  ChannelStats[kStatsChannelCapacity]       the drain writes (the first channelCount used)
//
// The chain and channel tables have a fixed capacity: a schedule's chains and channels beyond it
// are not measured at run time (the header's counts say how many are; tactus-top names the rest,
// which tactus-report measures from the event log).
//
// One writer (the master's drain thread) under a sequence lock: it makes `seq` odd before a batch
// and even after, and stores every field as a relaxed atomic between; a reader copies the block
// and keeps the copy only when `seq` was even and unchanged around it (readStats retries).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::shm {

/// "TACTUSST": the first 8 bytes of the statistics block.
inline constexpr std::uint64_t kStatsMagic = 0x5453535554434154ULL;
/// The statistics block's version; a reader of another version is refused, named. Version 2
/// added the chain and channel tables (and their counts in the header).
inline constexpr std::uint32_t kStatsVersion = 2;
/// Durations kept per runnable for the median (the latest, a ring).
inline constexpr std::uint32_t kStatsRecent = 32;
/// Switches kept (the latest, a ring).
inline constexpr std::uint32_t kStatsSwitchCapacity = 32;
/// Chains measured at run time: a schedule's first kStatsChainCapacity chains.
inline constexpr std::uint32_t kStatsChainCapacity = 16;
/// Channels counted at run time: a schedule's first kStatsChannelCapacity channels.
inline constexpr std::uint32_t kStatsChannelCapacity = 64;

/// At the block's start.
struct alignas(64) StatsHeader {
  // --- line 0: identity; the master writes it once, before the segment is published ---
  std::atomic<std::uint64_t> magic;  ///< kStatsMagic
  std::uint32_t version;             ///< kStatsVersion
  std::uint32_t runnableCount;       ///< RunnableStats entries (the schedule's runnables)
  std::uint32_t hyperepochCount;     ///< HyperepochStats entries (the schedule's hyperepochs)
  std::uint32_t switchCapacity;      ///< SwitchEntry entries (kStatsSwitchCapacity)
  std::uint64_t blockSize;           ///< bytes of the whole block
  std::uint32_t chainCapacity;       ///< ChainStats entries (kStatsChainCapacity; version 2)
  std::uint32_t chainCount;          ///< of them used: min(the schedule's chains, the capacity)
  std::uint32_t channelCapacity;     ///< ChannelStats entries (kStatsChannelCapacity; version 2)
  std::uint32_t channelCount;        ///< of them used: min(the schedule's channels, the capacity)
  std::uint8_t reserved0[16];
  // --- line 1: the drain writes ---
  /// The sequence lock: odd while the drain updates the block.
  std::atomic<std::uint64_t> seq;
  std::atomic<std::uint64_t> batches;   ///< drain batches applied
  std::atomic<std::int64_t> updateNs;   ///< CLOCK_MONOTONIC ns of the latest batch
  std::atomic<std::uint64_t> switches;  ///< switch records seen (the ring holds the latest)
  std::uint8_t reserved1[32];
};
static_assert(sizeof(StatsHeader) == 128);
static_assert(offsetof(StatsHeader, seq) == 64);

/// Per runnable: its runs as the drain saw them (the drain writes).
struct alignas(64) RunnableStats {
  std::atomic<std::uint64_t> count;          ///< runs seen
  std::atomic<std::uint64_t> overruns;       ///< runs longer than its WCET plus EndMonitorThreshold
  std::atomic<std::int64_t> lastNs;          ///< duration of the latest run
  std::atomic<std::int64_t> maxNs;           ///< longest run
  std::atomic<std::int64_t> totalNs;         ///< sum of the durations (for the mean)
  std::atomic<std::uint32_t> lastIteration;  ///< hyperepoch iteration of the latest run (low 32 bits)
  std::uint32_t reserved0;
  std::uint8_t reserved1[16];
  std::atomic<std::int64_t> recentNs[kStatsRecent];  ///< the latest durations, at count % kStatsRecent
};
static_assert(sizeof(RunnableStats) == std::size_t{5} * 64);
static_assert(offsetof(RunnableStats, recentNs) == 64);

/// Per hyperepoch: its releases and overruns (the drain writes).
struct alignas(64) HyperepochStats {
  std::atomic<std::uint64_t> releases;       ///< frames released
  std::atomic<std::uint32_t> lastIteration;  ///< iteration of the latest release (low 32 bits)
  std::uint32_t reserved0;
  std::atomic<std::int64_t> lastJitterNs;     ///< actual minus ideal release time, latest release
  std::atomic<std::int64_t> maxJitterNs;      ///< the largest of them
  std::atomic<std::int64_t> totalJitterNs;    ///< their sum (for the mean)
  std::atomic<std::uint64_t> skippedPeriods;  ///< periods skipped because an iteration was late
  std::atomic<std::uint64_t> lateIterations;  ///< iterations that started late
  std::atomic<std::uint64_t> lateFrames;      ///< frames not finished at their epoch's next release
};
static_assert(sizeof(HyperepochStats) == 64);

/// One schedule switch (a kScheduleStart or kScheduleStop record; the drain writes).
struct SwitchEntry {
  std::atomic<std::uint32_t> kind;        ///< 1: start, 2: stop
  std::atomic<std::uint32_t> schedule;    ///< the identifier started or stopped
  std::atomic<std::uint32_t> other;       ///< rolled over from (start) or to (stop); 0xffffffff: none
  std::atomic<std::uint32_t> hyperepoch;  ///< HyperepochId
  std::atomic<std::uint64_t> iteration;   ///< the first iteration run (start) or not run (stop)
  std::atomic<std::int64_t> timeNs;       ///< CLOCK_MONOTONIC ns the master took the request
};
static_assert(sizeof(SwitchEntry) == 32);

/// One measure of a chain (its reactions, or its data ages), by the definitions of
/// tactus/core/channels.hpp on the drained runs' times, as tactus-report measures the log: an
/// occurrence counts once the drain has seen its source run, its last run and the source frame's
/// ideal release (the drain writes).
struct alignas(64) ChainMeasure {
  std::atomic<std::uint64_t> count;         ///< occurrences measured
  std::atomic<std::uint64_t> overPlanned;   ///< of them longer than the planned bound (allowance included)
  std::atomic<std::uint64_t> overRequired;  ///< of them longer than MaxReaction / MaxAge (0 without one)
  /// Occurrences given up: a run or release they need was not drained within kChainWindow
  /// iterations of the hyperepoch (a run that never ran, a record lost).
  std::atomic<std::uint64_t> unmatched;
  std::atomic<std::int64_t> lastNs;     ///< the occurrence that ended latest (of several: the shortest): its length
  std::atomic<std::int64_t> lastEndNs;  ///< and its end (CLOCK_MONOTONIC ns of the last run's end)
  std::atomic<std::int64_t> maxNs;      ///< the longest occurrence
  std::atomic<std::uint32_t> lastIteration;  ///< the latest occurrence's last run's iteration (low 32 bits)
  std::uint32_t reserved0;
};
static_assert(sizeof(ChainMeasure) == 64);
static_assert(offsetof(ChainMeasure, lastNs) == 32 && offsetof(ChainMeasure, lastIteration) == 56);

/// Iterations of its hyperepoch a chain occurrence may wait for its runs and release (the
/// master's chain watch keeps this many iterations of ends and releases).
inline constexpr std::uint32_t kChainWindow = 16;

/// Per chain (the schedule's chains in order, the first chainCount): reactions then data ages.
struct ChainStats {
  ChainMeasure reaction;  ///< the source frame's release to the end of the first last run that sees it
  ChainMeasure age;       ///< the source frame's release to the end of a last run deciding on it
};
static_assert(sizeof(ChainStats) == 128 && offsetof(ChainStats, age) == 64);

/// Per channel (the schedule's channels in order, the first channelCount): what its writer runs
/// left, as the drain found the run's buffer when it drained the run's end (the drain writes).
/// writes + notWritten + unseen = writer runs drained.
struct alignas(64) ChannelStats {
  std::atomic<std::uint64_t> writes;      ///< runs whose version their buffer held
  std::atomic<std::uint64_t> notWritten;  ///< runs that took no buffer (readers get "not written")
  /// Runs whose buffer a later writer run had taken before the drain looked (the drain was more
  /// than the ring's depth of writer runs behind): not known whether they wrote.
  std::atomic<std::uint64_t> unseen;
  std::atomic<std::uint32_t> lastIteration;  ///< iteration of the latest writer run drained (low 32 bits)
  std::uint32_t reserved0;
  std::uint8_t reserved1[32];
};
static_assert(sizeof(ChannelStats) == 64 && offsetof(ChannelStats, lastIteration) == 24);

/// Bytes of a statistics block for these counts (a whole number of cache lines).
std::uint64_t statsBlockSize(std::uint32_t runnables, std::uint32_t hyperepochs);

/// A plain copy of a block, as a reader took it.
struct StatsSnapshot {
  struct Runnable {
    std::uint64_t count = 0, overruns = 0;
    std::int64_t lastNs = 0, maxNs = 0, totalNs = 0, medianNs = 0;
    std::uint32_t lastIteration = 0;
  };
  struct Hyperepoch {
    std::uint64_t releases = 0, skippedPeriods = 0, lateIterations = 0, lateFrames = 0;
    std::uint32_t lastIteration = 0;
    std::int64_t lastJitterNs = 0, maxJitterNs = 0, totalJitterNs = 0;
  };
  struct Switch {
    std::uint32_t kind = 0, schedule = 0, other = 0, hyperepoch = 0;
    std::uint64_t iteration = 0;
    std::int64_t timeNs = 0;
  };
  struct Measure {
    std::uint64_t count = 0, overPlanned = 0, overRequired = 0, unmatched = 0;
    std::int64_t lastNs = 0, lastEndNs = 0, maxNs = 0;
    std::uint32_t lastIteration = 0;
  };
  struct Chain {
    Measure reaction, age;
  };
  struct Channel {
    std::uint64_t writes = 0, notWritten = 0, unseen = 0;
    std::uint32_t lastIteration = 0;
  };
  std::uint64_t batches = 0;
  std::int64_t updateNs = 0;
  std::uint64_t switches = 0;
  std::vector<Runnable> runnables;
  std::vector<Hyperepoch> hyperepochs;
  std::vector<Switch> switchHistory;  ///< oldest first, at most kStatsSwitchCapacity
  std::vector<Chain> chains;          ///< the header's chainCount
  std::vector<Channel> channels;      ///< the header's channelCount
};

/// A typed view of a statistics block's bytes (a segment's area or a test's buffer).
class StatsView {
 public:
  StatsView() = default;
  explicit StatsView(std::span<std::byte> bytes) : bytes_(bytes) {}

  /// The master: writes a fresh block for the counts (the buffer holds statsBlockSize bytes);
  /// chains and channels beyond the tables' capacities are not measured.
  void initialize(std::uint32_t runnables, std::uint32_t hyperepochs, std::uint32_t chains = 0,
                  std::uint32_t channels = 0) const;

  /// A reader: checks magic, version and sizes against the buffer; the error names the version
  /// found and the one this build reads, and what to do.
  Result<void> validate() const;

  StatsHeader& header() const { return *reinterpret_cast<StatsHeader*>(bytes_.data()); }
  /// Entry `r` (below header().runnableCount, checked by validate or the writer's own counts).
  RunnableStats& runnable(std::uint32_t r) const {
    return reinterpret_cast<RunnableStats*>(bytes_.data() + sizeof(StatsHeader))[r];
  }
  HyperepochStats& hyperepoch(std::uint32_t h) const {
    return reinterpret_cast<HyperepochStats*>(bytes_.data() + sizeof(StatsHeader) +
                                              std::uint64_t{header().runnableCount} * sizeof(RunnableStats))[h];
  }
  SwitchEntry& switchEntry(std::uint32_t k) const {
    return reinterpret_cast<SwitchEntry*>(bytes_.data() + sizeof(StatsHeader) +
                                          std::uint64_t{header().runnableCount} * sizeof(RunnableStats) +
                                          std::uint64_t{header().hyperepochCount} * sizeof(HyperepochStats))[k];
  }

  /// Chain `c` (below kStatsChainCapacity).
  ChainStats& chain(std::uint32_t c) const { return reinterpret_cast<ChainStats*>(bytes_.data() + tablesOffset())[c]; }
  /// Channel `c` (below kStatsChannelCapacity).
  ChannelStats& channel(std::uint32_t c) const {
    return reinterpret_cast<ChannelStats*>(bytes_.data() + tablesOffset() +
                                           std::uint64_t{kStatsChainCapacity} * sizeof(ChainStats))[c];
  }

  /// The writer: opens a batch (seq odd) and closes it (seq even).
  void beginWrite() const;
  void endWrite(std::int64_t nowNs) const;

 private:
  // Where the chain table starts: after the switch ring, on a cache line.
  std::uint64_t tablesOffset() const;

  std::span<std::byte> bytes_;
};

/// Copies a validated block under its sequence lock: retries while the drain writes, at most
/// `tries` times (kTimeout when the block never held still).
Result<StatsSnapshot> readStats(const StatsView& view, int tries = 1000);

}  // namespace tactus::shm
