// The managed run's switching, hyperepoch by hyperepoch: activating a hyperepoch (after its
// workers left the previous activation and, in a rollover, ran their switch callbacks), stopping
// one at its iteration boundary, and the manager's start, stop and rollover built on them; on a
// follower SoC of a multi-SoC run, the same activations made as the primary's switches arrive.
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <set>

#include "managed/switching.hpp"
#include "master.hpp"
#include "replay/switch_script.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

Mode* modeByIdentifier(const RunCore& core, std::uint32_t id) {
  for (const auto& m : core.modes()) {
    if (m->schedule.identifier == id) return m.get();
  }
  return nullptr;
}

std::uint32_t runningIdentifier(const RunCore& core) {
  const Mode* running = core.runningMode();
  return running != nullptr ? running->schedule.identifier : kNoSchedule;
}

void Switching::startAwaitingSwitches() {
  const std::int64_t startNs = ipc::monotonicNs();
  core_.setRunStart(startNs);
  const auto& modes = core_.modes();
  for (const auto& m : modes) {
    m->owner->startRun(startNs);
    if (!m->soc) continue;
    m->soc->start();
    // A follower: the primary's starts wake the loop (but of a hyperepoch with nothing on this SoC).
    for (HyperepochId he : m->schedule.hyperepochs.ids())
      m->soc->setFollowing(he, m->plan.hyperepochs[he].instances.empty(),
                           &modes.front()->owner->view().header().attention);
  }
}

void Switching::logSwitch(EventKind kind, const Mode& mode, HyperepochId he, std::uint64_t iteration,
                          std::uint32_t other, std::int64_t startNs, std::int64_t endNs) {
  EventRecord r{
      static_cast<std::uint16_t>(kind), 0, index(he), static_cast<std::uint32_t>(iteration), other, startNs, endNs};
  r.schedule = mode.schedule.identifier;
  core_.record(r);
}

// Waits for a word the clients' workers count up; false when the run ended meanwhile, or `mode` was
// aborted (a client it uses died: its count may never come).
bool Switching::waitWord(const Mode& mode, std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                         std::uint32_t target) {
  // Spins longer than a worker would: a switch waits here, and a futex wake costs tens of us.
  return ipc::waitForSequence(word, waiters, target, 200'000,
                              [&] { return core_.runEnded() || mode.control.aborted(); }) == ipc::WaitOutcome::kReached;
}

// Opens activation `activations + 1` of hyperepoch `he` (its workers have left the previous one):
// the slot runs on, and a rollover (from != kNoSchedule) asks the workers for their switch
// callbacks. The number of clients whose acknowledgement the rollover waits for.
std::uint32_t Switching::armActivation(Mode& mode, HyperepochId he, std::uint32_t from) {
  const shm::SegmentView& view = mode.owner->view();
  shm::SwitchSlot& sw = view.switching(he);
  // A managed replay stops the activation where the recorded one stopped (replay/switch_script.hpp):
  // its loop ends there by itself, and the next recorded switch waits for that.
  const replay::SwitchScript* script = core_.switchScript();
  const std::uint64_t stopAt = script != nullptr
                                   ? script->stopIteration(mode.schedule.identifier, mode.nextIteration[he])
                                   : std::numeric_limits<std::uint64_t>::max();
  view.hyperepoch(he).stopAt.store(stopAt, std::memory_order_seq_cst);
  const std::uint32_t activation = ++mode.activations[he];
  sw.rolloverActivation.store(from != kNoSchedule ? activation : 0, std::memory_order_seq_cst);
  sw.activation.store(activation, std::memory_order_seq_cst);
  // Only clients with switch callbacks acknowledge a rollover (each says so in its slot at enter).
  std::uint32_t waitFor = 0;
  if (from != kNoSchedule) {
    for (const ClientId c : mode.clientsWith[he]) {
      if (view.client(c).switchCallbacks.load(std::memory_order_acquire) != 0) ++waitFor;
    }
    mode.acksExpected[he] += waitFor;
  }
  return waitFor;
}

