// The master's roles in one process (the in-process tier): the releaser, the stall watch, the
// client monitor, the log drain and the segment owner, each on a schedule's segment in a heap
// buffer (HeapSegment; the segment owner on a real /dev/shm segment), this test playing the
// clients' part (completions, ring records, slots). No master process, no client process; a
// forked child only where a pid is the point. Each case runs in milliseconds.
#include <sys/types.h>
#include <sys/wait.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "heap_segment.hpp"
#include "roles/client_monitor.hpp"
#include "roles/log_drain.hpp"
#include "roles/releaser.hpp"
#include "roles/run_control.hpp"
#include "roles/segment_owner.hpp"
#include "roles/stall_watch.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {
namespace {

using shm::SegmentState;
using shm::StopReason;
using test::HeapSegment;

constexpr std::int64_t kMs = 1'000'000;

// How long a case waits for a release thread to get somewhere before it fails (far beyond the
// milliseconds it takes, for a loaded machine and a sanitized build).
std::chrono::milliseconds patience() {
  return std::chrono::milliseconds(static_cast<std::int64_t>(2000 * test::timeScale()));
}

// Polls `condition` until it holds (true) or patience() runs out (false).
template <typename Condition>
bool eventually(Condition&& condition) {
  const auto deadline = std::chrono::steady_clock::now() + patience();
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A.a on CPU0, then B.b on CPU1 after it: one wait across clients, a 4 ms period.
Schedule chain() {
  return test::makeSchedule({{"A", "a", "CPU0", 1 * kMs, {}, 0, {}}, {"B", "b", "CPU1", 1 * kMs, {"A.a"}, 0, {}}},
                            4 * kMs);
}

// chain() with its instance numbers reversed: instance 0 is B.b, which waits for instance 1, A.a.
// (A compiled schedule numbers instances by start time; the plan and the roles do not rely on it.)
// The release threads wait for the instances in number order, so they wait for B.b first.
Schedule chainBackwards() {
  Schedule s = chain();
  const auto n = static_cast<std::uint32_t>(s.instances.size());
  auto flip = [n](InstanceId i) { return InstanceId{n - 1 - index(i)}; };
  IdVector<InstanceId, InstanceInfo> reversed(s.instances.rbegin(), s.instances.rend());
  for (InstanceInfo& inst : reversed)
    for (InstanceId& d : inst.dependencies) d = flip(d);
  s.instances = std::move(reversed);
  for (TimelineInfo& t : s.timelines)
    for (InstanceId& i : t.instances) i = flip(i);
  return s;
}

// Marks instance `i` done with `iteration` as its worker does (the done sequence, waking waiters).
void markDone(const HeapSegment& seg, InstanceId i, std::uint64_t iteration) {
  shm::InstanceSlot& slot = seg.view.instance(i);
  ipc::publishSequence(slot.done, slot.waiters, static_cast<std::uint32_t>(iteration + 1));
}

// Plays every client: runs each released iteration at once (marks all its instances done) until
// stopped. For the releaser's cases that are about its iterations, not its waits.
class InstantClients {
 public:
  explicit InstantClients(const HeapSegment& seg) : seg_(seg), thread_([this] { loop(); }) {}
  InstantClients(const InstantClients&) = delete;
  InstantClients& operator=(const InstantClients&) = delete;
  ~InstantClients() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void loop() {
    std::uint64_t next = 0;  // the next iteration to run
    const std::uint32_t frames = std::max(1u, seg_.schedule.epochs[EpochId{0}].frames);
    while (!stop_.load()) {
      const std::uint32_t released = seg_.view.epoch(EpochId{0}).released.load();
      if (released >= (next + 1) * frames) {
        for (InstanceId i : seg_.plan.hyperepochs[HyperepochId{0}].instances) markDone(seg_, i, next);
        ++next;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
  }
  const HeapSegment& seg_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// Releaser

TEST_CASE("the releaser releases frame 0 at the run's start, waits for every instance and then goes on",
          "[master][roles][releaser]") {
  HeapSegment seg(chain());
  RunControl control;
  Releaser releaser(seg.view, seg.schedule, seg.plan, false, control);
  const InstanceId a = seg.instance("A.a");
  const InstanceId b = seg.instance("B.b");
  shm::EpochSlot& epoch = seg.view.epoch(EpochId{0});
  shm::HyperepochSlot& slot = seg.view.hyperepoch(HyperepochId{0});
  CHECK(epoch.released.load() == 0);
  CHECK_FALSE(releaser.longestStall());
  const std::int64_t start = ipc::monotonicNs();
  releaser.start(start);
  REQUIRE(eventually([&] { return epoch.released.load() >= 1; }));
  CHECK(epoch.released.load() == 1);  // iteration 0, frame 0: and nothing more before its instances end
  CHECK(epoch.releaseNs.load() == start);

  // At the period's end nothing is done: the release thread waits for A.a, the first instance.
  REQUIRE(eventually([&] { return releaser.longestStall().has_value(); }));
  std::optional<Stall> stall = releaser.longestStall();
  REQUIRE(stall);
  CHECK(stall->hyperepoch == HyperepochId{0});
  CHECK(stall->instance == a);
  CHECK(stall->target == 1);
  CHECK(stall->sinceNs >= start + seg.schedule.hyperepochs[HyperepochId{0}].periodNs);
  CHECK(epoch.released.load() == 1);
  CHECK(slot.completed.load() == 0);
  CHECK(releaser.iterationsCompleted() == 0);

  // A.a ends: it waits for B.b now.
  markDone(seg, a, 0);
  REQUIRE(eventually([&] {
    const auto s = releaser.longestStall();
    return s && s->instance == b;
  }));
  CHECK(epoch.released.load() == 1);

  // B.b ends: iteration 0 is complete, iteration 1 is released (late: a skip record).
  markDone(seg, b, 0);
  REQUIRE(eventually([&] { return slot.completed.load() >= 1; }));
  CHECK(slot.completed.load() == 1);
  CHECK(releaser.iterationsCompleted() == 1);
  REQUIRE(eventually([&] { return epoch.released.load() >= 2; }));
  CHECK(epoch.released.load() == 2);
  // Iteration 0 was judged at its period's end: late (so is iteration 1 if its period passed).
  const IterationHealth health = releaser.health(HyperepochId{0});
  REQUIRE(health.iterations >= 1);
  CHECK(((health.lateHistory >> (health.iterations - 1)) & 1) == 1);
  CHECK(health.cleanStreak == 0);

  // What it released and skipped is in its ring: release 0, the skip at iteration 1, release 1.
  std::vector<EventRecord> events;
  releaser.eventRings()[HyperepochId{0}].popAll(events);
  REQUIRE(events.size() >= 3);
  CHECK(events[0].kind == static_cast<std::uint16_t>(EventKind::kRelease));
  CHECK(events[0].iteration == 0);
  CHECK(events[1].kind == static_cast<std::uint16_t>(EventKind::kSkipped));
  CHECK(events[1].iteration == 1);
  CHECK(events[2].kind == static_cast<std::uint16_t>(EventKind::kRelease));
  CHECK(events[2].iteration == 1);

  control.abort();
  releaser.join();
  CHECK(releaser.finished());
}

TEST_CASE("the releaser stops at stopAt: the iterations before it run, none of it is released",
          "[master][roles][releaser]") {
  HeapSegment seg(chain(), SegmentState::kRunning, 3);
  RunControl control;
  Releaser releaser(seg.view, seg.schedule, seg.plan, false, control);
  InstantClients clients(seg);
  releaser.start(ipc::monotonicNs());
  REQUIRE(eventually([&] { return releaser.finished(); }));
  releaser.join();
  CHECK(seg.view.hyperepoch(HyperepochId{0}).completed.load() == 3);
  CHECK(seg.view.hyperepoch(HyperepochId{0}).stopAt.load() == 3);
  CHECK(seg.view.epoch(EpochId{0}).released.load() == 3);  // iterations 0, 1 and 2
  CHECK_FALSE(releaser.longestStall());
  CHECK_FALSE(control.stopRequested());
}

TEST_CASE("a stop request ends the releaser at the next iteration boundary, after that iteration ends",
          "[master][roles][releaser]") {
  HeapSegment seg(chain());
  RunControl control;
  Releaser releaser(seg.view, seg.schedule, seg.plan, false, control);
  InstantClients clients(seg);
  releaser.start(ipc::monotonicNs());
  shm::HyperepochSlot& slot = seg.view.hyperepoch(HyperepochId{0});
  REQUIRE(eventually([&] { return slot.completed.load() >= 2; }));
  CHECK_FALSE(releaser.finished());
  control.requestStop(StopReason::kSignal, kNone);
  CHECK(control.stopReason() == StopReason::kSignal);
  REQUIRE(eventually([&] { return releaser.finished(); }));
  releaser.join();
  // It stopped at a boundary: every iteration it released completed, stopAt is the first it did
  // not release.
  const std::uint64_t stopAt = slot.stopAt.load();
  CHECK(stopAt >= 2);
  CHECK(stopAt != std::numeric_limits<std::uint64_t>::max());
  CHECK(slot.completed.load() == stopAt);
  CHECK(seg.view.epoch(EpochId{0}).released.load() == stopAt);
  for (InstanceId i : seg.plan.hyperepochs[HyperepochId{0}].instances)
    CHECK(shm::sequenceReached(seg.view.instance(i).done.load(), static_cast<std::uint32_t>(stopAt)));
}

TEST_CASE("an abort ends the releaser while it waits for an instance", "[master][roles][releaser]") {
  HeapSegment seg(chain());
  RunControl control;
  Releaser releaser(seg.view, seg.schedule, seg.plan, false, control);
  releaser.start(ipc::monotonicNs());
  REQUIRE(eventually([&] { return releaser.longestStall().has_value(); }));
  control.abort();
  REQUIRE(eventually([&] { return releaser.finished(); }));
  releaser.join();
  CHECK(seg.view.hyperepoch(HyperepochId{0}).completed.load() == 0);
  CHECK(seg.view.epoch(EpochId{0}).released.load() == 1);
}

// ---------------------------------------------------------------------------------------------
// StallWatch

// A releaser on `seg` started and left waiting for the instances of iteration 0 (nobody runs them).
struct StalledRun {
  HeapSegment& seg;
  RunControl control;
  Releaser releaser;
  ClientMonitor monitor;
  Stall stall;

  explicit StalledRun(HeapSegment& s)
      : seg(s), releaser(s.view, s.schedule, s.plan, false, control), monitor(s.view, s.schedule) {}
  // Starts the release thread and waits until it waits for an instance.
  void waitForStall() {
    releaser.start(ipc::monotonicNs());
    REQUIRE(eventually([&] { return releaser.longestStall().has_value(); }));
    stall = *releaser.longestStall();
  }
  ~StalledRun() {
    control.abort();
    releaser.join();
  }
};

TEST_CASE("the stall watch names the client of the blocking instance beyond the budget, not within it",
          "[master][roles][stall]") {
  HeapSegment seg(chain());
  StalledRun run(seg);
  constexpr std::int64_t kTimeoutUs = 5000;  // -t 5000: 5 ms
  const StallWatch watch(seg.schedule, seg.plan, seg.view, run.releaser, run.monitor, kTimeoutUs);
  CHECK_FALSE(watch.stuck(ipc::monotonicNs()));  // nothing waits yet
  CHECK_FALSE(watch.blocker());
  ClientId named = kNone;
  CHECK(watch.graceText(named).empty());
  CHECK(named == kNone);

  run.waitForStall();
  CHECK(run.stall.instance == seg.instance("A.a"));
  CHECK_FALSE(watch.stuck(run.stall.sinceNs + kTimeoutUs * 1000));  // at the budget: not yet
  const std::optional<RunEnd> end = watch.stuck(run.stall.sinceNs + kTimeoutUs * 1000 + 1);
  REQUIRE(end);
  CHECK(end->state == SegmentState::kAborted);
  CHECK(end->reason == StopReason::kStuck);
  CHECK(end->client == seg.client("A"));
  CHECK_THAT(end->message,
             Catch::Contains("client 'A'") && Catch::Contains("runnable 'A.a'") && Catch::Contains("-t 5000"));
  const std::optional<Blocker> b = watch.blocker();
  REQUIRE(b);
  CHECK(b->client == seg.client("A"));
  CHECK(b->runnable == seg.runnable("A.a"));
  CHECK_FALSE(b->remote);
  const std::string grace = watch.graceText(named);
  CHECK(named == seg.client("A"));
  CHECK_THAT(grace, Catch::StartsWith("; client 'A' did not finish runnable 'A.a' within"));

  // Without -t (and no Monitor budget) it never calls a client stuck.
  const StallWatch unlimited(seg.schedule, seg.plan, seg.view, run.releaser, run.monitor, -1);
  CHECK_FALSE(unlimited.stuck(run.stall.sinceNs + 1000 * kMs));
  // Once A.a is done the release thread waits for B.b, and the watch follows it to B.
  markDone(seg, seg.instance("A.a"), 0);
  REQUIRE(eventually([&] {
    const auto s = run.releaser.longestStall();
    return s && s->instance == seg.instance("B.b");
  }));
  const Stall next = *run.releaser.longestStall();
  CHECK_FALSE(watch.stuck(next.sinceNs + kTimeoutUs * 1000));
  const std::optional<RunEnd> endB = watch.stuck(next.sinceNs + kTimeoutUs * 1000 + 1);
  REQUIRE(endB);
  CHECK(endB->client == seg.client("B"));
}

TEST_CASE("the stall watch skips an instance whose own waits are unmet and blames what it waits for",
          "[master][roles][stall]") {
  HeapSegment seg(chainBackwards());
  REQUIRE(seg.instance("B.b") == InstanceId{0});
  StalledRun run(seg);
  const StallWatch watch(seg.schedule, seg.plan, seg.view, run.releaser, run.monitor, 1000);
  run.waitForStall();
  CHECK(run.stall.instance == seg.instance("B.b"));  // the release thread waits for B.b ...
  const std::optional<Blocker> b = watch.blocker();
  REQUIRE(b);
  CHECK(b->runnable == seg.runnable("A.a"));  // ... which waits for A.a: A holds it up
  CHECK(b->client == seg.client("A"));
  const std::optional<RunEnd> end = watch.stuck(run.stall.sinceNs + 2 * kMs);
  REQUIRE(end);
  CHECK(end->client == seg.client("A"));
  CHECK_THAT(end->message, Catch::Contains("runnable 'A.a'"));
  // A.a ends: B.b is ready, and it is B's turn.
  markDone(seg, seg.instance("A.a"), 0);
  const std::optional<Blocker> next = watch.blocker();
  REQUIRE(next);
  CHECK(next->client == seg.client("B"));
  CHECK(next->runnable == seg.runnable("B.b"));
}

TEST_CASE("the stall watch blames another SoC's client only after twice the budget", "[master][roles][stall]") {
  Schedule s = chainBackwards();
  s.socs = {{"SocA"}, {"SocB"}};
  s.clients[ClientId{0}].soc = 0;  // A
  s.clients[ClientId{1}].soc = 1;  // B: this master's SoC
  HeapSegment seg(std::move(s));
  StalledRun run(seg);
  run.monitor.setRemote(seg.client("A"));
  CHECK(run.monitor.remote(seg.client("A")));
  CHECK_FALSE(run.monitor.remote(seg.client("B")));
  constexpr std::int64_t kTimeoutUs = 1000;
  const StallWatch watch(seg.schedule, seg.plan, seg.view, run.releaser, run.monitor, kTimeoutUs);
  run.waitForStall();
  const std::optional<Blocker> b = watch.blocker();
  REQUIRE(b);
  CHECK(b->client == seg.client("A"));
  CHECK(b->runnable == seg.runnable("A.a"));
  CHECK(b->remote);
  const std::int64_t budget = kTimeoutUs * 1000;
  CHECK_FALSE(watch.stuck(run.stall.sinceNs + budget + 1));  // its own master names it first
  CHECK_FALSE(watch.stuck(run.stall.sinceNs + 2 * budget));
  const std::optional<RunEnd> end = watch.stuck(run.stall.sinceNs + 2 * budget + 1);
  REQUIRE(end);
  CHECK(end->reason == StopReason::kStuck);
  CHECK(end->client == seg.client("A"));
  CHECK_THAT(end->message, Catch::Contains("client 'A' (on SoC 'SocA')") && Catch::Contains("did not arrive") &&
                               Catch::Contains("2 times -t 1000"));
  ClientId named = kNone;
  CHECK_THAT(watch.graceText(named), Catch::EndsWith("(on SoC 'SocA')"));
  CHECK(named == seg.client("A"));
}

TEST_CASE("the stall watch takes the hyperepoch's Monitor budget before -t", "[master][roles][stall]") {
  Schedule s = chain();
  s.hyperepochs[HyperepochId{0}].monitorNs = 20 * kMs;
  HeapSegment seg(std::move(s));
  StalledRun run(seg);
  const StallWatch watch(seg.schedule, seg.plan, seg.view, run.releaser, run.monitor, 1000);
  run.waitForStall();
  CHECK_FALSE(watch.stuck(run.stall.sinceNs + 10 * kMs));  // beyond -t, within the Monitor budget
  const std::optional<RunEnd> end = watch.stuck(run.stall.sinceNs + 20 * kMs + 1);
  REQUIRE(end);
  CHECK_THAT(end->message, Catch::Contains("the Monitor budget of hyperepoch 'Main'"));
}

// ---------------------------------------------------------------------------------------------
// ClientMonitor

// A child process that lives until the test closes its pipe (then exits 0).
struct Child {
  test::ChildProcesses owner;
  pid_t pid = -1;
  int hold = -1;  // write end: closing it ends the child

  Child() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[1]);
      char c = 0;
      (void)!::read(fds[0], &c, 1);
      ::_exit(0);
    }
    ::close(fds[0]);
    hold = fds[1];
    owner.adopt(pid);
  }
  ~Child() {
    if (hold >= 0) ::close(hold);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // Ends the child and reaps it.
  int end() {
    ::close(hold);
    hold = -1;
    return test::waitFor(pid, 5000);
  }
};

// Claims client c's slot for `pid` in `state`, as libtactus does (pid and start time, then the state).
void claim(const HeapSegment& seg, ClientId c, pid_t pid, shm::ClientState state) {
  shm::ClientSlot& slot = seg.view.client(c);
  slot.startTime.store(ipc::processStartTime(pid));
  slot.pid.store(static_cast<std::uint32_t>(pid));
  slot.state.store(static_cast<std::uint32_t>(state));
}

TEST_CASE("the client monitor reports a client whose process died after it entered", "[master][roles][monitor]") {
  HeapSegment seg(chain());
  ClientMonitor monitor(seg.view, seg.schedule);
  CHECK_FALSE(monitor.check(true));  // nobody came yet: all is well
  CHECK_FALSE(monitor.allEntered());
  Child child;
  claim(seg, seg.client("A"), child.pid, shm::ClientState::kEntered);
  claim(seg, seg.client("B"), ::getpid(), shm::ClientState::kEntered);
  CHECK_FALSE(monitor.check(true));
  CHECK(monitor.allEntered());
  CHECK(monitor.pid(seg.client("A")) == static_cast<std::uint32_t>(child.pid));
  CHECK_FALSE(monitor.check(false));
  CHECK(child.end() == 0);
  const std::optional<RunEnd> end = monitor.check(false);
  REQUIRE(end);
  CHECK(end->state == SegmentState::kAborted);
  CHECK(end->reason == StopReason::kPeerDied);
  CHECK(end->client == seg.client("A"));
  CHECK(end->message == "client 'A' (pid " + std::to_string(child.pid) + ") died during the run");
  // Excused (a switching policy goes on without it), it is never reported again.
  monitor.excuse(seg.client("A"));
  CHECK_FALSE(monitor.check(false));
}

TEST_CASE("the client monitor reports a slot claimed by a pid that is no process", "[master][roles][monitor]") {
  HeapSegment seg(chain());
  ClientMonitor monitor(seg.view, seg.schedule);
  // A pid that was a process a moment ago and is reaped now (nothing else took it so soon).
  const pid_t gone = ::fork();
  REQUIRE(gone >= 0);
  if (gone == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(gone, &status, 0) == gone);
  REQUIRE_FALSE(ipc::processAlive(gone));
  shm::ClientSlot& slot = seg.view.client(seg.client("B"));
  slot.pid.store(static_cast<std::uint32_t>(gone));
  slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kAttached));
  const std::optional<RunEnd> end = monitor.check(true);
  REQUIRE(end);
  CHECK(end->reason == StopReason::kPeerDied);
  CHECK(end->client == seg.client("B"));
  CHECK_THAT(end->message, Catch::Contains("client 'B'") && Catch::EndsWith("died before the run started"));
}

TEST_CASE("the client monitor reads a client's start time only once its state publishes it",
          "[master][roles][monitor]") {
  HeapSegment seg(chain());
  Child child;
  shm::ClientSlot& slot = seg.view.client(seg.client("A"));
  const std::uint64_t own = ipc::processStartTime(child.pid);
  REQUIRE(own != 0);
  // Claimed, not yet attached, over a start time written there before (the fault campaign's
  // "damage before attach"): the live client is not taken for another process.
  {
    ClientMonitor monitor(seg.view, seg.schedule);
    slot.startTime.store(own + 12345);
    slot.pid.store(static_cast<std::uint32_t>(child.pid));
    CHECK_FALSE(monitor.check(true));
    slot.startTime.store(own);  // the client writes its own, then its state
    slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kAttached));
    CHECK_FALSE(monitor.check(true));
    CHECK_FALSE(monitor.check(true));
  }
  // Attached with a start time that is not the process's own: words written over, named.
  {
    ClientMonitor monitor(seg.view, seg.schedule);
    slot.pid.store(0);
    slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kAbsent));
    CHECK_FALSE(monitor.check(true));
    slot.pid.store(static_cast<std::uint32_t>(child.pid));
    CHECK_FALSE(monitor.check(true));
    slot.startTime.store(own + 1);
    slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kAttached));
    const std::optional<RunEnd> end = monitor.check(true);
    REQUIRE(end);
    CHECK(end->reason == StopReason::kDamaged);
    CHECK_THAT(end->message, Catch::Contains("field 'startTime' holds " + std::to_string(own + 1)));
  }
  CHECK(child.end() == 0);
}

