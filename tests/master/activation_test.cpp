// Each activation strategy (run/activation.hpp) in one process against a stand-in run core
// (run/run_core.hpp), the way iceoryx tests RouDi's port manager without a RouDi process: no
// master, no client process. The stand-in holds real schedules (Mode, with the client monitor on
// a segment in a heap buffer, and the run control the release threads obey) and records what the
// activation asks of the core. What the activation does to the run's real parts is checked: the
// stop it asks of the schedule's run control, the end it hands the monitor loop, the manager
// channel it makes and removes, the options it marks. Each case fails when the part of the
// strategy it names is removed (checked by hand: the choice of strategy, the frame limit's
// stopAt, a follower SoC's stopAt, the exit request's stop, the signal's stop, the managed exit
// end, the manager channel, the follower's --policy refusal, the policy's excuse of a dead client).
// tests/master/run_core_test.cpp drives the same strategies through the real Run with real clients.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "heap_segment.hpp"
#include "master.hpp"
#include "roles/client_monitor.hpp"
#include "run/activation.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"
#include "runtime_harness.hpp"
#include "soc/soc_run.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {
namespace {

using shm::SegmentState;
using shm::StopReason;

constexpr std::int64_t kMs = 1'000'000;

Schedule twoClients(std::uint16_t identifier = 7) {
  return test::makeSchedule({{"A", "a", "CPU0", 1 * kMs, {}, 0, {}}, {"B", "b", "CPU1", 1 * kMs, {"A.a"}, 0, {}}},
                            4 * kMs, 1, identifier);
}

// The stand-in core: what Run gives its activation, kept in plain fields the case sets and reads.
class StandInCore final : public RunCore {
 public:
  MasterOptions o;
  std::ostringstream outText, errText;
  std::vector<std::unique_ptr<test::HeapSegment>> segments;
  std::vector<std::unique_ptr<Mode>> loaded;
  std::optional<SocRunOptions> so;
  std::uint64_t limit = 0;
  std::int64_t startNs = 0;
  bool started = false;
  bool ended = false;
  std::vector<EventRecord> records;

  StandInCore() { o.instance = test::uniqueInstance("activation"); }

  /// A loaded schedule with its client monitor on a heap segment (the roles an activation asks).
  Mode& load(const Schedule& schedule) {
    segments.push_back(std::make_unique<test::HeapSegment>(schedule));
    auto mode = std::make_unique<Mode>();
    mode->path = "schedule" + std::to_string(schedule.identifier) + ".yaml";
    mode->schedule = segments.back()->schedule;
    mode->hardware.assign(mode->schedule.hyperepochs.size(), {"CPU0", "CPU1"});  // as loadMode finds them
    mode->monitor = std::make_unique<ClientMonitor>(segments.back()->view, mode->schedule);
    loaded.push_back(std::move(mode));
    return *loaded.back();
  }

