// The master's releaser (see releaser.hpp).
#include "roles/releaser.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <thread>

#include "deploy/notify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus_trace.hpp"

namespace tactus::master {

namespace {

// The release threads sleep with clock_nanosleep(TIMER_ABSTIME) to this long before a release,
// then spin to it. TACTUS_RELEASE_SPIN_NS overrides it (the frame-release benchmark matches its
// bare loop to it).
std::int64_t releaseSpinNs() {
  static const std::int64_t spin = ipc::envDurationNs("TACTUS_RELEASE_SPIN_NS", 50'000);
  return spin;
}

}  // namespace

Releaser::Releaser(const shm::SegmentView& view, const Schedule& schedule, const RunPlan& plan, bool freeRunning,
                   RunControl& control, bool pinToPlan)
    : view_(view),
      schedule_(schedule),
      plan_(plan),
      freeRunning_(freeRunning),
      control_(control),
      rings_(plan.hyperepochs.size()),
      tracks_(std::make_unique<Track[]>(plan.hyperepochs.size())),
      releaseCore_(plan.hyperepochs.size(), kNone),
      hyperepochThreads_(plan.hyperepochs.size()) {
  for (HyperepochId he : plan_.hyperepochs.ids()) {
    if (!plan_.hyperepochs[he].instances.empty()) active_.push_back(he);
  }
  const char* pin = std::getenv("TACTUS_RELEASE_PIN");
  if (!pinToPlan || (pin != nullptr && std::string_view(pin) == "0")) return;
  for (const HyperepochId he : active_) {
    std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
    for (const InstanceId i : plan_.hyperepochs[he].instances) {
      const InstanceInfo& inst = schedule_.instances[i];
      if (inst.resources.empty() || inst.startNs >= earliest) continue;
      const ResourceInfo& r = schedule_.resources[inst.resources.front()];
      if (r.kind != ResourceKind::kCpu || r.core == kNone) continue;
      earliest = inst.startNs;
      releaseCore_[he] = r.core;
    }
  }
}

// Pins the release thread, then names it `release-<hyperepoch>` (top -H, /proc/PID/task/TID/comm):
// the name appears once the thread is where it will run (tests read the affinity by the name).
// Best effort, as the workers' own pinning: a cpuset that forbids the core leaves the thread where it is.
void Releaser::pinThread(HyperepochId he) const {
  if (releaseCore_[he] != kNone) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    (void)ipc::pinThisThread(releaseCore_[he] % cores);  // the workers' rule for CPU<n> beyond the machine's cores
  }
  const std::string name = "release-" + std::to_string(index(he) % 100'000);
  (void)::pthread_setname_np(::pthread_self(), name.c_str());  // at most 15 characters
}

Releaser::~Releaser() {
  if (!threads_.empty() && !finished()) control_.abort();
  join();
}

void Releaser::start(std::int64_t runStartNs) {
  runStartNs_ = runStartNs;
  const bool follow = sync_ != nullptr && sync_->follower();
  for (const HyperepochId he : active_) {
    threads_.emplace_back([this, he, follow] {
      pinThread(he);
      follow ? followLoop(he) : releaseLoop(he);
    });
  }
}

void Releaser::join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  shutdown_.store(true, std::memory_order_seq_cst);
  for (std::uint32_t he = 0; he < plan_.hyperepochs.size(); ++he) {
    ipc::signalWord(tracks_[he].goWord);  // a parked thread leaves (it looks at shutdown_ after each go)
  }
  for (std::thread& t : hyperepochThreads_) {
    if (t.joinable()) t.join();
  }
}

// A hyperepoch's release thread under a schedule manager: parked on its go word between
// activations, it runs one release loop per start. (Spinning while parked, or while the stopping
// hyperepoch finishes, was measured slower on a loaded 2-core machine: the spinners take the CPU
// the clients need to finish the iteration the switch waits for.)
void Releaser::parkedLoop(HyperepochId he) {
  pinThread(he);
  Track& track = tracks_[index(he)];
  std::uint32_t started = 0;
  for (;;) {
    std::uint32_t go = 0;
    while ((go = track.goWord.load(std::memory_order_acquire)) == started) {
      if (shutdown_.load(std::memory_order_acquire)) return;
      ipc::futexWait(track.goWord, started, -1);  // join() bumps the word too: no wake-up is lost
    }
    started = go;
    if (shutdown_.load(std::memory_order_acquire)) return;
    sync_ != nullptr && sync_->follower() ? followLoop(he) : releaseLoop(he);
    std::function<void()> then;
    {
      std::lock_guard<std::mutex> lock(track.thenLock);
      track.running.store(false, std::memory_order_release);
      then.swap(track.then);
    }
    track.endWord.fetch_add(1, std::memory_order_seq_cst);
    ipc::futexWake(track.endWord);
    if (then) then();
    ipc::signalWord(view_.header().attention);
  }
}

void Releaser::prepareHyperepoch(HyperepochId he) {
  if (!hyperepochThreads_[he].joinable()) hyperepochThreads_[he] = std::thread([this, he] { parkedLoop(he); });
}

void Releaser::startHyperepoch(HyperepochId he, std::int64_t startNs, std::uint64_t firstIteration) {
  launch(he, startNs, firstIteration, 0);
}

void Releaser::launch(HyperepochId he, std::int64_t startNs, std::uint64_t firstIteration,
                      std::size_t releasedAtStart) {
  joinHyperepoch(he);
  prepareHyperepoch(he);
  Track& track = tracks_[index(he)];
  track.releasedAtStart = releasedAtStart;
  track.stop.store(false);
  track.firstIteration = firstIteration;
  track.switchable = true;
  track.startNs = startNs;
  track.judged.store(0);
  track.lateHistory.store(0);
  track.cleanStreak.store(0);
  track.phase.store(kPhaseBusy, std::memory_order_relaxed);
  track.running.store(true, std::memory_order_release);
  track.goWord.fetch_add(1, std::memory_order_seq_cst);  // release: the fields above are the loop's
  ipc::futexWake(track.goWord);
}

std::int64_t Releaser::startHyperepochNow(HyperepochId he, std::uint64_t firstIteration) {
  return startHyperepochsNow({{he, firstIteration}});
}

std::int64_t Releaser::startHyperepochsNow(const std::vector<std::pair<HyperepochId, std::uint64_t>>& starts) {
  for (const auto& [he, first] : starts) joinHyperepoch(he);
  // The release threads are parked: until their go words below, this thread is their rings' only writer.
  const std::int64_t startNs = ipc::monotonicNs();
  std::vector<std::size_t> released(starts.size(), 0);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const auto [he, first] = starts[k];
    for (const ReleasePoint& p : plan_.hyperepochs[he].releases) {
      if (p.offsetNs != 0 || p.frame != 0 || control_.aborted()) break;
      publishRelease(he, p, first, startNs, startNs);
      ++released[k];
    }
  }
  for (std::size_t k = 0; k < starts.size(); ++k) launch(starts[k].first, startNs, starts[k].second, released[k]);
  return startNs;
}