// Wakes hyperepoch `he`'s workers asleep on its activation word.
void Switching::wakeActivated(const Mode& mode, HyperepochId he) {
  shm::SwitchSlot& sw = mode.owner->view().switching(he);
  if (sw.activationWaiters.load(std::memory_order_seq_cst) != 0) ipc::futexWake(sw.activation);
}

// Arms hyperepoch `he` of `mode` for activation: its workers must have left the previous
// activation, and a rollover (from != kNoSchedule) waits for every client's switch callbacks.
// The clients whose acknowledgement it waited for (0: the workers are woken after the release);
// none when the run ended or `mode` was aborted meanwhile.
std::optional<std::uint32_t> Switching::armWhenLeft(SwitchJob* job, Mode& mode, HyperepochId he, std::uint32_t from) {
  // The run has ended (a rollover's A hyperepoch then left its last iteration at the abort, not at
  // its boundary): nothing starts, and the request is answered as cut short by that end. The waits
  // below see the end only while their word is short of its target, which a hyperepoch that never
  // ran has reached already.
  if (core_.runEnded() || mode.control.aborted()) return std::nullopt;
  shm::SwitchSlot& sw = mode.owner->view().switching(he);
  if (job != nullptr) job->enter(SwitchState::kWaitingForClients, &mode, he);
  if (!waitWord(mode, sw.left, sw.masterWaiters, mode.workersIn[he] * mode.activations[he])) return std::nullopt;
  const std::uint32_t waitFor = armActivation(mode, he, from);
  // A rollover releases at once. With callbacks to wait for, the workers wake first to run them.
  // Without, the release is handed to the release thread before the workers wake: a woken worker
  // on this thread's core would otherwise delay the release (measured: about 30 us per switch on
  // a 2-core machine), and the workers then find their first frame released.
  if (from == kNoSchedule || waitFor != 0) wakeActivated(mode, he);
  if (waitFor != 0 && job != nullptr) job->enter(SwitchState::kWaitingForClients, &mode, he, true);
  if (waitFor != 0 && !waitWord(mode, sw.acks, sw.masterWaiters, mode.acksExpected[he])) return std::nullopt;
  return waitFor;
}

// Activates hyperepochs `hes` of `mode` together: each is armed in turn (armWhenLeft), then every
// armed one releases its first frame at one time: a start at `startNs`, a rollover (from !=
// kNoSchedule) at once on this thread, all first releases published before any release thread
// or worker is woken (one hyperepoch's wake-ups do not delay the next one's release: on two
// cores, 10-25 us of a two-hyperepoch rollover). Whether each was activated, in the order of `hes`.
std::vector<std::uint8_t> Switching::activate(SwitchJob* job, Mode& mode, const std::vector<HyperepochId>& hes,
                                              std::int64_t startNs, std::uint32_t from, const Request& r) {
  std::vector<std::uint8_t> activated(hes.size(), 0);
  std::vector<std::uint32_t> waitFor(hes.size(), 0);
  std::vector<std::pair<HyperepochId, std::uint64_t>> starts;  // the armed ones that release something
  for (std::size_t k = 0; k < hes.size(); ++k) {
    const std::optional<std::uint32_t> armed = armWhenLeft(job, mode, hes[k], from);
    if (!armed) continue;
    activated[k] = 1;
    waitFor[k] = *armed;
    if (!mode.plan.hyperepochs[hes[k]].instances.empty()) starts.emplace_back(hes[k], mode.nextIteration[hes[k]]);
  }
  if (!starts.empty()) {
    if (from != kNoSchedule && mode.soc) {
      // A multi-SoC rollover: B starts --switch-lead-us ahead, time for the other SoCs' masters to
      // activate it when its start sample arrives (released at once, B's first iteration would
      // wait for their workers: an overrun at every switch).
      startNs = ipc::monotonicNs() + core_.options().switchLeadUs * 1000;
      for (const auto& [he, first] : starts) mode.releaser->startHyperepoch(he, startNs, first);
    } else if (from != kNoSchedule) {
      startNs = mode.releaser->startHyperepochsNow(starts);
    } else {
      for (const auto& [he, first] : starts) mode.releaser->startHyperepoch(he, startNs, first);
    }
    for (const auto& [he, first] : starts)
      logSwitch(EventKind::kScheduleStart, mode, he, first, from, r.takenNs, startNs);
  }
  for (std::size_t k = 0; k < hes.size(); ++k) {
    if (activated[k] != 0 && from != kNoSchedule && waitFor[k] == 0) wakeActivated(mode, hes[k]);
  }
  return activated;
}

