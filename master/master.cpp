// tactus-master's logic: the composition of the master's roles for one run (the command line is
// in master_args.cpp): load and verify the schedule, then
//
//   SegmentOwner   creates, publishes, watches for damage and removes the instance's segment
//   ClientMonitor  validates and watches every client (pid and start time kept from attach)
//   Releaser       one thread per hyperepoch releases frames on CLOCK_MONOTONIC
//   LogDrain       empties the clients' and the release threads' event rings into the log
//
// The main thread runs the monitor loop: in the plan's idle windows (idle_windows.hpp; every 2 ms
// where the plan has none, or with TACTUS_IDLE_WINDOWS=0), or when a client or a release thread
// bumps the attention word, it drains the rings, checks the segment and the clients, handles exit
// requests and signals, and names a client that makes no progress within its budget.
#include "master.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>
#include <thread>

#include "client_monitor.hpp"
#include "deploy_env.hpp"
#include "idle_windows.hpp"
#include "log_drain.hpp"
#include "notify.hpp"
#include "releaser.hpp"
#include "run_control.hpp"
#include "segment_owner.hpp"
#include "soc_run.hpp"
#include "stall_watch.hpp"
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
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;

namespace {

// Signal state shared with the async-signal handler: only lock-free atomics and a futex wake.
std::atomic<int> gSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};

void onStopSignal(int sig) {
  gSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gAttention.load(std::memory_order_relaxed)) {
    ipc::signalWord(*word);
  }
}

constexpr std::int64_t kMonitorSliceNs = 2'000'000;
constexpr std::int64_t kWaitSliceNs = 10'000'000;  // the monitor's sleep while clients come
constexpr std::int64_t kStartLeadNs = 2'000'000;   // first release this long after all clients entered
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;

// One run of the master: the composition of its roles.
class MasterRun {
 public:
  MasterRun(const MasterOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err), instance_(o.instance), owner_(o.instance, err) {}
  ~MasterRun() { gAttention.store(nullptr); }

  int execute();

 private:
  Result<void> load();
  /// -x, --primary against the schedule's SoCs; for a multi-SoC schedule, this SoC's segment name.
  Result<void> checkSoc();
  int waitForClients();
  int runFrames();
  std::optional<RunEnd> watch(bool beforeRun);
  int end(const RunEnd& end);
  void waitForClientsToLeave() const;

  const MasterOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  std::string instance_;  // the segment's instance: -D, or its SoC's (socInstanceName) in a multi-SoC run
  std::optional<SocRunOptions> socOptions_;  // a multi-SoC run's
  std::unique_ptr<SocRun> soc_;
  std::string text_;
  Schedule schedule_;
  RunPlan plan_;
  std::uint64_t contentHash_ = 0;  // of the loaded file, checked by readSchedule
  SegmentOwner owner_;
  EventLogWriter log_;
  RunControl control_;
  std::unique_ptr<ClientMonitor> monitor_;
  std::unique_ptr<LogDrain> drain_;
  std::unique_ptr<Releaser> releaser_;
  std::unique_ptr<StallWatch> stalls_;
};

