// The schedule manager's side of the request channel (tactus/manager.hpp, tactus/stm_manager.h):
// attaching to the master's ManagerChannel segment, claiming it, and synchronous requests.
#include "tactus/manager.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>

#include "instance_hint.hpp"
#include "stm_errors.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/stm_manager.h"

namespace tactus::manager {

namespace {

using shm::ManagerOp;
using shm::ManagerResult;

constexpr std::int64_t kPollNs = 10'000'000;
// A wait longer than this is said on standard error (a master that starts along with its
// manager, as under systemd, usually publishes within it).
constexpr std::int64_t kWaitNoticeNs = 1'000'000'000;

struct Attachment {
  std::string name;
  std::string instance;
  ipc::Segment segment;
  shm::ManagerChannel* channel = nullptr;
  ipc::ProcessWatch masterWatch;
  // The first schedule's segment, whose attention word the master's loop sleeps on: a request
  // wakes it there (else the master takes it at its next wake-up, up to 2 ms later). Absent when
  // that segment is not the master's of the channel; requests are then taken at that pace.
  ipc::Segment primary;
  std::atomic<std::uint32_t>* attention = nullptr;
};

std::mutex gMutex;
std::optional<Attachment> gManager;

// A request's outcome: the master's code and message, or an error of the channel itself.
struct Outcome {
  ManagerResult code = ManagerResult::kOk;
  std::string message;
  std::optional<Error> error;  // no answer (not initialized, master gone)
};

using ipc::ChosenInstance;

// Where the instance's name came from (ipc::chooseInstance), for the messages.
constexpr const char* kGivenSource = "ManagerOptions::instance (tactus-manager -D)";
constexpr const char* kDefaultSource =
    "the default (neither ManagerOptions::instance, tactus-manager -D, nor TACTUS_INSTANCE is set)";

// How the instance was chosen and how to choose another, for the waiting messages.
std::string howToSet(const ChosenInstance& chosen) {
  return "instance " + quoted(chosen.name, 256) + " from " + chosen.source +
         "; it must equal the master's -D: set TACTUS_INSTANCE, ManagerOptions::instance or tactus-manager -D";
}

// A master fills a channel it made within milliseconds: one this old with its identity unwritten
// was written over (or left by a master killed as it made it).
constexpr std::int64_t kUnfinishedAgeS = 1;

// What is wrong with the manager channel `segment` (instance `segmentName`), "" while it is whole or
// still being made: its size against the layout's, its magic, or its master's pid unwritten after the
// magic (the master writes the pid first).
std::string channelFault(const ipc::Segment& segment, const std::string& segmentName) {
  // The channel's age, asked only where a size of 0 or a magic of 0 needs it: a manager asks this
  // before and after every request, and each system call costs microseconds on its answer's way.
  const auto old = [&] {
    struct stat st {};
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return ::stat(ipc::segmentPath(segmentName).c_str(), &st) == 0 &&
           (now.tv_sec - st.st_ctim.tv_sec) * 1'000'000'000LL + (now.tv_nsec - st.st_ctim.tv_nsec) >
               kUnfinishedAgeS * 1'000'000'000LL;
  };
  const std::size_t size = segment.bytes().size();
  if (size < sizeof(shm::ManagerChannel)) {
    if (size == 0 && !old()) return "";  // created, not yet sized
    return "truncated to " + std::to_string(size) + " of " + std::to_string(sizeof(shm::ManagerChannel)) + " bytes";
  }
  const auto* channel = reinterpret_cast<const shm::ManagerChannel*>(segment.bytes().data());
  const std::uint64_t magic = channel->magic.load(std::memory_order_acquire);
  if (segment.busFault()) return "truncated while this process read it";
  if (magic != 0 && magic != shm::kManagerMagic) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(magic));
    return "field 'magic' holds " + std::string(text) + ", not a manager channel's";
  }
  if (magic == 0 && old())
    return "field 'magic' holds 0 more than " + std::to_string(kUnfinishedAgeS) +
           " s after it was made (its header was zeroed, or its master was killed as it made it)";
  if (magic == shm::kManagerMagic && channel->masterPid.load(std::memory_order_acquire) == 0)
    return "field 'masterPid' holds 0 although 'magic' is set (the master writes the pid first)";
  return "";
}

