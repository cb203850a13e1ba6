// minimal_pipeline: the smallest tactus client, running schedules/minimal_cpu.yaml's one pipeline.
//
//   Main.Frame (every 10 ms)
//
//     Read --> Process --> Publish          (client "Pipeline", one process)
//
//   tactus-compile -i schedules/minimal_cpu.yaml -o minimal_cpu.tsched
//   tactus-master -s minimal_cpu.tsched -e 100 -D demo &
//   tactus-sample-minimal --instance demo
//
// The runnables pass a value down the pipeline through plain variables: the schedule guarantees
// that Process runs after Read and Publish after Process, every frame, so no lock is needed.
// The first frames print a line per runnable call; a summary follows when the run ends.
#include <tactus/client.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Frames whose runnable calls are printed one per line (printing is for the sample only: a real
// runnable never blocks on a terminal).
constexpr std::uint64_t kTracedFrames = 3;

struct Pipeline {
  std::uint64_t reads = 0, processes = 0, publishes = 0;
  std::uint64_t sample = 0;      // what Read produced this frame
  std::uint64_t processed = 0;   // what Process made of it
  std::uint64_t checksum = 0;    // what Publish accumulated
  std::uint64_t outOfOrder = 0;  // Process or Publish found its input missing
};

Pipeline gPipeline;

void trace(const char* runnable, std::uint64_t value) {
  auto info = tactus::runtimeInfo();
  if (info && info->epochIteration < kTracedFrames) {
    std::printf("frame %llu: Pipeline.%s -> %llu\n", static_cast<unsigned long long>(info->epochIteration), runnable,
                static_cast<unsigned long long>(value));
    std::fflush(stdout);
  }
}

void read(void* userdata) {
  auto* p = static_cast<Pipeline*>(userdata);
  p->sample = ++p->reads;
  trace("Read", p->sample);
}

void process(void* userdata) {
  auto* p = static_cast<Pipeline*>(userdata);
  if (p->sample != p->reads) ++p->outOfOrder;
  p->processed = p->sample * 2;
  ++p->processes;
  trace("Process", p->processed);
}

void publish(void* userdata) {
  auto* p = static_cast<Pipeline*>(userdata);
  if (p->processed != p->reads * 2) ++p->outOfOrder;
  p->checksum += p->processed;
  ++p->publishes;
  trace("Publish", p->checksum);
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
               "usage: tactus-sample-minimal [--instance NAME] [--timeout-ms N]\n"
               "  the instance defaults to $TACTUS_INSTANCE, else 'default'\n"
               "  --timeout-ms N: wait at most N ms (0..2147483647) for the master (default: forever)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  tactus::InitOptions options;
  if (const char* env = std::getenv("TACTUS_INSTANCE"); env != nullptr && *env != '\0') options.instance = env;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--instance") == 0 && i + 1 < argc) {
      options.instance = argv[++i];
    } else if (std::strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
      if (!parseTimeoutMs("tactus-sample-minimal", argv[++i], options.timeoutMs)) return 2;
    } else {
      return usage();
    }
  }

  if (auto ok = tactus::init("Pipeline", options); !ok) {
    std::fprintf(stderr, "minimal: init failed: %s\n", ok.error().message.c_str());
    return 1;
  }
  const struct {
    const char* name;
    tactus::RunnableFunction function;
  } runnables[] = {{"Read", read}, {"Process", process}, {"Publish", publish}};
  for (const auto& r : runnables) {
    if (auto ok = tactus::registerRunnable(r.name, r.function, &gPipeline); !ok) {
      std::fprintf(stderr, "minimal: cannot register %s: %s\n", r.name, ok.error().message.c_str());
      tactus::shutdown();
      return 1;
    }
  }

  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();

  const Pipeline& p = gPipeline;
  std::printf("minimal: run ended (%s): %s\n", tactus::runStatusName(outcome.status), outcome.message.c_str());
  std::printf("minimal: ran Read %llu, Process %llu, Publish %llu times; checksum %llu; %llu out of order\n",
              static_cast<unsigned long long>(p.reads), static_cast<unsigned long long>(p.processes),
              static_cast<unsigned long long>(p.publishes), static_cast<unsigned long long>(p.checksum),
              static_cast<unsigned long long>(p.outOfOrder));
  const bool ended = outcome.status == tactus::RunStatus::kFrameLimit ||
                     outcome.status == tactus::RunStatus::kExitRequested ||
                     outcome.status == tactus::RunStatus::kStoppedBySignal;
  return ended && p.outOfOrder == 0 ? 0 : 1;
}
