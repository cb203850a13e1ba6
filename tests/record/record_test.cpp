// The recording format: what the writer writes the reader reads back; every single-byte change of
// a small recording is refused, naming the file and an offset; every cut of it is refused or read
// up to its last whole chunk, and said; comparisons name the first difference.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>

#include "tactus/record/compare.hpp"
#include "tactus/record/crc32.hpp"
#include "tactus/record/reader.hpp"
#include "tactus/record/writer.hpp"
#include "test_files.hpp"

namespace {

using namespace tactus::record;

// A small recording: run, schedule, two versions, a release, a switch, a loss, a clock offset
// and the end, unless `ended` is false.
std::string writeSample(const std::string& path, const std::string& payload, bool ended = true) {
  std::filesystem::remove(path);
  auto w = Writer::create(path, makeFileHeader(0x1234, 0, 0));
  REQUIRE(w);
  REQUIRE(w->append(ChunkType::kRun, RunRecord{100, 200, 7, 2, 0}));  // of 2 SoCs: a clock record
  const std::string name = "Sample";
  const std::string text = name + "camera\nlidar\n";
  ScheduleRecord s{0xabcd, 3, 2, 4, static_cast<std::uint32_t>(name.size()), 0x55, 13, 0};
  REQUIRE(w->append(ChunkType::kSchedule, s, text.data(), text.size()));
  VersionRecord v{1, 10, 5, 3, 0, 1, static_cast<std::uint32_t>(payload.size())};
  REQUIRE(w->append(ChunkType::kVersion, v, payload.data(), payload.size()));
  v.channel = 1;
  v.iteration = 2;
  REQUIRE(w->append(ChunkType::kVersion, v, payload.data(), payload.size()));
  REQUIRE(w->append(ChunkType::kRelease, ReleaseRecord{1, 50, 51, 3, 0, 0, 0}));
  REQUIRE(w->append(ChunkType::kSwitch, SwitchRecord{2, 60, 0xFFFFFFFFU, 3}));
  REQUIRE(w->append(ChunkType::kLost, LostRecord{1, 3, 1, 0}));
  REQUIRE(w->append(ChunkType::kClockOffset, ClockOffsetRecord{-5, 2, 70, 1, 0}));
  if (ended) REQUIRE(w->append(ChunkType::kEnd, EndRecord{80, 2, 1, 0, 0}));
  w->close();
  return tactus::test::readAll(path);
}

}  // namespace

TEST_CASE("CRC-32 matches the IEEE check value in slices and in bytes", "[record]") {
  const char* text = "123456789";
  CHECK(crc32(0, text, 9) == 0xCBF43926U);
  CHECK(crc32(crc32(0, text, 4), text + 4, 5) == 0xCBF43926U);
  std::string big(1000, 'x');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  CHECK(crc32(crc32(0, big.data(), 3), big.data() + 3, 997) == crc32(0, big.data(), 1000));
}

TEST_CASE("a recording reads back what was written", "[record]") {
  const std::string path = tactus::test::scratchPath("record", "roundtrip.trec");
  const std::string bytes = writeSample(path, "hello channel");
  auto f = readRecordingFile(path);
  REQUIRE(f);
  CHECK(f->stop.empty());
  CHECK(f->header.scheduleHash == 0x1234);
  CHECK(f->run.pid == 7);
  REQUIRE(f->schedules.size() == 1);
  CHECK(f->schedules[0].name == "Sample");
  CHECK(f->schedules[0].channels == std::vector<std::string>{"camera", "lidar"});
  REQUIRE(f->versions.size() == 2);
  CHECK(f->data(f->versions[1]) == "hello channel");
  CHECK(f->versions[1].rec.iteration == 2);
  CHECK(f->releases.size() == 1);
  CHECK(f->switches.size() == 1);
  CHECK(f->losses.size() == 1);
  CHECK(f->clockOffsets.size() == 1);
  REQUIRE(f->end);
  CHECK(f->end->versions == 2);
  CHECK(f->wholeBytes == bytes.size());
  std::filesystem::remove(path);
}

TEST_CASE("every single-byte change of a recording is refused, naming file and offset", "[record]") {
  const std::string path = tactus::test::scratchPath("record", "flip.trec");
  const std::string bytes = writeSample(path, "0123456789abcdef");
  std::filesystem::remove(path);
  REQUIRE(parseRecording(bytes, "flip.trec"));
  std::size_t refused = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const unsigned char x : {0x01, 0x80, 0xFF}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(static_cast<unsigned char>(damaged[i]) ^ x);
      auto f = parseRecording(damaged, "flip.trec");
      INFO("byte " << i << " xor " << int(x));
      REQUIRE_FALSE(f);
      CHECK(f.error().message.rfind("flip.trec: offset ", 0) == 0);
      ++refused;
    }
  }
  CHECK(refused == 3 * bytes.size());
}

