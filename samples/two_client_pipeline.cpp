// two_client_pipeline: one client of schedules/two_client_multi_rate.yaml, a two-process pipeline
// with a 10 ms and a 40 ms epoch and dependencies that cross the processes.
//
//   Fast (10 ms)   Sensing: ReadImu ----> Planning: Estimate
//   Slow (40 ms)   Sensing: Capture --> Detect ----> Planning: PlanPath ----> Sensing: Record
//
// Run one process per client, in any order (each blocks in init until the master is there):
//
//   tactus-compile -i schedules/two_client_multi_rate.yaml -o tcmr.tsched
//   tactus-master -s tcmr.tsched -e 25 -D demo &
//   tactus-sample-two-client Sensing --instance demo &
//   tactus-sample-two-client Planning --instance demo
//
// The runnables of the first hyperepoch iteration print a line each, stamped with
// CLOCK_MONOTONIC microseconds so that the two processes' lines can be merged by time; a
// per-runnable summary follows when the run ends.
#include <tactus/client.hpp>

#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Hyperepoch iterations whose runnable calls are printed one per line.
constexpr std::uint64_t kTracedIterations = 1;

/// One runnable of this client: its name, its epoch, and how often it ran.
struct Runnable {
  const char* name;
  const char* epoch;
  std::atomic<std::uint64_t> calls{0};
};

Runnable gSensing[] = {{"ReadImu", "Fast"}, {"Capture", "Slow"}, {"Detect", "Slow"}, {"Record", "Slow"}};
Runnable gPlanning[] = {{"Estimate", "Fast"}, {"PlanPath", "Slow"}};
const char* gClient = "";

long long monotonicUs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000 + t.tv_nsec / 1000;
}

// Every runnable of this sample is this function; userdata says which one it is. The runnables
// of different workers (cores) run concurrently, so the counters are atomics.
void run(void* userdata) {
  auto* r = static_cast<Runnable*>(userdata);
  r->calls.fetch_add(1, std::memory_order_relaxed);
  auto info = tactus::runtimeInfo();
  if (!info) return;
  if (info->hyperepochIteration < kTracedIterations) {
    std::printf("[%lld us] iteration %llu %s frame %u: %s.%s\n", monotonicUs(),
                static_cast<unsigned long long>(info->hyperepochIteration), r->epoch, info->frame, gClient, r->name);
    std::fflush(stdout);
  }
}

// Parses a --timeout-ms value strictly: a whole decimal number of milliseconds, 0..2147483647
// (leave the option out to wait for the master forever). Prints why and returns false otherwise.
bool parseTimeoutMs(const char* program, const char* text, std::int64_t& ms) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno == ERANGE || v > 2147483647) {
    std::fprintf(stderr,
                 "%s: --timeout-ms expects milliseconds 0..2147483647 (leave it out to wait forever), got '%s'\n",
                 program, text);
    return false;
  }
  ms = v;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: tactus-sample-two-client Sensing|Planning [--instance NAME] [--timeout-ms N]\n"
               "  the instance defaults to $TACTUS_INSTANCE, else 'default'\n"
               "  --timeout-ms N: wait at most N ms (0..2147483647) for the master (default: forever)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  gClient = argv[1];
  Runnable* runnables = nullptr;
  std::size_t count = 0;
  if (std::strcmp(gClient, "Sensing") == 0) {
    runnables = gSensing;
    count = std::size(gSensing);
  } else if (std::strcmp(gClient, "Planning") == 0) {
    runnables = gPlanning;
    count = std::size(gPlanning);
  } else {
    std::fprintf(stderr, "two-client: unknown client '%s' (Sensing or Planning)\n", gClient);
    return usage();
  }
  tactus::InitOptions options;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--instance") == 0 && i + 1 < argc) {
      options.instance = argv[++i];
    } else if (std::strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
      if (!parseTimeoutMs("tactus-sample-two-client", argv[++i], options.timeoutMs)) return 2;
    } else {
      return usage();
    }
  }

  if (auto ok = tactus::init(gClient, options); !ok) {
    std::fprintf(stderr, "%s: init failed: %s\n", gClient, ok.error().message.c_str());
    // A configuration error (a name the schedule does not know, a bad instance name, another
    // layout version) exits 2, which the client unit does not restart; anything else 1.
    const tactus::ErrorCode code = ok.error().code;
    const bool configuration = code == tactus::ErrorCode::kNotFound || code == tactus::ErrorCode::kBadParameter ||
                               code == tactus::ErrorCode::kIncompatible;
    return configuration ? 2 : 1;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (auto ok = tactus::registerRunnable(runnables[i].name, run, &runnables[i]); !ok) {
      std::fprintf(stderr, "%s: cannot register %s: %s\n", gClient, runnables[i].name, ok.error().message.c_str());
      tactus::shutdown();
      return 1;
    }
  }

  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();

  std::printf("%s: run ended (%s): %s\n", gClient, tactus::runStatusName(outcome.status), outcome.message.c_str());
  for (std::size_t i = 0; i < count; ++i) {
    std::printf("%s: %-8s (%s epoch) ran %llu times\n", gClient, runnables[i].name, runnables[i].epoch,
                static_cast<unsigned long long>(runnables[i].calls.load()));
  }
  const bool ended = outcome.status == tactus::RunStatus::kFrameLimit ||
                     outcome.status == tactus::RunStatus::kExitRequested ||
                     outcome.status == tactus::RunStatus::kStoppedBySignal;
  return ended ? 0 : 1;
}
