// The master's log drain: empties the clients' event rings in shared memory and the release
// threads' own event rings (private memory) into the event log, with buffers allocated once.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "roles/run_control.hpp"
#include "roles/stats_publisher.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {

class OverrunWatch;

/// A single-producer single-consumer ring of the master's own events (releases, overruns,
/// skips): one release thread pushes, the drain pops. Fixed capacity, allocated once; a full ring
/// counts a drop instead of blocking the release thread.
class MasterEventRing {
 public:
  /// Records per ring (a power of two): a release thread writes one record per frame release,
  /// and the drain empties the ring every 2 ms.
  static constexpr std::uint32_t kCapacity = 4096;

  /// Appends a record (release thread).
  void push(const EventRecord& record) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= kCapacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    records_[head & (kCapacity - 1)] = record;
    head_.store(head + 1, std::memory_order_release);
  }
  /// Moves every waiting record to `out` (drain thread); returns how many.
  std::size_t popAll(std::vector<EventRecord>& out) {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    for (std::uint64_t k = tail; k < head; ++k) out.push_back(records_[k & (kCapacity - 1)]);
    tail_.store(head, std::memory_order_release);
    return static_cast<std::size_t>(head - tail);
  }
  /// Records lost because the ring was full.
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  std::array<EventRecord, kCapacity> records_{};
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

/// Sees every record the drain takes (--record's releases and switches: master/record/).
class EventTap {
 public:
  virtual ~EventTap() = default;
  virtual void see(const EventRecord* records, std::size_t count) = 0;
};

/// Drains the event rings into the log (or only counts, without a log).
class LogDrain {
 public:
  /// `view` has its geometry; `schedule` and `plan` outlive the drain.
  LogDrain(const shm::SegmentView& view, const Schedule& schedule, const RunPlan& plan, EventLogWriter& log);

  /// Drains every worker ring and the given master rings once. A ring whose indices are out of
  /// range (a client wrote them over) ends the run: returns the end naming the client.
  std::optional<RunEnd> drain(std::vector<MasterEventRing>& masterRings);

  /// Every record drained is shown to `watch` too (it outlives the drain; nullptr: none).
  void setOverrunWatch(OverrunWatch* watch) { overruns_ = watch; }
  /// Every record drained or published is shown to `tap` too (it outlives the drain; nullptr: none).
  void setEventTap(EventTap* tap) { tap_ = tap; }

  /// Shows records the drain did not take from a ring (the switch thread's) to the statistics
  /// block, whose one writer the drain is.
  void publishStats(const EventRecord* records, std::size_t count);

  /// Records written to the log so far.
  std::uint64_t recordsDrained() const { return recordsDrained_; }
  /// Records lost so far (the clients' rings and the release threads').
  std::uint64_t droppedTotal() const { return droppedTotal_; }

 private:
  /// Whether a record other than kRun from the ring of `client` (ClientId) is one tactus-check may
  /// write, with every index and code in range and the runnable one of that client's.
  bool violationRecordValid(const EventRecord& r, ClientId client) const;

  const shm::SegmentView& view_;
  const Schedule& schedule_;
  const RunPlan& plan_;
  EventLogWriter& log_;
  OverrunWatch* overruns_ = nullptr;
  EventTap* tap_ = nullptr;
  StatsPublisher stats_;                    // the segment's statistics block (tactus-top reads it)
  std::vector<std::uint64_t> tail_;         // per worker: the master's own copy of the ring's tail
  std::vector<std::uint64_t> droppedSeen_;  // per worker
  std::vector<EventRecord> batch_;          // reused; capacity fixed at construction
  std::uint64_t droppedTotal_ = 0;
  std::uint64_t masterDroppedSeen_ = 0;  // the release threads' rings' drops counted so far
  std::uint64_t recordsDrained_ = 0;
};

}  // namespace tactus::master