TEST_CASE("the client monitor reports slots written out of range, refusals and early exits",
          "[master][roles][monitor]") {
  HeapSegment seg(chain());
  const ClientId a = seg.client("A");
  shm::ClientSlot& slot = seg.view.client(a);
  SECTION("a state out of range") {
    ClientMonitor monitor(seg.view, seg.schedule);
    claim(seg, a, ::getpid(), shm::ClientState::kEntered);
    slot.state.store(99);
    const std::optional<RunEnd> end = monitor.check(false);
    REQUIRE(end);
    CHECK(end->reason == StopReason::kDamaged);
    CHECK_THAT(end->message, Catch::Contains("field 'state' holds 99"));
  }
  SECTION("a pid changed after attach") {
    ClientMonitor monitor(seg.view, seg.schedule);
    claim(seg, a, ::getpid(), shm::ClientState::kEntered);
    CHECK_FALSE(monitor.check(false));
    slot.pid.store(1);
    const std::optional<RunEnd> end = monitor.check(false);
    REQUIRE(end);
    CHECK(end->reason == StopReason::kDamaged);
    CHECK_THAT(end->message, Catch::Contains("field 'pid' holds 1"));
  }
  SECTION("a refusal") {
    ClientMonitor monitor(seg.view, seg.schedule);
    claim(seg, a, ::getpid(), shm::ClientState::kAttached);
    slot.refusal.store(static_cast<std::uint32_t>(shm::Refusal::kUnregistered));
    slot.refusalDetail.store(index(seg.runnable("A.a")));
    slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kRefused));
    const std::optional<RunEnd> end = monitor.check(true);
    REQUIRE(end);
    CHECK(end->reason == StopReason::kError);
    CHECK_THAT(end->message,
               Catch::StartsWith("client 'A' refused to run: scheduled runnable 'A.a' was not registered"));
  }
  SECTION("an exit before the run") {
    ClientMonitor monitor(seg.view, seg.schedule);
    claim(seg, a, ::getpid(), shm::ClientState::kExited);
    const std::optional<RunEnd> end = monitor.check(true);
    REQUIRE(end);
    CHECK(end->message == "client 'A' detached before the run started");
  }
}

