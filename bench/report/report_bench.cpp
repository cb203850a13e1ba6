// Benchmark of tactus-report: generates a schedule and a simulated event log of about 1,000,000
// events, runs the real tactus-report executable on it (text, CSV, JSON, trace, WCET file, HTML)
// and prints wall time and peak resident memory of each run against the targets (2 s, 200 MiB).
//
// usage: report_bench TACTUS_REPORT [EVENTS] [KEEP_DIR]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "simulate.hpp"
#include "tactus/core/schedule_file.hpp"

namespace {

struct Measured {
  int status = -1;
  double seconds = 0;
  double peakMiB = 0;
};

// Runs the program (bench::spawn: its output to `outputPath`); wall time and the child's peak
// RSS via wait4.
Measured runTimed(const std::vector<std::string>& argv, const std::string& outputPath) {
  Measured m;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = tactus::bench::spawn(argv, outputPath);
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) return m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.peakMiB = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: report_bench TACTUS_REPORT [EVENTS] [KEEP_DIR]\n");
    return 2;
  }
  const std::string tool = argv[1];
  const long events = argc > 2 ? std::atol(argv[2]) : 1'000'000;
  std::string dir;
  bool keep = argc > 3;  // a folder given, or a failed run's output to read
  if (argc > 3) {
    dir = argv[3];
  } else {
    char tmpl[] = "/tmp/tactus-report-bench-XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    dir = tmpl;
  }
  // 1,000 runnables in one epoch of 4 frames on 8 cores: 4,000 runs (+4 releases) per iteration.
  tactus::report::SyntheticShape shape;
  shape.runnables = 1000;
  shape.clients = 4;
  shape.cpus = 8;
  shape.frames = 4;
  const tactus::Schedule schedule = tactus::report::makeSyntheticSchedule(shape);
  const std::string sched = dir + "/bench.tsched", log = dir + "/bench.tlog";
  if (!tactus::saveScheduleFile(schedule, sched)) return 1;
  tactus::report::SimulationOptions sim;
  const std::size_t perIteration = schedule.instances.size() + shape.frames;
  sim.iterations = static_cast<std::uint64_t>((events + perIteration - 1) / perIteration);
  sim.overrunProbability = 0.001;
  auto t0 = std::chrono::steady_clock::now();
  if (!tactus::report::writeSimulatedLog(log, schedule, sim)) return 1;
  const double genS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "report_bench: %zu runnables, %zu instances per iteration, %llu iterations -> %llu events (generated in %.2f "
      "s)\n",
      schedule.runnables.size(), schedule.instances.size(), static_cast<unsigned long long>(sim.iterations),
      static_cast<unsigned long long>(sim.iterations) * perIteration, genS);

  struct Case {
    const char* what;
    std::vector<std::string> extra;
  };
  const std::vector<Case> cases = {
      {"text statistics", {}},
      {"--json", {"--json"}},
      {"--csv", {"--csv"}},
      {"--wcet-out", {"--wcet-out", dir + "/wcet.yaml"}},
      {"--trace-out", {"--trace-out", dir + "/trace.json"}},
      {"--html", {"--html", dir + "/run.html"}},
  };
  int failures = 0;
  std::printf("%-18s %10s %12s %s\n", "case", "seconds", "peak MiB", "target (2 s, 200 MiB)");
  for (const Case& c : cases) {
    std::vector<std::string> argvv = {tool, log, sched};
    argvv.insert(argvv.end(), c.extra.begin(), c.extra.end());
    const std::string output = dir + "/output.txt";
    std::remove(output.c_str());
    const Measured m = runTimed(argvv, output);
    const bool ok = m.status == 0 && m.seconds < 2.0 && m.peakMiB < 200.0;
    if (m.status != 0) ++failures;
    std::printf(
        "%-18s %10.3f %12.1f %s%s\n", c.what, m.seconds, m.peakMiB, ok ? "met" : "MISSED",
        m.status == 0
            ? ""
            : (" (tactus-report failed with " + std::to_string(m.status) + "; its output: " + output + ")").c_str());
    if (m.status != 0) keep = true;
  }
  if (!keep) {
    for (const char* f : {"/bench.tsched", "/bench.tlog", "/wcet.yaml", "/trace.json", "/run.html", "/output.txt"})
      std::remove((dir + f).c_str());
    rmdir(dir.c_str());
  }
  return failures ? 1 : 0;
}
