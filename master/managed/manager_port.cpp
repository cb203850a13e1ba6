// The manager port (manager_port.hpp): the channel's segment, its guard, the requests and answers,
// and the manager that claimed it.
#include "managed/manager_port.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "run/mode.hpp"  // kNoSchedule
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::SegmentState;
using shm::StopReason;

ManagerPort::ManagerPort(std::string instance, std::string managerName, std::ostream& err)
    : instance_(std::move(instance)), managerName_(std::move(managerName)), err_(err) {}

ManagerPort::~ManagerPort() {
  if (owned_) ipc::removeSegment(shm::managerInstanceName(instance_));
}

// The manager channel's segment: a stale one (its master gone) is replaced, a live master's refused.
Result<void> ManagerPort::create(const std::vector<std::uint32_t>& identifiers) {
  identifiers_ = identifiers;
  const std::string name = shm::managerInstanceName(instance_);
  auto created = ipc::Segment::create(name, sizeof(shm::ManagerChannel));
  if (!created && created.error().code == ErrorCode::kAlreadyExists) {
    auto existing = ipc::Segment::open(name);
    if (existing && existing->bytes().size() >= sizeof(shm::ManagerChannel)) {
      const auto* old = reinterpret_cast<const shm::ManagerChannel*>(existing->bytes().data());
      const std::uint32_t pid = old->masterPid.load();
      if (pid != 0 && ipc::processAlive(static_cast<pid_t>(pid), old->masterStartTime.load())) {
        return fail(ErrorCode::kAlreadyExists, "instance " + quoted(instance_, 256) +
                                                   " already has a running master (pid " + std::to_string(pid) + ")");
      }
    }
    err_ << "tactus-master: replacing stale manager channel " << ipc::segmentPath(name) << "\n";
    if (auto removed = ipc::unlinkSegment(name); !removed) return removed.error();
    created = ipc::Segment::create(name, sizeof(shm::ManagerChannel));
  }
  if (!created) return created.error();
  segment_ = std::move(*created);
  segment_.guardAgainstTruncation();  // a manager may truncate it: the run ends, named (watchManager)
  owned_ = true;
  channel_ = new (segment_.bytes().data()) shm::ManagerChannel{};
  channel_->layoutVersion = shm::kLayoutVersion;
  channel_->scheduleCount = static_cast<std::uint32_t>(identifiers_.size());
  for (std::size_t k = 0; k < identifiers_.size() && k < 16; ++k) channel_->identifiers[k] = identifiers_[k];
  std::memcpy(channel_->expectedName, managerName_.data(), std::min(managerName_.size(), shm::kManagerNameSize - 1));
  channel_->running.store(kNoSchedule);
  pid_ = static_cast<std::uint32_t>(::getpid());
  startTime_ = ipc::processStartTime(static_cast<pid_t>(pid_));
  channel_->masterStartTime.store(startTime_);
  channel_->masterPid.store(pid_, std::memory_order_release);
  channel_->magic.store(shm::kManagerMagic, std::memory_order_release);
  return {};
}

void ManagerPort::setOpen(std::uint32_t open) {
  if (channel_ == nullptr) return;
  channel_->open.store(open, std::memory_order_seq_cst);
  ipc::futexWake(channel_->open);
  if (open == 2) ipc::futexWake(channel_->resultSeq);
}

// Guarded as the schedule's segment is (SegmentOwner::checkDamage): its size and name, then every
// field of its identity, which only this master writes and never changes once the channel is made.
std::optional<RunEnd> ManagerPort::damage() const {
  const std::string name = shm::managerInstanceName(instance_);
  std::string what = segment_.damage(name, owned_, "the master");
  if (what.empty()) {
    const shm::ManagerChannel& c = *channel_;
    std::string field;
    const std::string expected(c.expectedName, strnlen(c.expectedName, shm::kManagerNameSize));
    if (c.magic.load(std::memory_order_relaxed) != shm::kManagerMagic) field = "magic";
    else if (c.layoutVersion != shm::kLayoutVersion) field = "layoutVersion";
    else if (c.masterPid.load(std::memory_order_relaxed) != pid_) field = "masterPid";
    else if (c.masterStartTime.load(std::memory_order_relaxed) != startTime_) field = "masterStartTime";
    else if (c.scheduleCount != identifiers_.size()) field = "scheduleCount";
    else if (expected != managerName_.substr(0, shm::kManagerNameSize - 1)) field = "expectedName";
    else if (c.open.load(std::memory_order_relaxed) > 2) field = "open";
    for (std::size_t k = 0; field.empty() && k < identifiers_.size() && k < 16; ++k) {
      if (c.identifiers[k] != identifiers_[k]) field = "identifiers";
    }
    if (!field.empty()) {
      what = "field '" + field + "', which only the master (pid " + std::to_string(pid_) +
             ") writes, holds another value than it wrote";
    }
  }
  if (what.empty()) return std::nullopt;
  return RunEnd{SegmentState::kAborted, StopReason::kDamaged, kNone,
                "the manager channel " + ipc::segmentPath(name) + " was damaged: " + what};
}

std::optional<Request> ManagerPort::next(std::uint32_t pendingSeq) const {
  const std::uint32_t seq = channel_->requestSeq.load(std::memory_order_acquire);
  if (seq == channel_->resultSeq.load() || seq == pendingSeq) return std::nullopt;
  Request r;
  r.seq = seq;
  r.op = static_cast<ManagerOp>(channel_->op.load());
  r.arg0 = channel_->arg0.load();
  r.arg1 = channel_->arg1.load();
  r.takenNs = ipc::monotonicNs();
  return r;
}

bool ManagerPort::requestPending() const {
  return channel_->requestSeq.load(std::memory_order_acquire) != channel_->resultSeq.load();
}

std::uint32_t ManagerPort::resultSeq() const { return channel_->resultSeq.load(); }

void ManagerPort::publish(std::uint32_t seq, const Answer& answer, std::uint32_t running) {
  channel_->running.store(running);
  const std::size_t n = std::min(answer.message.size(), shm::kManagerMessageSize - 1);
  std::memcpy(channel_->message, answer.message.data(), n);
  channel_->message[n] = '\0';
  channel_->resultCode.store(static_cast<std::uint32_t>(answer.code));
  channel_->resultSeq.store(seq, std::memory_order_seq_cst);
  ipc::futexWake(channel_->resultSeq);
}

void ManagerPort::status(std::uint32_t running, std::uint64_t iterations, std::uint64_t overruns) {
  channel_->running.store(running);
  if (running == kNoSchedule) return;
  channel_->iterations.store(iterations);
  channel_->overruns.store(overruns);
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
std::optional<RunEnd> ManagerPort::watchManager() {
  if (auto damaged = damage()) return damaged;
  const std::uint32_t pid = channel_->managerPid.load(std::memory_order_acquire);
  if (pid != managerPid_ && pid != 0) {
    if (const std::string why = noManager(pid, segment_, ipc::segmentPath(shm::managerInstanceName(instance_)));
        !why.empty()) {
      std::uint32_t claimed = pid;
      if (channel_->managerPid.compare_exchange_strong(claimed, 0, std::memory_order_acq_rel)) {
        err_ << "tactus-master: warning: the manager channel named pid " << pid << ", " << why
             << ", as its schedule manager; cleared, so the manager " << quoted(managerName_) << " may attach\n";
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
                  "the schedule manager " + quoted(managerName_) + " (pid " + std::to_string(pid) + ") died"};
  }
  return std::nullopt;
}

}  // namespace tactus::master
