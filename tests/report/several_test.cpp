// tactus-report over several schedules (a run with a schedule manager) and several logs (a
// multi-SoC run's): every output per schedule, on a log of known content.
#include <cstdio>

#include "outputs.hpp"
#include "report_fixtures.hpp"
#include "tactus/core/violation.hpp"
#include "violations.hpp"

using namespace tactus;
using namespace tactus::report;
using namespace tactus::report::test;

namespace {

constexpr std::int64_t kSecond = 100 * kMs;  // schedule 6 runs from here on

// Schedule 6: the fixture's shape with B renamed C (another graph's runnable).
Schedule otherSchedule() {
  Schedule s = twoStepSchedule();
  s.name = "TwoStepC";
  s.identifier = 6;
  s.runnables[RunnableId{1}].name = "C";
  return s;
}

// The known run's records of schedule `id`, `shiftNs` later.
std::vector<EventRecord> recordsOf(std::uint16_t id, std::int64_t shiftNs) {
  std::vector<EventRecord> records = knownRecords();
  for (EventRecord& r : records) {
    r.schedule = id;
    r.startNs += shiftNs;
    r.endNs += shiftNs;
  }
  return records;
}

EventRecord switchRecord(EventKind kind, std::uint16_t id, std::uint32_t other, std::int64_t atNs) {
  EventRecord r{static_cast<std::uint16_t>(kind), 0, 0, 0, other, atNs, atNs};
  r.schedule = id;
  return r;
}

// A managed run: 5 started, stopped after its 4 iterations, 6 started; one violation of C.
std::vector<EventRecord> managedRecords() {
  std::vector<EventRecord> records{switchRecord(EventKind::kScheduleStart, 5, 0xffffffffu, kT0)};
  for (const EventRecord& r : recordsOf(5, 0)) records.push_back(r);
  records.push_back(switchRecord(EventKind::kScheduleStop, 5, 0xffffffffu, kT0 + 50 * kMs));
  records.push_back(switchRecord(EventKind::kScheduleStart, 6, 0xffffffffu, kT0 + kSecond));
  for (const EventRecord& r : recordsOf(6, kSecond)) records.push_back(r);
  EventRecord v = makeViolationRecord(ViolationKind::kAllocation, CheckCall::kMalloc, 1, 1, 3, kT0 + kSecond, 0);
  v.schedule = 6;
  records.push_back(v);
  return records;
}

std::string writeManagedLog(const std::vector<EventRecord>& records) {
  std::string path = tempPath("managed.tlog");
  EventLogWriter w;
  const Schedule first = twoStepSchedule();
  REQUIRE(w.open(path, first.identifier, scheduleContentHash(first)));
  w.setScheduleCount(2);
  w.setRunStart(kT0);
  w.append(records.data(), records.size());
  REQUIRE(w.close());
  return path;
}

struct ManagedFiles {
  std::string log = writeManagedLog(managedRecords());
  std::string a = tempPath("a.tsched"), b = tempPath("b.tsched");
  ManagedFiles() {
    REQUIRE(saveScheduleFile(twoStepSchedule(), a));
    REQUIRE(saveScheduleFile(otherSchedule(), b));
  }
  ~ManagedFiles() {
    for (const std::string* p : {&log, &a, &b}) std::remove(p->c_str());
  }
};

}  // namespace

TEST_CASE("several schedules: the text has a section per schedule with its violations, then the switches",
          "[report][several]") {
  ManagedFiles f;
  std::string out, err;
  REQUIRE(runCommand({f.log, f.a, f.b}, out, err) == 0);
  const std::size_t five = out.find("=== schedule 5 'TwoStep' (" + f.a + ") ===");
  const std::size_t six = out.find("=== schedule 6 'TwoStepC' (" + f.b + ") ===");
  const std::size_t switches = out.find("schedule starts and stops");
  REQUIRE(five < six);
  REQUIRE(six < switches);
  CHECK(countOf(out, "  8 runs, 4 frame releases, 1 skips, 1 frame overruns") == 2);
  const std::size_t table = out.find("contract violations (tactus-check): 1");
  CHECK(table > six);
  CHECK(table < switches);
  CHECK(out.find("Client0.C  allocation  malloc  3") != std::string::npos);
  CHECK(err ==
        "tactus-report: warning: schedule 5: the runtime lost 7 records (client rings full); statistics are of "
        "the records kept\n"
        "tactus-report: warning: schedule 6: the runtime lost 7 records (client rings full); statistics are of "
        "the records kept\n");
}

TEST_CASE("several schedules: --json holds each schedule's statistics as a run of one has them, and the switches",
          "[report][several][json]") {
  ManagedFiles f;
  std::string out, err;
  REQUIRE(runCommand({f.log, f.a, f.b, "--json"}, out, err) == 0);
  // Schedule 6's section is the JSON of a run of schedule 6 alone with the same records.
  const Schedule six = otherSchedule();
  LogFile alone = makeLog(six, recordsOf(6, kSecond));
  alone.path = f.log;
  alone.records.push_back(managedRecords().back());
  std::string expected = formatJson(six, alone, analyze(six, alone));
  expected.pop_back();
  CHECK(out.rfind("{\"log\":\"" + f.log + "\",\"schedules\":[{\"schedule\":\"TwoStep\",\"identifier\":5,", 0) == 0);
  CHECK(out.find("," + expected + "],\"switches\":[") != std::string::npos);
  CHECK(out.find(R"("switches":[{"at_ns":0,"schedule":5,"hyperepoch":0,"text":"start 5 on 'Main'"},)"
                 R"({"at_ns":50000000,"schedule":5,"hyperepoch":0,"text":"stop 5 on 'Main'"},)"
                 R"({"at_ns":100000000,"schedule":6,"hyperepoch":0,"text":"start 6 on 'Main'"}]})") !=
        std::string::npos);
}

