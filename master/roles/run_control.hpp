// What the master's roles share about one run: whether it must stop (and why), whether it was
// aborted, and how a role reports the end it found (RunEnd), which the composition publishes.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"

namespace tactus::master {

/// An end of the run that a role found (a client died, refused, is stuck; the segment is damaged).
struct RunEnd {
  shm::SegmentState state = shm::SegmentState::kAborted;  ///< kFinished or kAborted
  shm::StopReason reason = shm::StopReason::kError;       ///< why
  ClientId client = kNone;                                ///< the client it names, or kNone
  std::string message;                                    ///< in words, for the log and the clients
};

/// The stop and abort flags the release threads and the monitor loop share (private memory).
class RunControl {
 public:
  /// Asks the release threads to stop at the next iteration boundary; the first reason wins.
  void requestStop(shm::StopReason reason, ClientId client) {
    auto none = static_cast<std::uint32_t>(shm::StopReason::kNone);
    if (stopReason_.compare_exchange_strong(none, static_cast<std::uint32_t>(reason))) {
      stopClient_.store(index(client));
      stopRequested_.store(true, std::memory_order_release);
    }
  }
  /// Whether a stop was requested.
  bool stopRequested() const { return stopRequested_.load(std::memory_order_acquire); }
  /// The first stop reason requested (kNone if none).
  shm::StopReason stopReason() const { return static_cast<shm::StopReason>(stopReason_.load()); }
  /// The client the first stop request named (kNone if none).
  ClientId stopClient() const { return ClientId{stopClient_.load()}; }
  /// Makes every release thread leave at once (the run failed or must end now).
  void abort() {
    aborted_.store(true, std::memory_order_release);
    wakeSleepers();
  }
  /// Whether the run was aborted.
  bool aborted() const { return aborted_.load(std::memory_order_relaxed); }
  /// Wakes every thread in sleepUntil (abort() does; so does a hyperepoch's stop request).
  void wakeSleepers() { ipc::signalWord(wakeWord_); }
  /// Sleeps until `deadlineNs` (CLOCK_MONOTONIC), or until abort() or wakeSleepers(); `done()` is
  /// asked before each sleep (true: return at once). Returns false when the run was aborted. One
  /// sleep to the deadline, no slices: a release thread that woke every few milliseconds took a
  /// planned core from a runnable each time.
  template <typename Done>
  bool sleepUntil(std::int64_t deadlineNs, Done&& done) {
    for (;;) {
      const std::uint32_t seen = wakeWord_.load(std::memory_order_acquire);
      if (aborted()) return false;
      if (done() || ipc::monotonicNs() >= deadlineNs) return true;
      (void)ipc::futexWaitUntil(wakeWord_, seen, deadlineNs);
    }
  }

 private:
  std::atomic<bool> aborted_{false};
  std::atomic<bool> stopRequested_{false};
  std::atomic<std::uint32_t> stopReason_{static_cast<std::uint32_t>(shm::StopReason::kNone)};
  std::atomic<std::uint32_t> stopClient_{kNone};
  std::atomic<std::uint32_t> wakeWord_{0};  // futex word: bumped by abort() and wakeSleepers()
};

}  // namespace tactus::master
