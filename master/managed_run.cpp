// tactus-master with a schedule manager (-s a.tsched,b.tsched -N name): several verified
// schedules, of which the manager starts, stops and rolls over one at a time. (Above 600 lines:
// one run's composition, request handling and switching read best together.)
//
// Design
// - One segment per schedule, each a complete single-schedule layout (shm_layout.hpp): schedule 0
//   at the instance's name, schedule k at scheduleInstanceName(instance, k); the header's
//   scheduleCount/scheduleIndex say which. Every role of the one-schedule master works on a
//   schedule's segment unchanged (SegmentOwner, ClientMonitor, LogDrain, Releaser), one set per
//   schedule. Identifiers must be unique over the files (refused naming both files).
// - Clients attach every segment; a client claims its slot in each schedule that names it (the
//   union of its registrations); a client in none is refused. Every client's workers of every
//   schedule exist from enterScheduler on, sleeping on their hyperepoch's SwitchSlot::activation
//   while that hyperepoch is stopped. Nothing runs until the manager starts a schedule; with the
//   clients still coming, a start waits for them (the -t timeout still ends the run).
// - The manager talks through the ManagerChannel segment (managerInstanceName): it writes op and
//   arguments, bumps requestSeq; the master's monitor loop (2 ms, or at once through the primary's
//   attention word) hands the request to a switch thread and publishes resultSeq = requestSeq with
//   a code and a message (futex wake), so every call is synchronous. A bad request gets an error
//   and a line on the master's stderr; it never touches the running schedule. A claimed manager
//   whose process dies ends the run, named; one that detaches (tactus-manager) does not.
// - Iterations continue over activations (iteration numbers of a hyperepoch never restart), so
//   the segment's release and completion sequences only grow and no slot is ever reset.
// - Complete-swap stop: every hyperepoch's release thread stops at its next iteration boundary
//   (its current iteration finishes) and the call returns when all have stopped.
// - Rollover (start B, stop A): hyperepochs correspond when they share hardware resources, and
//   must do so one to one (else refused: the partitions differ). Per pair, independently: A's
//   hyperepoch finishes its iteration, the master waits until B's workers left their previous
//   activation, activates B's hyperepoch as a rollover (the first worker of every client in it
//   runs the switch callbacks and acknowledges), and releases B's first frame at once.
// - The event log: every record carries its schedule's identifier (EventRecord::schedule, header
//   scheduleCount = N); every start and stop is a kScheduleStart / kScheduleStop record per
//   hyperepoch, a rollover being a stop of A and a start of B naming each other.
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "client_monitor.hpp"
#include "log_drain.hpp"
#include "master.hpp"
#include "releaser.hpp"
#include "run_control.hpp"
#include "segment_owner.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

namespace {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

std::atomic<int> gManagedSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gManagedAttention{nullptr};

void onManagedSignal(int sig) {
  gManagedSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gManagedAttention.load(std::memory_order_relaxed)) ipc::signalWord(*word);
}

constexpr std::int64_t kSliceNs = 2'000'000;
constexpr std::int64_t kStartLeadNs =
    500'000;  // a plain start releases its first frame this long after the request (workers wake meanwhile)
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;
constexpr std::uint32_t kNoSchedule = 0xffffffffu;

// One loaded schedule and the master's roles acting on its segment.
struct Mode {
  RunControl control;  // first: the releaser refers to it; aborted with the run (stops are per hyperepoch)
  std::string path;
  std::string text;
  Schedule schedule;
  RunPlan plan;
  std::uint64_t contentHash = 0;
  std::unique_ptr<SegmentOwner> owner;
  std::unique_ptr<ClientMonitor> monitor;
  std::unique_ptr<LogDrain> drain;
  std::unique_ptr<Releaser> releaser;
  IdVector<HyperepochId, std::uint64_t> nextIteration;         // per hyperepoch: where its next activation starts
  IdVector<HyperepochId, std::uint32_t> activations;           // per hyperepoch: activations so far
  IdVector<HyperepochId, std::uint32_t> acksExpected;          // per hyperepoch: cumulative switch acknowledgements
  IdVector<HyperepochId, std::uint32_t> workersIn;             // per hyperepoch: workers of the plan
  IdVector<HyperepochId, std::vector<ClientId>> clientsWith;   // per hyperepoch: the clients with a worker in it
  IdVector<HyperepochId, std::set<std::string>> hardware;      // per hyperepoch: its hardware resources by name
  bool running = false;
};

