// Unit tests of the runtime's building blocks: shared-memory layout on a plain buffer, run plan,
// event log file, segments, futex waiting and process watching.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

using namespace tactus;

namespace {

struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t n) : size(n), data(static_cast<std::byte*>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {}
  ~AlignedBuffer() { std::free(data); }
  std::span<std::byte> span() { return {data, size}; }
  std::size_t size;
  std::byte* data;
};

Schedule smallSchedule() {
  return test::makeSchedule({{"Client0", "A", "CPU0", 50'000, {}, 0, {}},
                             {"Client1", "B", "CPU1", 30'000, {"Client0.A"}, 0, {}},
                             {"Client1", "C", "CPU0", 30'000, {"Client1.B"}, 0, {}}},
                            1'000'000, 1);
}

}  // namespace

TEST_CASE("the segment layout puts every area on its own cache lines and validates its header", "[layout]") {
  shm::LayoutCounts counts{2, 3, 17, 2, 3, 64, 1000};
  const shm::LayoutOffsets o = shm::computeLayout(counts);
  for (std::uint64_t off : {o.hyperepoch, o.epoch, o.instance, o.client, o.worker, o.ring, o.text, o.total}) {
    CHECK(off % shm::kCacheLine == 0);
  }
  CHECK(o.epoch >= o.hyperepoch + 2 * sizeof(shm::HyperepochSlot));
  CHECK(o.text + 1000 <= o.total);
  AlignedBuffer buffer(o.total);
  shm::SegmentView view(buffer.span());
  REQUIRE(view.initialize(counts).has_value());
  CHECK(view.hasHeader());
  CHECK(view.validate().has_value());
  CHECK(reinterpret_cast<std::byte*>(&view.instance(16)) + sizeof(shm::InstanceSlot) <= buffer.data + o.client);
  view.header().layoutVersion = shm::kLayoutVersion + 1;
  auto bad = view.validate();
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kIncompatible);
  CHECK(bad.error().message.find("layout version") != std::string::npos);
  view.header().layoutVersion = shm::kLayoutVersion;
  view.header().instanceOffset += 64;
  CHECK_FALSE(view.validate().has_value());
}

TEST_CASE("the view keeps its own copy of the geometry and names a header field written over", "[layout]") {
  shm::LayoutCounts counts{1, 2, 5, 2, 2, 64, 100};
  AlignedBuffer buffer(shm::computeLayout(counts).total);
  shm::SegmentView master(buffer.span());
  REQUIRE(master.initialize(counts).has_value());
  shm::SegmentView client(buffer.span());
  REQUIRE(client.validate().has_value());
  shm::EpochSlot* epoch1 = &client.epoch(1);
  CHECK(client.changedHeaderField().empty());
  client.header().epochOffset += 1'000'000'000;  // far outside the buffer
  CHECK(&client.epoch(1) == epoch1);            // the accessors use the private copy
  CHECK(client.changedHeaderField() == "epochOffset");
  CHECK(master.changedHeaderField() == "epochOffset");
  client.header().epochOffset -= 1'000'000'000;
  client.header().workerCount = 0xffffffffu;  // a count out of range is refused before any sum
  auto bad = client.validate();
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("'workerCount' is out of range") != std::string::npos);
  CHECK_FALSE(client.hasGeometry());
}

TEST_CASE("the layout refuses a buffer smaller than the geometry needs", "[layout]") {
  shm::LayoutCounts counts{1, 1, 4, 1, 1, 64, 10};
  AlignedBuffer buffer(shm::computeLayout(counts).total - 64);
  shm::SegmentView view(buffer.span());
  CHECK_FALSE(view.initialize(counts).has_value());
}

TEST_CASE("wrapping sequence comparison survives 32-bit overflow", "[layout]") {
  CHECK(shm::sequenceReached(5, 5));
  CHECK(shm::sequenceReached(6, 5));
  CHECK_FALSE(shm::sequenceReached(4, 5));
  CHECK(shm::sequenceReached(2, 0xfffffffeu));
  CHECK_FALSE(shm::sequenceReached(0xfffffffeu, 2));
}

TEST_CASE("the run plan gives each client one worker per hardware resource and the right waits", "[plan]") {
  const Schedule s = smallSchedule();
  auto plan = makeRunPlan(s);
  REQUIRE(plan.has_value());
  REQUIRE(plan->workers.size() == 3);  // Client0/CPU0, Client1/CPU0, Client1/CPU1
  // Find instances by runnable (one frame: instance of runnable r).
  auto instanceOf = [&](std::uint32_t r) {
    for (std::uint32_t i = 0; i < s.instances.size(); ++i) if (s.instances[i].runnable == r) return i;
    return kNone;
  };
  const auto a = instanceOf(0), b = instanceOf(1), c = instanceOf(2);
  // A is first on CPU0: waits for C (last on CPU0) of the previous iteration.
  REQUIRE(plan->waits[a].size() == 1);
  CHECK(plan->waits[a][0].instance == c);
  CHECK(plan->waits[a][0].previousIteration);
  // C waits for A (CPU0 predecessor) and B (dependency), same iteration.
  CHECK(plan->waits[c].size() == 2);
  for (const auto& w : plan->waits[c]) CHECK_FALSE(w.previousIteration);
  CHECK(plan->waits[b].size() == 1);  // only A: B is alone on CPU1
  CHECK(plan->hyperepochs[0].releases.size() == 1);
  CHECK(plan->frameInstances[0].size() == 3);
}

TEST_CASE("round-robin groups run their steps in turn by epoch frame", "[plan]") {
  Schedule s = smallSchedule();
  RunnableInfo group;
  group.name = "G";
  group.client = 0;
  group.kind = RunnableKind::kAliasGroup;
  group.steps = {0, kNone, 1};
  s.runnables.push_back(group);
  s.instances[0].runnable = static_cast<std::uint32_t>(s.runnables.size() - 1);
  CHECK(runnableForFrame(s, 0, 0) == 0);
  CHECK(runnableForFrame(s, 0, 1) == kNone);
  CHECK(runnableForFrame(s, 0, 2) == 1);
  CHECK(runnableForFrame(s, 0, 3) == 0);
  CHECK(runnableForFrame(s, 1, 7) == s.instances[1].runnable);
}

TEST_CASE("the event log reads back what was written and rejects other files", "[eventlog]") {
  const std::string dir = test::scratchDir("eventlog");
  const std::string path = dir + "/log.bin";
  {
    EventLogWriter w;
    REQUIRE(w.open(path, 42, 0xabcdef).has_value());
    w.setRunStart(1234);
    EventRecord r{static_cast<std::uint16_t>(EventKind::kRun), 0, 3, 9, 3, 100, 200};
    w.append(&r, 1);
    r.kind = static_cast<std::uint16_t>(EventKind::kSkipped);
    w.append(&r, 1);
    REQUIRE(w.close().has_value());
  }
  auto log = readEventLog(path);
  REQUIRE(log.has_value());
  CHECK(log->header.scheduleIdentifier == 42);
  CHECK(log->header.scheduleContentHash == 0xabcdef);
  CHECK(log->header.runStartNs == 1234);
  REQUIRE(log->records.size() == 2);
  CHECK(log->records[0].iteration == 9);
  CHECK(log->records[1].kind == static_cast<std::uint16_t>(EventKind::kSkipped));
  std::FILE* f = std::fopen((dir + "/junk").c_str(), "w");
  std::fputs("this is not a log file at all, not at all, really not, no no no no no no no", f);
  std::fclose(f);
  auto junk = readEventLog(dir + "/junk");
  REQUIRE_FALSE(junk.has_value());
  CHECK(junk.error().message.find("bad magic") != std::string::npos);
  CHECK_FALSE(readEventLog(dir + "/missing").has_value());
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
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
