// GPU engine tests: the real tactus-master and real client processes (tactus-gpu-test-client)
// whose CUDA engine runs on the CUDA stand-in (or, with TACTUS_GPU_CLIENT pointing at the real
// client, on a GPU). Order is checked from the master's event log and from the work's own stamps.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "manager_waits.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/manager.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 30'000;

std::string clientProgram() {
  const char* env = std::getenv("TACTUS_GPU_CLIENT");
  return env != nullptr && *env != '\0' ? std::string(env) : buildPath("tests/gpu/tactus-gpu-test-client");
}

struct Work {
  std::int64_t start = 0, end = 0;
};

// Traces per client: (runnable name, iteration) -> the work's stamps in start order (one per frame).
struct Trace {
  std::string clock;
  std::map<std::pair<std::string, std::uint64_t>, std::vector<Work>> work;
  std::int64_t clockErrorNs = 0;  // the client's engine: how far its logged GPU-side times may be off
};

// `onlySchedule`: the work of that schedule's submitters only (a managed run's trace has several).
Trace readTrace(const std::string& path, std::uint32_t onlySchedule = kNone) {
  Trace t;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# clock ", 0) == 0) {
      t.clock = line.substr(8);
      continue;
    }
    std::istringstream ls(line);
    std::string name;
    std::uint64_t it = 0;
    Work w;
    std::uint32_t schedule = 0;
    if (!(ls >> name >> it >> w.start >> w.end >> schedule)) continue;
    if (onlySchedule == kNone || schedule == onlySchedule) t.work[{name, it}].push_back(w);
  }
  for (auto& [key, v] : t.work) {
    std::sort(v.begin(), v.end(), [](const Work& a, const Work& b) { return a.start < b.start; });
  }
  return t;
}

// The stand-in's event table name for one run: `<prefix>_<instance>`, the prefix being the
// TACTUS_CUDA_STANDIN_TABLE this test program was started with (or tactus_cuda_standin).
std::string standinTableFor(const std::string& instance) {
  static const std::string prefix = [] {
    const char* env = std::getenv("TACTUS_CUDA_STANDIN_TABLE");
    return std::string(env != nullptr && *env != '\0' ? env : "tactus_cuda_standin");
  }();
  return prefix + "_" + instance;
}

// The graph text as the mode `identifier` of a managed run: its Identifier replaced, its name
// (the top-level key after Version) suffixed with the identifier.
std::string asMode(std::string yaml, std::uint16_t identifier) {
  const std::size_t id = yaml.find("Identifier:");
  REQUIRE(id != std::string::npos);
  yaml.replace(id, yaml.find('\n', id) - id, "Identifier: " + std::to_string(identifier));
  const std::size_t name = yaml.find(":\n", yaml.find("\nVersion:") + 1);
  REQUIRE(name != std::string::npos);
  return yaml.insert(name, std::to_string(identifier));
}

// One run: its instance, scratch files and CUDA stand-in table (/dev/shm/<table>, named for this
// run, handed to the clients through TACTUS_CUDA_STANDIN_TABLE and removed with the run). With
// `modes`, the graph is compiled once per identifier and the master runs them under the schedule
// manager 'mgr' (-N).
struct GpuRun {
  std::string instance, dir, schedulePath, logPath, table;
  Schedule schedule;
  std::vector<Schedule> modes;      // a managed run's schedules
  mutable ChildProcesses children;  // ended (killed and reaped) first thing in ~GpuRun, also after a failed REQUIRE

