// The master's segment owner (see segment_owner.hpp).
#include "roles/segment_owner.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tactus/core/text.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"

namespace tactus::master {

namespace {

constexpr int kCreateAttempts = 5;
constexpr int kCreatorWaits = 20;  // x 10 ms: how long a segment without a pid may be a master's, mid-creation
// How long a new master waits for a live master that is stopping (a signal asked it to; it ends
// its iteration, its clients leave) before it refuses the instance as taken.
constexpr int kStoppingWaits = 400;  // x 10 ms

}  // namespace

Result<ipc::Segment> SegmentOwner::createNamed(std::size_t size) {
  const std::string path = ipc::segmentPath(instance_);
  std::string lastProblem;
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    auto created = ipc::Segment::create(instance_, size);
    if (created) {
      // The lock shows this master as the segment's owner to those who may not read its memory
      // maps (another user's client or master): a header alone may be forged or copied.
      if (const int e = created->holdLock(shm::kOwnerLockByte); e != 0)
        return fail(ErrorCode::kIo, path + ": cannot lock it: " + std::strerror(e));
      return created;
    }
    if (created.error().code != ErrorCode::kAlreadyExists) return created.error();
    // Something is at the name: a live master's segment (refuse), a stale one (replace), or a
    // file that is no segment of ours (replace it if we may, else say what it is).
    std::uint32_t pid = 0;
    std::uint64_t startTime = 0;
    bool foreign = false;
    bool stopping = false;
    bool locked = false;                                            // another open of it holds the owner's lock
    for (int wait = 0; wait < kCreatorWaits && pid == 0; ++wait) {  // a master may be creating it right now
      auto existing = ipc::Segment::open(instance_);
      if (existing) {
        existing->guardAgainstTruncation();  // a stale segment may be truncated while we read it
        shm::SegmentView v(existing->bytes());
        locked = existing->lockHeldElsewhere(shm::kOwnerLockByte);  // header or none: the lock is the master's
        if (v.hasHeader()) {
          pid = v.header().masterPid.load(std::memory_order_acquire);
          startTime = v.header().masterStartTime.load(std::memory_order_relaxed);
          stopping = v.header().stopReason.load(std::memory_order_relaxed) !=
                     static_cast<std::uint32_t>(shm::StopReason::kNone);
        }
      } else if (existing.error().code == ErrorCode::kNotFound) {
        if (!ipc::segmentExists(instance_)) break;  // it went away: try again
      } else {
        foreign = true;  // EACCES, EISDIR, ELOOP (a symbolic link): not a segment we can use
        lastProblem = existing.error().message;
        break;
      }
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!ipc::segmentExists(instance_)) continue;
    if (!foreign && pid != 0 && stopping) {
      // A master on its way out (systemctl restart, a supervisor's new master): wait for it.
      for (int wait = 0; wait < kStoppingWaits && ipc::processAlive(static_cast<pid_t>(pid), startTime); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!ipc::processAlive(static_cast<pid_t>(pid), startTime)) continue;
    }
    // A live pid that has not mapped the segment is not its master (a copy, a forged header).
    const ipc::Ownership owner =
        foreign || pid == 0 ? ipc::Ownership::kGone : ipc::processOwns(static_cast<pid_t>(pid), startTime, path);
    // A process whose maps this master may not read owns it only while the owner's lock is held.
    const bool unproven = owner == ipc::Ownership::kUnknown && !locked;
    if (!foreign && locked && owner != ipc::Ownership::kMaps && owner != ipc::Ownership::kUnknown) {
      // The lock is held by a live master, whatever pid its header names (one written over): the
      // kernel drops it when its holder dies, and no header can forge it.
      return fail(ErrorCode::kAlreadyExists,
                  "instance " + quoted(instance_, 256) + " already has a running master: " + path +
                      " is locked by a live master, although its header names " +
                      (pid == 0 ? std::string("no master") : "master pid " + std::to_string(pid)) +
                      " (written over?); stop that master first or pick another instance with -D");
    }
    if (owner == ipc::Ownership::kMaps || (owner == ipc::Ownership::kUnknown && locked)) {
      return fail(ErrorCode::kAlreadyExists, "instance " + quoted(instance_, 256) +
                                                 " already has a running master (pid " + std::to_string(pid) +
                                                 "); stop it first or pick another instance with -D");
    }
    if (foreign) {
      err_ << "tactus-master: " << path << " is no usable segment (" << lastProblem << "); removing it\n";
    } else if (owner == ipc::Ownership::kNotMapped || unproven) {
      err_ << "tactus-master: replacing segment " << path << ": it names master pid " << pid
           << (unproven ? ", whose memory maps this master may not read, while no master holds the segment's lock"
                        : ", which has not mapped it")
           << " (a copy of another segment, or a forged header)\n";
    } else {
      err_ << "tactus-master: replacing stale segment " << path
           << (pid != 0 ? " left by master pid " + std::to_string(pid) + ", which is gone" : " that no master owns")
           << "\n";
    }
    if (auto removed = ipc::unlinkSegment(instance_); !removed && removed.error().code != ErrorCode::kNotFound) {
      return fail(ErrorCode::kIo, removed.error().message +
                                      "; remove it by hand (as its owner or root) or pick another instance with -D");
    }
  }
  return fail(ErrorCode::kIo, path + ": cannot create the segment: another process keeps creating it" +
                                  (lastProblem.empty() ? std::string() : " (" + lastProblem + ")") +
                                  "; pick another instance with -D");
}

