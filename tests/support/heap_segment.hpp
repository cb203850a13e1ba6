// A schedule's segment in a heap buffer, initialized as the master initializes its shared-memory
// segment, for the in-process test tier: the client's worker and the master's roles run on it in
// the test's own process, the test playing the other side (the master's releases, a client's
// completions and records). Catch2-free: a bad schedule or a name it does not hold throws
// std::invalid_argument, which a test case reports as its failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::test {

/// A schedule, its run plan and its segment on the heap.
class HeapSegment {
 public:
  /// Lays out and initializes the segment for `schedule` as the master does (shm::layoutCounts,
  /// SegmentView::initialize, each hyperepoch's stopAt set to `stopAt`: the master's -e, the
  /// largest value for none), then moves it to `state` (the run starting at `runStartNs` when that
  /// is kRunning or later). The master's identity (masterPid) is left 0.
  explicit HeapSegment(Schedule schedule, shm::SegmentState state = shm::SegmentState::kRunning,
                       std::uint64_t stopAt = std::numeric_limits<std::uint64_t>::max(), std::int64_t runStartNs = 0);
  HeapSegment(const HeapSegment&) = delete;
  HeapSegment& operator=(const HeapSegment&) = delete;

  Schedule schedule;
  RunPlan plan;
  shm::SegmentView view;

  /// Releases every frame of `iterations` iterations (one epoch) and sets stopAt there: what the
  /// master's releaser leaves behind after that many iterations.
  void releaseAndStopAt(std::uint64_t iterations);

  /// The client named `name`.
  ClientId client(const std::string& name) const;
  /// The worker of client `clientName` on resource `resource`.
  std::uint32_t worker(const std::string& clientName, const std::string& resource) const;
  /// The runnable named `qualified` (`Client.Runnable`).
  RunnableId runnable(const std::string& qualified) const;
  /// The instance of runnable `qualified` in frame `frame`.
  InstanceId instance(const std::string& qualified, std::uint32_t frame = 0) const;
  /// The records worker `w` pushed into its ring (from the first; the ring must not have wrapped).
  std::vector<EventRecord> records(std::uint32_t w) const;

 private:
  std::unique_ptr<std::byte, decltype(&std::free)> bytes_{nullptr, &std::free};
};

}  // namespace tactus::test