// The instance's primary segment, when the master `pid` has published it, into the attachment:
// its attention word (and the mapping that holds it).
void attachPrimary(const std::string& instance, std::uint32_t pid, Attachment& a) {
  auto primary = ipc::Segment::open(instance);
  if (primary) primary->guardAgainstTruncation();  // before its first read
  if (primary && primary->bytes().size() >= sizeof(shm::SegmentHeader)) {
    auto* header = reinterpret_cast<shm::SegmentHeader*>(primary->bytes().data());
    if (header->magic.load(std::memory_order_acquire) == shm::kMagic && header->layoutVersion == shm::kLayoutVersion &&
        header->masterPid.load(std::memory_order_acquire) == pid && !primary->busFault()) {
      a.attention = &header->attention;
      a.primary = std::move(*primary);
    }
  }
}

Result<void> attachLocked(const std::string& name, const ManagerOptions& options) {
  if (gManager)
    return fail(ErrorCode::kInvalidState, "schedule manager " + quoted(gManager->name) + " is already initialized");
  const ChosenInstance chosen = ipc::chooseInstance(options.instance, kGivenSource, kDefaultSource);
  const std::string& instance = chosen.name;
  const std::string who = "schedule manager" + (name.empty() ? std::string() : " " + quoted(name));
  if (auto ok = ipc::validateInstanceName(instance); !ok) {
    return fail(ok.error().code, who + ": " + chosen.source + ": " + ok.error().message);
  }
  const std::string segmentName = shm::managerInstanceName(instance);
  const std::int64_t startNs = ipc::monotonicNs();
  const std::int64_t deadline = ipc::deadlineAfterMs(startNs, options.timeoutMs);
  std::string why;   // why it still waits
  std::string said;  // the reason printed last: each one is printed once
  // Between two looks: the time-out (an error), the reason said once it changed, a pause.
  auto waitMore = [&]() -> std::optional<Error> {
    const std::int64_t now = ipc::monotonicNs();
    if (now >= deadline) {
      std::string message = who + ": no master with a schedule manager for instance " + quoted(instance, 256);
      message += " within " + std::to_string(options.timeoutMs) + " ms (" + why;
      message += "; " + howToSet(chosen) +
                 client::otherInstancesHint(instance, shm::managerInstanceName(""),
                                            "instances with a schedule manager channel now") +
                 ")";
      return fail(ErrorCode::kTimeout, message);
    }
    if (now - startNs >= kWaitNoticeNs && why != said) {
      said = why;
      std::fprintf(stderr, "tactus: %s: waiting for tactus-master -N of instance %s (segment %s): %s (%s%s)\n",
                   who.c_str(), quoted(instance, 256).c_str(), ipc::segmentPath(segmentName).c_str(), why.c_str(),
                   howToSet(chosen).c_str(),
                   client::otherInstancesHint(instance, shm::managerInstanceName(""),
                                              "instances with a schedule manager channel now")
                       .c_str());
      std::fflush(stderr);
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
    return std::nullopt;
  };
  for (;;) {
    auto segment = ipc::Segment::open(segmentName);
    why = "no master started with -N has published it";
    if (segment) segment->guardAgainstTruncation();  // truncated under us: zeros and busFault(), not SIGBUS
    if (segment) {
      if (const std::string fault = channelFault(*segment, segmentName); !fault.empty())
        return fail(ErrorCode::kIo, std::string(who)
                                        .append(": the manager channel ")
                                        .append(ipc::segmentPath(segmentName))
                                        .append(" was damaged: ")
                                        .append(fault));
    }
    if (segment && segment->bytes().size() >= sizeof(shm::ManagerChannel)) {
      auto* channel = reinterpret_cast<shm::ManagerChannel*>(segment->bytes().data());
      const std::uint32_t pid = channel->masterPid.load(std::memory_order_acquire);
      const std::uint64_t startTime = channel->masterStartTime.load();
      const bool ready = channel->magic.load(std::memory_order_acquire) == shm::kManagerMagic && pid != 0;
      const bool alive = ready && ipc::processAlive(static_cast<pid_t>(pid), startTime);
      const std::uint32_t open = channel->open.load();
      why = !ready      ? "its master is still setting it up"
            : !alive    ? "its master (pid " + std::to_string(pid) + ") is gone"
            : open == 0 ? "its master (pid " + std::to_string(pid) + ") has not opened it yet"
            : open == 2 ? "the run of its master (pid " + std::to_string(pid) + ") has ended"
                        : "";
      if (alive && open == 1) {
        const std::uint32_t layout = channel->layoutVersion;
        const std::string expected(channel->expectedName, strnlen(channel->expectedName, shm::kManagerNameSize));
        if (segment->busFault()) {  // truncated while read (zeros): the next look sees what is there now
          why = "it was truncated while this process read it";
          if (auto timedOut = waitMore()) return *timedOut;
          continue;
        }
        if (layout != shm::kLayoutVersion) {
          return fail(ErrorCode::kIncompatible, ipc::segmentPath(segmentName) + ": layout version " +
                                                    std::to_string(layout) + ", this build uses " +
                                                    std::to_string(shm::kLayoutVersion));
        }
        const std::string actual = name.empty() ? expected : name;
        if (actual != expected) {
          return fail(ErrorCode::kNotFound, "schedule manager " + quoted(actual) + ": the master of instance " +
                                                quoted(instance, 256) + " expects manager " + quoted(expected) +
                                                " (-N)");
        }
        std::uint32_t holder = 0;
        const auto self = static_cast<std::uint32_t>(::getpid());
        // The channel's lock before the claim: a master that cannot read this process's memory
        // maps (another user's) believes a claim only while an open of the channel holds it.
        if (const int e = segment->holdLock(shm::kManagerLockByte); e != 0) {
          if (e == EAGAIN || e == EACCES) {
            return fail(ErrorCode::kAlreadyExists, "schedule manager " + quoted(actual) + " is already attached (pid " +
                                                       std::to_string(channel->managerPid.load()) + ")");
          }
          return fail(ErrorCode::kIo, "schedule manager " + quoted(actual) + ": cannot lock the manager channel " +
                                          ipc::segmentPath(segmentName) + ": " + std::strerror(e));
        }
        channel->managerStartTime.store(ipc::processStartTime(::getpid()));
        channel->managerKind.store(
            static_cast<std::uint32_t>(options.oneShot ? shm::ManagerKind::kCommand : shm::ManagerKind::kSession));
        if (!channel->managerPid.compare_exchange_strong(holder, self)) {
          return fail(ErrorCode::kAlreadyExists, "schedule manager " + quoted(actual) + " is already attached (pid " +
                                                     std::to_string(holder) + ")");
        }
        if (segment->busFault()) {  // the claim went to zeros: there is no channel to claim
          why = "it was truncated while this process claimed it";
          if (auto timedOut = waitMore()) return *timedOut;
          continue;
        }
        Attachment a;
        a.name = actual;
        a.instance = instance;
        a.segment = std::move(*segment);
        a.channel = channel;
        a.masterWatch = ipc::ProcessWatch(static_cast<pid_t>(pid), startTime);
        attachPrimary(instance, pid, a);
        gManager = std::move(a);
        return {};
      }
    }
    if (auto timedOut = waitMore()) return *timedOut;
  }
}

void detachLocked() {
  if (!gManager) return;
  const auto self = static_cast<std::uint32_t>(::getpid());
  std::uint32_t expected = self;
  gManager->channel->managerPid.compare_exchange_strong(expected, 0);
  gManager.reset();
}

// The manager channel (or the first schedule's segment) truncated under this process: its words
// read as zeros from then on, so no answer read there means anything.
std::optional<Error> channelDamage() {
  const std::string name = shm::managerInstanceName(gManager->instance);
  std::string fault = gManager->segment.damage(name, false);
  if (fault.empty()) fault = channelFault(gManager->segment, name);
  if (fault.empty() && gManager->channel->layoutVersion != shm::kLayoutVersion)
    fault = "field 'layoutVersion' holds " + std::to_string(gManager->channel->layoutVersion);
  // The pid field against the master's (a dead master's channel may hold another: not damage).
  if (fault.empty() && gManager->channel->masterPid.load() != static_cast<std::uint32_t>(gManager->masterWatch.pid()) &&
      !gManager->masterWatch.exited())
    fault = "field 'masterPid' holds " + std::to_string(gManager->channel->masterPid.load()) + ", not its master's pid";
  if (!fault.empty())
    return fail(ErrorCode::kIo, "the manager channel " + ipc::segmentPath(name) + " was damaged: " + fault);
  const ipc::Segment* hit = gManager->segment.busFault()   ? &gManager->segment
                            : gManager->primary.busFault() ? &gManager->primary
                                                           : nullptr;
  if (hit == nullptr) return std::nullopt;
  const std::string path =
      ipc::segmentPath(hit == &gManager->segment ? shm::managerInstanceName(gManager->instance) : gManager->instance);
  return fail(ErrorCode::kIo, "segment " + path + " was truncated under the schedule manager (removed or damaged " +
                                  "by another process): the master's answers cannot be read");
}

Outcome requestLocked(ManagerOp op, std::uint32_t arg0, std::uint32_t arg1) {
  Outcome out;
  if (!gManager) {
    out.error = fail(ErrorCode::kInvalidState, "the schedule manager is not initialized");
    return out;
  }
  shm::ManagerChannel& c = *gManager->channel;
  const std::uint32_t open = c.open.load();
  if (auto damaged = channelDamage()) {  // after the read: a truncation shows once a read hit it
    out.error = std::move(damaged);
    return out;
  }
  if (open != 1) {
    out.error = fail(ErrorCode::kInvalidState, "the run of instance " + quoted(gManager->instance, 256) + " has ended");
    return out;
  }
  c.op.store(static_cast<std::uint32_t>(op));
  c.arg0.store(arg0);
  c.arg1.store(arg1);
  const std::uint32_t seq = c.requestSeq.load() + 1;
  c.requestSeq.store(seq, std::memory_order_seq_cst);
  if (gManager->attention != nullptr) ipc::signalWord(*gManager->attention);
  for (;;) {
    const std::uint32_t result = c.resultSeq.load(std::memory_order_acquire);
    // Answered: the look after the answer's read below names any damage (one look on the
    // answer's way, not two); unanswered, the look comes before each wait.
    if (result == seq) break;
    if (auto damaged = channelDamage()) {
      out.error = std::move(damaged);
      return out;
    }
    if (c.open.load() == 2 && c.resultSeq.load() != seq) {
      out.error = fail(ErrorCode::kInvalidState, "the run ended before the master answered");
      return out;
    }
    if (gManager->masterWatch.exited()) {
      out.error = fail(ErrorCode::kPeerDied, "the master died before it answered");
      return out;
    }
    c.resultWaiters.fetch_add(1);
    ipc::futexWait(c.resultSeq, result, kPollNs);
    c.resultWaiters.fetch_sub(1);
  }
  out.code = static_cast<ManagerResult>(c.resultCode.load());
  out.message = std::string(c.message, strnlen(c.message, shm::kManagerMessageSize));
  if (auto damaged = channelDamage()) out = Outcome{ManagerResult::kOk, "", std::move(damaged)};
  return out;
}

Result<void> toResult(const Outcome& o) {
  if (o.error) return *o.error;
  switch (o.code) {
    case ManagerResult::kOk: return {};
    case ManagerResult::kUnknownSchedule: return fail(ErrorCode::kNotFound, o.message);
    case ManagerResult::kBadState: return fail(ErrorCode::kInvalidState, o.message);
    case ManagerResult::kNotSupported: return fail(ErrorCode::kValidation, o.message);
    default: return fail(ErrorCode::kInternal, o.message);
  }
}

Outcome request(ManagerOp op, std::uint32_t arg0 = 0, std::uint32_t arg1 = 0) {
  std::lock_guard<std::mutex> lock(gMutex);
  return requestLocked(op, arg0, arg1);
}

}  // namespace

