// compile-speed: compile time and peak memory for synthetic graphs of 500, 5,000 and 50,000 runnables.
//
// usage: compile-speed [--compile PATH] [N ...]
// For each N, a child process builds the graph in code (bench/gen_model.hpp) and runs the
// scheduler, the verifier and the report (the "schedule" rows); with --compile, the graph is also
// written as YAML and compiled end to end by `tactus-compile -i G.yaml -o G.tsched -k G.json -t 0`
// (the "compile" rows). Wall time and the child's peak RSS (wait4) are printed against the targets
// 0.05 s, 1 s and 20 s, with the memory per runnable to show that growth is linear.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gen_model.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "tactus/core/verify.hpp"

namespace {

struct Run {
  bool ok = false;
  double seconds = 0;
  long maxRssKiB = 0;
};

// Schedules the graph of n runnables in this (child) process; exit status 0 on success.
int scheduleChild(std::uint32_t n) {
  using namespace tactus;
  const compiler::Graph g = bench::modelGraph(bench::generateModel(n, 1));
  auto s = compiler::scheduleGraph(g, {});
  if (!s) {
    std::fprintf(stderr, "compile-speed: N=%u: %s\n", n, s.error().message.c_str());
    return 1;
  }
  const VerifyReport v = verifySchedule(*s);
  if (!v.ok()) {
    std::fprintf(stderr, "compile-speed: N=%u: verification failed: %s\n", n, v.errors.front().c_str());
    return 1;
  }
  const compiler::CompileReport rep = compiler::buildReport(g, *s);
  return rep.hyperepochs.empty() ? 1 : 0;
}

// Runs `fn` in a forked child, or execs `argv` when given; measures wall time and peak RSS.
template <typename Fn>
Run measure(Fn fn, const std::vector<std::string>& argv = {}) {
  Run r;
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    if (argv.empty()) _exit(fn());
    // The compiler's report text would drown the table.
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::perror("compile-speed: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.maxRssKiB = usage.ru_maxrss;
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

double targetSeconds(std::uint32_t n) {
  if (n <= 500) return 0.05;
  if (n <= 5000) return 1.0;
  return 20.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string compile;
  std::vector<std::uint32_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--compile" && i + 1 < argc) {
      compile = argv[++i];
    } else {
      const long v = std::strtol(a.c_str(), nullptr, 10);
      if (v <= 0) {
        std::fprintf(stderr, "usage: compile-speed [--compile PATH] [N ...]\n");
        return 2;
      }
      sizes.push_back(static_cast<std::uint32_t>(v));
    }
  }
  if (sizes.empty()) sizes = {500, 5000, 50000};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tactus-compile-speed-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  bool allMet = true;
  std::printf("%-9s %8s %10s %10s %9s %12s %14s  %s\n", "what", "N", "instances", "time", "target", "peak RSS",
              "KiB/runnable", "");
  for (const char* what : {"schedule", "compile"}) {
    const bool endToEnd = std::string(what) == "compile";
    if (endToEnd && compile.empty()) {
      std::printf("compile   (skipped: pass --compile PATH_TO_tactus-compile)\n");
      continue;
    }
    for (std::uint32_t n : sizes) {
      const tactus::bench::GenModel model = tactus::bench::generateModel(n, 1);
      std::uint64_t instances = 0;
      for (const auto& r : model.runnables) instances += tactus::bench::GenModel::kFrames[r.epoch];
      Run run;
      if (endToEnd) {
        const std::string base = (dir / ("graph" + std::to_string(n))).string();
        std::ofstream(base + ".yaml", std::ios::binary) << tactus::bench::modelYaml(model);
        run = measure([] { return 0; },
                      {compile, "-i", base + ".yaml", "-o", base + ".tsched", "-k", base + ".json", "-t", "0"});
      } else {
        run = measure([n] { return scheduleChild(n); });
      }
      const double target = targetSeconds(n);
      const bool met = run.ok && run.seconds <= target;
      allMet = allMet && met;
      std::printf("%-9s %8zu %10llu %9.3fs %8.2fs %9.1fMiB %14.2f  %s\n", what, model.runnables.size(),
                  static_cast<unsigned long long>(instances), run.seconds, target,
                  static_cast<double>(run.maxRssKiB) / 1024.0,
                  static_cast<double>(run.maxRssKiB) / static_cast<double>(model.runnables.size()),
                  !run.ok ? "FAILED" : (met ? "ok" : "SLOWER THAN TARGET"));
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return allMet ? 0 : 1;
}
