// The switch job (master/managed/switch_job.hpp) in one process: its named states as a request
// goes through them, its answer taken once, a failed answer, and a rollover's pairs reporting from
// several threads. The job's handler here is the test's own switch (the real one, Run::handle,
// with real clients: tests/master/run_core_test.cpp and tests/switching).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "managed/switch_job.hpp"

namespace tactus::master {
namespace {

using shm::ManagerOp;
using shm::ManagerResult;

// Waits (at most 5 s) until `job` is in `state`.
bool reaches(const SwitchJob& job, SwitchState state) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (job.state() != state && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  return job.state() == state;
}

TEST_CASE("switch job: a request goes through its named states to done", "[master][switch-job]") {
  std::atomic<int> step{0};
  std::atomic<int> answered{0};
  HyperepochId he{1};
  SwitchJob job(
      [&](SwitchJob& j, const Request& r) {
        j.enter(SwitchState::kDraining, nullptr, he);
        while (step.load() < 1) std::this_thread::yield();
        j.enter(SwitchState::kWaitingForClients, nullptr, he, true);
        while (step.load() < 2) std::this_thread::yield();
        return Answer{ManagerResult::kOk, "switched " + std::to_string(r.arg0)};
      },
      [&] { ++answered; });
  CHECK(job.state() == SwitchState::kIdle);
  CHECK_FALSE(job.inFlight());
  Request r;
  r.seq = 7;
  r.op = ManagerOp::kRollover;
  r.arg0 = 202;
  job.launch(r);
  CHECK(job.inFlight());
  REQUIRE(reaches(job, SwitchState::kDraining));
  CHECK(job.waitingOn().hyperepoch == he);
  CHECK_FALSE(job.waitingOn().acks);
  CHECK_FALSE(job.takeAnswer());  // nothing to publish while it drains
  step = 1;
  REQUIRE(reaches(job, SwitchState::kWaitingForClients));
  CHECK(job.waitingOn().acks);
  CHECK(std::string(switchStateName(job.state())) == "waiting for clients");
  step = 2;
  REQUIRE(reaches(job, SwitchState::kPublishing));
  CHECK_FALSE(job.inFlight());
  CHECK(job.answerPending());
  CHECK(answered.load() == 1);
  CHECK(job.waitingOn().state == SwitchState::kIdle);  // nothing waited on any more
  const auto taken = job.takeAnswer();
  REQUIRE(taken);
  CHECK(taken->first.seq == 7);
  CHECK(taken->second.message == "switched 202");
  CHECK(job.state() == SwitchState::kDone);
  CHECK_FALSE(job.takeAnswer());  // taken once
  CHECK_FALSE(job.answerPending());
}

TEST_CASE("switch job: a refused or cut-short answer ends failed, and the exit end is kept", "[master][switch-job]") {
  SwitchJob job(
      [](SwitchJob& j, const Request& r) {
        if (r.op == ManagerOp::kExit) {
          j.endRun(RunEnd{shm::SegmentState::kFinished, shm::StopReason::kExitRequested, kNone, "the run ends"});
          return Answer{ManagerResult::kOk, "the run ends"};
        }
        return Answer{ManagerResult::kRunEnded, "the run ended during the rollover"};
      },
      [] {});
  Request r;
  r.op = ManagerOp::kRollover;
  job.launch(r);
  REQUIRE(reaches(job, SwitchState::kPublishing));
  REQUIRE(job.takeAnswer());
  CHECK(job.state() == SwitchState::kFailed);
  CHECK_FALSE(job.exitEnd());
  r.op = ManagerOp::kExit;
  job.launch(r);  // the thread is kept between requests
  REQUIRE(reaches(job, SwitchState::kPublishing));
  REQUIRE(job.exitEnd());
  CHECK(job.exitEnd()->message == "the run ends");
  REQUIRE(job.takeAnswer());
  CHECK(job.state() == SwitchState::kDone);
}

TEST_CASE("switch job: a rollover's pairs report from several threads; one cut short fails it",
          "[master][switch-job]") {
  for (const bool cutShort : {false, true}) {
    SwitchJob job(
        [cutShort](SwitchJob& j, const Request& /*r*/) {
          j.beginPairs(
              {{HyperepochId{0}, HyperepochId{0}}, {HyperepochId{1}, HyperepochId{1}}, {HyperepochId{2}, kNone}});
          std::vector<std::thread> releases;
          for (std::size_t k = 0; k < j.pairs().size(); ++k) {
            releases.emplace_back([&j, k, cutShort] {
              std::this_thread::sleep_for(std::chrono::milliseconds(5 * (3 - k)));
              j.pairSwitched(!(cutShort && k == 1));
            });
          }
          const bool ok = j.awaitPairs();  // every pair, whatever the order
          for (auto& t : releases) t.join();
          return ok ? Answer{ManagerResult::kOk, "rolled over"} : Answer{ManagerResult::kRunEnded, "cut short"};
        },
        [] {});
    job.launch(Request{});
    REQUIRE(reaches(job, SwitchState::kPublishing));
    REQUIRE(job.takeAnswer());
    CHECK(job.state() == (cutShort ? SwitchState::kFailed : SwitchState::kDone));
    CHECK(job.answer().message == (cutShort ? "cut short" : "rolled over"));
  }
}

}  // namespace
}  // namespace tactus::master
