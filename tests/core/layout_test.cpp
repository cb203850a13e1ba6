// Unit tests of core's runtime building blocks: the shared-memory layout on a plain buffer, the run
// plan and the event log file.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/shm_layout.hpp"

using namespace tactus;

namespace {

struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t n)
      : size(n), data(static_cast<std::byte*>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {}
  ~AlignedBuffer() { std::free(data); }
  std::span<std::byte> span() const { return {data, size}; }
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
  CHECK(reinterpret_cast<std::byte*>(&view.instance(InstanceId{16})) + sizeof(shm::InstanceSlot) <=
        buffer.data + o.client);
  view.header().layoutVersion = shm::kLayoutVersion + 1;
  auto bad = view.validate();
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kIncompatible);
  CHECK(bad.error().message.find("layout version") != std::string::npos);
  view.header().layoutVersion = shm::kLayoutVersion;
  view.header().instanceOffset += 64;
  CHECK_FALSE(view.validate().has_value());
}

TEST_CASE("the stop message reads as printable text whatever bytes the segment holds", "[layout]") {
  shm::LayoutCounts counts{1, 2, 5, 2, 2, 64, 100};
  AlignedBuffer buffer(shm::computeLayout(counts).total);
  shm::SegmentView view(buffer.span());
  REQUIRE(view.initialize(counts).has_value());
  view.setMessage("client 'A' died");
  CHECK(view.message() == "client 'A' died");
  // Bytes written over it (damage, or a process of the same user): escapes and a forged line.
  const char written[] = "\x1b[2J\rclient 'B'\n\xff";
  std::memcpy(view.header().message, written, sizeof written);
  CHECK(view.message() == "?[2J?client 'B'??");
  std::memset(view.header().message, 'x', sizeof view.header().message);  // no terminating NUL
  CHECK(view.message().size() == shm::kMessageSize);
}

TEST_CASE("a client takes the end only when each of its fields holds what a master writes", "[layout]") {
  shm::LayoutCounts counts{1, 2, 5, 2, 2, 64, 100};
  AlignedBuffer buffer(shm::computeLayout(counts).total);
  shm::SegmentView view(buffer.span());
  REQUIRE(view.initialize(counts).has_value());
  shm::SegmentHeader& h = view.header();
  h.stopClient.store(0xffffffffu);
  view.setMessage("client \xc3\xa9t\xc3\xa9 died\n\xff");  // UTF-8 kept, a control byte and a stray byte not
  CHECK(view.endFault().empty());
  CHECK(std::string(h.message) == "client \xc3\xa9t\xc3\xa9 died??");
  view.setMessage(std::string(shm::kMessageSize - 2, 'x') + "\xc3\xa9");  // cut before the character, not in it
  CHECK(std::strlen(h.message) == shm::kMessageSize - 2);
  CHECK(view.endFault().empty());
  h.stopReason.store(77);
  CHECK(view.endFault() == "header field 'stopReason' holds 77, out of range (0..8)");
  h.stopReason.store(5);
  h.stopClient.store(2);
  CHECK(view.endFault().find("header field 'stopClient' holds 2") == 0);
  h.stopClient.store(1);
  std::memset(h.message, 0x9b, sizeof h.message);
  CHECK(view.endFault() == "header field 'message' is not NUL-terminated within its 256 bytes");
  h.message[3] = '\0';
  CHECK(view.endFault() == "header field 'message' holds byte 0x9b at offset 0, not printable UTF-8");
}

TEST_CASE("the view keeps its own copy of the geometry and names a header field written over", "[layout]") {
  shm::LayoutCounts counts{1, 2, 5, 2, 2, 64, 100};
  AlignedBuffer buffer(shm::computeLayout(counts).total);
  shm::SegmentView master(buffer.span());
  REQUIRE(master.initialize(counts).has_value());
  shm::SegmentView client(buffer.span());
  REQUIRE(client.validate().has_value());
  shm::EpochSlot* epoch1 = &client.epoch(EpochId{1});
  CHECK(client.changedHeaderField().empty());
  client.header().epochOffset += 1'000'000'000;  // far outside the buffer
  CHECK(&client.epoch(EpochId{1}) == epoch1);    // the accessors use the private copy
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
  auto instanceOf = [&](RunnableId r) -> InstanceId {
    for (InstanceId i : s.instances.ids())
      if (s.instances[i].runnable == r) return i;
    return kNone;
  };
  const auto a = instanceOf(RunnableId{0}), b = instanceOf(RunnableId{1}), c = instanceOf(RunnableId{2});
  // A is first on CPU0: waits for C (last on CPU0) of the previous iteration.
  REQUIRE(plan->waits[a].size() == 1);
  CHECK(plan->waits[a][0].instance == c);
  CHECK(plan->waits[a][0].previousIteration);
  // C waits for A (CPU0 predecessor) and B (dependency), same iteration.
  CHECK(plan->waits[c].size() == 2);
  for (const auto& w : plan->waits[c]) CHECK_FALSE(w.previousIteration);
  CHECK(plan->waits[b].size() == 1);  // only A: B is alone on CPU1
  CHECK(plan->hyperepochs[HyperepochId{0}].releases.size() == 1);
  CHECK(plan->frameInstances[0].size() == 3);
}

TEST_CASE("round-robin groups run their steps in turn by epoch frame", "[plan]") {
  Schedule s = smallSchedule();
  RunnableInfo group;
  group.name = "G";
  group.client = ClientId{0};
  group.kind = RunnableKind::kAliasGroup;
  group.steps = {RunnableId{0}, kNone, RunnableId{1}};
  s.runnables.push_back(group);
  s.instances[0].runnable = RunnableId{static_cast<std::uint32_t>(s.runnables.size() - 1)};
  const InstanceId first{0}, second{1};
  CHECK(runnableForFrame(s, first, 0) == RunnableId{0});
  CHECK(runnableForFrame(s, first, 1) == kNone);
  CHECK(runnableForFrame(s, first, 2) == RunnableId{1});
  CHECK(runnableForFrame(s, first, 3) == RunnableId{0});
  CHECK(runnableForFrame(s, second, 7) == s.instances[second].runnable);
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
