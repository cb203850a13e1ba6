// One SoC's part of a multi-SoC run (see soc_run.hpp).
#include "soc/soc_run.hpp"

#include <sched.h>

#include <algorithm>

#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::master {

namespace {

// The master states announced over the link (soc_link's MasterState::state).
constexpr std::uint32_t kStateReady = 1;
constexpr std::uint32_t kStateRunning = 2;
constexpr std::uint32_t kStateStopping = 3;
constexpr std::uint32_t kStateStopAsked = 4;  // a follower asks the primary to stop the run
// A stop sample's code (its releaseNs) for a rollover's stop under a schedule manager: beside the
// StopReason values a primary sends, none of which it equals (a follower of an older version
// takes it for no reason it knows, as it does any other).
constexpr std::int64_t kStopForSwitch = 100;

constexpr std::int64_t kReannounceNs = 100'000'000;
constexpr std::int64_t kLinkSliceNs = 20'000'000;  // the link threads look at stop_ this often
constexpr std::int64_t kCatchUpNs = 1'000'000'000;
// How long a master's last word (its stopping state) waits for the others' acknowledgements: a
// live peer acknowledges within a heartbeat (Cyclone's 100 ms; at most 138 ms in the multi-SoC
// tests here), while a frozen one, or one that died within -o (still alive to DDS), never does:
// waiting a second for it kept a master whose peer failed 1.1 s past -a (issue 48).
constexpr std::int64_t kStateAckNs = 300'000'000;
// The clock exchange (a follower's questions to the primary): a follower starts once this many
// were answered, asked this often while it waits for them, then this often during the run.
constexpr std::uint64_t kClockAtStart = 3;
constexpr std::int64_t kClockAtStartEveryNs = 20'000'000;
constexpr std::int64_t kClockEveryNs = 100'000'000;

bool socOf(const Schedule& schedule, InstanceId i, std::uint32_t soc) {
  return runnableSoc(schedule, schedule.instances[i].runnable) == soc;
}

}  // namespace

void restrictPlanToSoc(RunPlan& plan, const Schedule& schedule, std::uint32_t soc) {
  auto keep = [&](std::vector<InstanceId>& list) {
    std::erase_if(list, [&](InstanceId i) { return !socOf(schedule, i, soc); });
  };
  for (HyperepochPlan& hp : plan.hyperepochs) keep(hp.instances);
  for (std::vector<InstanceId>& frame : plan.frameInstances) keep(frame);
}

SocRun::SocRun(const Schedule& schedule, const RunPlan& plan, const shm::SegmentView& view, RunControl& control,
               const SocRunOptions& options)
    : schedule_(schedule),
      plan_(plan),
      view_(view),
      control_(control),
      o_(options),
      exported_(schedule.hyperepochs.size()),
      byRunnableFrame_(instancesByRunnableFrame(schedule)),  // for the ends that arrive keyed so
      exportedIterations_(std::make_unique<std::atomic<std::uint64_t>[]>(schedule.hyperepochs.size())),
      follow_(std::make_unique<Follow[]>(schedule.hyperepochs.size())),
      unstopped_(std::make_unique<std::atomic<std::uint64_t>[]>(schedule.hyperepochs.size())) {
  // The ends to export: this SoC's instances that an instance of another SoC waits for, each
  // hyperepoch's in planned end order (the exporter waits for them one after another).
  std::vector<bool> wanted(schedule.instances.size(), false);
  for (InstanceId j : schedule.instances.ids()) {
    if (socOf(schedule, j, o_.soc)) continue;
    for (const WaitCondition& c : plan.waits[j])
      if (socOf(schedule, c.instance, o_.soc)) wanted[index(c.instance)] = true;
  }
  for (HyperepochId he : schedule.hyperepochs.ids()) {
    for (InstanceId i : plan.hyperepochs[he].instances)
      if (wanted[index(i)]) exported_[he].push_back(i);
    std::stable_sort(exported_[he].begin(), exported_[he].end(), [&](InstanceId a, InstanceId b) {
      return schedule.instances[a].endNs < schedule.instances[b].endNs;
    });
  }
}

