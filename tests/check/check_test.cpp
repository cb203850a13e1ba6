// tactus-check tests with real processes: the real master, a client run under tactus-check (and
// the same client without it), and tactus-report reading the violations back from the event log.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime_harness.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/core/violation.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 60'000;
constexpr int kIterations = 20;

// The rule-breaking client: every runnable on CPU0 or CPU1, 6 ms period.
Schedule checkSchedule() {
  std::vector<RunnableSpec> specs;
  const char* names[] = {"Malloc", "VectorGrowth", "New",   "Sleep",    "Mutex", "Pipe",
                         "Thread", "PageFault",    "Print", "MemPrint", "Clean"};
  int k = 0;
  for (const char* n : names) specs.push_back({"Check", n, k++ % 2 == 0 ? "CPU0" : "CPU1", 300'000, {}, 0, {}});
  return makeSchedule(specs, 6'000'000);
}

Schedule stmSchedule() {
  return makeSchedule({{"Stm", "Alloc", "CPU0", 100'000, {}, 0, {}}, {"Stm", "Quiet", "CPU0", 100'000, {}, 0, {}}},
                      2'000'000);
}

struct Run : TestRun {
  Schedule schedule;

  Run(const std::string& tag, Schedule s) : TestRun(tag), schedule(std::move(s)) {
    REQUIRE(verifySchedule(schedule).ok());
    REQUIRE(saveScheduleFile(schedule, schedulePath).has_value());
  }
  // A schedule compiled from a graph of tests/check.
  explicit Run(const std::string& tag, const std::string& graph) : TestRun(tag) {
    const std::string yaml = std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/tests/check/" + graph;
    const pid_t c =
        children.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", schedulePath}, dir + "/compile.out");
    REQUIRE(waitFor(c, kWaitMs) == 0);
    auto s = loadScheduleFile(schedulePath);
    REQUIRE(s.has_value());
    schedule = std::move(*s);
  }

  // Runs the master for kIterations and the client command; both must end normally.
  void runWith(const std::vector<std::string>& client) {
    const pid_t m = children.spawn({buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance, "-e",
                                    std::to_string(kIterations), "-l", logPath},
                                   out("master"));
    const pid_t c = children.spawn(client, out("client"));
    CHECK(waitFor(c, kWaitMs) == 0);
    REQUIRE(waitFor(m, kWaitMs) == 0);
    INFO(readFile(out("client")));
  }

  // tactus-report with extra arguments; its exit code and standard output.
  std::pair<int, std::string> report(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{buildPath("tools/tactus-report"), logPath, schedulePath};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const std::string path = out("report" + std::to_string(reports_++));
    const int code = waitFor(children.spawn(argv, path), kWaitMs);
    return {code, readFile(path)};
  }

 private:
  int reports_ = 0;
};

std::vector<std::string> checkClient(const Run& run, std::vector<std::string> options = {}) {
  std::vector<std::string> argv{buildPath("check/tactus-check")};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(),
              {"--", buildPath("tests/check/tactus-check-test-client"), "--name", "Check", "--instance", run.instance});
  return argv;
}

// One CSV line split at commas (the test's fields hold none, except a quoted site).
std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) {
      f.push_back(cur);
      cur.clear();
    } else cur += c;
  }
  f.push_back(cur);
  return f;
}

struct Row {
  std::uint64_t count = 0;
  std::string site;
};

// The --violations CSV as (runnable|kind|call) -> row; checks the header.
std::map<std::string, Row> parseViolations(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line == "runnable,kind,call,count,first_site");
  std::map<std::string, Row> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = splitCsv(line);
    REQUIRE(f.size() == 5);
    rows[f[0] + "|" + f[1] + "|" + f[2]] = {std::stoull(f[3]), f[4]};
  }
  return rows;
}

