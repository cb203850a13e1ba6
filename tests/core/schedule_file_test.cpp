// Tests of the schedule file format: round trip, determinism, versioning, hashing, bad input.
#include <catch2/catch.hpp>

#include <random>

#include "sample_schedule.hpp"
#include "schedule_text_edit.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using tactus::test::rehash;
using tactus::test::replaceOnce;

TEST_CASE("a schedule survives writing and reading unchanged", "[schedule_file]") {
  Schedule s = test::sampleSchedule();
  std::string text = writeSchedule(s);
  auto back = readSchedule(text, "sample.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  CHECK(back->name == "Sample");
  CHECK(back->identifier == 7);
  CHECK(back->sourceHash == 0x1234);
  CHECK(back->runnables[4].steps == std::vector<RunnableId>{RunnableId{5}, kNone});
  CHECK(back->runnables[3].deadlineNs == s.runnables[3].deadlineNs);
  CHECK(back->resources[4].device == ResourceId{2});
  CHECK(back->instances.size() == 10);
  CHECK(verifySchedule(*back).ok());
}

namespace {

// A schedule with one record of every kind and every field away from its default.
Schedule everyField() {
  Schedule s;
  s.name = "Every";
  s.identifier = 65535;
  s.sourceHash = 0xfedcba9876543210;
  s.crossSocLatencyNs = 7;
  s.socs = {{"SocA"}, {"SocB"}};
  s.socLatencies = {{0, 1, 250}};
  s.clients = {{"C0", 1}};
  s.resources = {
      {"GPU0", "GPU", ResourceKind::kGpu, kNone, HyperepochId{0}, kNone, kNone, 3, 1},
      {"S0", "CUDA_STREAM", ResourceKind::kCudaStream, ClientId{0}, HyperepochId{0}, 4, ResourceId{0}, kNone, kNone}};
  s.hyperepochs = {{"H", 1000, 900, {ResourceId{0}, ResourceId{1}}, {EpochId{0}}}};
  s.epochs = {{"E", HyperepochId{0}, 500, 2}};
  s.runnables = {
      {"R", ClientId{0}, EpochId{0}, RunnableKind::kSubmitter, 10, 20, 30, 40, 3, {}, RunnableId{1}, kNone, kNone, {}},
      {"G",
       ClientId{0},
       EpochId{0},
       RunnableKind::kAliasGroup,
       11,
       0,
       kNoDuration,
       kNoDuration,
       10,
       {RunnableId{0}},
       kNone,
       RunnableId{0},
       RunnableId{1},
       {RunnableId{0}, kNone}}};
  s.instances = {{RunnableId{0}, 1, 5, 15, {ResourceId{0}, ResourceId{1}}, {}},
                 {RunnableId{1}, 0, 15, 26, {}, {InstanceId{0}}}};
  s.timelines = {{ResourceId{1}, {InstanceId{0}}}};
  s.channels = {{"Ch", 4096, RunnableId{0}, {RunnableId{1}}, 2, 3}};
  s.channelWrites = {{0, InstanceId{0}, 1, {InstanceId{1}}}};
  s.channelReads = {{0, InstanceId{1}, InstanceId{0}, true, 2}};
  s.chains = {{"Chain", {RunnableId{0}, RunnableId{1}}, kNoDuration, 100, 1, 2, 3}};
  return s;
}

}  // namespace

TEST_CASE("every field of every record kind is written as the format says and read back", "[schedule_file]") {
  // The text of the writer before the schema drove it: a field added, dropped or moved in the
  // schema shows here.
  const std::string expected =
      "tactus-schedule 6\n"
      "schedule name=Every identifier=65535 source_hash=fedcba9876543210 cross_soc_latency_ns=7\n"
      "soc id=0 name=SocA\n"
      "soc id=1 name=SocB\n"
      "soc_latency from=0 to=1 latency_ns=250\n"
      "client id=0 name=C0 soc=1\n"
      "resource id=0 name=GPU0 type=GPU kind=gpu client=- hyperepoch=0 core=- device=- stream_limit=3 soc=1\n"
      "resource id=1 name=S0 type=CUDA_STREAM kind=cuda_stream client=0 hyperepoch=0 core=4 device=0 stream_limit=- "
      "soc=-\n"
      "hyperepoch id=0 name=H period_ns=1000 monitor_ns=900 resources=0,1 epochs=0\n"
      "epoch id=0 name=E hyperepoch=0 period_ns=500 frames=2\n"
      "runnable id=0 name=R client=0 epoch=0 kind=submitter wcet_ns=10 start_ns=20 deadline_ns=30 end_monitor_ns=40 "
      "priority=3 deps= submits=1 submitted_by=- alias_group=- steps=\n"
      "runnable id=1 name=G client=0 epoch=0 kind=alias_group wcet_ns=11 start_ns=0 deadline_ns=- end_monitor_ns=- "
      "priority=10 deps=0 submits=- submitted_by=0 alias_group=1 steps=0,-\n"
      "instance id=0 runnable=0 frame=1 start_ns=5 end_ns=15 resources=0,1 deps=\n"
      "instance id=1 runnable=1 frame=0 start_ns=15 end_ns=26 resources= deps=0\n"
      "timeline resource=1 instances=0\n"
      "channel id=0 name=Ch size=4096 writer=0 readers=1 writes=2 depth=3\n"
      "channel_write channel=0 instance=0 slot=1 waits=1\n"
      "channel_read channel=0 instance=1 writer=0 previous=1 slot=2\n"
      "chain id=0 name=Chain runnables=0,1 max_reaction_ns=- max_age_ns=100 hop_allowance_ns=1 reaction_ns=2 age_ns=3\n"
      "content_hash e91193cf6cfcc439\n";
  const std::string text = writeSchedule(everyField());
  CHECK(text == expected);
  auto back = readSchedule(text, "every.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  CHECK(back->identifier == 65535);
  CHECK(back->crossSocLatencyNs == 7);
  CHECK(back->socLatencies[0].latencyNs == 250);
  CHECK(back->clients[0].soc == 1);
  CHECK(back->resources[1].device == ResourceId{0});
  CHECK(back->resources[1].streamLimit == kNone);
  CHECK(back->runnables[1].steps == std::vector<RunnableId>{RunnableId{0}, kNone});
  CHECK(back->runnables[1].deadlineNs == kNoDuration);
  CHECK(back->channels[0].sizeBytes == 4096);
  CHECK(back->channelReads[0].previousIteration);
  CHECK(back->chains[0].maxAgeNs == 100);
}

TEST_CASE("writing the same schedule twice gives identical bytes", "[schedule_file]") {
  CHECK(writeSchedule(test::sampleSchedule()) == writeSchedule(test::sampleSchedule()));
  CHECK(scheduleContentHash(test::sampleSchedule()) == scheduleContentHash(test::sampleSchedule()));
}

TEST_CASE("a changed byte is caught by the content hash", "[schedule_file]") {
  std::string text = writeSchedule(test::sampleSchedule());
  std::string bad = replaceOnce(text, "wcet_ns=1000000", "wcet_ns=1000001");
  auto r = readSchedule(bad, "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kVerification);
  CHECK_THAT(r.error().message, Catch::Contains("content hash mismatch"));
}

TEST_CASE("another format version is refused as incompatible", "[schedule_file]") {
  std::string text = writeSchedule(test::sampleSchedule());
  const std::string next = std::to_string(kScheduleFormatVersion + 1);
  for (const std::string& v : {std::string("0"), next, std::string("4294967295")}) {
    INFO("version " << v);
    auto r = readSchedule(replaceOnce(text, "tactus-schedule 4", "tactus-schedule " + v), "x.tsched");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::kIncompatible);
    CHECK_THAT(r.error().message, Catch::Contains("format version " + v + " is not supported"));
    CHECK_THAT(r.error().message, Catch::Contains("reads versions 1 to " + std::to_string(kScheduleFormatVersion)));
  }
}

namespace {
Schedule cpuOnlySample();
}  // namespace

TEST_CASE("a schedule with GPU work is format 4; an older file with GPU work is refused by its version",
          "[schedule_file][gpu]") {
  // The sample has a submitter: its file is format 4 (the fields of format 3, no SoCs).
  const std::string text = writeSchedule(test::sampleSchedule());
  REQUIRE(text.rfind("tactus-schedule 4\n", 0) == 0);
  auto back = readSchedule(text, "x.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  // The same file claiming format 1 to 3 (as an older tactus-compile wrote GPU work, each
  // submittee holding its stream for its whole run) is refused, saying what to do.
  for (const char* v : {"1", "2", "3"}) {
    INFO("version " << v);
    std::string old = replaceOnce(text, "tactus-schedule 4", std::string("tactus-schedule ") + v);
    if (std::string(v) == "1") {
      old = replaceOnce(old, " cross_soc_latency_ns=0", "");
      while (old.find(" soc=-\n") != std::string::npos) old = replaceOnce(old, " soc=-\n", "\n");
    }
    auto r = readSchedule(rehash(old), "x.tsched");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::kIncompatible);
    CHECK(r.error().message ==
          std::string("x.tsched: schedule file format version ") + v +
              " plans GPU work the old way (each submittee held its CUDA stream for its whole run; this build reads "
              "GPU work from version 4 on); recompile the graph");
  }
  // A file without GPU work keeps its format: one machine, format 1, byte for byte as before.
  CHECK(writeSchedule(cpuOnlySample()).rfind("tactus-schedule 1\n", 0) == 0);
  CHECK(verifySchedule(cpuOnlySample()).ok());
}

TEST_CASE("malformed schedule files get messages with file and line", "[schedule_file]") {
  std::string text = writeSchedule(test::sampleSchedule());
  struct Case {
    std::string from, to, expect;
  };
  std::vector<Case> cases = {
      {"client id=1 ", "client id=3 ", "x.tsched:4: client id 3 out of sequence"},
      {"kind=gpu", "kind=fpga", "unknown resource kind 'fpga'"},
      {"wcet_ns=1000000", "wcet_ns=abc", "field 'wcet_ns' is not a valid number"},
      {"wcet_ns=1000000", "wcet_ns=-5", "field 'wcet_ns' is negative"},
      {"frames=2", "frames=2 extra=1", "unexpected field 'extra'"},
      {" period_ns=5000000", " periodns=5000000", "has field 'periodns' where 'period_ns' belongs"},
      {"schedule name=Sample", "schedule name=Sam,ple", "field 'name' holds a character"},
      {"deps=0 ", "deps=0, ", "ends with ','"},
      {"timeline resource=0", "bogus resource=0", "unknown record 'bogus'"},
      {"source_hash=0000000000001234", "source_hash=xyz", "source_hash is not 16 hex digits"},
      {"identifier=7", "identifier=70000", "identifier 70000 is above 65535"},
      {"steps=5,-", "steps=5,99999999999", "is not a valid number"},
  };
  for (const Case& c : cases) {
    INFO(c.from << " -> " << c.to);
    auto r = readSchedule(rehash(replaceOnce(text, c.from, c.to)), "x.tsched");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::kParse);
    CHECK_THAT(r.error().message, Catch::Contains(c.expect));
    CHECK_THAT(r.error().message, Catch::StartsWith("x.tsched:"));
  }
}

TEST_CASE("records out of order are refused", "[schedule_file]") {
  std::string text = writeSchedule(test::sampleSchedule());
  auto clientLine = text.find("client id=1");
  auto end = text.find('\n', clientLine);
  std::string line = text.substr(clientLine, end - clientLine + 1);
  text.erase(clientLine, line.size());
  text.insert(text.find("timeline"), line);
  auto r = readSchedule(rehash(text), "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("'client' record out of order"));
}

TEST_CASE("a truncated file is refused at every cut", "[schedule_file]") {
  std::string text = writeSchedule(test::sampleSchedule());
  for (std::size_t cut = 0; cut < text.size(); cut += 7) {
    auto r = readSchedule(text.substr(0, cut), "cut.tsched");
    REQUIRE_FALSE(r.has_value());
  }
}

TEST_CASE("random junk never crashes the reader", "[schedule_file]") {
  std::mt19937 rng(42);
  std::string text = writeSchedule(test::sampleSchedule());
  for (int round = 0; round < 2000; ++round) {
    std::string junk = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) junk[rng() % junk.size()] = static_cast<char>(rng() % 256);
    auto r = readSchedule(rehash(junk), "junk.tsched");
    if (r.has_value()) (void)verifySchedule(*r);  // must not crash on whatever was read
  }
  std::string binary(4096, '\0');
  for (char& c : binary) c = static_cast<char>(rng() % 256);
  CHECK_FALSE(readSchedule(binary, "bin").has_value());
  CHECK_FALSE(readSchedule("", "empty").has_value());
}

TEST_CASE("files are saved and loaded from disk", "[schedule_file]") {
  std::string path = "core_test_" + std::to_string(::getpid()) + ".tsched";
  REQUIRE(saveScheduleFile(test::sampleSchedule(), path).has_value());
  auto back = loadScheduleFile(path);
  std::remove(path.c_str());
  REQUIRE(back.has_value());
  CHECK(back->runnables.size() == 6);
  auto missing = loadScheduleFile("/nonexistent/dir/x.tsched");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kIo);
  CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/dir/x.tsched"));
  CHECK_FALSE(saveScheduleFile(test::sampleSchedule(), "/nonexistent/dir/x.tsched").has_value());
}