SocRun::~SocRun() {
  if (link_) (void)link_->deliverEnds(nullptr);  // the handlers use this object
  if (link_) (void)link_->deliverReleases(nullptr);
  if (link_) (void)link_->deliverClock(nullptr);
  stop_.store(true);
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

Result<void> SocRun::open() {
  soc_link::LinkOptions lo;
  lo.domain = o_.domain;
  lo.schedule = schedule_.identifier;
  lo.soc = o_.soc;
  lo.primary = o_.primary;
  lo.livelinessNs = o_.livelinessNs;
  auto link = soc_link::Link::open(lo);
  if (!link) return fail(link.error().code, "the multi-SoC link: " + link.error().message);
  link_ = std::move(*link);
  // Ends of other SoCs go into the completion words on Cyclone's receiving thread from now on
  // (before this master is ready: a peer may start and end a runnable before this run starts).
  auto delivering = link_->deliverEnds([this](const soc_link::RemoteEnd& e) { mirrorEnd(e); });
  if (!delivering) return fail(delivering.error().code, "the multi-SoC link: " + delivering.error().message);
  // The clock exchange: the primary's link answers the followers' questions from now on; a
  // follower's answers go into its estimate (receiveClock).
  delivering = link_->deliverClock([this](const soc_link::ClockAnswer& a) { receiveClock(a); });
  if (!delivering) return fail(delivering.error().code, "the multi-SoC link: " + delivering.error().message);
  if (follower()) {
    // A follower's view of the primary's starts, kept from now on too: those written before the
    // run starts are recorded for the follow loops as any later one (receiveRelease).
    delivering = link_->deliverReleases([this](const soc_link::RemoteRelease& r) { receiveRelease(r); });
    if (!delivering) return fail(delivering.error().code, "the multi-SoC link: " + delivering.error().message);
  }
  return {};
}

std::string SocRun::socName(std::uint32_t soc) const {
  if (soc < schedule_.socs.size()) return quoted(schedule_.socs[soc].name);
  std::string name = "#";  // not "#" + std::to_string(): GCC 12 -O3 warns (-Wrestrict) on that inlined insert
  name += std::to_string(soc);
  return name;
}

bool SocRun::peersReady() {
  const std::int64_t now = ipc::monotonicNs();
  // A follower is ready once it knows the primary's clock (kClockAtStart answers, 20 ms apart; the
  // primary answers from its open() on): the primary starts as soon as every SoC is ready, and a
  // follower that said so before would start its first iteration that much behind (60 ms here).
  askClock();
  const bool clockKnown = !follower() || clockAnswers_.load() >= kClockAtStart;
  if (clockKnown && now - announcedNs_ >= kReannounceNs) {
    (void)link_->announce(kStateReady);
    announcedNs_ = now;
  }
  std::vector<bool> ready(schedule_.socs.size(), false);
  for (const soc_link::PeerState& p : link_->peers())
    if (p.soc < ready.size() && p.alive && p.state >= kStateReady) ready[p.soc] = true;
  const auto others = static_cast<std::uint32_t>(schedule_.socs.size() - 1);
  for (std::uint32_t s = 0; s < ready.size(); ++s)
    if (s != o_.soc && !ready[s]) return false;
  if (link_->matchedPeers() < others) return false;
  if (!follower()) return link_->releaseWriterMatches() >= others;
  // A follower starts with its two-way clock estimate, so the first iteration's start maps onto
  // this clock within its bound.
  return link_->releaseReaderMatches() >= 1 && clockKnown;
}

void SocRun::askClock() {
  const std::int64_t now = ipc::monotonicNs();
  // Often while the run starts (its start waits for answers), then every kClockEveryNs.
  const std::int64_t every = clockAnswers_.load() < kClockAtStart ? kClockAtStartEveryNs : kClockEveryNs;
  if (!follower() || now - clockAskedNs_ < every) return;
  clockAskedNs_ = now;
  (void)link_->askClock(++clockAsked_);
}

void SocRun::receiveClock(const soc_link::ClockAnswer& a) {
  // Another host wrote two of the four times (our own clock the other two): each checked before
  // any sum, so none can overflow; a turnaround or a round trip beyond a second is no measurement.
  constexpr std::int64_t kSecond = 1'000'000'000;
  if (a.heardNs <= 0 || a.answeredNs < a.heardNs || a.answeredNs - a.heardNs > kSecond) return;
  if (a.askedNs <= 0 || a.receivedNs < a.askedNs || a.receivedNs - a.askedNs > kSecond) return;
  const std::int64_t roundTrip = (a.receivedNs - a.askedNs) - (a.answeredNs - a.heardNs);
  if (roundTrip < 0) return;
  const std::int64_t offset = ((a.askedNs - a.heardNs) / 2) + ((a.receivedNs - a.answeredNs) / 2);
  const std::lock_guard<std::mutex> hold(clockLock_);
  const std::uint64_t n = clockAnswers_.load();
  clockWindow_[n % kClockWindow] = {offset, roundTrip};
  const ClockSample* best = &clockWindow_[0];
  for (std::size_t k = 1; k < std::min<std::uint64_t>(n + 1, kClockWindow); ++k)
    if (clockWindow_[k].roundTripNs < best->roundTripNs) best = &clockWindow_[k];
  clockBest_ = {n + 1, best->offsetNs, (best->roundTripNs + 1) / 2};
  twoWayOffsetNs_.store(best->offsetNs);
  clockAnswers_.store(n + 1, std::memory_order_release);
}

SocRun::ClockEstimate SocRun::clockEstimate() const {
  const std::lock_guard<std::mutex> hold(clockLock_);
  return clockBest_;
}

// This clock minus the primary's: the two-way estimate once there is one, else the one-way
// minimum of receive - send (it includes the link's one-way latency).
std::int64_t SocRun::offsetEstimateNs() const {
  return clockAnswers_.load(std::memory_order_acquire) > 0 ? twoWayOffsetNs_.load() : offsetNs_.load();
}

// A follower on a separate clock whose offset to the primary's is known only within more than the
// slack the schedule leaves between the SoCs (their cross-SoC latency): its iterations could start
// further from the primary's than the plan allows. Judged on a full window of answers, so one slow
// exchange does not end a run; one clock (masters on one host) has no mapping to be wrong.
std::optional<RunEnd> SocRun::clockBoundEnd() const {
  if (!follower()) return std::nullopt;
  const ClockEstimate clock = clockEstimate();
  if (clock.answers < kClockWindow || !separateClocks(clock.offsetNs)) return std::nullopt;
  // An estimate within its own bound of zero is one clock measured through a slow link (a loaded
  // host, a sanitizer build: round trips of 20 ms put it 10 ms off), not two: two hosts' monotonic
  // clocks differ by the difference of their boot times.
  if (clock.offsetNs <= clock.boundNs && clock.offsetNs >= -clock.boundNs) return std::nullopt;
  const std::int64_t slack = socLatencyNs(schedule_, o_.primary, o_.soc);
  const std::int64_t bound = clock.boundNs;
  if (slack <= 0 || bound <= slack) return std::nullopt;
  return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, kNone,
                "SoC " + socName(o_.soc) + " knows the clock of the primary SoC " + socName(o_.primary) +
                    " only within " + std::to_string((bound + 999) / 1000) +
                    " us (half the shortest round trip of its last " + std::to_string(kClockWindow) +
                    " clock exchanges), more than the " + std::to_string(slack / 1000) +
                    " us the schedule leaves between them (CrossSocLatency): its iterations could start that far from "
                    "the plan; give the link that latency in the graph, or a faster link"};
}