bool anyFor(const std::map<std::string, Row>& rows, const std::string& runnable) {
  for (const auto& [key, row] : rows)
    if (key.rfind(runnable + "|", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("tactus-check names every runnable that allocates, blocks or spawns, and never the clean one", "[check]") {
  Run run("check", checkSchedule());
  run.runWith(checkClient(run));
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  // One per rule broken, named with its runnable and call; repeats counted, one per run here.
  REQUIRE(rows.count("Check.Malloc|allocation|malloc") == 1);
  CHECK(rows.at("Check.Malloc|allocation|malloc").count == kIterations);
  CHECK(rows.at("Check.Malloc|allocation|malloc").site.find("checkMalloc") != std::string::npos);
  CHECK(rows.count("Check.Malloc|allocation|free") == 1);
  REQUIRE(rows.count("Check.VectorGrowth|allocation|operator new") == 1);
  CHECK(rows.at("Check.VectorGrowth|allocation|operator new").count >= kIterations);
  CHECK(rows.at("Check.VectorGrowth|allocation|operator new").site.find("checkVectorGrowth") != std::string::npos);
  REQUIRE(rows.count("Check.New|allocation|operator new") == 1);
  CHECK(rows.at("Check.New|allocation|operator new").site.find("checkNew") != std::string::npos);
  CHECK(rows.count("Check.New|allocation|operator delete") == 1);
  REQUIRE(rows.count("Check.Sleep|blocking-call|nanosleep") == 1);
  CHECK(rows.at("Check.Sleep|blocking-call|nanosleep").count == kIterations);
  CHECK(rows.count("Check.Mutex|blocking-call|pthread_mutex_lock") == 1);
  REQUIRE(rows.count("Check.Pipe|blocking-call|write") == 1);
  CHECK(rows.at("Check.Pipe|blocking-call|write").site.find("checkPipe") != std::string::npos);
  CHECK(rows.count("Check.Thread|thread-creation|pthread_create") == 1);
  CHECK(rows.count("Check.PageFault|page-fault|minor-fault") == 1);
  // stdio writes through glibc's internal write: the stdio call itself is named.
  REQUIRE(rows.count("Check.Print|blocking-call|printf") == 1);
  CHECK(rows.at("Check.Print|blocking-call|printf").count == kIterations);
  CHECK(rows.at("Check.Print|blocking-call|printf").site.find("checkPrint") != std::string::npos);
  CHECK_FALSE(anyFor(rows, "Check.Print|allocation"));
  CHECK_FALSE(anyFor(rows, "Check.MemPrint"));  // a memory stream reaches no descriptor
  CHECK_FALSE(anyFor(rows, "Check.Clean"));
  for (const auto& [key, row] : rows) CHECK(key.find("|unitemised") == std::string::npos);
  // Each runnable broke only its own rule (Thread's std::thread also allocates its state and joins).
  CHECK_FALSE(anyFor(rows, "Check.PageFault|allocation"));
  CHECK_FALSE(anyFor(rows, "Check.Sleep|allocation"));
  CHECK_FALSE(anyFor(rows, "Check.Pipe|allocation"));

  // The text report has the table; --fail-on-violation gates on it; the HTML marks the runnables.
  const auto [textCode, text] = run.report({});
  CHECK(textCode == 0);
  CHECK(text.find("contract violations") != std::string::npos);
  CHECK(text.find("Check.Sleep") != std::string::npos);
  CHECK(run.report({"--fail-on-violation"}).first == 1);
  const std::string html = run.dir + "/view.html";
  CHECK(run.report({"--html", html}).first == 0);
  const std::string page = readFile(html);
  CHECK(page.find("allocation: malloc x" + std::to_string(kIterations)) != std::string::npos);
}

TEST_CASE("the same client without tactus-check runs unchanged and logs no violation", "[check]") {
  Run run("nocheck", checkSchedule());
  run.runWith({buildPath("tests/check/tactus-check-test-client"), "--name", "Check", "--instance", run.instance});
  CHECK(readFile(run.out("client")).find("status=frame-limit") != std::string::npos);
  const auto [code, csv] = run.report({"--violations"});
  CHECK(code == 0);
  CHECK(csv == "runnable,kind,call,count,first_site\n");
  CHECK(run.report({"--fail-on-violation"}).first == 0);
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(checkLog(run.schedule, *log, kIterations) == "");
}

TEST_CASE("tactus-check --allow leaves out a kind or a single call", "[check]") {
  Run run("allow", checkSchedule());
  run.runWith(checkClient(run, {"--allow", "allocation,blocking-call:nanosleep", "--allow", "page-fault"}));
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  CHECK_FALSE(anyFor(rows, "Check.Malloc"));
  CHECK_FALSE(anyFor(rows, "Check.Sleep"));
  CHECK_FALSE(anyFor(rows, "Check.PageFault"));
  CHECK(rows.count("Check.Pipe|blocking-call|write") == 1);
  CHECK(rows.count("Check.Thread|thread-creation|pthread_create") == 1);
  CHECK_FALSE(anyFor(rows, "Check.Clean"));
}

TEST_CASE("tactus-check itemises more distinct violations than a worker's table holds, and counts what it cannot",
          "[check]") {
  // Two entries per worker thread: each runnable's entries are reported when it returns, so the
  // next runnable reuses them; Thread commits three distinct calls in one run (operator new,
  // pthread_create, pthread_join), so one of them finds both entries waiting.
  Run run("entries", checkSchedule());
  run.runWith(checkClient(run, {"--entries", "2"}));
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  REQUIRE(rows.count("Check.Malloc|allocation|malloc") == 1);
  CHECK(rows.at("Check.Malloc|allocation|malloc").count == kIterations);
  CHECK(rows.at("Check.Malloc|allocation|malloc").site.find("checkMalloc") != std::string::npos);
  CHECK(rows.at("Check.Malloc|allocation|free").count == kIterations);
  CHECK(rows.at("Check.Sleep|blocking-call|nanosleep").count == kIterations);
  CHECK(rows.at("Check.Print|blocking-call|printf").count == kIterations);
  std::uint64_t unitemised = 0;
  for (const auto& [key, row] : rows)
    if (key.rfind("Check.Thread|", 0) == 0 && key.find("|unitemised") != std::string::npos) unitemised += row.count;
  CHECK(unitemised >= kIterations);
  CHECK_FALSE(anyFor(rows, "Check.Clean"));
  const auto [textCode, text] = run.report({});
  CHECK(textCode == 0);
  CHECK(text.find("further occurrences were not itemised") != std::string::npos);
  CHECK(run.report({"--fail-on-violation"}).first == 1);
}

TEST_CASE("tactus-check refuses an unknown kind or call and a missing command, naming it", "[check]") {
  const std::string dir = scratchDir(uniqueInstance("args"));
  ChildProcesses children;
  const std::string check = buildPath("check/tactus-check");
  CHECK(waitFor(children.spawn({check, "--allow", "sleeping", "--", "/bin/true"}, dir + "/a.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/a.out").find("unknown kind 'sleeping'") != std::string::npos);
  CHECK(waitFor(children.spawn({check, "--allow", "allocation:mallocx", "/bin/true"}, dir + "/b.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/b.out").find("unknown call 'mallocx'") != std::string::npos);
  CHECK(waitFor(children.spawn({check, "--entries", "0", "/bin/true"}, dir + "/f.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/f.out").find("--entries '0': not a count from 1 to 65536") != std::string::npos);
  // The tools' parser: --opt=value, a unique prefix, and an unknown option named with the closest one.
  CHECK(waitFor(children.spawn({check, "--allow=allocation:mallocx", "/bin/true"}, dir + "/e.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/e.out").find("--allow 'allocation:mallocx': unknown call 'mallocx'") != std::string::npos);
  CHECK(waitFor(children.spawn({check, "--entr=4", "--allow", "allocation", "/bin/sh", "-c", "exit 0", "--entries"},
                               dir + "/g.out"),
                kWaitMs) == 0);  // options after the command are the command's
  CHECK(waitFor(children.spawn({check, "--alow", "allocation", "/bin/true"}, dir + "/h.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/h.out").find("unknown option '--alow' (did you mean '--allow'?)") != std::string::npos);
  CHECK(waitFor(children.spawn({check}, dir + "/c.out"), kWaitMs) == 2);
  CHECK(readFile(dir + "/c.out").find("no client command") != std::string::npos);
  CHECK(waitFor(children.spawn({check, "--", dir + "/no-such-program"}, dir + "/d.out"), kWaitMs) == 127);
  CHECK(readFile(dir + "/d.out").find("cannot run") != std::string::npos);
  // A program that is not a tactus client runs unchanged under it.
  CHECK(waitFor(children.spawn({check, "--", "/bin/sh", "-c", "exit 7"}, dir + "/e.out"), kWaitMs) == 7);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

TEST_CASE("tactus-check names the CUDA submitters that break STM's CUDA rules on the stand-in, never the good one",
          "[check][cuda]") {
  Run run("cuda", std::string("cuda_rules.yaml"));
  // The stand-in's event table is per test run.
  const std::string table = "tactus_cuda_standin_" + run.instance;
  ::setenv("TACTUS_CUDA_STANDIN_TABLE", table.c_str(), 1);
  run.runWith(
      {buildPath("check/tactus-check"), buildPath("tests/check/tactus-check-cuda-client"), "--instance", run.instance});
  ::unlink(("/dev/shm/" + table).c_str());
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  REQUIRE(rows.count("Gpu.SyncDevice|cuda-sync|cudaDeviceSynchronize") == 1);
  // Its last statement: compiled as a jump (optimized builds) it has no frame of its own, said so.
  const std::string syncSite = rows.at("Gpu.SyncDevice|cuda-sync|cudaDeviceSynchronize").site;
  CHECK((syncSite == "tail call at the end of the runnable" || syncSite.find("submitSyncDevice") == 0));
  CHECK(rows.count("Gpu.SyncStream|cuda-sync|cudaStreamSynchronize") == 1);
  CHECK(rows.count("Gpu.DefaultStream|default-stream|cudaLaunchHostFunc") == 1);
  CHECK(rows.count("Gpu.Managed|unified-memory|cudaMallocManaged") == 1);
  REQUIRE(rows.count("Gpu.PageableCopy|pageable-copy|cudaMemcpyAsync") == 1);
  CHECK(rows.at("Gpu.PageableCopy|pageable-copy|cudaMemcpyAsync").count == kIterations);
  CHECK(rows.at("Gpu.PageableCopy|pageable-copy|cudaMemcpyAsync").site.find("submitPageableCopy") != std::string::npos);
  // libtactus's own work (the engine's waits and events) is never the submitter's, and what the
  // runtime does inside the submitter's calls is information, not a violation: the good one has
  // info rows only. The stand-in's cudaMemcpyAsync allocates its copy (operator new) every time,
  // named with the submitter's call site.
  CHECK_FALSE(anyFor(rows, "Gpu.Good|allocation"));
  CHECK_FALSE(anyFor(rows, "Gpu.Good|blocking-call"));
  for (const char* kind : {"cuda-sync", "default-stream", "unified-memory", "pageable-copy"})
    CHECK_FALSE(anyFor(rows, std::string("Gpu.Good|") + kind));
  REQUIRE(rows.count("Gpu.Good|info|cudaMemcpyAsync: operator new") == 1);
  CHECK(rows.at("Gpu.Good|info|cudaMemcpyAsync: operator new").count >= kIterations);  // + queue growth
  CHECK(rows.at("Gpu.Good|info|cudaMemcpyAsync: operator new").site.find("submitGood") != std::string::npos);
  CHECK(rows.count("Gpu.PageableCopy|info|cudaMemcpyAsync: operator new") == 1);
  CHECK_FALSE(anyFor(rows, "Gpu.PageableCopy|allocation"));
  // The stand-in's synchronize waits on a futex: the sync's cost in the kernel.
  CHECK(rows.count("Gpu.SyncStream|info|cudaStreamSynchronize: futex") == 1);
  // The text report lists them apart.
  const auto [textCode, text] = run.report({});
  CHECK(textCode == 0);
  CHECK(text.find("information, not violations") != std::string::npos);
}

TEST_CASE(
    "under a schedule manager (-N) tactus-check names the CUDA submitters of the running schedule that break "
    "STM's rules",
    "[check][cuda][managed]") {
  Run run("cudamanaged", std::string("cuda_rules.yaml"));
  // The second mode: the same graph with another identifier and name.
  std::string yaml = readFile(std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/tests/check/cuda_rules.yaml");
  yaml.replace(yaml.find("Identifier: 61"), 14, "Identifier: 62");
  yaml.replace(yaml.find("CudaRules:"), 10, "CudaRulesB:");
  std::ofstream(run.dir + "/second.yaml") << yaml;
  const std::string second = run.dir + "/second.tsched";
  REQUIRE(
      waitFor(run.children.spawn({buildPath("compiler/tactus-compile"), "-i", run.dir + "/second.yaml", "-o", second},
                                 run.out("compile2")),
              kWaitMs) == 0);
  const std::string table = "tactus_cuda_standin_" + run.instance;
  ::setenv("TACTUS_CUDA_STANDIN_TABLE", table.c_str(), 1);
  const pid_t m = run.children.spawn({buildPath("master/tactus-master"), "-s", run.schedulePath + "," + second, "-N",
                                      "mgr", "-D", run.instance, "-l", run.logPath, "-t", "15000000"},
                                     run.out("master"));
  // Page faults off, as in the case below: under ASan on a loaded machine a first touch inside
  // 'Good' was counted as a page fault (CI); this case is about the CUDA rules under a manager.
  const pid_t c = run.children.spawn({buildPath("check/tactus-check"), "--page-faults", "off",
                                      buildPath("tests/check/tactus-check-cuda-client"), "--instance", run.instance},
                                     run.out("client"));
  auto manager = [&](const std::vector<std::string>& command, const std::string& who) {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", run.instance, "-t", "15000"};
    argv.insert(argv.end(), command.begin(), command.end());
    const int code = waitFor(run.children.spawn(argv, run.out(who)), kWaitMs);
    return std::make_pair(code, readFile(run.out(who)));
  };
  const auto started = manager({"start", "62"}, "start");  // the second schedule: its own GPU engine
  INFO(started.second << "\nmaster: " << readFile(run.out("master")) << "\nclient: " << readFile(run.out("client")));
  REQUIRE(started.first == 0);
  // Until it has run kIterations (the manager's status: `..., N iterations, ...`).
  for (int k = 0; k < kWaitMs / 10; ++k) {
    const std::string status = manager({"status"}, "status").second;
    const std::size_t at = status.find(" iterations");
    const std::size_t from = status.rfind(' ', at - 1);
    if (at != std::string::npos && std::atoi(status.c_str() + from + 1) >= kIterations) break;
    ::usleep(10'000);
  }
  CHECK(manager({"exit"}, "exit").first == 0);
  CHECK(waitFor(c, kWaitMs) == 11);  // the client's code for exit-requested (10 + RunStatus::kExitRequested)
  CHECK(readFile(run.out("client")).find("status=exit-requested") != std::string::npos);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  ::unlink(("/dev/shm/" + table).c_str());
  for (const std::string& name : {run.instance + ".schedule1", run.instance + ".manager"}) {
    if (segmentPresent(name)) ::unlink(("/dev/shm/tactus_" + name).c_str());
  }
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  auto schedule = loadScheduleFile(second);
  REQUIRE(schedule.has_value());
  // The violations of schedule 62, by runnable and kind (every one of them: 61 never ran).
  std::map<std::string, std::uint64_t> found;
  for (const EventRecord& r : log->records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kViolation)) continue;
    CHECK(r.schedule == 62);
    REQUIRE(schedule->runnables.contains(RunnableId{r.aux}));
    found[schedule->runnables[RunnableId{r.aux}].name + "|" + std::to_string(r.detail)] += r.iteration;
  }
  auto key = [](const char* runnable, ViolationKind kind) {
    return std::string(runnable) + "|" + std::to_string(static_cast<int>(kind));
  };
  CHECK(found[key("SyncDevice", ViolationKind::kCudaSync)] >= kIterations);
  CHECK(found[key("SyncStream", ViolationKind::kCudaSync)] >= kIterations);
  CHECK(found[key("DefaultStream", ViolationKind::kDefaultStream)] >= kIterations);
  CHECK(found[key("PageableCopy", ViolationKind::kPageableCopy)] >= kIterations);
  for (const auto& [what, count] : found) {
    if (what.rfind("Good|", 0) == 0) CHECK(what == key("Good", ViolationKind::kInfo));
  }
}

TEST_CASE("the CUDA runtime's work in submitters is information: it never fails --fail-on-violation", "[check][cuda]") {
  Run run("cudainfo", std::string("cuda_rules.yaml"));
  const std::string table = "tactus_cuda_standin_" + run.instance;
  ::setenv("TACTUS_CUDA_STANDIN_TABLE", table.c_str(), 1);
  // Page faults off: a first touch of a page inside a runnable is a real violation, and on a loaded
  // machine (an ASan build under CI) the stand-in's stream sync met one now and then; this case is
  // about the CUDA runtime's own work only.
  run.runWith({buildPath("check/tactus-check"), "--allow", "cuda-sync,default-stream,unified-memory,pageable-copy",
               "--page-faults", "off", buildPath("tests/check/tactus-check-cuda-client"), "--instance", run.instance});
  ::unlink(("/dev/shm/" + table).c_str());
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  CHECK(rows.count("Gpu.Good|info|cudaMemcpyAsync: operator new") == 1);
  for (const auto& [key, row] : rows) CHECK(key.find("|info|") != std::string::npos);
  CHECK(run.report({"--fail-on-violation"}).first == 0);
}

TEST_CASE("tactus-check warns that a program with the CUDA runtime linked in statically has its CUDA calls unchecked",
          "[check][cuda]") {
  const std::string dir = scratchDir(uniqueInstance("static"));
  ChildProcesses children;
  const std::string check = buildPath("check/tactus-check");
  const std::string program = buildPath("tests/check/tactus-check-static-cudart-client");
  CHECK(waitFor(children.spawn({check, "--", program}, dir + "/static.out"), kWaitMs) == 0);
  const std::string text = readFile(dir + "/static.out");
  INFO(text);
  CHECK(text.find("tactus-check: warning: ") != std::string::npos);
  CHECK(text.find("tactus-check-static-cudart-client") != std::string::npos);
  CHECK(text.find("has the CUDA runtime linked in statically (it defines cuda") != std::string::npos);
  CHECK(text.find("cuda-sync, default-stream, unified-memory, pageable-copy) are not checked") != std::string::npos);
  // A client on a shared runtime (the stand-in) and a program without CUDA get no warning.
  CHECK(waitFor(children.spawn({check, "--", buildPath("tests/check/tactus-check-cuda-client")}, dir + "/shared.out"),
                kWaitMs) == 2);  // its usage error: it ran, without a warning first
  CHECK(readFile(dir + "/shared.out").find("warning") == std::string::npos);
  CHECK(waitFor(children.spawn({check, "--", "/bin/sh", "-c", "exit 0"}, dir + "/sh.out"), kWaitMs) == 0);
  CHECK(readFile(dir + "/sh.out").find("warning") == std::string::npos);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

#if TACTUS_CHECK_HAVE_C
TEST_CASE("an STM C client under tactus-check: the allocating runnable is named, the quiet one is not", "[check]") {
  const std::string client = buildPath("tests/check/tactus-check-stm-client");
  Run run("stm", stmSchedule());
  // STM's discriminator is a number: the instance is its decimal text (unique by process id).
  run.instance = std::to_string(::getpid()) + "7";
  run.runWith({buildPath("check/tactus-check"), client, "Stm", run.instance});
  CHECK(readFile(run.out("client")).find("stm-enter: STM_SUCCESS") != std::string::npos);
  const auto [code, csv] = run.report({"--violations"});
  REQUIRE(code == 0);
  INFO(csv);
  const std::map<std::string, Row> rows = parseViolations(csv);
  REQUIRE(rows.count("Stm.Alloc|allocation|malloc") == 1);
  CHECK(rows.at("Stm.Alloc|allocation|malloc").count == kIterations);
  CHECK(rows.at("Stm.Alloc|allocation|malloc").site.find("stmCheckAlloc") != std::string::npos);
  CHECK_FALSE(anyFor(rows, "Stm.Quiet"));
}
#endif
