// The managed run's side of the manager channel: creating it, taking requests, answering them
// (one at a time, on a switch thread) and checking them against the loaded schedules.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <thread>

#include "run/run.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;
using shm::SegmentState;
using shm::StopReason;

std::string Run::loadedList() const {
  std::string list;
  for (const auto& m : modes_) {
    list += (list.empty() ? "" : ", ") + std::to_string(m->schedule.identifier) + " (" + m->path + ")";
  }
  return list;
}

Mode* Run::byIdentifier(std::uint32_t id) {
  for (auto& m : modes_) {
    if (m->schedule.identifier == id) return m.get();
  }
  return nullptr;
}

Mode* Run::runningMode() {
  for (auto& m : modes_) {
    if (m->running) return m.get();
  }
  return nullptr;
}

// The manager channel's segment: a stale one (its master gone) is replaced, a live master's refused.
Result<void> Run::createChannel() {
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
  channelSegment_.guardAgainstTruncation();  // a manager may truncate it: the run ends, named (watchManager)
  channelOwned_ = true;
  channel_ = new (channelSegment_.bytes().data()) shm::ManagerChannel{};
  channel_->layoutVersion = shm::kLayoutVersion;
  channel_->scheduleCount = static_cast<std::uint32_t>(modes_.size());
  for (std::size_t k = 0; k < modes_.size() && k < 16; ++k) channel_->identifiers[k] = modes_[k]->schedule.identifier;
  std::memcpy(channel_->expectedName, o_.managerName.data(),
              std::min(o_.managerName.size(), shm::kManagerNameSize - 1));
  channel_->running.store(kNoSchedule);
  channelStartTime_ = ipc::processStartTime(::getpid());
  channel_->masterStartTime.store(channelStartTime_);
  channel_->masterPid.store(static_cast<std::uint32_t>(::getpid()), std::memory_order_release);
  channel_->magic.store(shm::kManagerMagic, std::memory_order_release);
  return {};
}

// Guarded as the schedule's segment is (SegmentOwner::checkDamage): its size and name, then every
// field of its identity, which only this master writes and never changes once the channel is made.
std::optional<RunEnd> Run::channelDamage() const {
  const std::string name = shm::managerInstanceName(o_.instance);
  std::string what = channelSegment_.damage(name, channelOwned_, "the master");
  if (what.empty()) {
    const shm::ManagerChannel& c = *channel_;
    std::string field;
    const std::string expected(c.expectedName, strnlen(c.expectedName, shm::kManagerNameSize));
    if (c.magic.load(std::memory_order_relaxed) != shm::kManagerMagic) field = "magic";
    else if (c.layoutVersion != shm::kLayoutVersion) field = "layoutVersion";
    else if (c.masterPid.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(::getpid())) field = "masterPid";
    else if (c.masterStartTime.load(std::memory_order_relaxed) != channelStartTime_) field = "masterStartTime";
    else if (c.scheduleCount != modes_.size()) field = "scheduleCount";
    else if (expected != o_.managerName.substr(0, shm::kManagerNameSize - 1)) field = "expectedName";
    else if (c.open.load(std::memory_order_relaxed) > 2) field = "open";
    for (std::size_t k = 0; field.empty() && k < modes_.size() && k < 16; ++k) {
      if (c.identifiers[k] != modes_[k]->schedule.identifier) field = "identifiers";
    }
    if (!field.empty()) {
      what = "field '" + field + "', which only the master (pid " + std::to_string(::getpid()) +
             ") writes, holds another value than it wrote";
    }
  }
  if (what.empty()) return std::nullopt;
  return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kDamaged, kNone,
                "the manager channel " + ipc::segmentPath(name) + " was damaged: " + what};
}

void Run::publishChannelResult(std::uint32_t seq, const Answer& answer) {
  const std::size_t n = std::min(answer.message.size(), shm::kManagerMessageSize - 1);
  std::memcpy(channel_->message, answer.message.data(), n);
  channel_->message[n] = '\0';
  channel_->resultCode.store(static_cast<std::uint32_t>(answer.code));
  channel_->resultSeq.store(seq, std::memory_order_seq_cst);
  ipc::futexWake(channel_->resultSeq);
}