RunEnd SocRun::startTimeoutEnd(std::int64_t timeoutS) {
  std::vector<bool> ready(schedule_.socs.size(), false);
  for (const soc_link::PeerState& p : link_->peers())
    if (p.soc < ready.size() && p.alive && p.state >= kStateReady) ready[p.soc] = true;
  std::string missing;
  for (std::uint32_t s = 0; s < ready.size(); ++s)
    if (s != o_.soc && !ready[s]) missing += (missing.empty() ? "" : ", ") + socName(s);
  const std::string within = " within -a " + std::to_string(timeoutS) + " s";
  std::string message = "no master of SoC " + missing + " was ready" + within +
                        " (start one with tactus-master -x SOC, same schedule, same --dds-domain)";
  if (missing.empty() && follower() && link_->matchedPeers() >= schedule_.socs.size() - 1 &&
      link_->releaseReaderMatches() >= 1) {
    // Everything matched: what is missing is the clock the first iteration's start is mapped by.
    message = "the master of the primary SoC " + socName(o_.primary) + " answered " +
              std::to_string(clockAnswers_.load()) + " of the " + std::to_string(kClockAtStart) +
              " clock exchanges this SoC needs before it starts (" + std::to_string(clockAsked_) + " asked)" + within +
              ": its answers are lost on the way (a link that passes only one direction, or a primary of another "
              "tactus version)";
  } else if (missing.empty()) {
    message = "the link to the other SoCs' masters did not match both ways" + within;
  }
  return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kTimeout, kNone, message};
}

