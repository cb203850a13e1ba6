// runtime-density-bench: the runtime's cost as the number of client processes per core grows.
// A graph of 2K clients, each a chain of runnables with 20% dependencies on runnables of other
// clients, every runnable free to go on CPU0 or CPU1 (the compiler chooses), so that about K
// workers (of K processes) share each core, and the plan says which of them runs when (the table
// shows the plan's workers per core). For K = 1, 2, 4, 8, 16, three runnable lengths (an empty
// runnable, about 0.2 us; a 20 us and a 2 ms busy wait) and both worker policies (SCHED_OTHER,
// SCHED_FIFO 10) it runs the real master and 2K real client processes and prints the span of an
// iteration (latest end - earliest start, from the event log): median and p99, against the plan,
// per runnable, and against the same order run bare (bench/support/bare_plan.hpp) twice: in one
// process per core (what the order costs without any process switch) and in the run's own
// processes, a futex hand-off between them on a core (the least any runtime can pay for the
// process switches the plan makes: the machine's floor); the iterations whose span exceeded the
// plan; the CPU time the clients spent per iteration beyond their runnables (a waiting strategy
// that burns the cores shows here); and the hand-offs by kind (on a core within one worker,
// between workers on a core, across cores).
//
// usage: runtime-density-bench --compile TACTUS_COMPILE --master TACTUS_MASTER
//        [--per-core 1,2,4,8,16] [--lengths empty,20us,2ms] [--policies other,fifo]
//        [--iterations N] [--fusion DURATION] [--no-grouping] [--quick] [--check]
// --fusion: tactus-compile -wt DURATION (runnable fusion: fewer process switches in the plan).
// --no-grouping: tactus-compile --no-grouping (the search's order on every core, as before client
// grouping: the figures without it, in the same build).
// --quick: 1 and 4 clients per core, empty runnables, 5 iterations (the code keeps working).
// --check: 4 clients per core, empty runnables of 50 us WCET (plan 10 ms), 20 iterations, both
// policies (SCHED_FIFO where the limits allow it); exits 1 when any iteration's span exceeds its
// plan (an integration test).
// The clients are this program itself (forked children that link libtactus).
#include <sched.h>
#include <tactus/client.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "bare_plan.hpp"
#include "bench_support.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"

namespace tb = tactus::bench;