  const MasterOptions& options() const override { return o; }
  std::ostream& out() override { return outText; }
  std::ostream& err() override { return errText; }
  const std::vector<std::unique_ptr<Mode>>& modes() const override { return loaded; }
  SocRunOptions* socOptions() override { return so ? &*so : nullptr; }
  SocRun* soc() const override { return nullptr; }
  std::uint64_t iterations() const override { return limit; }
  void setRunStart(std::int64_t ns) override { startNs = ns; }
  void wakeInIdleWindows(const Mode& /*mode*/) override {}
  bool runStarted() const override { return started; }
  bool clientsEntered() const override { return started; }
  bool runEnded() const override { return ended; }
  std::string endedBecause() const override { return ""; }
  std::optional<RunEnd> drainAll() override { return std::nullopt; }
  std::optional<StopReason> linkStopReason() const override { return std::nullopt; }
  Mode* runningMode() const override {
    for (const auto& m : loaded)
      if (m->running) return m.get();
    return nullptr;
  }
  std::string loadedList() const override {
    std::string list;
    for (const auto& m : loaded) list += (list.empty() ? "" : ", ") + std::to_string(m->schedule.identifier);
    return list;
  }
  void record(const EventRecord& r) override { records.push_back(r); }
  const replay::SwitchScript* switchScript() const override { return nullptr; }
};

TEST_CASE("activation: the options choose the strategy", "[master][activation]") {
  StandInCore core;
  core.load(twoClients());
  SECTION("no manager: immediate") {
    auto a = makeActivation(core);
    CHECK_FALSE(a->switchesSchedules());
    CHECK(a->published() == "clients");
  }
  SECTION("a manager: managed") {
    core.o.managerName = "stand-in-manager";
    auto a = makeActivation(core);
    CHECK(a->switchesSchedules());
    CHECK(a->stopAt() == 0);  // every hyperepoch waits for a start
    CHECK(a->peerStopMessage("own") != "own");
  }
  SECTION("a manager on a SoC that is not the primary: follower") {
    core.o.managerName = "stand-in-manager";
    core.so = SocRunOptions{};
    core.so->soc = 1;
    core.so->primary = 0;
    auto a = makeActivation(core);
    CHECK(a->switchesSchedules());
    CHECK(a->published() == "clients and the switches of the primary SoC's master");
  }
}

TEST_CASE("activation: immediate publishes the frame limit, never on a follower SoC", "[master][activation]") {
  StandInCore core;
  core.load(twoClients());
  core.limit = 100;
  CHECK(makeActivation(core)->stopAt() == 100);
  core.limit = 0;
  CHECK(makeActivation(core)->stopAt() == std::numeric_limits<std::uint64_t>::max());
  // A follower SoC's workers stop where the primary's stop sample says, never at its own -e.
  core.limit = 100;
  core.so = SocRunOptions{};
  core.so->soc = 1;
  CHECK(makeActivation(core)->stopAt() == std::numeric_limits<std::uint64_t>::max());
  core.so->soc = 0;  // the primary
  CHECK(makeActivation(core)->stopAt() == 100);
}

TEST_CASE("activation: immediate stops its schedule at an exit request and at a signal", "[master][activation]") {
  StandInCore core;
  Mode& mode = core.load(twoClients());
  auto a = makeActivation(core);
  const ClientId b = core.segments.front()->client("B");
  SECTION("a client's exit request") {
    a->exitRequested(mode, b);
    CHECK(mode.control.stopRequested());
    CHECK(mode.control.stopReason() == StopReason::kExitRequested);
    CHECK(mode.control.stopClient() == b);
    CHECK_FALSE(a->signalStopRequested());
    CHECK_FALSE(a->exitProgress().has_value());  // the release threads stop; the end comes with their end
  }
  SECTION("a signal") {
    CHECK_FALSE(a->signalStopRequested());
    a->stopForSignal(&mode, true);
    CHECK(mode.control.stopRequested());
    CHECK(mode.control.stopReason() == StopReason::kSignal);
    CHECK(a->signalStopRequested());
  }
  CHECK_FALSE(mode.control.aborted());  // a stop at the boundary, not an abort
}

TEST_CASE("activation: managed ends the run at a client's exit request once nothing runs", "[master][activation]") {
  StandInCore core;
  core.o.managerName = "stand-in-manager";
  Mode& mode = core.load(twoClients());
  auto a = makeActivation(core);
  REQUIRE(a->check().has_value());
  CHECK_FALSE(a->exitProgress().has_value());
  const ClientId b = core.segments.front()->client("B");
  a->exitRequested(mode, b);
  a->exitRequested(mode, core.segments.front()->client("A"));  // the first request names the end
  const std::optional<RunEnd> end = a->exitProgress();
  REQUIRE(end.has_value());
  CHECK(end->state == SegmentState::kFinished);
  CHECK(end->reason == StopReason::kExitRequested);
  CHECK(end->client == b);
  CHECK(end->message == "client 'B' requested exit");
  CHECK_FALSE(mode.control.stopRequested());  // no schedule ran: nothing to stop
  // Without a policy a client's death is not excused.
  const RunEnd died{SegmentState::kAborted, StopReason::kPeerDied, b, "client 'B' died"};
  const std::optional<RunEnd> kept = a->excuse(mode, died);
  REQUIRE(kept.has_value());
  CHECK(kept->message == died.message);
}

TEST_CASE("activation: managed makes the manager channel and removes it with the run", "[master][activation]") {
  StandInCore core;
  core.o.managerName = "stand-in-manager";
  core.load(twoClients(7));
  core.load(twoClients(8));
  const std::string channel = shm::managerInstanceName(core.o.instance);
  {
    auto a = makeActivation(core);
    REQUIRE(a->check().has_value());
    CHECK_FALSE(test::segmentPresent(channel));
    REQUIRE(a->prepare().has_value());
    CHECK(test::segmentPresent(channel));
    CHECK(a->published() == "clients and the schedule manager 'stand-in-manager'");
    a->ended();
    a->closed();
  }
  CHECK_FALSE(test::segmentPresent(channel));
}

TEST_CASE("activation: managed and follower mark a multi-SoC run managed", "[master][activation]") {
  StandInCore core;
  Schedule s = twoClients();
  s.socs = {SocInfo{"SocA"}, SocInfo{"SocB"}};
  core.load(s);
  core.o.managerName = "stand-in-manager";
  core.so = SocRunOptions{};
  SECTION("the primary's master") {
    REQUIRE(makeActivation(core)->check().has_value());
    CHECK(core.so->managed);
  }
  SECTION("a follower's master") {
    core.so->soc = 1;
    core.o.soc = "SocB";
    REQUIRE(makeActivation(core)->check().has_value());
    CHECK(core.so->managed);
    // The policy is the primary's: a follower's master refuses it, naming the primary.
    core.o.policyPath = "policy.yaml";
    const auto refused = makeActivation(core)->check();
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message ==
          "--policy is given to the master of the primary SoC 'SocA' only: SoC 'SocB' follows its switches");
  }
}

