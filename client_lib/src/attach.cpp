// Attaching a client to its master: finding the instance's published segment (waiting for a
// master, and saying why, while there is none), removing a segment whose master is dead, and
// taking the validated private copies the client works from (geometry, schedule, run plan, the
// master's pid).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "instance_hint.hpp"
#include "runtime.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/notes.hpp"
#include "tactus/ipc/process.hpp"

namespace tactus::client {

namespace {

using shm::SegmentState;

constexpr std::int64_t kPollNs = 10'000'000;             // master polling while waiting in init
constexpr std::int64_t kExplainAfterNs = 3'000'000'000;  // a usual wait explained after this long
constexpr std::int64_t kNoteAgainNs = 1'000'000'000;     // a lasting reason is noted to the master this often
constexpr const char* kNoSegmentYet = "there is no segment yet";
// A segment that shows no complete header (or no master pid) for this long is no master's
// work in progress (a master fills it within milliseconds): it is removed.
constexpr std::int64_t kStaleCreatingNs = 1'000'000'000;

// What a look at the instance's name found.
struct Look {
  Look(bool a, std::string w, std::string n = {}) : attached(a), why(std::move(w)), note(std::move(n)) {}
  bool attached = false;  // rt.segment and rt.view are set
  std::string why;        // else: why the client keeps waiting ("" with an error)
  std::string note;       // what the master should hear of it (ipc/notes.hpp), "" for nothing
};

// Why this client may not use the instance's file `error` (Segment::open's), what to do about it,
// and the short note the master hears. Another user's master's segment is that master's while it
// runs: the fix is a group both share (the master's TACTUS_SEGMENT_GROUP), never removing it.
// Anything else (a directory, a symbolic link, a file of no master) is removed.
Look foreignFile(const std::string& instance, const std::string& error) {
  struct stat st {};
  const std::string path = ipc::segmentPath(instance);
  const bool there = ::lstat(path.c_str(), &st) == 0;
  // Gone between the open and the look (its master ended and removed it): nothing to remove, nothing to share.
  if (!there && errno == ENOENT) return Look{false, kNoSegmentYet};
  if (there && S_ISREG(st.st_mode) && st.st_uid != ::geteuid()) {
    const std::string owner = "uid " + std::to_string(st.st_uid);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Look{false,
                error + "; the master of " + owner +
                    " shares its segments with no group this client is in: start that master with "
                    "TACTUS_SEGMENT_GROUP set to a group both users are in (or run this client as " +
                    owner + "); only a file no master of " + owner + " uses any more (one that crashed) may be removed",
                "it may not open " + path + ", a file of " + owner + " (mode " + mode + "), as uid " +
                    std::to_string(::geteuid())};
  }
  return Look{false, error + " (remove it; the master replaces what it may)", "it cannot open " + error};
}

// Whoever finds a dead master's remains removes all of its group (its other schedules' segments,
// its manager channel: a master killed while it created them leaves some without the first):
// "; also removed ..." for the message, "" when nothing else was left.
std::string removedRemains(const std::string& instance) {
  std::string said;
  for (const std::string& what : ipc::removeDeadMastersGroup(instance)) said += (said.empty() ? "" : ", ") + what;
  return said.empty() ? said : "; also removed what dead masters left of its group: " + said;
}

Result<Look> lookOnce(Runtime& rt, std::int64_t& unfinishedSince) {
  auto segment = ipc::Segment::open(rt.instance);
  if (!segment) {
    if (segment.error().code == ErrorCode::kNotFound) {
      // A master killed before it created the first segment may have left the others: looked for
      // once a second while there is none.
      const std::int64_t now = ipc::monotonicNs();
      if (rt.remainsSweptNs == 0 || now - rt.remainsSweptNs >= kNoteAgainNs) {
        rt.remainsSweptNs = now;
        if (const std::string removed = removedRemains(rt.instance); !removed.empty())
          std::fprintf(stderr, "tactus: client %s: no segment at %s yet%s\n", quoted(rt.name).c_str(),
                       ipc::segmentPath(rt.instance).c_str(), removed.c_str());
      }
      return Look{false, kNoSegmentYet};
    }
    // Another user's segment, or a foreign file (a directory, a symbolic link): wait, saying why,
    // rather than give up silently; the master hears of it too (a note: it cannot see us).
    return foreignFile(rt.instance, segment.error().message);
  }
  segment->guardAgainstTruncation();  // it may be truncated while we read it
  shm::SegmentView view(segment->bytes());
  const std::uint32_t pid = view.hasHeader() ? view.header().masterPid.load(std::memory_order_acquire) : 0;
  // A master holds the owner's lock on its segment from its creation to its exit, and the kernel
  // drops it when the master dies: a held lock is a live master's segment, whatever its header says
  // (a header can be written over by any process of the user; the lock cannot be forged).
  const bool locked = segment->lockHeldElsewhere(shm::kOwnerLockByte);
  if (pid == 0 && locked) {
    unfinishedSince = 0;
    return Look{false, "a master (it holds the segment's lock) is still creating it"};
  }
  if (pid == 0) {
    // A master filling it right now, or the remains of one that died doing so.
    const std::int64_t now = ipc::monotonicNs();
    if (unfinishedSince == 0) unfinishedSince = now;
    if (now - unfinishedSince < kStaleCreatingNs) return Look{false, "a master is still creating it"};
    unfinishedSince = 0;
    const bool removed = segment->removeNameIfStillOurs(rt.instance);
    return Look{false, (removed ? "it held no complete tactus header for 1 s, so no master is creating it; removed it"
                                : "it holds no complete tactus header") +
                           removedRemains(rt.instance)};
  }
  unfinishedSince = 0;
  shm::SegmentHeader& h = view.header();
  const std::uint64_t startTime = h.masterStartTime.load(std::memory_order_relaxed);  // written before the pid
  const auto state = static_cast<SegmentState>(h.state.load(std::memory_order_acquire));
  const std::string master = "master pid " + std::to_string(pid);
  const ipc::Ownership owner = ipc::processOwns(static_cast<pid_t>(pid), startTime, ipc::segmentPath(rt.instance));
  if (locked && (owner == ipc::Ownership::kGone || owner == ipc::Ownership::kNotMapped)) {
    // The header names a process that is not the master, while the master that holds the lock
    // lives: its header was written over. Never removed, never attached to (the pid is not the
    // master's); its master finds the damage and ends its run, naming it.
    return Look{false, "it names " + master +
                           (owner == ipc::Ownership::kGone ? ", which is gone" : ", which has not mapped it") +
                           ", while a live master holds the segment's lock: its header was written over; left it "
                           "to that master"};
  }
  if (owner == ipc::Ownership::kGone) {
    // Nothing of the instance may outlive its processes: whoever finds a dead master's segment
    // removes it (only if the name still refers to it: a newer master's is left alone).
    const bool removed = segment->removeNameIfStillOurs(rt.instance);
    return Look{false, "its " + master + " is gone" + (removed ? "; removed the segment it left" : "") +
                           removedRemains(rt.instance)};
  }
  // A live process that has not mapped it is not its master: a byte copy of another instance's
  // segment, or a header written to name some other process. One whose maps this client may not
  // read (another user's) is the master only while it holds the segment's owner lock, which a
  // master takes as it creates the segment. Never attached to; removed.
  const bool unproven = owner == ipc::Ownership::kUnknown && !locked;
  if (owner == ipc::Ownership::kNotMapped || unproven) {
    const bool removed = segment->removeNameIfStillOurs(rt.instance);
    return Look{false, "it names " + master +
                           (unproven ? ", whose memory maps this client may not read, while no master holds the "
                                       "segment's lock"
                                     : ", which has not mapped it") +
                           " (a copy of another segment, or a forged header)" + (removed ? "; removed it" : "")};
  }
  if (state == SegmentState::kPublished) {
    if (auto ok = view.validate(); !ok) {
      // Another layout version (or a damaged header): the master hears why this client stays away.
      (void)ipc::sendNote(noteBoxOf(rt), rt.name, "it refused the segment: " + ok.error().message);
      return fail(ok.error().code, ipc::segmentPath(rt.instance) + ": " + ok.error().message);
    }
    rt.segment = std::move(*segment);
    rt.view = view;  // the private geometry travels with the view; the mapping stays where it is
    rt.masterPid = pid;
    rt.masterWatch = ipc::ProcessWatch(static_cast<pid_t>(pid), startTime);
    return Look{true, ""};
  }
  if (state == SegmentState::kRunning) {
    return fail(ErrorCode::kInvalidState, "instance " + quoted(rt.instance, 256) + " is already running a schedule (" +
                                              master + ") that started without client " + quoted(rt.name));
  }
  if (state == SegmentState::kCreating) return Look{false, master + " is still creating it"};
  return Look{false, "the run of " + master + " has ended; waiting for the next master"};
}

// Takes the private copies the client works from and claims the client's slot.
Result<void> takeCopies(Runtime& rt, bool mayBeAbsent) {
  const shm::SegmentHeader& h = rt.view.header();
  if (h.scheduleCount > limits::kMaxSchedules || (!mayBeAbsent && h.scheduleIndex != 0)) {
    return fail(ErrorCode::kIncompatible, ipc::segmentPath(rt.instance) + ": header field 'scheduleCount' (" +
                                              std::to_string(h.scheduleCount) + ") or 'scheduleIndex' (" +
                                              std::to_string(h.scheduleIndex) + ") is out of range");
  }
  rt.scheduleCount = std::max<std::uint32_t>(1, h.scheduleCount);
  const shm::LayoutCounts& counts = rt.view.counts();
  const std::string origin = ipc::segmentPath(rt.instance);
  rt.flags = h.flags;
  // The text is copied out before it is parsed: the parser must not read memory others can write.
  const std::string text(rt.view.scheduleText());
  std::uint64_t contentHash = 0;
  auto schedule = readSchedule(text, origin, &contentHash);
  if (!schedule) return schedule.error();
  rt.schedule = std::move(*schedule);
  if (contentHash != h.scheduleContentHash) {
    return fail(ErrorCode::kIncompatible, origin + ": the published schedule does not match its content hash");
  }
  auto plan = makeRunPlan(rt.schedule);
  if (!plan) return fail(plan.error().code, origin + ": " + plan.error().message);
  rt.plan = std::move(*plan);
  // Every index the client uses comes from its own schedule and plan: checked here, once, against
  // the counts it validated, so no access of the run can leave the segment.
  if (rt.plan.workers.size() != counts.workers || rt.schedule.instances.size() != counts.instances ||
      rt.schedule.clients.size() != counts.clients || rt.schedule.epochs.size() != counts.epochs ||
      rt.schedule.hyperepochs.size() != counts.hyperepochs) {
    return fail(ErrorCode::kIncompatible, origin + ": the segment's geometry does not match its schedule");
  }
  rt.clientIndex = clientIndex(rt.schedule, rt.name);
  // Not in this schedule: in another schedule of the instance, perhaps (init checks the union);
  // attached all the same, with clientIndex kNone (Runtime::member()).
  if (rt.clientIndex == kNone && (mayBeAbsent || rt.scheduleCount > 1)) return {};
  if (rt.clientIndex == kNone) {
    (void)ipc::sendNote(noteBoxOf(rt), rt.name, "it is not in schedule " + quoted(rt.schedule.name));
    std::vector<std::string_view> names;
    for (const ClientInfo& c : rt.schedule.clients) names.emplace_back(c.name);
    return fail(ErrorCode::kNotFound, "client " + quoted(rt.name) + " is not in schedule " + quoted(rt.schedule.name) +
                                          didYouMean(rt.name, names, "its clients:"));
  }
  if (const std::uint32_t soc = rt.schedule.clients[rt.clientIndex].soc;
      soc != kNone && soc < rt.schedule.socs.size()) {
    // A multi-SoC schedule: only the client's own SoC's master runs it (another SoC's would run its
    // runnables a second time).
    // Schedule k > 0 of a managed run sits at `<SoC's segment>.schedule<k>`: judged by schedule 0's name.
    const std::string own = shm::socInstanceName("", soc);
    const std::string& segment = noteBoxOf(rt);
    if (segment.size() < own.size() || segment.compare(segment.size() - own.size(), own.size(), own) != 0) {
      return fail(ErrorCode::kInvalidState,
                  "client " + quoted(rt.name) + " runs on SoC " + quoted(rt.schedule.socs[soc].name) + " of schedule " +
                      quoted(rt.schedule.name) + ", but " + ipc::segmentPath(rt.instance) +
                      " is not that SoC's segment (it ends in '" + own + "'; set TACTUS_INSTANCE to the masters' -D)");
    }
  }
  shm::ClientSlot& slot = rt.view.client(rt.clientIndex);
  std::uint32_t expected = 0;
  const auto self = static_cast<std::uint32_t>(::getpid());
  if (!slot.pid.compare_exchange_strong(expected, self)) {
    return fail(ErrorCode::kAlreadyExists, "client " + quoted(rt.name) + " is already attached to instance " +
                                               quoted(rt.instance, 256) + " (pid " + std::to_string(expected) + ")");
  }
  slot.startTime.store(ipc::processStartTime(::getpid()), std::memory_order_relaxed);
  slot.state.store(static_cast<std::uint32_t>(shm::ClientState::kAttached), std::memory_order_release);
  ipc::signalWord(rt.view.header().attention);
  return {};
}

// How the instance was chosen and how to choose another, for the waiting messages.
std::string howToSet(const Runtime& rt) {
  return "instance " + quoted(rt.instance, 256) + " from " + rt.instanceSource +
         "; it must equal the master's -D: set TACTUS_INSTANCE, or InitOptions::instance";
}

// A multi-SoC run: each SoC's master publishes the segment `<instance>.soc<k>` (socInstanceName),
// and no segment has the plain instance name. The client reads the schedule (the same on every
// SoC) from any SoC segment published by a live master, finds its own client's SoC k there, and
// from then on waits for `<instance>.soc<k>` alone. Returns that name, or "" while no SoC segment
// names the client.
std::string socInstanceOf(const Runtime& rt) {
  const std::string prefix = ipc::segmentName(rt.instance) + std::string(shm::kSocInstanceMarker);
  std::vector<std::string> found;
  if (DIR* dir = ::opendir("/dev/shm"); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string file = entry->d_name;
      if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string digits = file.substr(prefix.size());
      if (digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      found.push_back(rt.instance + std::string(shm::kSocInstanceMarker) + digits);
    }
    ::closedir(dir);
  }
  std::sort(found.begin(), found.end());
  for (const std::string& instance : found) {
    auto segment = ipc::Segment::open(instance);
    if (!segment) continue;
    segment->guardAgainstTruncation();
    shm::SegmentView view(segment->bytes());
    if (!view.hasHeader() || view.header().masterPid.load(std::memory_order_acquire) == 0) continue;
    const auto state = static_cast<SegmentState>(view.header().state.load(std::memory_order_acquire));
    if (state != SegmentState::kPublished && state != SegmentState::kRunning) continue;
    if (!view.validate()) continue;
    const std::string text(view.scheduleText());  // copied before it is parsed
    auto schedule = readSchedule(text, ipc::segmentPath(instance), nullptr);
    if (!schedule) continue;
    for (const ClientInfo& client : schedule->clients) {
      if (client.name == rt.name && client.soc != kNone && client.soc < schedule->socs.size())
        return shm::socInstanceName(rt.instance, client.soc);
    }
  }
  return "";
}

// The waiting client's line of explanation: the instance, why it waits, where the name came
// from and the other instances of this user.
void explain(const Runtime& rt, const std::string& why, const char* still) {
  std::fprintf(stderr, "tactus: client %s: %swaiting for tactus-master of instance %s (segment %s): %s (%s%s)\n",
               quoted(rt.name).c_str(), still, quoted(rt.instance, 256).c_str(), ipc::segmentPath(rt.instance).c_str(),
               why.c_str(), howToSet(rt).c_str(),
               otherInstancesHint(rt.instance, "", "instances with a segment now").c_str());
  std::fflush(stderr);
}

// Waits until the instance's segment is published by a live master and maps it.
Result<void> findMaster(Runtime& rt, const InitOptions& options) {
  const std::int64_t deadline = ipc::deadlineAfterMs(ipc::monotonicNs(), options.timeoutMs);
  std::string said;  // the reason printed last: each one is printed once
  std::int64_t saidAtNs = 0;
  bool explained = false;
  std::int64_t unfinishedSince = 0;
  std::int64_t notedAtNs = 0;
  bool socChosen = false;
  for (;;) {
    if (!socChosen && !ipc::segmentExists(rt.instance)) {
      if (std::string soc = socInstanceOf(rt); !soc.empty()) {
        rt.instanceSource += ", its SoC's segment of a multi-SoC schedule";
        rt.instance = soc;
        socChosen = true;
      }
    }
    auto look = lookOnce(rt, unfinishedSince);
    if (!look) return look.error();
    if (look->attached) return {};  // guarded since it was opened
    // Told again every second while it lasts: a note nobody received (no master yet) is lost.
    if (!look->note.empty() && (look->why != said || ipc::monotonicNs() - notedAtNs >= kNoteAgainNs)) {
      (void)ipc::sendNote(noteBoxOf(rt), rt.name, look->note);
      notedAtNs = ipc::monotonicNs();
    }
    // A client started before its master is the usual case: one short line; the explanation (where
    // the instance came from, the other instances) only once it has waited kExplainAfterNs for it.
    // Any other reason is explained at once.
    const std::int64_t now = ipc::monotonicNs();
    const bool usual = look->why == kNoSegmentYet;
    if (look->why != said) {
      said = look->why;
      saidAtNs = now;
      explained = !usual;
      if (usual) {
        std::fprintf(stderr, "tactus: client %s: waiting for tactus-master of instance %s\n", quoted(rt.name).c_str(),
                     quoted(rt.instance, 256).c_str());
      } else {
        explain(rt, said, "");
      }
      std::fflush(stderr);
    } else if (!explained && now - saidAtNs >= kExplainAfterNs) {
      explained = true;
      explain(rt, said, "still ");
    }
    if (ipc::monotonicNs() >= deadline) {
      return fail(ErrorCode::kTimeout, "client " + quoted(rt.name) + ": no master for instance " +
                                           quoted(rt.instance, 256) + " within " + std::to_string(options.timeoutMs) +
                                           " ms (" + said + "; " + howToSet(rt) +
                                           otherInstancesHint(rt.instance, "", "instances with a segment now") + ")");
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
  }
}

}  // namespace

Result<void> chooseInstance(Runtime& rt, const InitOptions& options) {
  ipc::ChosenInstance chosen =
      ipc::chooseInstance(options.instance, "InitOptions::instance",
                          "the default (neither InitOptions::instance nor TACTUS_INSTANCE is set)");
  rt.instance = std::move(chosen.name);
  rt.instanceSource = std::move(chosen.source);
  if (auto ok = ipc::validateInstanceName(rt.instance); !ok) {
    return fail(ok.error().code, "client " + quoted(rt.name) + ": " + rt.instanceSource + ": " + ok.error().message);
  }
  return {};
}

Result<void> attach(Runtime& rt, const InitOptions& options) {
  if (auto ok = findMaster(rt, options); !ok) return ok;
  return takeCopies(rt, false);
}

Result<void> attachMode(Runtime& mode, const Runtime& primary, std::uint32_t index, const InitOptions& options) {
  mode.name = primary.name;
  mode.instance = shm::scheduleInstanceName(primary.instance, index);
  mode.noteTo = noteBoxOf(primary);  // the master hears notes at its first schedule's name only
  // The master publishes the other schedules before the first: they are there, or never will be.
  InitOptions bounded = options;
  bounded.timeoutMs = 1000;
  if (auto ok = findMaster(mode, bounded); !ok) return ok;
  if (mode.masterPid != primary.masterPid) {
    return fail(ErrorCode::kIncompatible, ipc::segmentPath(mode.instance) + ": published by master pid " +
                                              std::to_string(mode.masterPid) + ", not by the instance's master pid " +
                                              std::to_string(primary.masterPid));
  }
  if (auto ok = takeCopies(mode, true); !ok) return ok;
  if (mode.view.header().scheduleIndex != index) {
    return fail(ErrorCode::kIncompatible, ipc::segmentPath(mode.instance) + ": holds schedule index " +
                                              std::to_string(mode.view.header().scheduleIndex) + ", expected " +
                                              std::to_string(index));
  }
  return {};
}

}  // namespace tactus::client
