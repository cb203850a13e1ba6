// Tests of tactus-report: statistics on logs of known content, outputs, bad logs, the command line,
// and the measured-WCET round trip through tactus-compile.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
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
#include "simulate.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"

using namespace tactus;
using namespace tactus::report;

namespace {

constexpr std::int64_t kMs = 1'000'000, kUs = 1'000, kT0 = 1'000'000'000;

// Two runnables on two cores: A (WCET 1 ms) then B (WCET 2 ms, Deadline 4 ms, EndMonitorThreshold
// 2.5 ms), one 10 ms epoch.
Schedule twoStepSchedule() {
  Schedule s;
  s.name = "TwoStep";
  s.identifier = 5;
  s.clients = {{"Client0"}};
  for (int k = 0; k < 2; ++k) {
    ResourceInfo r;
    r.name = "CPU" + std::to_string(k);
    r.type = "CPU";
    r.hyperepoch = 0;
    r.core = k;
    s.resources.push_back(r);
  }
  HyperepochInfo h;
  h.name = "Main";
  h.periodNs = 10 * kMs;
  h.monitorNs = 4 * kMs;
  h.resources = {0, 1};
  h.epochs = {0};
  s.hyperepochs = {h};
  s.epochs = {{"Loop", 0, 10 * kMs, 1}};
  RunnableInfo a;
  a.name = "A";
  a.wcetNs = 1 * kMs;
  RunnableInfo b;
  b.name = "B";
  b.wcetNs = 2 * kMs;
  b.deadlineNs = 4 * kMs;
  b.endMonitorThresholdNs = 2500 * kUs;
  b.dependencies = {0};
  s.runnables = {a, b};
  InstanceInfo ia;
  ia.runnable = 0;
  ia.startNs = 0;
  ia.endNs = 1 * kMs;
  ia.resources = {0};
  InstanceInfo ib;
  ib.runnable = 1;
  ib.startNs = 1 * kMs;
  ib.endNs = 3 * kMs;
  ib.resources = {1};
  ib.dependencies = {0};
  s.instances = {ia, ib};
  s.timelines = {{0, {0}}, {1, {1}}};
  return s;
}

// The known run: 4 iterations, each released 5 us late; A then B back to back.
const std::vector<std::int64_t> kDurA = {500 * kUs, 800 * kUs, 1000 * kUs, 1500 * kUs};
const std::vector<std::int64_t> kDurB = {1000 * kUs, 2000 * kUs, 2000 * kUs, 3000 * kUs};
constexpr std::int64_t kLate = 5 * kUs;

std::vector<EventRecord> knownRecords() {
  std::vector<EventRecord> r;
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::int64_t ideal = kT0 + i * 10 * kMs, rel = ideal + kLate;
    r.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, i, 0, ideal, rel});
    r.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, i, 0, rel, rel + kDurA[i]});
    r.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 1, i, 1, rel + kDurA[i], rel + kDurA[i] + kDurB[i]});
  }
  r.push_back({static_cast<std::uint16_t>(EventKind::kOverrun), 0, 0, 3, 0, kT0 + 40 * kMs, kT0 + 41 * kMs});
  r.push_back({static_cast<std::uint16_t>(EventKind::kSkipped), 0, 0, 3, 2, kT0 + 40 * kMs, kT0 + 60 * kMs});
  r.push_back({static_cast<std::uint16_t>(EventKind::kDropped), 0, 0, 7, 0, kT0, kT0});
  return r;
}

LogFile makeLog(const Schedule& s, std::vector<EventRecord> records) {
  LogFile log;
  log.path = "known.tlog";
  std::memcpy(log.header.magic, kEventLogMagic, sizeof kEventLogMagic);
  log.header.version = kEventLogVersion;
  log.header.headerSize = sizeof(EventLogHeader);
  log.header.recordSize = sizeof(EventRecord);
  log.header.scheduleIdentifier = s.identifier;
  log.header.scheduleContentHash = scheduleContentHash(s);
  log.header.runStartNs = kT0;
  log.records = std::move(records);
  return log;
}