Result<void> init(const std::string& name, const ManagerOptions& options) {
  try {
    std::lock_guard<std::mutex> lock(gMutex);
    return attachLocked(name, options);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("schedule manager init: ") + e.what());
  }
}

Result<void> startSchedule(std::uint16_t id) { return toResult(request(ManagerOp::kStart, id)); }
Result<void> stopSchedule(std::uint16_t id) { return toResult(request(ManagerOp::kStop, id)); }
Result<void> rollOverSchedule(std::uint16_t startId, std::uint16_t stopId) {
  return toResult(request(ManagerOp::kRollover, startId, stopId));
}

Result<void> exitRun() {
  std::lock_guard<std::mutex> lock(gMutex);
  const Outcome o = requestLocked(ManagerOp::kExit, 0, 0);
  detachLocked();
  return toResult(o);
}

Result<Status> status() {
  std::lock_guard<std::mutex> lock(gMutex);
  const Outcome o = requestLocked(ManagerOp::kStatus, 0, 0);
  if (auto r = toResult(o); !r) return r.error();
  const shm::ManagerChannel& c = *gManager->channel;
  Status s;
  const std::uint32_t running = c.running.load();
  s.running = running <= 0xffffu;
  s.schedule = s.running ? static_cast<std::uint16_t>(running) : 0;
  s.iterations = c.iterations.load();
  s.overruns = c.overruns.load();
  s.scheduleCount = c.scheduleCount;
  if (auto damaged = channelDamage()) return *damaged;
  return s;
}