  explicit GpuRun(const std::string& graph, const std::vector<std::uint16_t>& modeIds = {}) {
    instance = uniqueInstance("gpu");
    table = standinTableFor(instance);
    ::setenv("TACTUS_CUDA_STANDIN_TABLE", table.c_str(), 1);
    dir = scratchDir(instance);
    schedulePath = dir + "/schedule.tsched";
    logPath = dir + "/events.log";
    const std::string yaml = std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/tests/gpu/graphs/" + graph;
    if (modeIds.empty()) {
      schedule = compile(yaml, schedulePath);
      return;
    }
    schedulePath.clear();
    for (const std::uint16_t id : modeIds) {
      const std::string path = dir + "/mode" + std::to_string(id);
      std::ofstream(path + ".yaml") << asMode(readFile(yaml), id);
      modes.push_back(compile(path + ".yaml", path + ".tsched"));
      schedulePath += (schedulePath.empty() ? "" : ",") + path + ".tsched";
    }
  }
  Schedule compile(const std::string& yaml, const std::string& output) const {
    const pid_t c = children.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", output}, output + ".out");
    REQUIRE(waitFor(c, kWaitMs) == 0);
    auto s = loadScheduleFile(output);
    REQUIRE(s.has_value());
    return std::move(*s);
  }
  ~GpuRun() {
    manager::shutdown();
    children.killAll();
    for (const std::string& name : {instance, instance + ".schedule1", instance + ".manager"}) {
      if (segmentPresent(name)) ::unlink(("/dev/shm/tactus_" + name).c_str());
    }
    ::unlink(tablePath().c_str());
    if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  std::string tablePath() const { return "/dev/shm/" + table; }
  std::string out(const std::string& who) const { return dir + "/" + who + ".out"; }
  std::string trace(const std::string& who) const { return dir + "/" + who + ".trace"; }
  pid_t master(std::vector<std::string> extra) const {
    std::vector<std::string> argv{buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance, "-l", logPath};
    if (!modes.empty()) argv.insert(argv.end(), {"-N", "mgr", "-t", "15000000"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out("master"));
  }
  pid_t client(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{clientProgram(), "--name", name, "--instance", instance, "--trace", trace(name)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out(name));
  }
};

bool isSubmittee(const Schedule& s, InstanceId i) {
  return s.runnables[s.instances[i].runnable].kind == RunnableKind::kSubmittee;
}
bool isSubmitter(const Schedule& s, InstanceId i) {
  return s.runnables[s.instances[i].runnable].kind == RunnableKind::kSubmitter;
}

// Checks iterations [0, iterations): every instance ran once per iteration (submittees logged
// from the GPU side); every edge (dependencies and timelines) in order: GPU->GPU by the work's
// own stamps, everything else by the log. Edges between a submitter and a submittee are the
// engine's business (the submittee may start before its submitter's body returns, and the next
// submitter on a stream need not wait for the previous submittee's completion) and are checked
// through the GPU->GPU stamps instead. Returns "" or the first problem.
std::string checkGpuOrder(const Schedule& s, const EventLog& log, const std::map<std::string, Trace>& traces,
                          std::uint64_t iterations) {
  const std::size_t n = s.instances.size();
  std::vector<const EventRecord*> run(n * iterations, nullptr);
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    if (r.instance >= n || r.iteration >= iterations) return "record out of range";
    auto& slot = run[r.iteration * n + r.instance];
    if (slot)
      return "instance " + std::to_string(r.instance) + " logged twice in iteration " + std::to_string(r.iteration);
    slot = &r;
  }
  auto name = [&](InstanceId i) { return qualifiedName(s, s.instances[i].runnable); };
  // The work stamps of submittee i in iteration h: its submitter's trace entry of that frame.
  auto work = [&](InstanceId i, std::uint64_t h) -> const Work* {
    const RunnableInfo& r = s.runnables[s.instances[i].runnable];
    const RunnableInfo& sub = s.runnables[r.submittedBy];
    auto t = traces.find(s.clients[sub.client].name);
    if (t == traces.end()) return nullptr;
    auto w = t->second.work.find({sub.name, h});
    if (w == t->second.work.end()) return nullptr;
    std::uint32_t rank = 0;  // frames run in order: the k-th stamp belongs to the k-th frame
    for (InstanceId j : s.instances.ids()) {
      if (s.instances[j].runnable == s.instances[i].runnable && s.instances[j].frame < s.instances[i].frame) ++rank;
    }
    return rank < w->second.size() ? &w->second[rank] : nullptr;
  };
  auto edge = [&](InstanceId d, std::uint64_t hd, InstanceId i, std::uint64_t hi) -> std::string {
    const bool gd = isSubmittee(s, d), gi = isSubmittee(s, i);
    const std::string what =
        name(d) + " (iteration " + std::to_string(hd) + ") -> " + name(i) + " (iteration " + std::to_string(hi) + ")";
    if (gd && gi) {
      const Work* a = work(d, hd);
      const Work* b = work(i, hi);
      if (!a || !b) return "no work stamps for " + what;
      if (b->start < a->end) return "GPU work out of order: " + what;
      return "";
    }
    if (gi && s.runnables[s.instances[i].runnable].submittedBy == s.instances[d].runnable)
      return "";  // its own submitter
    if ((gd && isSubmitter(s, i)) || (isSubmitter(s, d) && gi)) {
      const auto& deps = s.instances[i].dependencies;
      if (std::find(deps.begin(), deps.end(), d) == deps.end()) return "";
    }
    if (gd) {
      // GPU -> CPU: the CPU runnable waits for the fence the GPU writes right after the work, so
      // it may start before the host function that logs the work's end has run: compare with
      // the work's own end stamp where it is on the host's clock.
      const Work* a = work(d, hd);
      auto t = traces.find(s.clients[s.runnables[s.runnables[s.instances[d].runnable].submittedBy].client].name);
      if (a != nullptr && t != traces.end() && t->second.clock == "monotonic") {
        if (a->end > run[hi * n + index(i)]->startNs) return "out of order: " + what;
        return "";
      }
      // On a GPU the stamps are on the GPU's clock and the log's end is when a worker saw the
      // fence, which may be after the successor (waiting on the same fence) started: the edge is
      // checked where the GPU's own clock covers both ends (GPU -> GPU) only.
      if (t != traces.end() && t->second.clock != "monotonic") return "";
    }
    // CPU -> GPU on a GPU: the log's start of the GPU work is its stamp, moved onto the host's
    // clock by an offset measured once at start to within the client's clockErrorNs; the two
    // clocks then drift apart (NTP slews CLOCK_MONOTONIC; the GPU's timer has its own crystal), by
    // up to kDriftPpm of the time since the run started. The edge holds to within both. (On an
    // H100, 5.0 us late against an uncertainty of 4.2 us after 195 iterations.)
    constexpr std::int64_t kDriftPpm = 50;
    std::int64_t slack = 0;
    if (gi) {
      auto t = traces.find(s.clients[s.runnables[s.instances[i].runnable].client].name);
      if (t != traces.end() && t->second.clock != "monotonic") {
        const std::int64_t elapsed = std::max<std::int64_t>(0, run[hi * n + index(i)]->startNs - log.header.runStartNs);
        slack = t->second.clockErrorNs + elapsed / 1'000'000 * kDriftPpm;
      }
    }
    const std::int64_t gap = run[hi * n + index(i)]->startNs - run[hd * n + index(d)]->endNs;
    if (gap < -slack) {
      return "out of order: " + what + " (by " + std::to_string(-gap) + " ns" +
             (slack > 0 ? ", beyond the GPU clock's uncertainty of " + std::to_string(slack) + " ns)" : ")");
    }
    return "";
  };
  for (std::uint64_t h = 0; h < iterations; ++h) {
    for (InstanceId i : s.instances.ids()) {
      const EventRecord* r = run[h * n + index(i)];
      if (!r)
        return "instance " + std::to_string(index(i)) + " (" + name(i) + ") missing in iteration " + std::to_string(h);
      if (isSubmittee(s, i)) {
        if (RunnableId{r->aux} != s.instances[i].runnable) return name(i) + " was not run by the GPU engine";
        const Work* w = work(i, h);
        if (!w) return "no work stamps for " + name(i) + " in iteration " + std::to_string(h);
        auto t = traces.find(s.clients[s.runnables[s.instances[i].runnable].client].name);
        // The log's GPU-side times are when the client's GPU worker saw the fences the stream
        // writes before and after the work: never before the work ended.
        if (t->second.clock == "monotonic" && (w->end > r->endNs || r->startNs > r->endNs)) {
          return "the logged GPU-side end of " + name(i) + " precedes the end of its work (iteration " +
                 std::to_string(h) + ")";
        }
      }
      for (const InstanceId d : s.instances[i].dependencies) {
        if (auto e = edge(d, h, i, h); !e.empty()) return e;
      }
    }
  }
  for (const TimelineInfo& t : s.timelines) {
    for (std::uint64_t h = 0; h < iterations; ++h) {
      for (std::size_t k = 0; k < t.instances.size(); ++k) {
        if (k == 0 && h == 0) continue;
        const InstanceId prev = k == 0 ? t.instances.back() : t.instances[k - 1];
        const std::uint64_t hp = k == 0 ? h - 1 : h;
        if (auto e = edge(prev, hp, t.instances[k], h); !e.empty())
          return "on " + s.resources[t.resource].name + ": " + e;
      }
    }
  }
  return "";
}

long long field(const std::string& out, const std::string& key) {
  const auto pos = out.find(key + "=");
  if (pos == std::string::npos) return -999;
  return std::atoll(out.c_str() + pos + key.size() + 1);
}

// Runs a graph with the given clients (name -> extra arguments) for `iterations` and checks it.
void runAndCheck(GpuRun& run, const std::map<std::string, std::vector<std::string>>& clients,
                 std::uint64_t iterations) {
  const pid_t m = run.master({"-e", std::to_string(iterations)});
  std::vector<std::pair<std::string, pid_t>> pids;
  pids.reserve(clients.size());
  for (const auto& [name, extra] : clients) pids.emplace_back(name, run.client(name, extra));
  for (const auto& [name, pid] : pids) {
    INFO(name << ": " << readFile(run.out(name)));
    CHECK(waitFor(pid, kWaitMs) == 0);
  }
  INFO("master: " << readFile(run.out("master")));
  REQUIRE(waitFor(m, kWaitMs) == 0);
  std::map<std::string, Trace> traces;
  for (const auto& [name, pid] : pids) {
    const std::string out = readFile(run.out(name));
    INFO(name << ": " << out);
    CHECK(out.find("status=STM_SUCCESS") != std::string::npos);
    // No CPU worker called a synchronising CUDA function (the stand-in counts them; -1: real GPU).
    CHECK(field(out, "sync-on-submit-threads") <= 0);
    traces[name] = readTrace(run.trace(name));
    traces[name].clockErrorNs = std::max<long long>(0, field(out, "clock-offset-error-ns"));
  }
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(checkGpuOrder(run.schedule, *log, traces, iterations) == "");
}

}  // namespace

