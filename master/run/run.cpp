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

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

namespace {

// Signal state shared with the async-signal handler: only lock-free atomics and a futex wake.
std::atomic<int> gSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};

void onStopSignal(int sig) {
  gSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gAttention.load(std::memory_order_relaxed)) ipc::signalWord(*word);
}

constexpr std::int64_t kSliceNs = 2'000'000;       // the monitor loop's longest sleep (a manager's requests)
constexpr std::int64_t kWaitSliceNs = 10'000'000;  // ... while the clients come, without a manager
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;
constexpr std::int64_t kSwitcherEndWaitNs = 2'000'000'000;  // how long an ending run waits for a request's answer

}  // namespace

Run::Run(const MasterOptions& o, std::ostream& out, std::ostream& err)
    : o_(o), out_(out), err_(err), instance_(o.instance) {}

Run::~Run() {
  runEnded_.store(true);
  for (auto& m : modes_) m->control.abort();
  stopSwitcher();
  gAttention.store(nullptr);
  if (channelOwned_) ipc::removeSegment(shm::managerInstanceName(o_.instance));
}

Result<std::unique_ptr<Mode>> Run::loadMode(const std::string& path) {
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
  if (o_.verbose) {
    for (const std::string& w : report.warnings) err_ << "tactus-master: warning: " << w << "\n";
  }
  auto plan = makeRunPlan(mode->schedule);
  if (!plan) return fail(plan.error().code, path + ": " + plan.error().message);
  mode->plan = std::move(*plan);
  if (mode->schedule.clients.empty()) return fail(ErrorCode::kValidation, path + ": the schedule has no clients");
  // What schedule switching needs to know of each hyperepoch.
  const Schedule& s = mode->schedule;
  const auto hyperepochs = static_cast<std::uint32_t>(s.hyperepochs.size());
  mode->nextIteration.assign(hyperepochs, 0);
  mode->activations.assign(hyperepochs, 0);
  mode->acksExpected.assign(hyperepochs, 0);
  mode->workersIn.assign(hyperepochs, 0);
  mode->clientsWith.assign(hyperepochs, {});
  mode->hardware.assign(hyperepochs, {});
  mode->follow.assign(hyperepochs, FollowStep::kParked);
  mode->followFrom.assign(hyperepochs, kNoSchedule);
  mode->switchedAway.assign(hyperepochs, 0);
  for (HyperepochId he : s.hyperepochs.ids()) {
    for (const ResourceId r : s.hyperepochs[he].resources) {
      const ResourceInfo& res = s.resources[r];
      if (isHardware(res.kind)) mode->hardware[he].insert(res.name);  // CPUs and engines
    }
  }
  return mode;
}

Result<void> Run::load() {
  for (const std::string& path : o_.schedulePaths) {
    auto mode = loadMode(path);
    if (!mode) return mode.error();
    for (const auto& other : modes_) {
      if (other->schedule.identifier == (*mode)->schedule.identifier) {
        // Whole paths (a path cut at quoted's default 60 bytes named neither file in a deep directory).
        return fail(ErrorCode::kValidation,
                    "schedules " + quoted(other->path, 4096) + " and " + quoted(path, 4096) +
                        " have the same identifier " + std::to_string((*mode)->schedule.identifier) +
                        "; every schedule of a manager needs its own (the graph's Identifier:, 0..65535)");
      }
    }
    if (auto ok = checkSoc(**mode); !ok) return ok.error();
    countWorkers(**mode);
    modes_.push_back(std::move(*mode));
  }
  return {};
}

// What switching waits for in each hyperepoch: the workers and clients of the plan that attach to
// this master's segment (a multi-SoC schedule's other SoCs' clients count in their own SoC's).
void Run::countWorkers(Mode& mode) {
  const Schedule& s = mode.schedule;
  IdVector<HyperepochId, std::set<ClientId>> clients(s.hyperepochs.size());
  for (const WorkerPlan& w : mode.plan.workers) {
    if (socOptions_ && s.clients[w.client].soc != socOptions_->soc) continue;
    ++mode.workersIn[w.hyperepoch];
    clients[w.hyperepoch].insert(w.client);
  }
  for (HyperepochId he : s.hyperepochs.ids()) mode.clientsWith[he].assign(clients[he].begin(), clients[he].end());
}