std::string tempPath(const std::string& name) {
  static int counter = 0;
  return "/tmp/tactus-report-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name;
}

std::string writeLogFile(const Schedule& s, const std::vector<EventRecord>& records) {
  const std::string path = tempPath("log.tlog");
  EventLogWriter w;
  REQUIRE(w.open(path, s.identifier, scheduleContentHash(s)));
  w.setRunStart(kT0);
  w.append(records.data(), records.size());
  REQUIRE(w.close());
  return path;
}

std::string readAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int runCommand(const std::vector<std::string>& args, std::string& out, std::string& err) {
  std::ostringstream o, e;
  const int rc = runReportCommand(args, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

std::size_t countOf(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

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

TEST_CASE("the fixture schedule verifies", "[report]") {
  REQUIRE(verifySchedule(twoStepSchedule()).ok());
}

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
  CHECK(A.startJitter.minNs == kLate);     // A starts at its (late) release
  CHECK(A.startJitter.maxNs == kLate);

  const RunnableStats& B = a.runnables[1];
  CHECK(B.overrunsWcet == 1);              // 3 ms > 2 ms
  CHECK(B.endMonitorViolations == 1);      // 3 ms > 2.5 ms
  // Deadline 4 ms from release: B ends at durA + durB after release (+ lateness vs the ideal one).
  int misses = 0;
  for (int i = 0; i < 4; ++i) misses += kLate + kDurA[i] + kDurB[i] > 4 * kMs;
  CHECK(B.deadlineMisses == static_cast<std::uint64_t>(misses));
  // B's planned start is 1 ms after the iteration's start; it starts when A ends.
  std::vector<std::int64_t> jit;
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

TEST_CASE("records with indices outside the schedule are counted and ignored", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 99, 0, 0, kT0, kT0 + 1});        // bad instance
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 42, kT0, kT0 + 1});        // bad runnable
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 0, kT0 + 5, kT0});         // ends before start
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 9, 0, 0, kT0, kT0});         // bad epoch
  records.push_back({77, 0, 0, 0, 0, 0, 0});                                                          // bad kind
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0xffffffffu, 0, kT0, kT0 + 1});  // absurd iteration
  const Analysis a = analyze(s, makeLog(s, records));
  CHECK(a.invalidRecords == 6);
  CHECK(a.runnables[0].duration.count == 4);
  REQUIRE_FALSE(a.warnings.empty());
  std::string warnings;
  for (const std::string& w : a.warnings) warnings += w + "\n";
  CHECK_THAT(warnings, Catch::Contains("6 records have an unknown kind") &&
                           Catch::Contains("the first is record 15 (at byte 544)"));
}

TEST_CASE("records with times far from the run's start are invalid, never an overflow", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 0, 0, kMin + 1, kMax});          // duration overflows
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 1, 1, 1, kT0, kT0 + limits::kMaxLogSpanNs + 1});
  records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, 2, 0, kMin, kT0});
  records.push_back({static_cast<std::uint16_t>(EventKind::kSkipped), 0, 0, 3, 2, kMax, kMax});
  records.push_back({static_cast<std::uint16_t>(EventKind::kOverrun), 0, 0, 3, 0, kMin, kMin});
  const LogFile log = makeLog(s, records);
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 5);
  CHECK(a.runnables[0].duration.count == 4);
  CHECK(a.runnables[0].duration.maxNs == kDurA[3]);
  CHECK(a.runnables[1].duration.count == 4);
  CHECK(a.releaseRecords == 4);
  CHECK(a.skippedRecords == 1);
  CHECK(a.overrunRecords == 1);
  // The outputs leave them out as well.
  std::ostringstream csv;
  writeCsv(csv, s, log, a);
  CHECK(csv.str().find(std::to_string(kMax)) == std::string::npos);
  std::ostringstream trace;
  writeTrace(trace, s, &log, &a);  // under UBSan: no overflow on the far times
  CHECK_FALSE(trace.str().empty());
}

