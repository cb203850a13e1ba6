// Unit tests of ipc: shared-memory segments, futex waiting and process watching.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <span>
#include <thread>

#include "runtime_harness.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

using namespace tactus;

TEST_CASE("a time-out becomes a deadline, or never where the clock cannot hold it", "[ipc]") {
  CHECK(ipc::deadlineAfterMs(1'000, 5) == 5'001'000);
  CHECK(ipc::deadlineAfterMs(1'000, 0) == 1'000);
  CHECK(ipc::deadlineAfterMs(1'000, -1) == INT64_MAX);  // a negative time-out waits for ever
  // Too long to add: for ever, not a deadline in the past (the client's init and the manager
  // failed at once on such a time-out when the sum overflowed).
  CHECK(ipc::deadlineAfterMs(ipc::monotonicNs(), INT64_MAX) == INT64_MAX);
  CHECK(ipc::deadlineAfterMs(INT64_MAX - 10, 1) == INT64_MAX);
  const std::int64_t justFits = (INT64_MAX - 7) / 1'000'000;
  CHECK(ipc::deadlineAfterMs(7, justFits) == 7 + justFits * 1'000'000);
}

TEST_CASE("segments are exclusive, named from the instance, and removed by name", "[ipc]") {
  const std::string instance = test::uniqueInstance("segment");
  auto missing = ipc::Segment::open(instance);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  auto a = ipc::Segment::create(instance, 4096);
  REQUIRE(a.has_value());
  CHECK(a->bytes().size() == 4096);
  CHECK(ipc::segmentExists(instance));
  auto b = ipc::Segment::create(instance, 4096);
  REQUIRE_FALSE(b.has_value());
  CHECK(b.error().code == ErrorCode::kAlreadyExists);
  auto c = ipc::Segment::open(instance);
  REQUIRE(c.has_value());
  a->bytes()[100] = std::byte{0x5a};
  CHECK(c->bytes()[100] == std::byte{0x5a});
  CHECK(ipc::removeSegment(instance));
  CHECK_FALSE(ipc::segmentExists(instance));
  auto bad = ipc::Segment::create("../etc", 64);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kBadParameter);
}

TEST_CASE("a segment removes its name only while the name still refers to it", "[ipc]") {
  const std::string instance = test::uniqueInstance("ours");
  auto first = ipc::Segment::create(instance, 4096);
  REQUIRE(first.has_value());
  auto opened = ipc::Segment::open(instance);  // a client's mapping of the first segment
  REQUIRE(opened.has_value());
  // A newer master replaced the name: the old mapping must leave the fresh segment alone.
  REQUIRE(ipc::removeSegment(instance));
  auto fresh = ipc::Segment::create(instance, 4096);
  REQUIRE(fresh.has_value());
  CHECK_FALSE(opened->removeNameIfStillOurs(instance));
  CHECK(ipc::segmentExists(instance));
  // The fresh segment's own mapping (here a second opener) removes it.
  auto sameAsFresh = ipc::Segment::open(instance);
  REQUIRE(sameAsFresh.has_value());
  CHECK(sameAsFresh->removeNameIfStillOurs(instance));
  CHECK_FALSE(ipc::segmentExists(instance));
  CHECK_FALSE(fresh->removeNameIfStillOurs(instance));  // no name left: nothing to remove
  CHECK_FALSE(ipc::Segment().removeNameIfStillOurs(instance));
}

TEST_CASE("every guarded mapping survives its object's truncation and says so; the others stay clean", "[ipc]") {
  // A master or client under a manager maps one segment per schedule: the first one mapped, not
  // only the last, must survive a truncation (only the last was guarded before).
  const std::string a = test::uniqueInstance("guard_a");
  const std::string b = test::uniqueInstance("guard_b");
  constexpr std::size_t kPage = 4096;
  auto first = ipc::Segment::create(a, 3 * kPage);
  auto second = ipc::Segment::create(b, 3 * kPage);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  first->guardAgainstTruncation();
  second->guardAgainstTruncation();
  REQUIRE(::truncate(ipc::segmentPath(a).c_str(), kPage) == 0);
  std::span<std::byte> bytes = first->bytes();
  volatile std::byte* beyond = bytes.data() + 2 * kPage;  // past the new end: SIGBUS, taken by the guard
  *beyond = std::byte{1};
  CHECK(*beyond == std::byte{1});  // a private page now: the write lands there, the process lives
  CHECK(first->busFault());
  CHECK_FALSE(second->busFault());
  second->bytes()[2 * kPage] = std::byte{2};  // the other mapping is still shared and whole
  CHECK_FALSE(second->busFault());
  CHECK(ipc::removeSegment(a));
  CHECK(ipc::removeSegment(b));
  CHECK_FALSE(ipc::Segment().busFault());
}

TEST_CASE("a segment's byte lock is held by one open at a time, seen by the others, and ends with its holder",
          "[ipc]") {
  const std::string instance = test::uniqueInstance("lock");
  auto master = ipc::Segment::create(instance, 4096);
  REQUIRE(master.has_value());
  CHECK_FALSE(master->lockHeldElsewhere(192));
  {
    auto manager = ipc::Segment::open(instance);
    REQUIRE(manager.has_value());
    CHECK(manager->holdLock(192) == 0);
    CHECK(master->lockHeldElsewhere(192));
    CHECK_FALSE(master->lockHeldElsewhere(193));   // one byte
    CHECK_FALSE(manager->lockHeldElsewhere(192));  // its own
    CHECK(master->holdLock(192) == EAGAIN);        // a second claimant
    {
      // Another open and close of the object in the holder's process leaves its lock alone (an
      // open-file-description lock, not a process's POSIX lock).
      auto again = ipc::Segment::open(instance);
      REQUIRE(again.has_value());
    }
    CHECK(master->lockHeldElsewhere(192));
  }
  CHECK_FALSE(master->lockHeldElsewhere(192));  // the holder closed the object
  CHECK(ipc::removeSegment(instance));
}

TEST_CASE("a sleeping waiter is woken by a publisher and an aborted wait returns", "[ipc]") {
  alignas(64) std::atomic<std::uint32_t> word{0};
  alignas(64) std::atomic<std::uint32_t> waiters{0};
  std::thread publisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the waiter is asleep by then
    ipc::publishSequence(word, waiters, 1);
  });
  const std::int64_t t0 = ipc::monotonicNs();
  CHECK(ipc::waitForSequence(word, waiters, 1, 1000, [] { return false; }) == ipc::WaitOutcome::kReached);
  CHECK(ipc::monotonicNs() - t0 < 2 * ipc::kSleepSliceNs + 30'000'000);
  publisher.join();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop.store(true);
  });
  CHECK(ipc::waitForSequence(word, waiters, 2, 1000, [&] { return stop.load(); }) == ipc::WaitOutcome::kAborted);
  stopper.join();
  CHECK(waiters.load() == 0);
}