TEST_CASE("the client monitor finds the first exit request and who is gone", "[master][roles][monitor]") {
  HeapSegment seg(chain());
  ClientMonitor monitor(seg.view, seg.schedule);
  const ClientId a = seg.client("A");
  const ClientId b = seg.client("B");
  CHECK(monitor.exitRequester() == kNone);
  seg.view.client(b).exitRequested.store(1);
  CHECK(monitor.exitRequester() == b);
  CHECK(monitor.exitText(b) == "client 'B' requested exit");
  seg.view.client(b).exitSignal.store(SIGTERM);
  CHECK_THAT(monitor.exitText(b), Catch::StartsWith("client 'B' got SIGTERM and ended the run for every client"));
  seg.view.client(a).exitRequested.store(1);
  CHECK(monitor.exitRequester() == a);  // the first client asking, by number

  CHECK(monitor.allGone());  // nobody attached
  Child child;
  claim(seg, a, child.pid, shm::ClientState::kEntered);
  CHECK_FALSE(monitor.allGone());     // A is in the scheduler and not watched yet
  CHECK_FALSE(monitor.check(false));  // now it is
  claim(seg, b, ::getpid(), shm::ClientState::kExited);
  CHECK_FALSE(monitor.allGone());  // A is in the scheduler and alive
  CHECK(monitor.allGone(a));       // but for A, everyone left
  CHECK(child.end() == 0);
  CHECK(monitor.allGone());  // A's process is gone
  CHECK(monitor.name(ClientId{7}) == "?");
}

