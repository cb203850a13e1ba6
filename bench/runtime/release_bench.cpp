// runtime-release-bench: how close to its ideal time a frame starts, with the other core busy.
//   bare loop  pinned to core 0: absolute clock_nanosleep to 50 us before each 10 ms deadline,
//              then a spin to the deadline (what tactus-master's release thread does)
//   tactus     a 10 ms epoch with one empty runnable on CPU0, master pinned to core 0 (-c 0);
//              from the event log: |actual release - ideal release| (kRelease records) and the
//              first runnable's start - ideal release
//   with top   (--top TACTUS_TOP) tactus-top at its default refresh attached to each tactus run,
//              refreshing in alternate 2 s windows and stopped (SIGSTOP) between them: does
//              watching disturb the releases? Frames whose ideal release falls in a window it
//              refreshed in (the first one includes its start) are compared with the others of
//              the same runs; the frames without it, split by alternate windows into two halves,
//              give the comparison's noise floor.
// A spinning load process holds core 1 during all; bare and tactus alternate in blocks of frames
// (with --top: tactus runs only, the comparison being within them).
// Prints p50, p99, max and the comparisons.
//
// usage: runtime-release-bench --compile TACTUS_COMPILE --master TACTUS_MASTER --client BENCH_CLIENT
//        [--top TACTUS_TOP [--top-interval MS]] [--quick] [--frames N]
//   --top-interval MS  tactus-top's refresh (-n); 50 refreshes 10 times as often as the default,
//                      to see whether a refresh costs the run anything at all
//   --metrics-port P   with --top: tactus-top serves Prometheus metrics (--metrics 127.0.0.1:P)
//                      instead of its screen, and curl scrapes them every 100 ms, both in the
//                      attached windows only (stopped together between them)
#include <unistd.h>

#include <exception>
#include <fstream>
#include <map>

#include "bench_support.hpp"
#include "tactus/core/event_log.hpp"

namespace tb = tactus::bench;

