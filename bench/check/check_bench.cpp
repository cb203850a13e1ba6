// check-bench: what tactus-check costs and why it interposes calls (LD_PRELOAD) instead of
// trapping system calls (seccomp). Run it twice, plain and under tactus-check:
//   check-bench                    malloc+free and a getppid system call, no check library
//   tactus-check -- check-bench    the same with the check library loaded (calls outside any
//                                  runnable: the cost every thread pays), and the check window
//                                  around one clean runnable (tactusCheckBegin + tactusCheckEnd)
// and, in a child process each, the two costs of the seccomp alternative: a filter that allows
// everything (every system call of the thread pays it) and a trap (SECCOMP_RET_TRAP, a SIGSYS
// per trapped call, the only way a filter can attribute a call to the runnable running then).
// Prints medians of batches, in ns per operation.
#include <dlfcn.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_support.hpp"
#include "tactus/core/violation.hpp"

namespace {

constexpr int kBatches = 201;
constexpr int kPerBatch = 2000;

using tactus::bench::monotonicNs;

// Median over batches of `body` run kPerBatch times, in ns per run.
template <typename Body>
double medianNs(Body&& body, int perBatch = kPerBatch) {
  std::vector<double> v;
  v.reserve(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    const std::int64_t t0 = monotonicNs();
    for (int k = 0; k < perBatch; ++k) body();
    v.push_back(static_cast<double>(monotonicNs() - t0) / perBatch);
  }
  std::nth_element(v.begin(), v.begin() + kBatches / 2, v.end());
  return v[kBatches / 2];
}

void* volatile gKeep = nullptr;

double mallocFree() {
  return medianNs([] {
    gKeep = std::malloc(64);
    std::free(gKeep);
  });
}

double getppidCall() {
  return medianNs([] { (void)::syscall(SYS_getppid); });
}

void onSigsys(int, siginfo_t*, void* context) {
  // Emulate the trapped call: getppid's answer in the return register.
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = 1;
#else
  (void)uc;
#endif
}

// In a child: installs a seccomp filter (trap getppid, or allow all) and prints getppid's cost.
double seccompCost(bool trap) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    struct sigaction sa {};
    sa.sa_sigaction = onSigsys;
    sa.sa_flags = SA_SIGINFO;
    ::sigaction(SIGSYS, &sa, nullptr);
    sock_filter allowAll[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_filter trapGetppid[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{};
    prog.len = trap ? 4 : 1;
    prog.filter = trap ? trapGetppid : allowAll;
    double r = -1;
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
      r = medianNs([] { (void)::syscall(SYS_getppid); }, trap ? 200 : kPerBatch);
    (void)!::write(fds[1], &r, sizeof r);
    ::_exit(0);
  }
  ::close(fds[1]);
  double r = -1;
  if (::read(fds[0], &r, sizeof r) != sizeof r) r = -1;
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return r;
}

}  // namespace

int main() {
  const auto begin = reinterpret_cast<TactusCheckBeginFn>(::dlsym(RTLD_DEFAULT, "tactusCheckBegin"));
  const auto end = reinterpret_cast<TactusCheckEndFn>(::dlsym(RTLD_DEFAULT, "tactusCheckEnd"));
  const bool loaded = begin != nullptr && end != nullptr;
  std::printf("check library: %s\n", loaded ? "preloaded (tactus-check)" : "not loaded");
  std::printf("malloc(64)+free outside runnables: %.1f ns\n", mallocFree());
  std::printf("getppid system call:               %.1f ns\n", getppidCall());
  if (loaded) {
    static tactus::EventRecord out[64];
    const double window = medianNs(
        [&] {
          begin(0, 0);
          (void)end(out, 64);
        },
        200);
    std::printf("check window, one clean runnable:  %.1f ns (tactusCheckBegin + tactusCheckEnd)\n", window);
  } else {
    const double allow = seccompCost(false);
    const double trap = seccompCost(true);
    std::printf("seccomp, allow-all filter, getppid: %.1f ns\n", allow);
    std::printf("seccomp, trapped getppid (SIGSYS):  %.1f ns\n", trap);
    std::printf("a malloc served from the heap makes no system call: seccomp cannot see allocations\n");
  }
  return 0;
}