// The manager's request, taken from the channel by the monitor loop.
struct Request {
  std::uint32_t seq = 0;
  ManagerOp op = ManagerOp::kNone;
  std::uint32_t arg0 = 0;
  std::uint32_t arg1 = 0;
  std::int64_t takenNs = 0;
};

struct Answer {
  ManagerResult code = ManagerResult::kOk;
  std::string message;
};

class ManagedRun {
 public:
  ManagedRun(const MasterOptions& o, std::ostream& out, std::ostream& err) : o_(o), out_(out), err_(err) {}
  ~ManagedRun();
  int execute();

 private:
  Result<void> load();
  Result<void> createChannel();
  void publishChannelResult(std::uint32_t seq, const Answer& answer);
  std::optional<RunEnd> watch(bool beforeRun);
  std::optional<RunEnd> watchManager();
  void drainAll();
  bool allEntered() const;
  int finish(const RunEnd& end);
  void endEverywhere(const RunEnd& end);
  void takeRequest();
  Answer handle(const Request& r);
  Answer start(const Request& r, Mode& mode);
  Answer stop(const Request& r, Mode& mode, std::uint32_t to);
  Answer rollover(const Request& r, Mode& from, Mode& to);
  bool activate(Mode& mode, HyperepochId he, std::int64_t startNs, std::uint32_t from, const Request& r);
  void stopHyperepoch(Mode& mode, HyperepochId he, std::uint32_t to, const Request& r);
  bool waitWord(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters, std::uint32_t target);
  Mode* byIdentifier(std::uint32_t id);
  std::string loadedList() const;
  std::string partitionProblem(const Mode& from, const Mode& to, std::vector<std::pair<HyperepochId, HyperepochId>>& pairs) const;
  void logSwitch(EventKind kind, const Mode& mode, HyperepochId he, std::uint64_t iteration, std::uint32_t other,
                 std::int64_t startNs, std::int64_t endNs);
  Mode* runningMode();

  const MasterOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  std::vector<std::unique_ptr<Mode>> modes_;
  EventLogWriter log_;
  ipc::Segment channelSegment_;
  shm::ManagerChannel* channel_ = nullptr;
  bool channelOwned_ = false;
  ipc::ProcessWatch managerWatch_;
  std::uint32_t managerPid_ = 0;
  std::atomic<bool> runEnded_{false};
  std::atomic<bool> clientsEntered_{false};
  bool runStarted_ = false;
  std::mutex switchLock_;  // guards switchEvents_ (the switch thread pushes, the monitor loop drains)
  std::vector<EventRecord> switchEvents_;
  std::thread switcher_;
  std::atomic<bool> switcherBusy_{false};
  std::uint32_t pendingSeq_ = 0;
  Answer pendingAnswer_;
  std::optional<RunEnd> exitEnd_;  // set by the switch thread for kExit
};

ManagedRun::~ManagedRun() {
  runEnded_.store(true);
  for (auto& m : modes_) m->control.abort();
  if (switcher_.joinable()) switcher_.join();
  gManagedAttention.store(nullptr);
  if (channelOwned_) ipc::removeSegment(shm::managerInstanceName(o_.instance));
}

