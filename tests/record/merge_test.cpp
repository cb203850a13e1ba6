// A multi-SoC run's recordings on one time axis: a follower's clock offset records move its
// releases onto the primary's clock by the estimate in force at each (an estimate under 1 ms is one
// clock); a follower's file without them, files that name two primaries and a clock record out of
// the run's range are refused, named.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tactus/record/merge.hpp"
#include "tactus/record/reader.hpp"
#include "tactus/record/summary.hpp"
#include "tactus/record/writer.hpp"
#include "test_files.hpp"

namespace {

using namespace tactus::record;

// SoC `soc`'s file of a two-SoC run: its releases (actual times; ideal 10 ns before) and clocks.
RecordingFile socFile(const std::string& dir, std::uint32_t soc, const std::vector<std::int64_t>& releases,
                      const std::vector<ClockOffsetRecord>& clocks) {
  const std::string path = dir + "/" + recordingFileName(soc);
  std::filesystem::remove(path);
  auto w = Writer::create(path, makeFileHeader(0x1234, soc, 0));
  REQUIRE(w);
  REQUIRE(w->append(ChunkType::kRun, RunRecord{100, 200, 7, 2, 0}));
  std::uint64_t iteration = 0;
  for (const std::int64_t at : releases)
    REQUIRE(w->append(ChunkType::kRelease, ReleaseRecord{iteration++, at - 10, at, 3, 0, 0, 0}));
  for (const ClockOffsetRecord& c : clocks) REQUIRE(w->append(ChunkType::kClockOffset, c));
  REQUIRE(w->append(ChunkType::kEnd, EndRecord{80, 0, 0, 0, 0}));
  w->close();
  auto f = readRecordingFile(path);
  REQUIRE(f);
  return std::move(*f);
}

}  // namespace

TEST_CASE("a follower's releases move onto the primary's clock by its recorded estimates", "[record]") {
  const std::string dir = tactus::test::scratchPath("record", "merge");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  constexpr std::int64_t kAhead = 5'000'000'000;  // the primary's clock 5 s ahead of the follower's
  std::vector<RecordingFile> files;
  files.push_back(socFile(dir, 0, {kAhead + 1'000, kAhead + 3'000}, {{0, 0, kAhead, 0, 0}}));
  files.push_back(socFile(dir, 1, {1'500, 3'500}, {{kAhead, 40, 1'000, 0, 0}, {kAhead + 200, 30, 3'000, 0, 0}}));
  const auto clock = fileClock(files[1]);
  REQUIRE(clock);
  CHECK(clock->primary == 0);
  CHECK_FALSE(clock->isPrimary);
  CHECK(fileClock(files[0])->isPrimary);
  auto merged = mergeReleases(files);
  REQUIRE(merged);
  REQUIRE(merged->size() == 4);
  // By the estimate at each release: 1,500 + 5 s, 3,500 + 5 s + 200 ns.
  CHECK((*merged)[0].soc == 0);
  CHECK((*merged)[1].soc == 1);
  CHECK((*merged)[1].rec.actualNs == kAhead + 1'500);
  CHECK((*merged)[1].rec.idealNs == kAhead + 1'490);
  CHECK((*merged)[1].uncertaintyNs == 40);
  CHECK((*merged)[3].rec.actualNs == kAhead + 3'700);
  CHECK((*merged)[3].offsetNs == kAhead + 200);
  const std::string csv = mergedReleasesCsv(*merged);
  CHECK(csv.find("1,3,0,1,0,5000003690,5000003700,5000000200,30\n") != std::string::npos);
  CHECK(describeRecording(files).find("clock: the primary SoC 0's is this one's + 5000000 us within 1 us") !=
        std::string::npos);

  // Masters on one host: an estimate under 1 ms is the link's latency, not a clock difference.
  files[1] = socFile(dir, 1, {1'500}, {{40'000, 20'000, 1'000, 0, 0}});
  files[0] = socFile(dir, 0, {1'000}, {{0, 0, 900, 0, 0}});
  merged = mergeReleases(files);
  REQUIRE(merged);
  CHECK((*merged)[1].rec.actualNs == 1'500);
  CHECK(describeRecording(files).find("under 1 ms: taken as one clock") != std::string::npos);

  // A follower's file without clock records cannot be merged; nor files naming two primaries.
  files[1] = socFile(dir, 1, {1'500}, {});
  auto refused = mergeReleases(files);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("soc1.trec: SoC 1 of a run of 2 SoCs holds no clock offset record") !=
        std::string::npos);
  files[1] = socFile(dir, 1, {1'500}, {{0, 0, 900, 1, 0}});
  refused = mergeReleases(files);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("for the primary, another file SoC 0") != std::string::npos);

  // A clock record naming a SoC the run does not have, or a bound below -1, is damage.
  for (const ClockOffsetRecord& bad : {ClockOffsetRecord{0, 0, 1, 2, 0}, ClockOffsetRecord{0, -2, 1, 0, 0}}) {
    const std::string path = dir + "/bad.trec";
    std::filesystem::remove(path);
    auto w = Writer::create(path, makeFileHeader(0x1234, 1, 0));
    REQUIRE(w);
    REQUIRE(w->append(ChunkType::kRun, RunRecord{100, 200, 7, 2, 0}));
    REQUIRE(w->append(ChunkType::kClockOffset, bad));
    w->close();
    auto f = readRecordingFile(path);
    REQUIRE_FALSE(f);
    CHECK(f.error().message.find("bad.trec: offset 88: clock offset chunk: ") != std::string::npos);
    CHECK(f.error().message.find(": out of range") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
