// Tests of tactus-report on bad logs: records out of range, far times, implausible headers,
// iteration numbers with gaps, garbage, truncation; and frame tables beyond what records fill.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "id_list.hpp"
#include "outputs.hpp"
#include "report_fixtures.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"

using tactus::test::ids;

using namespace tactus;
using namespace tactus::report;
using namespace tactus::report::test;

TEST_CASE("records with indices outside the schedule are counted and ignored", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 99, 0, 0, kT0, kT0 + 1});  // bad instance
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 42, kT0, kT0 + 1});  // bad runnable
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 0, kT0 + 5, kT0});   // ends before start
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 9, 0, 0, kT0, kT0});   // bad epoch
  records.push_back({77, 0, 0, 0, 0, 0, 0});                                                    // bad kind
  records.push_back(
      {static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0xffffffffu, 0, kT0, kT0 + 1});  // absurd iteration
  const Analysis a = analyze(s, makeLog(s, records));
  CHECK(a.invalidRecords == 6);
  CHECK(a.runnables[0].duration.count == 4);
  REQUIRE_FALSE(a.warnings.empty());
  std::string warnings;
  for (const std::string& w : a.warnings) warnings += w + "\n";
  CHECK_THAT(warnings, Catch::Contains("6 records have an unknown kind") &&
                           Catch::Contains("the first is record 15 (at byte 664)"));
}

TEST_CASE("records with times far from the run's start are invalid, never an overflow", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 0, kMin + 1, kMax});  // duration overflows
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 1, 1, 1, kT0, kT0 + limits::kMaxLogSpanNs + 1});
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, 2, 0, kMin, kT0});
  records.push_back({static_cast<std::uint16_t>(EventKind::kSkipped), 0, 0, 3, 2, kMax, kMax});
  records.push_back({static_cast<std::uint16_t>(EventKind::kOverrun), 0, 0, 3, 0, kMin, kMin});
  const LogFile log = makeLog(s, records);
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 5);
  CHECK(a.runnables[0].duration.count == 4);
  CHECK(a.runnables[0].duration.maxNs == kDurA[3]);
  CHECK(a.runnables[1].duration.count == 4);
  CHECK(a.releaseRecords == 4);
  CHECK(a.skippedRecords == 1);
  CHECK(a.overrunRecords == 1);
  // The outputs leave them out as well.
  std::ostringstream csv;
  writeCsv(csv, s, log, a);
  CHECK(csv.str().find(std::to_string(kMax)) == std::string::npos);
  std::ostringstream trace;
  writeTrace(trace, s, &log, &a);  // under UBSan: no overflow on the far times
  CHECK_FALSE(trace.str().empty());
}

TEST_CASE("a log header's implausible run start is ignored with a warning", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  LogFile log = makeLog(s, knownRecords());
  log.header.runStartNs = std::numeric_limits<std::int64_t>::max();
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 0);
  CHECK(a.runnables[1].duration.count == 4);
  CHECK(a.hyperepochs[0].iterations == 4);
  bool warned = false;
  for (const std::string& w : a.warnings)
    warned |= w.find("is not a plausible CLOCK_MONOTONIC time") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("the per-iteration tables hold the iterations the records name, not every number below them",
          "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  // One run of iteration 1000, and nothing of iterations 4..999 (lost, or a damaged number).
  const std::int64_t late = kT0 + std::int64_t{1000} * 10 * kMs;
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 1000, 0, late, late + 9 * kMs});
  const LogFile log = makeLog(s, records);
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 0);
  REQUIRE(a.iterations.size() == 1);
  CHECK(a.iterations[0] == std::vector<std::uint64_t>{0, 1, 2, 3, 1000});
  CHECK(a.iterationStart[0].size() == 5);
  CHECK(a.hyperepochs[0].iterations == 5);
  CHECK(iterationStartNs(s, log, a, HyperepochId{0}, 1000) == late);  // estimated from the run start and the period
  const view::Execution x = makeExecution(s, log, a);
  bool drawn = false;
  for (const auto& it : x.iterations) drawn |= it.iteration == 1000;
  CHECK(drawn);  // the longest iteration, by its number
}