TEST_CASE("GPU->GPU across processes, CPU->GPU and GPU->CPU in both processes run in the compiled order",
          "[gpu][order]") {
  GpuRun run("cross.yaml");
  runAndCheck(run, {{"Alpha", {"--stream", "CUDA_STREAM0"}}, {"Beta", {"--stream", "CUDA_STREAM0"}}}, 150);
  const std::string beta = readFile(run.out("Beta"));
  // Beta's stream waited on Alpha's fences (GPU0's timeline and GpuB's dependency).
  CHECK(field(beta, "stream-waits") >= 150);
  CHECK(field(beta, "submissions") == 300);
  CHECK(field(beta, "gpu-ends") == 300);
}

TEST_CASE("a submitter returns before its GPU work ends: the CPU worker never waits for the GPU", "[gpu][order]") {
  GpuRun run("cross.yaml");
  runAndCheck(run, {{"Alpha", {"--stream", "CUDA_STREAM0", "--gpu-us", "800"}}, {"Beta", {"--stream", "CUDA_STREAM0"}}},
              20);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const Trace t = readTrace(run.trace("Alpha"));
  std::uint32_t subA = kNone;
  for (std::uint32_t i = 0; i < run.schedule.instances.size(); ++i) {
    if (qualifiedName(run.schedule, run.schedule.instances[i].runnable) == "Alpha.SubA" &&
        run.schedule.instances[i].frame == 0)
      subA = i;
  }
  REQUIRE(subA != kNone);
  int returnedEarly = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.instance != subA) continue;
    auto w = t.work.find({"SubA", r.iteration});
    REQUIRE(w != t.work.end());
    if (r.endNs < w->second.front().end) ++returnedEarly;
  }
  // A worker that waited for its GPU work would never return before it ends (0 of 20). With
  // 800 us of work only a preempted worker misses it; half leaves room for a loaded machine.
  CHECK(returnedEarly >= 10);
}

