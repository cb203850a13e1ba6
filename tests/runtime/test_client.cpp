// tactus-test-client: a client process for the runtime tests, driven by arguments. It registers
// every runnable its client has in the schedule (except --skip ones) and prints one result line:
//   status=<run status> peer=<name> message=<text>
// preceded by `ended-ns=<CLOCK_MONOTONIC ns>`, when enterScheduler returned.
// Exit codes: 0 frame-limit/exit-requested/stopped-by-signal, 3 init failed, 4 registration
// failed, 10 + RunStatus otherwise.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tactus/channel.hpp"
#include "tactus/client.hpp"
#include "tactus/stm.h"

namespace {

struct Args {
  std::string name;
  std::string instance;  // empty: TACTUS_INSTANCE, else "default" (init chooses)
  long long timeoutMs = -1;
  std::set<std::string> skip;
  long long exitAtIteration = -1;  // a runnable calls exitScheduler in this hyperepoch iteration
  long long hangAtIteration = -1;  // --hang-runnable sleeps forever in this iteration
  std::string hangRunnable;
  std::string marker;     // file created when the hang starts
  long long busyUs = 0;   // each runnable spins this long
  std::string slowWhile;  // --slow-while FILE: while FILE exists, each runnable spins --slow-us more
  long long slowUs = 0;
  std::string overrunRunnable;      // --overrun R:ITERATION:US: runnable R spins US more in that hyperepoch
  long long overrunIteration = -1;  // iteration (-1: in every one), to overrun its WCET on purpose
  long long overrunUs = 0;
  bool checkRegistration = false;     // exercise the registration errors and report them
  bool useStm = false;                // go through the STM C API
  bool switchCallback = false;        // register a schedule-switch callback that prints when it ran
  bool switchCallbackHangs = false;   // --switch-callback-hangs: that callback then never returns
  std::string workerPolicy;           // --worker-policy fifo:N | rr:N | other (InitOptions)
  bool lockMemory = false;            // --lock-memory (InitOptions::lockMemory)
  bool printRealtime = false;         // print the locked memory after init and a worker's policy
  bool ownSigint = false;             // install its own SIGINT handler before entering (counts them)
  std::string misname;                // --misname NAME=WRONG: registers runnable NAME as WRONG (a typo)
  std::vector<std::string> channels;  // --channel NAME: write it in its writer, read and check it in its readers
  bool channelLog = false;            // --channel-log: print every read (for check_channel_runs.py)
  bool checkChannels = false;         // --check-channels: exercise the channel API's refusals, print them
  long long randomBusyUs = 0;         // --random-busy-us N: each runnable spins a random 0..N us more
  bool timeChannelAccess = false;     // --time-channel-access: time Channel::read against a pointer read, once
  long long skipWriteAt = -1;         // --skip-write-at-iteration N: writers take no buffer in iteration N
  long long tooBigWriteAt = -1;       // --too-big-write-at-iteration N: writers' writeAs fails in iteration N
};

Args gArgs;
std::vector<tactus::Channel> gChannels;  // found after init (--channel)
// Channel reads: ok, no version yet, not written, payload other than the version's writer run,
// payload changed while the run read it (a writer filled the buffer during the read).
std::atomic<long long> gReadOk{0}, gReadNone{0}, gReadNotWritten{0}, gReadWrong{0}, gReadOverwritten{0};
std::atomic<long long> gRuns{0};
std::atomic<bool> gPolicyPrinted{false};

// VmLck of this process in kB (-1 when unreadable).
long long lockedKb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmLck: %lld", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

void spinUs(long long us) {
  if (us <= 0) return;
  timespec t0{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) >= us * 1000) return;
  }
}

// The payload a writer run puts in every 8-byte word of its buffer: its iteration and instance.
std::uint64_t payloadWord(std::uint64_t iteration, std::uint32_t instance, std::size_t k) {
  return (iteration << 24) ^ (std::uint64_t{instance} << 4) ^ (k * 0x9e3779b97f4a7c15ULL);
}

bool payloadIs(const std::byte* data, std::size_t size, std::uint64_t iteration, std::uint32_t instance) {
  for (std::size_t k = 0; k < size / 8; ++k) {
    std::uint64_t word = 0;
    std::memcpy(&word, data + 8 * k, 8);
    if (word != payloadWord(iteration, instance, k)) return false;
  }
  return true;
}