TEST_CASE("a log header's implausible run start is ignored with a warning", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  LogFile log = makeLog(s, knownRecords());
  log.header.runStartNs = std::numeric_limits<std::int64_t>::max();
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 0);
  CHECK(a.runnables[1].duration.count == 4);
  CHECK(a.hyperepochs[0].iterations == 4);
  bool warned = false;
  for (const std::string& w : a.warnings) warned |= w.find("is not a plausible CLOCK_MONOTONIC time") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("the per-iteration tables hold the iterations the records name, not every number below them",
          "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  auto records = knownRecords();
  // One run of iteration 1000, and nothing of iterations 4..999 (lost, or a damaged number).
  const std::int64_t late = kT0 + 1000 * 10 * kMs;
  records.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, 1000, 0, late, late + 9 * kMs});
  const LogFile log = makeLog(s, records);
  const Analysis a = analyze(s, log);
  CHECK(a.invalidRecords == 0);
  REQUIRE(a.iterations.size() == 1);
  CHECK(a.iterations[0] == std::vector<std::uint64_t>{0, 1, 2, 3, 1000});
  CHECK(a.iterationStart[0].size() == 5);
  CHECK(a.hyperepochs[0].iterations == 5);
  CHECK(iterationStartNs(s, log, a, 0, 1000) == late);  // estimated from the run start and the period
  const view::Execution x = makeExecution(s, log, a);
  bool drawn = false;
  for (const auto& it : x.iterations) drawn |= it.iteration == 1000;
  CHECK(drawn);  // the longest iteration, by its number
}

TEST_CASE("frame statistics of an epoch with more frames than the records fill are exact", "[report][stats]") {
  // An epoch of 65536 frames in 3 iterations is 196,608 (iteration, frame) cells for a handful
  // of records: the analysis keeps them in a hash table instead of a dense one; same results.
  Schedule s = twoStepSchedule();
  s.epochs.push_back({"Fine", 0, 1, limits::kMaxFramesPerEpoch});
  s.hyperepochs[0].epochs = {0, 1};
  REQUIRE(verifySchedule(s).ok());
  auto records = knownRecords();
  for (std::uint32_t it = 0; it < 3; ++it) {
    const std::int64_t ideal = kT0 + it * 10 * kMs;
    records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 1, it, 0, ideal, ideal + 7 * kUs});
    records.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 1, it, 65535, ideal + 65535,
                       ideal + 65535 + (it + 1) * kUs});
  }
  const Analysis a = analyze(s, makeLog(s, records));
  CHECK(a.invalidRecords == 0);
  REQUIRE(a.frames.size() == 1 + limits::kMaxFramesPerEpoch);
  const FrameStats& first = a.frames[1];
  const FrameStats& last = a.frames[1 + 65535];
  CHECK(first.epoch == 1);
  CHECK(last.frame == 65535);
  CHECK(first.releases == 3);
  CHECK(first.releaseJitter.maxNs == 7 * kUs);
  CHECK(last.releases == 3);
  CHECK(last.releaseJitter.minNs == 1 * kUs);
  CHECK(last.releaseJitter.maxNs == 3 * kUs);
  CHECK(a.frames[1 + 100].releases == 0);
  // The first epoch's statistics are those of the known run.
  CHECK(a.frames[0].releases == 4);
  CHECK(a.frames[0].span.count == 4);
  CHECK(a.hyperepochs[0].iterations == 4);
}

TEST_CASE("analysis of random garbage records never crashes", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<EventRecord> records(64);
    for (auto& r : records) {
      r.kind = static_cast<std::uint16_t>(rng() % 7);
      r.instance = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 3);
      r.iteration = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 5);
      r.aux = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 3);
      r.startNs = static_cast<std::int64_t>(rng() % 2 ? rng() : kT0 + rng() % (100 * kMs));
      // Wrapping on purpose (in unsigned arithmetic: defined) so some ends precede their starts.
      r.endNs = static_cast<std::int64_t>(static_cast<std::uint64_t>(r.startNs) + rng() % (5 * kMs));
    }
    const LogFile log = makeLog(s, records);
    const Analysis a = analyze(s, log);
    std::ostringstream sink;
    writeCsv(sink, s, log, a);
    writeTrace(sink, s, &log, &a);
    sink << formatText(s, log, a) << formatJson(s, log, a) << formatWcetFile(s, a, 99, 1.2);
    const view::Execution x = makeExecution(s, log, a);
    CHECK_FALSE(view::renderHtml(s, &x).empty());
  }
}