namespace {

// One runnable length of the sweep and the graph shape that goes with it: `runnables` in all, a
// WCET each, a period that holds the plan with room to spare.
struct Length {
  std::string name;
  std::int64_t busyNs = 0;  // 0: an empty runnable
  int runnables = 0;
  std::int64_t wcetNs = 0;
  std::int64_t periodNs = 0;
};

const std::vector<Length>& allLengths() {
  static const std::vector<Length> lengths{
      {"empty", 0, 400, 20'000, 20'000'000},          // plan 4 ms in 20 ms: the issue's graph
      {"20us", 20'000, 200, 40'000, 20'000'000},      // plan 4 ms
      {"2ms", 2'000'000, 32, 2'500'000, 100'000'000}  // plan 40 ms
  };
  return lengths;
}

struct Options {
  std::string compile, master;
  std::vector<int> perCore{1, 2, 4, 8, 16};  // clients per core: 2K clients on the two cores
  std::vector<Length> lengths = allLengths();
  std::vector<std::string> policies{"other", "fifo"};
  int iterations = 40;
  bool check = false;
  std::string fusion;       // tactus-compile -wt (runnable fusion), empty: the compiler's default
  bool noGrouping = false;  // tactus-compile --no-grouping
};

// The graph: clients C0..C<n-1>, each a chain R<c>_0 -> R<c>_1 -> ...; about one runnable in five
// also depends on a runnable of another client placed earlier in its chain (so the graph has no
// cycle). A fixed seed: every run of the benchmark measures the same graph.
std::string densityYaml(int clients, const Length& length) {
  std::ostringstream y;
  y << "Version: 3.0.0\nDensity:\n  Identifier: 14\n  Resources:\n    CPU: [CPU0, CPU1]\n"
    << "  Hyperepochs:\n    - Main:\n        Epochs:\n          - Frame: {Period: " << length.periodNs
    << "ns}\n  Clients:\n";
  const int perClient = std::max(1, length.runnables / clients);
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  const auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  for (int c = 0; c < clients; ++c) {
    y << "    - C" << c << ":\n        Epochs:\n          - Main.Frame:\n              Runnables:\n";
    for (int k = 0; k < perClient; ++k) {
      y << "                - R" << c << "_" << k << ":\n                    WCET: " << length.wcetNs
        << "ns\n                    Resources: [CPU]\n";
      std::string deps;
      if (k > 0) deps = "C" + std::to_string(c) + ".R" + std::to_string(c) + "_" + std::to_string(k - 1);
      if (clients > 1 && k > 0 && next() % 5 == 0) {
        const int other = (c + 1 + static_cast<int>(next() % static_cast<std::uint32_t>(clients - 1))) % clients;
        const int at = static_cast<int>(next() % static_cast<std::uint32_t>(k));
        deps += ", C" + std::to_string(other) + ".R" + std::to_string(other) + "_" + std::to_string(at);
      }
      if (!deps.empty()) y << "                    Dependencies: [" << deps << "]\n";
    }
  }
  return y.str();
}

void empty(void*) {}

// A client process: registers every runnable of client `name` (busy-waiting `busyNs`, or empty)
// under worker policy `policy` and runs; writes its CPU time (ns) to `cpuPath`. Never returns.
[[noreturn]] void runClient(const std::string& name, std::int64_t busyNs, const std::string& policy,
                            const std::string& instance, const std::string& cpuPath) {
  static std::int64_t length = busyNs;
  setenv("TACTUS_WORKER_POLICY", policy == "fifo" ? "fifo:10" : "other", 1);
  tactus::InitOptions options;
  options.instance = instance;
  options.timeoutMs = 30'000;
  if (auto ok = tactus::init(name, options); !ok) {
    std::fprintf(stderr, "density client %s: %s\n", name.c_str(), ok.error().message.c_str());
    _exit(3);
  }
  auto names = tactus::scheduledRunnables();
  if (!names) _exit(3);
  for (const std::string& n : *names)
    if (!tactus::registerRunnable(n, length > 0 ? tb::busyWaitFor : empty, &length)) _exit(4);
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();
  if (outcome.status != tactus::RunStatus::kFrameLimit)
    std::fprintf(stderr, "density client %s: %s: %s\n", name.c_str(), tactus::runStatusName(outcome.status),
                 outcome.message.c_str());
  std::ofstream(cpuPath) << tb::processCpuNs() << "\n";
  std::fflush(nullptr);
  _exit(outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 1);
}

// Whether this process may give a thread SCHED_FIFO 10 (root, or an RLIMIT_RTPRIO that allows it).
bool fifoAllowed() {
  sched_param param{};
  const int old = sched_getscheduler(0);
  sched_param oldParam{};
  sched_getparam(0, &oldParam);
  param.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) return false;
  sched_setscheduler(0, old, &oldParam);
  return true;
}

struct Row {
  std::int64_t planNs = 0;
  int runnables = 0;
  double workersPerCore = 0;
  std::vector<std::int64_t> spans;  // per iteration
  double bareP50 = 0;               // the order run bare in one process per core
  double processesP50 = 0;          // the order run bare in the run's processes (futex hand-offs between them)
  double cpuPerIterationNs = 0;     // the clients' CPU beyond their runnables, per iteration
  int overPlan = 0;                 // iterations whose span exceeded the plan
  // Hand-offs (a run's start - the latest end of what it waited for), by where that end was: the
  // run before it on its core in the same worker, the run before it on its core in another
  // worker (another process's thread on the core), a dependency on the other core.
  std::vector<std::int64_t> sameWorker, otherWorker, crossCore;
  std::string error;
};

// Compiles the graph of `clients` clients at `length`; the schedule, or an error.
std::optional<tactus::Schedule> compileGraph(const Options& o, const std::string& dir, int clients,
                                             const Length& length, std::string& error) {
  std::ofstream(dir + "/g.yaml") << densityYaml(clients, length);
  const std::string sched = dir + "/g.tsched";
  std::vector<std::string> argv{o.compile, "-i", dir + "/g.yaml", "-o", sched};
  if (!o.fusion.empty()) argv.insert(argv.end(), {"-wt", o.fusion});
  if (o.noGrouping) argv.emplace_back("--no-grouping");
  const int rc = tb::waitUntil(tb::spawn(argv, dir + "/compile.out"), tb::monotonicNs() + 120'000'000'000LL);
  if (rc != 0) {
    error = "tactus-compile failed:\n" + tb::readText(dir + "/compile.out");
    return std::nullopt;
  }
  auto s = tactus::loadScheduleFile(sched);
  if (!s) {
    error = s.error().message;
    return std::nullopt;
  }
  return std::move(*s);
}

// The row's hand-offs from the event log's runs.
void handOffs(const tactus::Schedule& schedule, const tactus::RunPlan& plan, const tactus::EventLog& events, Row& r) {
  const tb::Timelines timelines(schedule);
  const std::size_t count = schedule.instances.size();
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> runs;  // iteration: per instance
  for (const tactus::EventRecord& e : events.records) {
    if (e.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun) || e.instance >= count) continue;
    auto& v = runs[e.iteration];
    v.resize(count);
    v[e.instance] = {e.startNs, e.endNs};
  }
  for (const auto& [iteration, v] : runs) {
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t previous = timelines.previous[i];
      std::int64_t ready = previous != UINT32_MAX ? v[previous].second : 0;
      int where = previous != UINT32_MAX && plan.instanceWorker[tactus::InstanceId{previous}] !=
                                                plan.instanceWorker[tactus::InstanceId{i}]
                      ? 1
                      : 0;
      for (const tactus::InstanceId d : schedule.instances[tactus::InstanceId{i}].dependencies) {
        if (v[index(d)].second <= ready) continue;
        ready = v[index(d)].second;
        where = timelines.of[index(d)] != timelines.of[i]                              ? 2
                : plan.instanceWorker[d] != plan.instanceWorker[tactus::InstanceId{i}] ? 1
                                                                                       : 0;
      }
      if (ready <= 0 || v[i].first == 0) continue;
      (where == 0 ? r.sameWorker : where == 1 ? r.otherWorker : r.crossCore).push_back(v[i].first - ready);
    }
  }
}