Result<void> ManagedRun::load() {
  std::set<std::string> seenPaths;
  for (const std::string& path : o_.schedulePaths) {
    auto mode = std::make_unique<Mode>();
    mode->path = path;
    auto text = readRegularFile(path, "schedule file", kMaxScheduleFileBytes);
    if (!text) return text.error();
    mode->text = std::move(*text);
    auto schedule = readSchedule(mode->text, path, &mode->contentHash);
    if (!schedule) return schedule.error();
    mode->schedule = std::move(*schedule);
    VerifyReport report = verifySchedule(mode->schedule);
    if (!report.ok()) {
      std::string message = path + ": the schedule fails verification:";
      for (const std::string& e : report.errors) message += "\n  " + e;
      return fail(ErrorCode::kVerification, message);
    }
    auto plan = makeRunPlan(mode->schedule);
    if (!plan) return fail(plan.error().code, path + ": " + plan.error().message);
    mode->plan = std::move(*plan);
    if (mode->schedule.clients.empty()) return fail(ErrorCode::kValidation, path + ": the schedule has no clients");
    for (const auto& other : modes_) {
      if (other->schedule.identifier == mode->schedule.identifier) {
        return fail(ErrorCode::kValidation, "schedules " + quoted(other->path) + " and " + quoted(path) +
                                                " have the same identifier " +
                                                std::to_string(mode->schedule.identifier) +
                                                "; every schedule of a manager needs its own (tactus-compile --id)");
      }
    }
    const Schedule& s = mode->schedule;
    const auto hyperepochs = static_cast<std::uint32_t>(s.hyperepochs.size());
    mode->nextIteration.assign(hyperepochs, 0);
    mode->activations.assign(hyperepochs, 0);
    mode->acksExpected.assign(hyperepochs, 0);
    mode->workersIn.assign(hyperepochs, 0);
    mode->clientsWith.assign(hyperepochs, {});
    mode->hardware.assign(hyperepochs, {});
    IdVector<HyperepochId, std::set<ClientId>> clients(hyperepochs);
    for (const WorkerPlan& w : mode->plan.workers) {
      ++mode->workersIn[w.hyperepoch];
      clients[w.hyperepoch].insert(w.client);
    }
    for (HyperepochId he : s.hyperepochs.ids()) {
      mode->clientsWith[he].assign(clients[he].begin(), clients[he].end());
      for (const ResourceId r : s.hyperepochs[he].resources) {
        const ResourceInfo& res = s.resources[r];
        if (res.kind == ResourceKind::kCpu || res.kind == ResourceKind::kGpu) mode->hardware[he].insert(res.name);
      }
    }
    modes_.push_back(std::move(mode));
  }
  return {};
}

std::string ManagedRun::loadedList() const {
  std::string list;
  for (const auto& m : modes_) {
    list += (list.empty() ? "" : ", ") + std::to_string(m->schedule.identifier) + " (" + m->path + ")";
  }
  return list;
}

Mode* ManagedRun::byIdentifier(std::uint32_t id) {
  for (auto& m : modes_) {
    if (m->schedule.identifier == id) return m.get();
  }
  return nullptr;
}

Mode* ManagedRun::runningMode() {
  for (auto& m : modes_) {
    if (m->running) return m.get();
  }
  return nullptr;
}

// The manager channel's segment: a stale one (its master gone) is replaced, a live master's refused.
Result<void> ManagedRun::createChannel() {
  const std::string name = shm::managerInstanceName(o_.instance);
  auto created = ipc::Segment::create(name, sizeof(shm::ManagerChannel));
  if (!created && created.error().code == ErrorCode::kAlreadyExists) {
    auto existing = ipc::Segment::open(name);
    if (existing && existing->bytes().size() >= sizeof(shm::ManagerChannel)) {
      const auto* old = reinterpret_cast<const shm::ManagerChannel*>(existing->bytes().data());
      const std::uint32_t pid = old->masterPid.load();
      if (pid != 0 && ipc::processAlive(static_cast<pid_t>(pid), old->masterStartTime.load())) {
        return fail(ErrorCode::kAlreadyExists, "instance " + quoted(o_.instance, 256) +
                                                   " already has a running master (pid " + std::to_string(pid) + ")");
      }
    }
    err_ << "tactus-master: replacing stale manager channel " << ipc::segmentPath(name) << "\n";
    if (auto removed = ipc::unlinkSegment(name); !removed) return removed.error();
    created = ipc::Segment::create(name, sizeof(shm::ManagerChannel));
  }
  if (!created) return created.error();
  channelSegment_ = std::move(*created);
  channelOwned_ = true;
  channel_ = new (channelSegment_.bytes().data()) shm::ManagerChannel{};
  channel_->layoutVersion = shm::kLayoutVersion;
  channel_->scheduleCount = static_cast<std::uint32_t>(modes_.size());
  for (std::size_t k = 0; k < modes_.size() && k < 16; ++k) channel_->identifiers[k] = modes_[k]->schedule.identifier;
  std::memcpy(channel_->expectedName, o_.managerName.data(),
              std::min(o_.managerName.size(), shm::kManagerNameSize - 1));
  channel_->running.store(kNoSchedule);
  channel_->masterStartTime.store(ipc::processStartTime(::getpid()));
  channel_->masterPid.store(static_cast<std::uint32_t>(::getpid()), std::memory_order_release);
  channel_->magic.store(shm::kManagerMagic, std::memory_order_release);
  return {};
}

