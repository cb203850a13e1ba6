// Helpers every benchmark may share: child processes (spawn, pin, wait with a deadline),
// percentiles, and a temporary directory; header-only (bench_support_dep). The clock is
// ipc::monotonicNs, the one the runtime stamps its event log with.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tactus/ipc/clock.hpp"

namespace tactus::bench {

using ipc::monotonicNs;

/// Pins the calling thread to one core; false when that fails (fewer cores, a cpuset).
inline bool pinToCore(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/// Whether this process may run on cores 0 and 1 (the benchmarks need both); leaves the
/// calling thread's affinity as it found it.
inline bool haveCores01() {
  cpu_set_t saved;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sched_getaffinity(0, sizeof(saved), &saved) != 0) return false;
  const bool ok = pinToCore(1) && pinToCore(0);
  sched_setaffinity(0, sizeof(saved), &saved);
  return ok;
}

/// Starts `argv` with stdout and stderr going to `outputPath` (appended); returns the pid or -1.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = ::open(outputPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    ::close(fd);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

/// Sleeps until one of `pids` may have exited or `deadlineNs` (CLOCK_MONOTONIC) has come: on
/// their pidfds, so that the harness does not wake during a measured run (a poll every 2 ms took a
/// core from the run and cooled its caches); a 2 ms sleep where pidfd_open fails.
inline void awaitExit(const std::vector<pid_t>& pids, std::int64_t deadlineNs) {
  const std::int64_t left = deadlineNs - monotonicNs();
  if (left <= 0 || pids.empty()) return;
  std::vector<pollfd> fds;
#ifdef SYS_pidfd_open
  for (const pid_t pid : pids) {
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) break;
    fds.push_back({fd, POLLIN, 0});
  }
#endif
  if (fds.size() == pids.size()) {
    (void)::poll(fds.data(), fds.size(), static_cast<int>(std::min<std::int64_t>(left / 1'000'000 + 1, 60'000)));
  } else {
    usleep(2000);
  }
  for (const pollfd& p : fds) ::close(p.fd);
}

/// Waits for `pid` until `deadlineNs` (CLOCK_MONOTONIC); kills it after that. Returns its exit
/// status, 128 + signal when killed by one, or -1 when it had to be killed at the deadline.
inline int waitUntil(pid_t pid, std::int64_t deadlineNs) {
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (monotonicNs() > deadlineNs) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    awaitExit({pid}, deadlineNs);
  }
}

/// Forks two processes pinned to cores 0 and 1 (the bare loops' two sides), each running
/// `side(0)` or `side(1)` and exiting 0, and waits for both until `deadlineNs`. True when both ran
/// and exited 0; false when one failed, was killed at the deadline, or could not be forked (then
/// the other is killed).
template <typename Side>
bool runPinnedPair(Side&& side, std::int64_t deadlineNs) {
  pid_t children[2] = {-1, -1};
  for (int s = 0; s < 2; ++s) {
    children[s] = fork();
    if (children[s] < 0) {
      if (s == 1) {
        kill(children[0], SIGKILL);
        waitpid(children[0], nullptr, 0);
      }
      return false;
    }
    if (children[s] == 0) {
      pinToCore(s);
      side(s);
      _exit(0);
    }
  }
  bool ok = true;
  for (const pid_t c : children) ok = waitUntil(c, deadlineNs) == 0 && ok;
  return ok;
}

/// Waits for all of `pids` (a master and its clients) until `deadlineNs`. When one fails
/// (non-zero exit), the others get SIGTERM, so that a master does not wait out its timeout for a
/// client that will never come; SIGKILL at the deadline. Returns the statuses as waitUntil does.
inline std::vector<int> waitAll(const std::vector<pid_t>& pids, std::int64_t deadlineNs) {
  std::vector<int> status(pids.size(), 0);
  std::vector<bool> done(pids.size(), false);
  bool stopping = false;
  for (std::size_t left = pids.size(); left > 0;) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int st = 0;
      const pid_t r = waitpid(pids[i], &st, WNOHANG);
      if (r == 0 && monotonicNs() <= deadlineNs) continue;
      if (r == pids[i]) {
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      } else {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], &st, 0);
        status[i] = -1;
      }
      done[i] = true;
      --left;
      if (status[i] != 0 && !stopping) {
        stopping = true;
        for (std::size_t j = 0; j < pids.size(); ++j) {
          if (!done[j]) kill(pids[j], SIGTERM);
        }
        deadlineNs = std::min<std::int64_t>(deadlineNs, monotonicNs() + 5'000'000'000);
      }
    }
    std::vector<pid_t> running;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (!done[i]) running.push_back(pids[i]);
    }
    awaitExit(running, deadlineNs);
  }
  return status;
}

/// A runnable that keeps its core busy for *static_cast<const std::int64_t*>(arg) ns, as a real
/// computation would (the benchmarks' clients register it with the length as userdata).
inline void busyWaitFor(void* arg) {
  const std::int64_t until = monotonicNs() + *static_cast<const std::int64_t*>(arg);
  while (monotonicNs() < until) {}
}

/// The calling process's CPU time so far (user + system, ns).
inline std::int64_t processCpuNs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1'000'000'000LL +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1'000LL;
}

/// Reads a small text file whole (for showing a child's output when it failed).
inline std::string readText(const std::string& path) {
  std::string text;
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

/// The q-quantile (0 < q <= 1; nearest rank) of `values`, already sorted; 0 when empty.
inline double percentileOfSorted(const std::vector<std::int64_t>& values, double q) {
  if (values.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return static_cast<double>(values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)]);
}

/// The q-quantile (nearest rank) of `values` in microseconds, the values in nanoseconds.
inline double percentileUs(std::vector<std::int64_t> values, double q) {
  std::sort(values.begin(), values.end());
  return percentileOfSorted(values, q) / 1e3;
}

/// p50, p99, p99.9 and max of a sample, in nanoseconds.
struct Percentiles {
  std::size_t count = 0;
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
};

/// Nearest-rank percentiles of `values` (sorted in place).
inline Percentiles percentiles(std::vector<std::int64_t>& values) {
  Percentiles p;
  p.count = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  p.p50 = percentileOfSorted(values, 0.50);
  p.p99 = percentileOfSorted(values, 0.99);
  p.p999 = percentileOfSorted(values, 0.999);
  p.max = static_cast<double>(values.back());
  return p;
}

/// A temporary directory removed with its contents at destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tactus-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The directory; empty when it could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tactus::bench