// ---------------------------------------------------------------------------------------------
// LogDrain

// Pushes `r` into worker w's ring as a worker does.
void pushRecord(const HeapSegment& seg, std::uint32_t w, const EventRecord& r) {
  shm::WorkerSlot& slot = seg.view.worker(w);
  const std::uint64_t head = slot.head.load();
  seg.view.ring(w)[head & (seg.view.ringCapacity() - 1)] = r;
  slot.head.store(head + 1, std::memory_order_release);
}

EventRecord runRecord(const HeapSegment& seg, const std::string& runnable, std::uint32_t iteration,
                      std::int64_t startNs) {
  return EventRecord{static_cast<std::uint16_t>(EventKind::kRun),
                     0,
                     index(seg.instance(runnable)),
                     iteration,
                     index(seg.runnable(runnable)),
                     startNs,
                     startNs + 1000};
}

TEST_CASE("the log drain moves the clients' and the release threads' records into the log and counts the lost",
          "[master][roles][drain]") {
  HeapSegment seg(chain());
  const std::string dir = test::scratchDir("roles_drain");
  const std::string path = dir + "/drain.tlog";
  EventLogWriter log;
  REQUIRE(log.open(path, seg.schedule.identifier, 0x1234));
  LogDrain drain(seg.view, seg.schedule, seg.plan, log);
  std::vector<MasterEventRing> masterRings(1);

  const std::uint32_t wa = seg.worker("A", "CPU0");
  const std::uint32_t wb = seg.worker("B", "CPU1");
  pushRecord(seg, wa, runRecord(seg, "A.a", 0, 100));
  pushRecord(seg, wb, runRecord(seg, "B.b", 0, 2000));
  EventRecord bogus = runRecord(seg, "A.a", 1, 3000);
  bogus.instance = 1000;  // no instance of the schedule: left out of the log
  pushRecord(seg, wa, bogus);
  seg.view.worker(wb).dropped.store(3);  // B's worker lost 3 records to a full ring
  masterRings[0].push({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, 0, 0, 50, 60});

  CHECK_FALSE(drain.drain(masterRings));
  CHECK(drain.recordsDrained() == 2);
  CHECK(drain.droppedTotal() == 3);
  CHECK(seg.view.worker(wa).tail.load() == 2);  // the rings are free again
  CHECK(seg.view.worker(wb).tail.load() == 1);

  // A second drain takes only what came since; a full master ring counts its losses too.
  pushRecord(seg, wa, runRecord(seg, "A.a", 1, 5000));
  for (std::uint32_t k = 0; k <= MasterEventRing::kCapacity; ++k)
    masterRings[0].push({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, k + 1, 0, 70, 80});
  CHECK(masterRings[0].dropped() == 1);
  CHECK_FALSE(drain.drain(masterRings));
  CHECK(drain.recordsDrained() == 3);
  CHECK(drain.droppedTotal() == 4);
  REQUIRE(log.close());

  auto read = readEventLog(path);
  REQUIRE(read);
  const std::vector<EventRecord>& records = read->records;
  REQUIRE(records.size() == 5 + MasterEventRing::kCapacity);
  CHECK(read->header.scheduleIdentifier == seg.schedule.identifier);
  // First drain: the workers' rings in worker order (A's run, B's run, B's drop count), then the
  // release thread's ring.
  CHECK(records[0].kind == static_cast<std::uint16_t>(EventKind::kRun));
  CHECK(records[0].instance == index(seg.instance("A.a")));
  CHECK(records[0].startNs == 100);
  CHECK(records[1].kind == static_cast<std::uint16_t>(EventKind::kRun));
  CHECK(records[1].instance == index(seg.instance("B.b")));
  CHECK(records[2].kind == static_cast<std::uint16_t>(EventKind::kDropped));
  CHECK(records[2].instance == index(seg.client("B")));
  CHECK(records[2].iteration == 3);
  CHECK(records[2].aux == wb);
  CHECK(records[3].kind == static_cast<std::uint16_t>(EventKind::kRelease));
  CHECK(records[3].startNs == 50);
  // Second drain: A's iteration 1, then the master ring's records that fitted.
  CHECK(records[4].kind == static_cast<std::uint16_t>(EventKind::kRun));
  CHECK(records[4].iteration == 1);
  CHECK(records[5].kind == static_cast<std::uint16_t>(EventKind::kRelease));
  CHECK(records[5].iteration == 1);
  CHECK(records.back().iteration == MasterEventRing::kCapacity);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the log drain ends the run on a worker ring head written out of range", "[master][roles][drain]") {
  HeapSegment seg(chain());
  EventLogWriter log;  // none open: the drain only counts
  LogDrain drain(seg.view, seg.schedule, seg.plan, log);
  std::vector<MasterEventRing> none;
  const std::uint32_t wb = seg.worker("B", "CPU1");
  pushRecord(seg, wb, runRecord(seg, "B.b", 0, 10));
  CHECK_FALSE(drain.drain(none));
  CHECK(drain.recordsDrained() == 1);
  seg.view.worker(wb).head.store(seg.view.ringCapacity() + 2);  // more than a ring ahead of the tail
  const std::optional<RunEnd> end = drain.drain(none);
  REQUIRE(end);
  CHECK(end->reason == StopReason::kDamaged);
  CHECK(end->client == seg.client("B"));
  CHECK_THAT(end->message, Catch::Contains("client 'B' worker ring") && Catch::Contains("field 'head'"));
}