TEST_CASE("every cut of a recording is refused or read up to its last whole chunk, and said", "[record]") {
  const std::string path = tactus::test::scratchPath("record", "cut.trec");
  const std::string bytes = writeSample(path, "payload of a version");
  std::filesystem::remove(path);
  std::size_t readPrefix = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto f = parseRecording(bytes.substr(0, n), "cut.trec");
    INFO("cut at " << n);
    if (!f) {
      CHECK(n < sizeof(FileHeader));
      CHECK(f.error().message.find("cut.trec: offset 0") == 0);
      continue;
    }
    ++readPrefix;
    CHECK_FALSE(f->end);
    CHECK(f->stop.find("cut.trec: offset ") == 0);
    CHECK(f->stop.find("read up to offset " + std::to_string(f->wholeBytes)) != std::string::npos);
    CHECK(f->wholeBytes <= n);
    // What it read is exactly the whole chunks before the cut: the same file cut there reads alike.
    auto again = parseRecording(bytes.substr(0, f->wholeBytes), "cut.trec");
    REQUIRE(again);
    CHECK(again->versions.size() == f->versions.size());
  }
  CHECK(readPrefix == bytes.size() - sizeof(FileHeader));
}

TEST_CASE("a foreign file and a recording of another format version are refused", "[record]") {
  auto f = parseRecording("tactus-schedule 4\nschedule name=x\n and more bytes", "x.trec");
  REQUIRE_FALSE(f);
  CHECK(f.error().message == "x.trec: offset 0: not a tactus recording (no TACTREC magic)");
  FileHeader h = makeFileHeader(1, 0, 0);
  h.version = 99;
  h.headerCrc = crc32(0, &h, 28);
  f = parseRecording(std::string(reinterpret_cast<const char*>(&h), sizeof h), "v.trec");
  REQUIRE_FALSE(f);
  CHECK(f.error().message == "v.trec: offset 8: recording format version 99, this build reads 1");
}

TEST_CASE("a recording without its end record says where it stops", "[record]") {
  const std::string path = tactus::test::scratchPath("record", "noend.trec");
  writeSample(path, "x", false);
  auto f = readRecordingFile(path);
  std::filesystem::remove(path);
  REQUIRE(f);
  CHECK(f->stop.find("no end record") != std::string::npos);
}

TEST_CASE("the writer refuses an existing file and a chunk of the wrong size", "[record]") {
  const std::string path = tactus::test::scratchPath("record", "exists.trec");
  writeSample(path, "x");
  auto again = Writer::create(path, makeFileHeader(1, 0, 0));
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("exists.trec: cannot create") != std::string::npos);
  std::filesystem::remove(path);
  auto w = Writer::create(path, makeFileHeader(1, 0, 0));
  REQUIRE(w);
  const std::uint64_t x = 0;
  CHECK_FALSE(w->append(ChunkType::kRun, &x, sizeof x));
  std::filesystem::remove(path);
}

TEST_CASE("comparisons name the first differing byte and the schedule difference", "[record]") {
  const std::string pa = tactus::test::scratchPath("record", "a.trec");
  const std::string pb = tactus::test::scratchPath("record", "b.trec");
  const auto a = parseRecording(writeSample(pa, "same bytes here"), "a.trec");
  const auto b = parseRecording(writeSample(pb, "same bytes here"), "b.trec");
  const auto c = parseRecording(writeSample(pb, "same bytes HERE"), "c.trec");
  std::filesystem::remove(pa);
  std::filesystem::remove(pb);
  REQUIRE((a && b && c));
  CHECK(scheduleDifference(*a, *b).empty());
  Comparison same = compareRecordings(*a, *b);
  CHECK(same.same);
  CHECK(same.compared == 2);
  Comparison diff = compareRecordings(*a, *c);
  CHECK_FALSE(diff.same);
  CHECK(diff.firstDifference ==
        "schedule 'Sample' channel 'camera', writer instance 1, iteration 0: byte 11 is 0x68 in a.trec and 0x48 in "
        "c.trec");
  RecordingFile other = *b;
  other.schedules[0].rec.contentHash = 0xabce;
  CHECK(scheduleDifference(*a, other) ==
        "schedule 0 ('Sample' and 'Sample'): content hash 000000000000abcd against 000000000000abce");
}

TEST_CASE("a recording folder is read in SoC order and a gap is named", "[record]") {
  const std::string dir = tactus::test::scratchPath("record", "dir");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto none = readRecordingDir(dir);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("no soc<k>.trec") != std::string::npos);
  writeSample(dir + "/soc0.trec", "x");
  auto one = readRecordingDir(dir);
  REQUIRE(one);
  CHECK(one->size() == 1);
  std::filesystem::copy_file(dir + "/soc0.trec", dir + "/soc2.trec");
  auto gap = readRecordingDir(dir);
  REQUIRE_FALSE(gap);
  CHECK(gap.error().message.find("soc1.trec is missing") != std::string::npos);
  std::filesystem::remove_all(dir);
}
