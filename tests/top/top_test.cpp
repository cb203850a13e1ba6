// The statistics block on a heap buffer: the master's publisher fills it from drained records,
// the reader copies it under its sequence lock, and a reader refuses a block of another version.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "analysis.hpp"
#include "compile.hpp"
#include "heap_segment.hpp"
#include "roles/stats_publisher.hpp"
#include "runtime_harness.hpp"
#include "simulate.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/stats_layout.hpp"
#include "top.hpp"

using namespace tactus;

namespace {

Schedule smallSchedule() {
  return test::makeSchedule({{"Cam", "Read", "CPU0", 100'000, {}, 0, {}}, {"Cam", "Send", "CPU1", 50'000, {}, 0, {}}},
                            1'000'000);
}

// A segment as the master lays it out and publishes it, schedule text included, on the heap.
struct HeapRun {
  Schedule schedule = smallSchedule();
  std::string text = writeSchedule(schedule);
  std::unique_ptr<std::byte, decltype(&std::free)> bytes{nullptr, &std::free};
  shm::SegmentView view;
  HeapRun() {
    auto plan = makeRunPlan(schedule);
    REQUIRE(plan.has_value());
    const shm::LayoutCounts counts = shm::layoutCounts(schedule, *plan, text.size());
    const std::uint64_t size = shm::computeLayout(counts).total;
    bytes.reset(static_cast<std::byte*>(std::aligned_alloc(64, size)));
    view = shm::SegmentView({bytes.get(), size});
    REQUIRE(view.initialize(counts).has_value());
    view.writeScheduleText(text);
    view.header().scheduleIdentifier = schedule.identifier;
    view.header().state.store(static_cast<std::uint32_t>(shm::SegmentState::kRunning));
  }
};

EventRecord run(std::uint32_t runnable, std::int64_t ns, std::uint32_t iteration) {
  return {static_cast<std::uint16_t>(EventKind::kRun), 0, 0, iteration, runnable, 1'000'000, 1'000'000 + ns};
}

}  // namespace

