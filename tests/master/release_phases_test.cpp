// The release thread's phases and decisions (release_phases.hpp): the transitions between the
// phases, the stop decision at a boundary, the verdict on the previous iteration and the start of
// an iteration after an overrun, on the master's own clock and on a multi-SoC follower's.
#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

#include "roles/release_phases.hpp"

namespace tactus::master {
namespace {

using P = ReleasePhase;
using R = PhaseResult;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kPeriod = 10 * kMs;

// The phases a loop goes through from kStartIteration when its phases end with `results` in turn.
std::vector<P> walk(std::initializer_list<R> results) {
  std::vector<P> phases{P::kStartIteration};
  for (const R r : results) phases.push_back(nextPhase(phases.back(), r));
  return phases;
}

TEST_CASE("each phase's usual end leads to the next phase of an iteration", "[master][release_phases]") {
  CHECK(nextPhase(P::kStartIteration, R::kNext) == P::kReleaseFrames);
  CHECK(nextPhase(P::kReleaseFrames, R::kNext) == P::kAwaitBoundary);
  CHECK(nextPhase(P::kAwaitBoundary, R::kNext) == P::kClosePrevious);
  CHECK(nextPhase(P::kClosePrevious, R::kNext) == P::kReleaseFrames);
  CHECK(nextPhase(P::kClosePrevious, R::kOverran) == P::kOverrun);
  CHECK(nextPhase(P::kOverrun, R::kNext) == P::kReleaseFrames);
  CHECK(nextPhase(P::kStopping, R::kNext) == P::kDrainLast);
  CHECK(nextPhase(P::kDrainLast, R::kNext) == P::kDone);
  CHECK(nextPhase(P::kDone, R::kNext) == P::kDone);
}

TEST_CASE("a stop leads to kStopping, a taken loop and an abort to kDone", "[master][release_phases]") {
  CHECK(nextPhase(P::kStartIteration, R::kStop) == P::kStopping);
  CHECK(nextPhase(P::kAwaitBoundary, R::kStop) == P::kStopping);
  CHECK(nextPhase(P::kOverrun, R::kStop) == P::kStopping);         // own clock: a stop asked during the overrun
  CHECK(nextPhase(P::kAwaitBoundary, R::kTaken) == P::kStopping);  // a primary still reports the stop
  CHECK(nextPhase(P::kStopping, R::kTaken) == P::kDone);           // its stopper recorded the end
  for (const P p : {P::kStartIteration, P::kAwaitBoundary, P::kClosePrevious, P::kOverrun, P::kReleaseFrames,
                    P::kStopping, P::kDrainLast, P::kDone}) {
    CAPTURE(static_cast<int>(p));
    CHECK(nextPhase(p, R::kAborted) == P::kDone);
  }
  // Results a phase never gives end the loop rather than loop on.
  CHECK(nextPhase(P::kReleaseFrames, R::kStop) == P::kDone);
  CHECK(nextPhase(P::kClosePrevious, R::kStop) == P::kDone);
  CHECK(nextPhase(P::kStartIteration, R::kOverran) == P::kDone);
}

TEST_CASE("a run walks its iterations through the phases: on time, an overrun, a stop", "[master][release_phases]") {
  // Iteration 0; iteration 1 on time; iteration 2 after iteration 1 overran; a stop at iteration 3's boundary.
  CHECK(walk({R::kNext, R::kNext, R::kNext, R::kNext, R::kNext, R::kNext, R::kOverran, R::kNext, R::kNext, R::kStop,
              R::kNext, R::kNext}) == std::vector<P>{P::kStartIteration, P::kReleaseFrames, P::kAwaitBoundary,
                                                     P::kClosePrevious, P::kReleaseFrames, P::kAwaitBoundary,
                                                     P::kClosePrevious, P::kOverrun, P::kReleaseFrames,
                                                     P::kAwaitBoundary, P::kStopping, P::kDrainLast, P::kDone});
  // A frame limit (or a stop) before the first iteration: nothing released, nothing to drain but the end.
  CHECK(walk({R::kStop, R::kNext, R::kNext}) ==
        std::vector<P>{P::kStartIteration, P::kStopping, P::kDrainLast, P::kDone});
  // Taken between two iterations by stopBetweenIterations: no drain.
  CHECK(walk({R::kNext, R::kNext, R::kTaken, R::kTaken}) ==
        std::vector<P>{P::kStartIteration, P::kReleaseFrames, P::kAwaitBoundary, P::kStopping, P::kDone});
  // Aborted while it waits for the overrunning iteration: no stop report, no drain.
  CHECK(walk({R::kNext, R::kNext, R::kNext, R::kOverran, R::kAborted}) ==
        std::vector<P>{P::kStartIteration, P::kReleaseFrames, P::kAwaitBoundary, P::kClosePrevious, P::kOverrun,
                       P::kDone});
}

TEST_CASE("the boundary stops at the frame limit or on a request, and reads the request below the limit only",
          "[master][release_phases]") {
  int asked = 0;
  const auto no = [&] {
    ++asked;
    return false;
  };
  const auto yes = [&] {
    ++asked;
    return true;
  };
  CHECK(boundaryStop(3, 10, no) == BoundaryStop::kGoOn);
  CHECK(asked == 1);
  CHECK(boundaryStop(3, 10, yes) == BoundaryStop::kRequested);  // the caller records stopAt = 3
  CHECK(asked == 2);
  CHECK(boundaryStop(10, 10, yes) == BoundaryStop::kAtLimit);  // stopAt is already the limit
  CHECK(boundaryStop(11, 10, no) == BoundaryStop::kAtLimit);
  CHECK(asked == 2);
  CHECK(boundaryStop(0, 0, yes) == BoundaryStop::kAtLimit);              // a limit of 0: no iteration at all
  const std::uint64_t none = std::numeric_limits<std::uint64_t>::max();  // no frame limit
  CHECK(boundaryStop(1'000'000, none, no) == BoundaryStop::kGoOn);
  static_assert(boundaryStop(1, 1, [] { return false; }) == BoundaryStop::kAtLimit);
}

TEST_CASE("the previous iteration is judged on time, late by a frame, or overrun", "[master][release_phases]") {
  CHECK(!closeVerdict(true, false).overran);
  CHECK(!closeVerdict(true, false).late);
  CHECK(!closeVerdict(true, true).overran);  // a late frame: judged late, the iteration still starts on time
  CHECK(closeVerdict(true, true).late);
  CHECK(closeVerdict(false, false).overran);
  CHECK(closeVerdict(false, false).late);
  CHECK(closeVerdict(false, true).overran);
  CHECK(closeVerdict(false, true).late);
}

TEST_CASE("after an overrun on the own clock the iteration starts at the next boundary not passed",
          "[master][release_phases]") {
  const std::int64_t start = 100 * kMs;  // iteration h - 1's start; h's boundary is start + kPeriod
  SECTION("ended at the boundary exactly: h starts on it, nothing skipped") {
    const Restart r = restartOwn(start, kPeriod, start + kPeriod, false);
    CHECK(r.startNs == start + kPeriod);
    CHECK(r.skipped == 0);
    CHECK(r.countSkipped);
    CHECK(r.missedNs == start + kPeriod);
    CHECK(r.recordedNs == start + kPeriod);
  }
  SECTION("late by less than a period: one period skipped") {
    const Restart r = restartOwn(start, kPeriod, start + kPeriod + 1, false);
    CHECK(r.startNs == start + 2 * kPeriod);
    CHECK(r.skipped == 1);
    CHECK(r.countSkipped);
    CHECK(r.missedNs == start + kPeriod);
    CHECK(r.recordedNs == start + 2 * kPeriod);
  }
  SECTION("late by several periods: each period between h's boundary and its start is skipped") {
    const Restart r = restartOwn(start, kPeriod, start + 3 * kPeriod + 4 * kMs, false);
    CHECK(r.startNs == start + 4 * kPeriod);
    CHECK(r.skipped == 3);
    CHECK(r.missedNs == start + kPeriod);
    CHECK(r.recordedNs == start + 4 * kPeriod);
    // On a later boundary exactly: h starts on it.
    CHECK(restartOwn(start, kPeriod, start + 3 * kPeriod, false).startNs == start + 3 * kPeriod);
    CHECK(restartOwn(start, kPeriod, start + 3 * kPeriod, false).skipped == 2);
  }
  SECTION("free-running (-m): h starts when h - 1 ended, nothing skipped or counted") {
    const Restart r = restartOwn(start, kPeriod, start + 3 * kPeriod + 4 * kMs, true);
    CHECK(r.startNs == start + 3 * kPeriod + 4 * kMs);
    CHECK(r.skipped == 0);
    CHECK(!r.countSkipped);
    CHECK(r.missedNs == start + kPeriod);
    CHECK(r.recordedNs == start + 3 * kPeriod + 4 * kMs);
  }
  static_assert(restartOwn(0, 10, 25, false).startNs == 30 && restartOwn(0, 10, 25, false).skipped == 2);
}

TEST_CASE("after an overrun a follower's iteration starts at the later of the primary's start and its own end",
          "[master][release_phases]") {
  const std::int64_t primary = 200 * kMs;  // the primary's start of h, on this host's clock
  SECTION("this SoC's part of h - 1 ended after the primary's start: h starts at that end") {
    const Restart r = restartFollowing(primary, primary + 3 * kMs);
    CHECK(r.startNs == primary + 3 * kMs);
    CHECK(r.skipped == 0);
    CHECK(!r.countSkipped);
    CHECK(r.missedNs == primary);
    CHECK(r.recordedNs == primary + 3 * kMs);
  }
  SECTION("the primary's start is later than this SoC's overrun ended: h starts at the primary's start") {
    const Restart r = restartFollowing(primary, primary - 2 * kMs);
    CHECK(r.startNs == primary);
    CHECK(r.skipped == 0);
    CHECK(!r.countSkipped);
    CHECK(r.missedNs == primary);
    CHECK(r.recordedNs == primary - 2 * kMs);  // the event records when h - 1 ended
  }
}

}  // namespace
}  // namespace tactus::master