std::optional<RunEnd> SocRun::checkPeers() {
  askClock();
  if (auto end = clockBoundEnd()) return end;
  for (const soc_link::PeerState& p : link_->peers()) {
    if (p.soc == o_.soc || p.soc >= schedule_.socs.size()) continue;
    if (p.state != 0 && p.primary != o_.primary) {
      // Two primaries, or none: neither master could follow the other's frames.
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, kNone,
                    "the master of SoC " + socName(p.soc) + " takes SoC " + socName(p.primary) +
                        " for the primary, this master of SoC " + socName(o_.soc) + " takes SoC " +
                        socName(o_.primary) + ": give every master the same --primary (or none: the first SoC)"};
    }
    if (p.state == kStateStopping && p.status != 0) {
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, kNone,
                    "SoC " + socName(p.soc) + " ended the run: " + p.message};
    }
    // A peer that leaves after this primary published the run's stop is ending with it (its
    // stopping state may reach us after its liveliness ends); only a loss before is a failure.
    if (p.lost && p.state != kStateStopping && !stopSent_.load(std::memory_order_acquire)) {
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, kNone,
                    "SoC " + socName(p.soc) + " is gone: its master showed no DDS liveliness within -o " +
                        std::to_string(o_.livelinessNs / 1000) + " us"};
    }
    // A peer that ended well before this primary stopped the run asked to stop it (its stop-asked
    // state may have been written over by its stopping state before it reached us).
    const bool endedFirst = p.state == kStateStopping && p.status == 0 && !stopSent_.load(std::memory_order_acquire);
    if ((p.state == kStateStopAsked || endedFirst) && !follower()) {
      peerAskedStop_.store(true, std::memory_order_release);
      if (!o_.managed)
        control_.requestStop(shm::StopReason::kSignal, kNone);  // managed: Run stops the running schedule
    }
    // The primary ended well: its stop reaches this follower's release threads first (they then
    // end this run). Still running -o after it means the stop was lost with the primary's link;
    // a stop for a signal that did arrive is held up here by a client, which the master's grace
    // names (Run::stopBySignal), not the link.
    if (follower() && p.soc == o_.primary && p.state == kStateStopping && p.status == 0 &&
        primaryStopReason() != shm::StopReason::kSignal) {
      const std::int64_t now = ipc::monotonicNs();
      if (primaryStoppedNs_ == 0) primaryStoppedNs_ = now;
      if (now - primaryStoppedNs_ > o_.livelinessNs) {
        return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, kNone,
                      "SoC " + socName(p.soc) + " (the primary) ended its run, but its last iteration did not " +
                          "reach SoC " + socName(o_.soc) + " within -o " + std::to_string(o_.livelinessNs / 1000) +
                          " us"};
      }
    }
  }
  return std::nullopt;
}

void SocRun::start() {
  (void)link_->announce(kStateRunning);
  for (HyperepochId he : schedule_.hyperepochs.ids())
    if (!exported_[he].empty()) threads_.emplace_back([this, he] { exportLoop(he); });
}

