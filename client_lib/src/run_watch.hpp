// What a client's main thread does while its workers run: it watches the master and the segment,
// so that a dead master or a damaged segment halts the workers instead of leaving them waiting.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime.hpp"

namespace tactus::client {

/// Looks at the master and the segment once: a dead master or a damaged segment halts the workers
/// (sets `halted`, and `masterDead` or `damage`).
void watchMasterAndSegment(Runtime& rt);
/// Looks at the segment once: a damaged one (removed, truncated) halts the workers (`damage`).
void watchSegment(Runtime& rt);

/// The workers' way to tell the watching thread that one has left: an eventfd it polls.
class WorkerExits {
 public:
  WorkerExits();
  WorkerExits(const WorkerExits&) = delete;
  WorkerExits& operator=(const WorkerExits&) = delete;
  ~WorkerExits();
  /// Called by a worker as it leaves: counts it out of `running` (a runtime's `workersRunning`),
  /// wakes a futex waiter on that word and the watching thread.
  void leave(std::atomic<std::uint32_t>& running) const noexcept;

 private:
  friend void watchWhileWorkersRun(Runtime& primary, const std::vector<Runtime*>& all, WorkerExits& exits);
  int fd_ = -1;
};

/// Watches until `primary.workersRunning` is 0; a halt of any runtime in `all` (the
/// primary's: a dead master or a damaged segment; any one's: a failed GPU call) halts them all. It sleeps on the
/// master's pidfd and on `exits`, so a dead master or a leaving worker wakes it at once, and looks at the segment every
/// 100 ms meanwhile: it does not wake while the plan runs (a thread that woke every few milliseconds took a planned
/// core from a runnable each time). Without a pidfd it looks every 5 ms, as it did before.
void watchWhileWorkersRun(Runtime& primary, const std::vector<Runtime*>& all, WorkerExits& exits);

}  // namespace tactus::client
