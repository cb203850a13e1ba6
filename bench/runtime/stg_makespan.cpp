// stg-makespan: the runtime's cost with real runnable lengths. Runs Standard Task Graph Set graphs
// (50 tasks, rand0000.. from the STG data folder) as a user would: P = 2 CPUs, one client whose
// runnables busy-wait their WCET (processing time x one unit), N hyperepoch iterations; the
// makespan of an iteration is its latest end - earliest start in the event log. Prints per graph
// the plan (latest planned end - earliest planned start), the measured makespan's median and p99,
// (median - plan) per runnable, (median of makespan - replay) per runnable, where the replay is
// the plan re-run with the measured run lengths and no hand-off cost (so preemption of the
// busy-waiting runnables on a loaded machine is taken out), and the CPU time the client burns per
// iteration beyond its runnables' measured lengths (waiting: spins, wake-ups, bookkeeping; the
// start-up counts too), the spin time its workers logged per iteration (0 from a runtime that
// does not log it), and the plan run bare (bareRun: two pinned processes spinning on done
// words, no runtime) with tactus's (median - bare median) per runnable, the runtime's own cost
// apart from the machine's; per unit, for tactus and the bare run side by side, the mean, p50, p90
// and p99 of the hand-offs (a run's start - the latest end of its predecessors, graph and core
// order), apart on one core and across cores, and of how much longer than their WCET runs took.
// The means matter: a makespan adds hand-offs up, tails included.
//
// usage: stg-makespan --compile TACTUS_COMPILE --master TACTUS_MASTER [DATA_DIR]
//        [--units 1ms,100us,10us] [--graphs N] [--iterations N] [--quick]
// The client is this program itself (a forked child that links libtactus).
#include <sys/wait.h>
#include <tactus/client.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <sstream>

#include "bare_plan.hpp"
#include "bench_support.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"

namespace tb = tactus::bench;

namespace {

struct Options {
  std::string compile, master, data;
  std::vector<std::pair<std::string, std::int64_t>> units{{"1ms", 1'000'000}, {"100us", 100'000}, {"10us", 10'000}};
  int graphs = 10;
  int iterations = 10;
};

struct Task {
  std::int64_t time = 0;
  std::vector<int> preds;
};

// Reads an .stg file: n, then n+2 lines `id time npred preds...`; `#` lines end the data. Task 0
// and n+1 are the dummy entry and exit.
bool readStg(const std::string& path, std::vector<Task>& tasks) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') break;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rows.push_back(line);
  }
  if (rows.empty()) return false;
  const int n = std::atoi(rows[0].c_str());
  if (n < 0 || static_cast<int>(rows.size()) < n + 3) return false;
  tasks.assign(static_cast<std::size_t>(n) + 2, Task{});
  for (int i = 0; i < n + 2; ++i) {
    std::istringstream ls(rows[static_cast<std::size_t>(i) + 1]);
    int id = 0, np = 0;
    std::int64_t t = 0;
    ls >> id >> t >> np;
    if (!ls || id < 0 || id >= n + 2) return false;
    tasks[static_cast<std::size_t>(id)].time = t;
    for (int k = 0; k < np; ++k) {
      int p = 0;
      ls >> p;
      tasks[static_cast<std::size_t>(id)].preds.push_back(p);
    }
  }
  return true;
}

// The graph as STM YAML: client `stg`, CPU0 and CPU1, one epoch of `periodNs`, task i = runnable
// T<i> with WCET time x unit on either CPU; the dummy tasks are left out.
std::string stgYaml(const std::vector<Task>& tasks, std::int64_t unitNs, std::int64_t periodNs) {
  std::string y =
      "Version: 3.0.0\nStg:\n  Identifier: 13\n  Resources:\n    CPU: [CPU0, CPU1]\n"
      "  Hyperepochs:\n    - Main:\n        Epochs:\n          - Graph: {Period: " +
      std::to_string(periodNs) +
      "ns}\n  Clients:\n    - stg:\n        Epochs:\n"
      "          - Main.Graph:\n              Runnables:\n";
  const int n = static_cast<int>(tasks.size()) - 2;
  for (int i = 1; i <= n; ++i) {
    const Task& t = tasks[static_cast<std::size_t>(i)];
    y += "                - T" + std::to_string(i) +
         ":\n                    WCET: " + std::to_string(std::max<std::int64_t>(1, t.time * unitNs)) +
         "ns\n                    Resources: [CPU]\n";
    std::string deps;
    for (int p : t.preds) {
      if (p < 1 || p > n) continue;
      deps += (deps.empty() ? "" : ", ") + std::string("stg.T") + std::to_string(p);
    }
    if (!deps.empty()) y += "                    Dependencies: [" + deps + "]\n";
  }
  return y;
}

