// Fuzz entry point for the client's check of the replay segment (client_lib/src/replay_feed.cpp,
// checkReplaySegment: what attachReplay runs on the segment a master made, core/replay_layout.hpp)
// against the channel tables of a real schedule (kGraph, compiled here by the compiler), with no
// shared memory; a segment the check accepts is then used as a client uses it: every source's
// replayStep over its recorded iterations into a channel area of the schedule's size, and every
// recorded release looked up (the logical clock's values). Invariants: every message is printable,
// an accepted segment's versions and tables lie inside its bytes, each recorded release is found
// where it is, and nothing reads or writes outside the segment or the channel area (ASan).
//
// The seeds (corpus/replay_segment/) are real replay segments: kGraph compiled with tactus-compile,
// recorded by tactus-master -e 3 --record with tests/record's tactus-replay-client, and the
// segment <instance>.replay copied out of /dev/shm while tactus-master --replay of that recording
// waited for its clients.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "channel_analysis.hpp"
#include "channels.hpp"
#include "fuzz_target.hpp"
#include "graph_parser.hpp"
#include "replay_feed.hpp"
#include "runtime.hpp"
#include "scheduler.hpp"

namespace {

// tests/record/replay_pipeline.yaml with small channels (a seed fits libFuzzer's -max_len).
constexpr const char* kGraph = R"(Version: 3.0.0
ReplayPipeline:
  Identifier: 45
  Resources:
    CPU: [CPU0, CPU1]
  Hyperepochs:
    - P:
        Period: 20ms
        Epochs:
          - Fast: {Period: 5ms, Frames: 4}
          - Mid: {Period: 10ms, Frames: 2}
          - Slow: {Period: 20ms, Frames: 1}
  Clients:
    - Sensor:
        Epochs:
          - P.Fast:
              Runnables:
                - Source: {WCET: 1ms, Resources: [CPU0]}
    - Filter:
        Epochs:
          - P.Mid:
              Runnables:
                - Filter: {WCET: 2ms, Resources: [CPU1]}
    - Sink:
        Epochs:
          - P.Slow:
              Runnables:
                - Sink: {WCET: 2ms, Resources: [CPU1]}
  Channels:
    - Raw: {Writer: Sensor.Source, Readers: [Filter.Filter, Sink.Sink], Size: 64}
    - Mid: {Writer: Filter.Filter, Readers: [Sink.Sink], Size: 64}
    - Out: {Writer: Sink.Sink, Readers: [Filter.Filter], Size: 32}
)";

struct Fixture {
  tactus::Schedule schedule;
  tactus::client::ChannelDirectory directory;
  std::unique_ptr<std::byte[]> area;  // the channel area, 64-byte aligned
  std::uint64_t areaBytes = 0;
};

Fixture* makeFixture() {
  using namespace tactus;
  auto graph = compiler::parseGraph(kGraph, "replay_segment_fuzz.yaml");
  if (!graph) fuzz::fail("the fixture's graph does not parse", graph.error().message);
  auto schedule = compiler::scheduleGraph(*graph, compiler::ScheduleOptions{});
  if (!schedule) fuzz::fail("the fixture's graph does not schedule", schedule.error().message);
  // The channels' writer runs, slots and reads, as tactus-compile plans them.
  if (auto ok = compiler::analyseChannels(*graph, *schedule, 0); !ok)
    fuzz::fail("the fixture's channels do not plan", ok.error().message);
  auto* f = new Fixture;
  f->schedule = std::move(*schedule);
  for (const ChannelInfo& c : f->schedule.channels) f->directory.names.push_back(c.name);
  std::sort(f->directory.names.begin(), f->directory.names.end());
  f->directory.schedules.push_back(client::channelTables(f->schedule, f->directory.names, &f->areaBytes));
  f->area.reset(new (std::align_val_t{64}) std::byte[f->areaBytes + 64]);
  f->directory.schedules.front().area = f->area.get();
  return f;
}

Fixture& fixture() {
  static Fixture* f = makeFixture();  // never freed: the process ends with it
  return *f;
}

// Every source's replayStep over its recorded iterations (at most 64 each) and one it has none of.
void replaySources(const tactus::client::ReplayTables& t, std::span<const std::byte> bytes) {
  using namespace tactus;
  for (const client::ReplaySourceFeed& s : t.sources) {
    for (std::uint32_t k = 0; k < s.count; ++k) {
      const shm::ReplayEntry& e = s.entries[k];
      if (e.dataOffset > bytes.size() || e.size > bytes.size() - e.dataOffset)
        fuzz::fail("an accepted segment has a version outside its bytes", std::to_string(k));
    }
    RuntimeInfo info;
    info.scheduleId = s.channels->scheduleId;
    info.instance = s.instance;
    client::tCurrentInfo = &info;
    for (std::uint32_t k = 0; k <= std::min<std::uint32_t>(s.count, 64); ++k) {
      info.hyperepochIteration = k < s.count ? s.entries[k].iteration : ~std::uint64_t{0} >> 1;
      client::replayStep(const_cast<client::ReplaySourceFeed*>(&s));
    }
    client::tCurrentInfo = nullptr;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tactus;
  Fixture& f = fixture();
  // A mapping is page-aligned: the bytes go to an 8-byte aligned copy of their own size (ASan sees
  // a read past it).
  std::unique_ptr<std::uint64_t[]> copy(new std::uint64_t[size / 8 + 1]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(copy.get()), size);
  auto tables = client::checkReplaySegment(bytes, "fuzz", f.directory);
  if (!tables) {
    fuzz::checkMessage(tables.error().message);
    return 0;
  }
  for (std::uint32_t k = 0; k < tables->releaseCount; ++k) {
    const shm::ReplayRelease& r = tables->releases[k];
    if (tables->release(r.scheduleId, r.epoch, r.iteration, r.frame) != &r)
      fuzz::fail("a recorded release is not found where it is", std::to_string(k));
  }
  (void)tables->release(45, 0, ~std::uint64_t{0}, 0);
  replaySources(*tables, bytes);
  return 0;
}
