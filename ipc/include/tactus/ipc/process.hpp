// Watching other processes: liveness through pidfd (with a /proc fallback) and process identity
// (pid plus start time, so a reused pid is not mistaken for the original process).
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <optional>
#include <string>

namespace tactus::ipc {

/// The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), 0 when
/// the process does not exist. Together with the pid it identifies a process across pid reuse.
std::uint64_t processStartTime(pid_t pid);

/// Whether the process `pid` with start time `startTime` (0: any) is alive; a zombie counts as dead.
bool processAlive(pid_t pid, std::uint64_t startTime = 0);

/// Whether process `pid` has the file `path` mapped (/proc/<pid>/maps); nothing when that cannot
/// be read (another user's process, a container's limits). A segment's master and a manager map
/// theirs for as long as they use it: a live pid that has not is no owner of it (a forged or
/// copied header, a claim written over).
std::optional<bool> processMaps(pid_t pid, const std::string& path);

/// What process `pid` is to the file `path` that names it as its owner (a segment's master, a
/// channel's manager): see processOwns.
enum class Ownership {
  kGone,       ///< not alive (with start time `startTime` where given): it owns nothing
  kNotMapped,  ///< alive, but it has not mapped the file: no owner of it (a forged or copied claim)
  kMaps,       ///< alive, and it has the file mapped
  kUnknown,    ///< alive, its maps unreadable (another user's process): the caller decides
};

/// Whether live process `pid` (start time `startTime`, 0: any) is the owner of `path`:
/// processAlive, then processMaps.
Ownership processOwns(pid_t pid, std::uint64_t startTime, const std::string& path);

/// Pins the calling thread to `core`: whether it could (false beyond CPU_SETSIZE, or where the
/// core is offline, absent or outside the process's cpuset).
bool pinThisThread(std::uint32_t core);

/// Whether the calling thread could be pinned to `core` (online, inside the process's cpuset; a
/// taskset mask does not forbid it): tried on the calling thread, whose affinity is then put back.
/// No thread is started for the check, so it costs no task under a pids limit.
bool canPinThisThread(std::uint32_t core);

/// Watches one process for exit. Uses pidfd_open + poll (readable once the process has exited,
/// zombie included); falls back to /proc when pidfds are unavailable.
class ProcessWatch {
 public:
  ProcessWatch() = default;
  /// Starts watching `pid`; `startTime` (0: unknown) guards against pid reuse.
  ProcessWatch(pid_t pid, std::uint64_t startTime);
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;
  ProcessWatch(ProcessWatch&& other) noexcept;
  ProcessWatch& operator=(ProcessWatch&& other) noexcept;
  ~ProcessWatch();

  /// The watched pid (0 when watching nothing).
  pid_t pid() const { return pid_; }
  /// True once the process has exited (never blocks).
  bool exited() const;
  /// The pidfd, readable once the process has exited, for poll(2) alongside other descriptors;
  /// -1 when watching through /proc (then only exited() tells), or when it was gone at the start.
  int pollFd() const { return goneAtOpen_ ? -1 : fd_; }

 private:
  pid_t pid_ = 0;
  std::uint64_t startTime_ = 0;
  int fd_ = -1;
  bool goneAtOpen_ = false;
};

}  // namespace tactus::ipc
