// Unit tests of channels in the core: the channel plan of a hand-made schedule, its schedule file
// records (format version 6), the refusal of channel records in an older version and of a newer
// version, the verifier's check of the mapping, and the run plan's waits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sample_schedule.hpp"
#include "schedule_text_edit.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;

namespace {

// The sample schedule (sample_schedule.hpp) with a channel from A (instances 0 and 5, ending at
// 1 and 6 ms) to C (instances 4 and 9, starting at 3 and 8 ms), planned.
Schedule withChannel() {
  Schedule s = test::sampleSchedule();
  ChannelInfo c;
  c.name = "Frame";
  c.sizeBytes = 4096;
  c.writer = RunnableId{0};
  c.readers = {RunnableId{3}};
  s.channels.push_back(c);
  auto planned = planChannels(s);
  REQUIRE(planned.has_value());
  return s;
}

bool waitsFor(const RunPlan& plan, std::uint32_t waiter, std::uint32_t waited) {
  const auto& w = plan.waits[InstanceId{waiter}];
  return std::any_of(w.begin(), w.end(),
                     [&](const WaitCondition& c) { return c.instance == InstanceId{waited} && !c.previousIteration; });
}

}  // namespace

TEST_CASE("the channel plan maps each reader run to the writer run ended before it", "[channels]") {
  const Schedule s = withChannel();
  REQUIRE(s.channelReads.size() == 2);
  CHECK(s.channelReads[0].instance == InstanceId{4});
  CHECK(s.channelReads[0].writer == InstanceId{0});
  CHECK(s.channelReads[1].instance == InstanceId{9});
  CHECK(s.channelReads[1].writer == InstanceId{5});
  CHECK_FALSE(s.channelReads[1].previousIteration);
  CHECK(s.channels[0].writes == 2);
  CHECK(s.channels[0].depth == 1);
  // A frame 1 overwrites the one buffer that C frame 0 reads: it waits for it.
  REQUIRE(s.channelWrites.size() == 2);
  CHECK(s.channelWrites[1].waits == std::vector<InstanceId>{InstanceId{4}});
  CHECK(verifySchedule(s).ok());
}

TEST_CASE("the run plan waits along channels as along dependencies", "[channels]") {
  const Schedule s = withChannel();
  auto plan = makeRunPlan(s);
  REQUIRE(plan.has_value());
  CHECK(waitsFor(*plan, 4, 0));  // C frame 0 after A frame 0
  CHECK(waitsFor(*plan, 9, 5));  // C frame 1 after A frame 1
  CHECK(waitsFor(*plan, 5, 4));  // A frame 1 after C frame 0 has read
  // A run plan from a schedule whose channel record names an instance it does not have fails.
  Schedule broken = withChannel();
  broken.channelReads[0].writer = InstanceId{99};
  CHECK_FALSE(makeRunPlan(broken).has_value());
}

TEST_CASE("a schedule with channels is written as format version 6 and read back the same", "[channels]") {
  const Schedule s = withChannel();
  const std::string text = writeSchedule(s);
  CHECK(text.rfind("tactus-schedule 6\n", 0) == 0);
  CHECK_THAT(text, Catch::Contains("\nchannel id=0 name=Frame size=4096 writer=0 readers=3 writes=2 depth=1\n"));
  CHECK_THAT(text, Catch::Contains("\nchannel_write channel=0 instance=5 slot=0 waits=4\n"));
  CHECK_THAT(text, Catch::Contains("\nchannel_read channel=0 instance=9 writer=5 previous=0 slot=0\n"));
  auto back = readSchedule(text, "s.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  // Without channels: the version the schedule needs otherwise (GPU work: 4), as before.
  CHECK(writeSchedule(test::sampleSchedule()).rfind("tactus-schedule 4\n", 0) == 0);
}

TEST_CASE("channel records in a file of an older format version are refused by its version", "[channels]") {
  const std::string text = writeSchedule(withChannel());
  const std::string old = test::rehash(test::replaceOnce(text, "tactus-schedule 6\n", "tactus-schedule 5\n"));
  auto read = readSchedule(old, "old.tsched");
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kIncompatible);
  CHECK(read.error().message ==
        "old.tsched: 'channel' record in a file of format version 5 (channels and chains need version 6); "
        "recompile the graph");
}

TEST_CASE("a schedule file of a newer format version is refused, saying what to do", "[channels]") {
  const std::string text = writeSchedule(withChannel());
  auto read =
      readSchedule(test::rehash(test::replaceOnce(text, "tactus-schedule 6\n", "tactus-schedule 7\n")), "new.tsched");
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kIncompatible);
  CHECK_THAT(read.error().message,
             Catch::Contains("format version 7 is not supported (this build reads versions 1 to 6); "
                             "recompile the graph"));
}

TEST_CASE("the verifier rejects a channel mapping inconsistent with the plan", "[channels]") {
  Schedule s = withChannel();
  s.channelReads[1].writer = InstanceId{0};  // C frame 1 claims A frame 0's version
  VerifyReport v = verifySchedule(s);
  REQUIRE_FALSE(v.ok());
  CHECK(v.errors.front() ==
        "channel 'Frame': reader run 'Client0.C' frame 1 is mapped inconsistently with the plan (the plan gives "
        "the version of 'Client0.A' frame 1, buffer 0)");

  Schedule noWait = withChannel();
  noWait.channelWrites[1].waits.clear();  // A frame 1 would overwrite what C frame 0 reads
  v = verifySchedule(noWait);
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(v.errors.front(), Catch::Contains("writer run 'Client0.A' frame 1 is inconsistent with the plan"));

  Schedule roundRobin = withChannel();
  roundRobin.channels[0].readers = {RunnableId{5}};  // R1, a round-robin member
  v = verifySchedule(roundRobin);
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(v.errors.front(), Catch::Contains("is round robin"));
}
