// The plan run bare (bare_plan.hpp).
#include "bare_plan.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <new>

#include "bench_support.hpp"
#include "tactus/core/run_plan.hpp"

namespace tactus::bench {

namespace {

// The shared memory of a bare run: a done word per instance (`Word`, a cache line each) and a
// start and an end stamp per run (instance, iteration); unmapped at destruction.
template <typename Word>
class RunMemory {
 public:
  RunMemory(const Schedule& s, int iterations)
      : count_(s.instances.size()),
        stamps_(count_ * static_cast<std::size_t>(iterations)),
        bytes_(sizeof(Word) * count_ + 2 * sizeof(std::int64_t) * stamps_),
        memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) {
    if (memory_ == MAP_FAILED) return;
    done = new (memory_) Word[count_];
    startNs = reinterpret_cast<std::int64_t*>(static_cast<char*>(memory_) + sizeof(Word) * count_);
    endNs = startNs + stamps_;
  }
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;
  ~RunMemory() {
    if (memory_ != MAP_FAILED) munmap(memory_, bytes_);
  }
  bool ok() const { return memory_ != MAP_FAILED; }

  Word* done = nullptr;
  std::int64_t* startNs = nullptr;  // [iteration * instances + instance]
  std::int64_t* endNs = nullptr;

 private:
  std::size_t count_, stamps_, bytes_;
  void* memory_;
};

// Each instance's length, resolved once.
std::vector<std::int64_t> lengthsOf(const Schedule& s, const std::function<std::int64_t(InstanceId)>& length) {
  std::vector<std::int64_t> lengths(s.instances.size());
  for (const InstanceId i : s.instances.ids()) lengths[index(i)] = length(i);
  return lengths;
}

}  // namespace

std::int64_t planLength(const Schedule& s) {
  std::int64_t lo = INT64_MAX, hi = 0;
  for (const auto& i : s.instances) {
    lo = std::min(lo, i.startNs);
    hi = std::max(hi, i.endNs);
  }
  return s.instances.empty() ? 0 : hi - lo;
}

Timelines::Timelines(const Schedule& s) : of(s.instances.size(), UINT32_MAX), previous(s.instances.size(), UINT32_MAX) {
  std::uint32_t t = 0;
  for (const TimelineInfo& timeline : s.timelines) {
    const auto& list = timeline.instances;
    ++t;
    for (std::size_t k = 0; k < list.size(); ++k) {
      of[index(list[k])] = t;
      if (k > 0) previous[index(list[k])] = index(list[k - 1]);
    }
  }
}

long childPreemptions() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_nivcsw;
}

BareRun bareRun(const Schedule& s, int iterations, std::int64_t periodNs,
                const std::function<std::int64_t(InstanceId)>& length) {
  struct alignas(64) Done {
    std::atomic<std::uint32_t> iterations{0};
  };
  const std::size_t count = s.instances.size();
  RunMemory<Done> shared(s, iterations);
  if (!shared.ok()) return {};
  Done* done = shared.done;
  std::int64_t* startNs = shared.startNs;
  std::int64_t* endNs = shared.endNs;
  const std::vector<std::int64_t> lengths = lengthsOf(s, length);
  const std::int64_t firstNs = monotonicNs() + 20'000'000;  // both sides are up and pinned by then
  const auto runSide = [&](int side) {
    std::vector<InstanceId> mine;  // this core's instances, in plan order
    for (const TimelineInfo& t : s.timelines) {
      if (s.resources[t.resource].core % 2 == static_cast<std::uint32_t>(side))
        mine.insert(mine.end(), t.instances.begin(), t.instances.end());
    }
    std::sort(mine.begin(), mine.end(),
              [&](InstanceId a, InstanceId b) { return s.instances[a].startNs < s.instances[b].startNs; });
    for (int h = 0; h < iterations; ++h) {
      // Both sides wake a lead before the iteration's start and spin until it, so that they
      // start together as one release starts tactus's workers (a sleep's own wake-up varies by
      // tens of microseconds between the two, which would count in the makespan).
      const std::int64_t at = firstNs + h * periodNs;
      const std::int64_t wake = at - 200'000;
      const timespec t{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {}
      while (monotonicNs() < at) {}
      for (const InstanceId i : mine) {
        for (const InstanceId d : s.instances[i].dependencies) {
          while (done[index(d)].iterations.load(std::memory_order_acquire) < static_cast<std::uint32_t>(h + 1)) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
          }
        }
        const std::int64_t start = monotonicNs();
        const std::int64_t until = start + lengths[index(i)];
        std::int64_t end = start;
        if (lengths[index(i)] > 0)
          while ((end = monotonicNs()) < until) {}
        else end = monotonicNs();
        const std::size_t k = static_cast<std::size_t>(h) * count + index(i);
        startNs[k] = start;
        endNs[k] = end;
        done[index(i)].iterations.store(static_cast<std::uint32_t>(h + 1), std::memory_order_release);
      }
    }
  };
  const long preemptedBefore = childPreemptions();
  const bool ok = runPinnedPair(runSide, monotonicNs() + 300'000'000'000LL);
  BareRun out;
  out.preemptions = childPreemptions() - preemptedBefore;
  const Timelines timelines(s);
  for (int h = 0; ok && h < iterations; ++h) {
    std::int64_t lo = INT64_MAX, hi = 0;
    const std::size_t base = static_cast<std::size_t>(h) * count;
    for (std::size_t i = 0; i < count; ++i) {
      lo = std::min(lo, startNs[base + i]);
      hi = std::max(hi, endNs[base + i]);
      const std::uint32_t previous = timelines.previous[i];
      std::int64_t ready = previous != UINT32_MAX ? endNs[base + previous] : 0;
      bool cross = false;
      for (const InstanceId d : s.instances[InstanceId{static_cast<std::uint32_t>(i)}].dependencies) {
        if (endNs[base + index(d)] <= ready) continue;
        ready = endNs[base + index(d)];
        cross = timelines.of[index(d)] != timelines.of[i];
      }
      if (ready > 0) out.handOffs.add(startNs[base + i] - ready, cross);
      out.stretches.push_back(endNs[base + i] - startNs[base + i] - lengths[i]);
    }
    out.makespans.push_back(hi - lo);
  }
  return out;
}

}  // namespace tactus::bench

