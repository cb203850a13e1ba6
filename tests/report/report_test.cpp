// Tests of tactus-report: statistics on logs of known content, outputs, the command line, and the
// measured-WCET round trip through tactus-compile (bad logs: bad_log_test.cpp).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "compile.hpp"
#include "outputs.hpp"
#include "report_command.hpp"
#include "report_fixtures.hpp"
#include "simulate.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "test_skip.hpp"

using namespace tactus;
using namespace tactus::report;
using namespace tactus::report::test;

TEST_CASE("summarize gives nearest-rank median and p99, extremes and mean", "[report][stats]") {
  std::vector<std::int64_t> v;
  for (int k = 100; k >= 1; --k) v.push_back(k);
  const Quantiles q = summarize(v);
  CHECK(q.count == 100);
  CHECK(q.minNs == 1);
  CHECK(q.maxNs == 100);
  CHECK(q.medianNs == 50);
  CHECK(q.p99Ns == 99);
  CHECK(q.meanNs == Approx(50.5));
  std::vector<std::int64_t> empty;
  CHECK(summarize(empty).count == 0);
  CHECK(percentileOfSorted({7}, 99) == 7);
}

TEST_CASE("the fixture schedule verifies", "[report]") { REQUIRE(verifySchedule(twoStepSchedule()).ok()); }

TEST_CASE("analyze computes per-runnable durations, jitter, overruns, budgets and deadline misses", "[report][stats]") {
  const Schedule s = twoStepSchedule();
  const Analysis a = analyze(s, makeLog(s, knownRecords()));
  CHECK(a.runRecords == 8);
  CHECK(a.releaseRecords == 4);
  CHECK(a.invalidRecords == 0);

  const RunnableStats& A = a.runnables[0];
  CHECK(A.duration.count == 4);
  CHECK(A.duration.minNs == kDurA[0]);
  CHECK(A.duration.maxNs == kDurA[3]);
  CHECK(A.duration.medianNs == kDurA[1]);  // nearest rank 2 of 4
  CHECK(A.overrunsWcet == 1);              // only 1.5 ms > 1 ms
  CHECK(A.worstOverrunNs == kDurA[3] - s.runnables[0].wcetNs);
  CHECK(A.startJitter.minNs == kLate);  // A starts at its (late) release
  CHECK(A.startJitter.maxNs == kLate);

  const RunnableStats& B = a.runnables[1];
  CHECK(B.overrunsWcet == 1);          // 3 ms > 2 ms
  CHECK(B.endMonitorViolations == 1);  // 3 ms > WCET 2 ms + EndMonitorThreshold 0.5 ms (the 2 ms runs are not)
  // Deadline 4 ms from release: B ends at durA + durB after release (+ lateness vs the ideal one).
  int misses = 0;
  for (int i = 0; i < 4; ++i) misses += kLate + kDurA[i] + kDurB[i] > 4 * kMs;
  CHECK(B.deadlineMisses == static_cast<std::uint64_t>(misses));
  // B's planned start is 1 ms after the iteration's start; it starts when A ends.
  std::vector<std::int64_t> jit;
  jit.reserve(4);
  for (int i = 0; i < 4; ++i) jit.push_back(kLate + kDurA[i] - 1 * kMs);
  CHECK(B.startJitter.minNs == jit[0]);
  CHECK(B.startJitter.maxNs == jit[3]);
  CHECK(B.startJitter.medianNs == jit[1]);
}

