// tactus-check-test-client: a client whose runnables each break one rule of a runnable's contract
// (Malloc, VectorGrowth, New, Sleep, Mutex, Pipe, Thread, PageFault, Print) and two that keep them
// all (Clean; MemPrint, which prints into a memory stream). It allocates, writes, sleeps and runs
// a thread outside runnables too (before enter, in a helper thread, after exit), which check mode
// must never report.
//   tactus-check-test-client --name CLIENT --instance I
// Exit codes: 0 the run ended normally, 3 init failed, 4 registration failed, 5 other.
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tactus/client.hpp"

namespace {

// Results go through volatile globals so the compiler cannot drop an allocation it sees freed.
void* volatile gKeep = nullptr;
volatile long gSink = 0;
int gPipe[2] = {-1, -1};
std::mutex gMutex;
std::atomic<bool> gStop{false};
std::atomic<std::uint32_t> gMutexAttempts{0};  // Mutex's runs, counted before they lock
std::atomic<std::uint32_t> gMutexTaken{0};     // and once they hold it
char* gFresh = nullptr;                        // untouched anonymous memory; PageFault touches a new MiB of it per run
std::size_t gFreshUsed = 0;
constexpr std::size_t kFreshBytes = 256u << 20;
constexpr std::size_t kFreshPerRun = 1u << 20;
char gMemoryBuffer[256];
FILE* gMemory = nullptr;  // a memory stream (fmemopen) for MemPrint

void spinNs(long ns) {
  timespec t0{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1'000'000'000L + (t.tv_nsec - t0.tv_nsec) >= ns) return;
  }
}

extern "C" {
// The runnables, exported (the executable is linked with -rdynamic) so sites name them.
__attribute__((noinline)) void checkMalloc(void*) {
  void* p = std::malloc(64);
  gKeep = p;
  std::free(gKeep);
}
__attribute__((noinline)) void checkVectorGrowth(void*) {
  std::vector<long> v;
  for (long k = 0; k < 100; ++k) v.push_back(k);
  gSink = v.back();
}
__attribute__((noinline)) void checkNew(void*) {
  auto* p = new std::string(40, 'x');
  gKeep = p;
  delete static_cast<std::string*>(gKeep);
}
__attribute__((noinline)) void checkSleep(void*) {
  const timespec t{0, 10'000};
  ::nanosleep(&t, nullptr);
}
__attribute__((noinline)) void checkMutex(void*) {
  gMutexAttempts.fetch_add(1);
  std::lock_guard<std::mutex> lock(gMutex);
  gMutexTaken.fetch_add(1);
  gSink = gSink + 1;
}
__attribute__((noinline)) void checkPipe(void*) {
  const char c = 'x';
  if (::write(gPipe[1], &c, 1) != 1) gSink = -1;
}
__attribute__((noinline)) void checkThread(void*) {
  std::thread t([] { gSink = gSink + 1; });
  t.join();
}
__attribute__((noinline)) void checkPageFault(void*) {
  if (gFreshUsed + kFreshPerRun > kFreshBytes) return;
  for (std::size_t k = 0; k < kFreshPerRun; k += 4096) gFresh[gFreshUsed + k] = 1;
  gFreshUsed += kFreshPerRun;
}
__attribute__((noinline)) void checkPrint(void*) {
  std::printf("print %ld\n", static_cast<long>(gSink));
  gKeep = nullptr;  // not a tail call: the site names this function
}
__attribute__((noinline)) void checkMemPrint(void*) {
  // A memory stream reaches no descriptor: not a blocking call.
  std::rewind(gMemory);
  std::fprintf(gMemory, "memory %ld\n", static_cast<long>(gSink));
  gKeep = nullptr;
}
__attribute__((noinline)) void checkClean(void*) {
  auto x = static_cast<unsigned long>(gSink);  // unsigned: the hash wraps (UBSan)
  for (unsigned long k = 0; k < 1000; ++k) x = x * 31 + k;
  gSink = static_cast<long>(x);
}
}

}  // namespace

int runMain(int argc, char** argv) {
  std::string name, instance = "default";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--name" && i + 1 < argc) name = argv[++i];
    else if (a == "--instance" && i + 1 < argc) instance = argv[++i];
    else {
      std::fprintf(stderr, "usage: tactus-check-test-client --name CLIENT [--instance I]\n");
      return 2;
    }
  }
  // Outside runnables: allocations, a pipe, a file write, a thread that takes the mutex. None of
  // this is a violation.
  if (::pipe(gPipe) != 0) return 5;
  ::fcntl(gPipe[1], F_SETFL, O_NONBLOCK);
  void* fresh =
      ::mmap(nullptr, kFreshBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (fresh == MAP_FAILED) return 5;
  gFresh = static_cast<char*>(fresh);
  std::vector<std::string> scratch(100, std::string(100, 'y'));
  gMemory = ::fmemopen(gMemoryBuffer, sizeof gMemoryBuffer, "w");
  if (gMemory == nullptr) return 5;
  std::fprintf(gMemory, "set up\n");  // its stdio buffer is allocated here, outside runnables
  std::printf("set up\n");            // and stdout's, so Print's printf allocates nothing
  // Holds the mutex whenever Mutex runs, so its lock is contended: the holder takes it, waits
  // for Mutex's next attempt, holds it 1 ms more (Mutex's try-lock happens meanwhile, even on a
  // loaded machine) and lets go. A holder that merely held it most of the time missed every run
  // now and then under load (the holder itself waited for a core, not holding it).
  std::thread holder([] {
    const timespec pause{0, 20'000};
    std::uint32_t served = 0;
    while (!gStop.load()) {
      {
        std::lock_guard<std::mutex> lock(gMutex);
        while (gMutexAttempts.load() == served && !gStop.load()) ::nanosleep(&pause, nullptr);
        served = gMutexAttempts.load();
        spinNs(1'000'000);
      }
      // Mutex takes the lock before the holder takes it again (a mutex is not fair).
      while (gMutexTaken.load() < served && !gStop.load()) ::nanosleep(&pause, nullptr);
    }
  });

  tactus::InitOptions options;
  options.instance = instance;
  options.timeoutMs = 20'000;
  auto ok = tactus::init(name, options);
  if (!ok) {
    std::printf("init-error %s\n", ok.error().message.c_str());
    return 3;
  }
  const std::map<std::string, tactus::RunnableFunction> table = {
      {"Malloc", checkMalloc}, {"VectorGrowth", checkVectorGrowth},
      {"New", checkNew},       {"Sleep", checkSleep},
      {"Mutex", checkMutex},   {"Pipe", checkPipe},
      {"Thread", checkThread}, {"PageFault", checkPageFault},
      {"Print", checkPrint},   {"MemPrint", checkMemPrint},
      {"Clean", checkClean},
  };
  auto names = tactus::scheduledRunnables();
  if (!names) return 3;
  for (const std::string& n : *names) {
    const auto it = table.find(n);
    if (it == table.end()) {
      std::printf("no runnable named %s in this client\n", n.c_str());
      return 4;
    }
    if (!tactus::registerRunnable(n, it->second, nullptr)) return 4;
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  gStop.store(true);
  holder.join();
  std::printf("status=%s\n", tactus::runStatusName(outcome.status));
  scratch.clear();
  std::fflush(stdout);
  tactus::shutdown();
  return outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 10 + static_cast<int>(outcome.status);
}

int main(int argc, char** argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception& e) {  // out of memory while setting up: a message, not std::terminate
    std::fprintf(stderr, "tactus-check-test-client: %s\n", e.what());
    return 5;
  }
}