void Releaser::requestHyperepochStop(HyperepochId he) {
  tracks_[index(he)].stop.store(true, std::memory_order_release);
  control_.wakeSleepers();  // sleepUntilOrStopped sees the stop now
}

std::optional<std::uint64_t> Releaser::stopBetweenIterations(HyperepochId he) {
  Track& track = tracks_[index(he)];
  if (!track.running.load(std::memory_order_acquire)) return std::nullopt;
  std::uint64_t phase = track.phase.load(std::memory_order_seq_cst);
  if ((phase & 3) != kPhaseIdle) return std::nullopt;
  const std::uint64_t h = phase >> 2;  // > the loop's first iteration: iteration h - 1 was released
  if (!instancesDone(plan_.hyperepochs[he].instances, h - 1)) return std::nullopt;
  // The swap fails when the loop woke meanwhile (its phase is busy, or idle before a later iteration).
  if (!track.phase.compare_exchange_strong(phase, (h << 2) | kPhaseTaken, std::memory_order_seq_cst)) {
    return std::nullopt;
  }
  shm::HyperepochSlot& slot = view_.hyperepoch(he);
  slot.stopAt.store(h, std::memory_order_seq_cst);
  track.endNs.store(ipc::monotonicNs(), std::memory_order_release);
  slot.completed.store(h);
  return h;
}