// A follower SoC under a manager, each round of the monitor loop: every hyperepoch the primary
// started is activated here (without waiting: a frozen worker must not hold up the monitor loop),
// followed until the primary's stop, then parked again. A rollover on the primary is a stop of A
// and a start of B there; here B starts once A's hyperepoch on the same hardware has stopped. The
// end once the primary's master ended its run well and nothing here follows it any more.
std::optional<RunEnd> Switching::followSwitches() {
  for (auto& m : core_.modes()) {
    for (HyperepochId he : m->schedule.hyperepochs.ids()) {
      if (m->follow[he] == FollowStep::kFollowing && m->releaser->hyperepochFinished(he)) followStopped(*m, he);
    }
  }
  bool following = false;
  for (auto& m : core_.modes()) {
    m->running = false;
    for (HyperepochId he : m->schedule.hyperepochs.ids()) {
      if (m->plan.hyperepochs[he].instances.empty()) continue;
      if (m->follow[he] == FollowStep::kParked) (void)followStart(*m, he);
      if (m->follow[he] == FollowStep::kAwaitingAcks &&
          shm::sequenceReached(m->owner->view().switching(he).acks.load(std::memory_order_acquire),
                               m->acksExpected[he]))
        followLaunch(*m, he);
      if (m->follow[he] != FollowStep::kParked) m->running = true;
    }
    following = following || m->running;
  }
  const std::optional<std::string> primaryEnd = core_.soc()->primaryEnded();
  if (!primaryEnd || following) return std::nullopt;  // still following: checkPeers bounds the wait by -o
  // The reason of the primary's last stop (its signal, or an exit), as its clients see it.
  const std::optional<StopReason> why = core_.linkStopReason();
  return RunEnd{SegmentState::kFinished, why == StopReason::kSignal ? StopReason::kSignal : StopReason::kExitRequested,
                kNone,
                "the master of the primary SoC " + core_.soc()->socName(core_.soc()->primary()) +
                    " ended the run: " + *primaryEnd};
}

// Whether hyperepoch `he` of `mode`, whose activation the primary started at `startNs` (its
// clock), must wait: another schedule's hyperepoch on its hardware still runs here, or the primary
// started one there earlier that is not activated here yet (the primary's order of switches).
// `partner` becomes the hyperepoch there whose last stop was a rollover's, if any (this start is
// that rollover's).
bool Switching::sharedHardwareBusy(const Mode& mode, HyperepochId he, std::int64_t startNs,
                                   std::pair<Mode*, HyperepochId>& partner) {
  partner = {nullptr, kNone};
  for (auto& o : core_.modes()) {
    if (o.get() == &mode) continue;
    for (HyperepochId oh : o->schedule.hyperepochs.ids()) {
      const bool shared = std::any_of(mode.hardware[he].begin(), mode.hardware[he].end(),
                                      [&](const std::string& r) { return o->hardware[oh].contains(r); });
      if (!shared || o->plan.hyperepochs[oh].instances.empty()) continue;
      if (o->follow[oh] != FollowStep::kParked) return true;
      if (const auto earlier = o->soc->startedSince(oh, o->nextIteration[oh]); earlier && *earlier < startNs)
        return true;
      if (o->switchedAway[oh] && partner.first == nullptr) partner = {o.get(), oh};
    }
  }
  return false;
}