TEST_CASE("a truncated log is reported with a warning and its complete records", "[report][bad-log]") {
  const Schedule s = twoStepSchedule();
  const std::string path = writeLogFile(s, knownRecords());
  std::string bytes = readAll(path);
  bytes.resize(bytes.size() - 10);
  auto log = parseLog(bytes, "cut.tlog");
  REQUIRE(log);
  CHECK(log->records.size() == knownRecords().size() - 1);
  REQUIRE(log->warnings.size() == 1);
  CHECK(log->warnings[0].find("cut.tlog: the log ends inside a record") == 0);
  // Through the command: exit 0, the warning on stderr.
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  const std::string sched = tempPath("s.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  std::string out, err;
  CHECK(runCommand({path, sched}, out, err) == 0);
  CHECK(err.find("warning") != std::string::npos);
  CHECK(out.find("Client0.A") != std::string::npos);
  std::remove(path.c_str());
  std::remove(sched.c_str());
}

TEST_CASE("a report that cannot be written to its output is an error, in every format", "[report][output]") {
  // A full device (like /dev/full: char 1,7) of our own in a scratch directory.
  const std::string dir = tempPath("fulldir");
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::string full = dir + "/full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) {
    WARN("skipped: cannot create a full device node with mknod: " << std::strerror(errno));
    ::rmdir(dir.c_str());
    return;
  }
  if (const int probe = ::open(full.c_str(), O_WRONLY | O_CLOEXEC); probe >= 0) {
    ::close(probe);
  } else {  // e.g. /tmp mounted nodev
    WARN("skipped: cannot open the device node " << full << ": " << std::strerror(errno));
    std::remove(full.c_str());
    ::rmdir(dir.c_str());
    return;
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
    bad[16] = 40;
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
  CHECK(line == "frame,hyperepoch,epoch,client,runnable,resource,start_ns,end_ns");
  std::vector<std::string> rows;
  std::int64_t lastStart = 0;
  while (std::getline(in, line)) {
    rows.push_back(line);
    const std::size_t p = line.rfind(',', line.rfind(',') - 1);
    const std::int64_t start = std::stoll(line.substr(p + 1));
    CHECK(start >= lastStart);
    lastStart = start;
  }
  REQUIRE(rows.size() == 8);
  const std::int64_t rel = kT0 + kLate;
  CHECK(rows[0] == "0,0,Main.Loop,Client0,A,CPU0," + std::to_string(rel) + "," + std::to_string(rel + kDurA[0]));
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
  REQUIRE(runCommand({log, sched, "--wcet-out", wcet, "--wcet-percentile", "90", "--wcet-margin", "1.1"}, out, err) == 0);
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

TEST_CASE("the trace has one complete event per run and per scheduled instance", "[report][trace]") {
  const Schedule s = twoStepSchedule();
  const LogFile log = makeLog(s, knownRecords());
  const Analysis a = analyze(s, log);
  std::ostringstream out;
  writeTrace(out, s, &log, &a);
  const std::string t = out.str();
  CHECK(countOf(t, R"("ph":"X","cat":"run)") == a.runRecords);
  CHECK(countOf(t, R"("ph":"X","cat":"plan")") == s.instances.size());
  CHECK(t.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0);
  CHECK(t.find("\n]}") != std::string::npos);
  // The first run of A: 5 us after the first ideal release (trace time zero), 500 us long.
  CHECK(t.find(R"("name":"Client0.A","pid":1,"tid":0,"ts":5.000,"dur":500.000)") != std::string::npos);
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
  CHECK(a.releaseRecords == 5 * 2);
  CHECK(a.invalidRecords == 0);
  for (const RunnableStats& r : a.runnables) {
    CHECK(r.duration.count == 10);
    CHECK(r.overrunsWcet == 0);  // no overrun probability: every run within WCET
  }
}
