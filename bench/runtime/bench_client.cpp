// tactus-bench-client: a client for the runtime benchmarks; registers every runnable its client
// has in the schedule as an empty function, runs, and prints how the run ended.
#include <tactus/client.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace {

void empty(void*) {}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tactus-bench-client CLIENT [--instance NAME]\n");
    return 2;
  }
  tactus::InitOptions options;
  options.timeoutMs = 30'000;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--instance") == 0) options.instance = argv[i + 1];
  }
  if (auto ok = tactus::init(argv[1], options); !ok) {
    std::fprintf(stderr, "bench-client %s: init failed: %s\n", argv[1], ok.error().message.c_str());
    return 3;
  }
  auto names = tactus::scheduledRunnables();
  if (!names) return 3;
  for (const std::string& n : *names) {
    if (auto ok = tactus::registerRunnable(n, empty, nullptr); !ok) {
      std::fprintf(stderr, "bench-client %s: %s\n", argv[1], ok.error().message.c_str());
      return 4;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();
  std::printf("bench-client %s: %s: %s\n", argv[1], tactus::runStatusName(outcome.status), outcome.message.c_str());
  return outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench-client: %s\n", e.what());
  return 1;
}