// Activates hyperepoch `he` when the primary has started it, its hardware is free here and its
// workers have left their previous activation; whether it did.
bool Switching::followStart(Mode& mode, HyperepochId he) {
  // A stop at the activation's first iteration is of one that released nothing: it never ran here.
  for (auto stop = mode.soc->pendingStop(he); stop && *stop <= mode.nextIteration[he]; stop = mode.soc->pendingStop(he))
    mode.switchedAway[he] = mode.soc->consumeStop(he) ? 1 : 0;
  const std::optional<std::int64_t> startNs = mode.soc->startedSince(he, mode.nextIteration[he]);
  if (!startNs) return false;
  std::pair<Mode*, HyperepochId> partner;
  if (sharedHardwareBusy(mode, he, *startNs, partner)) return false;
  const shm::SwitchSlot& sw = mode.owner->view().switching(he);
  if (!shm::sequenceReached(sw.left.load(std::memory_order_acquire), mode.workersIn[he] * mode.activations[he]))
    return false;
  std::uint32_t from = kNoSchedule;
  if (partner.first != nullptr) {  // the rollover is this start's
    from = partner.first->schedule.identifier;
    partner.first->switchedAway[partner.second] = 0;
  }
  const std::uint32_t waitFor = armActivation(mode, he, from);
  mode.followFrom[he] = from;
  if (from == kNoSchedule || waitFor != 0) wakeActivated(mode, he);
  mode.follow[he] = FollowStep::kAwaitingAcks;
  if (waitFor == 0) followLaunch(mode, he);
  return true;
}

// Starts hyperepoch `he`'s release loop following the primary from its next iteration.
void Switching::followLaunch(Mode& mode, HyperepochId he) {
  const std::int64_t now = ipc::monotonicNs();
  mode.soc->setFollowing(he, true, &core_.modes().front()->owner->view().header().attention);
  mode.releaser->startHyperepoch(he, now, mode.nextIteration[he]);
  logSwitch(EventKind::kScheduleStart, mode, he, mode.nextIteration[he], mode.followFrom[he], now, now);
  if (mode.followFrom[he] != kNoSchedule) wakeActivated(mode, he);
  mode.follow[he] = FollowStep::kFollowing;
}

// Hyperepoch `he`'s release loop ended at the primary's stop (or an abort): parked again, its
// next activation starting where this one stopped.
void Switching::followStopped(Mode& mode, HyperepochId he) {
  shm::HyperepochSlot& slot = mode.owner->view().hyperepoch(he);
  if (mode.control.aborted() && slot.stopAt.load() == std::numeric_limits<std::uint64_t>::max())
    slot.stopAt.store(slot.completed.load() + 1, std::memory_order_seq_cst);
  const std::uint64_t stoppedAt = slot.stopAt.load();
  mode.nextIteration[he] = stoppedAt;
  wakeStoppedWorkers(mode, he);
  mode.switchedAway[he] = mode.soc->consumeStop(he) ? 1 : 0;  // none after an abort: the run ends
  mode.soc->setFollowing(he, false, &core_.modes().front()->owner->view().header().attention);
  logSwitch(EventKind::kScheduleStop, mode, he, stoppedAt, kNoSchedule, ipc::monotonicNs(),
            mode.releaser->hyperepochEndNs(he));
  mode.follow[he] = FollowStep::kParked;
}

// Workers asleep on a release that will not come, or on the end of an instance that will not run
// (a worker waiting for its turn on a core another client's worker has: the client library's
// awaitCoreTurn), look at stopAt now rather than after their sleep slice, so they leave the
// activation promptly.
void Switching::wakeStoppedWorkers(const Mode& mode, HyperepochId he) {
  const shm::SegmentView& view = mode.owner->view();
  for (const EpochId e : mode.schedule.hyperepochs[he].epochs) {
    if (view.epoch(e).waiters.load() != 0) ipc::futexWake(view.epoch(e).released);
  }
  for (const InstanceId i : mode.plan.hyperepochs[he].instances) {
    if (view.instance(i).waiters.load() != 0) ipc::futexWake(view.instance(i).done);
  }
}

