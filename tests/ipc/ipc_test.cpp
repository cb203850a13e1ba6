// Unit tests of ipc: shared-memory segments, futex waiting and process watching.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "runtime_harness.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

using namespace tactus;

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