TEST_CASE("two streams of one process on one device order through a fence", "[gpu][order]") {
  GpuRun run("two_streams.yaml");
  runAndCheck(run, {{"Solo", {"--stream", "CUDA_STREAM0", "--stream", "CUDA_STREAM1"}}}, 200);
  CHECK(field(readFile(run.out("Solo")), "stream-waits") >= 200);
}

TEST_CASE("one client with submitters on two cores waits on another process's fences from both at once",
          "[gpu][order]") {
  // Both of Duo's streams wait on Feeder's fences while Feeder's stream writes them (the thread
  // sanitizer build checks the shared words); here the run must stay in order.
  GpuRun run("two_cores.yaml");
  runAndCheck(
      run,
      {{"Feeder", {"--stream", "CUDA_STREAM0"}}, {"Duo", {"--stream", "CUDA_STREAM1", "--stream", "CUDA_STREAM2"}}},
      100);
  const std::string duo = readFile(run.out("Duo"));
  CHECK(field(duo, "submissions") == 800);   // 2 submitters x 4 frames x 100 iterations
  CHECK(field(duo, "stream-waits") >= 800);  // every submission waited on Feeder's fence
}

TEST_CASE("a chain alternating CPU and GPU across two processes runs in order", "[gpu][order]") {
  GpuRun run("chain.yaml");
  runAndCheck(
      run, {{"A", {"--stream", "CUDA_STREAM0", "--busy-us", "20"}}, {"B", {"--stream", "CUDA_STREAM0", "--stm"}}}, 150);
}

// The run records of schedule `id` only (a managed run's log holds every schedule's).
EventLog recordsOf(const EventLog& log, std::uint16_t id, std::uint64_t& iterations) {
  EventLog only = log;
  only.records.clear();
  iterations = 0;
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.schedule != id) continue;
    only.records.push_back(r);
    iterations = std::max<std::uint64_t>(iterations, r.iteration + 1);
  }
  return only;
}

