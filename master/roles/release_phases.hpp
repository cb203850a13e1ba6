// The phases of a hyperepoch's release thread (releaser.cpp, releaser_follow.cpp) and the decisions
// between them, as pure functions: no shared memory, no clock. The release loop runs one phase at
// a time; each phase's function ends with a PhaseResult, and nextPhase says where that leads.
//
//   kStartIteration -> kReleaseFrames | kStopping (a stop before the first iteration)
//   kReleaseFrames  -> kAwaitBoundary (of iteration h + 1)
//   kAwaitBoundary  -> kClosePrevious | kStopping (a stop at the boundary; taken)
//   kClosePrevious  -> kReleaseFrames (h - 1 done in time) | kOverrun
//   kOverrun        -> kReleaseFrames | kStopping (own clock: a stop asked while h - 1 ran over)
//   kStopping       -> kDrainLast | kDone (taken: its stopper recorded the end)
//   kDrainLast      -> kDone;  any phase, aborted -> kDone
//
// The same machine runs both loops: a master on its own clock (releaseLoop, its period boundaries)
// and a multi-SoC follower (followLoop: each boundary is the primary's start of the iteration).
#pragma once

#include <cstdint>

namespace tactus::master {

/// Where a hyperepoch's release thread is.
enum class ReleasePhase : std::uint8_t {
  kStartIteration,  ///< the loop's first iteration: a stop check (a follower: the primary's start of it)
  kAwaitBoundary,   ///< iteration h's start: sleep to the period boundary (a follower: the primary's start)
  kClosePrevious,   ///< at h's start: iteration h - 1 done? (then judged on time, h starts at the boundary)
  kOverrun,         ///< h - 1 is not done: wait for it, then h's start (skipped periods) and a kSkipped event
  kReleaseFrames,   ///< release iteration h's frames, each at its offset, then h + 1's boundary
  kStopping,        ///< no frame of h is released (stopAt): report the stop
  kDrainLast,       ///< let iteration h - 1 finish, then record the end
  kDone,            ///< the loop has ended (the thread leaves)
};

/// How a phase ended.
enum class PhaseResult : std::uint8_t {
  kNext,     ///< as planned: the phase's usual successor
  kOverran,  ///< kClosePrevious: iteration h - 1 is not done at h's start
  kStop,     ///< the loop stops at iteration h (a frame limit, a stop request, the primary's stop)
  kTaken,    ///< stopBetweenIterations stopped the loop while it slept (and recorded the end)
  kAborted,  ///< the run was aborted: leave at once
};

/// The phase after `phase` ended with `result` (kDone for a result the phase never gives).
constexpr ReleasePhase nextPhase(ReleasePhase phase, PhaseResult result) {
  using P = ReleasePhase;
  using R = PhaseResult;
  if (result == R::kAborted) return P::kDone;
  switch (phase) {
    case P::kStartIteration:
      return result == R::kNext ? P::kReleaseFrames : result == R::kStop ? P::kStopping : P::kDone;
    case P::kReleaseFrames: return result == R::kNext ? P::kAwaitBoundary : P::kDone;
    case P::kAwaitBoundary:
      if (result == R::kNext) return P::kClosePrevious;
      return result == R::kStop || result == R::kTaken ? P::kStopping : P::kDone;
    case P::kClosePrevious:
      return result == R::kNext ? P::kReleaseFrames : result == R::kOverran ? P::kOverrun : P::kDone;
    case P::kOverrun: return result == R::kNext ? P::kReleaseFrames : result == R::kStop ? P::kStopping : P::kDone;
    case P::kStopping: return result == R::kNext ? P::kDrainLast : P::kDone;
    case P::kDrainLast:
    case P::kDone: return P::kDone;
  }
  return P::kDone;
}

/// Why a loop stops at an iteration boundary, if it does.
enum class BoundaryStop : std::uint8_t {
  kGoOn,       ///< no stop: the iteration starts
  kAtLimit,    ///< the frame limit (the slot's stopAt, set before the run): nothing to record
  kRequested,  ///< a stop or abort request: the caller records stopAt = the iteration
};

/// The stop decision at the boundary of `iteration`: `asked()` (whether a stop or abort was
/// requested; the caller's loads of the flags) is called only below the frame `limit`.
template <typename Asked>
constexpr BoundaryStop boundaryStop(std::uint64_t iteration, std::uint64_t limit, Asked&& asked) {
  if (iteration >= limit) return BoundaryStop::kAtLimit;
  return asked() ? BoundaryStop::kRequested : BoundaryStop::kGoOn;
}

/// The verdict on iteration h - 1 at h's start.
struct CloseVerdict {
  bool overran = false;  ///< h - 1 is not done: h waits for it (kOverrun)
  bool late = false;     ///< judged late: it overran, or a frame of it did
};

/// `previousDone`: every instance of h - 1 finished; `frameLate`: a frame of h - 1 was released late.
constexpr CloseVerdict closeVerdict(bool previousDone, bool frameLate) {
  return {!previousDone, !previousDone || frameLate};
}

/// How iteration h starts after h - 1 overran its start, and the kSkipped event that records it.
struct Restart {
  std::int64_t startNs = 0;     ///< iteration h's start
  std::uint64_t skipped = 0;    ///< whole periods skipped (the event's aux)
  bool countSkipped = false;    ///< `skipped` adds to the hyperepoch's slot.skipped (own clock, not free-running)
  std::int64_t missedNs = 0;    ///< the start h missed (the event's ideal time)
  std::int64_t recordedNs = 0;  ///< the event's actual time
};

/// On the master's own clock: h - 1 started at `previousStartNs` and ended at `nowNs`, past its
/// period. Free-running (-m), h starts now; else at the first period boundary not passed yet (or
/// one at `nowNs` exactly), and the periods between h's own boundary and that start are skipped.
constexpr Restart restartOwn(std::int64_t previousStartNs, std::int64_t periodNs, std::int64_t nowNs,
                             bool freeRunning) {
  const std::int64_t missed = previousStartNs + periodNs;
  if (freeRunning) return {nowNs, 0, false, missed, nowNs};
  const std::int64_t periods = (nowNs - previousStartNs + periodNs - 1) / periodNs;  // >= 1 boundaries passed
  const std::int64_t start = previousStartNs + periods * periodNs;
  return {start, static_cast<std::uint64_t>(periods - 1), true, missed, start};
}

/// A multi-SoC follower: the primary started h at `primaryStartNs` (this host's clock); this SoC's
/// part of h - 1 ended at `nowNs`. h starts at the later of the two; nothing is skipped.
constexpr Restart restartFollowing(std::int64_t primaryStartNs, std::int64_t nowNs) {
  return {primaryStartNs > nowNs ? primaryStartNs : nowNs, 0, false, primaryStartNs, nowNs};
}

}  // namespace tactus::master
