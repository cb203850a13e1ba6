// The client's main thread while its workers run (run_watch.hpp).
#include "run_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::client {

namespace {

constexpr int kSegmentLookMs = 100;                // between looks at the segment, with a pidfd
constexpr std::int64_t kWatchSliceNs = 5'000'000;  // between looks at everything, without one

}  // namespace

void watchMasterAndSegment(Runtime& rt) {
  if (rt.halted.load()) return;
  // The segment first: a master that found it truncated and ended its run is gone by now, and the
  // truncation, not its exit, is the cause.
  watchSegment(rt);
  if (rt.halted.load()) return;
  if (rt.masterWatch.exited()) {
    rt.masterDead.store(true);
    rt.halted.store(true);
  }
}

void watchSegment(Runtime& rt) {
  if (rt.halted.load()) return;
  std::string damage = rt.segment.damage(rt.instance, false, "this client");
  if (!damage.empty()) {
    rt.damage = "segment " + ipc::segmentPath(rt.instance) + " damaged: " + damage;
    rt.halted.store(true);
  }
}

WorkerExits::WorkerExits() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

WorkerExits::~WorkerExits() {
  if (fd_ >= 0) ::close(fd_);
}

void WorkerExits::leave(std::atomic<std::uint32_t>& running) const noexcept {
  running.fetch_sub(1);
  ipc::futexWake(running);
  if (fd_ < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(fd_, &one, sizeof one);
}

void watchWhileWorkersRun(Runtime& primary, const std::vector<Runtime*>& all, WorkerExits& exits) {
  const int masterFd = primary.masterWatch.pollFd();
  for (;;) {
    const std::uint32_t running = primary.workersRunning.load();
    if (running == 0) return;
    watchMasterAndSegment(primary);
    for (Runtime* rt : all) {
      if (rt != &primary) watchSegment(*rt);  // under a manager: every schedule's segment
    }
    bool halted = false;  // any schedule's: a failed GPU call halts the workers of its schedule
    for (const Runtime* rt : all) halted = halted || rt->halted.load();
    if (halted) {
      // Each round while the workers leave: a worker that was about to park when the halt came
      // is woken by a later round.
      for (Runtime* rt : all) {
        rt->halted.store(true);
        wakeParkedWorkers(*rt);
      }
    }
    if (halted || masterFd < 0 || exits.fd_ < 0) {
      // Halted, the workers leave soon (the master's pidfd would stay readable: no poll on it).
      ipc::futexWait(primary.workersRunning, running, kWatchSliceNs);
      continue;
    }
    // A worker that left after the load above has written the eventfd: the poll returns at once.
    pollfd fds[2] = {{masterFd, POLLIN, 0}, {exits.fd_, POLLIN, 0}};
    if (::poll(fds, 2, kSegmentLookMs) > 0 && (fds[1].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      (void)!::read(exits.fd_, &count, sizeof count);
    }
  }
}

}  // namespace tactus::client