namespace {

constexpr std::int64_t kPeriodNs = 10'000'000;
constexpr std::int64_t kSpinNs = 50'000;  // tactus-master's kReleaseSpinNs

struct Options {
  std::string compile, master, client, top;
  std::string topInterval;  // tactus-top's -n (ms); empty: its default refresh
  std::string metricsPort;  // tactus-top --metrics 127.0.0.1:PORT, scraped (empty: its screen)
  bool quick = false;
  long long frames = 0;  // 0: 1000, or 60000 with --top (150 windows a side: see main)
};

constexpr std::int64_t kTopWindowNs = 2'000'000'000;  // attached 2 s, then 2 s not, in turn

// The bare release loop: returns |actual - ideal| per frame.
std::vector<std::int64_t> bareReleaseLoop(long long frames) {
  tb::pinToCore(0);
  std::vector<std::int64_t> lateness;
  const std::int64_t first = tb::monotonicNs() + 2 * kPeriodNs;
  for (long long f = 0; f < frames; ++f) {
    const std::int64_t ideal = first + f * kPeriodNs;
    const std::int64_t wake = ideal - kSpinNs;
    const timespec t{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {}
    std::int64_t now = tb::monotonicNs();
    while (now < ideal) now = tb::monotonicNs();
    lateness.push_back(now - ideal);
  }
  return lateness;
}

// A process that keeps core 1 busy until killed.
pid_t startLoad() {
  const pid_t pid = fork();
  if (pid == 0) {
    tb::pinToCore(1);
    volatile std::uint64_t x = 0;
    for (;;) x = x + 1;
  }
  return pid;
}

struct TactusRelease {
  std::vector<std::int64_t> release;     // |actual release - ideal release|
  std::vector<std::int64_t> firstStart;  // first runnable's start - ideal release
  std::vector<std::int64_t> windowP99;   // release p99 of each window or stretch (top comparison)
  std::string error;
};

// A window the viewer refreshed in: from its start or SIGCONT to its SIGSTOP (CLOCK_MONOTONIC).
struct Window {
  std::int64_t from = 0, to = 0;
};

// The frames of one run, sorted into the arms of the top comparison.
struct Arms {
  TactusRelease* plain = nullptr;                 // no viewer attached
  TactusRelease* top = nullptr;                   // viewer attached (null: every frame is plain)
  TactusRelease* halves[2] = {nullptr, nullptr};  // plain frames by alternate stretches (noise floor)
  std::size_t stretches = 0;                      // plain stretches so far, over all runs
};

// Whether `pid` (a child) has not exited yet; leaves it to be reaped.
bool running(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

// Attaches tactus-top to `instance` for the rest of the run and lets it refresh in alternate
// windows (stopped with SIGSTOP between them, so that it stays attached and only the watching
// differs, not a process start per window); returns the windows it refreshed in. Sets `error`
// when the viewer did not stay attached: it exited before the run ended, did not then end by
// itself ("the run ... ended", exit 0), or never rendered a screen.
std::vector<Window> attachInWindows(const Options& o, const std::string& dir, const std::string& instance, pid_t master,
                                    std::int64_t deadline, std::string& error) {
  std::vector<Window> windows;
  const std::string out = dir + "/top.out";
  ::unlink(out.c_str());
  pid_t top = -1, scraper = -1;
  auto both = [&](int sig) {
    kill(top, sig);
    if (scraper > 0) kill(scraper, sig);
  };
  auto masterRunning = [&] { return running(master) && tb::monotonicNs() < deadline; };
  // The first window is a plain one: the run's start is in neither arm's favour.
  for (bool attach = false; masterRunning(); attach = !attach) {
    if (!attach) {
      tb::awaitExit({master}, tb::monotonicNs() + kTopWindowNs);
      continue;
    }
    Window w;
    w.from = tb::monotonicNs();
    if (top < 0) {  // attaches in its first window
      std::vector<std::string> argv{o.top, "-D", instance};
      if (!o.topInterval.empty()) argv.insert(argv.end(), {"-n", o.topInterval});
      if (!o.metricsPort.empty()) argv.insert(argv.end(), {"--metrics", "127.0.0.1:" + o.metricsPort});
      top = tb::spawn(argv, out);
      // One line per scrape (the count of its run series), at the idle class as tactus-top is:
      // a Prometheus server scrapes from another machine, so the scraper's own CPU is not counted.
      if (!o.metricsPort.empty())
        scraper = tb::spawn({"/usr/bin/chrt", "-i", "0", "/bin/sh", "-c",
                             "while :; do curl -s --max-time 1 http://127.0.0.1:" + o.metricsPort +
                                 "/metrics | grep -c '^tactus_runs_total'; sleep 0.1; done"},
                            dir + "/scrapes.out");
    } else both(SIGCONT);
    tb::awaitExit({master}, w.from + kTopWindowNs);
    if (running(master)) both(SIGSTOP);
    w.to = tb::monotonicNs();
    windows.push_back(w);
    if (!running(top)) break;
  }
  if (top < 0) return windows;
  const bool stayed = running(top);
  both(SIGCONT);
  if (scraper > 0) {
    kill(scraper, SIGTERM);
    tb::waitUntil(scraper, tb::monotonicNs() + 2'000'000'000LL);
  }
  tb::awaitExit({master}, deadline);
  const int status = tb::waitUntil(top, tb::monotonicNs() + 5'000'000'000LL);
  const std::string shown = tb::readText(out);
  const bool screen =
      shown.find(o.metricsPort.empty() ? "tactus-top: instance" : "serving metrics") != std::string::npos;
  if (!stayed || status != 0 || !screen || shown.find("ended") == std::string::npos) {
    error = "tactus-top did not stay attached to the run (status " + std::to_string(status) + "):\n" + shown;
  } else if (!o.metricsPort.empty()) {
    const std::string scrapes = tb::readText(dir + "/scrapes.out");
    if (scrapes.find_first_of("123456789") == std::string::npos)
      error = "no scrape of tactus-top --metrics saw a tactus_runs_total series:\n" + scrapes + shown;
  }
  return windows;
}

// One tactus run of `frames` frames; appends its figures to `result` (sets result.error on failure).
void tactusRelease(const Options& o, const std::string& dir, long long frames, int block, Arms& arms) {
  TactusRelease& result = *arms.plain;
  const std::string yaml = dir + "/release.yaml", sched = dir + "/release.tsched", log = dir + "/release.tlog";
  std::ofstream(yaml) << "Version: 3.0.0\nRelease:\n  Identifier: 8\n  Resources:\n    CPU: [CPU0]\n"
                         "  Hyperepochs:\n    - Main:\n        Epochs:\n          - Tick: {Period: 10ms}\n"
                         "  Clients:\n    - A:\n        Epochs:\n          - Main.Tick:\n"
                         "              Runnables:\n                - Tick: {WCET: 100us, Resources: [CPU0]}\n";
  const std::int64_t deadline = tb::monotonicNs() + 300'000'000'000LL;
  if (tb::waitUntil(tb::spawn({o.compile, "-i", yaml, "-o", sched}, dir + "/compile.out"), deadline) != 0) {
    result.error = "tactus-compile failed:\n" + tb::readText(dir + "/compile.out");
    return;
  }
  const std::string instance = "release_" + std::to_string(getpid()) + "_" + std::to_string(block);
  const pid_t master = tb::spawn(
      {o.master, "-s", sched, "-e", std::to_string(frames), "-l", log, "-D", instance, "-c", "0", "-t", "30000000"},
      dir + "/master.out");
  const pid_t client = tb::spawn({o.client, "A", "--instance", instance}, dir + "/a.out");
  std::vector<Window> windows;
  if (arms.top != nullptr) {  // attached in windows once the master has published, until the run ends
    while (::access(("/dev/shm/tactus_" + instance).c_str(), F_OK) != 0 && tb::monotonicNs() < deadline) usleep(2000);
    windows = attachInWindows(o, dir, instance, master, deadline, result.error);
  }
  const std::vector<int> rs = tb::waitAll({master, client}, deadline);
  const int rm = rs[0], rc = rs[1];
  if (!result.error.empty()) return;
  if (rm != 0 || rc != 0) {
    result.error = "the tactus run failed (master " + std::to_string(rm) + ", client " + std::to_string(rc) + "):\n" +
                   tb::readText(dir + "/master.out") + tb::readText(dir + "/a.out");
    return;
  }
  auto events = tactus::readEventLog(log);
  if (!events) {
    result.error = events.error().message;
    return;
  }
  // A frame's arm by its ideal release: in a viewer's window, or in the plain stretch before
  // window k (the plain stretches, counted over all runs, alternate between the two halves).
  std::map<std::uint32_t, std::int64_t> idealByIteration;
  std::size_t releases = 0, starts = 0, plainStretches = 0;
  // Releases by stretch (2k: the plain stretch before window k, 2k + 1: window k) and its arm.
  std::map<std::size_t, std::pair<TactusRelease*, std::vector<std::int64_t>>> byStretch;
  auto add = [&](std::int64_t idealNs, std::int64_t value, bool isRelease) {
    std::size_t k = 0;
    while (k < windows.size() && windows[k].to <= idealNs) ++k;
    auto put = [&](TactusRelease* arm) {
      if (arm != nullptr) (isRelease ? arm->release : arm->firstStart).push_back(value);
    };
    const bool attached = k < windows.size() && windows[k].from <= idealNs;
    if (isRelease && arms.top != nullptr) {
      auto& [arm, values] = byStretch[2 * k + (attached ? 1 : 0)];
      arm = attached ? arms.top : arms.plain;
      values.push_back(value);
    }
    if (attached) {
      put(arms.top);
      return;
    }
    put(arms.plain);
    put(arms.halves[(arms.stretches + k) % 2]);
    plainStretches = std::max(plainStretches, k + 1);
  };
  for (const tactus::EventRecord& r : events->records) {
    if (r.kind == static_cast<std::uint16_t>(tactus::EventKind::kRelease)) {
      idealByIteration[r.iteration] = r.startNs;
      add(r.startNs, std::llabs(r.endNs - r.startNs), true);
      ++releases;
    }
  }
  for (const tactus::EventRecord& r : events->records) {
    if (r.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun)) continue;
    auto ideal = idealByIteration.find(r.iteration);
    if (ideal == idealByIteration.end()) continue;
    add(ideal->second, r.startNs - ideal->second, false);
    ++starts;
  }
  for (auto& [stretch, armValues] : byStretch) {
    auto& [arm, values] = armValues;
    if (values.size() < 100) continue;  // a run's short last stretch
    const auto p99 = static_cast<std::int64_t>(tb::percentiles(values).p99);
    arm->windowP99.push_back(p99);
    if (stretch % 2 == 0) arms.halves[(arms.stretches + stretch / 2) % 2]->windowP99.push_back(p99);
  }
  arms.stretches += plainStretches;
  if (releases != static_cast<std::size_t>(frames) || starts != static_cast<std::size_t>(frames)) {
    result.error = "the event log has " + std::to_string(releases) + " releases and " + std::to_string(starts) +
                   " runs, expected " + std::to_string(frames) + " each";
  }
}

// The bare loop in a child pinned to core 0 (the driver's own affinity stays free); appends to `bare`.
bool bareBlock(const std::string& dir, long long frames, std::vector<std::int64_t>& bare) {
  const std::string out = dir + "/bare.bin";
  const pid_t child = fork();
  if (child == 0) {
    std::vector<std::int64_t> v = bareReleaseLoop(frames);
    std::ofstream(out, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(std::int64_t)));
    _exit(0);
  }
  if (tb::waitUntil(child, tb::monotonicNs() + 600'000'000'000LL) != 0) return false;
  std::ifstream in(out, std::ios::binary);
  std::int64_t x = 0;
  long long n = 0;
  while (in.read(reinterpret_cast<char*>(&x), sizeof x)) {
    bare.push_back(x);
    ++n;
  }
  return n == frames;
}

void printRow(const char* name, tb::Percentiles p) {
  std::printf("  %-40s %7zu %9.1f %9.1f %9.1f\n", name, p.count, p.p50 / 1e3, p.p99 / 1e3, p.max / 1e3);
}

int usage() {
  std::fprintf(
      stderr,
      "usage: runtime-release-bench --compile TACTUS_COMPILE --master TACTUS_MASTER "
      "--client BENCH_CLIENT [--top TACTUS_TOP [--top-interval MS] [--metrics-port PORT]] [--quick] [--frames N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--compile") o.compile = value();
    else if (a == "--master") o.master = value();
    else if (a == "--client") o.client = value();
    else if (a == "--top") o.top = value();
    else if (a == "--quick") o.quick = true;
    else if (a == "--frames") o.frames = std::atoll(value().c_str());
    else if (a == "--top-interval") o.topInterval = value();
    else if (a == "--metrics-port") o.metricsPort = value();
    else return usage();
  }
  // With --top, 10 minutes: the p99 of 2 s windows moves by a third between runs here, the
  // median of 150 of them by a few percent.
  if (o.frames == 0) o.frames = o.top.empty() ? 1000 : 60000;
  if (o.compile.empty() || o.master.empty() || o.client.empty() || o.frames < 10) return usage();
  if (!o.metricsPort.empty() && o.top.empty()) return usage();
  if (!tb::haveCores01()) {
    std::printf("runtime-release-bench: needs cores 0 and 1, skipped\n");
    return 77;
  }
  const long long frames = o.quick ? 50 : o.frames;
  tb::TempDir dir;
  if (dir.path().empty()) {
    std::fprintf(stderr, "runtime-release-bench: cannot make a temporary directory\n");
    return 1;
  }

  // Bare and tactus alternate in blocks, so that a change in the machine's other load during the
  // run (these machines are shared) falls on both alike. With --top the comparison is within the
  // tactus runs, and the bare loop is left out (its time goes to more windows).
  const bool withBare = o.top.empty();
  const int blocks = o.quick ? 1 : withBare ? 10 : 5;
  const long long perBlock = (frames + blocks - 1) / blocks;
  const pid_t load = startLoad();
  std::vector<std::int64_t> bare;
  TactusRelease t, withTop, halves[2];
  Arms arms = withBare ? Arms{&t} : Arms{&t, &withTop, {&halves[0], &halves[1]}};
  bool bareOk = true;
  std::vector<std::string> blockLines;                     // per block: how the machine's load drifted
  std::vector<std::int64_t> bareBlockP99, tactusBlockP99;  // each block's p99, for the medians below
  for (int b = 0; b < blocks && t.error.empty() && bareOk; ++b) {
    const std::size_t bareFrom = bare.size(), tactusFrom = t.release.size();
    if (withBare) bareOk = bareBlock(dir.path(), perBlock, bare);
    if (bareOk) tactusRelease(o, dir.path(), perBlock, b, arms);
    if (bareOk && t.error.empty() && withBare) {
      std::vector<std::int64_t> vb(bare.begin() + static_cast<std::ptrdiff_t>(bareFrom), bare.end());
      std::vector<std::int64_t> vt(t.release.begin() + static_cast<std::ptrdiff_t>(tactusFrom), t.release.end());
      const tb::Percentiles qb = tb::percentiles(vb), qt = tb::percentiles(vt);
      bareBlockP99.push_back(static_cast<std::int64_t>(qb.p99));
      tactusBlockP99.push_back(static_cast<std::int64_t>(qt.p99));
      char line[160];
      std::snprintf(line, sizeof line,
                    "  block %2d: bare p50 %7.1f p99 %7.1f max %7.1f | tactus p50 %7.1f p99 %7.1f max %7.1f", b,
                    qb.p50 / 1e3, qb.p99 / 1e3, qb.max / 1e3, qt.p50 / 1e3, qt.p99 / 1e3, qt.max / 1e3);
      blockLines.push_back(line);
    }
  }
  kill(load, SIGKILL);
  waitpid(load, nullptr, 0);
  if (!t.error.empty() || !bareOk) {
    std::fprintf(stderr, "runtime-release-bench: %s\n", !t.error.empty() ? t.error.c_str() : "the bare loop failed");
    return 1;
  }
  const tb::Percentiles pb = tb::percentiles(bare), pr = tb::percentiles(t.release), pf = tb::percentiles(t.firstStart);
  std::printf("frame release, %lld frames of 10 ms in %d %s, core 1 busy; |actual - ideal| in us%s\n",
              perBlock * blocks, blocks, withBare ? "alternating blocks" : "runs", o.quick ? " [quick]" : "");
  std::printf("  %-40s %7s %9s %9s %9s\n", "", "frames", "p50", "p99", "max");
  if (withBare) printRow("bare loop (clock_nanosleep + spin)", pb);
  printRow("tactus release (master, kRelease)", pr);
  printRow("tactus first runnable start", pf);
  const tb::Percentiles pt = tb::percentiles(withTop.release), ps = tb::percentiles(withTop.firstStart);
  const tb::Percentiles h0 = tb::percentiles(halves[0].release), h1 = tb::percentiles(halves[1].release);
  if (!withBare) {
    printRow("tactus release, tactus-top attached", pt);
    printRow("tactus first start, tactus-top attached", ps);
    printRow("tactus release, no viewer, even windows", h0);
    printRow("tactus release, no viewer, odd windows", h1);
  }
  if (blocks > 1 && withBare) {
    std::printf("per block (us), in run order:\n");
    for (const std::string& line : blockLines) std::printf("%s\n", line.c_str());
  }
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  if (withBare) {
    std::printf("tactus release - bare: p50 %+.1f us (target: within 5 us); p99 ratio %.2f (target: <= 1.2)\n",
                (pr.p50 - pb.p50) / 1e3, ratio(pr.p99, pb.p99));
    std::printf("tactus first start - bare: p50 %+.1f us; p99 ratio %.2f; max ratio %.2f\n", (pf.p50 - pb.p50) / 1e3,
                ratio(pf.p99, pb.p99), ratio(pf.max, pb.max));
    // The pooled p99 is the 1% worst frames of the whole run, which a few of the machine's stalls
    // decide (the bare loop, the same code in every build, swings by 10x between runs); the median
    // over blocks of each block's p99 is not moved by stalls that hit a few blocks.
    const tb::Percentiles mb = tb::percentiles(bareBlockP99), mt = tb::percentiles(tactusBlockP99);
    std::printf("median over %zu blocks of their p99: bare %.1f us, tactus release %.1f us, ratio %.2f\n", mt.count,
                mb.p50 / 1e3, mt.p50 / 1e3, ratio(mt.p50, mb.p50));
  }
  if (!o.top.empty()) {
    const bool scraped = !o.metricsPort.empty();
    std::printf(
        "%s / not (the same runs, 2 s windows in turn): release p50 ratio %.2f, p99 ratio %.2f; "
        "first start p50 ratio %.2f, p99 ratio %.2f (target: within %d%%)\n",
        scraped ? "tactus-top --metrics scraped every 100 ms" : "tactus-top attached", ratio(pt.p50, pr.p50),
        ratio(pt.p99, pr.p99), ratio(ps.p50, pf.p50), ratio(ps.p99, pf.p99), scraped ? 5 : 10);
    std::printf("noise floor, no viewer in either (even / odd windows): release p50 ratio %.2f, p99 ratio %.2f\n",
                ratio(h0.p50, h1.p50), ratio(h0.p99, h1.p99));
    // The pooled p99 is the 1% worst frames of the whole run, which the machine's stalls of
    // several ms decide here; the median over windows of each window's p99 is not moved by a few.
    const tb::Percentiles wt = tb::percentiles(withTop.windowP99), wp = tb::percentiles(t.windowP99);
    std::printf(
        "median over 2 s windows of their release p99: attached %.1f us (%zu windows), not %.1f us (%zu); "
        "ratio %.2f (target: within %d%%)\n",
        wt.p50 / 1e3, wt.count, wp.p50 / 1e3, wp.count, ratio(wt.p50, wp.p50), scraped ? 5 : 10);
    const tb::Percentiles w0 = tb::percentiles(halves[0].windowP99), w1 = tb::percentiles(halves[1].windowP99);
    std::printf("  its noise floor (even / odd windows without the viewer): %.1f / %.1f us, ratio %.2f\n", w0.p50 / 1e3,
                w1.p50 / 1e3, ratio(w0.p50, w1.p50));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "release-bench: %s\n", e.what());
  return 1;
}