TEST_CASE("frame statistics of an epoch with more frames than the records fill are exact", "[report][stats]") {
  // An epoch of 65536 frames in 3 iterations is 196,608 (iteration, frame) cells for a handful
  // of records: the analysis keeps them in a hash table instead of a dense one; same results.
  Schedule s = twoStepSchedule();
  s.epochs.push_back({"Fine", HyperepochId{0}, 1, limits::kMaxFramesPerEpoch});
  s.hyperepochs[0].epochs = ids<EpochId>({0, 1});
  REQUIRE(verifySchedule(s).ok());
  auto records = knownRecords();
  for (std::uint32_t it = 0; it < 3; ++it) {
    const std::int64_t ideal = kT0 + static_cast<std::int64_t>(it) * 10 * kMs;
    records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 1, it, 0, ideal, ideal + 7 * kUs});
    records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 1, it, 65535, ideal + 65535,
                       ideal + 65535 + (it + 1) * kUs});
  }
  const Analysis a = analyze(s, makeLog(s, records));
  CHECK(a.invalidRecords == 0);
  REQUIRE(a.frames.size() == 1 + limits::kMaxFramesPerEpoch);
  const FrameStats& first = a.frames[1];
  const FrameStats& last = a.frames[1 + 65535];
  CHECK(first.epoch == EpochId{1});
  CHECK(last.frame == 65535);
  CHECK(first.releases == 3);
  CHECK(first.releaseJitter.maxNs == 7 * kUs);
  CHECK(last.releases == 3);
  CHECK(last.releaseJitter.minNs == 1 * kUs);
  CHECK(last.releaseJitter.maxNs == 3 * kUs);
  CHECK(a.frames[1 + 100].releases == 0);
  // The first epoch's statistics are those of the known run.
  CHECK(a.frames[0].releases == 4);
  CHECK(a.frames[0].span.count == 4);
  CHECK(a.hyperepochs[0].iterations == 4);
}

TEST_CASE("analysis of random garbage records never crashes", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<EventRecord> records(64);
    for (auto& r : records) {
      r.kind = static_cast<std::uint16_t>(rng() % 7);
      r.instance = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 3);
      r.iteration = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 5);
      r.aux = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 3);
      r.startNs = static_cast<std::int64_t>(rng() % 2 ? rng() : kT0 + rng() % (100 * kMs));
      // Wrapping on purpose (in unsigned arithmetic: defined) so some ends precede their starts.
      r.endNs = static_cast<std::int64_t>(static_cast<std::uint64_t>(r.startNs) + rng() % (5 * kMs));
    }
    const LogFile log = makeLog(s, records);
    const Analysis a = analyze(s, log);
    std::ostringstream sink;
    writeCsv(sink, s, log, a);
    writeTrace(sink, s, &log, &a);
    sink << formatText(s, log, a) << formatJson(s, log, a) << formatWcetFile(s, a, 99, 1.2);
    const view::Execution x = makeExecution(s, log, a);
    CHECK_FALSE(view::renderHtml(s, &x).empty());
  }
}

TEST_CASE("a truncated log is reported with a warning and its complete records", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  const std::string path = writeLogFile(s, knownRecords());
  std::string bytes = readAll(path);
  bytes.resize(bytes.size() - 10);
  auto log = parseLog(bytes, "cut.tlog");
  REQUIRE(log);
  CHECK(log->records.size() == knownRecords().size() - 1);
  REQUIRE(log->warnings.size() == 1);
  CHECK(log->warnings[0].find("cut.tlog: the log ends inside a record") == 0);
  // Through the command: exit 0, the warning on stderr.
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  const std::string sched = tempPath("s.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  std::string out, err;
  CHECK(runCommand({path, sched}, out, err) == 0);
  CHECK(err.find("warning") != std::string::npos);
  CHECK(out.find("Client0.A") != std::string::npos);
  std::remove(path.c_str());
  std::remove(sched.c_str());
}