TEST_CASE("CUDA submitters and streams under a schedule manager run both schedules in order across a rollover",
          "[gpu][order][managed]") {
  GpuRun run("cross.yaml", {61, 62});
  const pid_t m = run.master({});
  const pid_t alpha = run.client("Alpha", {"--stream", "CUDA_STREAM0"});
  const pid_t beta = run.client("Beta", {"--stream", "CUDA_STREAM0", "--stm"});  // stmRegisterCuda* calls
  manager::ManagerOptions options;
  options.instance = run.instance;
  options.timeoutMs = kWaitMs;
  const Result<void> attached = manager::init("mgr", options);
  const Result<void> started = attached ? manager::startSchedule(61) : attached;  // once both clients entered
  INFO((started ? std::string() : started.error().message)
       << "\nmaster: " << readFile(run.out("master")) << "\nAlpha: " << readFile(run.out("Alpha")));
  REQUIRE(started);
  CHECK(test::awaitIterations(40, kWaitMs));
  REQUIRE(manager::rollOverSchedule(62, 61));
  CHECK(test::awaitIterations(40, kWaitMs));
  REQUIRE(manager::exitRun());
  CHECK(waitFor(alpha, kWaitMs) == 0);
  CHECK(waitFor(beta, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < run.modes.size(); ++k) {
    const std::uint16_t id = run.modes[k].identifier;
    std::map<std::string, Trace> traces;
    for (const char* who : {"Alpha", "Beta"}) traces[who] = readTrace(run.trace(who), id);
    std::uint64_t iterations = 0;
    const EventLog only = recordsOf(*log, id, iterations);
    INFO("schedule " << id << ": " << iterations << " iterations");
    CHECK(iterations >= 40);
    CHECK(checkGpuOrder(run.modes[k], only, traces, iterations) == "");
    total += iterations;
  }
  // Every submission of both schedules went through the GPU engines (SubA: 2 frames an iteration).
  const std::string out = readFile(run.out("Alpha"));
  INFO(out);
  CHECK(out.find("status=STM_SUCCESS") != std::string::npos);
  CHECK(field(out, "submissions") == static_cast<long long>(2 * total));
  CHECK(field(out, "sync-on-submit-threads") <= 0);
  CHECK(field(readFile(run.out("Beta")), "stream-waits") >= static_cast<long long>(total));
}

TEST_CASE("submitters registered as CPU runnables keep the engine-less path and its order", "[gpu][order]") {
  GpuRun run("cross.yaml");
  const pid_t m = run.master({"-e", "50"});
  const pid_t a = run.client("Alpha", {"--submitters-as-cpu"});
  const pid_t b = run.client("Beta", {"--submitters-as-cpu"});
  CHECK(waitFor(a, kWaitMs) == 0);
  CHECK(waitFor(b, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  CHECK(field(readFile(run.out("Alpha")), "submissions") == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(checkLog(run.schedule, *log, 50) == "");
}

TEST_CASE("stream registration refuses default, blocking, unknown and duplicate streams with clear errors",
          "[gpu][errors]") {
  GpuRun run("two_streams.yaml");
  const pid_t m = run.master({"-e", "5"});
  const pid_t c = run.client("Solo", {"--misuse", "--stream", "CUDA_STREAM0", "--stream", "CUDA_STREAM1"});
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  const std::string out = readFile(run.out("Solo"));
  INFO(out);
  CHECK(out.find("default-null: bad parameter") != std::string::npos);
  CHECK(out.find("default-legacy: bad parameter") != std::string::npos);
  CHECK(out.find("default-per-thread: bad parameter") != std::string::npos);
  CHECK(out.find("blocking: bad parameter") != std::string::npos);
  CHECK(out.find("cudaStreamNonBlocking") != std::string::npos);
  CHECK(out.find(
            "unknown-name: not found: CUDA stream 'NO_SUCH_STREAM' is not a CUDA_STREAM resource of client 'Solo'") !=
        std::string::npos);
  CHECK(out.find("first: ok") != std::string::npos);
  CHECK(out.find("same-name-twice: already exists") != std::string::npos);
  CHECK(out.find("same-stream-twice: already exists") != std::string::npos);
  CHECK(out.find("stm-default-null: STM_ERROR_BAD_PARAMETER") != std::string::npos);
  CHECK(out.find("stm-blocking: STM_ERROR_BAD_PARAMETER") != std::string::npos);
  CHECK(out.find("stm-unknown-name: STM_ERROR_NOT_FOUND") != std::string::npos);
  CHECK(out.find("unknown-submitter: not found") != std::string::npos);
  CHECK(out.find("cpu-runnable-as-submitter: not found") != std::string::npos);
  CHECK(out.find("null-submitter: bad parameter") != std::string::npos);
  CHECK(out.find("status=STM_SUCCESS") != std::string::npos);  // and then it runs normally
}

TEST_CASE("more streams on a device than its hardware queues is refused", "[gpu][errors]") {
  GpuRun run("two_streams.yaml");
  const pid_t m = run.master({"-e", "5", "-t", "2000000"});
  const pid_t c =
      run.client("Solo", {"--max-connections", "1", "--stream", "CUDA_STREAM0", "--stream", "CUDA_STREAM1"});
  CHECK(waitFor(c, kWaitMs) == 4);
  waitFor(m, kWaitMs);
  const std::string out = readFile(run.out("Solo"));
  INFO(out);
  CHECK(out.find("stream-error CUDA_STREAM1") != std::string::npos);
  CHECK(out.find("2 streams on 'GPU0' exceed the device's 1 hardware queues (CUDA_DEVICE_MAX_CONNECTIONS)") !=
        std::string::npos);
}

TEST_CASE("a CUDA submitter whose stream was not registered stops the run, naming the stream", "[gpu][errors]") {
  GpuRun run("cross.yaml");
  const pid_t m = run.master({"-e", "5", "-t", "5000000"});
  // Beta first: a client that arrives after the refused run ended waits for the next master
  // (here: until the test's time limit), so it must be in before Alpha refuses.
  const pid_t b = run.client("Beta", {"--stream", "CUDA_STREAM0"});
  auto schedule = loadScheduleFile(run.schedulePath);
  REQUIRE(schedule);
  std::uint32_t beta = 0;
  while (beta < schedule->clients.size() && schedule->clients[beta].name != "Beta") ++beta;
  REQUIRE(waitForClientState(run.instance, beta, static_cast<std::uint32_t>(shm::ClientState::kEntered), kWaitMs));
  const pid_t a = run.client("Alpha", {"--stream", "CUDA_STREAM0", "--skip-stream", "CUDA_STREAM0"});
  const int alphaExit = waitFor(a, kWaitMs);
  CHECK(alphaExit != 0);
  CHECK(alphaExit != -1);  // not killed at the time limit
  const int betaExit = waitFor(b, kWaitMs);
  CHECK(betaExit != 0);
  CHECK(betaExit != -1);
  CHECK(waitFor(m, kWaitMs) == 1);
  const std::string out = readFile(run.out("Alpha"));
  INFO(out);
  CHECK(out.find("CUDA submitter 'Alpha.SubA' holds no registered CUDA stream (register 'CUDA_STREAM0'") !=
        std::string::npos);
  CHECK(readFile(run.out("master")).find("client 'Alpha' refused to run") != std::string::npos);
}

namespace {

// The instance of `qualified` (Client.Runnable) in frame 0, or kNone.
std::uint32_t instanceNamed(const Schedule& s, const std::string& qualified) {
  for (std::uint32_t i = 0; i < s.instances.size(); ++i) {
    if (s.instances[i].frame == 0 && qualifiedName(s, s.instances[i].runnable) == qualified) return i;
  }
  return kNone;
}

}  // namespace

TEST_CASE("STM's two-process GPU sample runs 1,000 frames in order on fences", "[gpu][order][stm]") {
  // clientGpuY.submit enqueues a kernel that waits (on the GPU) for clientGpuX.kernel, which
  // clientGpuX submits only after clientGpuY.test1, which follows clientGpuY.submit.
  GpuRun run("stm_two_process.yaml");
  runAndCheck(run, {{"clientGpuY", {"--stream", "CUDA_STREAMY"}}, {"clientGpuX", {"--stream", "CUDA_STREAMX"}}}, 1000);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const std::uint32_t ySubmit = instanceNamed(run.schedule, "clientGpuY.submit");
  const std::uint32_t xSubmit = instanceNamed(run.schedule, "clientGpuX.submit");
  REQUIRE(ySubmit != kNone);
  REQUIRE(xSubmit != kNone);
  // Every iteration: Y's submitter returned before X's submitter, whose work Y's work waits for,
  // even started (the order a compiler with implicit submitter dependencies refuses).
  std::map<std::uint32_t, std::int64_t> yEnd, xStart;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    if (r.instance == ySubmit) yEnd[r.iteration] = r.endNs;
    if (r.instance == xSubmit) xStart[r.iteration] = r.startNs;
  }
  REQUIRE(yEnd.size() == 1000);
  REQUIRE(xStart.size() == 1000);
  int before = 0;
  for (const auto& [h, end] : yEnd) before += end <= xStart[h] ? 1 : 0;
  CHECK(before == 1000);
  CHECK(field(readFile(run.out("clientGpuY")), "stream-waits") >= 1000);  // Y's stream waited on X's fence
}

TEST_CASE("a submitter runs before its work's CPU predecessor in another process ends", "[gpu][order]") {
  GpuRun run("early_submit.yaml");
  runAndCheck(run, {{"Sensor", {"--busy-us", "800"}}, {"Brain", {"--stream", "S0"}}}, 100);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const std::uint32_t submit = instanceNamed(run.schedule, "Brain.Submit");
  const std::uint32_t sense = instanceNamed(run.schedule, "Sensor.Sense");
  REQUIRE(submit != kNone);
  REQUIRE(sense != kNone);
  std::map<std::uint32_t, std::int64_t> submitEnd, senseEnd;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    if (r.instance == submit) submitEnd[r.iteration] = r.endNs;
    if (r.instance == sense) senseEnd[r.iteration] = r.endNs;
  }
  int early = 0;
  for (const auto& [h, end] : submitEnd) early += end < senseEnd[h] ? 1 : 0;
  // A submitter that waited for Sense would never end before it (0 of 100); with 800 us of Sense
  // only a preempted submitter misses; half leaves room for a loaded machine. The work itself
  // still ran after Sense (runAndCheck checked every edge).
  CHECK(early >= 50);
  // An early submitter leaves Sense's fence unreached behind it, so Brain's stream (whose only
  // fence wait is Infer's on Sense) must have blocked in that wait in some of the early
  // iterations. A stream that skipped the wait would count none; how many block depends on the
  // stand-in's stream thread being scheduled before Sense ends (42 of 92 under ASan at -O0 in CI),
  // so any is the bound. The stand-in counts them; -1 on a GPU.
  const long long blocked = field(readFile(run.out("Brain")), "value-waits-blocked");
  INFO("early " << early << ", value waits that blocked " << blocked);
  if (blocked != -1) CHECK(blocked > 0);
}

TEST_CASE("GPU work orders across three processes and two streams", "[gpu][order]") {
  GpuRun run("three_processes.yaml");
  runAndCheck(run, {{"A", {"--stream", "SA"}}, {"B", {"--stream", "SB"}}, {"C", {"--stream", "S1", "--stream", "S2"}}},
              200);
  // C's two streams waited on fences of B and A (other processes) and of C's own other stream.
  CHECK(field(readFile(run.out("C")), "stream-waits") >= 400);
}

TEST_CASE("a stream shared by two submitters of one client runs their work in submission order", "[gpu][order]") {
  GpuRun run("shared_stream.yaml");
  runAndCheck(run, {{"Feed", {"--busy-us", "400"}}, {"Duo", {"--stream", "S"}}}, 200);
  const std::string duo = readFile(run.out("Duo"));
  CHECK(field(duo, "submissions") == 400);
}

TEST_CASE("a device without 64-bit stream memory operations is refused with a clear message", "[gpu][errors]") {
  if (clientProgram() != buildPath("tests/gpu/tactus-gpu-test-client")) return;  // stand-in only
  GpuRun run("two_streams.yaml");
  const pid_t m = run.master({"-e", "5", "-t", "2000000"});
  ::setenv("TACTUS_CUDA_STANDIN_NO_MEMOPS", "1", 1);
  const pid_t c = run.client("Solo", {"--stream", "CUDA_STREAM0", "--stream", "CUDA_STREAM1"});
  ::unsetenv("TACTUS_CUDA_STANDIN_NO_MEMOPS");
  const int exit = waitFor(c, kWaitMs);
  CHECK(exit != 0);
  CHECK(exit != -1);
  waitFor(m, kWaitMs);
  const std::string out = readFile(run.out("Solo"));
  INFO(out);
  CHECK(out.find("CUDA device 0 cannot run 64-bit stream memory operations "
                 "(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS is 0)") != std::string::npos);
}

namespace {

// Reads `size` bytes at `offset` of the instance's segment (false once it is gone).
bool readSegment(const std::string& instance, std::uint64_t offset, void* out, std::size_t size) {
  const int fd = ::open(("/dev/shm/tactus_" + instance).c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::pread(fd, out, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("a CUDA submitter publishes its start like a CPU runnable", "[gpu][order]") {
  // The successors' plan-guided waits read InstanceSlot::started/startedNs of their predecessor;
  // a submitter that left them at zero made its successors wait without the plan.
  GpuRun run("early_submit.yaml");
  const std::uint32_t submit = instanceNamed(run.schedule, "Brain.Submit");
  REQUIRE(submit != kNone);
  const std::int64_t before =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const pid_t m = run.master({"-e", "400"});
  const pid_t sensor = run.client("Sensor");
  const pid_t brain = run.client("Brain", {"--stream", "S0"});
  REQUIRE(waitForSegmentState(run.instance, static_cast<std::uint32_t>(shm::SegmentState::kRunning), kWaitMs));
  std::uint64_t instanceOffset = 0;
  REQUIRE(
      readSegment(run.instance, offsetof(shm::SegmentHeader, instanceOffset), &instanceOffset, sizeof instanceOffset));
  const std::uint64_t slot = instanceOffset + std::uint64_t{submit} * sizeof(shm::InstanceSlot);
  // Once the submitter has run a few iterations, its slot says which one began last, and when.
  std::uint32_t done = 0, started = 0;
  std::int64_t startedNs = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (done < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!readSegment(run.instance, slot + offsetof(shm::InstanceSlot, done), &done, sizeof done)) break;
  }
  REQUIRE(done >= 5);
  REQUIRE(readSegment(run.instance, slot + offsetof(shm::InstanceSlot, started), &started, sizeof started));
  REQUIRE(readSegment(run.instance, slot + offsetof(shm::InstanceSlot, startedNs), &startedNs, sizeof startedNs));
  CHECK(started >= done);  // `started` is published before `done`
  CHECK(startedNs > before);
  CHECK(waitFor(sensor, kWaitMs) == 0);
  CHECK(waitFor(brain, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
}

TEST_CASE("a failed stream memory operation stops the client, naming the call, submitter, stream and CUDA error",
          "[gpu][errors]") {
  if (clientProgram() != buildPath("tests/gpu/tactus-gpu-test-client")) return;  // stand-in only
  struct Case {
    const char* fail;      // $TACTUS_CUDA_STANDIN_FAIL
    const char* expected;  // in the client's output
  };
  const Case cases[] = {
      {"cuStreamWriteValue64@6",
       "cuStreamWriteValue64 (the work's start) for CUDA submitter 'Alpha.SubA' on stream 'CUDA_STREAM0'"},
      {"cuStreamWriteValue64@7",
       "cuStreamWriteValue64 (the work's fence) for CUDA submitter 'Alpha.SubA' on stream 'CUDA_STREAM0'"},
      {"cuMemHostRegister", "cuMemHostRegister of the run's shared memory"},
      {"cuDeviceGetAttribute",
       "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) of CUDA "
       "device 0 failed: CUDA_ERROR_INVALID_VALUE (invalid argument)"},
      {"cuMemHostGetDevicePointer",
       "cuMemHostGetDevicePointer of the run's shared memory failed: "
       "CUDA_ERROR_INVALID_VALUE (invalid argument)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.fail);
    GpuRun run("cross.yaml");
    // -t only bounds a run that went wrong otherwise: the failed call ends Alpha, and the master
    // ends the run when it leaves. At 2 s, CI's ASan build once named Alpha stuck before its first
    // Pre (0 submissions), while a switching test beside it lagged on the same core.
    const pid_t m = run.master({"-e", "50", "-t", "10000000"});
    const pid_t b = run.client("Beta", {"--stream", "CUDA_STREAM0"});
    // Beta in first: a client arriving after a refused run ended would wait for the next master.
    std::uint32_t beta = 0;
    while (beta < run.schedule.clients.size() && run.schedule.clients[beta].name != "Beta") ++beta;
    REQUIRE(waitForClientState(run.instance, beta, static_cast<std::uint32_t>(shm::ClientState::kEntered), kWaitMs));
    ::setenv("TACTUS_CUDA_STANDIN_FAIL", c.fail, 1);
    const pid_t a = run.client("Alpha", {"--stream", "CUDA_STREAM0"});
    ::unsetenv("TACTUS_CUDA_STANDIN_FAIL");
    const int alphaExit = waitFor(a, kWaitMs);
    CHECK(alphaExit >= 10);  // the client's exit status for a run that did not succeed: 10 + the STM code
    CHECK(alphaExit < 128);  // not a signal: nothing crashed afterwards (a stream reading an unmapped segment)
    const int masterExit = waitFor(m, kWaitMs);
    CHECK(masterExit != 0);
    CHECK(masterExit != -1);
    CHECK(waitFor(b, kWaitMs) != -1);
    const std::string out = readFile(run.out("Alpha"));
    INFO(out);
    CHECK(out.find(c.expected) != std::string::npos);
    CHECK(out.find("status=STM_SUCCESS") == std::string::npos);
  }
}

TEST_CASE("the event log's GPU start and end of every submittee bracket its work, stamped by the stream",
          "[gpu][log]") {
  if (clientProgram() != buildPath("tests/gpu/tactus-gpu-test-client")) return;  // stamps on the host clock
  // The stream stamps its clock right before `started` (just before the work) and right before
  // `fence` (just after it); the client's GPU worker logs those stamps. The times it saw the
  // fences itself come later (it may sleep while it waits): they would not bracket the work.
  GpuRun run("cross.yaml");
  runAndCheck(run, {{"Alpha", {"--stream", "CUDA_STREAM0", "--gpu-us", "200"}}, {"Beta", {"--stream", "CUDA_STREAM0"}}},
              100);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  const Trace alpha = readTrace(run.trace("Alpha"));
  const std::uint32_t gpuA = instanceNamed(run.schedule, "Alpha.GpuA");
  REQUIRE(gpuA != kNone);
  // The release of GpuA's frame in each iteration: a stamp of this iteration cannot be older.
  const InstanceInfo& gpuInfo = run.schedule.instances[InstanceId{gpuA}];
  const EpochId gpuEpoch = run.schedule.runnables[gpuInfo.runnable].epoch;
  std::map<std::uint32_t, std::int64_t> released;  // iteration -> the frame's ideal release
  for (const EventRecord& r : log->records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && r.instance == index(gpuEpoch) &&
        r.aux == gpuInfo.frame)
      released[r.iteration] = r.startNs;
  }
  int checked = 0;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.instance != gpuA) continue;
    auto w = alpha.work.find({"SubA", r.iteration});
    REQUIRE(w != alpha.work.end());
    const Work& work = w->second.front();  // frame 0's work
    INFO("iteration " << r.iteration << ": logged " << r.startNs << ".." << r.endNs << ", work " << work.start << ".."
                      << work.end);
    CHECK(r.startNs <= work.start);
    CHECK(r.endNs >= work.end);
    CHECK(r.endNs - r.startNs >= 200'000);
    // Not a stale stamp of an older iteration (the stamps of iteration h sit in slot h % 2, so a
    // stale start is two iterations older): it is not before this iteration's release of the
    // frame. (A bound on the span flaked: under ASan on a loaded machine the stand-in's stream
    // thread was descheduled for 22 ms before the work.)
    REQUIRE(released.count(r.iteration) == 1);
    CHECK(r.startNs >= released[r.iteration]);
    ++checked;
  }
  CHECK(checked == 100);
}
