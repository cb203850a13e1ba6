// tactus-master's run (run.hpp): loading and verifying the schedules, publishing their segments,
// the monitor loop and the end of the run, for every kind of run: one schedule or several under a
// schedule manager, on one machine or one SoC of several. What a deployment needs is the same in
// each: group mode and kept event logs (deploy_env.hpp), systemd's readiness, watchdog and
// stopping (notify.hpp).
#include "run/run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>

#include "deploy/deploy_env.hpp"
#include "deploy/notify.hpp"
#include "run/run_state.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;

namespace run_detail {

// Signal state shared with the async-signal handler: only lock-free atomics and a futex wake.
std::atomic<int> gSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};

void onStopSignal(int sig) {
  gSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gAttention.load(std::memory_order_relaxed)) ipc::signalWord(*word);
}

}  // namespace run_detail

using namespace run_detail;

Run::Run(const MasterOptions& o, std::ostream& out, std::ostream& err)
    : o_(o), out_(out), err_(err), instance_(o.instance) {}

Run::~Run() {
  runEnded_.store(true);
  for (auto& m : modes_) m->control.abort();
  // The release threads first (a rollover's pairs report to the switch job on them), then the
  // activation: its switch job's thread and the manager channel.
  for (auto& m : modes_) {
    if (m->releaser) m->releaser->join();
  }
  activation_.reset();
  gAttention.store(nullptr);
}

// RunCore (run_core.hpp): what the activation asks of the core.
void Run::setRunStart(std::int64_t ns) {
  runStartNs_ = ns;
  log_.setRunStart(ns);
}

// The loop's own work (drain, checks) runs in the plan's idle windows (idle_windows.hpp), or
// every kSliceNs where the plan has none to use; a client's attention signal wakes it at once.
void Run::wakeInIdleWindows(const Mode& mode) {
  const char* windowsOn = std::getenv("TACTUS_IDLE_WINDOWS");
  windows_.emplace(mode.schedule, mode.plan, o_.core, mode.owner->view().ringCapacity(), kSliceNs,
                   windowsOn == nullptr || std::string_view(windowsOn) != "0");
}

Mode* Run::runningMode() const {
  for (const auto& m : modes_) {
    if (m->running) return m.get();
  }
  return nullptr;
}

std::string Run::loadedList() const {
  std::string list;
  for (const auto& m : modes_) {
    list += (list.empty() ? "" : ", ") + std::to_string(m->schedule.identifier) + " (" + m->path + ")";
  }
  return list;
}

const replay::SwitchScript* Run::switchScript() const {
  for (const auto& hook : hooks_)
    if (const replay::SwitchScript* script = hook->switchScript()) return script;
  return nullptr;
}

void Run::record(const EventRecord& r) {
  std::lock_guard<std::mutex> lock(switchLock_);
  switchEvents_.push_back(r);
}

// The notes of clients that cannot take part (another user's, another version, a name the
// schedule does not have): each said once on stderr, and given to the monitors, whose end for a
// client that does not come or dies before the run then says why. At most kMaxNotes kept: a
// process that sends without end is not remembered without end.
void Run::takeNotes() {
  // Each sender (its pid, from the kernel) is heard kNotesPerSender times at most, and the master
  // remembers kMaxSenders senders: a process that floods the box cannot crowd out a client's note.
  constexpr std::size_t kNotesPerSender = 8;
  constexpr std::size_t kMaxSenders = 256;
  if (!notes_) return;
  for (const ipc::Note& n : notes_->take()) {
    const std::string key = std::to_string(n.pid) + "/" + n.text;
    if (notesSeen_.contains(key)) continue;
    auto sender = notesBySender_.find(n.pid);
    if (sender == notesBySender_.end()) {
      if (notesBySender_.size() >= kMaxSenders) continue;  // said once, when the last one came in
      sender = notesBySender_.emplace(n.pid, 0).first;
      if (notesBySender_.size() == kMaxSenders)
        err_ << "tactus-master: warning: notes from " << kMaxSenders << " processes: notes of others are not shown\n";
    }
    if (sender->second >= kNotesPerSender) {
      if (sender->second++ == kNotesPerSender)
        err_ << "tactus-master: warning: further notes of pid " << n.pid << " are not shown\n";
      continue;
    }
    ++sender->second;
    notesSeen_.insert(key);
    std::vector<std::string_view> names;
    std::vector<std::pair<Mode*, ClientId>> in;  // the schedules that have the client
    for (auto& m : modes_) {
      for (const ClientInfo& c : m->schedule.clients) names.emplace_back(c.name);
      if (const ClientId c = clientIndex(m->schedule, n.client); c != kNone) in.emplace_back(m.get(), c);
    }
    std::string who =
        "client " + quoted(n.client) + " (pid " + std::to_string(n.pid) + ", uid " + std::to_string(n.uid) + ")";
    if (in.empty()) who += ", which the schedule does not have" + didYouMean(n.client, names, "its clients:");
    std::string advice;
    if (n.uid != ::geteuid() && n.uid != 0 && std::getenv("TACTUS_SEGMENT_GROUP") == nullptr) {
      advice =
          " (this master shares its segments with no group: start it with TACTUS_SEGMENT_GROUP set to a group "
          "uid " +
          std::to_string(n.uid) + " is in)";
    }
    // A warning (a name the schedule lacks) leaves the client free to go on and take part.
    const std::string text = n.warning() ? n.text.substr(std::string_view(ipc::kNoteWarning).size()) : n.text;
    if (n.warning()) {
      err_ << "tactus-master: warning: " << who << ": " << text << advice << "\n";
    } else {
      err_ << "tactus-master: " << who << " cannot take part: " << text << advice << "\n";
    }
    if (in.empty()) strangers_.append("; ").append(who).append(" tried: ").append(text);
    for (auto& [m, c] : in) m->monitor->note(c, text + advice);
  }
}