Result<void> SegmentOwner::create(const shm::LayoutCounts& counts) {
  const shm::LayoutOffsets offsets = shm::computeLayout(counts);
  auto segment = createNamed(offsets.total);
  if (!segment) return segment.error();
  segment_ = std::move(*segment);
  owned_ = true;
  segment_.guardAgainstTruncation();
  view_ = shm::SegmentView(segment_.bytes());
  if (auto ok = view_.initialize(counts); !ok) return ok;
  // Identity: the start time before the pid, so a reader that sees the pid (acquire) sees its
  // start time too.
  shm::SegmentHeader& header = view_.header();
  pid_ = static_cast<std::uint32_t>(::getpid());
  startTime_ = ipc::processStartTime(::getpid());
  header.masterStartTime.store(startTime_, std::memory_order_relaxed);
  header.masterPid.store(pid_, std::memory_order_release);
  return {};
}

void SegmentOwner::describe(std::uint32_t flags, std::uint64_t contentHash, std::uint16_t identifier,
                            std::string_view text) {
  shm::SegmentHeader& header = view_.header();
  flags_ = flags;
  contentHash_ = contentHash;
  identifier_ = identifier;
  header.flags = flags;
  header.scheduleContentHash = contentHash;
  header.scheduleIdentifier = identifier;
  view_.writeScheduleText(text);
}

void SegmentOwner::describeSchedules(std::uint32_t count, std::uint32_t index) {
  scheduleCount_ = count;
  scheduleIndex_ = index;
  view_.header().scheduleCount = count;
  view_.header().scheduleIndex = index;
}

void SegmentOwner::publish() {
  shm::SegmentHeader& header = view_.header();
  state_ = shm::SegmentState::kPublished;
  header.state.store(static_cast<std::uint32_t>(state_), std::memory_order_seq_cst);
  ipc::futexWake(header.state);
}

void SegmentOwner::startRun(std::int64_t runStartNs) {
  shm::SegmentHeader& header = view_.header();
  header.runStartNs.store(runStartNs);
  state_ = shm::SegmentState::kRunning;
  header.state.store(static_cast<std::uint32_t>(state_), std::memory_order_seq_cst);
  ipc::futexWake(header.state);
}

void SegmentOwner::markStopping(shm::StopReason reason) {
  auto none = static_cast<std::uint32_t>(shm::StopReason::kNone);
  view_.header().stopReason.compare_exchange_strong(none, static_cast<std::uint32_t>(reason));
}

void SegmentOwner::publishEnd(const RunEnd& end) {
  // The name goes before the end is published: clients that see the end exit and remove nothing,
  // so a master killed between publishing and removing would leave the segment behind. Attached
  // clients keep their mapping; a newcomer finds no segment and waits for the next master.
  remove();
  shm::SegmentHeader& h = view_.header();
  state_ = end.state;
  view_.setMessage(end.message);
  h.stopClient.store(index(end.client), std::memory_order_relaxed);
  h.stopReason.store(static_cast<std::uint32_t>(end.reason), std::memory_order_relaxed);
  h.state.store(static_cast<std::uint32_t>(end.state), std::memory_order_seq_cst);
  ipc::futexWake(h.state);
  // Wake every sleeper so it sees the new state now rather than after its sleep slice. The
  // counts are the master's own copy, never the header's.
  const shm::LayoutCounts& counts = view_.counts();
  for (EpochId e : IdRange<EpochId>(counts.epochs)) {
    if (view_.epoch(e).waiters.load() != 0) ipc::futexWake(view_.epoch(e).released);
  }
  for (InstanceId i : IdRange<InstanceId>(counts.instances)) {
    if (view_.instance(i).waiters.load() != 0) ipc::futexWake(view_.instance(i).done);
    if (view_.gpu(i).waiters.load() != 0)
      ipc::futexWake(view_.gpu(i).submitted);  // GPU successors waiting for a submission
  }
  // Workers parked between activations (a run under a schedule manager) sleep on their slot's
  // activation word: one more activation after the end wakes them, and a worker about to sleep
  // finds the word changed. Each looks at the state before it runs an activation: it leaves.
  for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) {
    shm::SwitchSlot& sw = view_.switching(he);
    sw.activation.fetch_add(1, std::memory_order_seq_cst);
    ipc::futexWake(sw.activation);
  }
}

std::optional<RunEnd> SegmentOwner::checkDamage() const {
  const std::string path = ipc::segmentPath(instance_);
  std::string what = segment_.damage(instance_, owned_, "the master");  // once removed on purpose, the name is not ours
  if (what.empty()) {
    const shm::SegmentHeader& h = view_.header();
    std::string field = view_.changedHeaderField();
    if (field.empty()) {
      if (h.masterPid.load(std::memory_order_relaxed) != pid_) field = "masterPid";
      else if (h.masterStartTime.load(std::memory_order_relaxed) != startTime_) field = "masterStartTime";
      else if (h.flags != flags_) field = "flags";
      else if (h.scheduleContentHash != contentHash_) field = "scheduleContentHash";
      else if (h.scheduleIdentifier != identifier_) field = "scheduleIdentifier";
      else if (h.scheduleCount != scheduleCount_) field = "scheduleCount";
      else if (h.scheduleIndex != scheduleIndex_) field = "scheduleIndex";
      else if (h.state.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(state_)) field = "state";
    }
    // A truncation that lands after the look above reads as a header of zeros (the guard's pages):
    // asked again, the size names it (the kernel shrinks it before it takes the pages away).
    if (!field.empty()) what = segment_.damage(instance_, owned_, "the master");
    if (!field.empty() && what.empty()) {
      what = "header field '" + field + "', which only the master (pid " + std::to_string(pid_) +
             ") writes, holds another value than it wrote";
    }
  }
  if (what.empty()) return std::nullopt;
  return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kDamaged, kNone, "segment " + path + " damaged: " + what};
}

void SegmentOwner::remove() {
  if (!owned_) return;
  owned_ = false;
  segment_.removeNameIfStillOurs(instance_);
}

}  // namespace tactus::master