TEST_CASE("analyze computes frame, resource, client and hyperepoch statistics", "[report][stats]") {
  const Schedule s = twoStepSchedule();
  const Analysis a = analyze(s, makeLog(s, knownRecords()));
  REQUIRE(a.frames.size() == 1);
  const FrameStats& f = a.frames[0];
  CHECK(f.releases == 4);
  CHECK(f.releaseJitter.medianNs == kLate);
  CHECK(f.overruns == 1);
  CHECK(f.span.maxNs == kLate + kDurA[3] + kDurB[3]);
  CHECK(f.span.minNs == kLate + kDurA[0] + kDurB[0]);

  std::int64_t sumA = 0, sumB = 0;
  for (int i = 0; i < 4; ++i) sumA += kDurA[i], sumB += kDurB[i];
  CHECK(a.resources[0].plannedBusyNs == 1 * kMs);
  CHECK(a.resources[0].measuredBusyNs == Approx(sumA / 4.0));
  CHECK(a.resources[1].measuredBusyNs == Approx(sumB / 4.0));
  CHECK(a.clients[0].runs == 8);
  CHECK(a.clients[0].busyNs == sumA + sumB);
  CHECK(a.clients[0].droppedRecords == 7);
  CHECK(a.lostRecords == 7);

  const HyperepochStats& h = a.hyperepochs[0];
  CHECK(h.iterations == 4);
  CHECK(h.skipEvents == 1);
  CHECK(h.skippedPeriods == 2);
  int overMonitor = 0;
  for (int i = 0; i < 4; ++i) overMonitor += kLate + kDurA[i] + kDurB[i] > 4 * kMs;
  CHECK(h.monitorViolations == static_cast<std::uint64_t>(overMonitor));
}