// --channel: the writer fills its buffer; a reader checks its version's payload before and after
// the run's busy time. Returns the versions read with kOk, to check again at the run's end.
// --time-channel-access: once, in a reader run, the time of a Channel::read (what a reader does
// to reach its version) against a read through a plain pointer to it, both averaged over many.
void timeChannelAccess(const tactus::Channel& c, const tactus::Version<std::byte>& v) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  constexpr int kCalls = 200000;
  auto nowNs = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
  };
  std::uint64_t sum = 0;
  long long t0 = nowNs();
  for (int k = 0; k < kCalls; ++k) {
    auto again = c.read();
    sum += static_cast<std::uint64_t>(std::to_integer<unsigned>(again->data[k & 7]));
  }
  const long long readNs = nowNs() - t0;
  const volatile std::byte* const* plain = &v.data;  // the pointer itself re-read each time
  t0 = nowNs();
  for (int k = 0; k < kCalls; ++k) sum += static_cast<std::uint64_t>(std::to_integer<unsigned>((*plain)[k & 7]));
  const long long pointerNs = nowNs() - t0;
  std::printf("channel-access read-ns=%.2f pointer-ns=%.2f ratio=%.1f (sum %llu)\n",
              static_cast<double>(readNs) / kCalls, static_cast<double>(pointerNs) / kCalls,
              static_cast<double>(readNs) / static_cast<double>(std::max(pointerNs, 1LL)),
              static_cast<unsigned long long>(sum));
  std::fflush(stdout);
}

// --check-channels: prints the refusal of `result` once per label (`channel-<label>: CODE: message`).
template <typename R>
void printRefusal(const char* label, const R& result) {
  static std::mutex lock;
  static std::set<std::string> printed;
  const std::lock_guard<std::mutex> hold(lock);
  if (!printed.insert(label).second) return;
  std::printf("channel-%s: %s: %s\n", label, result ? "ok" : tactus::errorCodeName(result.error().code),
              result ? "" : result.error().message.c_str());
  std::fflush(stdout);
}

struct Huge {
  char bytes[1 << 20];
};

std::vector<tactus::Version<std::byte>> touchChannels(const tactus::RuntimeInfo& info, const std::string& runnable) {
  std::vector<tactus::Version<std::byte>> read;
  if (gArgs.checkChannels) {
    for (const tactus::Channel& c : gChannels) {
      auto w = c.write();
      if (!w) printRefusal("write-by-reader", w);
      if (auto r = c.read(); !r) printRefusal("read-by-writer", r);
      if (w) printRefusal("write-too-big", c.writeAs<Huge>());
    }
  }
  const bool skipWrite = static_cast<long long>(info.hyperepochIteration) == gArgs.skipWriteAt;
  const bool tooBigWrite = static_cast<long long>(info.hyperepochIteration) == gArgs.tooBigWriteAt;
  for (const tactus::Channel& c : gChannels) {
    if (tooBigWrite) {  // a writer whose type outgrew the channel: the write fails, nothing is taken
      if (c.writeAs<Huge>()) std::printf("channel-too-big-write-taken\n");
    } else if (auto buffer = skipWrite ? tactus::Result<std::span<std::byte>>(
                                             tactus::fail(tactus::ErrorCode::kBadParameter, "skipped"))
                                       : c.write();
               buffer) {
      for (std::size_t k = 0; k < buffer->size() / 8; ++k) {
        const std::uint64_t word = payloadWord(info.hyperepochIteration, info.instance, k);
        std::memcpy(buffer->data() + 8 * k, &word, 8);
      }
    }
    auto v = c.read();
    if (!v) continue;  // not a reader of this channel
    if (gArgs.channelLog)
      std::printf(
          "channel-read channel=%s runnable=%s instance=%u iteration=%llu status=%s writer=%u "
          "writer-iteration=%llu\n",
          c.name().c_str(), runnable.c_str(), info.instance, static_cast<unsigned long long>(info.hyperepochIteration),
          tactus::versionStatusName(v->status), v->writerInstance, static_cast<unsigned long long>(v->writerIteration));
    if (v->status == tactus::VersionStatus::kNoVersionYet) gReadNone.fetch_add(1);
    if (v->status == tactus::VersionStatus::kNotWritten) gReadNotWritten.fetch_add(1);
    if (v->status != tactus::VersionStatus::kOk) continue;
    gReadOk.fetch_add(1);
    if (gArgs.timeChannelAccess) timeChannelAccess(c, *v);
    if (!payloadIs(v->data, v->size, v->writerIteration, v->writerInstance)) gReadWrong.fetch_add(1);
    read.push_back(*v);
  }
  return read;
}