void Switching::stopHyperepoch(SwitchJob* job, Mode& mode, HyperepochId he, std::uint32_t to, const Request& r) {
  if (mode.plan.hyperepochs[he].instances.empty()) return;
  if (job != nullptr) job->enter(SwitchState::kDraining, &mode, he);
  mode.releaser->requestHyperepochStop(he);
  mode.releaser->joinHyperepoch(he);  // asleep: its release thread ends once the last iteration did
  shm::HyperepochSlot& slot = mode.owner->view().hyperepoch(he);
  if (mode.control.aborted() && slot.stopAt.load() == std::numeric_limits<std::uint64_t>::max()) {
    // Aborted (a client it uses died): its release thread left without a stop iteration. Workers
    // of later iterations leave; those of the unfinished one wait for the run's end.
    slot.stopAt.store(slot.completed.load() + 1, std::memory_order_seq_cst);
    if (mode.soc) mode.soc->stopped(he, slot.stopAt.load());  // the followers stop there too (a policy goes on)
  }
  wakeStoppedWorkers(mode, he);  // once stopAt is final, so that those it wakes see it
  const std::uint64_t stoppedAt = slot.stopAt.load();
  mode.nextIteration[he] = stoppedAt;
  logSwitch(EventKind::kScheduleStop, mode, he, stoppedAt, to, r.takenNs, mode.releaser->hyperepochEndNs(he));
}

Answer Switching::start(SwitchJob& job, const Request& r, Mode& mode) {
  // Clients may still be coming: the start waits for them (the monitor loop ends the run at -t).
  job.enter(SwitchState::kWaitingForClients, &mode, kNone);
  while (!core_.clientsEntered()) {
    if (core_.runEnded())
      return {ManagerResult::kRunEnded, "the run ended before the schedule started" + core_.endedBecause()};
    ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
  }
  // Multi-SoC: the other SoCs' masters activate the schedule when its start sample arrives.
  const std::int64_t startNs = ipc::monotonicNs() + (mode.soc ? core_.options().switchLeadUs * 1000 : kStartLeadNs);
  std::vector<HyperepochId> all;
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) all.push_back(he);
  const std::vector<std::uint8_t> activated = activate(&job, mode, all, startNs, kNoSchedule, r);
  if (std::find(activated.begin(), activated.end(), 0) != activated.end()) {
    return {ManagerResult::kRunEnded, "the run ended during the start" + core_.endedBecause()};
  }
  mode.running = true;
  return {ManagerResult::kOk, "started schedule " + std::to_string(mode.schedule.identifier)};
}

// Asks every hyperepoch of `mode` that runs something on this SoC to stop at its iteration
// boundary (a manager's stop, a signal, a client's exit request).
void Switching::askBoundaryStop(Mode& mode) {
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!mode.plan.hyperepochs[he].instances.empty()) mode.releaser->requestHyperepochStop(he);
  }
}

Answer Switching::stop(SwitchJob* job, const Request& r, Mode& mode, std::uint32_t to) {
  askBoundaryStop(mode);
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) stopHyperepoch(job, mode, he, to, r);
  mode.running = false;
  return {ManagerResult::kOk, "stopped schedule " + std::to_string(mode.schedule.identifier)};
}

std::string partitionProblem(const Mode& from, const Mode& to,
                             std::vector<std::pair<HyperepochId, HyperepochId>>& pairs) {
  auto overlaps = [](const std::set<std::string>& a, const std::set<std::string>& b) {
    return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) != 0; });
  };
  IdVector<HyperepochId, HyperepochId> partnerOfTo(to.hardware.size(), kNone);
  for (HyperepochId a : from.hardware.ids()) {
    HyperepochId partner = kNone;
    for (HyperepochId b : to.hardware.ids()) {
      if (!overlaps(from.hardware[a], to.hardware[b])) continue;
      if (partner != kNone || partnerOfTo[b] != kNone || from.hardware[a] != to.hardware[b]) {
        return "hyperepoch " + quoted(from.schedule.hyperepochs[a].name) + " of schedule " +
               std::to_string(from.schedule.identifier) + " and hyperepoch " + quoted(to.schedule.hyperepochs[b].name) +
               " of schedule " + std::to_string(to.schedule.identifier) +
               " hold different sets of resources: the schedules partition resources differently";
      }
      partner = b;
      partnerOfTo[b] = a;
    }
    pairs.emplace_back(a, partner);
  }
  for (HyperepochId b : to.hardware.ids()) {
    if (partnerOfTo[b] == kNone) pairs.emplace_back(kNone, b);
  }
  return "";
}