void ManagedRun::publishChannelResult(std::uint32_t seq, const Answer& answer) {
  const std::size_t n = std::min(answer.message.size(), shm::kManagerMessageSize - 1);
  std::memcpy(channel_->message, answer.message.data(), n);
  channel_->message[n] = '\0';
  channel_->resultCode.store(static_cast<std::uint32_t>(answer.code));
  channel_->resultSeq.store(seq, std::memory_order_seq_cst);
  ipc::futexWake(channel_->resultSeq);
}

std::optional<RunEnd> ManagedRun::watch(bool beforeRun) {
  for (auto& m : modes_) {
    if (auto damage = m->owner->checkDamage()) return damage;
  }
  for (auto& m : modes_) {
    if (auto end = m->monitor->check(beforeRun)) {
      end->message = "schedule " + std::to_string(m->schedule.identifier) + ": " + end->message;
      return end;
    }
  }
  return watchManager();
}

// A manager that claimed the channel and died ends the run; one that detached does not.
std::optional<RunEnd> ManagedRun::watchManager() {
  const std::uint32_t pid = channel_->managerPid.load(std::memory_order_acquire);
  if (pid != managerPid_) {
    managerPid_ = pid;
    // The start time comes from /proc, not from the channel: a second manager that tries to
    // attach writes the channel's copy before it loses the claim.
    managerWatch_ = pid == 0
                        ? ipc::ProcessWatch()
                        : ipc::ProcessWatch(static_cast<pid_t>(pid), ipc::processStartTime(static_cast<pid_t>(pid)));
  }
  if (pid != 0 && managerWatch_.exited() && channel_->managerPid.load() == pid) {
    return RunEnd{SegmentState::kAborted, StopReason::kPeerDied, kNone,
                  "the schedule manager " + quoted(o_.managerName) + " (pid " + std::to_string(pid) + ") died"};
  }
  return std::nullopt;
}

bool ManagedRun::allEntered() const {
  return std::all_of(modes_.begin(), modes_.end(), [](const auto& m) { return m->monitor->allEntered(); });
}

void ManagedRun::drainAll() {
  for (auto& m : modes_) {
    log_.setScheduleTag(m->schedule.identifier);
    if (auto failure = m->drain->drain(m->releaser->eventRings())) {
      log_.setScheduleTag(-1);
      endEverywhere(*failure);
      return;
    }
  }
  log_.setScheduleTag(-1);
  std::vector<EventRecord> events;
  {
    std::lock_guard<std::mutex> lock(switchLock_);
    events.swap(switchEvents_);
  }
  if (log_.isOpen()) log_.append(events.data(), events.size());
}

void ManagedRun::logSwitch(EventKind kind, const Mode& mode, HyperepochId he, std::uint64_t iteration,
                           std::uint32_t other, std::int64_t startNs, std::int64_t endNs) {
  std::lock_guard<std::mutex> lock(switchLock_);
  EventRecord r{static_cast<std::uint16_t>(kind), 0, index(he), static_cast<std::uint32_t>(iteration), other, startNs, endNs};
  r.schedule = mode.schedule.identifier;
  switchEvents_.push_back(r);
}

// Publishes the end in every schedule's segment, the client it names translated to each schedule.
void ManagedRun::endEverywhere(const RunEnd& end) {
  if (runEnded_.exchange(true)) return;
  std::string clientName;
  for (auto& m : modes_) {
    m->control.abort();
  }
  for (auto& m : modes_) {
    if (end.client != kNone && clientName.empty() && m->schedule.clients.contains(end.client) &&
        end.message.find(quoted(m->schedule.clients[end.client].name)) != std::string::npos) {
      clientName = m->schedule.clients[end.client].name;
    }
  }
  for (auto& m : modes_) {
    RunEnd local = end;
    local.client = kNone;
    for (ClientId c : m->schedule.clients.ids()) {
      if (!clientName.empty() && m->schedule.clients[c].name == clientName) local.client = c;
    }
    m->owner->publishEnd(local);
  }
  if (channel_ != nullptr) {
    channel_->open.store(2, std::memory_order_seq_cst);
    ipc::futexWake(channel_->open);
    ipc::futexWake(channel_->resultSeq);
  }
}