void SocRun::requestStop() {
  if (stopAsked_ || !follower()) return;
  stopAsked_ = true;
  (void)link_->announce(kStateStopAsked);
}

void SocRun::finish(bool ok, const std::string& message, shm::StopReason reason) {
  if (ok && !follower()) {
    // A release thread that the end took out of its wait for an iteration (the grace of a stop
    // ran out) published no stop: the followers would wait for one until -o and fail.
    for (HyperepochId he : schedule_.hyperepochs.ids()) {
      const std::uint64_t next = unstopped_[index(he)].exchange(0);
      if (next != 0 && link_) (void)link_->publishRelease(index(he), next - 1, static_cast<std::int64_t>(reason), next);
    }
  }
  if (ok) {
    // Every end of the iterations this SoC completed must reach the SoCs that wait for it.
    const std::int64_t deadline = ipc::monotonicNs() + kCatchUpNs;
    for (HyperepochId he : schedule_.hyperepochs.ids()) {
      if (exported_[he].empty()) continue;
      const std::uint64_t completed = view_.hyperepoch(he).completed.load();
      while (exportedIterations_[index(he)].load() < completed && ipc::monotonicNs() < deadline)
        ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
    }
  }
  stop_.store(true);
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  if (link_) (void)link_->deliverEnds(nullptr);
  if (link_) (void)link_->deliverReleases(nullptr);
  if (!link_) return;
  // The last word: how this master ended must reach the others (a peer that discovered this link
  // only just before, as when two masters refuse each other at the start, would otherwise never
  // hear it and wait out its -a). A peer that died is no longer alive, so nothing waits for it.
  (void)link_->announce(kStateStopping, ok ? 0 : 1, message);
  (void)link_->awaitStateAcks(kStateAckNs);
}

EventRecord SocRun::offsetRecord() const {
  EventRecord r{};
  r.kind = static_cast<std::uint16_t>(EventKind::kClockOffset);
  r.instance = o_.primary;
  r.aux = o_.soc;
  const ClockEstimate clock = follower() ? clockEstimate() : ClockEstimate{};
  const std::uint64_t samples = clock.answers > 0 ? clock.answers : follower() ? offsetSamples_.load() : 0;
  r.iteration = static_cast<std::uint32_t>(std::min<std::uint64_t>(samples, 0xffffffffu));
  r.startNs = clock.answers > 0 ? clock.offsetNs : samples > 0 ? offsetNs_.load() : 0;
  r.endNs = clock.answers > 0 ? clock.boundNs : follower() ? -1 : 0;  // a one-way estimate has no known bound
  return r;
}

std::optional<EventRecord> SocRun::offsetUpdate(std::int64_t nowNs) {
  constexpr std::int64_t kEveryNs = 1'000'000'000;
  if (!follower() || nowNs - offsetRecordedNs_ < kEveryNs) return std::nullopt;
  const ClockEstimate clock = clockEstimate();
  if (clock.answers == 0 || (clock.offsetNs == offsetRecorded_.offsetNs && clock.boundNs == offsetRecorded_.boundNs))
    return std::nullopt;
  offsetRecordedNs_ = nowNs;
  offsetRecorded_ = clock;
  return offsetRecord();
}

std::string SocRun::offsetText() const {
  if (!follower()) return "";
  const ClockEstimate clock = clockEstimate();
  const std::uint64_t answers = clock.answers;
  const std::string head = "SoC " + socName(o_.soc) + ": clock offset to primary SoC " + socName(o_.primary) +
                           " estimated at " + std::to_string((answers > 0 ? clock.offsetNs : offsetNs_.load()) / 1000) +
                           " us";
  if (answers > 0) {
    return head + " within " + std::to_string((clock.boundNs + 999) / 1000) +
           " us (two-way: the shortest round trip of the last " +
           std::to_string(std::min<std::uint64_t>(answers, kClockWindow)) + " of " + std::to_string(answers) +
           " clock exchanges)";
  }
  const std::uint64_t samples = offsetSamples_.load();
  if (samples == 0) return "";
  return head + " (no clock exchange answered: the minimum of receive - send time over " + std::to_string(samples) +
         " release samples; it includes the one-way link latency)";
}