// Pair `k` of a rollover (its old and new hyperepoch, either kNone): the old one stopped (its
// release thread ended at its boundary), the new one activated; whether it was. On the old one's
// release thread as its loop ends, or on the switch job's.
bool Switching::switchPair(SwitchJob& job, const Request& r, Mode& from, Mode& to, std::size_t k) {
  const auto [a, b] = job.pairs()[k];
  if (a != kNone) stopHyperepoch(&job, from, a, to.schedule.identifier, r);
  return b == kNone || activate(&job, to, {b}, ipc::monotonicNs(), from.schedule.identifier, r).front() != 0;
}

Answer Switching::rollover(SwitchJob& job, const Request& r, Mode& from, Mode& to) {
  std::vector<std::pair<HyperepochId, HyperepochId>> pairs;
  if (std::string problem = partitionProblem(from, to, pairs); !problem.empty()) {
    return {ManagerResult::kNotSupported, "rollover " + std::to_string(to.schedule.identifier) + " " +
                                              std::to_string(from.schedule.identifier) + " refused: " + problem};
  }
  for (const auto& [a, b] : pairs) {
    // B's release threads exist before A ends (started once, parked between activations).
    if (b != kNone && !to.plan.hyperepochs[b].instances.empty()) to.releaser->prepareHyperepoch(b);
    if (a != kNone && from.soc) from.soc->markSwitch(a);  // a multi-SoC run: the followers' stop says it
  }
  // Each pair switches on its own: A's hyperepoch finishes its iteration, B's starts at once, on
  // A's release thread as its loop ends (no thread is woken or made between the two). A pair
  // without a running A hyperepoch switches here. The call returns when every pair has switched.
  // The pairs report to the job, which outlives every release thread (a release thread may still
  // be inside its last report when this call has seen every pair switched and returned).
  job.beginPairs(std::move(pairs));
  job.enter(SwitchState::kDraining, &from, kNone);
  const auto& all = job.pairs();
  // A pair whose A hyperepoch sleeps between iterations with its latest one finished switches on
  // this thread: it is stopped here first (every such pair before any switches), then B starts,
  // then A's release thread is woken to end. The others switch on A's release thread.
  std::vector<std::pair<std::size_t, std::uint64_t>> stoppedHere;  // pair, A's stop iteration
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto [a, b] = all[k];
    if (a == kNone || from.plan.hyperepochs[a].instances.empty()) continue;
    if (const auto h = from.releaser->stopBetweenIterations(a)) {
      stoppedHere.emplace_back(k, *h);
    } else {
      Mode* fromMode = &from;
      Mode* toMode = &to;
      from.releaser->requestHyperepochStop(
          a, [this, &job, r, fromMode, toMode, k] { job.pairSwitched(switchPair(job, r, *fromMode, *toMode, k)); });
    }
  }
  // Their B hyperepochs start together (activate): one pair's wake-ups do not delay the next one.
  std::vector<HyperepochId> starting;
  for (const auto& [k, h] : stoppedHere) {
    const auto [a, b] = all[k];
    from.nextIteration[a] = h;
    logSwitch(EventKind::kScheduleStop, from, a, h, to.schedule.identifier, r.takenNs,
              from.releaser->hyperepochEndNs(a));
    if (b == kNone) job.pairSwitched(true);
    else starting.push_back(b);
  }
  if (!starting.empty()) {
    for (const std::uint8_t ok : activate(&job, to, starting, ipc::monotonicNs(), from.schedule.identifier, r))
      job.pairSwitched(ok != 0);
  }
  for (const auto& [k, h] : stoppedHere) {  // after every B started: the wake-ups cost microseconds each
    from.releaser->requestHyperepochStop(all[k].first);
    wakeStoppedWorkers(from, all[k].first);
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    const HyperepochId a = all[k].first;
    if (a == kNone || from.plan.hyperepochs[a].instances.empty()) job.pairSwitched(switchPair(job, r, from, to, k));
  }
  // Every pair must have reported before the next request reuses the job: no early return.
  const bool ok = job.awaitPairs();
  from.running = false;
  to.running = true;
  if (!ok) return {ManagerResult::kRunEnded, "the run ended during the rollover" + core_.endedBecause()};
  return {ManagerResult::kOk, "rolled over from schedule " + std::to_string(from.schedule.identifier) +
                                  " to schedule " + std::to_string(to.schedule.identifier)};
}

}  // namespace tactus::master
