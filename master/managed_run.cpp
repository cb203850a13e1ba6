// tactus-master with a schedule manager (-s a.tsched,b.tsched -N name): loading and verifying
// the schedules, publishing their segments, the monitor loop and the end of the run (the design:
// managed_run.hpp). What a deployment needs is shared with the run of one schedule: group mode
// and kept event logs (deploy_env.hpp), systemd's readiness, watchdog and stopping (notify.hpp).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <set>

#include "deploy_env.hpp"
#include "managed_run.hpp"
#include "notify.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

namespace {

std::atomic<int> gManagedSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gManagedAttention{nullptr};

void onManagedSignal(int sig) {
  gManagedSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gManagedAttention.load(std::memory_order_relaxed)) ipc::signalWord(*word);
}

constexpr std::int64_t kSliceNs = 2'000'000;
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;
constexpr std::int64_t kSwitcherEndWaitNs = 2'000'000'000;  // how long an ending run waits for a request's answer

}  // namespace

ManagedRun::~ManagedRun() {
  runEnded_.store(true);
  for (auto& m : modes_) m->control.abort();
  stopSwitcher();
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
    if (!mode->schedule.socs.empty())
      return fail(ErrorCode::kValidation, path + ": schedule " + quoted(mode->schedule.name) +
                                              " is a multi-SoC schedule: a schedule manager (-N) runs schedules "
                                              "of one machine only");
    for (const auto& other : modes_) {
      if (other->schedule.identifier == mode->schedule.identifier) {
        // Whole paths (a path cut at quoted's default 60 bytes named neither file in a deep directory).
        return fail(ErrorCode::kValidation, "schedules " + quoted(other->path, 4096) + " and " + quoted(path, 4096) +
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

std::optional<RunEnd> ManagedRun::watch(bool beforeRun) {
  for (auto& m : modes_) {
    if (auto damage = m->owner->checkDamage()) return damage;
  }
  for (auto& m : modes_) {
    if (auto end = m->monitor->check(beforeRun)) {
      end = excuseDeadClient(*m, *end);
      if (!end) continue;
      end->message = "schedule " + std::to_string(m->schedule.identifier) + ": " + end->message;
      return end;
    }
  }
  // A client that makes no progress: only a running schedule's release threads wait for one.
  const std::int64_t now = ipc::monotonicNs();
  for (auto& m : modes_) {
    if (auto end = m->stalls->stuck(now)) {
      end->message = "schedule " + std::to_string(m->schedule.identifier) + ": " + end->message;
      return end;
    }
  }
  return watchManager();
}

// Whether every hyperepoch of `mode` has stopped (its release threads have left their loops).
bool ManagedRun::stopped(const Mode& mode) const {
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!mode.releaser->hyperepochFinished(he)) return false;
  }
  return true;
}

// SIGTERM or SIGINT: the running schedule stops at its iteration boundary, as a run of one
// schedule does; a client that does not finish its iteration within the grace is named and left
// behind. The end once the schedule stopped or the grace ran out, nothing meanwhile.
std::optional<RunEnd> ManagedRun::stopBySignal() {
  const std::int64_t now = ipc::monotonicNs();
  // A switch in flight owns the schedules' state until it answers (at most the grace).
  Mode* running = switcherBusy_.load() ? nullptr : runningMode();
  if (signalAtNs_ == 0) {
    signalAtNs_ = now;
    for (auto& m : modes_) m->owner->markStopping(StopReason::kSignal);
    if (running) {
      for (HyperepochId he : running->schedule.hyperepochs.ids()) {
        if (!running->plan.hyperepochs[he].instances.empty()) running->releaser->requestHyperepochStop(he);
      }
    }
  }
  const std::string message = "the master was stopped by a signal";
  if (!switcherBusy_.load() && (running == nullptr || stopped(*running)))
    return RunEnd{SegmentState::kFinished, StopReason::kSignal, kNone, message};
  if (now - signalAtNs_ <= kStopGraceNs) return std::nullopt;
  ClientId c = kNone;
  const std::string blocker = running != nullptr ? running->stalls->graceText(c) : "";
  return RunEnd{
      SegmentState::kFinished, StopReason::kSignal, c,
      message + (blocker.empty() ? "; a schedule switch did not end within " + humanDuration(kStopGraceNs) : blocker)};
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

// Publishes the end in every schedule's segment, the client it names translated to each schedule.
// Why the run ended ("" while it runs): ": " and the end's message, for a request's answer.
std::string ManagedRun::endedBecause() const {
  std::lock_guard<std::mutex> lock(endLock_);
  return endMessage_.empty() ? std::string() : ": " + endMessage_;
}

void ManagedRun::endEverywhere(const RunEnd& end) {
  {
    std::lock_guard<std::mutex> lock(endLock_);
    if (endMessage_.empty()) endMessage_ = end.message;
  }
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
  // A request the end cut short (its waits see the abort) is answered before the channel says
  // the run ended, so the manager learns why (e.g. the client a rollover waited for died).
  const std::int64_t answerBy = ipc::monotonicNs() + kSwitcherEndWaitNs;
  while (switcherBusy_.load() && ipc::monotonicNs() < answerBy) ipc::sleepUntilNs(ipc::monotonicNs() + 1'000'000, 0);
  (void)answerFinished();
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

int ManagedRun::execute() {
  if (auto ok = load(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (auto ok = loadPolicy(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (const int code = publishAll(); code != kExitOk) return code;
  return closeRun(superviseUntilEnd());
}

// Sets up the process (signals, -P, -c, -M), creates and describes every schedule's segment
// with its roles (monitor, drain, releaser, stall watch), the manager channel and the event log,
// then publishes them (the primary last); the exit code (kExitOk to go on).
int ManagedRun::publishAll() {
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
    const shm::LayoutCounts counts = layoutCounts(m.schedule, m.plan, m.text.size());
    const std::string segmentName = shm::scheduleInstanceName(o_.instance, k);
    m.owner = std::make_unique<SegmentOwner>(segmentName, err_);
    if (auto ok = m.owner->create(counts); !ok) {
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
    if (auto ok = shareSegmentWithGroup(segmentName); !ok) {  // deploy_env.cpp: TACTUS_SEGMENT_GROUP
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
    const shm::SegmentView& view = m.owner->view();
    m.owner->describeSchedules(static_cast<std::uint32_t>(modes_.size()), k);
    m.owner->describe(flags, m.contentHash, m.schedule.identifier, m.text);
    for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(0);
    m.monitor = std::make_unique<ClientMonitor>(view, m.schedule);
    m.drain = std::make_unique<LogDrain>(view, m.schedule, m.plan, log_);
    m.releaser =
        std::make_unique<Releaser>(view, m.schedule, m.plan, o_.freeRunning, m.control, o_.core < 0 && !o_.noPinning);
    m.stalls = std::make_unique<StallWatch>(m.schedule, m.plan, view, *m.releaser, *m.monitor, o_.timeoutUs);
  }
  if (auto ok = createChannel(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  // The manager (tactus-manager, the application's) may run as another user of the group too.
  if (auto ok = shareSegmentWithGroup(shm::managerInstanceName(o_.instance)); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  // deploy_env.cpp: the earlier runs' logs kept (TACTUS_LOG_KEEP), then this run's opened.
  if (auto ok = openEventLog(log_, o_.logPath, modes_.front()->schedule.identifier, modes_.front()->contentHash); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (log_.isOpen()) log_.setScheduleCount(static_cast<std::uint16_t>(modes_.size()));
  gManagedAttention.store(&modes_.front()->owner->view().header().attention);
  for (std::size_t k = modes_.size(); k-- > 0;) modes_[k]->owner->publish();  // the primary last
  channel_->open.store(1, std::memory_order_seq_cst);
  ipc::futexWake(channel_->open);
  // notify.cpp: systemd's Type=notify; a tactus-manager@ unit ordered After= the master starts now.
  notifyReady("published schedules " + loadedList() + " on instance " + o_.instance +
                  "; waiting for clients and the schedule manager " + quoted(o_.managerName),
              err_);
  if (o_.verbose) {
    out_ << "tactus-master: published " << modes_.size() << " schedules (" << loadedList() << ") at "
         << ipc::segmentPath(o_.instance) << "; waiting for clients and the schedule manager " << quoted(o_.managerName)
         << "\n";
  }

  return kExitOk;
}

// Watches the run until it ends: clients entering (then the run starts) or failing, signals,
// exit requests, the manager's requests and the policy; the end (none when the run ended
// without one, e.g. by the switch thread).
std::optional<RunEnd> ManagedRun::superviseUntilEnd() {
  std::atomic<std::uint32_t>& attention = modes_.front()->owner->view().header().attention;
  const std::int64_t deadline =
      o_.timeoutUs < 0 ? std::numeric_limits<std::int64_t>::max() : ipc::monotonicNs() + o_.timeoutUs * 1000;
  std::optional<RunEnd> end;
  while (!end) {
    const std::uint32_t seen = attention.load(std::memory_order_acquire);
    // The watchdog is kept here, every round (at most kSliceNs apart), whether a schedule runs
    // (its release threads keep it too) or none does (their threads sleep on their activation).
    keepWatchdogAlive();
    drainAll();
    if (runEnded_.load()) break;
    if (gManagedSignal.load() != 0 && (end = stopBySignal())) break;
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
        end = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c, m->monitor->exitText(c)};
      }
    }
    if (end) break;
    takeRequest();
    evaluatePolicy();
    if (!switcherBusy_.load() && exitEnd_) {  // busy first: the switch thread writes exitEnd_ before it clears busy
      end = exitEnd_;
      break;
    }
    ipc::futexWait(attention, seen, kSliceNs);
  }
  return end;
}

// Ends the run: stops the running schedule where the end asks for it, publishes the end, stops
// the threads, waits for the clients to leave, drains the last records and removes the
// segments; the exit code.
int ManagedRun::closeRun(const std::optional<RunEnd>& end) {
  int code = kExitRunFailed;
  if (end) {
    // A finished request is answered before the end is published: a manager that sees the run
    // ended without its answer reports a failure (the exit request itself would fail).
    const bool idle = answerFinished();
    // An exit request stops the running schedule at its iteration boundary first; after a
    // signal it has stopped already, unless the grace ran out (then nothing waits for it).
    if (idle && (end->reason == StopReason::kExitRequested || end->reason == StopReason::kSignal)) {
      Mode* running = runningMode();
      if (running && (end->reason == StopReason::kExitRequested || stopped(*running)))
        (void)stop(Request{}, *running, kNoSchedule);
    }
    code = finish(*end);
  }
  for (auto& m : modes_) m->control.abort();
  stopSwitcher();
  if (pendingSeq_ != channel_->resultSeq.load() && pendingSeq_ != 0) publishChannelResult(pendingSeq_, pendingAnswer_);
  for (auto& m : modes_) m->releaser->join();
  drainAll();
  if (code != kExitOk) err_ << "tactus-master: " << modes_.front()->owner->view().message() << "\n";
  notifyStopping(modes_.front()->owner->view().message());
  const std::int64_t leaveBy = ipc::monotonicNs() + kClientExitWaitNs;
  while (ipc::monotonicNs() < leaveBy &&
         !std::all_of(modes_.begin(), modes_.end(), [](const auto& m) { return m->monitor->allGone(); })) {
    ipc::sleepUntilNs(ipc::monotonicNs() + 2'000'000, 0);
  }
  // What the workers pushed on their way out (their queued run records, after a run that ended early).
  for (auto& m : modes_) {
    log_.setScheduleTag(m->schedule.identifier);
    (void)m->drain->drain(m->releaser->eventRings());
  }
  log_.setScheduleTag(-1);
  gManagedAttention.store(nullptr);
  for (auto& m : modes_) m->owner->remove();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

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