void shutdown() {
  std::lock_guard<std::mutex> lock(gMutex);
  detachLocked();
}

}  // namespace tactus::manager

namespace {

using tactus::shm::ManagerOp;
using tactus::shm::ManagerResult;

thread_local std::string tManagerMessage;

// STM's code for a request's outcome; the message is kept for tactusManagerLastErrorMessage.
stmErrorCode_t toStm(const tactus::manager::Outcome& o) {
  tManagerMessage = o.error ? o.error->message : o.message;
  if (o.error) {
    if (o.error->code == tactus::ErrorCode::kInvalidState && !tactus::manager::gManager)
      return STM_ERROR_NOT_INITIALIZED;
    return o.error->code == tactus::ErrorCode::kPeerDied ? STM_ERROR_GENERIC : STM_ERROR_INVALID_STATE;
  }
  switch (o.code) {
    case ManagerResult::kOk: return STM_SUCCESS;
    case ManagerResult::kUnknownSchedule: return STM_ERROR_SCHEDULE_ID_INVALID;
    case ManagerResult::kBadState: return STM_ERROR_BAD_STATE_TRANSITION;
    case ManagerResult::kNotSupported: return STM_ERROR_NOT_SUPPORTED;
    case ManagerResult::kBadRequest: return STM_ERROR_BAD_PARAMETER;
    default: return STM_ERROR_GENERIC;
  }
}

stmErrorCode_t initOn(const char* name, const std::string& instance) {
  if (name == nullptr) {
    tManagerMessage = "stmScheduleManagerInit: null name";
    return STM_ERROR_BAD_PARAMETER;
  }
  tactus::manager::ManagerOptions options;
  options.instance = instance;
  const tactus::Result<void> r = tactus::manager::init(name, options);
  if (r) return STM_SUCCESS;
  tManagerMessage = r.error().message;
  return tactus::client::stmManagerError(r.error().code);
}

}  // namespace