// Runs the master and the clients once; fills the row's spans, CPU and over-plan count.
void runTactus(const Options& o, const std::string& dir, const tactus::Schedule& schedule, const tactus::RunPlan& plan,
               int clients, const Length& length, const std::string& policy, Row& r) {
  const std::string sched = dir + "/g.tsched", log = dir + "/g.tlog";
  std::filesystem::remove(log);
  const std::string instance = "density_" + std::to_string(getpid());
  const pid_t master = tb::spawn({o.master, "-s", sched, "-e", std::to_string(o.iterations), "-l", log, "-D", instance},
                                 dir + "/master.out");
  std::fflush(nullptr);
  std::vector<pid_t> pids{master};
  for (int c = 0; c < clients; ++c) {
    const pid_t child = fork();
    if (child == 0) {
      std::freopen((dir + "/client" + std::to_string(c) + ".out").c_str(), "w", stderr);
      runClient("C" + std::to_string(c), length.busyNs, policy, instance, dir + "/cpu" + std::to_string(c) + ".txt");
    }
    if (child < 0) {
      r.error = std::string("cannot start client C") + std::to_string(c) + ": fork: " + std::strerror(errno);
      kill(master, SIGTERM);
      tb::waitAll(pids, tb::monotonicNs() + 10'000'000'000LL);
      return;
    }
    pids.push_back(child);
  }
  const std::vector<int> status = tb::waitAll(pids, tb::monotonicNs() + 240'000'000'000LL);
  for (std::size_t k = 0; k < status.size(); ++k) {
    if (status[k] == 0) continue;
    r.error = (k == 0 ? std::string("the master") : "client C" + std::to_string(k - 1)) + " ended with " +
              std::to_string(status[k]) + ":\n" + tb::readText(dir + "/master.out") +
              (k > 0 ? tb::readText(dir + "/client" + std::to_string(k - 1) + ".out") : "");
    return;
  }
  auto events = tactus::readEventLog(log);
  if (!events) {
    r.error = events.error().message;
    return;
  }
  std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> span;  // iteration: earliest start, latest end
  std::map<std::uint32_t, std::size_t> runs;
  double runTime = 0;
  for (const tactus::EventRecord& e : events->records) {
    if (e.kind != static_cast<std::uint16_t>(tactus::EventKind::kRun)) continue;
    auto [it, fresh] = span.try_emplace(e.iteration, e.startNs, e.endNs);
    if (!fresh) it->second = {std::min(it->second.first, e.startNs), std::max(it->second.second, e.endNs)};
    ++runs[e.iteration];
    runTime += static_cast<double>(e.endNs - e.startNs);
  }
  handOffs(schedule, plan, *events, r);
  for (const auto& [iteration, s] : span) {
    if (runs[iteration] != schedule.instances.size()) {
      r.error = "iteration " + std::to_string(iteration) + " has " + std::to_string(runs[iteration]) + " runs of " +
                std::to_string(schedule.instances.size());
      return;
    }
    r.spans.push_back(s.second - s.first);
    if (s.second - s.first > r.planNs) ++r.overPlan;
  }
  if (static_cast<int>(r.spans.size()) != o.iterations) {
    r.error = "the log has " + std::to_string(r.spans.size()) + " iterations of " + std::to_string(o.iterations);
    return;
  }
  double cpu = 0;
  for (int c = 0; c < clients; ++c) cpu += std::atof(tb::readText(dir + "/cpu" + std::to_string(c) + ".txt").c_str());
  r.cpuPerIterationNs = (cpu - runTime) / o.iterations;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: runtime-density-bench --compile TACTUS_COMPILE --master TACTUS_MASTER [--per-core 1,2,4,8,16] "
               "[--lengths empty,20us,2ms] [--policies other,fifo] [--iterations N] [--fusion DURATION] "
               "[--no-grouping] [--quick] [--check]\n");
  return 2;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--compile") o.compile = value();
    else if (a == "--master") o.master = value();
    else if (a == "--iterations") o.iterations = std::atoi(value().c_str());
    else if (a == "--fusion") o.fusion = value();
    else if (a == "--no-grouping") o.noGrouping = true;
    else if (a == "--per-core") {
      o.perCore.clear();
      for (const std::string& c : splitList(value())) o.perCore.push_back(std::atoi(c.c_str()));
    } else if (a == "--lengths") {
      o.lengths.clear();
      for (const std::string& name : splitList(value())) {
        const auto found =
            std::find_if(allLengths().begin(), allLengths().end(), [&](const Length& l) { return l.name == name; });
        if (found == allLengths().end()) {
          std::fprintf(stderr, "runtime-density-bench: --lengths: '%s' is not one of empty, 20us, 2ms\n", name.c_str());
          return false;
        }
        o.lengths.push_back(*found);
      }
    } else if (a == "--policies") {
      o.policies = splitList(value());
      for (const std::string& p : o.policies)
        if (p != "other" && p != "fifo") {
          std::fprintf(stderr, "runtime-density-bench: --policies: '%s' is not 'other' or 'fifo'\n", p.c_str());
          return false;
        }
    } else if (a == "--quick") {
      o.perCore = {1, 4};
      o.lengths = {allLengths()[0]};
      o.iterations = 5;
    } else if (a == "--check") {
      o.check = true;
      o.perCore = {4};
      // Empty runnables of 50 us WCET: plan 10 ms, so that the plan holds what this order costs
      // the machine itself with four processes per core (a process switch per hand-off: about 3.7
      // ms on the 2-core CI VM, bareRunProcesses), with room; the cliff this guards against was
      // 25-53 ms.
      o.lengths = {Length{"empty", 0, 400, 50'000, 20'000'000}};
      o.iterations = 20;
    } else {
      return false;
    }
  }
  const bool clientsOk =
      !o.perCore.empty() && std::all_of(o.perCore.begin(), o.perCore.end(), [](int c) { return c >= 1 && c <= 32; });
  return !o.compile.empty() && !o.master.empty() && clientsOk && !o.lengths.empty() && !o.policies.empty() &&
         o.iterations >= 1 && o.iterations <= 10'000;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  if (!parse(argc, argv, o)) return usage();
  if (!tb::haveCores01()) {
    std::printf("runtime-density-bench: needs cores 0 and 1, skipped\n");
    return 77;
  }
  if (std::find(o.policies.begin(), o.policies.end(), "fifo") != o.policies.end() && !fifoAllowed()) {
    std::printf("runtime-density-bench: SCHED_FIFO is not permitted here (RLIMIT_RTPRIO): SCHED_OTHER only\n");
    o.policies.erase(std::remove(o.policies.begin(), o.policies.end(), "fifo"), o.policies.end());
    if (o.policies.empty()) return 77;
  }
  tb::TempDir dir;
  if (dir.path().empty()) {
    std::fprintf(stderr, "runtime-density-bench: cannot make a temporary directory\n");
    return 1;
  }
  std::printf(
      "runtime-density-bench: 2K clients (K per core), each a chain with 20%% cross-client dependencies, on CPU0 and "
      "CPU1; %d "
      "iterations\n(span: latest end - earliest start of an iteration; run us: median span / runnables; bare: the "
      "same order in one process per core, no runtime; procs: the same order in the run's processes, a futex "
      "hand-off between them on a core, no runtime: the machine's floor; cpu/iter: the clients' CPU beyond their "
      "runnables, per iteration, us)\n",
      o.iterations);
  std::printf("%-6s %-7s %5s %5s %9s %9s %9s %8s %8s %9s %9s %9s %10s %6s\n", "length", "clients", "w/core", "runs",
              "plan us", "span p50", "span p99", "p50/plan", "run us", "bare p50", "procs p50", "p50/procs", "cpu/iter",
              ">plan");
  int failures = 0;
  for (const Length& length : o.lengths) {
    for (const int perCore : o.perCore) {
      const int clients = 2 * perCore;
      std::string error;
      const auto schedule = compileGraph(o, dir.path(), clients, length, error);
      if (!schedule) {
        std::fprintf(stderr, "runtime-density-bench: %d clients, %s: %s\n", clients, length.name.c_str(),
                     error.c_str());
        return 1;
      }
      Row base;
      base.planNs = tb::planLength(*schedule);
      base.runnables = static_cast<int>(schedule->instances.size());
      const auto plan = tactus::makeRunPlan(*schedule);
      if (!plan) {
        std::fprintf(stderr, "runtime-density-bench: %d clients, %s: %s\n", clients, length.name.c_str(),
                     plan.error().message.c_str());
        return 1;
      }
      std::map<std::uint32_t, int> perResource;
      for (const tactus::WorkerPlan& w : plan->workers) ++perResource[index(w.resource)];
      base.workersPerCore = static_cast<double>(plan->workers.size()) / static_cast<double>(perResource.size());
      std::vector<std::int64_t> bareSpans =
          tb::bareRun(*schedule, o.iterations, length.periodNs, [&](tactus::InstanceId) {
            return length.busyNs;
          }).makespans;
      base.bareP50 = bareSpans.empty() ? 0 : tb::percentiles(bareSpans).p50;
      std::vector<std::int64_t> processSpans = tb::bareRunProcesses(*schedule, o.iterations, length.periodNs,
                                                                    [&](tactus::InstanceId) { return length.busyNs; });
      base.processesP50 = processSpans.empty() ? 0 : tb::percentiles(processSpans).p50;
      for (const std::string& policy : o.policies) {
        Row r = base;
        runTactus(o, dir.path(), *schedule, *plan, clients, length, policy, r);
        if (!r.error.empty()) {
          std::fprintf(stderr, "runtime-density-bench: %d clients, %s, %s: %s\n", clients, length.name.c_str(),
                       policy.c_str(), r.error.c_str());
          return 1;
        }
        const tb::Percentiles p = tb::percentiles(r.spans);
        std::printf("%-6s %-7s %5.1f %5d %9.1f %9.1f %9.1f %8.3f %8.2f %9.1f %9.1f %9.2f %10.1f %3d/%d\n",
                    length.name.c_str(), (std::to_string(clients) + (policy == "fifo" ? " FIFO" : " OTH")).c_str(),
                    r.workersPerCore, r.runnables, static_cast<double>(r.planNs) / 1e3, p.p50 / 1e3, p.p99 / 1e3,
                    p.p50 / static_cast<double>(r.planNs), p.p50 / 1e3 / r.runnables, r.bareP50 / 1e3,
                    r.processesP50 / 1e3, r.processesP50 > 0 ? p.p50 / r.processesP50 : 0.0, r.cpuPerIterationNs / 1e3,
                    r.overPlan, o.iterations);
        const auto figure = [](std::vector<std::int64_t>& values) {
          const tb::Percentiles q = tb::percentiles(values);
          char text[64];
          std::snprintf(text, sizeof text, "%zu: p50 %.1f p99 %.1f", q.count, q.p50 / 1e3, q.p99 / 1e3);
          return std::string(text);
        };
        std::printf("       hand-offs (us) on a core in one worker %s; between workers %s; across cores %s\n",
                    figure(r.sameWorker).c_str(), figure(r.otherWorker).c_str(), figure(r.crossCore).c_str());
        std::fflush(stdout);
        if (o.check && r.overPlan > 0) {
          std::printf(
              "FAIL: %d clients (%.1f workers per core), %s: %d of %d iterations took longer than the plan "
              "(%.1f us; p99 %.1f us, max %.1f us)\n",
              clients, r.workersPerCore, policy.c_str(), r.overPlan, o.iterations, static_cast<double>(r.planNs) / 1e3,
              p.p99 / 1e3, p.max / 1e3);
          ++failures;
        }
      }
    }
  }
  if (o.check && failures == 0) std::printf("OK: every iteration's span within its plan\n");
  return failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "runtime-density-bench: %s\n", e.what());
  return 1;
}
