// switch-bench: the dead time of schedule switches under a schedule manager, from the event log
// of a real master and real clients. Two schedules of two hyperepochs (one core each, period
// --period-us); this process is the manager (the manager API, in-process).
//   rollover:      rollOverSchedule(B, A) at a random point of A's iteration; per hyperepoch,
//                  dead time = B's first release there - max(A's last run end there, the moment
//                  the master took the request); also to B's actual first release (kRelease)
//   complete swap: stopSchedule(A) then startSchedule(B); dead time = B's first release - A's
//                  last run end (includes both calls and the start's release lead), and the
//                  runtime's part: from the later of A's last end and the stop call (a stop called
//                  in A's idle time does not count its wait for nothing; faster runs of A, ending
//                  earlier in its iteration, lengthen the first figure, not this one)
// Prints p50/p99/max over --switches switches of each kind beside the period.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench_support.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/manager.hpp"

extern char** environ;

namespace {

using tactus::EventKind;
using tactus::EventRecord;

std::string modeYaml(int id, int periodUs) {
  std::string y = "Version: 3.0.0\nMode" + std::to_string(id) + ":\n  Identifier: " + std::to_string(id) +
                  "\n  Resources:\n    CPU: [CPU0, CPU1]\n  Hyperepochs:\n";
  for (int h = 0; h < 2; ++h) {
    y += "    - H" + std::to_string(h) + ":\n        Period: " + std::to_string(periodUs) +
         "us\n        Resources: [CPU" + std::to_string(h) +
         "]\n        Epochs:\n          - E: {Period: " + std::to_string(periodUs) + "us}\n";
  }
  y += "  Clients:\n";
  for (int c = 0; c < 2; ++c) {
    y += "    - Client" + std::to_string(c) + ":\n        Epochs:\n";
    for (int h = 0; h < 2; ++h) {
      y += "          - H" + std::to_string(h) + ".E:\n              Runnables:\n                - R" +
           std::to_string(h) + ": {WCET: 50us, Resources: [CPU" + std::to_string(h) + "]" +
           (c == 1 ? ", Dependencies: [Client0.R" + std::to_string(h) + "]" : std::string()) + "}\n";
    }
  }
  return y;
}

pid_t spawnProgram(const std::vector<std::string>& args, const std::string& out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int waitExit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::int64_t monotonicNs() {  // the master's clock (CLOCK_MONOTONIC)
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void sleepUs(long us) {
  timespec t{us / 1'000'000, (us % 1'000'000) * 1000};
  nanosleep(&t, nullptr);
}

struct Summary {
  std::size_t count = 0;
  double p50 = 0, p99 = 0, max = 0;
};

Summary summarize(std::vector<std::int64_t> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = v.size();
  s.p50 = tactus::bench::percentileOfSorted(v, 0.50) / 1e3;
  s.p99 = tactus::bench::percentileOfSorted(v, 0.99) / 1e3;
  s.max = static_cast<double>(v.back()) / 1e3;
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string compile, master, client;
  int switches = 200;
  unsigned seed = 2026;  // the pauses between switches (so the point in A's iteration of each call)
  int periodUs = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--compile") compile = next();
    else if (a == "--master") master = next();
    else if (a == "--client") client = next();
    else if (a == "--switches") switches = std::atoi(next().c_str());
    else if (a == "--period-us") periodUs = std::atoi(next().c_str());
    else if (a == "--seed") seed = static_cast<unsigned>(std::atoi(next().c_str()));
    else if (a == "--quick") switches = 10;
    else {
      std::fprintf(stderr,
                   "usage: switch-bench --compile P --master P --client P [--switches N] [--period-us US] [--seed N] "
                   "[--quick]\n");
      return 2;
    }
  }
  if (compile.empty() || master.empty() || client.empty() || switches < 1 || periodUs < 200) {
    std::fprintf(stderr, "switch-bench: give --compile, --master, --client (switches >= 1, period >= 200 us)\n");
    return 2;
  }
  char dirTemplate[] = "/tmp/switch-bench-XXXXXX";
  if (::mkdtemp(dirTemplate) == nullptr) return 1;
  const std::string dir = dirTemplate;
  const std::string instance = "swbench" + std::to_string(::getpid());
  std::vector<std::string> paths;
  for (int id : {1, 2}) {
    const std::string yaml = dir + "/m" + std::to_string(id) + ".yaml";
    const std::string sched = dir + "/m" + std::to_string(id) + ".tsched";
    std::ofstream(yaml) << modeYaml(id, periodUs);
    if (waitExit(spawnProgram({compile, "-i", yaml, "-o", sched}, dir + "/compile.out")) != 0) {
      std::fprintf(stderr, "switch-bench: tactus-compile failed (see %s/compile.out)\n", dir.c_str());
      return 1;
    }
    paths.push_back(sched);
  }
  const std::string log = dir + "/events.log";
  const pid_t m = spawnProgram({master, "-s", paths[0] + "," + paths[1], "-N", "bench", "-D", instance, "-l", log},
                               dir + "/master.out");
  const pid_t c0 = spawnProgram({client, "Client0", "--instance", instance}, dir + "/c0.out");
  const pid_t c1 = spawnProgram({client, "Client1", "--instance", instance}, dir + "/c1.out");
  tactus::manager::ManagerOptions options;
  options.instance = instance;
  options.timeoutMs = 20000;
  if (auto ok = tactus::manager::init("bench", options); !ok) {
    std::fprintf(stderr, "switch-bench: %s\n", ok.error().message.c_str());
    return 1;
  }
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> pause(3 * periodUs, 6 * periodUs);
  auto must = [](const tactus::Result<void>& r) {
    if (!r) {
      std::fprintf(stderr, "switch-bench: %s\n", r.error().message.c_str());
      std::exit(1);
    }
  };
  must(tactus::manager::startSchedule(1));
  std::uint16_t running = 1;
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;  // each rollover call's start and return
  for (int k = 0; k < switches; ++k) {                       // rollovers at random points of the iteration
    sleepUs(pause(random));
    const std::uint16_t other = running == 1 ? 2 : 1;
    const std::int64_t called = monotonicNs();
    must(tactus::manager::rollOverSchedule(other, running));
    calls.emplace_back(called, monotonicNs());
    running = other;
  }
  std::vector<std::int64_t> stopCalls;  // each complete swap's stop call
  for (int k = 0; k < switches; ++k) {  // complete swaps: stop, then start the other
    sleepUs(pause(random));
    const std::uint16_t other = running == 1 ? 2 : 1;
    stopCalls.push_back(monotonicNs());
    must(tactus::manager::stopSchedule(running));
    must(tactus::manager::startSchedule(other));
    running = other;
  }
  sleepUs(5L * periodUs);
  must(tactus::manager::exitRun());
  const int masterExit = waitExit(m);
  waitExit(c0);
  waitExit(c1);
  if (masterExit != 0) {
    std::fprintf(stderr, "switch-bench: the master exited %d (see %s/master.out)\n", masterExit, dir.c_str());
    return 1;
  }
  auto events = tactus::readEventLog(log);
  if (!events) {
    std::fprintf(stderr, "switch-bench: %s\n", events.error().message.c_str());
    return 1;
  }
  std::map<int, tactus::Schedule> schedules;
  for (int id : {1, 2}) {
    auto s = tactus::loadScheduleFile(paths[static_cast<std::size_t>(id - 1)]);
    if (!s) return 1;
    schedules[id] = std::move(*s);
  }
  // Per schedule and hyperepoch, the run ends in time order.
  std::map<std::pair<int, tactus::HyperepochId>, std::vector<std::int64_t>> ends;
  for (const EventRecord& r : events->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    const tactus::Schedule& s = schedules[r.schedule];
    const tactus::InstanceId instance{r.instance};
    if (!s.instances.contains(instance)) continue;
    ends[{r.schedule, tactus::instanceHyperepoch(s, instance)}].push_back(r.endNs);
  }
  for (auto& [key, v] : ends) std::sort(v.begin(), v.end());
  // A schedule start or stop record names its hyperepoch in `instance`.
  auto lastEndBefore = [&](int schedule, tactus::HyperepochId he, std::int64_t t) -> std::int64_t {
    const auto& v = ends[{schedule, he}];
    auto it = std::upper_bound(v.begin(), v.end(), t);
    return it == v.begin() ? 0 : *(it - 1);
  };
  // The actual time of each first release (kRelease of frame 0), by schedule, hyperepoch and iteration.
  std::map<std::tuple<int, std::uint32_t, std::uint32_t>, std::int64_t> released;
  for (const EventRecord& r : events->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRelease) || r.aux != 0) continue;
    const tactus::Schedule& s = schedules[r.schedule];
    if (r.instance >= s.epochs.size()) continue;
    const auto key = std::make_tuple(static_cast<int>(r.schedule),
                                     tactus::index(s.epochs[tactus::EpochId{r.instance}].hyperepoch), r.iteration);
    if (released.count(key) == 0 || r.endNs < released[key]) released[key] = r.endNs;
  }
  std::vector<std::int64_t> rolloverInIteration, rolloverIdle;
  std::vector<std::int64_t> rollover, rolloverActual, swap, noticed, switching, fromCall, swapToTaken, swapLead,
      swapStopEnd, swapAnswer, swapBefore, swapOwn, swapFromCall, stopTake;
  const EventRecord* lastStop = nullptr;
  std::map<std::uint32_t, const EventRecord*> lastStopOf;  // by hyperepoch
  for (const EventRecord& r : events->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStop)) lastStop = lastStopOf[r.instance] = &r;
    if (r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStart) || lastStop == nullptr) continue;
    if (r.aux != 0xffffffffu) {
      const std::int64_t end = lastEndBefore(static_cast<int>(r.aux), tactus::HyperepochId{r.instance}, r.endNs);
      const std::int64_t dead = r.endNs - std::max(end, r.startNs);
      rollover.push_back(dead);
      // Taken while A's iteration still ran (B starts on A's release thread at its end), or while
      // A was idle (on the switch thread at once): two paths, whose mix moves with A's run lengths.
      (end > r.startNs ? rolloverInIteration : rolloverIdle).push_back(dead);
      // From the manager's call instead of the master's taking it: the request's way in counted.
      for (const auto& [called, returned] : calls) {
        if (r.endNs >= called && r.endNs <= returned) fromCall.push_back(r.endNs - std::max(end, called));
      }
      // The two parts: A's release thread seeing A's last end (its stop record's end time), then
      // the switch on that thread up to B's release.
      if (const EventRecord* stop = lastStopOf[r.instance]; stop != nullptr && stop->endNs >= end && end > 0) {
        noticed.push_back(stop->endNs - std::max(end, r.startNs));
        switching.push_back(r.endNs - stop->endNs);
      }
      const auto actual = released.find(std::make_tuple(static_cast<int>(r.schedule), r.instance, r.iteration));
      if (actual != released.end()) rolloverActual.push_back(actual->second - std::max(end, r.startNs));
    } else {
      const std::int64_t end = lastEndBefore(lastStop->schedule, tactus::HyperepochId{r.instance}, r.endNs);
      if (end > 0) {
        swap.push_back(r.endNs - end);
        // The parts: A's last end to the master's taking the start request (the stop's end, its
        // answer, the manager's start call), then the start request to B's planned release.
        swapToTaken.push_back(r.startNs - end);
        swapLead.push_back(r.endNs - r.startNs);
        std::int64_t stoppedNs = 0;  // the stop's last hyperepoch end: the stop answers after it
        std::int64_t stopTaken = 0;  // the master's taking the stop request (each stop record's start)
        for (const auto& [he, stop] : lastStopOf) {
          stoppedNs = std::max(stoppedNs, stop->endNs);
          stopTaken = std::max(stopTaken, stop->startNs);
        }
        swapStopEnd.push_back(stoppedNs - std::max(end, stopTaken));
        swapBefore.push_back(stopTaken - end);
        swapOwn.push_back(r.endNs - std::max(end, stopTaken));
        // From the manager's stop call instead: the time the master took to take it counted.
        const auto call = std::upper_bound(stopCalls.begin(), stopCalls.end(), stopTaken);
        if (call != stopCalls.begin()) {
          swapFromCall.push_back(r.endNs - std::max(end, *(call - 1)));
          stopTake.push_back(stopTaken - *(call - 1));
        }
        swapAnswer.push_back(r.startNs - stoppedNs);
      }
    }
  }
  const Summary ro = summarize(rollover);
  const Summary sw = summarize(swap);
  const Summary ra = summarize(rolloverActual);
  std::printf("switch dead time, 2 schedules x 2 hyperepochs, period %d us (epoch period %d us), %d switches each\n",
              periodUs, periodUs, switches);
  std::printf(
      "  rollover       %4zu hyperepoch switches: p50 %8.1f us  p99 %8.1f us  max %8.1f us  (p50 = %.3f periods)\n",
      ro.count, ro.p50, ro.p99, ro.max, ro.p50 / periodUs);
  std::printf(
      "  rollover, to the actual release (the release thread's publish, kRelease):\n"
      "                %4zu hyperepoch switches: p50 %8.1f us  p99 %8.1f us  max %8.1f us\n",
      ra.count, ra.p50, ra.p99, ra.max);
  const Summary fc = summarize(fromCall);
  std::printf(
      "  rollover, from the manager's call (not from the master's taking the request):\n"
      "                %4zu hyperepoch switches: p50 %8.1f us  p99 %8.1f us  max %8.1f us\n",
      fc.count, fc.p50, fc.p99, fc.max);
  const Summary no = summarize(noticed);
  const Summary sc = summarize(switching);
  const Summary rin = summarize(rolloverInIteration);
  const Summary rid = summarize(rolloverIdle);
  std::printf("    taken while A's iteration ran: %4zu, p50 %8.1f us; while A was idle: %4zu, p50 %8.1f us\n",
              rin.count, rin.p50, rid.count, rid.p50);
  std::printf("    of which: A's last end seen by its release thread p50 %8.1f us  p99 %8.1f us\n", no.p50, no.p99);
  std::printf("              the switch on that thread to B's release  p50 %8.1f us  p99 %8.1f us\n", sc.p50, sc.p99);
  std::printf(
      "  complete swap  %4zu hyperepoch switches: p50 %8.1f us  p99 %8.1f us  max %8.1f us  (p50 = %.3f periods;\n"
      "                 includes the stop and start calls and the start's 500 us release lead)\n",
      sw.count, sw.p50, sw.p99, sw.max, sw.p50 / periodUs);
  const Summary st = summarize(swapToTaken);
  const Summary sl = summarize(swapLead);
  std::printf("    of which: A's last end to the start request taken   p50 %8.1f us  p99 %8.1f us\n", st.p50, st.p99);
  const Summary se = summarize(swapStopEnd);
  const Summary sa = summarize(swapAnswer);
  const Summary sb = summarize(swapBefore);
  std::printf("      A's last end to the stop request taken      p50 %8.1f us  p99 %8.1f us\n", sb.p50, sb.p99);
  std::printf("      the later of them to A's last loop end      p50 %8.1f us  p99 %8.1f us\n", se.p50, se.p99);
  std::printf("      that end to the start request taken         p50 %8.1f us  p99 %8.1f us\n", sa.p50, sa.p99);
  std::printf("              the start request taken to B's release  p50 %8.1f us  p99 %8.1f us\n", sl.p50, sl.p99);
  const Summary so = summarize(swapOwn);
  const Summary sf = summarize(swapFromCall);
  const Summary stt = summarize(stopTake);
  // The swap above counts from A's last end, so a stop called later in A's idle time counts its
  // wait for nothing: its p50 moves with where in A's iteration the calls fall (the pauses), and a
  // master slower to take the stop can even shorten it (a stop taken at A's next iteration start
  // follows that iteration's last end closely). These count from the later of the two.
  std::printf(
      "  complete swap, the runtime's part (from the later of A's last end and the manager's stop\n"
      "  call to B's release):\n"
      "                %4zu hyperepoch switches: p50 %8.1f us  p99 %8.1f us  max %8.1f us\n"
      "    from the master's taking of the stop instead:     p50 %8.1f us  p99 %8.1f us\n"
      "    the stop call to the master's taking it:          p50 %8.1f us  p99 %8.1f us\n",
      sf.count, sf.p50, sf.p99, sf.max, so.p50, so.p99, stt.p50, stt.p99);
  std::printf("  target: rollover p50 < 50 us (B starts at once, no period boundary to wait for): %s\n",
              ro.p50 < 50 ? "met" : "not met");
  std::string rm = "rm -rf " + dir;
  if (std::getenv("SWITCH_BENCH_KEEP") == nullptr) (void)std::system(rm.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "switch-bench: %s\n", e.what());
  return 1;
}
