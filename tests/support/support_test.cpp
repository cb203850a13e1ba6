// Tests of the test support itself: checkLog, which decides every "compiled order" runtime test,
// must report a swapped, a missing, an early and a duplicated run; ChildProcesses must end the
// processes a failed test case leaves running.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "runtime_harness.hpp"
#include "simulate.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr std::uint64_t kIterations = 3;

// Two clients on two cores with a cross-client dependency, a StartTime and two frames per period.
Schedule orderSchedule() {
  return makeSchedule({{"Client0", "A", "CPU0", 50'000, {}, 0, {}},
                       {"Client1", "B", "CPU1", 30'000, {"Client0.A"}, 0, {}},
                       {"Client1", "C", "CPU0", 20'000, {}, 100'000, {}}},
                      1'000'000, 2);
}

EventLog simulatedLog(const Schedule& s) {
  report::SimulationOptions o;
  o.iterations = kIterations;
  EventLog log;
  log.records = report::simulateRun(s, o);
  return log;
}

EventRecord* runOf(EventLog& log, std::uint32_t instance, std::uint32_t iteration) {
  for (EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.instance == instance && r.iteration == iteration)
      return &r;
  }
  FAIL("no run record of instance " << instance << " in iteration " << iteration);
  return nullptr;
}

}  // namespace

TEST_CASE("checkLog accepts a run in the compiled order", "[support][checklog]") {
  const Schedule s = orderSchedule();
  const EventLog log = simulatedLog(s);
  CHECK(checkLog(s, log, kIterations) == "");
}

TEST_CASE("checkLog reports two runs swapped on a resource's timeline", "[support][checklog]") {
  // Two independent runnables on one core, no StartTime: only the timeline orders them.
  const Schedule s = makeSchedule(
      {{"Client0", "A", "CPU0", 50'000, {}, 0, {}}, {"Client1", "X", "CPU0", 30'000, {}, 0, {}}}, 1'000'000, 1);
  REQUIRE(s.timelines.size() == 1);
  REQUIRE(s.timelines[0].instances == std::vector<InstanceId>{InstanceId{0}, InstanceId{1}});
  EventLog log = simulatedLog(s);
  REQUIRE(checkLog(s, log, kIterations) == "");
  EventRecord* a = runOf(log, 0, 1);
  EventRecord* x = runOf(log, 1, 1);
  // X ran first, A after it ended: same durations, the order on CPU0 exchanged.
  const std::int64_t aLength = a->endNs - a->startNs, xLength = x->endNs - x->startNs;
  x->startNs = a->startNs;
  x->endNs = x->startNs + xLength;
  a->startNs = x->endNs;
  a->endNs = a->startNs + aLength;
  CHECK(checkLog(s, log, kIterations) ==
        "on resource CPU0 instance 1 started before its timeline predecessor 0 ended (iteration 1)");
}

TEST_CASE("checkLog reports a missing run", "[support][checklog]") {
  const Schedule s = orderSchedule();
  EventLog log = simulatedLog(s);
  EventRecord* gone = runOf(log, 2, 2);
  log.records.erase(log.records.begin() + (gone - log.records.data()));
  CHECK(checkLog(s, log, kIterations) == "instance 2 missing in iteration 2");
}

TEST_CASE("checkLog reports a run started before its frame's release plus StartTime", "[support][checklog]") {
  const Schedule s = orderSchedule();
  EventLog log = simulatedLog(s);
  // C (runnable 2) has a StartTime of 100 us and no dependency: move its frame-0 run to the release.
  std::uint32_t c = 0;
  while (!(s.instances[c].runnable == RunnableId{2} && s.instances[c].frame == 0)) ++c;
  std::int64_t release = 0;
  for (const EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && r.iteration == 0 && r.aux == 0)
      release = r.startNs;
  }
  REQUIRE(release != 0);
  EventRecord* early = runOf(log, c, 0);
  const std::int64_t length = early->endNs - early->startNs;
  early->startNs = release + 50'000;
  early->endNs = early->startNs + length;
  CHECK_THAT(checkLog(s, log, kIterations), Catch::Contains("started before its release + StartTime (iteration 0)"));
}

