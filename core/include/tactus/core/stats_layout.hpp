// The statistics block: a fixed-size area at the end of every schedule's segment that the
// master's log drain fills from the records it drains (per runnable durations and overruns, per
// hyperepoch releases, jitter and skips, the switch history), so that a reader outside the run
// (tactus-top, tactus-manager status) sees them without reading the event rings or adding any
// work to the workers' path. Passive structs only, frozen by static_assert; bump kStatsVersion
// on any change (the segment's layout version covers its place, this one its contents).
//
//   statsOffset    StatsHeader                              master: counts once; drain: seq, totals
//                  RunnableStats[runnableCount]              the drain writes
//                  HyperepochStats[hyperepochCount]          the drain writes
//                  SwitchEntry[kStatsSwitchCapacity]         the drain writes (a ring of the latest)
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
/// The statistics block's version; a reader of another version is refused, named.
inline constexpr std::uint32_t kStatsVersion = 1;
/// Durations kept per runnable for the median (the latest, a ring).
inline constexpr std::uint32_t kStatsRecent = 32;
/// Switches kept (the latest, a ring).
inline constexpr std::uint32_t kStatsSwitchCapacity = 32;

/// At the block's start.
struct alignas(64) StatsHeader {
  // --- line 0: identity; the master writes it once, before the segment is published ---
  std::atomic<std::uint64_t> magic;  ///< kStatsMagic
  std::uint32_t version;             ///< kStatsVersion
  std::uint32_t runnableCount;       ///< RunnableStats entries (the schedule's runnables)
  std::uint32_t hyperepochCount;     ///< HyperepochStats entries (the schedule's hyperepochs)
  std::uint32_t switchCapacity;      ///< SwitchEntry entries (kStatsSwitchCapacity)
  std::uint64_t blockSize;           ///< bytes of the whole block
  std::uint8_t reserved0[32];
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
  std::uint64_t batches = 0;
  std::int64_t updateNs = 0;
  std::uint64_t switches = 0;
  std::vector<Runnable> runnables;
  std::vector<Hyperepoch> hyperepochs;
  std::vector<Switch> switchHistory;  ///< oldest first, at most kStatsSwitchCapacity
};

/// A typed view of a statistics block's bytes (a segment's area or a test's buffer).
class StatsView {
 public:
  StatsView() = default;
  explicit StatsView(std::span<std::byte> bytes) : bytes_(bytes) {}

  /// The master: writes a fresh block for the counts (the buffer holds statsBlockSize bytes).
  void initialize(std::uint32_t runnables, std::uint32_t hyperepochs) const;

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

  /// The writer: opens a batch (seq odd) and closes it (seq even).
  void beginWrite() const;
  void endWrite(std::int64_t nowNs) const;

 private:
  std::span<std::byte> bytes_;
};

/// Copies a validated block under its sequence lock: retries while the drain writes, at most
/// `tries` times (kTimeout when the block never held still).
Result<StatsSnapshot> readStats(const StatsView& view, int tries = 1000);

}  // namespace tactus::shm