// ---------------------------------------------------------------------------------------------
// SegmentOwner

TEST_CASE("the segment owner creates the instance's segment, refuses a second owner and finds damage",
          "[master][roles][owner]") {
  const Schedule schedule = chain();
  auto plan = makeRunPlan(schedule);
  REQUIRE(plan);
  const std::string instance = test::uniqueInstance("roles");
  const std::string text = "schedule text";
  std::ostringstream err;
  {
    SegmentOwner owner(instance, err);
    REQUIRE(owner.create(shm::layoutCounts(schedule, *plan, text.size())));
    CHECK(test::segmentPresent(instance));
    owner.describe(0, 0xabcd, schedule.identifier, text);
    owner.publish();
    const shm::SegmentView& view = owner.view();
    CHECK(view.header().state.load() == static_cast<std::uint32_t>(SegmentState::kPublished));
    CHECK(view.header().masterPid.load() == static_cast<std::uint32_t>(::getpid()));
    CHECK(view.header().scheduleContentHash == 0xabcd);
    CHECK(view.scheduleText() == text);
    CHECK_FALSE(owner.checkDamage());

    // A second master for the instance: refused while this one lives.
    std::ostringstream err2;
    SegmentOwner second(instance, err2);
    const auto taken = second.create(shm::layoutCounts(schedule, *plan, text.size()));
    REQUIRE_FALSE(taken);
    CHECK(taken.error().code == ErrorCode::kAlreadyExists);
    CHECK_THAT(taken.error().message, Catch::Contains("already has a running master"));

    // A field only the master writes, written over: damage, named.
    view.header().scheduleIdentifier = static_cast<std::uint16_t>(schedule.identifier + 1);
    std::optional<RunEnd> end = owner.checkDamage();
    REQUIRE(end);
    CHECK(end->state == SegmentState::kAborted);
    CHECK(end->reason == StopReason::kDamaged);
    CHECK_THAT(end->message, Catch::Contains("header field 'scheduleIdentifier'"));
    view.header().scheduleIdentifier = schedule.identifier;
    CHECK_FALSE(owner.checkDamage());
    view.header().state.store(17);  // no state at all
    end = owner.checkDamage();
    REQUIRE(end);
    CHECK_THAT(end->message, Catch::Contains("header field 'state'"));
    view.header().state.store(static_cast<std::uint32_t>(SegmentState::kPublished));
    view.header().instanceCount = 1000;  // the geometry
    end = owner.checkDamage();
    REQUIRE(end);
    CHECK_THAT(end->message, Catch::Contains("instanceCount"));
    view.header().instanceCount = static_cast<std::uint32_t>(schedule.instances.size());
    CHECK_FALSE(owner.checkDamage());

    // The run's end: the name goes first, then the end is published.
    owner.startRun(ipc::monotonicNs());
    CHECK(view.header().state.load() == static_cast<std::uint32_t>(SegmentState::kRunning));
    owner.publishEnd(RunEnd{SegmentState::kFinished, StopReason::kFrameLimit, kNone, "done"});
    CHECK_FALSE(test::segmentPresent(instance));
    CHECK(view.header().state.load() == static_cast<std::uint32_t>(SegmentState::kFinished));
    CHECK(view.header().stopReason.load() == static_cast<std::uint32_t>(StopReason::kFrameLimit));
    CHECK(view.message() == "done");
  }
  CHECK_FALSE(test::segmentPresent(instance));
  CHECK(err.str().empty());
}