// The client process: registers T<i> busy-waiting time x unit and runs; writes its CPU time (ns)
// to `cpuPath`. Never returns.
[[noreturn]] void runClient(const std::vector<Task>& tasks, std::int64_t unitNs, const std::string& instance,
                            const std::string& cpuPath) {
  std::vector<std::int64_t> lengths(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) lengths[i] = tasks[i].time * unitNs;
  tactus::InitOptions options;
  options.instance = instance;
  options.timeoutMs = 30'000;
  if (!tactus::init("stg", options)) _exit(3);
  for (std::size_t i = 1; i + 1 < tasks.size(); ++i) {
    if (!tactus::registerRunnable("T" + std::to_string(i), tb::busyWaitFor, &lengths[i])) _exit(4);
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();
  std::ofstream(cpuPath) << tb::processCpuNs() << "\n";
  std::fflush(nullptr);
  _exit(outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 1);
}

double mean(const std::vector<std::int64_t>& values) {
  double sum = 0;
  for (const std::int64_t v : values) sum += static_cast<double>(v);
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

using tb::BareRun;
using tb::childPreemptions;
using tb::HandOffs;
using tb::Timelines;

struct GraphResult {
  std::int64_t planNs = 0;
  std::vector<std::int64_t> makespans;   // per iteration
  BareRun bare;                          // the plan run bare (bareRun)
  std::vector<std::int64_t> replayGaps;  // per iteration: makespan - the plan replayed with the measured lengths
  HandOffs handOffs;
  std::vector<std::int64_t> stretches;  // per run: measured length - WCET
  double overheadCpuNs = 0;             // client CPU time beyond its runnables, per iteration
  double spinNs = 0;                    // spin time the workers logged, per iteration
  long preemptions = 0;                 // the client's involuntary context switches (its workers)
  int runnables = 0;
  std::string error;
};

bool compile(const Options& o, const std::string& dir, const std::string& yaml, const std::string& sched,
             std::string& error) {
  std::ofstream(dir + "/g.yaml") << yaml;
  const int rc = tb::waitUntil(tb::spawn({o.compile, "-i", dir + "/g.yaml", "-o", sched}, dir + "/compile.out"),
                               tb::monotonicNs() + 120'000'000'000LL);
  if (rc != 0) error = "tactus-compile failed:\n" + tb::readText(dir + "/compile.out");
  return rc == 0;
}

GraphResult runGraph(const Options& o, const std::string& dir, const std::vector<Task>& tasks, std::int64_t unitNs) {
  GraphResult r;
  r.runnables = static_cast<int>(tasks.size()) - 2;
  const std::string sched = dir + "/g.tsched", log = dir + "/g.tlog";
  // First with a period every placement fits in (the sum of all WCETs), then with the plan plus
  // a margin, so that iterations follow each other closely.
  std::int64_t total = 0;
  for (const Task& t : tasks) total += t.time * unitNs;
  if (!compile(o, dir, stgYaml(tasks, unitNs, total + 1'000'000), sched, r.error)) return r;
  auto first = tactus::loadScheduleFile(sched);
  if (!first) {
    r.error = first.error().message;
    return r;
  }
  r.planNs = tb::planLength(*first);
  const std::int64_t period = r.planNs + std::max<std::int64_t>(r.planNs / 5, 500'000);
  if (!compile(o, dir, stgYaml(tasks, unitNs, period), sched, r.error)) return r;
  auto schedule = tactus::loadScheduleFile(sched);
  if (!schedule) {
    r.error = schedule.error().message;
    return r;
  }
  r.planNs = tb::planLength(*schedule);
  r.bare = tb::bareRun(*schedule, o.iterations, period, [&](tactus::InstanceId i) {
    return schedule->instances[i].endNs - schedule->instances[i].startNs;  // busy-waiting its WCET, as the client
  });
  if (r.bare.makespans.empty()) {
    r.error = "the bare run of the plan failed";
    return r;
  }
  std::filesystem::remove(log);
  const std::string instance = "stgms_" + std::to_string(getpid());
  const pid_t master = tb::spawn({o.master, "-s", sched, "-e", std::to_string(o.iterations), "-l", log, "-D", instance},
                                 dir + "/master.out");
  std::fflush(nullptr);
  const long preemptedBefore = childPreemptions();  // the master is reaped after the client
  const pid_t client = fork();
  if (client == 0) runClient(tasks, unitNs, instance, dir + "/cpu.txt");
  const int clientRc = tb::waitUntil(client, tb::monotonicNs() + 300'000'000'000LL);
  r.preemptions = childPreemptions() - preemptedBefore;
  if (clientRc != 0) kill(master, SIGTERM);
  const int masterRc = tb::waitUntil(master, tb::monotonicNs() + 30'000'000'000LL);
  if (clientRc != 0 || masterRc != 0) {
    r.error = "the run failed (master " + std::to_string(masterRc) + ", client " + std::to_string(clientRc) + "):\n" +
              tb::readText(dir + "/master.out");
    return r;
  }
  auto events = tactus::readEventLog(log);
  if (!events) {
    r.error = events.error().message;
    return r;
  }
  // Per iteration, per instance: measured start and end.
  const std::size_t count = schedule->instances.size();
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> runs;
  for (const tactus::EventRecord& e : events->records) {
    if (e.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun) || e.instance >= count) continue;
    auto& v = runs[e.iteration];
    v.resize(count);
    v[e.instance] = {e.startNs, e.endNs};
  }
  // The replay: every instance starts as soon as its dependencies and its resource predecessor
  // have ended, and lasts as long as it was measured to, with no hand-off cost; what the measured
  // makespan exceeds it by is the runtime's (or the machine's) doing between runnables, while
  // preemption inside a runnable lengthens both.
  std::vector<std::uint32_t> order(count);
  for (std::uint32_t i = 0; i < count; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return schedule->instances[a].startNs != schedule->instances[b].startNs
               ? schedule->instances[a].startNs < schedule->instances[b].startNs
               : a < b;
  });
  const Timelines timelines(*schedule);
  const std::vector<std::uint32_t>& resourcePrev = timelines.previous;
  for (const auto& [iteration, v] : runs) {
    std::int64_t lo = INT64_MAX, hi = 0;
    for (const auto& [start, end] : v) {
      if (end == 0) {
        r.error = "iteration " + std::to_string(iteration) + " lacks a run";
        return r;
      }
      lo = std::min(lo, start);
      hi = std::max(hi, end);
    }
    std::vector<std::int64_t> replayEnd(count, 0);
    std::int64_t replay = 0;
    for (const std::uint32_t i : order) {
      std::int64_t start = resourcePrev[i] != UINT32_MAX ? replayEnd[resourcePrev[i]] : 0;
      std::int64_t ready = resourcePrev[i] != UINT32_MAX ? v[resourcePrev[i]].second : 0;
      bool cross = false;
      for (const tactus::InstanceId d : schedule->instances[i].dependencies) {
        start = std::max(start, replayEnd[index(d)]);
        if (v[index(d)].second <= ready) continue;
        ready = v[index(d)].second;
        cross = timelines.of[index(d)] != timelines.of[i];
      }
      if (ready > 0) r.handOffs.add(v[i].first - ready, cross);
      r.stretches.push_back((v[i].second - v[i].first) -
                            (schedule->instances[i].endNs - schedule->instances[i].startNs));
      replayEnd[i] = start + (v[i].second - v[i].first);
      replay = std::max(replay, replayEnd[i]);
    }
    r.makespans.push_back(hi - lo);
    r.replayGaps.push_back(hi - lo - replay);
  }
  if (static_cast<int>(r.makespans.size()) != o.iterations) {
    r.error = "the log has " + std::to_string(r.makespans.size()) + " iterations";
    return r;
  }
  // The client's CPU time beyond its runnables' measured lengths (which a preempted runnable
  // stretches: then this underestimates), and the spin time its workers logged.
  double runTime = 0;
  for (const auto& [iteration, v] : runs) {
    for (const auto& [start, end] : v) runTime += static_cast<double>(end - start);
  }
  r.overheadCpuNs = (std::atof(tb::readText(dir + "/cpu.txt").c_str()) - runTime) / o.iterations;
  for (const tactus::EventRecord& e : events->records) {
    if (e.kind == static_cast<std::uint16_t>(tactus::EventKind::kRun))
      r.spinNs += static_cast<double>(e.detail * tactus::kSpinUnitNs);
  }
  r.spinNs /= o.iterations;
  return r;
}

std::vector<std::pair<std::string, std::int64_t>> parseUnits(const std::string& text) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  std::stringstream ss(text);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(cell.c_str(), &end, 10);
    const std::string unit = end != nullptr ? end : "";
    const std::int64_t scale = unit == "ms" ? 1'000'000 : unit == "us" ? 1'000 : unit == "ns" ? 1 : 0;
    if (v <= 0 || scale == 0) return {};
    out.emplace_back(cell, v * scale);
  }
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: stg-makespan --compile TACTUS_COMPILE --master TACTUS_MASTER [DATA_DIR] "
               "[--units 1ms,100us,10us] [--graphs N] [--iterations N] [--quick]\n");
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
    else if (a == "--units") o.units = parseUnits(value());
    else if (a == "--graphs") o.graphs = std::atoi(value().c_str());
    else if (a == "--iterations") o.iterations = std::atoi(value().c_str());
    else if (a == "--quick") {
      o.graphs = 1;
      o.iterations = 3;
      o.units = {{"100us", 100'000}};
    } else if (!a.empty() && a[0] != '-') o.data = a;
    else return usage();
  }
  if (o.compile.empty() || o.master.empty() || o.units.empty() || o.graphs < 1 || o.graphs > 180 || o.iterations < 1 ||
      o.iterations > 10'000)
    return usage();
  if (o.data.empty() || !std::filesystem::is_directory(o.data + "/graphs")) {
    std::printf("stg-makespan: no STG data at '%s', skipped\n", o.data.c_str());
    return 77;
  }
  if (!tb::haveCores01()) {
    std::printf("stg-makespan: needs cores 0 and 1, skipped\n");
    return 77;
  }
  tb::TempDir dir;
  if (dir.path().empty()) {
    std::fprintf(stderr, "stg-makespan: cannot make a temporary directory\n");
    return 1;
  }
  std::printf("stg-makespan: %s, P = 2, %d iterations per graph (ns; over = (median - plan) / runnables)\n",
              o.data.c_str(), o.iterations);
  for (const auto& [unitName, unitNs] : o.units) {
    std::printf("unit %s\n  %-9s %12s %12s %12s %10s %12s %12s %12s %12s %12s\n", unitName.c_str(), "graph", "plan",
                "median", "p99", "over/run", "replay/run", "cpu/iter", "spin/iter", "bare", "bare/run");
    double sumOver = 0, sumCpu = 0, sumReplay = 0, sumBare = 0, sumBareOver = 0, preemptions = 0, barePreemptions = 0;
    HandOffs handOffs, bareHandOffs;
    std::vector<std::int64_t> stretches, bareStretches;
    int rows = 0;
    for (int g = 0; g < o.graphs; ++g) {
      char name[32];
      std::snprintf(name, sizeof name, "rand%04d", g);
      std::vector<Task> tasks;
      if (!readStg(o.data + "/graphs/" + name + ".stg", tasks)) {
        std::fprintf(stderr, "stg-makespan: %s/graphs/%s.stg: cannot read\n", o.data.c_str(), name);
        return 1;
      }
      GraphResult r = runGraph(o, dir.path(), tasks, unitNs);
      if (!r.error.empty()) {
        std::fprintf(stderr, "stg-makespan: %s: %s\n", name, r.error.c_str());
        return 1;
      }
      const tb::Percentiles p = tb::percentiles(r.makespans);
      const double over = (p.p50 - static_cast<double>(r.planNs)) / r.runnables;
      const double replay = tb::percentiles(r.replayGaps).p50 / r.runnables;
      // The bare run's median, and tactus's median over it per runnable: the runtime's own cost.
      const double bare = tb::percentiles(r.bare.makespans).p50;
      const double overBare = (p.p50 - bare) / r.runnables;
      std::printf("  %-9s %12lld %12.0f %12.0f %10.0f %12.0f %12.0f %12.0f %12.0f %12.0f\n", name,
                  static_cast<long long>(r.planNs), p.p50, p.p99, over, replay, r.overheadCpuNs, r.spinNs, bare,
                  overBare);
      sumBare += (bare - static_cast<double>(r.planNs)) / r.runnables;
      sumBareOver += overBare;
      sumOver += over;
      sumReplay += replay;
      for (const bool cross : {false, true}) {
        for (const std::int64_t v : cross ? r.handOffs.crossCore : r.handOffs.sameCore) handOffs.add(v, cross);
        for (const std::int64_t v : cross ? r.bare.handOffs.crossCore : r.bare.handOffs.sameCore)
          bareHandOffs.add(v, cross);
      }
      stretches.insert(stretches.end(), r.stretches.begin(), r.stretches.end());
      bareStretches.insert(bareStretches.end(), r.bare.stretches.begin(), r.bare.stretches.end());
      sumCpu += r.overheadCpuNs;
      preemptions += static_cast<double>(r.preemptions) / o.iterations;
      barePreemptions += static_cast<double>(r.bare.preemptions) / o.iterations;
      ++rows;
    }
    std::printf(
        "  mean (makespan - plan) per runnable %.0f ns (%.0f ns per DAG); (makespan - replay) per runnable %.0f "
        "ns; client CPU beyond its runnables %.0f ns per iteration\n",
        sumOver / rows, sumOver / rows * 50, sumReplay / rows, sumCpu / rows);
    std::printf(
        "  the plan run bare (no runtime, spinning): (bare - plan) per runnable %.0f ns; tactus (makespan - bare) per "
        "runnable %.0f ns (%.0f ns per DAG)\n",
        sumBare / rows, sumBareOver / rows, sumBareOver / rows * 50);
    // Every time something else takes a worker's core (tactus's own threads, the harness, the
    // machine) the worker loses its time there and its caches.
    std::printf("  workers preempted per iteration (involuntary context switches): tactus %.1f, bare %.1f\n",
                preemptions / rows, barePreemptions / rows);
    // The same hand-off and stretch figures for tactus and for the bare run, side by side.
    const auto line = [](const char* what, std::vector<std::int64_t>& tactusValues,
                         std::vector<std::int64_t>& bareValues) {
      const tb::Percentiles t = tb::percentiles(tactusValues);
      const tb::Percentiles b = tb::percentiles(bareValues);
      std::printf(
          "  %s (%zu):\n    tactus mean %.0f ns  p50 %.0f ns  p90 %.0f ns  p99 %.0f ns\n    bare   mean %.0f ns  p50 "
          "%.0f "
          "ns  p90 %.0f ns  p99 %.0f ns\n",
          what, t.count, mean(tactusValues), t.p50, tb::percentileOfSorted(tactusValues, 0.9), t.p99, mean(bareValues),
          b.p50, tb::percentileOfSorted(bareValues, 0.9), b.p99);
    };
    line("hand-offs on one core, start - the latest end of its predecessors there", handOffs.sameCore,
         bareHandOffs.sameCore);
    line("hand-offs across cores, start - the latest end of its predecessors, on the other core", handOffs.crossCore,
         bareHandOffs.crossCore);
    line("runs longer than their WCET (clock reads, calls, preemption inside a runnable)", stretches, bareStretches);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stg-makespan: %s\n", e.what());
  return 1;
}
