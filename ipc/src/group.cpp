// Removing what a dead master left of its group of segments (see segment.hpp).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::ipc {
namespace {

// How long a segment that names no master (one killed while it created it) may be a live master's
// work in progress: a master fills its header within milliseconds.
constexpr std::time_t kUnfinishedAgeS = 1;

// `name` without a trailing `<marker><digits>`, or as it is.
std::string withoutSuffix(const std::string& name, std::string_view marker) {
  const std::size_t at = name.rfind(marker);
  if (at == std::string::npos || at + marker.size() >= name.size()) return name;
  if (name.find_first_not_of("0123456789", at + marker.size()) != std::string::npos) return name;
  return name.substr(0, at);
}

// The master that wrote the member's identity (pid 0: none yet) and whether it holds the
// member's owner lock (schedule segments only: a master holds no lock on its channel).
struct Owner {
  std::uint32_t pid = 0;
  std::uint64_t startTime = 0;
  bool locked = false;
};

Owner ownerOf(const Segment& segment, bool channel) {
  Owner o;
  const std::span<std::byte> bytes = segment.bytes();
  if (channel) {
    if (bytes.size() < sizeof(shm::ManagerChannel)) return o;
    const auto* c = reinterpret_cast<const shm::ManagerChannel*>(bytes.data());
    o.pid = c->masterPid.load(std::memory_order_acquire);
    o.startTime = c->masterStartTime.load(std::memory_order_relaxed);
  } else {
    o.locked = segment.lockHeldElsewhere(shm::kOwnerLockByte);
    if (bytes.size() < sizeof(shm::SegmentHeader)) return o;
    const auto* h = reinterpret_cast<const shm::SegmentHeader*>(bytes.data());
    o.pid = h->masterPid.load(std::memory_order_acquire);
    o.startTime = h->masterStartTime.load(std::memory_order_relaxed);
  }
  if (segment.busFault()) o = Owner{};  // truncated under us: zeros, so no identity
  return o;
}

// Why the member is a dead master's remains ("" when it may be a live master's).
std::string deadRemains(const std::string& member, bool channel) {
  auto segment = Segment::open(member);
  if (!segment) return "";
  segment->guardAgainstTruncation();
  const Owner o = ownerOf(*segment, channel);
  if (o.locked) return "";  // a live master holds it, whatever its header says
  std::string why;
  if (o.pid != 0) {
    if (processAlive(static_cast<pid_t>(o.pid), o.startTime)) return "";
    why = "master pid " + std::to_string(o.pid) + " is gone";
  } else {
    struct stat st {};
    if (::stat(segmentPath(member).c_str(), &st) != 0 || std::time(nullptr) - st.st_ctime <= kUnfinishedAgeS) return "";
    why = "it names no master, and none holds its lock";
  }
  return segment->removeNameIfStillOurs(member) ? why : "";
}

}  // namespace

std::vector<std::string> removeDeadMastersGroup(const std::string& instance) {
  // The group: the schedules' segments `<base>`, `<base>.schedule<k>`, and the run's channel
  // (a multi-SoC run's is named by the instance without `.soc<k>`).
  const std::string base = withoutSuffix(instance, ".schedule");
  const std::string run = withoutSuffix(base, shm::kSocInstanceMarker);
  std::vector<std::string> schedules{base};
  const std::string prefix = segmentName(base) + ".schedule";
  if (DIR* dir = ::opendir("/dev/shm"); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string file = entry->d_name;
      if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
      if (file.find_first_not_of("0123456789", prefix.size()) != std::string::npos) continue;
      schedules.push_back(base + file.substr(segmentName(base).size()));
    }
    ::closedir(dir);
  }
  std::sort(schedules.begin() + 1, schedules.end());
  std::vector<std::string> removed;
  for (const std::string& member : schedules) {
    if (const std::string why = deadRemains(member, false); !why.empty())
      removed.push_back(segmentPath(member) + " (" + why + ")");
  }
  const std::string channel = shm::managerInstanceName(run);
  if (const std::string why = deadRemains(channel, true); !why.empty())
    removed.push_back(segmentPath(channel) + " (" + why + ")");
  return removed;
}

}  // namespace tactus::ipc