TEST_CASE("the segment owner replaces a stale segment and removes its name when it goes", "[master][roles][owner]") {
  const Schedule schedule = chain();
  auto plan = makeRunPlan(schedule);
  REQUIRE(plan);
  const std::string instance = test::uniqueInstance("roles");
  // A segment left by a master that is gone (a reaped child's pid).
  const pid_t gone = ::fork();
  REQUIRE(gone >= 0);
  if (gone == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(gone, &status, 0) == gone);
  {
    auto stale = ipc::Segment::create(instance, 4096);
    REQUIRE(stale);
    const shm::SegmentView v(stale->bytes());
    v.header().masterPid.store(static_cast<std::uint32_t>(gone));
    v.header().magic.store(shm::kMagic);
  }
  REQUIRE(test::segmentPresent(instance));
  std::ostringstream err;
  {
    SegmentOwner owner(instance, err);
    REQUIRE(owner.create(shm::layoutCounts(schedule, *plan, 0)));
    CHECK_THAT(err.str(), Catch::Contains("replacing stale segment") &&
                              Catch::Contains("left by master pid " + std::to_string(gone) + ", which is gone"));
    CHECK(test::segmentPresent(instance));
  }
  CHECK_FALSE(test::segmentPresent(instance));  // the destructor removed it
}

}  // namespace
}  // namespace tactus::master