TEST_CASE("checkLog reports a run before its dependency ended, a duplicate and a stray record", "[support][checklog]") {
  const Schedule s = orderSchedule();
  {
    EventLog log = simulatedLog(s);
    // B depends on A: start B of iteration 0 while A still runs.
    std::uint32_t a = 0, b = 0;
    while (!(s.instances[a].runnable == RunnableId{0} && s.instances[a].frame == 0)) ++a;
    while (!(s.instances[b].runnable == RunnableId{1} && s.instances[b].frame == 0)) ++b;
    EventRecord* dependent = runOf(log, b, 0);
    dependent->startNs = runOf(log, a, 0)->endNs - 1;
    CHECK_THAT(checkLog(s, log, kIterations), Catch::Contains("started before its dependency"));
  }
  {
    EventLog log = simulatedLog(s);
    log.records.push_back(*runOf(log, 1, 1));
    CHECK(checkLog(s, log, kIterations) == "instance 1 ran twice in iteration 1");
  }
  {
    EventLog log = simulatedLog(s);
    EventRecord stray = *runOf(log, 0, 0);
    stray.instance = static_cast<std::uint32_t>(s.instances.size());
    log.records.push_back(stray);
    CHECK_THAT(checkLog(s, log, kIterations), Catch::Contains("unknown instance"));
  }
  {
    EventLog log = simulatedLog(s);
    CHECK_THAT(checkLog(s, log, kIterations - 1), Catch::Contains("beyond the limit"));
  }
}

TEST_CASE("ChildProcesses kills and reaps the children still running when the test case is left",
          "[support][children]") {
  pid_t running = 0, finished = 0;
  try {
    ChildProcesses children;
    running = children.spawn({"/bin/sleep", "30"}, "/dev/null");
    finished = children.spawn({"/bin/true"}, "/dev/null");
    REQUIRE(running > 0);
    REQUIRE(finished > 0);
    CHECK(waitFor(finished, 10'000) == 0);
    CHECK(children.unreaped() == 1);
    throw std::runtime_error("a failed REQUIRE leaves the test case like this");
  } catch (const std::runtime_error&) {}
  // Reaped: no such process any more (a zombie would still accept signal 0).
  CHECK(::kill(running, 0) == -1);
  CHECK(errno == ESRCH);
  CHECK(waitFor(running, 100) == -3);  // never waited for twice
  CHECK(waitFor(finished, 100) == -3);
}

TEST_CASE("waitFor kills a child that runs past its time and reports -1", "[support][children]") {
  ChildProcesses children;
  const pid_t slow = children.spawn({"/bin/sleep", "30"}, "/dev/null");
  CHECK(waitFor(slow, 50) == -1);
  CHECK(children.unreaped() == 0);
  const pid_t missing = children.spawn({"/nonexistent/program"}, "/dev/null");
  CHECK(waitFor(missing, 10'000) == 127);
}

TEST_CASE("timeScale reads TACTUS_TEST_TIME_SCALE and never goes below 1", "[support]") {
  const char* saved = std::getenv("TACTUS_TEST_TIME_SCALE");
  const std::string restore = saved != nullptr ? saved : "";
  ::setenv("TACTUS_TEST_TIME_SCALE", "10", 1);
  CHECK(timeScale() == 10.0);
  ::setenv("TACTUS_TEST_TIME_SCALE", "0.5", 1);
  CHECK(timeScale() == 1.0);
  ::setenv("TACTUS_TEST_TIME_SCALE", "fast", 1);
  CHECK(timeScale() == 1.0);
  ::unsetenv("TACTUS_TEST_TIME_SCALE");
  CHECK(timeScale() == 1.0);
  if (saved != nullptr) ::setenv("TACTUS_TEST_TIME_SCALE", restore.c_str(), 1);
}