int ManagedRun::finish(const RunEnd& end) {
  endEverywhere(end);
  return end.reason == StopReason::kSignal || end.reason == StopReason::kExitRequested ? kExitOk : kExitRunFailed;
}

// Waits for a word the clients' workers count up; false when the run ended meanwhile.
bool ManagedRun::waitWord(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters, std::uint32_t target) {
  // Spins longer than a worker would: a switch waits here, and a futex wake costs tens of us.
  return ipc::waitForSequence(word, waiters, target, 200'000, [&] { return runEnded_.load(); }) ==
         ipc::WaitOutcome::kReached;
}

// Activates hyperepoch `he` of `mode`: its workers must have left the previous activation; a
// rollover (from != kNoSchedule) waits for every client's switch callbacks; then releases.
bool ManagedRun::activate(Mode& mode, HyperepochId he, std::int64_t startNs, std::uint32_t from, const Request& r) {
  const shm::SegmentView& view = mode.owner->view();
  shm::SwitchSlot& sw = view.switching(he);
  if (!waitWord(sw.left, sw.masterWaiters, mode.workersIn[he] * mode.activations[he])) return false;
  view.hyperepoch(he).stopAt.store(std::numeric_limits<std::uint64_t>::max(), std::memory_order_seq_cst);
  const std::uint32_t activation = ++mode.activations[he];
  sw.rolloverActivation.store(from != kNoSchedule ? activation : 0, std::memory_order_seq_cst);
  sw.activation.store(activation, std::memory_order_seq_cst);
  if (sw.activationWaiters.load(std::memory_order_seq_cst) != 0) ipc::futexWake(sw.activation);
  if (from != kNoSchedule) {
    // Only clients with switch callbacks acknowledge (each says so in its slot at enter).
    std::uint32_t waitFor = 0;
    for (const ClientId c : mode.clientsWith[he]) {
      if (view.client(c).switchCallbacks.load(std::memory_order_acquire) != 0) ++waitFor;
    }
    mode.acksExpected[he] += waitFor;
    if (waitFor != 0 && !waitWord(sw.acks, sw.masterWaiters, mode.acksExpected[he])) return false;
    startNs = ipc::monotonicNs();
  }
  if (mode.plan.hyperepochs[he].instances.empty()) return true;
  mode.releaser->startHyperepoch(he, startNs, mode.nextIteration[he]);
  logSwitch(EventKind::kScheduleStart, mode, he, mode.nextIteration[he], from, r.takenNs, startNs);
  return true;
}

void ManagedRun::stopHyperepoch(Mode& mode, HyperepochId he, std::uint32_t to, const Request& r) {
  if (mode.plan.hyperepochs[he].instances.empty()) return;
  mode.releaser->requestHyperepochStop(he);
  while (!mode.releaser->hyperepochFinished(he)) {
    if (runEnded_.load()) break;
    ipc::cpuRelax();  // the release thread ends within microseconds of its last instance
  }
  mode.releaser->joinHyperepoch(he);
  // Workers asleep on a release that will not come look at stopAt now rather than after their
  // sleep slice, so they leave the activation promptly.
  const shm::SegmentView& view = mode.owner->view();
  for (const EpochId e : mode.schedule.hyperepochs[he].epochs) {
    if (view.epoch(e).waiters.load() != 0) ipc::futexWake(view.epoch(e).released);
  }
  const std::uint64_t stoppedAt = mode.owner->view().hyperepoch(he).stopAt.load();
  mode.nextIteration[he] = stoppedAt;
  logSwitch(EventKind::kScheduleStop, mode, he, stoppedAt, to, r.takenNs, mode.releaser->hyperepochEndNs(he));
}

Answer ManagedRun::start(const Request& r, Mode& mode) {
  // Clients may still be coming: the start waits for them (the monitor loop ends the run at -t).
  while (!clientsEntered_.load()) {
    if (runEnded_.load()) return {ManagerResult::kRunEnded, "the run ended before the schedule started"};
    ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
  }
  const std::int64_t startNs = ipc::monotonicNs() + kStartLeadNs;
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!activate(mode, he, startNs, kNoSchedule, r)) return {ManagerResult::kRunEnded, "the run ended"};
  }
  mode.running = true;
  channel_->running.store(mode.schedule.identifier);
  return {ManagerResult::kOk, "started schedule " + std::to_string(mode.schedule.identifier)};
}

