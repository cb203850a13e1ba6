// The master's deployment settings from the environment (see deploy_env.hpp): kept event logs
// and the segment's group.
#include "deploy/deploy_env.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

Result<unsigned> keptLogs() {
  const char* text = std::getenv("TACTUS_LOG_KEEP");
  if (text == nullptr || *text == '\0') return kDefaultKeptLogs;
  const char* end = text + std::strlen(text);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value > limits::kMaxKeptEventLogs) {
    return fail(ErrorCode::kBadParameter, "TACTUS_LOG_KEEP=" + quoted(text) + ": expects a count 0.." +
                                              std::to_string(limits::kMaxKeptEventLogs) +
                                              " of earlier event logs to keep");
  }
  return value;
}

Result<gid_t> groupId(const std::string& name) {
  gid_t gid = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), gid);
  if (ec == std::errc() && ptr == name.data() + name.size()) return gid;
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  const int rc = ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0 || found == nullptr) {
    return fail(ErrorCode::kBadParameter, "TACTUS_SEGMENT_GROUP=" + quoted(name) + ": no such group" +
                                              (rc != 0 ? std::string(" (") + std::strerror(rc) + ")" : ""));
  }
  return found->gr_gid;
}

}  // namespace

Result<void> keepEarlierLogs(const std::string& path) {
  auto keep = keptLogs();
  if (!keep) return keep.error();
  if (*keep == 0 || !exists(path)) return {};
  auto rotate = [](const std::string& from, const std::string& to) -> Result<void> {
    if (::rename(from.c_str(), to.c_str()) == 0) return {};
    return fail(ErrorCode::kIo, from + ": cannot keep the earlier event log as " + to + ": " + std::strerror(errno));
  };
  // The oldest kept (path.N) is replaced by the rename of path.(N-1).
  for (unsigned k = *keep - 1; k >= 1; --k) {
    const std::string from = path + "." + std::to_string(k);
    if (!exists(from)) continue;
    if (auto ok = rotate(from, path + "." + std::to_string(k + 1)); !ok) return ok;
  }
  return rotate(path, path + ".1");
}

Result<void> openEventLog(EventLogWriter& log, const std::string& path, std::uint16_t identifier,
                          std::uint64_t contentHash) {
  if (path.empty()) return {};
  if (auto ok = keepEarlierLogs(path); !ok) return ok;
  return log.open(path, identifier, contentHash);
}

Result<void> shareSegmentWithGroup(const std::string& instance) {
  const char* text = std::getenv("TACTUS_SEGMENT_GROUP");
  if (text == nullptr || *text == '\0') return {};
  auto gid = groupId(text);
  if (!gid) return gid.error();
  const std::string path = ipc::segmentPath(instance);
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(ErrorCode::kIo, path + ": cannot open it to share it: " + std::strerror(errno));
  std::string why;
  if (::fchown(fd, static_cast<uid_t>(-1), *gid) != 0) {
    why = std::string("cannot give it to the group: ") + std::strerror(errno) +
          " (the master's user must be a member of the group, e.g. SupplementaryGroups= in its unit)";
  } else if (::fchmod(fd, S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP) != 0) {
    why = std::string("cannot make it group-writable: ") + std::strerror(errno);
  }
  ::close(fd);
  if (!why.empty()) {
    return fail(ErrorCode::kIo, path + ": TACTUS_SEGMENT_GROUP=" + quoted(text) + ": " + why);
  }
  return {};
}

}  // namespace tactus::master