extern "C" {

stmErrorCode_t stmScheduleManagerInit(const char* name) {
  return initOn(name, "");  // init reads TACTUS_INSTANCE, else "default"
}

stmErrorCode_t stmScheduleManagerInitWithDiscriminator(const char* name, int32_t discriminator) {
  return initOn(name, discriminator < 0 ? std::string("default") : std::to_string(discriminator));
}

stmErrorCode_t stmStartSchedule(uint16_t scheduleId) {
  return toStm(tactus::manager::request(ManagerOp::kStart, scheduleId));
}

stmErrorCode_t stmStopSchedule(uint16_t scheduleId) {
  return toStm(tactus::manager::request(ManagerOp::kStop, scheduleId));
}

stmErrorCode_t stmRollOverSchedule(uint16_t startScheduleId, uint16_t stopScheduleId) {
  return toStm(tactus::manager::request(ManagerOp::kRollover, startScheduleId, stopScheduleId));
}

stmErrorCode_t stmScheduleManagerExit(void) {
  tactus::manager::Outcome o;
  {
    std::lock_guard<std::mutex> lock(tactus::manager::gMutex);
    o = tactus::manager::requestLocked(ManagerOp::kExit, 0, 0);
    tactus::manager::detachLocked();
  }
  return toStm(o);
}

const char* tactusManagerLastErrorMessage(void) { return tManagerMessage.c_str(); }

}  // extern "C"