TEST_CASE("the hash continues over concatenated input and prints as 16 hex digits", "[hash]") {
  CHECK(hashBytes(hashBytes(kHashSeed, "ab"), "cd") == hashBytes(kHashSeed, "abcd"));
  CHECK(hashBytes(kHashSeed, "a") != hashBytes(kHashSeed, "b"));
  std::uint64_t back = 0;
  REQUIRE(hashFromHex(hashToHex(0xdeadbeef01234567ULL), back));
  CHECK(back == 0xdeadbeef01234567ULL);
  CHECK(hashToHex(1) == "0000000000000001");
  CHECK_FALSE(hashFromHex("123", back));
  CHECK_FALSE(hashFromHex("DEADBEEF01234567", back));
}

namespace {

// The sample on two SoCs (every client and resource on SocA) with a default transfer time and
// one of its own for each direction between them.
// The sample without GPU work (a file of format 1 to 3): its submitter B and its work G become
// CPU runnables, G on CPU0 where it is idle.
Schedule cpuOnlySample() {
  Schedule s = test::sampleSchedule();
  for (RunnableId r : {RunnableId{1}, RunnableId{2}}) {
    s.runnables[r].kind = RunnableKind::kCpu;
    s.runnables[r].submits = kNone;
    s.runnables[r].submittedBy = kNone;
  }
  for (InstanceInfo& in : s.instances) {
    if (in.runnable == RunnableId{1}) in.resources = {ResourceId{1}};
    if (in.runnable == RunnableId{2}) in.resources = {ResourceId{0}};
  }
  s.timelines = {
      {ResourceId{0}, {InstanceId{0}, InstanceId{2}, InstanceId{4}, InstanceId{5}, InstanceId{7}, InstanceId{9}}},
      {ResourceId{1}, {InstanceId{1}, InstanceId{3}, InstanceId{6}, InstanceId{8}}},
      {ResourceId{3}, {InstanceId{4}, InstanceId{9}}}};
  return s;
}

Schedule twoSocSample() {
  Schedule s = cpuOnlySample();
  s.socs = {{"SocA"}, {"SocB"}};
  for (ClientInfo& c : s.clients) c.soc = 0;
  for (ResourceInfo& r : s.resources) r.soc = 0;
  s.crossSocLatencyNs = 200000;
  s.socLatencies = {{0, 1, 150000}, {1, 0, 300000}};
  return s;
}

}  // namespace