std::optional<RunEnd> Run::watch(bool beforeRun) {
  takeNotes();
  for (auto& m : modes_) {
    if (auto damage = m->owner->checkDamage()) return damage;
  }
  // With several schedules an end names the schedule it was found in.
  const auto named = [&](const Mode& m, RunEnd end) {
    if (activation_->switchesSchedules())
      end.message = "schedule " + std::to_string(m.schedule.identifier) + ": " + end.message;
    return end;
  };
  for (auto& m : modes_) {
    if (auto end = m->monitor->check(beforeRun)) {
      end = activation_->excuse(*m, *end);  // a policy may go on without a dead client
      if (!end) continue;
      return named(*m, *end);
    }
  }
  // A client that makes no progress: only a running schedule's release threads wait for one.
  const std::int64_t now = ipc::monotonicNs();
  for (auto& m : modes_) {
    if (auto end = m->stalls->stuck(now)) return named(*m, *end);
  }
  for (auto& m : modes_) {
    if (!m->soc) continue;
    if (auto end = m->soc->checkPeers()) return end;
  }
  if (soc_) {
    // A follower's log keeps its clock estimate's history (tactus-report merges on the last).
    if (const auto offset = runStarted_ && log_.isOpen() ? soc_->offsetUpdate(now) : std::nullopt)
      log_.append(&*offset, 1);
  }
  // A hook's end (run_hook.hpp): --record-required after the recording's first loss.
  for (auto& hook : hooks_) {
    if (!runStarted_) break;
    if (std::string why = hook->endNow(); !why.empty())
      return RunEnd{SegmentState::kAborted, StopReason::kError, kNone, why};
  }
  return activation_->watch();
}