void SocRun::started(HyperepochId he, std::uint64_t iteration, std::int64_t startNs) {
  unstopped_[index(he)].store(iteration + 2);
  (void)link_->publishRelease(index(he), iteration, startNs, 0);
}

void SocRun::stopped(HyperepochId he, std::uint64_t iteration) {
  // A stop sample carries the stop's reason where a start sample carries its time: the other SoCs
  // end with the same reason (a follower at the primary's -e, or after the primary's signal).
  // Under a manager a hyperepoch stops at every switch: the run's stop is ending()'s.
  const shm::StopReason reason = control_.stopRequested() ? control_.stopReason() : shm::StopReason::kFrameLimit;
  if (!o_.managed) stopSent_.store(true, std::memory_order_release);
  unstopped_[index(he)].store(0);
  // An aborted hyperepoch's stop is the run's end, never the switch it was marked for.
  const bool forSwitch =
      o_.managed && !control_.aborted() && follow_[index(he)].switchStop.exchange(false, std::memory_order_acq_rel);
  (void)link_->publishRelease(index(he), iteration, forSwitch ? kStopForSwitch : static_cast<std::int64_t>(reason),
                              iteration + 1);
}

std::optional<std::int64_t> SocRun::startedSince(HyperepochId he, std::uint64_t iteration) const {
  const Follow& f = follow_[index(he)];
  const std::uint64_t received = f.received.load(std::memory_order_acquire);
  if (received <= iteration) return std::nullopt;
  // Written over in the ring (this SoC is kStartRing iterations behind): the earliest there is.
  if (received - iteration > kStartRing) return INT64_MIN;
  return f.startNs[iteration % kStartRing].load(std::memory_order_relaxed);
}

std::optional<std::uint64_t> SocRun::pendingStop(HyperepochId he) const {
  const Follow& f = follow_[index(he)];
  const std::uint64_t out = f.stopsOut.load(std::memory_order_acquire);
  if (out >= f.stopsIn.load(std::memory_order_acquire)) return std::nullopt;
  return f.stopIteration[out % kStopRing].load(std::memory_order_relaxed);
}

bool SocRun::consumeStop(HyperepochId he) {
  Follow& f = follow_[index(he)];
  const std::uint64_t out = f.stopsOut.load(std::memory_order_acquire);
  if (out >= f.stopsIn.load(std::memory_order_acquire)) return false;
  const bool forSwitch = f.stopForSwitch[out % kStopRing].load(std::memory_order_relaxed);
  f.stopsOut.store(out + 1, std::memory_order_release);
  return forSwitch;
}

void SocRun::setFollowing(HyperepochId he, bool following, std::atomic<std::uint32_t>* attention) {
  attention_.store(attention, std::memory_order_release);
  follow_[index(he)].parked.store(!following, std::memory_order_seq_cst);
}

std::optional<std::string> SocRun::primaryEnded() const {
  for (const soc_link::PeerState& p : link_->peers()) {
    if (p.soc == o_.primary && p.soc != o_.soc && p.state == kStateStopping && p.status == 0) return p.message;
  }
  return std::nullopt;
}

std::optional<shm::StopReason> SocRun::primaryStopReason() const {
  const std::uint32_t reason = primaryStop_.load(std::memory_order_acquire);
  if (reason == 0) return std::nullopt;
  return static_cast<shm::StopReason>(reason);
}