TEST_CASE("a plan-guided wait is woken by an early publish and follows a late one; an abort ends it", "[ipc][plan]") {
  alignas(64) std::atomic<std::uint32_t> word{0};
  alignas(64) std::atomic<std::uint32_t> waiters{0};
  ipc::SpinMeter meter;
  // Expected an hour from now: the waiter sleeps on the word, so only the publish can end the wait.
  const std::int64_t hourAhead = ipc::monotonicNs() + 3'600'000'000'000;
  std::thread early([&] {
    while (waiters.load() == 0) std::this_thread::yield();  // the waiter sleeps on the word
    ipc::publishSequence(word, waiters, 1);
  });
  CHECK(ipc::waitForSequencePlanned(
            word, waiters, 1, [&](std::int64_t) { return hourAhead; }, 100'000, 1000, [] { return false; }, meter) ==
        ipc::WaitOutcome::kReached);
  early.join();
  CHECK(word.load() == 1);
  CHECK(waiters.load() == 0);
  // Expected 1 ms ago: no sleep, it spins until the publish (and the meter counts the spin).
  std::atomic<bool> spinning{false};
  std::thread late([&] {
    while (!spinning.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ipc::publishSequence(word, waiters, 2);
  });
  spinning.store(true);
  const std::int64_t past = ipc::monotonicNs() - 1'000'000;
  CHECK(ipc::waitForSequencePlanned(
            word, waiters, 2, [&](std::int64_t) { return past; }, 100'000, 1'000'000'000, [] { return false; },
            meter) == ipc::WaitOutcome::kReached);
  late.join();
  meter.close(ipc::monotonicNs());
  CHECK(meter.spunNs > 0);
  // Nobody publishes: the abort ends a plan-guided sleep.
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop.store(true);
  });
  CHECK(ipc::waitForSequencePlanned(
            word, waiters, 3, [&](std::int64_t now) { return now + 20'000'000; }, 100'000, 1000,
            [&] { return stop.load(); }, meter) == ipc::WaitOutcome::kAborted);
  stopper.join();
  CHECK(waiters.load() == 0);
}