void body(const std::string* name) {
  gRuns.fetch_add(1);
  if (gArgs.printRealtime && !gPolicyPrinted.exchange(true)) {
    int policy = 0;
    sched_param param{};
    pthread_getschedparam(pthread_self(), &policy, &param);
    std::printf("worker-policy=%s priority=%d\n",
                policy == SCHED_FIFO    ? "fifo"
                : policy == SCHED_RR    ? "rr"
                : policy == SCHED_OTHER ? "other"
                                        : "?",
                param.sched_priority);
    std::fflush(stdout);
  }
  auto info = tactus::runtimeInfo();
  if (!info) {
    std::printf("runtime-info-error %s\n", info.error().message.c_str());
    std::fflush(stdout);
    std::_Exit(5);
  }
  const auto h = static_cast<long long>(info->hyperepochIteration);
  if (!gArgs.hangRunnable.empty() && *name == gArgs.hangRunnable && h == gArgs.hangAtIteration) {
    if (!gArgs.marker.empty()) {
      const int fd = ::open(gArgs.marker.c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd >= 0) ::close(fd);
    }
    for (;;) ::pause();
  }
  const std::vector<tactus::Version<std::byte>> read =
      gChannels.empty() ? std::vector<tactus::Version<std::byte>>{} : touchChannels(*info, *name);
  spinUs(gArgs.busyUs);
  if (gArgs.randomBusyUs > 0) {
    thread_local std::uint64_t state = 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(::getpid());
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    spinUs(static_cast<long long>(state % static_cast<std::uint64_t>(gArgs.randomBusyUs + 1)));
  }
  if (*name == gArgs.overrunRunnable && (gArgs.overrunIteration < 0 || h == gArgs.overrunIteration))
    spinUs(gArgs.overrunUs);
  if (!gArgs.slowWhile.empty() && ::access(gArgs.slowWhile.c_str(), F_OK) == 0) spinUs(gArgs.slowUs);
  for (const tactus::Version<std::byte>& v : read)
    if (!payloadIs(v.data, v.size, v.writerIteration, v.writerInstance)) gReadOverwritten.fetch_add(1);
  if (gArgs.exitAtIteration >= 0 && h == gArgs.exitAtIteration) tactus::exitScheduler();
}

void stmBody(void* userdata) { body(static_cast<const std::string*>(userdata)); }

// --own-sigint: the application's own SIGINT handler, which libtactus must leave in place.
volatile std::sig_atomic_t gOwnSigints = 0;
void onOwnSigint(int) { gOwnSigints = gOwnSigints + 1; }

int usage() {
  std::fprintf(stderr,
               "usage: tactus-test-client --name CLIENT [--instance I] [--timeout-ms N] [--skip R]...\n"
               "  [--exit-at-iteration N] [--hang-runnable R --hang-at-iteration N --marker FILE]\n"
               "  [--busy-us N] [--slow-while FILE --slow-us N] [--overrun RUNNABLE:ITERATION:US] "
               "[--check-registration]\n"
               "  [--stm] [--switch-callback [--switch-callback-hangs]]\n"
               "  [--worker-policy fifo:N|rr:N|other] [--lock-memory] [--print-realtime] [--own-sigint]\n"
               "  [--misname RUNNABLE=WRONG] [--channel NAME]... [--channel-log] [--check-channels]\n"
               "  [--random-busy-us N] [--time-channel-access] [--skip-write-at-iteration N]\n"
               "  [--too-big-write-at-iteration N]\n");
  return 2;
}

}  // namespace