Answer ManagedRun::stop(const Request& r, Mode& mode, std::uint32_t to) {
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!mode.plan.hyperepochs[he].instances.empty()) mode.releaser->requestHyperepochStop(he);
  }
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) stopHyperepoch(mode, he, to, r);
  mode.running = false;
  channel_->running.store(kNoSchedule);
  return {ManagerResult::kOk, "stopped schedule " + std::to_string(mode.schedule.identifier)};
}

// Pairs the hyperepochs of `from` and `to` that share hardware (-1: none); "" when every
// hyperepoch shares with at most one of the other schedule's, both ways.
std::string ManagedRun::partitionProblem(const Mode& from, const Mode& to,
                                         std::vector<std::pair<HyperepochId, HyperepochId>>& pairs) const {
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

Answer ManagedRun::rollover(const Request& r, Mode& from, Mode& to) {
  std::vector<std::pair<HyperepochId, HyperepochId>> pairs;
  if (std::string problem = partitionProblem(from, to, pairs); !problem.empty()) {
    return {ManagerResult::kNotSupported, "rollover " + std::to_string(to.schedule.identifier) + " " +
                                              std::to_string(from.schedule.identifier) + " refused: " + problem};
  }
  for (const auto& [a, b] : pairs) {
    if (a != kNone && !from.plan.hyperepochs[a].instances.empty()) from.releaser->requestHyperepochStop(a);
  }
  // Each pair switches on its own: A's hyperepoch finishes its iteration, B's starts at once.
  std::vector<std::thread> threads;
  std::atomic<bool> ok{true};
  threads.reserve(pairs.size());
  for (const auto& [a, b] : pairs) {
    threads.emplace_back([&, a = a, b = b] {
      if (a != kNone) stopHyperepoch(from, a, to.schedule.identifier, r);
      if (b != kNone && !activate(to, b, ipc::monotonicNs(), from.schedule.identifier, r))
        ok.store(false);
    });
  }
  for (std::thread& t : threads) t.join();
  from.running = false;
  to.running = true;
  channel_->running.store(to.schedule.identifier);
  if (!ok.load()) return {ManagerResult::kRunEnded, "the run ended during the rollover"};
  return {ManagerResult::kOk, "rolled over from schedule " + std::to_string(from.schedule.identifier) +
                                  " to schedule " + std::to_string(to.schedule.identifier)};
}

Answer ManagedRun::handle(const Request& r) {
  auto unknown = [&](std::uint32_t id) {
    return Answer{ManagerResult::kUnknownSchedule,
                  "no schedule has identifier " + std::to_string(id) + " (loaded: " + loadedList() + ")"};
  };
  Mode* running = runningMode();
  switch (r.op) {
    case ManagerOp::kStart: {
      Mode* mode = byIdentifier(r.arg0);
      if (mode == nullptr) return unknown(r.arg0);
      if (running != nullptr) {
        return {ManagerResult::kBadState, "cannot start schedule " + std::to_string(r.arg0) + ": schedule " +
                                              std::to_string(running->schedule.identifier) +
                                              " is running (stop it, or roll over)"};
      }
      return start(r, *mode);
    }
    case ManagerOp::kStop: {
      Mode* mode = byIdentifier(r.arg0);
      if (mode == nullptr) return unknown(r.arg0);
      if (mode != running) {
        return {ManagerResult::kBadState, "cannot stop schedule " + std::to_string(r.arg0) + ": it is not running"};
      }
      return stop(r, *mode, kNoSchedule);
    }
    case ManagerOp::kRollover: {
      Mode* to = byIdentifier(r.arg0);
      Mode* from = byIdentifier(r.arg1);
      if (to == nullptr) return unknown(r.arg0);
      if (from == nullptr) return unknown(r.arg1);
      if (from != running) {
        return {ManagerResult::kBadState,
                "cannot roll over from schedule " + std::to_string(r.arg1) + ": it is not running"};
      }
      if (to == from) {
        return {ManagerResult::kBadState, "cannot roll over schedule " + std::to_string(r.arg0) + " to itself"};
      }
      return rollover(r, *from, *to);
    }
    case ManagerOp::kExit: {
      if (running != nullptr) (void)stop(r, *running, kNoSchedule);
      exitEnd_ = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, kNone,
                        "the schedule manager " + quoted(o_.managerName) + " ended the run"};
      return {ManagerResult::kOk, "the run ends"};
    }
    case ManagerOp::kStatus: return {ManagerResult::kOk, running ? "running" : "idle"};
    default:
      return {ManagerResult::kBadRequest,
              "request " + std::to_string(static_cast<std::uint32_t>(r.op)) + " is no manager operation"};
  }
}