TEST_CASE("a predecessor's expected end: by its start once started, else by the plan and the gap", "[ipc][plan]") {
  // The predecessor: planned to end 10 ms into the iteration, 4 ms long; the waiter is planned
  // ready 1 ms into it, so the plan puts the predecessor's end 9 ms after the waiter's readiness.
  const ipc::PlannedPredecessor p{10'000'000, 9'000'000, 4'000'000};
  const std::int64_t iteration = 1'000'000'000;
  // On the plan: ready 1 ms in, expected at the planned end (10 ms in).
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 1'000'000) == iteration + 10'000'000);
  // Running 0.9 ms ahead of the plan (runnables that ended early): 9 ms from now, not at the
  // planned end; a chain far ahead would otherwise sleep until far planned ends.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 100'000) == iteration + 9'100'000);
  // Behind the plan by 3 ms: the planned end is sooner than the gap, but not before a WCET from now.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 4'000'000) == iteration + 10'000'000);
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 8'000'000) == iteration + 12'000'000);
  // Started 2 ms in: a WCET after its start, whatever the plan says.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, iteration + 2'000'000, iteration + 2'500'000) ==
        iteration + 6'000'000);
  // A start outside [iteration start, now] (written over, or of another iteration) is not used.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, iteration - 5, iteration + 100'000) == iteration + 9'100'000);
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, iteration + 7'000'000, iteration + 100'000) ==
        iteration + 9'100'000);
  // No iteration start known: no plan to wait by.
  CHECK(ipc::expectedPredecessorEndNs(p, 0, 0, iteration) <= 0);
  // With the waiter's lead (100 us), a predecessor that has not started and whose WCET exceeds
  // the lead by more than kMinPlanSleepNs is expected a WCET from now, whatever the plan says: the
  // waiter sleeps no longer than it could take to end if it started now, then asks again.
  const std::int64_t lead = 100'000;
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 1'000'000, lead) == iteration + 5'000'000);
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 8'000'000, lead) == iteration + 12'000'000);
  // Started: a WCET after its start, as without the lead.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, iteration + 2'000'000, iteration + 2'500'000, lead) ==
        iteration + 6'000'000);
  // A short predecessor (WCET under twice the lead: its steps would wake the waiter too often)
  // keeps the plan; at twice the lead it steps.
  const ipc::PlannedPredecessor shortOne{10'000'000, 9'000'000, 2 * lead - 1};
  CHECK(ipc::expectedPredecessorEndNs(shortOne, iteration, 0, iteration + 1'000'000, lead) == iteration + 10'000'000);
  const ipc::PlannedPredecessor twiceLead{10'000'000, 9'000'000, 2 * lead};
  CHECK(ipc::expectedPredecessorEndNs(twiceLead, iteration, 0, iteration + 1'000'000, lead) ==
        iteration + 1'000'000 + 2 * lead);
  // Lead 0 (a predecessor on another SoC, whose start is not seen here): by the plan.
  CHECK(ipc::expectedPredecessorEndNs(p, iteration, 0, iteration + 1'000'000, 0) == iteration + 10'000'000);
}