Result<void> MasterRun::load() {
  auto text = readRegularFile(o_.schedulePath, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  text_ = std::move(*text);
  auto schedule = readSchedule(text_, o_.schedulePath, &contentHash_);
  if (!schedule) return schedule.error();
  schedule_ = std::move(*schedule);
  VerifyReport report = verifySchedule(schedule_);
  if (!report.ok()) {
    std::string message = o_.schedulePath + ": the schedule fails verification:";
    for (const std::string& e : report.errors) message += "\n  " + e;
    return fail(ErrorCode::kVerification, message);
  }
  if (o_.verbose) {
    for (const std::string& w : report.warnings) err_ << "tactus-master: warning: " << w << "\n";
  }
  auto plan = makeRunPlan(schedule_);
  if (!plan) return fail(plan.error().code, o_.schedulePath + ": " + plan.error().message);
  plan_ = std::move(*plan);
  if (schedule_.clients.empty()) return fail(ErrorCode::kValidation, o_.schedulePath + ": the schedule has no clients");
  return checkSoc();
}

Result<void> MasterRun::checkSoc() {
  const std::string& path = o_.schedulePath;
  if (schedule_.socs.empty()) {
    if (!o_.soc.empty() || !o_.primarySoc.empty())
      return fail(ErrorCode::kValidation, path + ": " + (o_.soc.empty() ? "--primary " : "-x ") +
                                              quoted(o_.soc.empty() ? o_.primarySoc : o_.soc) +
                                              " given, but schedule " + quoted(schedule_.name) +
                                              " has no SoCs (it runs on one machine)");
    return {};
  }
  std::string names;
  for (const SocInfo& soc : schedule_.socs) names += (names.empty() ? "" : ", ") + quoted(soc.name);
  const std::string what = "schedule " + quoted(schedule_.name) + " is a multi-SoC schedule (SoCs " + names + ")";
  if (o_.soc.empty())
    return fail(ErrorCode::kValidation, path + ": " + what + ": start one master per SoC with -x SOC");
  for (const std::string* given : {&o_.soc, &o_.primarySoc}) {
    if (given->empty()) continue;
    const bool known = std::any_of(schedule_.socs.begin(), schedule_.socs.end(),
                                   [&](const SocInfo& soc) { return soc.name == *given; });
    if (!known) {
      std::string msg = path + ": " + (given == &o_.soc ? "-x " : "--primary ") + quoted(*given);
      msg += " names no SoC of schedule " + quoted(schedule_.name);
      msg += " (its SoCs: " + names + ")";
      return fail(ErrorCode::kValidation, msg);
    }
  }
  if (!soc_link::available()) return fail(ErrorCode::kValidation, path + ": " + what + ": " + soc_link::missingText());
  SocRunOptions so;
  for (std::uint32_t k = 0; k < schedule_.socs.size(); ++k) {
    if (schedule_.socs[k].name == o_.soc) so.soc = k;
    if (schedule_.socs[k].name == o_.primarySoc) so.primary = k;
  }
  so.domain = static_cast<std::uint32_t>(o_.ddsDomain);
  so.livelinessNs = o_.socTimeoutUs * 1000;
  const bool hasClients = std::any_of(schedule_.clients.begin(), schedule_.clients.end(),
                                      [&](const ClientInfo& c) { return c.soc == so.soc; });
  if (!hasClients) return fail(ErrorCode::kValidation, path + ": SoC " + quoted(o_.soc) + " has no clients");
  instance_ = shm::socInstanceName(o_.instance, so.soc);
  if (auto ok = ipc::validateInstanceName(instance_); !ok)
    return fail(ErrorCode::kValidation,
                "-D " + quoted(o_.instance) + " is too long for SoC segment names (" + ok.error().message + ")");
  owner_.setInstance(instance_);
  // This master's release threads wait for its own SoC's instances only.
  restrictPlanToSoc(plan_, schedule_, so.soc);
  socOptions_ = so;
  if (so.soc != so.primary && o_.iterations != 0) {
    err_ << "tactus-master: warning: -e " << o_.iterations << " is ignored on SoC " << quoted(o_.soc)
         << ": the -e of the primary SoC " << quoted(schedule_.socs[so.primary].name)
         << " decides the last iteration of every SoC\n";
  }
  return {};
}

// Publishes an end the roles found and maps it to the exit code.
int MasterRun::end(const RunEnd& e) {
  owner_.publishEnd(e);
  control_.abort();
  return e.reason == StopReason::kSignal || e.reason == StopReason::kFrameLimit ||
                 e.reason == StopReason::kExitRequested
             ? kExitOk
             : kExitRunFailed;
}

// The checks of every monitor round: the segment first (a damaged one makes the rest meaningless),
// then the clients.
std::optional<RunEnd> MasterRun::watch(bool beforeRun) {
  if (auto damage = owner_.checkDamage()) return damage;
  return monitor_->check(beforeRun);
}

int MasterRun::waitForClients() {
  const std::int64_t start = ipc::monotonicNs();
  const std::int64_t deadline =
      o_.timeoutUs < 0 ? std::numeric_limits<std::int64_t>::max() : start + o_.timeoutUs * 1000;
  const std::int64_t socDeadline =
      o_.startSyncS < 0 ? std::numeric_limits<std::int64_t>::max() : start + o_.startSyncS * 1'000'000'000;
  std::atomic<std::uint32_t>& attention = owner_.view().header().attention;
  for (;;) {
    const std::uint32_t seen = attention.load(std::memory_order_acquire);
    if (gSignal.load() != 0) {
      return end({SegmentState::kFinished, StopReason::kSignal, kNone,
                  "the master was stopped by a signal before the run started"});
    }
    if (auto failure = watch(true)) return end(*failure);
    keepWatchdogAlive();  // notify.cpp: no release loop runs yet
    if (soc_) {           // a multi-SoC run: every SoC's master and clients, within -a
      if (auto failure = soc_->checkPeers()) return end(*failure);
      if (monitor_->allEntered()) {
        if (soc_->peersReady()) return -1;  // go on
        if (ipc::monotonicNs() >= socDeadline) return end(soc_->startTimeoutEnd(o_.startSyncS));
      } else if (ipc::monotonicNs() >= deadline) {
        return end(monitor_->timeoutEnd(o_.timeoutUs));
      }
      ipc::futexWait(attention, seen, kWaitSliceNs);
      continue;
    }
    if (monitor_->allEntered()) return -1;  // go on
    if (ipc::monotonicNs() >= deadline) return end(monitor_->timeoutEnd(o_.timeoutUs));
    ipc::futexWait(attention, seen, kWaitSliceNs);
  }
}

int MasterRun::runFrames() {
  shm::SegmentHeader& header = owner_.view().header();
  const std::int64_t runStartNs = ipc::monotonicNs() + kStartLeadNs;
  log_.setRunStart(runStartNs);
  owner_.startRun(runStartNs);
  if (soc_) soc_->start();
  releaser_->start(runStartNs);

  // The loop's own work (drain, checks) runs in the plan's idle windows (idle_windows.hpp), or
  // every kMonitorSliceNs where the plan has none to use; a client's attention signal wakes it at
  // once (exit requests, refusals).
  const char* windowsOn = std::getenv("TACTUS_IDLE_WINDOWS");
  const IdleWindows windows(schedule_, plan_, o_.core, owner_.view().ringCapacity(), kMonitorSliceNs,
                            windowsOn == nullptr || std::string_view(windowsOn) != "0");
  std::optional<RunEnd> failure;
  std::int64_t signalAt = 0;
  while (!releaser_->finished()) {
    const std::uint32_t seen = header.attention.load(std::memory_order_acquire);
    failure = drain_->drain(releaser_->eventRings());
    if (failure) break;
    const std::int64_t now = ipc::monotonicNs();
    if ((failure = watch(false))) break;
    if ((failure = stalls_->stuck(now))) break;
    if (soc_ && (failure = soc_->checkPeers())) break;
    if (const ClientId c = monitor_->exitRequester(); c != kNone) control_.requestStop(StopReason::kExitRequested, c);
    if (gSignal.load() != 0) {
      control_.requestStop(StopReason::kSignal, kNone);
      if (soc_) soc_->requestStop();  // a follower: the primary stops every SoC
      owner_.markStopping(StopReason::kSignal);
      if (signalAt == 0) signalAt = now;
      if (now - signalAt > kStopGraceNs) {
        // A client did not finish its iteration after the signal: end without it.
        ClientId c = kNone;
        const std::string message = "the master was stopped by a signal" + stalls_->graceText(c);
        failure = RunEnd{SegmentState::kFinished, StopReason::kSignal, c, message};
        break;
      }
    }
    if (releaser_->finished()) break;
    const std::int64_t wake = windows.nextWakeNs(runStartNs, ipc::monotonicNs());
    // A signal or a stop request must not wait for the next window: look every slice meanwhile.
    const bool stopping = gSignal.load() != 0 || control_.stopRequested();
    ipc::futexWait(header.attention, seen,
                   std::max<std::int64_t>(
                       stopping ? std::min(wake - ipc::monotonicNs(), kMonitorSliceNs) : wake - ipc::monotonicNs(), 1));
  }
  if (failure) {
    const int code = end(*failure);
    releaser_->join();
    (void)drain_->drain(releaser_->eventRings());
    return code;
  }
  releaser_->join();
  if ((failure = drain_->drain(releaser_->eventRings()))) return end(*failure);

  const StopReason reason = control_.stopRequested() ? control_.stopReason() : StopReason::kFrameLimit;
  std::string message;
  switch (reason) {
    case StopReason::kExitRequested: message = monitor_->exitText(control_.stopClient()); break;
    case StopReason::kSignal: message = "the master was stopped by a signal"; break;
    default: message = "ran " + std::to_string(releaser_->iterationsCompleted()) + " hyperepoch iterations"; break;
  }
  owner_.publishEnd(
      {SegmentState::kFinished, reason, reason == StopReason::kExitRequested ? control_.stopClient() : kNone, message});
  if (o_.verbose) {
    std::uint64_t skippedTotal = 0;
    for (HyperepochId he : schedule_.hyperepochs.ids()) {
      skippedTotal += owner_.view().hyperepoch(he).skipped.load();
    }
    out_ << "tactus-master: " << message << "; " << drain_->recordsDrained() << " events logged, "
         << drain_->droppedTotal() << " dropped, " << skippedTotal << " periods skipped\n";
  }
  return kExitOk;
}

void MasterRun::waitForClientsToLeave() const {
  const std::int64_t deadline = ipc::monotonicNs() + kClientExitWaitNs;
  while (ipc::monotonicNs() < deadline && !monitor_->allGone()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int MasterRun::execute() {
  if (auto ok = load(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (const int code = setUpMasterProcess(o_, err_); code != kExitOk) return code;

  const shm::LayoutCounts counts = layoutCounts(schedule_, plan_, text_.size());
  // Handlers go in before the segment exists: a signal between creating and cleaning up the
  // segment must reach our handler (which ends the run cleanly), not kill us and leave it behind.
  gSignal.store(0);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  if (auto ok = owner_.create(counts); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (auto ok = shareSegmentWithGroup(instance_); !ok) {  // deploy_env.cpp: TACTUS_SEGMENT_GROUP
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  const shm::SegmentView& view = owner_.view();
  shm::SegmentHeader& header = view.header();
  owner_.describe((o_.allowUnregistered ? shm::kFlagAllowUnregistered : 0u) |
                      (o_.noPinning ? shm::kFlagNoPinning : 0u) | (o_.freeRunning ? shm::kFlagFreeRunning : 0u),
                  contentHash_, schedule_.identifier, text_);
  // A follower's workers stop where the primary's stop sample says (SocRun, followLoop), never at
  // its own -e: a smaller one would stop this SoC's clients while the other SoCs wait for them.
  const bool follower = socOptions_ && socOptions_->soc != socOptions_->primary;
  const std::uint64_t limit =
      o_.iterations == 0 || follower ? std::numeric_limits<std::uint64_t>::max() : o_.iterations;
  for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(limit);
  monitor_ = std::make_unique<ClientMonitor>(view, schedule_);
  drain_ = std::make_unique<LogDrain>(view, schedule_, plan_, log_);
  // A multi-SoC run leaves its release threads unpinned: with two SoCs' masters on one machine
  // (the tests, the benchmark) pinning measured slower for the cross-SoC hand-off.
  const bool pinReleases = o_.core < 0 && !o_.noPinning && !socOptions_;
  releaser_ = std::make_unique<Releaser>(view, schedule_, plan_, o_.freeRunning, control_, pinReleases);
  stalls_ = std::make_unique<StallWatch>(schedule_, plan_, view, *releaser_, *monitor_, o_.timeoutUs);
  if (socOptions_) {  // a multi-SoC run: soc_run.hpp
    for (ClientId c : schedule_.clients.ids())
      if (schedule_.clients[c].soc != socOptions_->soc) monitor_->setRemote(c);
    soc_ = std::make_unique<SocRun>(schedule_, plan_, view, control_, *socOptions_);
    if (auto ok = soc_->open(); !ok) {
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
    releaser_->setSync(soc_.get());
  }

  // deploy_env.cpp: the earlier runs' logs kept (TACTUS_LOG_KEEP), then this run's opened.
  if (auto ok = openEventLog(log_, o_.logPath, schedule_.identifier, contentHash_); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }

  gAttention.store(&header.attention);
  owner_.publish();
  // notify.cpp: systemd's Type=notify
  notifyReady("published schedule " + schedule_.name + " on instance " + instance_ + "; waiting for clients", err_);
  if (o_.verbose) {
    out_ << "tactus-master: published schedule " << quoted(schedule_.name) << " (" << schedule_.instances.size()
         << " instances, " << schedule_.clients.size() << " clients) at " << ipc::segmentPath(instance_)
         << "; waiting for clients\n";
  }

  int code = waitForClients();
  if (code < 0) code = runFrames();
  if (code != kExitOk) err_ << "tactus-master: " << view.message() << "\n";
  if (soc_) {
    soc_->finish(code == kExitOk, view.message());
    if (const std::string offset = soc_->offsetText(); !offset.empty()) out_ << "tactus-master: " << offset << "\n";
  }
  notifyStopping(view.message());
  waitForClientsToLeave();
  // What the workers pushed on their way out: a worker queues its run records until it waits or
  // ends its iteration (client_lib's DeferredLog), so after a run that ended early the last ones
  // come when it leaves.
  if (drain_ && releaser_) (void)drain_->drain(releaser_->eventRings());
  gAttention.store(nullptr);
  owner_.remove();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

}  // namespace

int runMaster(const MasterOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.managerName.empty()) return runManaged(options, out, err);
  try {
    MasterRun run(options, out, err);
    return run.execute();
  } catch (const std::exception& e) {
    err << "tactus-master: internal error: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

int setUpMasterProcess(const MasterOptions& o, std::ostream& err) {
  if (o.priority > 0) {
    sched_param param{};
    param.sched_priority = o.priority;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      err << "tactus-master: cannot use SCHED_FIFO priority " << o.priority << ": " << std::strerror(errno)
          << " (needs CAP_SYS_NICE or an rtprio limit)\n";
      return kExitBadInput;
    }
  }
  if (o.core >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.core, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      err << "tactus-master: cannot pin to core " << o.core << ": " << std::strerror(errno) << "\n";
      return kExitBadInput;
    }
  }
  if (o.lockMemory && ::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    err << "tactus-master: cannot lock memory (-M): " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace tactus::master