std::optional<std::int64_t> SocRun::awaitStart(HyperepochId he, std::uint64_t iteration) {
  Follow& f = follow_[index(he)];
  // The primary's next start is expected a hyperepoch period after the previous one (both on this
  // host's clock). Until the plan lead before it, the loop sleeps on the word; from then until the
  // cross-SoC latency and the lead past it, it polls the word and yields the core (this SoC's
  // workers may need it, and so may the DDS thread that delivers the start), so that no futex
  // wake-up of this thread lies on the release's path; then it sleeps again.
  const std::int64_t lead = ipc::planLeadNs();
  const std::int64_t period = schedule_.hyperepochs[he].periodNs;
  const std::int64_t now0 = ipc::monotonicNs();
  // The last start came from the primary (plus the offset estimate): used only when it lies
  // within a period of now, so that nothing a peer wrote can overflow the sums below.
  const bool known =
      f.lastStartNs > now0 - 2 * period && f.lastStartNs < now0 + period && iteration == f.lastIteration + 1;
  const std::int64_t expected = known ? f.lastStartNs + period : 0;
  const std::int64_t pollFrom = expected - lead;
  const std::int64_t pollUntil = expected + lead + ipc::pollLateNs(socLatencyNs(schedule_, o_.primary, o_.soc), lead);
  for (;;) {
    const std::uint32_t seen = f.word.load(std::memory_order_seq_cst);
    if (control_.aborted() || iteration >= pendingStop(he).value_or(UINT64_MAX)) return std::nullopt;
    const std::uint64_t received = f.received.load(std::memory_order_acquire);
    if (received > iteration) {
      // A start overwritten in the ring (this SoC fell kStartRing iterations behind) starts now.
      const std::int64_t start =
          received - iteration > kStartRing
              ? ipc::monotonicNs()
              : f.startNs[iteration % kStartRing].load(std::memory_order_relaxed) + offsetEstimateNs();
      f.lastStartNs = start;
      f.lastIteration = iteration;
      return start;
    }
    const std::int64_t now = ipc::monotonicNs();
    if (expected > 0 && lead > 0 && now >= pollFrom && now < pollUntil) {
      ::sched_yield();
      continue;
    }
    f.sleeping.fetch_add(1, std::memory_order_seq_cst);
    ipc::futexWait(f.word, seen,
                   expected > 0 && lead > 0 && now < pollFrom ? std::min(pollFrom - now, kLinkSliceNs) : kLinkSliceNs);
    f.sleeping.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void SocRun::receiveRelease(const soc_link::RemoteRelease& r) {
  if (r.hyperepoch >= schedule_.hyperepochs.size()) return;  // validated: it indexes follow_
  Follow& f = follow_[r.hyperepoch];
  if (r.stopAfter > 0) {
    // The reason as sent, where it is one a primary stops for; else unknown (an older primary sends 0).
    const auto reason = static_cast<shm::StopReason>(r.releaseNs);
    if (reason == shm::StopReason::kFrameLimit || reason == shm::StopReason::kExitRequested ||
        reason == shm::StopReason::kSignal)
      primaryStop_.store(static_cast<std::uint32_t>(reason), std::memory_order_release);
    // Queued: one stop per activation (the same stop twice, as after an abort, once). A full queue
    // (a follower kStopRing activations behind) drops the stop: its run ends at -o anyway.
    const std::uint64_t in = f.stopsIn.load(std::memory_order_relaxed);
    const bool again =
        in > 0 && f.stopIteration[(in - 1) % kStopRing].load(std::memory_order_relaxed) == r.stopAfter - 1;
    if (!again && in - f.stopsOut.load(std::memory_order_acquire) < kStopRing) {
      f.stopIteration[in % kStopRing].store(r.stopAfter - 1, std::memory_order_relaxed);
      f.stopForSwitch[in % kStopRing].store(r.releaseNs == kStopForSwitch, std::memory_order_relaxed);
      f.stopsIn.store(in + 1, std::memory_order_release);
    }
  } else {
    offsetNs_.store(std::min(offsetNs_.load(), r.receivedNs - r.sentNs));
    offsetSamples_.fetch_add(1);
    f.startNs[r.iteration % kStartRing].store(r.releaseNs, std::memory_order_relaxed);
    f.received.store(std::max(f.received.load(), r.iteration + 1), std::memory_order_release);
  }
  f.word.fetch_add(1, std::memory_order_seq_cst);
  if (f.sleeping.load(std::memory_order_seq_cst) != 0) ipc::futexWake(f.word);
  // Managed: a start no loop follows yet is an activation for the monitor loop to make.
  if (r.stopAfter == 0 && f.parked.load(std::memory_order_seq_cst)) {
    if (auto* word = attention_.load(std::memory_order_acquire)) ipc::signalWord(*word);
  }
}

void SocRun::mirrorEnd(const soc_link::RemoteEnd& e) {
  // Validated before use as an index: another host wrote it.
  if (e.runnable >= schedule_.runnables.size()) return;
  const RunnableId r{e.runnable};
  const InstanceId i = instanceAt(byRunnableFrame_, r, e.frame);
  if (index(i) == kNone || socOf(schedule_, i, o_.soc)) return;
  shm::InstanceSlot& slot = view_.instance(i);
  const auto target = static_cast<std::uint32_t>(e.iteration + 1);
  if (!shm::sequenceReached(slot.done.load(std::memory_order_acquire), target))
    ipc::publishSequence(slot.done, slot.waiters, target);
}

std::int64_t SocRun::expectedEndNs(InstanceId i, std::uint64_t h, std::int64_t nowNs) const {
  const InstanceInfo& info = schedule_.instances[i];
  const shm::InstanceSlot& slot = view_.instance(i);
  if (slot.started.load(std::memory_order_acquire) == static_cast<std::uint32_t>(h + 1)) {
    const std::int64_t startedNs = slot.startedNs.load(std::memory_order_relaxed);
    if (startedNs > 0 && startedNs <= nowNs) return startedNs + (info.endNs - info.startNs);
  }
  // Not started: its frame's release, extrapolated from the epoch's latest (ideal) one, plus its
  // planned end within the frame.
  const EpochId e = plan_.instanceEpoch[i];
  const EpochInfo& epoch = schedule_.epochs[e];
  const shm::EpochSlot& es = view_.epoch(e);
  const std::uint32_t released = es.released.load(std::memory_order_acquire);
  // Acquire, then `released` again: a release in between would pair a frame count with the next
  // frame's time (as the worker reads them).
  const std::int64_t lastIdeal = es.releaseNs.load(std::memory_order_acquire);
  if (es.released.load(std::memory_order_relaxed) != released) return -1;
  if (released == 0 || lastIdeal <= 0 || lastIdeal > nowNs + epoch.periodNs) return -1;  // none yet, or written over
  const std::uint64_t frames = std::max<std::uint32_t>(1, epoch.frames);
  const std::uint64_t last = released - 1;  // the latest released frame, counted over iterations
  const std::int64_t lastIterationStart = lastIdeal - static_cast<std::int64_t>(last % frames) * epoch.periodNs;
  const auto iterations = static_cast<std::int64_t>(h) - static_cast<std::int64_t>(last / frames);
  if (iterations < -1 || iterations > 1) return -1;  // far behind or ahead: no estimate worth a sleep
  return lastIterationStart + iterations * schedule_.hyperepochs[epoch.hyperepoch].periodNs + info.endNs;
}

void SocRun::exportLoop(HyperepochId he) {
  const auto aborted = [this] { return stop_.load(std::memory_order_relaxed) || control_.aborted(); };
  const std::int64_t leadNs = ipc::planLeadNs();
  ipc::SpinMeter meter;  // the exporter's polling is not logged
  for (std::uint64_t h = 0;; ++h) {
    for (const InstanceId i : exported_[he]) {
      shm::InstanceSlot& slot = view_.instance(i);
      const auto target = static_cast<std::uint32_t>(h + 1);
      // By the plan, as a worker waits for a predecessor: asleep until the lead before the
      // instance's expected end, then polling and yielding the core (which its own worker may
      // need), so that the end goes out without a futex wake-up of this thread on its path.
      const auto expected = [&](std::int64_t now) { return expectedEndNs(i, h, now); };
      if (ipc::waitForSequencePlanned(slot.done, slot.waiters, target, expected, leadNs, 0, aborted, meter,
                                      ipc::SpinStyle::kYield) != ipc::WaitOutcome::kReached)
        return;
      const InstanceInfo& info = schedule_.instances[i];
      (void)link_->publishEnd(h, info.frame, index(info.runnable), ipc::monotonicNs());
    }
    exportedIterations_[index(he)].store(h + 1);
  }
}

}  // namespace tactus::master