Answer Run::handle(const Request& r) {
  auto unknown = [&](std::uint32_t id) {
    return Answer{ManagerResult::kUnknownSchedule,
                  "no schedule has identifier " + std::to_string(id) + " (loaded: " + loadedList() + ")"};
  };
  Mode* running = runningMode();
  switch (r.op) {
    case ManagerOp::kStart: {
      Mode* mode = byIdentifier(r.arg0);
      if (mode == nullptr) return unknown(r.arg0);
      if (const std::string dead = deadClientOf(*mode); !dead.empty()) {
        return {ManagerResult::kBadState, "cannot start schedule " + std::to_string(r.arg0) + ": it uses client " +
                                              quoted(dead) + ", which died"};
      }
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
      if (const std::string dead = deadClientOf(*to); !dead.empty()) {
        return {ManagerResult::kBadState, "cannot roll over to schedule " + std::to_string(r.arg0) +
                                              ": it uses client " + quoted(dead) + ", which died"};
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

// Joins a switch thread that has finished and publishes its answer; false while one still works.
bool Run::answerFinished() {
  if (switcherBusy_.load()) return false;
  if (answerPending_) {
    answerPending_ = false;
    if (pendingRule_ >= 0) {  // a policy rule's switch: the master's output, not the manager's channel
      const PolicyRule& rule = policy_->rules[static_cast<std::size_t>(pendingRule_)];
      pendingRule_ = -1;
      if (pendingAnswer_.code != ManagerResult::kOk) {
        err_ << "tactus-master: policy rule " << quoted(rule.name) << " could not switch: " << pendingAnswer_.message
             << "\n";
      } else {
        out_ << "tactus-master: policy rule " << quoted(rule.name) << ": " << pendingAnswer_.message << std::endl;
      }
      return true;
    }
    if (pendingAnswer_.code != ManagerResult::kOk) {
      err_ << "tactus-master: manager request refused: " << pendingAnswer_.message << "\n";
    } else if (o_.verbose) {
      out_ << "tactus-master: " << pendingAnswer_.message << "\n";
    }
    publishChannelResult(pendingSeq_, pendingAnswer_);
  }
  return true;
}

// Takes a new request from the channel and hands it to the switch thread (one at a time).
void Run::takeRequest() {
  if (!answerFinished() || exitEnd_) return;
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
  launch(r);
}

// Hands a request (the manager's, or a policy rule's) to the switch thread; it must be idle.
void Run::launch(const Request& r) {
  pendingRule_ = r.rule;
  answerPending_ = true;
  switcherBusy_.store(true);
  if (!switcher_.joinable()) switcher_ = std::thread([this] { switcherLoop(); });
  {
    std::lock_guard<std::mutex> lock(jobLock_);
    job_ = r;
  }
  jobReady_.notify_one();
}

// The switch thread: answers one request at a time until stopSwitcher (a request handed over
// before is answered first).
void Run::switcherLoop() {
  std::unique_lock<std::mutex> lock(jobLock_);
  for (;;) {
    jobReady_.wait(lock, [this] { return job_.has_value() || quitSwitcher_; });
    if (!job_) return;
    const Request r = *job_;
    job_.reset();
    lock.unlock();
    pendingAnswer_ = handle(r);
    if (r.rule >= 0) logPolicy(r, pendingAnswer_, ipc::monotonicNs());
    switcherBusy_.store(false);
    ipc::signalWord(modes_.front()->owner->view().header().attention);
    lock.lock();
  }
}

// Ends the switch thread once it has answered what it was handed.
void Run::stopSwitcher() {
  {
    std::lock_guard<std::mutex> lock(jobLock_);
    quitSwitcher_ = true;
  }
  jobReady_.notify_one();
  if (switcher_.joinable()) switcher_.join();
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

}  // namespace tactus::master