// SIGTERM or SIGINT (or, multi-SoC, another SoC's master asked the primary to stop, or the primary's stop for its
// signal reached a follower): the running schedule stops at its iteration boundary; a client that does not finish its
// iteration within the grace is named and left behind. The end once the schedule stopped or the grace ran out, nothing
// meanwhile.
std::optional<RunEnd> Run::stopBySignal() {
  const std::int64_t now = ipc::monotonicNs();
  if (!runStarted_)
    return RunEnd{SegmentState::kFinished, StopReason::kSignal, kNone,
                  "the master was stopped by a signal before the run started"};
  // A follower stopped by the primary's signal: the primary's stop samples stop its hyperepochs and
  // its own end (endOfFrames, followSwitches) says so; here only the grace is kept, so that a
  // client of either SoC that holds up this SoC's last iteration is named, not the link (-o).
  const bool byPrimary = gSignal.load() == 0 && followsPrimarySignal();
  // A switch in flight owns the schedules' state until it answers (at most the grace). Read once:
  // a switch that ends between two reads would leave the schedule it started unstopped.
  const std::optional<const Mode*> inSwitch = activation_->switchInFlight();
  const bool switching = inSwitch.has_value();
  Mode* running = switching ? nullptr : runningMode();
  bool first = false;
  if (signalAtNs_ == 0) {
    signalAtNs_ = now;
    for (auto& m : modes_) m->owner->markStopping(StopReason::kSignal);
    first = true;
  }
  // Nothing to ask when the primary's signal stops this SoC: the primary stops every SoC.
  if (!byPrimary) activation_->stopForSignal(running, first);
  std::string message = "the master was stopped by a signal";
  if (byPrimary) {
    message = "the master of the primary SoC " + soc_->socName(soc_->primary()) + " was stopped by a signal";
  } else if (gSignal.load() == 0 && soc_ != nullptr && soc_->peerAskedStop()) {
    message = activation_->peerStopMessage(message);
  }
  if (!byPrimary && !switching && (running == nullptr || stopped(*running)))
    return RunEnd{SegmentState::kFinished, StopReason::kSignal, kNone, message};
  if (now - signalAtNs_ <= kStopGraceNs) return std::nullopt;
  // Whoever holds the stop up: a release thread of any schedule that still waits for a client (in
  // a switch, first the schedule it waits on: a rollover waits for the old one's last iteration),
  // else what the switch itself waits for (a client's switch callbacks, its leaving).
  ClientId c = kNone;
  std::string blocker = graceBlocker(switching ? findMode(*inSwitch) : running, c);
  if (blocker.empty() && switching) {
    std::string name;
    blocker = activation_->switchBlocker(c, name);
    if (!name.empty()) leftBehind_ = name;
  }
  // A follower that no client holds up ends as the primary's stop says (its own end comes).
  if (byPrimary && blocker.empty()) return std::nullopt;
  return RunEnd{SegmentState::kFinished, StopReason::kSignal, c, message + blocker};
}

// The run's own schedule `mode` (a switch names it const), or null.
Mode* Run::findMode(const Mode* mode) {
  for (auto& m : modes_) {
    if (m.get() == mode) return m.get();
  }
  return nullptr;
}

// The client that holds up a stop once its grace ran out ("; client 'C' did not finish runnable ...", and
// the client, who is left behind), asked of every schedule's release threads: the running one's,
// and during a switch (`running` is null then) the one it stops. "" when none waits for a client.
std::string Run::graceBlocker(Mode* running, ClientId& client) {
  std::vector<Mode*> order;
  if (running != nullptr) order.push_back(running);
  for (auto& m : modes_) {
    if (order.empty() || m.get() != order.front()) order.push_back(m.get());
  }
  for (Mode* m : order) {
    ClientId c = kNone;
    std::string text = m->stalls->graceText(c);
    if (c == kNone) continue;
    client = c;
    leftBehind_ = m->schedule.clients[c].name;
    return text;
  }
  return "";
}

bool Run::allEntered() const {
  return std::all_of(modes_.begin(), modes_.end(), [](const auto& m) { return m->monitor->allEntered(); });
}

// Empties every schedule's rings (and the switch thread's records) into the log; an end when the
// log cannot take them.
std::optional<RunEnd> Run::drainAll() {
  for (auto& m : modes_) {
    if (activation_->switchesSchedules()) log_.setScheduleTag(m->schedule.identifier);
    if (auto failure = m->drain->drain(m->releaser->eventRings())) {
      log_.setScheduleTag(-1);
      // A ring field out of range in a segment truncated (or replaced) under the master reads a
      // zero page: the segment's own damage is the cause, not the field read from it.
      if (auto damage = m->owner->checkDamage(); damage && failure->reason == StopReason::kDamaged) return damage;
      return failure;
    }
  }
  log_.setScheduleTag(-1);
  std::vector<EventRecord> events;
  {
    std::lock_guard<std::mutex> lock(switchLock_);
    events.swap(switchEvents_);
  }
  if (log_.isOpen()) log_.append(events.data(), events.size());
  // The switch history goes to the instance's own segment's statistics block (tactus-top).
  if (!modes_.empty()) modes_.front()->drain->publishStats(events.data(), events.size());
  return std::nullopt;
}

int Run::execute() {
  if (auto ok = load(); !ok) return badInput(ok.error());
  activation_ = makeActivation(*this);
  if (auto ok = activation_->check(); !ok) return badInput(ok.error());
  if (const int code = publishAll(); code != kExitOk) return code;
  return closeRun(superviseUntilEnd());
}