void Releaser::requestHyperepochStop(HyperepochId he, std::function<void()> then) {
  Track& track = tracks_[index(he)];
  {
    std::lock_guard<std::mutex> lock(track.thenLock);
    if (track.running.load(std::memory_order_acquire)) {
      track.then = std::move(then);
      then = nullptr;
    }
  }
  requestHyperepochStop(he);
  if (then) then();
}

IterationHealth Releaser::health(HyperepochId he) const {
  const Track& track = tracks_[index(he)];
  IterationHealth h;
  h.iterations = track.judged.load(std::memory_order_acquire);
  h.lateHistory = track.lateHistory.load(std::memory_order_relaxed);
  h.cleanStreak = track.cleanStreak.load(std::memory_order_relaxed);
  return h;
}

// Records the verdict on one iteration (the count last: a reader that sees it sees the rest).
void Releaser::judge(Track& track, bool late) {
  track.lateHistory.store((track.lateHistory.load(std::memory_order_relaxed) << 1) | (late ? 1u : 0u),
                          std::memory_order_relaxed);
  track.cleanStreak.store(late ? 0 : track.cleanStreak.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  track.judged.fetch_add(1, std::memory_order_release);
}

bool Releaser::hyperepochFinished(HyperepochId he) const {
  return !tracks_[index(he)].running.load(std::memory_order_acquire);
}

void Releaser::joinHyperepoch(HyperepochId he) {
  Track& track = tracks_[index(he)];
  for (;;) {
    const std::uint32_t ended = track.endWord.load(std::memory_order_seq_cst);
    if (!track.running.load(std::memory_order_acquire)) return;
    ipc::futexWait(track.endWord, ended, ipc::kSleepSliceNs);
  }
}

std::optional<Stall> Releaser::longestStall() const {
  std::optional<Stall> longest;
  for (const HyperepochId he : active_) {
    const std::int64_t since = tracks_[index(he)].waitSinceNs.load(std::memory_order_acquire);
    if (since == 0) continue;
    if (!longest || since < longest->sinceNs) {
      longest = Stall{he, InstanceId{tracks_[index(he)].waitInstance.load(std::memory_order_relaxed)},
                      tracks_[index(he)].waitTarget.load(std::memory_order_relaxed), since};
    }
  }
  return longest;
}

std::uint64_t Releaser::iterationsCompleted() const {
  std::uint64_t iterations = 0;
  for (const HyperepochId he : active_)
    iterations = std::max<std::uint64_t>(iterations, view_.hyperepoch(he).completed.load());
  return iterations;
}

// Sleeps until the deadline (spinning its last stretch); returns when it woke, or 0 when the run
// was aborted meanwhile.
std::int64_t Releaser::sleepUntil(std::int64_t deadlineNs) {
  keepWatchdogAlive();  // notify.cpp: systemd's WatchdogSec=, kept while frames are released
  const std::int64_t spin = releaseSpinNs();
  if (!control_.sleepUntil(deadlineNs - spin, [] { return false; })) return 0;  // an abort wakes it
  const std::int64_t woke = ipc::sleepUntilNs(deadlineNs, spin);
  return control_.aborted() ? 0 : woke;
}

// Schedule switching: sleeps toward the next period like sleepUntil, but a stop (or rollover)
// request of the hyperepoch wakes it at once instead of waiting for the period to pass
// (requestHyperepochStop wakes the run's sleepers). 1 woke at the deadline, -1 a stop was
// requested, 0 the run was aborted.
int Releaser::sleepUntilOrStopped(Track& track, std::int64_t deadlineNs) {
  const auto stopped = [&track] { return track.stop.load(std::memory_order_acquire); };
  if (!control_.sleepUntil(deadlineNs - releaseSpinNs(), stopped)) return 0;
  if (stopped()) return -1;
  return sleepUntil(deadlineNs) == 0 ? 0 : 1;
}

bool Releaser::instancesDone(const std::vector<InstanceId>& instances, std::uint64_t iteration) const {
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  for (const InstanceId i : instances) {
    if (!shm::sequenceReached(view_.instance(i).done.load(std::memory_order_acquire), target)) return false;
  }
  return true;
}

// Waits until every instance finished `iteration`; false when the run was aborted meanwhile.
// Each wait is recorded in the hyperepoch's track, so the monitor sees who makes no progress.
bool Releaser::waitInstances(HyperepochId he, const std::vector<InstanceId>& instances, std::uint64_t iteration) {
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  Track& track = tracks_[index(he)];
  for (const InstanceId i : instances) {
    shm::InstanceSlot& slot = view_.instance(i);
    if (shm::sequenceReached(slot.done.load(std::memory_order_acquire), target)) continue;
    track.waitInstance.store(index(i), std::memory_order_relaxed);
    track.waitTarget.store(target, std::memory_order_relaxed);
    track.waitSinceNs.store(ipc::monotonicNs(), std::memory_order_release);
    const ipc::WaitOutcome outcome =
        ipc::waitForSequence(slot.done, slot.waiters, target, 0, [&] { return control_.aborted(); });
    track.waitSinceNs.store(0, std::memory_order_release);
    if (outcome != ipc::WaitOutcome::kReached) return false;
  }
  return true;
}

// The last iteration of a stopping hyperepoch under a schedule manager, whose end a switch waits
// for: each instance still running is awaited by the plan, sleeping on its completion word until
// the plan lead (TACTUS_PLAN_LEAD_NS) before its planned end, then polling it and yielding the
// core between polls (the worker it waits for may share this thread's core), and from the lead
// after its planned end on, sleeping until woken. A futex wake-up at the end cost 70-130 us p50 on
// a loaded 2-core machine (the woken thread is not run at once); the poll sees the end as soon as
// the worker leaves the core. False when the run was aborted.
bool Releaser::waitIterationByPlan(HyperepochId he, std::uint64_t iteration, std::int64_t iterStart) {
  const std::int64_t leadNs = ipc::planLeadNs();
  if (leadNs <= 0) return waitInstances(he, plan_.hyperepochs[he].instances, iteration);
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  for (const InstanceId i : plan_.hyperepochs[he].instances) {
    shm::InstanceSlot& slot = view_.instance(i);
    auto reached = [&] { return shm::sequenceReached(slot.done.load(std::memory_order_acquire), target); };
    const std::int64_t plannedEnd = iterStart + schedule_.instances[i].endNs;
    for (std::int64_t now = ipc::monotonicNs(); !reached() && now < plannedEnd - leadNs; now = ipc::monotonicNs()) {
      if (control_.aborted()) return false;
      const std::uint32_t seen = slot.done.load(std::memory_order_acquire);
      slot.waiters.fetch_add(1, std::memory_order_seq_cst);
      if (!shm::sequenceReached(slot.done.load(std::memory_order_seq_cst), target)) {
        ipc::futexWait(slot.done, seen, std::min(plannedEnd - leadNs - now, ipc::kSleepSliceNs));
      }
      slot.waiters.fetch_sub(1, std::memory_order_seq_cst);
    }
    for (std::int64_t now = ipc::monotonicNs(); !reached() && now < plannedEnd + leadNs; now = ipc::monotonicNs()) {
      if (control_.aborted()) return false;
      ::sched_yield();
    }
    if (!reached() && !waitInstances(he, {i}, iteration)) return false;
  }
  return true;
}

// Releases iteration `h`'s frames from release point `from` on, each at its offset from
// `iterStart`, gated on the previous frame of its epoch (a late one is an overrun record and sets
// `frameLate`); false when the run was aborted meanwhile.
bool Releaser::releaseFrames(HyperepochId he, std::uint64_t h, std::int64_t iterStart, std::size_t from,
                             bool& frameLate) {
  const HyperepochPlan& hp = plan_.hyperepochs[he];
  for (std::size_t k = from; k < hp.releases.size(); ++k) {
    const ReleasePoint& p = hp.releases[k];
    const std::int64_t ideal = iterStart + p.offsetNs;
    std::int64_t actual = sleepUntil(ideal);
    if (actual == 0) return false;
    if (p.frame > 0) {
      const auto& previous = plan_.frameInstances[plan_.epochFrameBase[p.epoch] + p.frame - 1];
      if (!instancesDone(previous, h)) {
        if (!waitInstances(he, previous, h)) return false;
        actual = ipc::monotonicNs();
        frameLate = true;
        rings_[he].push({static_cast<std::uint16_t>(EventKind::kOverrun), 0, index(p.epoch),
                         static_cast<std::uint32_t>(h), p.frame - 1, ideal, actual});
        TACTUS_TRACE(overrun, index(p.epoch), h, p.frame - 1, ideal, actual);
      }
    }
    publishRelease(he, p, h, ideal, actual);
  }
  return true;
}

// Releases frame `p.frame` of `p.epoch` in `iteration` and records it in the hyperepoch's ring.
void Releaser::publishRelease(HyperepochId he, const ReleasePoint& p, std::uint64_t iteration, std::int64_t idealNs,
                              std::int64_t actualNs) {
  if (gate_ != nullptr) gate_->beforeRelease();
  shm::EpochSlot& epoch = view_.epoch(p.epoch);
  const std::uint64_t frames = std::max<std::uint32_t>(1, schedule_.epochs[p.epoch].frames);
  epoch.releaseNs.store(idealNs, std::memory_order_relaxed);
  // Traced before the publication: a woken worker's runnable_start then never precedes it.
  TACTUS_TRACE(frame_release, index(p.epoch), iteration, p.frame, idealNs, actualNs);
  ipc::publishSequence(epoch.released, epoch.waiters, static_cast<std::uint32_t>(iteration * frames + p.frame + 1));
  rings_[he].push({static_cast<std::uint16_t>(EventKind::kRelease), 0, index(p.epoch),
                   static_cast<std::uint32_t>(iteration), p.frame, idealNs, actualNs});
}

// A hyperepoch's release loop on this master's own clock: the phases of release_phases.hpp, from
// iteration `firstIteration` (0 unless started by startHyperepoch) at its start.
void Releaser::releaseLoop(HyperepochId he) {
  shm::HyperepochSlot& slot = view_.hyperepoch(he);
  const std::uint64_t limit = slot.stopAt.load();
  Track& own = tracks_[index(he)];
  const std::uint64_t first = own.firstIteration;
  const std::int64_t start = first == 0 && own.startNs == 0 ? runStartNs_ : own.startNs;
  Loop loop{.he = he,
            .own = own,
            .slot = slot,
            .plan = plan_.hyperepochs[he],
            .follower = false,
            .limit = limit,
            .first = first,
            .periodNs = schedule_.hyperepochs[he].periodNs,
            .iterStartNs = start,
            .h = first};
  runLoop(loop);
}

// Runs the loop's phases until it is done, then leaves. Each phase is one function below (and
// awaitPrimary in releaser_follow.cpp); nextPhase decides what follows it.
void Releaser::runLoop(Loop& loop) {
  ReleasePhase phase = ReleasePhase::kStartIteration;
  while (phase != ReleasePhase::kDone) {
    const PhaseResult result = runPhase(loop, phase);
    // Aborted (a client it uses died): its last iteration never ends, so the activation's end is
    // when the loop left, not an earlier activation's end or none (a stop logged at time 0).
    if (result == PhaseResult::kAborted) loop.own.endNs.store(ipc::monotonicNs(), std::memory_order_release);
    phase = nextPhase(phase, result);
  }
  leave(loop);
}

PhaseResult Releaser::runPhase(Loop& loop, ReleasePhase phase) {
  switch (phase) {
    case ReleasePhase::kStartIteration: return loop.follower ? awaitPrimary(loop) : startFirst(loop);
    case ReleasePhase::kAwaitBoundary: return loop.follower ? awaitPrimary(loop) : awaitBoundary(loop);
    case ReleasePhase::kClosePrevious: return closePrevious(loop);
    case ReleasePhase::kOverrun: return overrun(loop);
    case ReleasePhase::kReleaseFrames: return releaseIteration(loop);
    case ReleasePhase::kStopping: return stopping(loop);
    case ReleasePhase::kDrainLast: return drainLast(loop);
    case ReleasePhase::kDone: break;
  }
  return PhaseResult::kAborted;
}

// Whether the loop stops at iteration h's boundary (a stop request is recorded as its stopAt: no
// frame of h was released).
bool Releaser::stopAtBoundary(Loop& loop) {
  const BoundaryStop stop = boundaryStop(loop.h, loop.limit, [&] {
    return control_.stopRequested() || control_.aborted() || loop.own.stop.load(std::memory_order_acquire);
  });
  if (stop == BoundaryStop::kRequested) loop.slot.stopAt.store(loop.h, std::memory_order_seq_cst);
  return stop != BoundaryStop::kGoOn;
}

// kStartIteration on the own clock: a first frame startHyperepochNow released already runs.
PhaseResult Releaser::startFirst(Loop& loop) {
  return loop.own.releasedAtStart == 0 && stopAtBoundary(loop) ? PhaseResult::kStop : PhaseResult::kNext;
}

// kAwaitBoundary on the own clock: sleeps to iteration h's period boundary. A switchable
// hyperepoch sleeps idle (stopBetweenIterations may take it meanwhile), and a stop request cuts
// the sleep short.
PhaseResult Releaser::awaitBoundary(Loop& loop) {
  if (stopAtBoundary(loop)) return PhaseResult::kStop;
  Track& own = loop.own;
  loop.boundaryNs = loop.iterStartNs + loop.periodNs;
  if (own.switchable) {
    own.phase.store((loop.h << 2) | kPhaseIdle, std::memory_order_seq_cst);
    const int woke = sleepUntilOrStopped(own, loop.boundaryNs);
    std::uint64_t idle = (loop.h << 2) | kPhaseIdle;
    if (!own.phase.compare_exchange_strong(idle, kPhaseBusy, std::memory_order_seq_cst)) {
      loop.taken = true;
      return PhaseResult::kTaken;
    }
    if (woke == 0) return PhaseResult::kAborted;
    if (woke < 0 && stopAtBoundary(loop)) return PhaseResult::kStop;
  } else if (sleepUntil(loop.boundaryNs) == 0) {
    return PhaseResult::kAborted;
  }
  return stopAtBoundary(loop) ? PhaseResult::kStop : PhaseResult::kNext;
}

// kClosePrevious (both loops): judges iteration h - 1; done in time, h starts at its boundary.
PhaseResult Releaser::closePrevious(Loop& loop) {
  bool done = instancesDone(loop.plan.instances, loop.h - 1);
  // A follower hears of h's start when the primary decides it, which after the primary's own
  // overrun is a boundary still ahead: its part of h - 1 has until then (h's first frame is
  // released at that start anyway), and is late only if it is not done by then.
  if (!done && loop.follower && ipc::monotonicNs() < loop.boundaryNs) {
    if (!control_.sleepUntil(loop.boundaryNs, [] { return false; })) return PhaseResult::kAborted;
    done = instancesDone(loop.plan.instances, loop.h - 1);
  }
  const CloseVerdict verdict = closeVerdict(done, loop.frameLate);
  judge(loop.own, verdict.late);
  if (verdict.overran) return PhaseResult::kOverran;
  loop.iterStartNs = loop.boundaryNs;
  loop.slot.completed.store(loop.h);
  loop.frameLate = false;
  return PhaseResult::kNext;
}

// kOverrun (both loops): iteration h - 1 did not finish by h's start. h starts once it has
// (restartOwn, restartFollowing), recorded as a kSkipped event.
PhaseResult Releaser::overrun(Loop& loop) {
  if (!waitInstances(loop.he, loop.plan.instances, loop.h - 1)) return PhaseResult::kAborted;
  const std::int64_t now = ipc::monotonicNs();
  const Restart restart = loop.follower ? restartFollowing(loop.boundaryNs, now)
                                        : restartOwn(loop.iterStartNs, loop.periodNs, now, freeRunning_);
  loop.iterStartNs = restart.startNs;
  if (restart.countSkipped) loop.slot.skipped.fetch_add(restart.skipped);
  rings_[loop.he].push({static_cast<std::uint16_t>(EventKind::kSkipped), 0, index(loop.he),
                        static_cast<std::uint32_t>(loop.h), static_cast<std::uint32_t>(restart.skipped),
                        restart.missedNs, restart.recordedNs});
  if (!loop.follower && stopAtBoundary(loop)) return PhaseResult::kStop;  // a follower's stop is the primary's
  loop.slot.completed.store(loop.h);
  loop.frameLate = false;
  return PhaseResult::kNext;
}

// kReleaseFrames (both loops): a primary reports h's start first. startHyperepochNow published
// the first iteration's releases at offset 0 already.
PhaseResult Releaser::releaseIteration(Loop& loop) {
  if (!loop.follower && sync_ != nullptr) sync_->started(loop.he, loop.h, loop.iterStartNs);
  const std::size_t from = loop.h == loop.first ? loop.own.releasedAtStart : 0;
  if (!releaseFrames(loop.he, loop.h, loop.iterStartNs, from, loop.frameLate)) return PhaseResult::kAborted;
  ++loop.h;
  return PhaseResult::kNext;
}

// kStopping: no frame of h was released; a primary reports it. Taken, its stopper recorded the end.
PhaseResult Releaser::stopping(Loop& loop) {
  if (!loop.follower && sync_ != nullptr) sync_->stopped(loop.he, loop.h);
  return loop.taken ? PhaseResult::kTaken : PhaseResult::kNext;
}

// kDrainLast: lets iteration h - 1 finish (under a manager, a switch waits for it), then records
// the end.
PhaseResult Releaser::drainLast(Loop& loop) {
  const std::uint64_t h = loop.h;
  const bool ran = h > loop.first;
  if (ran && !loop.follower && !loop.own.switchable) {
    // Sleep through the last iteration to its planned end before waiting on its completions:
    // waking at each completion took a worker's core once per runnable of that iteration.
    std::int64_t plannedEnd = 0;
    for (const InstanceId i : loop.plan.instances) plannedEnd = std::max(plannedEnd, schedule_.instances[i].endNs);
    const auto done = [&] { return instancesDone(loop.plan.instances, h - 1); };
    if (!control_.sleepUntil(loop.iterStartNs + plannedEnd, done)) return PhaseResult::kAborted;
  }
  if (ran && !(loop.own.switchable ? waitIterationByPlan(loop.he, h - 1, loop.iterStartNs)
                                   : waitInstances(loop.he, loop.plan.instances, h - 1))) {
    return PhaseResult::kAborted;
  }
  loop.own.endNs.store(ipc::monotonicNs(), std::memory_order_release);
  loop.slot.completed.store(h);
  return PhaseResult::kNext;
}

// kDone: the thread leaves (a follower's phase word is never used).
void Releaser::leave(Loop& loop) {
  if (!loop.follower) loop.own.phase.store(kPhaseBusy, std::memory_order_seq_cst);
  finished_.fetch_add(1);
  ipc::signalWord(view_.header().attention);
}

}  // namespace tactus::master
