// Tests of the shared input limits (limits.hpp) where the schedule is read, verified and turned
// into a run plan, and the fuzzing reproducers (fuzz/regressions/master-*) through the same code
// path the master takes: each is refused with a message naming the file and line, never a crash.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "id_list.hpp"
#include "sample_schedule.hpp"
#include "schedule_text_edit.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using tactus::test::ids;

using namespace tactus;
using tactus::test::rehash;
using tactus::test::replaceOnce;

namespace {

std::string sourceRoot() {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  return root;
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the master does on load: read (with the hash), verify, plan. The first error, or "".
std::string masterLoad(const std::string& text, const std::string& origin) {
  auto schedule = readSchedule(text, origin);
  if (!schedule) return schedule.error().message;
  auto verified = verifyScheduleResult(*schedule);
  if (!verified) return verified.error().message;
  auto plan = makeRunPlan(*schedule);
  if (!plan) return plan.error().message;
  return "";
}

std::string allErrors(const VerifyReport& report) {
  std::string all;
  for (const std::string& e : report.errors) all += e + "\n";
  return all;
}

}  // namespace

TEST_CASE("the fuzzing reproducers for the master are refused with file and line", "[limits][fuzz]") {
  struct Case {
    const char* file;
    const char* expect;
  };
  const Case cases[] = {
      {"master-tsched-4e9-frames-unbounded-memory.tsched",
       ":7: epoch 'Huge' has 4294967294 frames, above the limit of 65536 per epoch"},
      {"master-tsched-1e8-frames-timeout.tsched", ":7: epoch 'Huge' has 100000000 frames, above the limit"},
      {"master-tsched-frame-base-u32-wrap-heap-overflow.tsched", ":7: epoch 'Huge' has 4294967294 frames"},
      {"master-report-tsched-verifier-frame-slots-unbounded-memory.tsched",
       ":7: field 'period_ns' is 9223372036854775807 ns, above the longest duration allowed (1000s)"},
      {"master-tsched-deadline-signed-overflow.tsched",
       ":10: field 'deadline_ns' is 9223372036854775807 ns, above the longest duration allowed"},
      {"master-tsched-starttime-signed-overflow.tsched",
       ":10: field 'start_ns' is 9223372036854775807 ns, above the longest duration allowed"},
  };
  for (const Case& c : cases) {
    const std::string path = sourceRoot() + "/fuzz/regressions/" + c.file;
    INFO(path);
    const std::string message = masterLoad(readText(path), c.file);
    CHECK_THAT(message, Catch::StartsWith(c.file) && Catch::Contains(c.expect));
  }
}

TEST_CASE("the schedule reader refuses counts above the limits at the first record too many", "[limits]") {
  std::string text = writeSchedule(test::sampleSchedule());
  // One more client than allowed would need a huge file; a list does the same for its field.
  std::string deps = "deps=0";
  for (std::uint32_t k = 1; k <= limits::kMaxDependenciesPerRunnable; ++k) deps += "," + std::to_string(k % 5);
  auto read = readSchedule(rehash(replaceOnce(text, "deps=0 ", deps + " ")), "big.tsched");
  REQUIRE_FALSE(read.has_value());
  CHECK_THAT(read.error().message,
             Catch::Contains("big.tsched:") && Catch::Contains("field 'deps' lists more than 65536 items"));

  auto longName = readSchedule(rehash(replaceOnce(text, "name=Client0", "name=" + std::string(2000, 'x'))), "n.tsched");
  REQUIRE_FALSE(longName.has_value());
  CHECK_THAT(longName.error().message,
             Catch::Contains("n.tsched:3: field 'name' is 2000 bytes long, above the limit of 1024"));
}

TEST_CASE("the schedule reader quotes what it prints from the file", "[limits]") {
  std::string text = writeSchedule(test::sampleSchedule());
  auto read = readSchedule(rehash(replaceOnce(text, "kind=cpu", "kind=\x1b[31mred")), "q.tsched");
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().message.find('\x1b') == std::string::npos);
  CHECK_THAT(read.error().message, Catch::Contains("unknown resource kind '\\x1b[31mred'"));
}

TEST_CASE("the verifier refuses times, frames and instance counts above the limits", "[limits][verify]") {
  SECTION("StartTime and Deadline near INT64_MAX are out of range, not an overflow") {
    Schedule s = test::sampleSchedule();
    s.runnables[0].startTimeNs = std::numeric_limits<std::int64_t>::max();
    s.runnables[3].deadlineNs = std::numeric_limits<std::int64_t>::max();
    const std::string errors = allErrors(verifySchedule(s));
    CHECK_THAT(errors,
               Catch::Contains("runnable 'Client0.A': its StartTime is 9223372036854775807 ns, outside 0..1000s"));
    CHECK_THAT(errors,
               Catch::Contains("runnable 'Client0.C': its Deadline is 9223372036854775807 ns, outside 0..1000s"));
  }
  SECTION("an epoch's frame count above the limit, before any table is sized by it") {
    Schedule s = test::sampleSchedule();
    s.epochs[0].frames = 4294967294u;
    s.epochs[0].periodNs = 1;
    const std::string errors = allErrors(verifySchedule(s));
    CHECK_THAT(errors, Catch::Contains("epoch 'E' has 4294967294 frames, above the limit of 65536 per epoch"));
  }
  SECTION("runnables x frames above the instances per hyperepoch") {
    Schedule s = test::sampleSchedule();
    s.epochs[0].frames = limits::kMaxFramesPerEpoch;
    s.epochs[0].periodNs = 1;
    for (int k = 0; k < 70; ++k) {
      RunnableInfo r = s.runnables[0];
      r.name = "Extra" + std::to_string(k);
      s.runnables.push_back(r);
    }
    const std::string errors = allErrors(verifySchedule(s));
    CHECK_THAT(errors, Catch::Contains("hyperepoch 'H' needs") && Catch::Contains("above the limit of 4194304"));
  }
  SECTION("an instance time outside the limits") {
    Schedule s = test::sampleSchedule();
    s.instances[0].endNs = std::numeric_limits<std::int64_t>::max();
    CHECK_THAT(allErrors(verifySchedule(s)), Catch::Contains("instance 0: its end is 9223372036854775807 ns"));
  }
}

TEST_CASE("the run plan refuses frame counts whose sum wrapped a 32-bit index", "[limits][run_plan]") {
  // The reproducer's shape: epochs of 1, 4294967294 and 2 frames sum to 2^32 + 1, which a 32-bit
  // sum wraps to 1: the plan's frame table was then written far out of bounds.
  Schedule s = test::sampleSchedule();
  s.epochs.push_back({"Huge", HyperepochId{0}, 1, 4294967294u});
  s.epochs.push_back({"Two", HyperepochId{0}, 1, 2});
  s.hyperepochs[0].epochs = ids<EpochId>({0, 1, 2});
  auto plan = makeRunPlan(s);
  REQUIRE_FALSE(plan.has_value());
  CHECK(plan.error().code == ErrorCode::kValidation);
  CHECK_THAT(plan.error().message, Catch::Contains("epoch 'Huge' has 4294967294 frames, above the limit of 65536"));
}

TEST_CASE("the run plan of a valid schedule is unchanged by the limits", "[limits][run_plan]") {
  auto plan = makeRunPlan(test::sampleSchedule());
  REQUIRE(plan.has_value());
  CHECK(plan->frameInstances.size() == 2);
  CHECK(plan->epochFrameBase == std::vector<std::uint32_t>{0});
  std::size_t waits = 0;
  for (const auto& w : plan->waits) waits += w.size();
  CHECK(waits > 0);
}