// Takes a new request from the channel and hands it to the switch thread (one at a time).
void ManagedRun::takeRequest() {
  if (switcherBusy_.load()) return;
  if (switcher_.joinable()) {
    switcher_.join();
    if (pendingAnswer_.code != ManagerResult::kOk) {
      err_ << "tactus-master: manager request refused: " << pendingAnswer_.message << "\n";
    } else if (o_.verbose) {
      out_ << "tactus-master: " << pendingAnswer_.message << "\n";
    }
    publishChannelResult(pendingSeq_, pendingAnswer_);
    if (exitEnd_) return;
  }
  // Status words, refreshed every round.
  if (Mode* running = runningMode()) {
    std::uint64_t iterations = 0;
    std::uint64_t skipped = 0;
    for (HyperepochId he : running->schedule.hyperepochs.ids()) {
      iterations = std::max<std::uint64_t>(iterations, running->owner->view().hyperepoch(he).completed.load());
      skipped += running->owner->view().hyperepoch(he).skipped.load();
    }
    channel_->iterations.store(iterations);
    channel_->overruns.store(skipped);
  }
  const std::uint32_t seq = channel_->requestSeq.load(std::memory_order_acquire);
  if (seq == channel_->resultSeq.load() || seq == pendingSeq_) return;
  Request r;
  r.seq = seq;
  r.op = static_cast<ManagerOp>(channel_->op.load());
  r.arg0 = channel_->arg0.load();
  r.arg1 = channel_->arg1.load();
  r.takenNs = ipc::monotonicNs();
  pendingSeq_ = seq;
  if (r.op == ManagerOp::kStatus) {  // answered at once, even while the clients are coming
    pendingAnswer_ = handle(r);
    publishChannelResult(seq, pendingAnswer_);
    return;
  }
  switcherBusy_.store(true);
  switcher_ = std::thread([this, r] {
    pendingAnswer_ = handle(r);
    switcherBusy_.store(false);
    ipc::signalWord(modes_.front()->owner->view().header().attention);
  });
}