// The policy (managed/policy_run.hpp) through the managed activation: a client's death that a
// ClientDies rule names is excused (the monitor loop goes on), every schedule that uses the client
// stops releasing, and the rule's fallback is decided at the next round (here nothing ran, so the
// decision is logged as no switch).
TEST_CASE("activation: managed excuses a dead client a policy rule names", "[master][activation]") {
  StandInCore core;
  core.o.managerName = "stand-in-manager";
  Mode& seven = core.load(twoClients(7));
  Mode& eight = core.load(test::makeSchedule(
      {{"A", "a", "CPU0", 1 * kMs, {}, 0, {}}, {"A", "c", "CPU1", 1 * kMs, {}, 0, {}}}, 4 * kMs, 1, 8));
  const std::string policy =
      (std::filesystem::temp_directory_path() / (test::uniqueInstance("activation") + "_policy.yaml")).string();
  std::ofstream(policy) << "Rules:\n  - Name: lost-b\n    When: {ClientDies: B}\n    RollOver: 8\n";
  core.o.policyPath = policy;
  auto a = makeActivation(core);
  REQUIRE(a->check().has_value());
  std::filesystem::remove(policy);
  REQUIRE(a->prepare().has_value());
  core.started = true;  // every client entered
  const ClientId b = core.segments.front()->client("B");
  const RunEnd died{SegmentState::kAborted, StopReason::kPeerDied, b, "client 'B' died"};
  CHECK_FALSE(a->excuse(seven, died).has_value());
  CHECK(seven.control.aborted());  // its iterations wait for B: its release threads leave
  CHECK_FALSE(eight.control.aborted());
  CHECK(core.errText.str().find("policy rule 'lost-b' goes on without it (fallback schedule 8)") != std::string::npos);
  // Another client's death is no rule's.
  const RunEnd otherDied{SegmentState::kAborted, StopReason::kPeerDied, core.segments.front()->client("A"), "A died"};
  CHECK(a->excuse(seven, otherDied).has_value());
  // The next round decides the fallback: no schedule ran, so there is nothing to roll over.
  CHECK_FALSE(a->round().has_value());
  CHECK(core.outText.str().find("policy rule 'lost-b': no running schedule used the client") != std::string::npos);
  REQUIRE(core.records.size() == 1);
  CHECK(core.records.front().kind == static_cast<std::uint16_t>(EventKind::kPolicyDecision));
  a->ended();
  a->closed();
}

}  // namespace
}  // namespace tactus::master