int runMain(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--name") gArgs.name = next();
    else if (a == "--instance") gArgs.instance = next();
    else if (a == "--timeout-ms") gArgs.timeoutMs = std::atoll(next().c_str());
    else if (a == "--skip") gArgs.skip.insert(next());
    else if (a == "--exit-at-iteration") gArgs.exitAtIteration = std::atoll(next().c_str());
    else if (a == "--hang-at-iteration") gArgs.hangAtIteration = std::atoll(next().c_str());
    else if (a == "--hang-runnable") gArgs.hangRunnable = next();
    else if (a == "--marker") gArgs.marker = next();
    else if (a == "--busy-us") gArgs.busyUs = std::atoll(next().c_str());
    else if (a == "--slow-while") gArgs.slowWhile = next();
    else if (a == "--slow-us") gArgs.slowUs = std::atoll(next().c_str());
    else if (a == "--overrun") {
      const std::string v = next();
      const std::size_t c1 = v.find(':'), c2 = c1 == std::string::npos ? c1 : v.find(':', c1 + 1);
      if (c2 == std::string::npos) return usage();
      gArgs.overrunRunnable = v.substr(0, c1);
      gArgs.overrunIteration = std::atoll(v.substr(c1 + 1, c2 - c1 - 1).c_str());
      gArgs.overrunUs = std::atoll(v.c_str() + c2 + 1);
    } else if (a == "--check-registration") gArgs.checkRegistration = true;
    else if (a == "--stm") gArgs.useStm = true;
    else if (a == "--switch-callback") gArgs.switchCallback = true;
    else if (a == "--switch-callback-hangs") gArgs.switchCallback = gArgs.switchCallbackHangs = true;
    else if (a == "--worker-policy") gArgs.workerPolicy = next();
    else if (a == "--lock-memory") gArgs.lockMemory = true;
    else if (a == "--print-realtime") gArgs.printRealtime = true;
    else if (a == "--own-sigint") gArgs.ownSigint = true;
    else if (a == "--misname") gArgs.misname = next();
    else if (a == "--channel") gArgs.channels.push_back(next());
    else if (a == "--channel-log") gArgs.channelLog = true;
    else if (a == "--check-channels") gArgs.checkChannels = true;
    else if (a == "--random-busy-us") gArgs.randomBusyUs = std::atoll(next().c_str());
    else if (a == "--time-channel-access") gArgs.timeChannelAccess = true;
    else if (a == "--skip-write-at-iteration") gArgs.skipWriteAt = std::atoll(next().c_str());
    else if (a == "--too-big-write-at-iteration") gArgs.tooBigWriteAt = std::atoll(next().c_str());
    else return usage();
  }
  if (gArgs.name.empty()) return usage();

  if (gArgs.useStm) {
    if (!gArgs.instance.empty()) ::setenv("TACTUS_INSTANCE", gArgs.instance.c_str(), 1);
    const stmErrorCode_t rc = stmClientInit(gArgs.name.c_str());
    if (rc != STM_SUCCESS) {
      std::printf("init-error code=%s message=%s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
      return 3;
    }
  } else {
    tactus::InitOptions options;
    options.instance = gArgs.instance;
    options.timeoutMs = gArgs.timeoutMs;
    options.lockMemory = gArgs.lockMemory;
    if (!gArgs.workerPolicy.empty()) {
      const std::string& p = gArgs.workerPolicy;
      const std::size_t colon = p.find(':');
      const std::string kind = p.substr(0, colon);
      options.workerPolicy = kind == "fifo" ? tactus::WorkerPolicy::kFifo
                             : kind == "rr" ? tactus::WorkerPolicy::kRoundRobin
                                            : tactus::WorkerPolicy::kOther;
      if (colon != std::string::npos) options.workerPriority = std::atoi(p.c_str() + colon + 1);
    }
    auto ok = tactus::init(gArgs.name, options);
    if (!ok) {
      std::printf("init-error code=%s message=%s\n", tactus::errorCodeName(ok.error().code),
                  ok.error().message.c_str());
      return 3;
    }
  }
  if (gArgs.printRealtime) {
    std::printf("locked-kb=%lld\n", lockedKb());
    std::fflush(stdout);
  }
  for (const std::string& c : gArgs.channels) {
    auto found = tactus::Channel::find(c);
    if (!found) {
      std::printf("channel-error code=%s message=%s\n", tactus::errorCodeName(found.error().code),
                  found.error().message.c_str());
      return 3;
    }
    gChannels.push_back(*found);
  }
  if (gArgs.checkChannels && !gChannels.empty()) {
    printRefusal("find-misspelt", tactus::Channel::find(gChannels.front().name() + "x"));
    printRefusal("write-outside", gChannels.front().write());
    printRefusal("read-outside", gChannels.front().read());
  }
  auto names = tactus::scheduledRunnables();
  if (!names) return 3;
  static std::vector<std::string> kept;  // stable addresses for userdata
  kept.reserve(names->size());
  for (const std::string& n : *names) {
    if (gArgs.skip.count(n) == 0) kept.push_back(n);
  }
  if (const std::size_t eq = gArgs.misname.find('='); eq != std::string::npos) {
    for (std::string& n : kept) {
      if (n == gArgs.misname.substr(0, eq)) n = gArgs.misname.substr(eq + 1);
    }
  }
  for (std::string& n : kept) {
    if (gArgs.useStm) {
      const stmErrorCode_t rc = stmRegisterCpuRunnable(stmBody, n.c_str(), &n);
      if (rc != STM_SUCCESS) {
        std::printf("register-error code=%s message=%s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
        return 4;
      }
    } else {
      const std::string* name = &n;
      auto ok = tactus::registerRunnable(n, [name] { body(name); });
      if (!ok) {
        std::printf("register-error code=%s message=%s\n", tactus::errorCodeName(ok.error().code),
                    ok.error().message.c_str());
        return 4;
      }
    }
  }
  if (gArgs.switchCallback) {
    // Prints `switch schedule=<id> hyperepoch=<h> ns=<CLOCK_MONOTONIC ns>` each time it runs.
    auto ok = tactus::registerSwitchCallback([](std::uint16_t schedule, std::uint16_t hyperepoch) {
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      std::printf("switch schedule=%u hyperepoch=%u ns=%lld\n", static_cast<unsigned>(schedule),
                  static_cast<unsigned>(hyperepoch),
                  static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec);
      std::fflush(stdout);
      while (gArgs.switchCallbackHangs) ::pause();
    });
    if (!ok) {
      std::printf("register-error code=%s message=%s\n", tactus::errorCodeName(ok.error().code),
                  ok.error().message.c_str());
      return 4;
    }
  }
  if (gArgs.checkRegistration) {
    auto unknown = tactus::registerRunnable("NoSuchRunnable", [] {});
    std::printf("unknown: %s: %s\n", unknown ? "ok" : tactus::errorCodeName(unknown.error().code),
                unknown ? "" : unknown.error().message.c_str());
    if (!kept.empty()) {
      auto dup = tactus::registerRunnable(kept.front(), [] {});
      std::printf("duplicate: %s: %s\n", dup ? "ok" : tactus::errorCodeName(dup.error().code),
                  dup ? "" : dup.error().message.c_str());
    }
    auto outside = tactus::runtimeInfo();
    std::printf("info-outside: %s\n", outside ? "ok" : tactus::errorCodeName(outside.error().code));
    stmRunnableInfo_t cinfo;
    std::printf("stm-info-outside: %s\n", stmErrorCodeToString(stmGetRuntimeInfo(&cinfo)));
  }
  if (gArgs.ownSigint) {
    struct sigaction sa {};
    sa.sa_handler = onOwnSigint;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
  }
  tactus::RunOutcome outcome;
  if (gArgs.useStm) {
    const stmErrorCode_t rc = stmEnterScheduler();
    std::printf("stm-enter: %s\n", stmErrorCodeToString(rc));
    outcome.status = rc == STM_SUCCESS ? tactus::RunStatus::kFrameLimit : tactus::RunStatus::kError;
    outcome.message = tactusLastErrorMessage();
  } else {
    outcome = tactus::enterScheduler();
  }
  {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // when the run ended for this client (before any exit cost)
    std::printf("ended-ns=%lld\n", static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec);
  }
  std::printf("status=%s peer=%s runs=%lld message=%s\n", tactus::runStatusName(outcome.status), outcome.peer.c_str(),
              gRuns.load(), outcome.message.c_str());
  if (gArgs.ownSigint) std::printf("own-sigints=%d\n", static_cast<int>(gOwnSigints));
  if (!gChannels.empty())
    std::printf("channel-reads ok=%lld no-version-yet=%lld not-written=%lld wrong=%lld overwritten=%lld\n",
                gReadOk.load(), gReadNone.load(), gReadNotWritten.load(), gReadWrong.load(), gReadOverwritten.load());
  if (gArgs.checkRegistration) {
    auto late = tactus::registerRunnable(kept.empty() ? "x" : kept.front(), [] {});
    std::printf("after-enter: %s: %s\n", late ? "ok" : tactus::errorCodeName(late.error().code),
                late ? "" : late.error().message.c_str());
  }
  std::fflush(stdout);
  if (gArgs.useStm) {
    stmClientExit();
  } else {
    tactus::shutdown();
  }
  switch (outcome.status) {
    case tactus::RunStatus::kFrameLimit:
    case tactus::RunStatus::kExitRequested:
    case tactus::RunStatus::kStoppedBySignal: return 0;
    default: return 10 + static_cast<int>(outcome.status);
  }
}

int main(int argc, char** argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception& e) {  // out of memory while setting up: a message, not std::terminate
    std::fputs("tactus-test-client: internal error: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
    return 1;
  }
}