int ManagedRun::execute() {
  if (auto ok = load(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  gManagedSignal.store(0);
  struct sigaction sa {};
  sa.sa_handler = onManagedSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  // -P, -c, -M as in a run of one schedule (the release threads inherit them).
  if (const int code = setUpMasterProcess(o_, err_); code != kExitOk) return code;
  const std::uint32_t flags = (o_.allowUnregistered ? shm::kFlagAllowUnregistered : 0u) |
                              (o_.noPinning ? shm::kFlagNoPinning : 0u) | (o_.freeRunning ? shm::kFlagFreeRunning : 0u);
  for (std::uint32_t k = 0; k < modes_.size(); ++k) {
    Mode& m = *modes_[k];
    shm::LayoutCounts counts;
    counts.hyperepochs = static_cast<std::uint32_t>(m.schedule.hyperepochs.size());
    counts.epochs = static_cast<std::uint32_t>(m.schedule.epochs.size());
    counts.instances = static_cast<std::uint32_t>(m.schedule.instances.size());
    counts.clients = static_cast<std::uint32_t>(m.schedule.clients.size());
    counts.workers = static_cast<std::uint32_t>(m.plan.workers.size());
    counts.scheduleTextSize = m.text.size();
    m.owner = std::make_unique<SegmentOwner>(shm::scheduleInstanceName(o_.instance, k), err_);
    if (auto ok = m.owner->create(counts); !ok) {
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
    const shm::SegmentView& view = m.owner->view();
    m.owner->describeSchedules(static_cast<std::uint32_t>(modes_.size()), k);
    m.owner->describe(flags, m.contentHash, m.schedule.identifier, m.text);
    for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(0);
    m.monitor = std::make_unique<ClientMonitor>(view, m.schedule);
    m.drain = std::make_unique<LogDrain>(view, m.schedule, m.plan, log_);
    m.releaser = std::make_unique<Releaser>(view, m.schedule, m.plan, o_.freeRunning, m.control);
  }
  if (auto ok = createChannel(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (!o_.logPath.empty()) {
    if (auto ok = log_.open(o_.logPath, modes_.front()->schedule.identifier, modes_.front()->contentHash); !ok) {
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
    log_.setScheduleCount(static_cast<std::uint16_t>(modes_.size()));
  }
  std::atomic<std::uint32_t>& attention = modes_.front()->owner->view().header().attention;
  gManagedAttention.store(&attention);
  for (std::size_t k = modes_.size(); k-- > 0;) modes_[k]->owner->publish();  // the primary last
  channel_->open.store(1, std::memory_order_seq_cst);
  ipc::futexWake(channel_->open);
  if (o_.verbose) {
    out_ << "tactus-master: published " << modes_.size() << " schedules (" << loadedList() << ") at "
         << ipc::segmentPath(o_.instance) << "; waiting for clients and the schedule manager " << quoted(o_.managerName)
         << "\n";
  }

  const std::int64_t deadline =
      o_.timeoutUs < 0 ? std::numeric_limits<std::int64_t>::max() : ipc::monotonicNs() + o_.timeoutUs * 1000;
  std::optional<RunEnd> end;
  while (!end) {
    const std::uint32_t seen = attention.load(std::memory_order_acquire);
    drainAll();
    if (runEnded_.load()) break;
    if (gManagedSignal.load() != 0) {
      end = RunEnd{SegmentState::kFinished, StopReason::kSignal, kNone, "the master was stopped by a signal"};
      break;
    }
    if ((end = watch(!clientsEntered_.load()))) break;
    if (!clientsEntered_.load()) {
      if (allEntered()) {
        const std::int64_t now = ipc::monotonicNs();
        log_.setRunStart(now);
        for (auto& m : modes_) m->owner->startRun(now);
        runStarted_ = true;
        clientsEntered_.store(true);
      } else if (ipc::monotonicNs() >= deadline) {
        for (auto& m : modes_) {
          if (!m->monitor->allEntered()) {
            end = m->monitor->timeoutEnd(o_.timeoutUs);
            break;
          }
        }
        break;
      }
    }
    for (auto& m : modes_) {
      if (const ClientId c = m->monitor->exitRequester(); c != kNone) {
        end = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c,
                     "client " + quoted(m->monitor->name(c)) + " requested exit"};
      }
    }
    if (end) break;
    takeRequest();
    if (!switcherBusy_.load() && exitEnd_) {  // busy first: the switch thread writes exitEnd_ before it clears busy
      end = exitEnd_;
      break;
    }
    ipc::futexWait(attention, seen, kSliceNs);
  }
  int code = kExitRunFailed;
  if (end) {
    // An exit request stops the running schedule at its iteration boundary first.
    if (end->reason == StopReason::kExitRequested || end->reason == StopReason::kSignal) {
      if (!switcherBusy_.load()) {
        if (switcher_.joinable()) switcher_.join();
        if (Mode* running = runningMode()) (void)stop(Request{}, *running, kNoSchedule);
      }
    }
    code = finish(*end);
  }
  for (auto& m : modes_) m->control.abort();
  if (switcher_.joinable()) switcher_.join();
  if (pendingSeq_ != channel_->resultSeq.load() && pendingSeq_ != 0) publishChannelResult(pendingSeq_, pendingAnswer_);
  for (auto& m : modes_) m->releaser->join();
  drainAll();
  if (code != kExitOk) err_ << "tactus-master: " << modes_.front()->owner->view().message() << "\n";
  const std::int64_t leaveBy = ipc::monotonicNs() + kClientExitWaitNs;
  while (ipc::monotonicNs() < leaveBy &&
         !std::all_of(modes_.begin(), modes_.end(), [](const auto& m) { return m->monitor->allGone(); })) {
    ipc::sleepUntilNs(ipc::monotonicNs() + 2'000'000, 0);
  }
  gManagedAttention.store(nullptr);
  for (auto& m : modes_) m->owner->remove();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

}  // namespace

int runManaged(const MasterOptions& options, std::ostream& out, std::ostream& err) {
  try {
    ManagedRun run(options, out, err);
    return run.execute();
  } catch (const std::exception& e) {
    err << "tactus-master: internal error: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace tactus::master