TEST_CASE("the drain's statistics: runs, last, median, max and overruns per runnable, jitter per hyperepoch",
          "[top-unit]") {
  HeapRun h;
  master::StatsPublisher publisher(h.schedule, h.view);
  // Read (WCET 100 us): 10, 20, ..., 90 us and one of 150 us, beyond its WCET.
  std::vector<EventRecord> records;
  for (int k = 1; k <= 9; ++k) records.push_back(run(0, k * std::int64_t{10'000}, static_cast<std::uint32_t>(k)));
  records.push_back(run(0, 150'000, 10));
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, 10, 0, 5'000'000, 5'000'700});
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, 11, 0, 6'000'000, 6'000'300});
  records.push_back({static_cast<std::uint16_t>(EventKind::kSkipped), 0, 0, 12, 3, 7'000'000, 9'000'000});
  publisher.see(records.data(), records.size(), 42);

  auto stats = shm::readStats(h.view.stats());
  REQUIRE(stats.has_value());
  REQUIRE(stats->runnables.size() == 2);
  const auto& read = stats->runnables[0];
  CHECK(read.count == 10);
  CHECK(read.lastNs == 150'000);
  CHECK(read.maxNs == 150'000);
  CHECK(read.medianNs == 60'000);
  CHECK(read.overruns == 1);
  CHECK(read.lastIteration == 10);
  CHECK(stats->runnables[1].count == 0);
  REQUIRE(stats->hyperepochs.size() == 1);
  CHECK(stats->hyperepochs[0].releases == 2);
  CHECK(stats->hyperepochs[0].lastJitterNs == 300);
  CHECK(stats->hyperepochs[0].maxJitterNs == 700);
  CHECK(stats->hyperepochs[0].skippedPeriods == 3);
  CHECK(stats->hyperepochs[0].lateIterations == 1);
  CHECK(stats->batches == 1);
  CHECK(stats->updateNs == 42);
  CHECK(h.view.stats().header().seq.load() % 2 == 0);

  auto view = top::readSegment(h.view.bytes(), "heap");
  REQUIRE(view.has_value());
  CHECK(view->identifier == h.schedule.identifier);
  REQUIRE(view->runnables.size() == 2);
  CHECK(view->runnables[0].name == "Cam.Read");
  CHECK(view->runnables[0].wcetNs == 100'000);
  CHECK(view->runnables[0].stats.count == 10);
  REQUIRE(view->clients.size() == 1);
  CHECK(view->clients[0].name == "Cam");
  CHECK(view->clients[0].state == "absent");
}

TEST_CASE("the switch history keeps the latest switches, oldest first", "[top-unit]") {
  HeapRun h;
  master::StatsPublisher publisher(h.schedule, h.view);
  std::vector<EventRecord> records;
  for (std::uint32_t k = 0; k < shm::kStatsSwitchCapacity + 3; ++k) {
    EventRecord r{static_cast<std::uint16_t>(k % 2 ? EventKind::kScheduleStop : EventKind::kScheduleStart),
                  0,
                  0,
                  k,
                  0xffffffffu,
                  100 + k,
                  200 + k};
    r.schedule = static_cast<std::uint16_t>(100 + k);
    records.push_back(r);
  }
  publisher.see(records.data(), records.size(), 1);
  auto stats = shm::readStats(h.view.stats());
  REQUIRE(stats.has_value());
  CHECK(stats->switches == shm::kStatsSwitchCapacity + 3);
  REQUIRE(stats->switchHistory.size() == shm::kStatsSwitchCapacity);
  CHECK(stats->switchHistory.front().schedule == 103);
  CHECK(stats->switchHistory.front().kind == 2);
  CHECK(stats->switchHistory.back().schedule == 100 + shm::kStatsSwitchCapacity + 2);
}

TEST_CASE("a reader refuses a statistics block of another version, naming both versions and what to do", "[top-unit]") {
  HeapRun h;
  REQUIRE(h.view.stats().validate().has_value());
  h.view.stats().header().version = shm::kStatsVersion + 1;
  auto refused = shm::readStats(h.view.stats());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kIncompatible);
  CHECK_THAT(refused.error().message, Catch::Contains("version " + std::to_string(shm::kStatsVersion + 1)) &&
                                          Catch::Contains("reads version " + std::to_string(shm::kStatsVersion)) &&
                                          Catch::Contains("of the master's build"));
  auto view = top::readSegment(h.view.bytes(), "heap");
  REQUIRE_FALSE(view.has_value());
  CHECK_THAT(view.error().message, Catch::Contains("/dev/shm/tactus_heap") && Catch::Contains("statistics block"));
}

TEST_CASE("a reader retries while the drain writes and gives up on a block that never holds still", "[top-unit]") {
  HeapRun h;
  h.view.stats().beginWrite();  // a batch the writer never closes
  auto busy = shm::readStats(h.view.stats(), 5);
  REQUIRE_FALSE(busy.has_value());
  CHECK(busy.error().code == ErrorCode::kTimeout);
  h.view.stats().endWrite(7);
  CHECK(shm::readStats(h.view.stats(), 5).has_value());
}

TEST_CASE("a segment of another layout version is refused by tactus-top, named", "[top-unit]") {
  HeapRun h;
  h.view.header().layoutVersion = shm::kLayoutVersion - 1;
  auto view = top::readSegment(h.view.bytes(), "heap");
  REQUIRE_FALSE(view.has_value());
  CHECK_THAT(view.error().message, Catch::Contains("layout version " + std::to_string(shm::kLayoutVersion - 1)) &&
                                       Catch::Contains("tactus-top of the master's build"));
}

TEST_CASE("the statistics block's chain and channel tables hold a fixed number; a reader refuses counts beyond them",
          "[top-unit]") {
  const std::uint64_t size = shm::statsBlockSize(1, 1);
  std::unique_ptr<std::byte, decltype(&std::free)> bytes{static_cast<std::byte*>(std::aligned_alloc(64, size)),
                                                         &std::free};
  const shm::StatsView view({bytes.get(), size});
  // A schedule of 20 chains and 100 channels: the first 16 and 64 are measured.
  view.initialize(1, 1, 20, 100);
  CHECK(view.header().chainCount == shm::kStatsChainCapacity);
  CHECK(view.header().channelCount == shm::kStatsChannelCapacity);
  view.beginWrite();
  view.chain(15).age.count.store(3);
  view.channel(63).notWritten.store(2);
  view.endWrite(1);
  auto stats = shm::readStats(view);
  REQUIRE(stats.has_value());
  REQUIRE(stats->chains.size() == shm::kStatsChainCapacity);
  REQUIRE(stats->channels.size() == shm::kStatsChannelCapacity);
  CHECK(stats->chains[15].age.count == 3);
  CHECK(stats->channels[63].notWritten == 2);
  // The tables end the block: the last channel entry's end is the block's end.
  CHECK(reinterpret_cast<std::byte*>(&view.channel(shm::kStatsChannelCapacity - 1) + 1) == bytes.get() + size);
  view.header().chainCount = shm::kStatsChainCapacity + 1;
  auto refused = shm::readStats(view);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kIncompatible);
}

namespace {

// The occurrence tactus-top calls the latest (the one that ended last) of a report's list.
const report::ChainOccurrence& latestOf(const std::vector<report::ChainOccurrence>& all) {
  // Of several ending together, the newest source's: the shortest.
  return *std::max_element(all.begin(), all.end(), [](const auto& x, const auto& y) {
    return x.endNs < y.endNs || (x.endNs == y.endNs && x.ns() > y.ns());
  });
}

void checkMeasure(const shm::StatsSnapshot::Measure& top, const std::vector<report::ChainOccurrence>& report,
                  std::int64_t planned, std::int64_t required) {
  REQUIRE(!report.empty());
  CHECK(top.count == report.size());
  std::int64_t worst = report.front().ns();
  std::uint64_t overPlanned = 0, overRequired = 0;
  for (const report::ChainOccurrence& o : report) {
    worst = std::max(worst, o.ns());
    overPlanned += o.ns() > planned ? 1 : 0;
    overRequired += required != kNoDuration && o.ns() > required ? 1 : 0;
  }
  CHECK(top.maxNs == worst);
  CHECK(top.overPlanned == overPlanned);
  CHECK(top.overRequired == overRequired);
  CHECK(top.lastEndNs == latestOf(report).endNs);
  CHECK(top.lastNs == latestOf(report).ns());
  CHECK(top.unmatched == 0);
}

}  // namespace

TEST_CASE("the drain's chain figures equal tactus-report's on the same simulated run of a chain through a channel",
          "[top-unit]") {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  compiler::CompileOptions options;
  options.input = std::string(root) + "/schedules/camera_pipeline_chain.yaml";
  const std::string dir = test::scratchDir("top_chain_unit");
  options.output = dir + "/g.tsched";
  options.quiet = true;
  auto compiled = compiler::compileFile(options);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  REQUIRE(compiled.has_value());
  test::HeapSegment seg(compiled->schedule);
  master::StatsPublisher publisher(seg.schedule, seg.view);
  // Runs of WCET x U(0.5, 1), one in five three times its WCET: some occurrences over the bounds.
  report::SimulationOptions sim;
  sim.iterations = 30;
  sim.overrunProbability = 0.2;
  sim.overrunFactor = 3;
  report::LogFile log;
  log.records = report::simulateRun(seg.schedule, sim);
  log.header = makeEventLogHeader(seg.schedule.identifier, 0);
  log.header.runStartNs = sim.runStartNs;
  // The drain's batches: 16 records at a time, each batch's releases after its runs (the master
  // drains the release threads' rings after the workers').
  for (std::size_t k = 0; k < log.records.size(); k += 16) {
    std::vector<EventRecord> batch(
        log.records.begin() + static_cast<std::ptrdiff_t>(k),
        log.records.begin() + static_cast<std::ptrdiff_t>(std::min(k + 16, log.records.size())));
    std::stable_partition(batch.begin(), batch.end(), [](const EventRecord& r) {
      return r.kind != static_cast<std::uint16_t>(EventKind::kRelease);
    });
    publisher.see(batch.data(), batch.size(), 1);
  }
  const report::Analysis analysis = report::analyze(seg.schedule, log);
  auto stats = shm::readStats(seg.view.stats());
  REQUIRE(stats.has_value());
  REQUIRE(stats->chains.size() == 1);
  REQUIRE(analysis.chains.size() == 1);
  const ChainInfo& chain = seg.schedule.chains.front();
  INFO("reactions " << analysis.chains[0].reactions.size() << ", ages " << analysis.chains[0].ages.size());
  checkMeasure(stats->chains[0].reaction, analysis.chains[0].reactions, chain.reactionNs, chain.maxReactionNs);
  checkMeasure(stats->chains[0].age, analysis.chains[0].ages, chain.ageNs, chain.maxAgeNs);
  CHECK(stats->chains[0].reaction.overPlanned > 0);  // the run exercised the bounds
}