TEST_CASE("format 3 carries the transfer time of each SoC pair and reads it back", "[schedule_file]") {
  const Schedule s = twoSocSample();
  const std::string text = writeSchedule(s);
  CHECK(text.rfind("tactus-schedule 3\n", 0) == 0);
  CHECK(text.find("\nsoc id=1 name=SocB\nsoc_latency from=0 to=1 latency_ns=150000\n"
                  "soc_latency from=1 to=0 latency_ns=300000\nclient id=0 ") != std::string::npos);
  auto back = readSchedule(text, "two.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  REQUIRE(back->socLatencies.size() == 2);
  CHECK(back->socLatencies[1].from == 1);
  CHECK(back->socLatencies[1].to == 0);
  CHECK(back->socLatencies[1].latencyNs == 300000);
  CHECK(socLatencyNs(*back, 0, 1) == 150000);
  CHECK(socLatencyNs(*back, 1, 0) == 300000);
  CHECK(socLatencyNs(*back, 1, 1) == 0);
  CHECK(verifySchedule(*back).ok());
  // Without pairs, the multi-SoC file is format 2 as before: no soc_latency record.
  Schedule plain = s;
  plain.socLatencies.clear();
  const std::string two = writeSchedule(plain);
  CHECK(two.rfind("tactus-schedule 2\n", 0) == 0);
  CHECK(two.find("\nsoc_latency") == std::string::npos);
  // A soc_latency record in a format-2 file is not one of its records (a format-2 reader would
  // refuse it the same way): the version, not the record, says a file has pairs.
  auto r = readSchedule(rehash(replaceOnce(text, "tactus-schedule 3\n", "tactus-schedule 2\n")), "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("unknown record 'soc_latency'"));
  CHECK(socLatencyNs(plain, 1, 0) == 200000);
}

TEST_CASE("the reader refuses a bad SoC pair latency with its line and what is wrong", "[schedule_file]") {
  const std::string text = writeSchedule(twoSocSample());
  struct Case {
    std::string from, to, expect;
  };
  const std::string first = "soc_latency from=0 to=1 latency_ns=150000";
  const std::string second = "soc_latency from=1 to=0 latency_ns=300000";
  const std::vector<Case> cases = {
      {first, "soc_latency from=0 to=2 latency_ns=150000",
       "x.tsched:5: soc_latency names SoC 2, but the schedule has 2 SoCs"},
      {first, "soc_latency from=1 to=1 latency_ns=150000",
       "x.tsched:5: soc_latency from SoC 'SocB' to itself (a dependency within one SoC has no transfer time)"},
      {first, "soc_latency from=0 to=1 latency_ns=-1", "x.tsched:5: field 'latency_ns' is negative"},
      {first, "soc_latency from=0 to=1 latency_ns=1e6", "x.tsched:5: field 'latency_ns' is not a valid number"},
      {first, "soc_latency from=0 to=1 latency_ns=2000000000000",
       "x.tsched:5: field 'latency_ns' is 2000000000000 ns, above the longest duration allowed"},
      {first, "soc_latency from=0 latency_ns=150000", "has field 'latency_ns' where 'to' belongs"},
      {first, first + " extra=1", "unexpected field 'extra'"},
      {second, "soc_latency from=0 to=1 latency_ns=300000",
       "x.tsched:6: soc_latency from SoC 'SocA' to SoC 'SocB' is given twice"},
  };
  for (const Case& c : cases) {
    INFO(c.from << " -> " << c.to);
    auto r = readSchedule(rehash(replaceOnce(text, c.from, c.to)), "x.tsched");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::kParse);
    CHECK_THAT(r.error().message, Catch::Contains(c.expect));
  }
  // The two pairs swapped.
  const std::string swapped = replaceOnce(replaceOnce(text, first, "@"), second, first);
  auto r = readSchedule(rehash(replaceOnce(swapped, "@", second)), "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "x.tsched:6: soc_latency record out of order (sorted by from, then to)");
  // After the client records, or in a file of one machine (format 1): not a record there.
  std::string late = replaceOnce(text, first + "\n", "");
  late = replaceOnce(late, "resource id=0 ", first + "\nresource id=0 ");
  r = readSchedule(rehash(late), "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("'soc_latency' record out of order"));
  const std::string one = writeSchedule(cpuOnlySample());
  r = readSchedule(rehash(replaceOnce(one, "client id=0 ", first + "\nclient id=0 ")), "x.tsched");
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("unknown record 'soc_latency'"));
}
