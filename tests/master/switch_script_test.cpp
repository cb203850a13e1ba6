// A managed recording's switch records read into the replay's steps (master/replay/switch_script.hpp):
// starts, rollovers (two records each) and stops, each activation's stop iteration, a recording
// cut short, and records that do not follow from the ones before refused, named.
#include "replay/switch_script.hpp"

#include <catch2/catch.hpp>

namespace {

using tactus::master::replay::SwitchScript;
using tactus::shm::ManagerOp;

constexpr std::uint32_t kNone = 0xFFFFFFFFU;

tactus::record::RecordingFile withSwitches(std::vector<tactus::record::SwitchRecord> switches) {
  tactus::record::RecordingFile file;
  file.path = "rec/soc0.trec";
  file.switches = std::move(switches);
  return file;
}

}  // namespace

TEST_CASE("switch script: start, two rollovers and a stop, each activation's stop", "[replay][switch_script]") {
  // What tactus-manager's start 45, rollover 46 45, rollover 45 46, exit leave in a recording.
  const auto file = withSwitches(
      {{0, 1, kNone, 45}, {12, 2, 45, 46}, {0, 3, 45, 46}, {14, 4, 46, 45}, {12, 5, 46, 45}, {21, 6, 45, kNone}});
  auto script = SwitchScript::read(file, {});
  REQUIRE(script);
  const auto& steps = script->steps();
  REQUIRE(steps.size() == 4);
  CHECK((steps[0].op == ManagerOp::kStart && steps[0].schedule == 45 && steps[0].iteration == 0));
  CHECK((steps[1].op == ManagerOp::kRollover && steps[1].schedule == 46 && steps[1].from == 45 &&
         steps[1].iteration == 0));
  CHECK((steps[2].op == ManagerOp::kRollover && steps[2].schedule == 45 && steps[2].from == 46 &&
         steps[2].iteration == 12));
  CHECK((steps[3].op == ManagerOp::kStop && steps[3].schedule == 45 && steps[3].iteration == 21));
  CHECK(script->stopIteration(45, 0) == 12);
  CHECK(script->stopIteration(46, 0) == 14);
  CHECK(script->stopIteration(45, 12) == 21);
  CHECK(script->stopIteration(45, 13) == SwitchScript::kNoStop);  // no activation began there
  CHECK(SwitchScript::describe(steps[1]) == "rollover from 45 to 46 (its iteration 0)");
}

TEST_CASE("switch script: a recording cut short stops its last activation where its releases stop",
          "[replay][switch_script]") {
  SECTION("a schedule still running") {
    auto script = SwitchScript::read(withSwitches({{0, 1, kNone, 45}, {9, 2, 45, 46}, {0, 3, 45, 46}}), {{46, 30}});
    REQUIRE(script);
    REQUIRE(script->steps().size() == 3);
    CHECK((script->steps()[2].op == ManagerOp::kStop && script->steps()[2].schedule == 46));
    CHECK(script->stopIteration(46, 0) == 30);
  }
  SECTION("cut between a rollover's two records: the old schedule's stop") {
    auto script = SwitchScript::read(withSwitches({{0, 1, kNone, 45}, {9, 2, 45, 46}}), {});
    REQUIRE(script);
    REQUIRE(script->steps().size() == 2);
    CHECK((script->steps()[1].op == ManagerOp::kStop && script->steps()[1].schedule == 45 &&
           script->steps()[1].iteration == 9));
    CHECK(script->stopIteration(45, 0) == 9);
  }
}

TEST_CASE("switch script: a record that does not follow from the ones before is refused, named",
          "[replay][switch_script]") {
  auto stopped = SwitchScript::read(withSwitches({{0, 1, kNone, 45}, {5, 2, 46, kNone}}), {});
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().message.find(
            "rec/soc0.trec: switch record 1 (from 46 to none at iteration 5) does not follow") != std::string::npos);
  auto twice = SwitchScript::read(withSwitches({{0, 1, kNone, 45}, {0, 2, kNone, 46}}), {});
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("switch record 1 (from none to 46") != std::string::npos);
}