TEST_CASE("a plan-guided waiter sleeps in WCET steps and asks again, so it sees a predecessor that starts early",
          "[ipc][plan]") {
  // The predecessor is planned to end 50 ms from now (far: by the plan alone the waiter would
  // sleep until 49.5 ms, asking once, and be woken by the publish); it starts after 5 ms and ends
  // 2 ms later. With steps of (WCET - lead) = 1.5 ms the waiter asks again at least three times
  // before the end (at about 0, 1.5, 3 and 4.5 ms, then from the start on).
  // Counted, not timed: a loaded machine may delay the wake-ups, not make them fewer than that
  // unless it stalls the waiter for most of the 7 ms.
  alignas(64) std::atomic<std::uint32_t> word{0};
  alignas(64) std::atomic<std::uint32_t> waiters{0};
  std::atomic<std::int64_t> startedNs{0};
  const std::int64_t wcet = 2'000'000, lead = 500'000;
  const std::int64_t iteration = ipc::monotonicNs();
  const ipc::PlannedPredecessor p{50'000'000, 50'000'000, wcet};
  std::thread predecessor([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::int64_t start = ipc::monotonicNs();
    startedNs.store(start);
    std::this_thread::sleep_for(std::chrono::nanoseconds(wcet));
    ipc::publishSequence(word, waiters, 1);
  });
  ipc::SpinMeter meter;
  int asked = 0;
  const auto expected = [&](std::int64_t now) {
    ++asked;
    return ipc::expectedPredecessorEndNs(p, iteration, startedNs.load(), now, lead);
  };
  CHECK(ipc::waitForSequencePlanned(
            word, waiters, 1, expected, lead, 0, [] { return false; }, meter) == ipc::WaitOutcome::kReached);
  predecessor.join();
  CHECK(asked >= 3);
  // Without the lead (the old rule, or a predecessor on another SoC) it goes by the plan: one look.
  word.store(0);
  startedNs.store(0);
  asked = 0;
  std::thread again([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ipc::publishSequence(word, waiters, 1);
  });
  const auto byPlan = [&](std::int64_t now) {
    ++asked;
    return ipc::expectedPredecessorEndNs(p, iteration, startedNs.load(), now, 0);
  };
  CHECK(ipc::waitForSequencePlanned(
            word, waiters, 1, byPlan, lead, 0, [] { return false; }, meter) == ipc::WaitOutcome::kReached);
  again.join();
  CHECK(asked <= 1);
  CHECK(waiters.load() == 0);
}

TEST_CASE("a plan-guided wait for a late word polls lateNs longer (at most 4 leads), yielding if asked",
          "[ipc][plan]") {
  CHECK(ipc::pollLateNs(300'000, 100'000) == 300'000);
  CHECK(ipc::pollLateNs(5'000'000, 100'000) == 400'000);  // a slow network's bound: 4 leads
  CHECK(ipc::pollLateNs(-1, 100'000) == 0);
  for (const ipc::SpinStyle style : {ipc::SpinStyle::kPause, ipc::SpinStyle::kYield}) {
    alignas(64) std::atomic<std::uint32_t> word{0};
    alignas(64) std::atomic<std::uint32_t> waiters{0};
    std::atomic<bool> waiting{false};
    // Expected now, lead 1 ms, published 2 ms later: without lateNs the spin window (1 ms past
    // the expected time) ends first and the waiter sleeps on the futex; with 3 ms of lateNs it is
    // still polling when the word comes, so no one sleeps and the whole wait counts as spin.
    std::thread late([&] {
      while (!waiting.load()) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ipc::publishSequence(word, waiters, 1);
    });
    ipc::SpinMeter meter;
    waiting.store(true);
    const std::int64_t expected = ipc::monotonicNs();
    CHECK(ipc::waitForSequencePlanned(
              word, waiters, 1, [&](std::int64_t) { return expected; }, 1'000'000, 0, [] { return false; }, meter,
              style, 3'000'000) == ipc::WaitOutcome::kReached);
    late.join();
    meter.close(ipc::monotonicNs());
    CHECK(meter.spunNs >= 1'900'000);
    CHECK(waiters.load() == 0);
  }
}

TEST_CASE("futexWaitUntil returns at a deadline already passed and when the word differs", "[ipc][plan]") {
  std::atomic<std::uint32_t> word{7};
  CHECK(ipc::futexWaitUntil(word, 7, ipc::monotonicNs() - 1000) == ipc::FutexWaitResult::kTimedOut);
  CHECK(ipc::futexWaitUntil(word, 8, ipc::monotonicNs() + 3'600'000'000'000) == ipc::FutexWaitResult::kWoken);
}

TEST_CASE("a process watch sees a child exit even while it is an unreaped zombie", "[ipc]") {
  const pid_t child = ::fork();
  if (child == 0) {
    ::usleep(20'000);
    ::_exit(0);
  }
  ipc::ProcessWatch watch(child, ipc::processStartTime(child));
  CHECK_FALSE(watch.exited());
  CHECK(ipc::processAlive(child));
  const std::int64_t t0 = ipc::monotonicNs();
  while (!watch.exited() && ipc::monotonicNs() - t0 < 2'000'000'000) ::usleep(1000);
  CHECK(watch.exited());
  CHECK_FALSE(ipc::processAlive(child));  // a zombie counts as dead
  int status = 0;
  ::waitpid(child, &status, 0);
}