// -x, --primary against the schedule's SoCs; for a multi-SoC schedule, this SoC's segment name
// and the plan restricted to this SoC.
Result<void> Run::checkSoc(Mode& mode) {
  const std::string& path = mode.path;
  const Schedule& s = mode.schedule;
  if (s.socs.empty()) {
    if (!o_.soc.empty() || !o_.primarySoc.empty())
      return fail(ErrorCode::kValidation, path + ": " + (o_.soc.empty() ? "--primary " : "-x ") +
                                              quoted(o_.soc.empty() ? o_.primarySoc : o_.soc) +
                                              " given, but schedule " + quoted(s.name) +
                                              " has no SoCs (it runs on one machine)");
    return {};
  }
  std::string names;
  for (const SocInfo& soc : s.socs) names += (names.empty() ? "" : ", ") + quoted(soc.name);
  // Under a manager every schedule runs on the same SoCs: the primary's switches are every SoC's.
  if (!modes_.empty()) {
    const Schedule& first = modes_.front()->schedule;
    const bool same = first.socs.size() == s.socs.size() &&
                      std::equal(s.socs.begin(), s.socs.end(), first.socs.begin(),
                                 [](const SocInfo& a, const SocInfo& b) { return a.name == b.name; });
    if (!same)
      return fail(ErrorCode::kValidation, path + ": schedule " + quoted(s.name) + " runs on SoCs " + names +
                                              ", schedule " + quoted(first.name) +
                                              " on others: every schedule of a manager needs the same SoCs");
  }
  const std::string what = "schedule " + quoted(s.name) + " is a multi-SoC schedule (SoCs " + names + ")";
  if (o_.soc.empty())
    return fail(ErrorCode::kValidation, path + ": " + what + ": start one master per SoC with -x SOC");
  for (const std::string* given : {&o_.soc, &o_.primarySoc}) {
    if (given->empty()) continue;
    const bool known =
        std::any_of(s.socs.begin(), s.socs.end(), [&](const SocInfo& soc) { return soc.name == *given; });
    if (!known) {
      std::string msg = path + ": " + (given == &o_.soc ? "-x " : "--primary ") + quoted(*given);
      msg += " names no SoC of schedule " + quoted(s.name);
      msg += " (its SoCs: " + names + ")";
      return fail(ErrorCode::kValidation, msg);
    }
  }
  if (!soc_link::available()) return fail(ErrorCode::kValidation, path + ": " + what + ": " + soc_link::missingText());
  SocRunOptions so;
  for (std::uint32_t k = 0; k < s.socs.size(); ++k) {
    if (s.socs[k].name == o_.soc) so.soc = k;
    if (s.socs[k].name == o_.primarySoc) so.primary = k;
  }
  so.domain = static_cast<std::uint32_t>(o_.ddsDomain);
  so.livelinessNs = o_.socTimeoutUs * 1000;
  so.managed = managed();
  if (so.managed && so.soc != so.primary && !o_.policyPath.empty())
    return fail(ErrorCode::kValidation, "--policy is given to the master of the primary SoC " +
                                            quoted(s.socs[so.primary].name) + " only: SoC " + quoted(o_.soc) +
                                            " follows its switches");
  const bool hasClients =
      std::any_of(s.clients.begin(), s.clients.end(), [&](const ClientInfo& c) { return c.soc == so.soc; });
  if (!hasClients) return fail(ErrorCode::kValidation, path + ": SoC " + quoted(o_.soc) + " has no clients");
  instance_ = shm::socInstanceName(o_.instance, so.soc);
  const auto last = static_cast<std::uint32_t>(o_.schedulePaths.size() - 1);
  if (auto ok = ipc::validateInstanceName(shm::scheduleInstanceName(instance_, last)); !ok)
    return fail(ErrorCode::kValidation,
                "-D " + quoted(o_.instance) + " is too long for SoC segment names (" + ok.error().message + ")");
  // This master's release threads wait for its own SoC's instances only.
  restrictPlanToSoc(mode.plan, s, so.soc);
  socOptions_ = so;
  if (so.soc != so.primary && o_.iterations != 0) {
    err_ << "tactus-master: warning: -e " << o_.iterations << " is ignored on SoC " << quoted(o_.soc)
         << ": the -e of the primary SoC " << quoted(s.socs[so.primary].name)
         << " decides the last iteration of every SoC\n";
  }
  return {};
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
    if (managed()) end.message = "schedule " + std::to_string(m.schedule.identifier) + ": " + end.message;
    return end;
  };
  for (auto& m : modes_) {
    if (auto end = m->monitor->check(beforeRun)) {
      end = excuseDeadClient(*m, *end);
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
  return takesRequests() ? watchManager() : std::nullopt;
}

// Whether every hyperepoch of `mode` has stopped (its release threads have left their loops).
bool Run::stopped(const Mode& mode) const {
  if (!managed()) return mode.releaser->finished();
  for (HyperepochId he : mode.schedule.hyperepochs.ids()) {
    if (!mode.releaser->hyperepochFinished(he)) return false;
  }
  return true;
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
  const bool switching = switcherBusy_.load();
  Mode* running = switching ? nullptr : runningMode();
  if (signalAtNs_ == 0) {
    signalAtNs_ = now;
    for (auto& m : modes_) m->owner->markStopping(StopReason::kSignal);
    if (byPrimary) {
      // Nothing to ask: the primary stops every SoC.
    } else if (!managed()) {
      running->control.requestStop(StopReason::kSignal, kNone);
      if (soc_) soc_->requestStop();  // a follower: the primary stops every SoC
    } else if (follower()) {
      soc_->requestStop();  // the primary stops the running schedule on every SoC
    } else {
      // Multi-SoC: every schedule's stop samples from now on say the signal (a switch in flight
      // may stop or abort one that is not the running one), so each follower ends as stopped.
      for (auto& m : modes_) {
        if (!m->soc) continue;
        m->soc->ending();
        m->control.requestStop(StopReason::kSignal, kNone);
      }
    }
  }
  // Under a manager the running schedule stops at its boundary: asked once it is known (a switch
  // in flight at the signal answers first, within the grace).
  if (takesRequests() && running != nullptr && running != signalStopped_) {
    signalStopped_ = running;
    // Multi-SoC: the stop samples carry the reason, so the followers' clients see the signal.
    if (running->soc) running->control.requestStop(StopReason::kSignal, kNone);
    askBoundaryStop(*running);
  }
  std::string message = "the master was stopped by a signal";
  if (byPrimary) {
    message = "the master of the primary SoC " + soc_->socName(soc_->primary()) + " was stopped by a signal";
  } else if (managed() && gSignal.load() == 0 && soc_ != nullptr && soc_->peerAskedStop()) {
    message = "another SoC's master asked to stop the run (its signal, or a client's exit request)";
  }
  if (!byPrimary && !switching && (running == nullptr || stopped(*running)))
    return RunEnd{SegmentState::kFinished, StopReason::kSignal, kNone, message};
  if (now - signalAtNs_ <= kStopGraceNs) return std::nullopt;
  // Whoever holds the stop up: a release thread of any schedule that still waits for a client (in
  // a switch, the schedule it stops; a rollover waits for that one's last iteration).
  ClientId c = kNone;
  const std::string blocker = graceBlocker(running, c);
  // A follower that no client holds up ends as the primary's stop says (its own end comes).
  if (byPrimary && blocker.empty()) return std::nullopt;
  return RunEnd{
      SegmentState::kFinished, StopReason::kSignal, c,
      message + (blocker.empty() ? "; a schedule switch did not end within " + humanDuration(kStopGraceNs) : blocker)};
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

namespace {

// Why `pid`, claimed as the schedule manager in `channel` (at `channelPath`), is no manager (""
// when it may be one): a process that does not exist, or one that has not mapped the channel (a
// genuine manager maps it before it claims). A process of another user, whose maps this master may
// not read (a manager of the segment group, or pid 1 written in), is believed only while an open of
// the channel holds its lock (a genuine manager takes it before it claims).
std::string noManager(std::uint32_t pid, const ipc::Segment& channel, const std::string& channelPath) {
  switch (ipc::processOwns(static_cast<pid_t>(pid), ipc::processStartTime(static_cast<pid_t>(pid)), channelPath)) {
    case ipc::Ownership::kGone: return "a process that is gone (a manager that died at once, or a claim written over)";
    case ipc::Ownership::kNotMapped: return "a process that has not mapped the channel (a claim written over)";
    case ipc::Ownership::kUnknown:
      if (!channel.lockHeldElsewhere(shm::kManagerLockByte))
        return "a process whose memory maps this master may not read, while no manager holds the channel's lock (a "
               "claim written over)";
      break;
    case ipc::Ownership::kMaps: break;
  }
  return "";
}

}  // namespace

// A manager that claimed the channel and died ends the run; one that detached does not. A claim no
// manager made (the channel written over by another process of the user: a dead pid, pid 1) is
// cleared, said once, so it neither ends the run nor locks out the real manager.
std::optional<RunEnd> Run::watchManager() {
  if (auto damage = channelDamage()) return damage;
  const std::uint32_t pid = channel_->managerPid.load(std::memory_order_acquire);
  if (pid != managerPid_ && pid != 0) {
    if (const std::string why =
            noManager(pid, channelSegment_, ipc::segmentPath(shm::managerInstanceName(o_.instance)));
        !why.empty()) {
      std::uint32_t claimed = pid;
      if (channel_->managerPid.compare_exchange_strong(claimed, 0, std::memory_order_acq_rel)) {
        err_ << "tactus-master: warning: the manager channel named pid " << pid << ", " << why
             << ", as its schedule manager; cleared, so the manager " << quoted(o_.managerName) << " may attach\n";
      }
      return std::nullopt;
    }
  }
  if (pid != managerPid_) {
    managerPid_ = pid;
    // Written before the pid (the claim's compare-exchange): the pid's acquire shows it.
    managerCommand_ =
        channel_->managerKind.load(std::memory_order_relaxed) == static_cast<std::uint32_t>(shm::ManagerKind::kCommand);
    // The start time comes from /proc, not from the channel: a second manager that tries to
    // attach writes the channel's copy before it loses the claim.
    managerWatch_ = pid == 0
                        ? ipc::ProcessWatch()
                        : ipc::ProcessWatch(static_cast<pid_t>(pid), ipc::processStartTime(static_cast<pid_t>(pid)));
  }
  if (pid != 0 && managerWatch_.exited() && channel_->managerPid.load() == pid) {
    if (managerCommand_) {
      // A one-shot command (tactus-manager) killed before it detached, perhaps mid-request (a
      // supervisor's time-out): its request is answered into the void, its claim dropped (the
      // kernel dropped its lock), and the run goes on. Only a manager that stays attached ends it.
      std::uint32_t claimed = pid;
      if (channel_->managerPid.compare_exchange_strong(claimed, 0, std::memory_order_acq_rel)) {
        err_ << "tactus-master: the tactus-manager command (pid " << pid
             << ") ended without detaching (killed mid-request?); its claim is dropped and the run goes on\n";
      }
      return std::nullopt;
    }
    return RunEnd{SegmentState::kAborted, StopReason::kPeerDied, kNone,
                  "the schedule manager " + quoted(o_.managerName) + " (pid " + std::to_string(pid) + ") died"};
  }
  return std::nullopt;
}

bool Run::allEntered() const {
  return std::all_of(modes_.begin(), modes_.end(), [](const auto& m) { return m->monitor->allEntered(); });
}

// Empties every schedule's rings (and the switch thread's records) into the log; an end when the
// log cannot take them.
std::optional<RunEnd> Run::drainAll() {
  for (auto& m : modes_) {
    if (managed()) log_.setScheduleTag(m->schedule.identifier);
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

// Why the run ended ("" while it runs): ": " and the end's message, for a request's answer.
std::string Run::endedBecause() const {
  std::lock_guard<std::mutex> lock(endLock_);
  return endMessage_.empty() ? std::string() : ": " + endMessage_;
}

// The name of the client `end` names ("" for none): its id belongs to the schedule whose name for it
// the message quotes.
std::string Run::clientNamed(const RunEnd& end) const {
  for (const auto& m : modes_) {
    if (end.client != kNone && m->schedule.clients.contains(end.client) &&
        end.message.find(quoted(m->schedule.clients[end.client].name)) != std::string::npos) {
      return m->schedule.clients[end.client].name;
    }
  }
  return "";
}

// Publishes the end in every schedule's segment, the client it names translated to each schedule.
void Run::endEverywhere(const RunEnd& end) {
  {
    std::lock_guard<std::mutex> lock(endLock_);
    if (endMessage_.empty()) endMessage_ = end.message;
  }
  if (runEnded_.exchange(true)) return;
  for (auto& m : modes_) m->control.abort();
  const std::string clientName = clientNamed(end);
  for (auto& m : modes_) {
    RunEnd local = end;
    if (modes_.size() > 1) {
      local.client = clientName.empty() ? kNone : clientIndex(m->schedule, clientName);
    }
    m->owner->publishEnd(local);
  }
  if (!takesRequests()) return;
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

int Run::finish(const RunEnd& end) {
  endEverywhere(end);
  return end.reason == StopReason::kSignal || end.reason == StopReason::kExitRequested ||
                 end.reason == StopReason::kFrameLimit
             ? kExitOk
             : kExitRunFailed;
}

int Run::badInput(const Error& error) {
  err_ << "tactus-master: " << error.message << "\n";
  return kExitBadInput;
}

int Run::execute() {
  if (auto ok = load(); !ok) return badInput(ok.error());
  if (auto ok = loadPolicy(); !ok) return badInput(ok.error());
  if (const int code = publishAll(); code != kExitOk) return code;
  return closeRun(superviseUntilEnd());
}

// Creates and describes schedule k's segment with its roles (monitor, drain, releaser, stall watch).
Result<void> Run::publishMode(std::uint32_t k, std::uint32_t flags) {
  Mode& m = *modes_[k];
  const shm::LayoutCounts counts = shm::layoutCounts(m.schedule, m.plan, m.text.size());
  const std::string segmentName = shm::scheduleInstanceName(instance_, k);
  m.owner = std::make_unique<SegmentOwner>(segmentName, err_);
  if (auto ok = m.owner->create(counts); !ok) return ok;
  if (auto ok = shareSegmentWithGroup(segmentName); !ok) return ok;  // deploy_env.cpp: TACTUS_SEGMENT_GROUP
  const shm::SegmentView& view = m.owner->view();
  if (managed()) m.owner->describeSchedules(static_cast<std::uint32_t>(modes_.size()), k);
  m.owner->describe(flags, m.contentHash, m.schedule.identifier, m.text);
  // Under a manager every hyperepoch waits for a start; without one it runs to -e. A follower
  // SoC's workers stop where the primary's stop sample says (SocRun, followLoop), never at its own
  // -e: a smaller one would stop this SoC's clients while the other SoCs wait for them.
  const std::uint64_t limit = managed()                          ? 0
                              : o_.iterations == 0 || follower() ? std::numeric_limits<std::uint64_t>::max()
                                                                 : o_.iterations;
  for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(limit);
  m.monitor = std::make_unique<ClientMonitor>(view, m.schedule);
  m.drain = std::make_unique<LogDrain>(view, m.schedule, m.plan, log_);
  m.overruns = std::make_unique<OverrunWatch>(m.schedule, err_);
  m.drain->setOverrunWatch(m.overruns.get());
  // A multi-SoC run leaves its release threads unpinned: with two SoCs' masters on one machine
  // (the tests, the benchmark) pinning measured slower for the cross-SoC hand-off.
  const bool pinReleases = o_.core < 0 && !o_.noPinning && !socOptions_;
  m.releaser = std::make_unique<Releaser>(view, m.schedule, m.plan, o_.freeRunning, m.control, pinReleases);
  m.stalls = std::make_unique<StallWatch>(m.schedule, m.plan, view, *m.releaser, *m.monitor, o_.timeoutUs);
  if (socOptions_) {  // a multi-SoC run: soc_run.hpp
    for (ClientId c : m.schedule.clients.ids())
      if (m.schedule.clients[c].soc != socOptions_->soc) m.monitor->setRemote(c);
    m.soc = std::make_unique<SocRun>(m.schedule, m.plan, view, m.control, *socOptions_);
    if (auto ok = m.soc->open(); !ok) return ok;
    m.releaser->setSync(m.soc.get());
    if (k == 0) soc_ = m.soc.get();
  }
  return {};
}

// Sets up the process (signals, -P, -c, -M), creates every schedule's segment with its roles,
// the manager channel and the event log, then publishes them (the primary last); the exit code
// (kExitOk to go on).
int Run::publishAll() {
  // Handlers go in before a segment exists: a signal between creating and cleaning up a segment
  // must reach our handler (which ends the run cleanly), not kill us and leave it behind.
  gSignal.store(0);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  // -P, -c, -M (the release threads inherit them).
  if (const int code = setUpMasterProcess(o_, err_); code != kExitOk) return code;
  const std::uint32_t flags = (o_.allowUnregistered ? shm::kFlagAllowUnregistered : 0u) |
                              (o_.noPinning ? shm::kFlagNoPinning : 0u) | (o_.freeRunning ? shm::kFlagFreeRunning : 0u);
  // A master killed at any instant (even while it created them) leaves nothing behind: what dead
  // masters left of this instance's group goes first, all of it, not only the names this run uses.
  for (const std::string& removed : ipc::removeDeadMastersGroup(instance_))
    err_ << "tactus-master: removed stale segment " << removed << ", left by a master that died\n";
  for (std::uint32_t k = 0; k < modes_.size(); ++k) {
    if (auto ok = publishMode(k, flags); !ok) return badInput(ok.error());
  }
  if (takesRequests()) {
    if (auto ok = createChannel(); !ok) return badInput(ok.error());
    // The manager (tactus-manager, the application's) may run as another user of the group too.
    if (auto ok = shareSegmentWithGroup(shm::managerInstanceName(o_.instance)); !ok) return badInput(ok.error());
  }
  // deploy_env.cpp: the earlier runs' logs kept (TACTUS_LOG_KEEP), then this run's opened.
  if (auto ok = openEventLog(log_, o_.logPath, modes_.front()->schedule.identifier, modes_.front()->contentHash); !ok)
    return badInput(ok.error());
  if (managed() && log_.isOpen()) log_.setScheduleCount(static_cast<std::uint16_t>(modes_.size()));
  // How this run differs from the plan, for whoever reads the log (tactus-report says it).
  log_.setRunFlags((o_.noPinning ? kRunUnpinned : 0u) | (o_.freeRunning ? kRunFreeRunning : 0u) |
                   (o_.allowUnregistered ? kRunAllowUnregistered : 0u));
  // Clients that cannot take part say why through a note (best effort: a second master of the
  // instance, refused above already, or a name held by another process leaves it out).
  if (auto box = ipc::NoteBox::open(instance_); box) {
    notes_ = std::move(*box);
  } else if (o_.verbose) {
    err_ << "tactus-master: warning: " << box.error().message << "\n";
  }
  gAttention.store(&modes_.front()->owner->view().header().attention);
  for (std::size_t k = modes_.size(); k-- > 0;) modes_[k]->owner->publish();  // the primary last
  std::string what = "schedule " + modes_.front()->schedule.name;
  if (managed()) what = "schedules " + loadedList();
  if (takesRequests()) {
    channel_->open.store(1, std::memory_order_seq_cst);
    ipc::futexWake(channel_->open);
  }
  const std::string waiting = takesRequests() ? "clients and the schedule manager " + quoted(o_.managerName)
                              : managed()     ? "clients and the switches of the primary SoC's master"
                                              : std::string("clients");
  // notify.cpp: systemd's Type=notify; a tactus-manager@ unit ordered After= the master starts now.
  notifyReady("published " + what + " on instance " + instance_ + "; waiting for " + waiting, err_);
  if (o_.verbose) {
    std::size_t instances = 0, clients = 0;
    for (const auto& m : modes_) {
      instances += m->schedule.instances.size();
      clients = std::max(clients, m->schedule.clients.size());
    }
    out_ << "tactus-master: published " << (managed() ? what : "schedule " + quoted(modes_.front()->schedule.name))
         << " (" << instances << " instances, " << clients << " clients) at " << ipc::segmentPath(instance_)
         << "; waiting for " << waiting << "\n";
  }
  return kExitOk;
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
  startRun();
  return std::nullopt;
}

// Every client has entered: under a manager the run starts and waits for the manager's first
// start; without one the schedule's first frame is released shortly.
void Run::startRun() {
  if (managed()) {
    runStartNs_ = ipc::monotonicNs();
    log_.setRunStart(runStartNs_);
    for (auto& m : modes_) {
      m->owner->startRun(runStartNs_);
      if (!m->soc) continue;
      m->soc->start();
      // A follower: the primary's starts wake the loop (but of a hyperepoch with nothing on this SoC).
      for (HyperepochId he : m->schedule.hyperepochs.ids())
        m->soc->setFollowing(he, m->plan.hyperepochs[he].instances.empty(),
                             &modes_.front()->owner->view().header().attention);
    }
  } else {
    Mode& m = *modes_.front();
    runStartNs_ = ipc::monotonicNs() + kFirstReleaseLeadNs;
    log_.setRunStart(runStartNs_);
    m.owner->startRun(runStartNs_);
    if (soc_) soc_->start();
    m.releaser->start(runStartNs_);
    m.running = true;
    // The loop's own work (drain, checks) runs in the plan's idle windows (idle_windows.hpp), or
    // every kSliceNs where the plan has none to use; a client's attention signal wakes it at once.
    const char* windowsOn = std::getenv("TACTUS_IDLE_WINDOWS");
    windows_.emplace(m.schedule, m.plan, o_.core, m.owner->view().ringCapacity(), kSliceNs,
                     windowsOn == nullptr || std::string_view(windowsOn) != "0");
  }
  runStarted_ = true;
  clientsEntered_.store(true);
}

// A client's exit request: the running schedule stops at its iteration boundary while the monitor
// loop goes on watching (a client that does not finish its iteration is named stuck within -t, one
// that dies is named); then the run ends. Without a manager endOfFrames ends it; under one
// stopForExit does.
std::optional<RunEnd> Run::handleExitRequests() {
  for (auto& m : modes_) {
    const ClientId c = m->monitor->exitRequester();
    if (c == kNone) continue;
    if (managed() && follower()) {  // the primary stops the running schedule on every SoC
      soc_->requestStop();
    } else if (!managed()) {
      m->control.requestStop(StopReason::kExitRequested, c);
    } else if (!clientExit_) {
      clientExit_ = RunEnd{SegmentState::kFinished, StopReason::kExitRequested, c, m->monitor->exitText(c)};
    }
  }
  return clientExit_ ? stopForExit() : std::nullopt;
}

// Under a manager, after a client's exit request: the running schedule is asked to stop at its
// boundary (once no switch is in flight: a switch answers first), and the end comes once it has
// stopped. (closeRun used to stop it on this thread: a frozen or dead client in its last iteration
// then held the master for good, nothing watching the clients any more.)
std::optional<RunEnd> Run::stopForExit() {
  if (switcherBusy_.load()) return std::nullopt;
  Mode* running = runningMode();
  if (running == nullptr || stopped(*running)) return clientExit_;
  if (running != exitStopped_) {
    if (exitStopped_ == nullptr) {
      for (auto& m : modes_) {
        if (m->soc) m->soc->ending();  // the other SoCs end with this one: no failure of theirs
      }
    }
    exitStopped_ = running;
    if (running->soc) running->control.requestStop(StopReason::kExitRequested, kNone);  // the followers' reason
    askBoundaryStop(*running);
  }
  return std::nullopt;
}

// Without a manager: the end once the schedule's release threads have ended (its frame limit, or
// an exit request they stopped at).
std::optional<RunEnd> Run::endOfFrames() {
  Mode& m = *modes_.front();
  if (managed() || !runStarted_ || !m.releaser->finished()) return std::nullopt;
  m.releaser->join();
  if (auto failure = drainAll()) return failure;
  const StopReason reason = m.control.stopRequested() ? m.control.stopReason() : StopReason::kFrameLimit;
  // A follower SoC's release threads end where the primary stopped, for the primary's reason.
  if (soc_ && soc_->follower() && !m.control.stopRequested()) {
    if (const auto primary = soc_->primaryStopReason(); primary && *primary != StopReason::kFrameLimit) {
      const std::string who = "the master of the primary SoC " + soc_->socName(soc_->primary());
      return RunEnd{SegmentState::kFinished, *primary, kNone,
                    *primary == StopReason::kSignal ? who + " was stopped by a signal"
                                                    : who + " stopped the run at a client's exit request"};
    }
  }
  switch (reason) {
    case StopReason::kExitRequested:
      return RunEnd{SegmentState::kFinished, reason, m.control.stopClient(),
                    m.monitor->exitText(m.control.stopClient())};
    case StopReason::kSignal:
      return RunEnd{SegmentState::kFinished, reason, kNone, "the master was stopped by a signal"};
    default:
      return RunEnd{SegmentState::kFinished, StopReason::kFrameLimit, kNone,
                    "ran " + std::to_string(m.releaser->iterationsCompleted()) + " hyperepoch iterations"};
  }
}

// A signal to this master, or (multi-SoC) another SoC's master asked the primary to stop: both
// stop the run at its iteration boundary, within the grace.
bool Run::stoppingBySignal() const {
  if (gSignal.load() != 0 || (soc_ && soc_->peerAskedStop()) || followsPrimarySignal()) return true;
  const RunControl& control = modes_.front()->control;
  return !managed() && control.stopRequested() && control.stopReason() == StopReason::kSignal;
}

// A follower SoC whose primary stops the run for a signal (its stop samples say so).
bool Run::followsPrimarySignal() const {
  return soc_ != nullptr && soc_->follower() && soc_->primaryStopReason() == StopReason::kSignal;
}

// How long the monitor loop may sleep: to the next idle window of a running schedule without a
// manager; a slice otherwise, and at most a slice while the run stops.
std::int64_t Run::sleepNs() const {
  const std::int64_t now = ipc::monotonicNs();
  if (!runStarted_) return managed() ? kSliceNs : kWaitSliceNs;
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
    if ((end = drainAll())) break;
    if (runEnded_.load()) break;
    if ((end = watch(!runStarted_))) break;
    if (!runStarted_ && (end = awaitClients(deadline, socDeadline))) break;
    if (runStarted_ && (end = handleExitRequests())) break;
    if (stoppingBySignal() && (end = stopBySignal())) break;
    if ((end = endOfFrames())) break;
    if (runStarted_ && managed() && follower() && (end = followSwitches())) break;
    if (takesRequests()) {
      takeRequest();
      evaluatePolicy();
      if (!switcherBusy_.load() && exitEnd_) {  // busy first: the switch thread writes exitEnd_ before it clears busy
        end = exitEnd_;
        break;
      }
    }
    ipc::futexWait(attention, seen, sleepNs());
  }
  return end;
}

// Waits (at most kClientExitWaitNs) for the clients to leave, but for one a stop's grace left behind
// or the end named stuck (it is frozen or hangs in a runnable: nothing it does now changes the end).
void Run::waitForClientsToLeave() {
  const std::int64_t leaveBy = ipc::monotonicNs() + kClientExitWaitNs;
  const auto gone = [&](const auto& m) { return m->monitor->allGone(clientIndex(m->schedule, leftBehind_)); };
  while (ipc::monotonicNs() < leaveBy && !std::all_of(modes_.begin(), modes_.end(), gone)) {
    ipc::sleepUntilNs(ipc::monotonicNs() + 2'000'000, 0);
  }
}

// What overran, said at the end (the first of each was said when it came); with
// --fail-on-overrun a run that overran fails. The exit code.
int Run::judgeOverruns(int code) {
  for (const auto& m : modes_) {
    const std::string summary = m->overruns->summary();
    if (summary.empty()) continue;
    err_ << "tactus-master: overruns" << (managed() ? " in schedule " + std::to_string(m->schedule.identifier) : "")
         << ": " << summary << "\n";
    if (o_.failOnOverrun && code == kExitOk) {
      err_ << "tactus-master: the run overran (--fail-on-overrun): exit status " << kExitRunFailed << "\n";
      code = kExitRunFailed;
    }
  }
  return code;
}

// The end of a run that went well: why it ended and what it logged and skipped.
void Run::reportTotals(const std::string& message) {
  std::uint64_t skipped = 0, logged = 0, dropped = 0;
  for (const auto& m : modes_) {
    for (HyperepochId he : m->schedule.hyperepochs.ids()) skipped += m->owner->view().hyperepoch(he).skipped.load();
    logged += m->drain->recordsDrained();
    dropped += m->drain->droppedTotal();
  }
  out_ << "tactus-master: " << message << "; " << logged << " events "
       << (log_.isOpen() ? "logged to " + o_.logPath : std::string("(not logged: no -l)")) << ", " << dropped
       << " dropped, " << skipped << " periods skipped ("
       << (managed() ? "schedules " + loadedList() : "schedule " + quoted(modes_.front()->schedule.name))
       << ", instance " << quoted(instance_) << ")\n";
}

// Ends the run: stops the running schedule where the end asks for it, publishes the end, stops
// the threads, waits for the clients to leave, drains the last records and removes the
// segments; the exit code.
int Run::closeRun(const std::optional<RunEnd>& end) {
  int code = kExitRunFailed;
  if (end) {
    // A finished request is answered before the end is published: a manager that sees the run
    // ended without its answer reports a failure (the exit request itself would fail).
    const bool idle = !takesRequests() || answerFinished();
    for (auto& m : modes_) {
      if (m->soc && managed()) m->soc->ending();
    }
    // Under a manager, after an exit request or a signal the running schedule has stopped at its
    // iteration boundary already (stopForExit, stopBySignal): its stop is recorded here. One that
    // has not (the grace ran out) is not waited for: the abort ends it.
    if (takesRequests() && idle && (end->reason == StopReason::kExitRequested || end->reason == StopReason::kSignal)) {
      Mode* running = runningMode();
      if (running && stopped(*running)) {
        if (running->soc) running->control.requestStop(end->reason, kNone);  // the followers' reason
        (void)stop(Request{}, *running, kNoSchedule);
      }
    }
    // The clients' outcome says what overran too (they print the end's message).
    RunEnd said = *end;
    for (const auto& m : modes_) {
      if (const std::string brief = m->overruns->summary(true); !brief.empty()) said.message += "; overruns: " + brief;
    }
    code = finish(said);
    // A client the end names stuck (frozen, or hanging in a runnable) does not leave either: it is
    // not waited for (its master lingered a second after naming it).
    if (end->reason == StopReason::kStuck && leftBehind_.empty()) leftBehind_ = clientNamed(*end);
  }
  for (auto& m : modes_) m->control.abort();
  stopSwitcher();
  if (channel_ != nullptr && pendingSeq_ != channel_->resultSeq.load() && pendingSeq_ != 0)
    publishChannelResult(pendingSeq_, pendingAnswer_);
  for (auto& m : modes_) m->releaser->join();
  (void)drainAll();
  // The end in full (the segment's copy is cut to its 255 bytes: a timeout's end with the notes of
  // strangers, say), else the segment's.
  std::string message;
  {
    const std::lock_guard<std::mutex> lock(endLock_);
    message = endMessage_;
  }
  if (message.empty()) message = modes_.front()->owner->view().message();
  // A failure, or a stop whose grace left a client behind, is said on stderr.
  if (code != kExitOk || !leftBehind_.empty()) err_ << "tactus-master: " << message << "\n";
  if (code == kExitOk) reportTotals(message);  // a run that went well says so, in one line
  for (auto& m : modes_) {
    if (m->soc) m->soc->finish(code == kExitOk, message, end ? end->reason : StopReason::kError);
  }
  if (soc_) {
    if (log_.isOpen()) {  // the clocks, for tactus-report to merge the SoCs' logs on the primary's
      const EventRecord offset = soc_->offsetRecord();
      log_.append(&offset, 1);
    }
    if (const std::string offset = soc_->offsetText(); !offset.empty()) out_ << "tactus-master: " << offset << "\n";
  }
  notifyStopping(message);
  waitForClientsToLeave();
  // What the workers pushed on their way out: a worker queues its run records until it waits or
  // ends its iteration (client_lib's DeferredLog), so after a run that ended early the last ones
  // come when it leaves.
  (void)drainAll();
  code = judgeOverruns(code);
  gAttention.store(nullptr);
  for (auto& m : modes_) m->owner->remove();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

}  // namespace tactus::master
