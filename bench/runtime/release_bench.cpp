// runtime-release-bench: how close to its ideal time a frame starts, with the other core busy.
//   bare loop  pinned to core 0: absolute clock_nanosleep to 50 us before each 10 ms deadline,
//              then a spin to the deadline (what tactus-master's release thread does)
//   tactus     a 10 ms epoch with one empty runnable on CPU0, master pinned to core 0 (-c 0);
//              from the event log: |actual release - ideal release| (kRelease records) and the
//              first runnable's start - ideal release
//   with top   (--top TACTUS_TOP) the same tactus run with tactus-top at its default refresh
//              attached for the whole run: does watching disturb the releases?
// A spinning load process holds core 1 during all; they alternate in blocks of frames. Prints
// p50, p99, max and the comparisons.
//
// usage: runtime-release-bench --compile TACTUS_COMPILE --master TACTUS_MASTER --client BENCH_CLIENT
//        [--top TACTUS_TOP] [--quick] [--frames N]
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
  bool quick = false;
  long long frames = 1000;
};

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
  std::string error;
};

// One tactus run of `frames` frames; appends its figures to `result` (sets result.error on failure).
void tactusRelease(const Options& o, const std::string& dir, long long frames, int block, TactusRelease& result,
                   bool withTop = false) {
  const std::string yaml = dir + "/release.yaml", sched = dir + "/release.tsched", log = dir + "/release.tlog";
  const std::size_t releasesBefore = result.release.size(), startsBefore = result.firstStart.size();
  std::ofstream(yaml) << "Version: 3.0.0\nRelease:\n  Identifier: 8\n  Resources:\n    CPU: [CPU0]\n"
                         "  Hyperepochs:\n    - Main:\n        Epochs:\n          - Tick: {Period: 10ms}\n"
                         "  Clients:\n    - A:\n        Epochs:\n          - Main.Tick:\n"
                         "              Runnables:\n                - Tick: {WCET: 100us, Resources: [CPU0]}\n";
  const std::int64_t deadline = tb::monotonicNs() + 300'000'000'000LL;
  if (tb::waitUntil(tb::spawn({o.compile, "-i", yaml, "-o", sched}, dir + "/compile.out"), deadline) != 0) {
    result.error = "tactus-compile failed:\n" + tb::readText(dir + "/compile.out");
    return;
  }
  const std::string instance =
      "release_" + std::to_string(getpid()) + "_" + std::to_string(block) + (withTop ? "_top" : "");
  const pid_t master = tb::spawn(
      {o.master, "-s", sched, "-e", std::to_string(frames), "-l", log, "-D", instance, "-c", "0", "-t", "30000000"},
      dir + "/master.out");
  const pid_t client = tb::spawn({o.client, "A", "--instance", instance}, dir + "/a.out");
  pid_t top = -1;
  if (withTop) {  // attached once the master has published, until the run ends (it then exits 0)
    while (::access(("/dev/shm/tactus_" + instance).c_str(), F_OK) != 0 && tb::monotonicNs() < deadline) usleep(2000);
    usleep(20'000);
    top = tb::spawn({o.top, "-D", instance}, dir + "/top.out");
  }
  const std::vector<int> rs = tb::waitAll({master, client}, deadline);
  const int rm = rs[0], rc = rs[1];
  if (top > 0 && tb::waitUntil(top, deadline) != 0) {
    result.error = "tactus-top did not stay attached to the run:\n" + tb::readText(dir + "/top.out");
    return;
  }
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
  std::map<std::uint32_t, std::int64_t> idealByIteration;
  for (const tactus::EventRecord& r : events->records) {
    if (r.kind == static_cast<std::uint16_t>(tactus::EventKind::kRelease)) {
      idealByIteration[r.iteration] = r.startNs;
      result.release.push_back(std::llabs(r.endNs - r.startNs));
    }
  }
  for (const tactus::EventRecord& r : events->records) {
    if (r.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun)) continue;
    auto ideal = idealByIteration.find(r.iteration);
    if (ideal != idealByIteration.end()) result.firstStart.push_back(r.startNs - ideal->second);
  }
  const std::size_t releases = result.release.size() - releasesBefore, starts = result.firstStart.size() - startsBefore;
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
  std::fprintf(stderr,
               "usage: runtime-release-bench --compile TACTUS_COMPILE --master TACTUS_MASTER "
               "--client BENCH_CLIENT [--quick] [--frames N]\n");
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
    else return usage();
  }
  if (o.compile.empty() || o.master.empty() || o.client.empty() || o.frames < 10) return usage();
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
  // run (these machines are shared) falls on both alike.
  const int blocks = o.quick ? 1 : 10;
  const long long perBlock = (frames + blocks - 1) / blocks;
  const pid_t load = startLoad();
  std::vector<std::int64_t> bare;
  TactusRelease t, withTop;
  bool bareOk = true;
  std::vector<std::string> blockLines;  // per block: how the machine's load drifted
  for (int b = 0; b < blocks && t.error.empty() && bareOk; ++b) {
    const std::size_t bareFrom = bare.size(), tactusFrom = t.release.size();
    bareOk = bareBlock(dir.path(), perBlock, bare);
    if (bareOk) tactusRelease(o, dir.path(), perBlock, b, t);
    if (bareOk && t.error.empty() && !o.top.empty()) tactusRelease(o, dir.path(), perBlock, b, withTop, true);
    if (!withTop.error.empty()) t.error = withTop.error;
    if (bareOk && t.error.empty()) {
      std::vector<std::int64_t> vb(bare.begin() + static_cast<std::ptrdiff_t>(bareFrom), bare.end());
      std::vector<std::int64_t> vt(t.release.begin() + static_cast<std::ptrdiff_t>(tactusFrom), t.release.end());
      const tb::Percentiles qb = tb::percentiles(vb), qt = tb::percentiles(vt);
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
  std::printf("frame release, %lld frames of 10 ms in %d alternating blocks, core 1 busy; |actual - ideal| in us%s\n",
              perBlock * blocks, blocks, o.quick ? " [quick]" : "");
  std::printf("  %-40s %7s %9s %9s %9s\n", "", "frames", "p50", "p99", "max");
  printRow("bare loop (clock_nanosleep + spin)", pb);
  printRow("tactus release (master, kRelease)", pr);
  printRow("tactus first runnable start", pf);
  const tb::Percentiles pt = tb::percentiles(withTop.release), ps = tb::percentiles(withTop.firstStart);
  if (!o.top.empty()) {
    printRow("tactus release, tactus-top attached", pt);
    printRow("tactus first start, tactus-top attached", ps);
  }
  if (blocks > 1) {
    std::printf("per block (us), in run order:\n");
    for (const std::string& line : blockLines) std::printf("%s\n", line.c_str());
  }
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf("tactus release - bare: p50 %+.1f us (target: within 5 us); p99 ratio %.2f (target: <= 1.2)\n",
              (pr.p50 - pb.p50) / 1e3, ratio(pr.p99, pb.p99));
  std::printf("tactus first start - bare: p50 %+.1f us; p99 ratio %.2f; max ratio %.2f\n", (pf.p50 - pb.p50) / 1e3,
              ratio(pf.p99, pb.p99), ratio(pf.max, pb.max));
  if (!o.top.empty()) {
    std::printf(
        "tactus-top attached / not: release p50 ratio %.2f, p99 ratio %.2f; first start p50 ratio %.2f, "
        "p99 ratio %.2f (target: within 10%%)\n",
        ratio(pt.p50, pr.p50), ratio(pt.p99, pr.p99), ratio(ps.p50, pf.p50), ratio(ps.p99, pf.p99));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "release-bench: %s\n", e.what());
  return 1;
}