namespace tactus::bench {
namespace {

struct alignas(64) DoneWord {
  std::atomic<std::uint32_t> iterations{0};
  std::atomic<std::uint32_t> waiters{0};
};

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

std::vector<std::int64_t> bareRunProcesses(const Schedule& s, int iterations, std::int64_t periodNs,
                                           const std::function<std::int64_t(InstanceId)>& length) {
  auto plan = makeRunPlan(s);
  if (!plan) return {};
  const std::size_t count = s.instances.size();
  RunMemory<DoneWord> shared(s, iterations);
  if (!shared.ok()) return {};
  DoneWord* done = shared.done;
  std::int64_t* startNs = shared.startNs;
  std::int64_t* endNs = shared.endNs;
  const std::vector<std::int64_t> lengths = lengthsOf(s, length);
  const Timelines timelines(s);
  const std::int64_t firstNs = monotonicNs() + 50'000'000;  // every process is up and pinned by then
  std::vector<pid_t> children;
  for (const WorkerPlan& w : plan->workers) {
    const pid_t child = fork();
    if (child < 0) break;
    if (child > 0) {
      children.push_back(child);
      continue;
    }
    pinToCore(static_cast<int>(s.resources[w.resource].core % 2));
    for (int h = 0; h < iterations; ++h) {
      const auto target = static_cast<std::uint32_t>(h + 1);
      for (const InstanceId i : w.instances) {
        const std::uint32_t previous = timelines.previous[index(i)];
        if (previous == UINT32_MAX) {  // the first of its core's timeline: the iteration's start
          const std::int64_t at = firstNs + h * periodNs;
          const std::int64_t wake = at - 200'000;
          const timespec t{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
          while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {}
          while (monotonicNs() < at) {}
        } else if (plan->instanceWorker[InstanceId{previous}] != plan->instanceWorker[i]) {
          DoneWord& d = done[previous];  // another process has the core until it ends
          for (std::uint32_t seen; (seen = d.iterations.load(std::memory_order_seq_cst)) < target;) {
            d.waiters.fetch_add(1, std::memory_order_seq_cst);
            if (d.iterations.load(std::memory_order_seq_cst) == seen)
              syscall(SYS_futex, &d.iterations, FUTEX_WAIT, seen, nullptr, nullptr, 0);
            d.waiters.fetch_sub(1, std::memory_order_seq_cst);
          }
        }
        for (const InstanceId d : s.instances[i].dependencies)
          while (done[index(d)].iterations.load(std::memory_order_acquire) < target) pause();
        const std::int64_t start = monotonicNs();
        std::int64_t end = start;
        if (lengths[index(i)] > 0)
          while ((end = monotonicNs()) < start + lengths[index(i)]) {}
        else end = monotonicNs();
        const std::size_t k = static_cast<std::size_t>(h) * count + index(i);
        startNs[k] = start;
        endNs[k] = end;
        done[index(i)].iterations.store(target, std::memory_order_seq_cst);
        if (done[index(i)].waiters.load(std::memory_order_seq_cst) != 0)
          syscall(SYS_futex, &done[index(i)].iterations, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
      }
    }
    _exit(0);
  }
  bool ok = children.size() == plan->workers.size();
  for (const pid_t c : children) {
    if (!ok) kill(c, SIGKILL);
    ok = waitUntil(c, monotonicNs() + 300'000'000'000LL) == 0 && ok;
  }
  std::vector<std::int64_t> makespans;
  for (int h = 0; ok && h < iterations; ++h) {
    std::int64_t lo = INT64_MAX, hi = 0;
    const std::size_t base = static_cast<std::size_t>(h) * count;
    for (std::size_t i = 0; i < count; ++i) {
      lo = std::min(lo, startNs[base + i]);
      hi = std::max(hi, endNs[base + i]);
    }
    makespans.push_back(hi - lo);
  }
  return makespans;
}

}  // namespace tactus::bench
