// modes_client: the one client of the two-mode pipeline (schedules/modes_full.yaml and
// modes_light.yaml). It registers the union of both modes' runnables (Detect exists only in the
// full mode) and a switch callback, then runs whatever mode the schedule manager starts. With
// --overload FILE, Detect sleeps 25 ms (beyond the full mode's 20 ms period) while FILE exists:
// the overload that samples/modes/policy.yaml answers by falling back to the light mode.
//
//   tactus-master -s full.tsched,light.tsched -N modes -i 2 -D demo &
//   tactus-sample-modes-client --instance demo &
//   tactus-sample-modes-manager demo         # start full, roll over to light and back, exit
#include <unistd.h>
#include <tactus/client.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::atomic<unsigned> gRuns[2][4];  // [full, light][Grab, Scan, Detect, Plan]
std::atomic<unsigned> gSwitches{0};
const char* const kNames[4] = {"Grab", "Scan", "Detect", "Plan"};
std::string gOverloadFile;  // --overload FILE: Detect oversleeps while it exists

// Counts a call under the mode that runs it (runtimeInfo names the running schedule).
void count(int which) {
  auto info = tactus::runtimeInfo();
  const int mode = info && info->scheduleId == 102 ? 1 : 0;
  gRuns[mode][which].fetch_add(1);
  if (which == 2 && !gOverloadFile.empty() && ::access(gOverloadFile.c_str(), F_OK) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // a simulated overload (no real work sleeps)
  }
}

}  // namespace

int main(int argc, char** argv) {
  tactus::InitOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--instance") == 0 && i + 1 < argc) options.instance = argv[++i];
    if (std::strcmp(argv[i], "--overload") == 0 && i + 1 < argc) gOverloadFile = argv[++i];
  }
  if (auto ok = tactus::init("Perception", options); !ok) {
    std::fprintf(stderr, "modes_client: %s\n", ok.error().message.c_str());
    return 1;
  }
  for (int r = 0; r < 4; ++r) {
    if (auto ok = tactus::registerRunnable(kNames[r], [r] { count(r); }); !ok) {
      std::fprintf(stderr, "modes_client: %s\n", ok.error().message.c_str());
      return 1;
    }
  }
  // Called once per hyperepoch during a rollover, before the new mode's first frame.
  (void)tactus::registerSwitchCallback([](std::uint16_t schedule, std::uint16_t hyperepoch) {
    gSwitches.fetch_add(1);
    std::printf("switching hyperepoch %u to schedule %u\n", static_cast<unsigned>(hyperepoch),
                static_cast<unsigned>(schedule));
    std::fflush(stdout);
  });
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  std::printf("run ended (%s): %s\n", tactus::runStatusName(outcome.status), outcome.message.c_str());
  for (int m = 0; m < 2; ++m) {
    std::printf("%s mode ran", m == 0 ? "full" : "light");
    for (int r = 0; r < 4; ++r) std::printf(" %s %u", kNames[r], gRuns[m][r].load());
    std::printf("\n");
  }
  std::printf("%u switch callbacks\n", gSwitches.load());
  tactus::shutdown();
  return outcome.status == tactus::RunStatus::kExitRequested ? 0 : 1;
}
