// Process liveness and identity (Linux: pidfd_open, /proc).
#include "tactus/ipc/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace tactus::ipc {
namespace {

// Reads state and start time from /proc/<pid>/stat; false when the process is gone.
bool readStat(pid_t pid, char& state, std::uint64_t& startTime) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // The command name (field 2) may contain spaces and ')': parse after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return false;
  p += 2;
  state = *p;
  // Field 3 is the state; field 22 is starttime: skip 19 more fields.
  int field = 3;
  while (*p && field < 22) {
    if (*p == ' ') ++field;
    ++p;
  }
  startTime = std::strtoull(p, nullptr, 10);
  return true;
}

}  // namespace

std::uint64_t processStartTime(pid_t pid) {
  char state = 0;
  std::uint64_t start = 0;
  return readStat(pid, state, start) ? start : 0;
}

bool processAlive(pid_t pid, std::uint64_t startTime) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  char state = 0;
  std::uint64_t start = 0;
  if (!readStat(pid, state, start)) return false;
  if (state == 'Z' || state == 'X') return false;
  return startTime == 0 || start == startTime;
}

std::optional<bool> processMaps(pid_t pid, const std::string& path) {
  const std::string file = "/proc/" + std::to_string(pid) + "/maps";
  {
    // Not ours to read (another user's: the open or the read is refused) is unknown; read, but
    // empty, is a process with no memory left to show (one exiting, a kernel thread): it maps
    // nothing. (Taken for unreadable, an exiting process once let a client attach to a header
    // that named it, forged, while the real master held the lock; the client then watched it die.)
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char first = 0;
    const ssize_t n = ::read(fd, &first, 1);
    ::close(fd);
    if (n < 0) return std::nullopt;
    if (n == 0) return false;
  }
  std::ifstream maps(file);
  if (!maps) return std::nullopt;
  std::string line;
  if (!std::getline(maps, line)) return false;  // it exited since
  // The file by its device and inode as well as by its name: /dev/shm may be shown under another
  // path (a symbolic link to /run/shm, a container's mount), and a live owner must never be missed.
  struct stat st {};
  const bool known = ::stat(path.c_str(), &st) == 0;
  do {
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0) return true;
    unsigned devMajor = 0, devMinor = 0;
    unsigned long long inode = 0;
    if (known && std::sscanf(line.c_str(), "%*s %*s %*s %x:%x %llu", &devMajor, &devMinor, &inode) == 3 &&
        inode == st.st_ino && devMajor == major(st.st_dev) && devMinor == minor(st.st_dev))
      return true;
  } while (std::getline(maps, line));
  return false;
}

Ownership processOwns(pid_t pid, std::uint64_t startTime, const std::string& path) {
  if (!processAlive(pid, startTime)) return Ownership::kGone;
  const std::optional<bool> maps = processMaps(pid, path);
  if (!maps) return Ownership::kUnknown;
  return *maps ? Ownership::kMaps : Ownership::kNotMapped;
}

ProcessWatch::ProcessWatch(pid_t pid, std::uint64_t startTime) : pid_(pid), startTime_(startTime) {
#ifdef SYS_pidfd_open
  fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd_ < 0 && errno == ESRCH) goneAtOpen_ = true;
#endif
  // A pid reused between reading it and opening the pidfd would be watched by mistake; the
  // start time check catches that.
  if (fd_ >= 0 && startTime_ != 0 && processStartTime(pid) != startTime_) goneAtOpen_ = true;
}

ProcessWatch::ProcessWatch(ProcessWatch&& other) noexcept
    : pid_(other.pid_), startTime_(other.startTime_), fd_(other.fd_), goneAtOpen_(other.goneAtOpen_) {
  other.fd_ = -1;
  other.pid_ = 0;
}

ProcessWatch& ProcessWatch::operator=(ProcessWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    pid_ = other.pid_;
    startTime_ = other.startTime_;
    fd_ = other.fd_;
    goneAtOpen_ = other.goneAtOpen_;
    other.fd_ = -1;
    other.pid_ = 0;
  }
  return *this;
}

ProcessWatch::~ProcessWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool ProcessWatch::exited() const {
  if (pid_ <= 0) return false;
  if (goneAtOpen_) return true;
  if (fd_ >= 0) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  return !processAlive(pid_, startTime_);
}

bool pinThisThread(std::uint32_t core) {
  if (core >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

bool canPinThisThread(std::uint32_t core) {
  cpu_set_t before;
  if (::pthread_getaffinity_np(::pthread_self(), sizeof before, &before) != 0) return false;
  const bool pinned = pinThisThread(core);
  if (pinned) ::pthread_setaffinity_np(::pthread_self(), sizeof before, &before);
  return pinned;
}

}  // namespace tactus::ipc
