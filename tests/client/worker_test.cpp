// The worker in one process (the in-process tier): its step table (step_table.hpp) and its loop
// (runWorker) on a segment in a heap buffer, this test playing the master's part (releases,
// stopAt, the run's end). No master process, no client process: a case runs in milliseconds.
#include <sched.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heap_segment.hpp"
#include "runtime.hpp"
#include "runtime_harness.hpp"
#include "step_table.hpp"
#include "stm_errors.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

using namespace tactus;
using client::Runtime;
using client::StepKind;

namespace {

using test::HeapSegment;

/// A client's runtime over the segment, unpinned, with no runnable registered.
std::unique_ptr<Runtime> runtimeOf(const HeapSegment& seg, const std::string& clientName) {
  auto rt = std::make_unique<Runtime>();
  rt->name = clientName;
  rt->clientIndex = seg.client(clientName);
  rt->view = seg.view;
  rt->schedule = seg.schedule;
  rt->plan = seg.plan;
  rt->registrations.resize(seg.schedule.runnables.size());
  rt->cudaSubmitters.resize(seg.schedule.runnables.size());
  rt->gpuStats.resize(seg.plan.workers.size());
  rt->flags = shm::kFlagNoPinning;
  return rt;
}

// What the registered functions saw: (runnable, start time) in call order.
struct Calls {
  std::mutex lock;
  std::vector<std::pair<std::string, std::int64_t>> seen;
};
struct Probe {
  Calls* calls;
  std::string name;
};
void record(void* p) {
  auto* probe = static_cast<Probe*>(p);
  std::lock_guard<std::mutex> guard(probe->calls->lock);
  probe->calls->seen.emplace_back(probe->name, ipc::monotonicNs());
}

void registerProbe(Runtime& rt, const HeapSegment& seg, Probe& probe) {
  client::Registration& r = rt.registrations[seg.runnable(probe.name)];
  r.registered = true;
  r.function = record;
  r.userdata = &probe;
}

Schedule twoClients() {
  // A.a -> A.b on CPU0 and A.a -> B.c on CPU1: one wait inside A's worker's order, one across
  // clients.
  return test::makeSchedule({{"A", "a", "CPU0", 100'000, {}, 0, {}},
                             {"A", "b", "CPU0", 100'000, {"A.a"}, 0, {}},
                             {"B", "c", "CPU1", 100'000, {"A.a"}, 0, {}}},
                            10'000'000);
}

}  // namespace

TEST_CASE("the step table: one step per instance in timeline order, its kind from the registration",
          "[client][worker]") {
  HeapSegment seg(twoClients());
  auto rt = runtimeOf(seg, "A");
  Calls calls;
  Probe a{&calls, "A.a"};
  registerProbe(*rt, seg, a);  // A.a: a plain function; A.b: none (the engine's)
  const client::StepTable table = client::buildSteps(*rt, seg.worker("A", "CPU0"));
  REQUIRE(table.steps.size() == 2);
  CHECK(table.steps[0].runnable == seg.runnable("A.a"));
  CHECK(table.steps[0].kind == StepKind::kCall);
  CHECK(table.steps[0].function == &record);
  CHECK(table.steps[1].runnable == seg.runnable("A.b"));
  CHECK(table.steps[1].kind == StepKind::kEngine);
  CHECK(table.steps[1].function == nullptr);
  // Each step's next points at the following step (the last at the first), for warmHandOff.
  CHECK(table.steps[0].next[0] == &table.steps[1]);
  CHECK(table.steps[1].next[0] == &table.steps[0]);
  // ... and every line of it that the hand-off reads (its function and userdata lie past the
  // first line: a cold miss inside the next run's measured time when not prefetched).
  auto prefetched = [](const client::Step& s, const void* p) {
    const auto line = reinterpret_cast<std::uintptr_t>(p) / shm::kCacheLine;
    return std::any_of(s.next.begin(), s.next.end(),
                       [&](const void* q) { return reinterpret_cast<std::uintptr_t>(q) / shm::kCacheLine == line; });
  };
  for (std::size_t k = 0; k < 2; ++k) {
    const client::Step& following = table.steps[1 - k];
    CHECK(prefetched(table.steps[k], &following.function));
    CHECK(prefetched(table.steps[k], &following.userdata));
    CHECK(prefetched(table.steps[k], &following.startTimeNs));
    CHECK(prefetched(table.steps[k], &following.self->started));
  }

  // B.c waits for A.a of the same iteration, on A.a's done word, by the plan (a CPU predecessor).
  auto rtB = runtimeOf(seg, "B");
  const client::StepTable tableB = client::buildSteps(*rtB, seg.worker("B", "CPU1"));
  REQUIRE(tableB.steps.size() == 1);
  const client::Step& c = tableB.steps[0];
  REQUIRE(c.endWait - c.firstWait == 1);
  const client::WaitRef& wait = tableB.waits[c.firstWait];
  const InstanceId aInstance = table.steps[0].instance;
  CHECK(wait.word == &seg.view.instance(aInstance).done);
  CHECK_FALSE(wait.previousIteration);
  CHECK(wait.planned);
  CHECK(wait.plan.plannedEndNs == seg.schedule.instances[aInstance].endNs);
  // Its first wait's entry, both ends, is prefetched by the hand-off before it (here: itself).
  CHECK(prefetched(c, &wait.word));
  CHECK(prefetched(c, &wait.seesStart));
}

TEST_CASE("a worker runs its steps in order for every released iteration, logs each run and publishes its end",
          "[client][worker]") {
  HeapSegment seg(twoClients());
  auto rt = runtimeOf(seg, "A");
  Calls calls;
  Probe a{&calls, "A.a"}, b{&calls, "A.b"};
  registerProbe(*rt, seg, a);
  registerProbe(*rt, seg, b);
  const std::uint32_t w = seg.worker("A", "CPU0");
  seg.releaseAndStopAt(3);
  CHECK(client::runWorker(*rt, w) == 3);  // stopped at stopAt
  REQUIRE(calls.seen.size() == 6);
  for (std::size_t k = 0; k < 6; ++k) CHECK(calls.seen[k].first == (k % 2 == 0 ? "A.a" : "A.b"));
  const client::StepTable table = client::buildSteps(*rt, w);
  for (const client::Step& step : table.steps) {
    CHECK(seg.view.instance(step.instance).done.load() == 3);
    CHECK(seg.view.instance(step.instance).started.load() == 3);
  }
  const std::vector<EventRecord> log = seg.records(w);
  REQUIRE(log.size() == 6);
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(log[k].kind == static_cast<std::uint16_t>(EventKind::kRun));
    CHECK(log[k].iteration == k / 2);
    CHECK(log[k].aux == index(seg.runnable(k % 2 == 0 ? "A.a" : "A.b")));
    CHECK(log[k].startNs <= log[k].endNs);
    if (k > 0) CHECK(log[k - 1].endNs <= log[k].startNs);
  }
  // Run on from where it stopped: the next call starts at iteration 3.
  seg.releaseAndStopAt(4);
  CHECK(client::runWorker(*rt, w, 3) == 4);
  CHECK(calls.seen.size() == 8);
}

TEST_CASE("a worker waits for another client's predecessor of the same iteration", "[client][worker]") {
  HeapSegment seg(twoClients());
  auto rtA = runtimeOf(seg, "A");
  auto rtB = runtimeOf(seg, "B");
  Calls calls;
  Probe a{&calls, "A.a"}, b{&calls, "A.b"}, c{&calls, "B.c"};
  registerProbe(*rtA, seg, a);
  registerProbe(*rtA, seg, b);
  registerProbe(*rtB, seg, c);
  seg.releaseAndStopAt(5);
  // B's worker starts first and must wait each iteration for A.a.
  std::uint64_t stoppedB = 0;
  std::thread workerB([&] { stoppedB = client::runWorker(*rtB, seg.worker("B", "CPU1")); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard<std::mutex> guard(calls.lock);
    CHECK(calls.seen.empty());  // nothing ran: B.c waits for A.a
  }
  CHECK(client::runWorker(*rtA, seg.worker("A", "CPU0")) == 5);
  workerB.join();
  CHECK(stoppedB == 5);
  const std::vector<EventRecord> logA = seg.records(seg.worker("A", "CPU0"));
  const std::vector<EventRecord> logB = seg.records(seg.worker("B", "CPU1"));
  REQUIRE(logA.size() == 10);
  REQUIRE(logB.size() == 5);
  for (std::size_t h = 0; h < 5; ++h) {
    CHECK(logB[h].iteration == h);
    CHECK(logB[h].startNs >= logA[2 * h].endNs);  // after A.a of its iteration
  }
}

TEST_CASE("a worker waiting for a release leaves when the run is aborted", "[client][worker]") {
  HeapSegment seg(twoClients());
  auto rt = runtimeOf(seg, "A");
  Calls calls;
  Probe a{&calls, "A.a"}, b{&calls, "A.b"};
  registerProbe(*rt, seg, a);
  registerProbe(*rt, seg, b);
  seg.releaseAndStopAt(1);
  seg.view.hyperepoch(HyperepochId{0}).stopAt.store(100);  // iteration 1 is never released
  std::uint64_t stopped = 0;
  std::thread worker([&] { stopped = client::runWorker(*rt, seg.worker("A", "CPU0")); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  seg.view.header().state.store(static_cast<std::uint32_t>(shm::SegmentState::kAborted));
  ipc::futexWake(seg.view.epoch(EpochId{0}).released);
  worker.join();
  CHECK(stopped == 1);  // it ran iteration 0, then left while waiting for iteration 1
  CHECK(calls.seen.size() == 2);
  // What it ran is in its ring: records are pushed before a worker waits and when it leaves.
  CHECK(seg.records(seg.worker("A", "CPU0")).size() == 2);
}

TEST_CASE("a halted client's workers leave at once, before running anything", "[client][worker]") {
  HeapSegment seg(twoClients());
  auto rt = runtimeOf(seg, "A");
  Calls calls;
  Probe a{&calls, "A.a"};
  registerProbe(*rt, seg, a);
  seg.releaseAndStopAt(3);
  rt->halted.store(true);  // the master died, or the segment was damaged
  CHECK(client::runWorker(*rt, seg.worker("A", "CPU0")) == 0);
  CHECK(calls.seen.empty());
}

namespace {

Schedule threeOnOneCore() {
  // CPU0's timeline: A.a, B.b, A.c (placed in this order); C.d on CPU1 depends on B.b.
  return test::makeSchedule({{"A", "a", "CPU0", 100'000, {}, 0, {}},
                             {"B", "b", "CPU0", 100'000, {}, 0, {}},
                             {"A", "c", "CPU0", 100'000, {}, 0, {}},
                             {"C", "d", "CPU1", 100'000, {"B.b"}, 0, {}}},
                            10'000'000);
}

}  // namespace

TEST_CASE("the step table names the wait on the instance before a step on its core when another worker runs it",
          "[client][worker]") {
  HeapSegment seg(threeOnOneCore());
  auto rtA = runtimeOf(seg, "A");
  auto rtB = runtimeOf(seg, "B");
  auto rtC = runtimeOf(seg, "C");
  const client::StepTable a = client::buildSteps(*rtA, seg.worker("A", "CPU0"));
  const client::StepTable b = client::buildSteps(*rtB, seg.worker("B", "CPU0"));
  const client::StepTable c = client::buildSteps(*rtC, seg.worker("C", "CPU1"));
  REQUIRE(a.steps.size() == 2);
  REQUIRE(b.steps.size() == 1);
  REQUIRE(c.steps.size() == 1);
  // A.a is the first of CPU0's timeline; the one before it (A.c of the previous iteration) is A's own.
  CHECK(a.steps[0].coreWait == client::kNoCoreWait);
  // B.b follows A.a, A.c follows B.b: each waits for another worker's instance on its core.
  REQUIRE(b.steps[0].coreWait != client::kNoCoreWait);
  CHECK(b.waits[b.steps[0].coreWait].word == &seg.view.instance(seg.instance("A.a")).done);
  CHECK_FALSE(b.waits[b.steps[0].coreWait].previousIteration);
  REQUIRE(a.steps[1].coreWait != client::kNoCoreWait);
  CHECK(a.waits[a.steps[1].coreWait].word == &seg.view.instance(seg.instance("B.b")).done);
  // C.d waits for B.b on the other core: a dependency, not its core's order.
  REQUIRE(c.steps[0].endWait - c.steps[0].firstWait == 1);
  CHECK(c.steps[0].coreWait == client::kNoCoreWait);
}

TEST_CASE("a pinned worker sleeps, without spinning, until another worker's instance before it on its core has ended",
          "[client][worker]") {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(0, &allowed)) {
    WARN("this process may not run on core 0: nothing to check here");
    return;
  }
  HeapSegment seg(threeOnOneCore());
  auto rtB = runtimeOf(seg, "B");
  rtB->flags = 0;  // pinned to CPU0, as a client's workers are
  Calls calls;
  Probe b{&calls, "B.b"};
  registerProbe(*rtB, seg, b);
  seg.releaseAndStopAt(1);
  shm::InstanceSlot& aa = seg.view.instance(seg.instance("A.a"));
  std::uint64_t stopped = 0;
  std::thread workerB([&] { stopped = client::runWorker(*rtB, seg.worker("B", "CPU0")); });
  // B's worker goes to sleep on A.a's done word; the test, playing A, ends A.a a while later.
  const std::int64_t deadline = ipc::monotonicNs() + 5'000'000'000;
  while (aa.waiters.load() == 0 && ipc::monotonicNs() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  CHECK(aa.waiters.load() >= 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    std::lock_guard<std::mutex> guard(calls.lock);
    CHECK(calls.seen.empty());
  }
  ipc::publishSequence(aa.done, aa.waiters, 1);
  workerB.join();
  CHECK(stopped == 1);
  const std::vector<EventRecord> log = seg.records(seg.worker("B", "CPU0"));
  REQUIRE(log.size() == 1);
  // No spin before the run: it slept until A.a's end woke it (a spinning waiter logs its spin;
  // the plan-guided wait spun at least TACTUS_SPIN_NS, 20 us, for a predecessor of 100 us).
  CHECK(log[0].detail == 0);
}

TEST_CASE("no core turn for the previous iteration's last instance of a core, nor for a wait that is not the first",
          "[client][worker]") {
  // CPU0: A.a, B.b. A.a, the first of the timeline, follows B.b of the previous iteration: it
  // waits for its release, not asleep on B.b's end.
  HeapSegment two(
      test::makeSchedule({{"A", "a", "CPU0", 100'000, {}, 0, {}}, {"B", "b", "CPU0", 100'000, {}, 0, {}}}, 10'000'000));
  auto rtA = runtimeOf(two, "A");
  const client::StepTable a = client::buildSteps(*rtA, two.worker("A", "CPU0"));
  REQUIRE(a.steps.size() == 1);
  REQUIRE(a.steps[0].endWait - a.steps[0].firstWait == 1);  // B.b of the previous iteration
  CHECK(a.waits[a.steps[0].firstWait].previousIteration);
  CHECK(a.steps[0].coreWait == client::kNoCoreWait);
  // CPU0: B.x, A.a, A.c; A.c depends on B.x. A.c's core predecessor is A's own A.a, so its wait
  // on B.x (another worker's, on this core, but a dependency) is no core turn.
  HeapSegment dep(test::makeSchedule({{"B", "x", "CPU0", 100'000, {}, 0, {}},
                                      {"A", "a", "CPU0", 100'000, {}, 0, {}},
                                      {"A", "c", "CPU0", 100'000, {"B.x"}, 0, {}}},
                                     10'000'000));
  auto rtDep = runtimeOf(dep, "A");
  const client::StepTable t = client::buildSteps(*rtDep, dep.worker("A", "CPU0"));
  REQUIRE(t.steps.size() == 2);
  REQUIRE(t.steps[0].coreWait != client::kNoCoreWait);  // A.a follows B.x on CPU0
  CHECK(t.waits[t.steps[0].coreWait].word == &dep.view.instance(dep.instance("B.x")).done);
  CHECK(t.steps[1].coreWait == client::kNoCoreWait);
  bool waitsForX = false;
  for (std::uint32_t k = t.steps[1].firstWait; k != t.steps[1].endWait; ++k)
    waitsForX = waitsForX || t.waits[k].word == &dep.view.instance(dep.instance("B.x")).done;
  CHECK(waitsForX);
}

TEST_CASE("STM's C API and its manager API give one STM code per error code", "[client][stm]") {
  // One table (stm_errors.hpp, kStmErrorTable) for both; the manager's own switch once mapped
  // kValidation to STM_ERROR_GENERIC where the C API said STM_ERROR_BAD_VALUE.
  using client::stmClientError;
  using client::stmManagerError;
  for (const client::StmErrorEntry& row : client::kStmErrorTable) {
    INFO("ErrorCode " << errorCodeName(row.code));
    CHECK(stmClientError(row.code) == row.stm);
    CHECK(stmManagerError(row.code) == row.stm);
  }
  CHECK(stmManagerError(ErrorCode::kValidation) == STM_ERROR_BAD_VALUE);
  CHECK(stmClientError(ErrorCode::kValidation) == STM_ERROR_BAD_VALUE);
  CHECK(stmClientError(ErrorCode::kAlreadyExists) == STM_ERROR_BAD_VALUE);
  CHECK(stmClientError(ErrorCode::kBadParameter) == STM_ERROR_BAD_PARAMETER);
  CHECK(stmClientError(ErrorCode::kNotFound) == STM_ERROR_NOT_FOUND);
  CHECK(stmClientError(ErrorCode::kInvalidState) == STM_ERROR_INVALID_STATE);
  CHECK(stmClientError(ErrorCode::kTimeout) == STM_ERROR_TIMEOUT);
  CHECK(stmClientError(ErrorCode::kPeerDied) == STM_ERROR_GENERIC);
}