TEST_CASE("a report that cannot be written to its output is an error, in every format", "[report][output][device]") {
  // A full device (like /dev/full: char 1,7) of our own in a scratch directory.
  const std::string dir = tempPath("fulldir");
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::string full = dir + "/full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) {
    const int error = errno;
    ::rmdir(dir.c_str());
    TACTUS_SKIP("cannot create a full device node with mknod: " << std::strerror(error));
  }
  if (const int probe = ::open(full.c_str(), O_WRONLY | O_CLOEXEC); probe >= 0) {
    ::close(probe);
  } else {  // e.g. /tmp mounted nodev
    const int error = errno;
    std::remove(full.c_str());
    ::rmdir(dir.c_str());
    TACTUS_SKIP("cannot open the device node " << full << ": " << std::strerror(error));
  }
  const Schedule s = twoStepSchedule();
  const std::string log = writeLogFile(s, knownRecords());
  const std::string sched = tempPath("s.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  const std::vector<std::vector<std::string>> commands = {
      {log, sched, "--json"}, {log, sched, "--csv"}, {log, sched}, {"--help"}, {"--version"}};
  for (const auto& args : commands) {
    // As tactus-report's main does: standard output (here the full device) through FdOutputBuffer.
    const int fd = ::open(full.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    FdOutputBuffer buffer(fd);
    std::ostream out(&buffer);
    std::ostringstream err;
    INFO(args.back());
    CHECK(runReportCommand(args, out, err) == 1);
    ::close(fd);
    INFO(err.str());
    CHECK(err.str().find("tactus-report: cannot write to standard output: No space left on device") !=
          std::string::npos);
  }
  // The same command into a writable file through the same buffer succeeds and writes it all.
  const std::string written = tempPath("written.json");
  const int fd = ::open(written.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  FdOutputBuffer buffer(fd);
  std::ostream toFile(&buffer);
  std::ostringstream err;
  CHECK(runReportCommand({log, sched, "--json"}, toFile, err) == 0);
  ::close(fd);
  CHECK(err.str().find("cannot write") == std::string::npos);
  std::string expected, ignored;
  CHECK(runCommand({log, sched, "--json"}, expected, ignored) == 0);
  CHECK(readAll(written) == expected);
  std::remove(written.c_str());
  std::remove(full.c_str());
  ::rmdir(dir.c_str());
  std::remove(log.c_str());
  std::remove(sched.c_str());
}

TEST_CASE("the spin time of the run records adds up per resource per iteration", "[report][stats][spin]") {
  const Schedule s = twoStepSchedule();
  std::vector<EventRecord> records = knownRecords();
  std::uint64_t spinA = 0;
  for (EventRecord& r : records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    r.detail = static_cast<std::uint16_t>(r.instance == 0 ? 10 + r.iteration : 0);  // only A spins
    spinA += r.detail;
  }
  const Analysis a = analyze(s, makeLog(s, records));
  CHECK(a.resources[0].spinNs == Approx(static_cast<double>(spinA * kSpinUnitNs) / 4.0));
  CHECK(a.resources[1].spinNs == 0);
  // A version 1 log (no spin field; the word was zero) still reads, from a file too.
  const std::string v1 = v1LogBytes(s, knownRecords());
  auto log = parseLog(v1, "v1.tlog");
  REQUIRE(log);
  CHECK(log->header.version == 1);
  CHECK(analyze(s, *log).resources[0].spinNs == 0);
  const std::string path = tempPath("v1.tlog");
  std::ofstream(path, std::ios::binary) << v1;
  auto read = readEventLog(path);
  REQUIRE(read);
  REQUIRE(read->records.size() == knownRecords().size());
  CHECK(read->records[1].startNs == knownRecords()[1].startNs);  // decoded at 32 bytes a record
  CHECK(read->records[1].schedule == 0);
  std::remove(path.c_str());
}

TEST_CASE("corrupt log headers are clear errors", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  const std::string good = readAll(writeLogFile(s, knownRecords()));
  SECTION("too short") {
    auto log = parseLog(good.substr(0, 20), "short.tlog");
    REQUIRE_FALSE(log);
    CHECK(log.error().code == ErrorCode::kParse);
    CHECK(log.error().message.find("short.tlog: too short") == 0);
  }
  SECTION("bad magic") {
    std::string bad = good;
    bad[0] = 'X';
    auto log = parseLog(bad, "magic.tlog");
    REQUIRE_FALSE(log);
    CHECK(log.error().message.find("not a tactus event log") != std::string::npos);
  }
  SECTION("another version") {
    std::string bad = good;
    bad[8] = 9;
    auto log = parseLog(bad, "v.tlog");
    REQUIRE_FALSE(log);
    CHECK(log.error().code == ErrorCode::kIncompatible);
  }
  SECTION("wrong record size") {
    std::string bad = good;
    bad[16] = 48;
    auto log = parseLog(bad, "size.tlog");
    REQUIRE_FALSE(log);
    CHECK(log.error().message.find("corrupt header") != std::string::npos);
  }
}

TEST_CASE("a log from another schedule is refused naming both hashes", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  Schedule other = s;
  other.runnables[0].wcetNs += 1;
  const LogFile log = makeLog(other, knownRecords());
  auto ok = checkLogMatches(log, s, "two.tsched");
  REQUIRE_FALSE(ok);
  CHECK(ok.error().message.find("another schedule") != std::string::npos);
  CHECK(ok.error().message.find("two.tsched") != std::string::npos);
  CHECK(checkLogMatches(makeLog(s, {}), s, "two.tsched"));
}

TEST_CASE("csv lists every valid run sorted by start with the issue's columns", "[report][csv]") {
  const Schedule s = twoStepSchedule();
  std::ostringstream out;
  const LogFile known = makeLog(s, knownRecords());
  writeCsv(out, s, known, analyze(s, known));
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  CHECK(line == "frame,hyperepoch,epoch,client,runnable,resource,start_ns,end_ns,schedule");
  std::vector<std::string> rows;
  std::int64_t lastStart = 0;
  while (std::getline(in, line)) {
    rows.push_back(line);
    const std::size_t scheduleComma = line.rfind(',');
    CHECK(line.substr(scheduleComma + 1) == std::to_string(s.identifier));
    const std::size_t endComma = line.rfind(',', scheduleComma - 1);
    const std::size_t p = line.rfind(',', endComma - 1);
    const std::int64_t start = std::stoll(line.substr(p + 1));
    CHECK(start >= lastStart);
    lastStart = start;
  }
  REQUIRE(rows.size() == 8);
  const std::int64_t rel = kT0 + kLate;
  CHECK(rows[0] == "0,0,Main.Loop,Client0,A,CPU0," + std::to_string(rel) + "," + std::to_string(rel + kDurA[0]) + "," +
                       std::to_string(s.identifier));
  CHECK(rows[1].find("0,0,Main.Loop,Client0,B,CPU1,") == 0);
}

TEST_CASE("the wcet file holds percentile times margin per measured runnable", "[report][wcet]") {
  const Schedule s = twoStepSchedule();
  const Analysis a = analyze(s, makeLog(s, knownRecords()));
  const std::string text = formatWcetFile(s, a, 50, 2.0);
  CHECK(text.find("Client0.A: " + std::to_string(kDurA[1] * 2) + "\n") != std::string::npos);
  CHECK(text.find("Client0.B: " + std::to_string(kDurB[1] * 2) + "\n") != std::string::npos);
  const std::string p100 = formatWcetFile(s, a, 100, 1.0);
  CHECK(p100.find("Client0.A: " + std::to_string(kDurA[3]) + "\n") != std::string::npos);
}

TEST_CASE("measured wcets feed back into tactus-compile", "[report][wcet][compiler]") {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  if (!root) root = TACTUS_TEST_SOURCE_ROOT;
  const std::string graph = std::string(root) + "/schedules/multi_rate.yaml";
  const std::string sched = tempPath("mr.tsched"), log = tempPath("mr.tlog"), wcet = tempPath("wcet.yaml"),
                    sched2 = tempPath("mr2.tsched");
  std::ostringstream o, e;
  REQUIRE(compiler::runCompileCommand({"-i", graph, "-o", sched}, o, e) == 0);
  auto s = loadScheduleFile(sched);
  REQUIRE(s);
  SimulationOptions sim;
  sim.iterations = 30;
  REQUIRE(writeSimulatedLog(log, *s, sim));
  std::string out, err;
  REQUIRE(runCommand({log, sched, "--wcet-out", wcet, "--wcet-percentile", "90", "--wcet-margin", "1.1"}, out, err) ==
          0);
  REQUIRE(compiler::runCompileCommand({"-i", graph, "-o", sched2, "--wcet", wcet}, o, e) == 0);
  auto s2 = loadScheduleFile(sched2);
  REQUIRE(s2);
  // Every runnable's WCET in the new schedule is the measured value from the side file.
  auto logFile = readLogFile(log);
  REQUIRE(logFile);
  const Analysis a = analyze(*s, *logFile);
  for (std::size_t r = 0; r < s2->runnables.size(); ++r) {
    if (a.runnables[r].durations.empty()) continue;
    const auto expected = static_cast<std::int64_t>(
        std::ceil(static_cast<double>(percentileOfSorted(a.runnables[r].durations, 90)) * 1.1));
    CHECK(s2->runnables[r].wcetNs == expected);
  }
  for (const auto& p : {sched, log, wcet, sched2}) std::remove(p.c_str());
}

TEST_CASE("the trace has one complete event per run and the plan of every iteration beside it", "[report][trace]") {
  const Schedule s = twoStepSchedule();
  const LogFile log = makeLog(s, knownRecords());
  const Analysis a = analyze(s, log);
  std::ostringstream out;
  writeTrace(out, s, &log, &a);
  const std::string t = out.str();
  CHECK(countOf(t, R"("ph":"X","cat":"run)") == a.runRecords);
  CHECK(countOf(t, R"("ph":"X","cat":"plan")") == s.instances.size() * a.iterations[HyperepochId{0}].size());
  CHECK(t.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0);
  CHECK(t.find("\n]}") != std::string::npos);
  // One process per client, a plan thread beside each worker's executed thread.
  CHECK(t.find(R"({"ph":"M","name":"process_name","pid":10,"tid":0,"args":{"name":"client 'Client0'"}})") !=
        std::string::npos);
  CHECK(t.find(R"({"ph":"M","name":"thread_name","pid":10,"tid":1,"args":{"name":"CPU0 plan"}})") != std::string::npos);
  CHECK(t.find(R"({"ph":"M","name":"thread_name","pid":10,"tid":2,"args":{"name":"CPU0"}})") != std::string::npos);
  // The first run of A: 5 us after the first ideal release (trace time zero), 500 us long, with its
  // planned start, WCET and start jitter.
  CHECK(t.find(R"("name":"Client0.A","pid":10,"tid":2,"ts":5.000,"dur":500.000,"args":{"iteration":0,"frame":0,)"
               R"("instance":0,"planned_start_us":0.000,"wcet_us":1000.000,"jitter_us":5.000}})") != std::string::npos);
  // A run longer than its WCET says so in its name.
  CHECK(countOf(t, R"("name":"OVERRUN Client0.A")") == 1);
  CHECK(countOf(t, R"("name":"OVERRUN Client0.B")") == 1);
  // Frame releases are instant events.
  CHECK(countOf(t, R"("ph":"i","s":"g","cat":"release")") == a.releaseRecords);
}

TEST_CASE("the html view is self-contained and escapes names", "[report][html]") {
  Schedule s = twoStepSchedule();
  s.runnables[0].name = "A</script><b>";
  const LogFile log = makeLog(twoStepSchedule(), knownRecords());
  const Analysis a = analyze(twoStepSchedule(), log);
  const view::Execution x = makeExecution(twoStepSchedule(), log, a);
  REQUIRE_FALSE(x.iterations.empty());
  CHECK(x.iterations[0].runs.size() == 2);
  const std::string page = view::renderHtml(s, &x);
  CHECK(countOf(page, "</script>") == 3);  // the error trap, the data, the drawing script
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);
  // The iteration with the most overruns is offered.
  bool most = false;
  for (const auto& it : x.iterations) most |= it.note.find("most overruns") != std::string::npos;
  CHECK(most);
}

TEST_CASE("the html view gets every iteration in order, and within a run budget the noted ones", "[report][html]") {
  const Schedule s = twoStepSchedule();
  const LogFile log = makeLog(s, knownRecords());
  const Analysis a = analyze(s, log);
  const view::Execution all = makeExecution(s, log, a);
  CHECK(all.iterationsInLog == a.iterations[HyperepochId{0}].size());
  REQUIRE(all.iterations.size() == a.iterations[HyperepochId{0}].size());
  for (std::size_t k = 0; k < all.iterations.size(); ++k) {
    CHECK(all.iterations[k].iteration == a.iterations[HyperepochId{0}][k]);
    CHECK(all.iterations[k].runs.size() == 2);
  }
  // No budget: only the iterations worth a note, each saying why.
  const view::Execution noted = makeExecution(s, log, a, 0);
  CHECK(noted.iterationsInLog == all.iterationsInLog);
  CHECK(noted.iterations.size() < all.iterations.size());
  for (const auto& it : noted.iterations) CHECK_FALSE(it.note.empty());
  // The page carries the count and the statistics with the jitter.
  const std::string page = view::renderHtml(s, &noted);
  CHECK(page.find("\"itlog\":" + std::to_string(all.iterationsInLog)) != std::string::npos);
  CHECK(page.find("\"stats\":[[4,") != std::string::npos);
}

TEST_CASE("tactus-report exit codes: 0 ok, 1 bad input, 2 usage", "[report][cli]") {
  const Schedule s = twoStepSchedule();
  const std::string sched = tempPath("cli.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  const std::string log = writeLogFile(s, knownRecords());
  std::string out, err;
  CHECK(runCommand({}, out, err) == 2);
  CHECK(runCommand({log, sched, "--bogus"}, out, err) == 2);
  CHECK(err.find("unknown option '--bogus'") != std::string::npos);
  CHECK(runCommand({log, sched, "--json", "--csv"}, out, err) == 2);
  CHECK(runCommand({log, sched, "--html", "a.html", "--html", "b.html"}, out, err) == 2);
  CHECK(err.find("option '--html' given twice") != std::string::npos);
  CHECK(runCommand({log, sched, "--html", "/"}, out, err) == 1);  // a directory is never replaced
  CHECK(err.find("html file '/': it is a directory") != std::string::npos);
  CHECK(runCommand({log, sched, "--wcet-percentile", "0"}, out, err) == 2);
  CHECK(runCommand({"--schedule", sched}, out, err) == 2);
  CHECK(runCommand({"/dev/zero", sched}, out, err) == 1);  // would never end: refused
  CHECK(err.find("/dev/zero: not a regular file") != std::string::npos);
  CHECK(runCommand({"/nonexistent.tlog", sched}, out, err) == 1);
  CHECK(err.find("/nonexistent.tlog: cannot open") != std::string::npos);
  CHECK(runCommand({log, "/nonexistent.tsched"}, out, err) == 1);

  Schedule other = s;
  other.runnables[1].wcetNs = 3 * kMs;
  other.instances[1].endNs = 4 * kMs;
  const std::string otherSched = tempPath("other.tsched");
  REQUIRE(saveScheduleFile(other, otherSched));
  CHECK(runCommand({log, otherSched}, out, err) == 1);
  CHECK(err.find("another schedule") != std::string::npos);

  CHECK(runCommand({log, sched}, out, err) == 0);
  CHECK(out.find("Client0.B") != std::string::npos);
  CHECK(runCommand({log, sched, "--json"}, out, err) == 0);
  CHECK(out.find("\"overruns_wcet\":1") != std::string::npos);
  const std::string html = tempPath("plan.html");
  CHECK(runCommand({"--schedule", sched, "--html", html}, out, err) == 0);
  CHECK(readAll(html).find("id=\"data\"") != std::string::npos);
  for (const auto& p : {sched, log, otherSched, html}) std::remove(p.c_str());
}

TEST_CASE("the html view of a multi-SoC run groups the lanes per SoC", "[report][html][multisoc]") {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  if (!root) root = TACTUS_TEST_SOURCE_ROOT;
  const std::string sched = tempPath("two.tsched"), html = tempPath("two.html");
  std::ostringstream o, e;
  REQUIRE(compiler::runCompileCommand({"-i", std::string(root) + "/samples/multisoc/two_soc.yaml", "-o", sched}, o,
                                      e) == 0);
  auto s = loadScheduleFile(sched);
  REQUIRE(s);
  REQUIRE(s->socs.size() == 2);
  // One run as its two masters log it: each SoC's runs, both SoCs' releases (the merge keeps the
  // primary's).
  SimulationOptions sim;
  sim.iterations = 5;
  std::vector<EventRecord> perSoc[2];
  for (const EventRecord& r : simulateRun(*s, sim)) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) {
      perSoc[0].push_back(r);
      perSoc[1].push_back(r);
    } else {
      perSoc[runnableSoc(*s, s->instances[InstanceId{r.instance}].runnable)].push_back(r);
    }
  }
  const std::string logA = writeLogFile(*s, perSoc[0]), logB = writeLogFile(*s, perSoc[1]);
  std::string out, err;
  REQUIRE(runCommand({logB, logA, sched, "--html", html}, out, err) == 0);
  const std::string page = readAll(html);
  // The SoCs and each resource's SoC in the page's data, the grouping said in the plan's caption,
  // and the script that draws a heading per SoC with its lanes under it.
  CHECK(page.find("\"socs\":[\"SocA\",\"SocB\"]") != std::string::npos);
  CHECK(page.find("[\"SocA.CPU1\",\"CPU\",0,-1,0]") != std::string::npos);
  CHECK(page.find("[\"SocB.LOG_MUTEX\",\"MUTEX\",0,-1,1]") != std::string::npos);
  CHECK(page.find("one lane group per SoC (<span class=\"soc\">SocA</span>, <span class=\"soc\">SocB</span>)") !=
        std::string::npos);
  CHECK(page.find("class=\"soc-group\"") != std::string::npos);
  CHECK(page.find("class=\"soc-head\"") != std::string::npos);
  // A schedule of one machine: no SoC in the data, one lane per resource as before.
  const std::string one = view::renderHtml(twoStepSchedule());
  CHECK(one.find("\"socs\":[]") != std::string::npos);
  CHECK(one.find("one lane group per SoC") == std::string::npos);
  for (const auto& p : {sched, logA, logB, html}) std::remove(p.c_str());
}

TEST_CASE("a simulated run of a synthetic schedule has the runs the schedule implies", "[report][simulate]") {
  SyntheticShape shape;
  shape.runnables = 40;
  shape.frames = 2;
  const Schedule s = makeSyntheticSchedule(shape);
  REQUIRE(verifySchedule(s).ok());
  SimulationOptions sim;
  sim.iterations = 5;
  const LogFile log = makeLog(s, simulateRun(s, sim));
  const Analysis a = analyze(s, log);
  CHECK(a.runRecords == 5 * s.instances.size());
  CHECK(a.releaseRecords == std::uint64_t{5} * 2);
  CHECK(a.invalidRecords == 0);
  for (const RunnableStats& r : a.runnables) {
    CHECK(r.duration.count == 10);
    CHECK(r.overrunsWcet == 0);  // no overrun probability: every run within WCET
  }
}