TEST_CASE("several schedules: --csv, --violations and --fail-on-violation name the schedule", "[report][several]") {
  ManagedFiles f;
  std::string out, err;
  REQUIRE(runCommand({f.log, f.a, f.b, "--csv"}, out, err) == 0);
  CHECK(countOf(out, ",5\n") == 8);
  CHECK(countOf(out, ",6\n") == 8);
  CHECK(out.find("0,0,Main.Loop,Client0,C,CPU1,") != std::string::npos);
  REQUIRE(runCommand({f.log, f.a, f.b, "--violations"}, out, err) == 0);
  CHECK(out == "runnable,kind,call,count,first_site,schedule\nClient0.C,allocation,malloc,3,,6\n");
  CHECK(runCommand({f.log, f.a, f.b, "--fail-on-violation"}, out, err) == 1);
  const std::string failed =
      "tactus-report: 1 contract violations (runnable, kind, call) in " + f.log + " (schedule 6: 1)\n";
  CHECK(err.substr(err.size() - std::min(err.size(), failed.size())) == failed);
}

TEST_CASE("several schedules: --wcet-out writes a file per schedule that its own graph accepts",
          "[report][several][wcet]") {
  ManagedFiles f;
  const std::string wcet = tempPath("w.yaml");
  const std::string other = wcet.substr(0, wcet.size() - 5) + "-6.yaml";
  std::string out, err;
  REQUIRE(runCommand({f.log, f.a, f.b, "--wcet-out", wcet, "--wcet-percentile", "100", "--wcet-margin", "1"}, out,
                     err) == 0);
  const std::string head =
      "# measured WCETs (ns) from tactus-report: p100 of the measured durations x 1; use with tactus-compile --wcet\n";
  CHECK(readAll(wcet) == head + "Client0.A: 1500000\nClient0.B: 3000000\n");
  CHECK(readAll(other) == head + "Client0.A: 1500000\nClient0.C: 3000000\n");
  std::remove(wcet.c_str());
  std::remove(other.c_str());
}

TEST_CASE(
    "several schedules: --html writes a page per schedule with its violations and the switches, --trace-out "
    "a process per schedule",
    "[report][several][html]") {
  ManagedFiles f;
  const std::string html = tempPath("run.html"), trace = tempPath("trace.json");
  const std::string other = html.substr(0, html.size() - 5) + "-6.html";
  std::string out, err;
  REQUIRE(runCommand({f.log, f.a, f.b, "--html", html, "--trace-out", trace}, out, err) == 0);
  const std::string events = readAll(trace);
  CHECK(events.find(R"x("args":{"name":"schedule 6 'TwoStepC' (executed)"})x") != std::string::npos);
  CHECK(countOf(events, R"("cat":"switch")") == 3);
  CHECK(countOf(events, R"("ph":"X")") == 16);
  std::remove(trace.c_str());
  const std::string five = readAll(html), six = readAll(other);
  CHECK(five.find("start 6 on 'Main'") != std::string::npos);
  CHECK(six.find("start 6 on 'Main'") != std::string::npos);
  CHECK(six.find("allocation: malloc x3") != std::string::npos);
  CHECK(five.find("allocation: malloc x3") == std::string::npos);
  std::remove(html.c_str());
  std::remove(other.c_str());
}

TEST_CASE("several schedules over several logs: the SoCs' logs merged give the outputs of the one log",
          "[report][several][multisoc]") {
  ManagedFiles f;
  // Each SoC logs the releases and switches; SoC 0 the runs of A, SoC 1 the rest.
  std::vector<EventRecord> soc0, soc1;
  for (const EventRecord& r : managedRecords()) {
    const bool runOfB = r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.instance == 1;
    const bool shared = r.kind == static_cast<std::uint16_t>(EventKind::kRelease);
    if (!runOfB || shared) soc0.push_back(r);
    if (runOfB || shared) soc1.push_back(r);
  }
  for (EventRecord& r : soc1) {  // a follower releases the same frames after the primary
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) r.startNs += 1000;
  }
  const std::string log0 = writeManagedLog(soc0), log1 = writeManagedLog(soc1);
  for (const char* option : {"--csv", "--json", "--violations"}) {
    std::string merged, one, err;
    INFO(option);
    REQUIRE(runCommand({log0, log1, f.a, f.b, option}, merged, err) == 0);
    REQUIRE(runCommand({f.log, f.a, f.b, option}, one, err) == 0);
    if (std::string(option) == "--json") {  // the merged log is named by its primary's path
      CHECK(countOf(merged, "\"log\":\"" + log0 + "\"") == 3);
      for (std::size_t at = merged.find(log0); at != std::string::npos; at = merged.find(log0, at))
        merged.replace(at, log0.size(), f.log);
    }
    CHECK(merged == one);
  }
  std::remove(log0.c_str());
  std::remove(log1.c_str());
}