// Before the run: the end when the clients (or, multi-SoC, the other SoCs' masters) did not come
// in time; starts the run once all are there.
std::optional<RunEnd> Run::awaitClients(std::int64_t deadline, std::int64_t socDeadline) {
  if (!allEntered()) {
    if (ipc::monotonicNs() < deadline) return std::nullopt;
    for (auto& m : modes_) {
      if (!m->monitor->allEntered()) {
        RunEnd end = m->monitor->timeoutEnd(o_.timeoutUs);
        end.message += strangers_;
        return end;
      }
    }
  }
  // A multi-SoC run: every SoC's master and clients, within -a (each schedule's link asked every round).
  SocRun* waiting = nullptr;
  for (auto& m : modes_) {
    if (m->soc && !m->soc->peersReady() && waiting == nullptr) waiting = m->soc.get();
  }
  if (waiting != nullptr) {
    if (ipc::monotonicNs() >= socDeadline) return waiting->startTimeoutEnd(o_.startSyncS);
    return std::nullopt;
  }
  for (auto& hook : hooks_) hook->starting(modes_);  // --record's copier: from before the first release
  activation_->startRun();
  for (auto& hook : hooks_) hook->started(modes_, runStartNs_, err_);  // --replay, --record (run_hook.hpp)
  runStarted_ = true;
  clientsEntered_.store(true);
  return std::nullopt;
}

// A client's exit request: the running schedule stops at its iteration boundary while the monitor
// loop goes on watching (a client that does not finish its iteration is named stuck within -t, one
// that dies is named); then the run ends, as the activation says.
std::optional<RunEnd> Run::handleExitRequests() {
  for (auto& m : modes_) {
    const ClientId c = m->monitor->exitRequester();
    if (c == kNone) continue;
    activation_->exitRequested(*m, c);
  }
  return activation_->exitProgress();
}

// A signal to this master, or (multi-SoC) another SoC's master asked the primary to stop: both
// stop the run at its iteration boundary, within the grace.
bool Run::stoppingBySignal() const {
  if (gSignal.load() != 0 || (soc_ && soc_->peerAskedStop()) || followsPrimarySignal()) return true;
  return activation_->signalStopRequested();
}

// A follower SoC whose primary stops the run for a signal (its stop samples say so).
bool Run::followsPrimarySignal() const { return activation_->primaryStopReason() == StopReason::kSignal; }

// The stop samples of a managed multi-SoC run travel on the running schedule's link, which is
// schedule 0's only until the first rollover: every schedule's link is asked.
std::optional<StopReason> Run::linkStopReason() const {
  for (const auto& m : modes_)
    if (m->soc)
      if (const auto reason = m->soc->primaryStopReason()) return reason;
  return std::nullopt;
}

// How long the monitor loop may sleep: to the next idle window of a running schedule without a
// manager; a slice otherwise, and at most a slice while the run stops.
std::int64_t Run::sleepNs() const {
  const std::int64_t now = ipc::monotonicNs();
  if (!runStarted_) return activation_->waitSliceNs();
  if (!windows_) return kSliceNs;
  const std::int64_t wake = windows_->nextWakeNs(runStartNs_, now) - now;
  const bool stopping = stoppingBySignal() || modes_.front()->control.stopRequested();
  return std::max<std::int64_t>(stopping ? std::min(wake, kSliceNs) : wake, 1);
}

// Watches the run until it ends: clients entering (then the run starts) or failing, signals,
// exit requests, the frame limit, the manager's requests and the policy; the end (none when the
// run ended without one, e.g. by the switch thread).
std::optional<RunEnd> Run::superviseUntilEnd() {
  std::atomic<std::uint32_t>& attention = modes_.front()->owner->view().header().attention;
  const std::int64_t start = ipc::monotonicNs();
  const std::int64_t deadline =
      o_.timeoutUs < 0 ? std::numeric_limits<std::int64_t>::max() : start + o_.timeoutUs * 1000;
  const std::int64_t socDeadline =
      o_.startSyncS < 0 ? std::numeric_limits<std::int64_t>::max() : start + o_.startSyncS * 1'000'000'000;
  std::optional<RunEnd> end;
  while (!end) {
    const std::uint32_t seen = attention.load(std::memory_order_acquire);
    // The watchdog is kept here, every round, whether a schedule runs (its release threads keep
    // it too) or none does (their threads sleep on their activation).
    keepWatchdogAlive();
    if (!runEnded_.load()) activation_->answerFirst();
    if ((end = drainAll())) break;
    if (runEnded_.load()) break;
    if ((end = watch(!runStarted_))) break;
    if (!runStarted_ && (end = awaitClients(deadline, socDeadline))) break;
    if (runStarted_ && (end = handleExitRequests())) break;
    if (stoppingBySignal() && (end = stopBySignal())) break;
    if ((end = activation_->round())) break;
    ipc::futexWait(attention, seen, sleepNs());
  }
  return end;
}

}  // namespace tactus::master
