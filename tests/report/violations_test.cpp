// tactus-report's contract violations: records of known content summed into the table and the
// --violations CSV, bad records skipped, --fail-on-violation, and version 1 logs still read.
#include <cstdio>

#include "report_fixtures.hpp"
#include "tactus/core/violation.hpp"
#include "violations.hpp"

using namespace tactus;
using namespace tactus::report;
using namespace tactus::report::test;

namespace {

// A violation record of runnable `runnable` followed by its site records.
void addViolation(std::vector<EventRecord>& out, std::uint32_t runnable, ViolationKind kind, CheckCall call,
                  std::uint32_t count, const std::string& site) {
  const auto sites = static_cast<std::uint32_t>((site.size() + kViolationSiteBytes - 1) / kViolationSiteBytes);
  out.push_back(makeViolationRecord(kind, call, runnable, runnable, count, kT0 + 1000, sites));
  for (std::uint32_t k = 0; k < sites; ++k)
    out.push_back(makeViolationSiteRecord(site.data(), site.size(), k * kViolationSiteBytes));
}

}  // namespace

TEST_CASE("violations are summed per runnable, kind and call, with the first site", "[report][violations]") {
  const Schedule s = twoStepSchedule();
  std::vector<EventRecord> records = knownRecords();
  const std::string longSite = "doWork(int, std::vector<int, std::allocator<int> >&)+0x1f (libmine.so)";
  addViolation(records, 1, ViolationKind::kAllocation, CheckCall::kMalloc, 3, longSite);
  addViolation(records, 1, ViolationKind::kAllocation, CheckCall::kMalloc, 4, "");  // a repeat: no site
  addViolation(records, 0, ViolationKind::kBlockingCall, CheckCall::kNanosleep, 1, "nap+0x4 (client)");
  const std::vector<ViolationRow> rows = collectViolations(s, records);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "Client0.A");
  CHECK(rows[0].kind == "blocking-call");
  CHECK(rows[0].call == "nanosleep");
  CHECK(rows[1].name == "Client0.B");
  CHECK(rows[1].count == 7);
  CHECK(rows[1].firstSite == longSite);
  std::ostringstream csv;
  writeViolationsCsv(csv, rows);
  // The site holds commas: quoted, as CSV wants.
  CHECK(csv.str() ==
        "runnable,kind,call,count,first_site\n"
        "Client0.A,blocking-call,nanosleep,1,nap+0x4 (client)\n"
        "Client0.B,allocation,malloc,7,\"" +
            longSite + "\"\n");
}

TEST_CASE("violation records with an unknown runnable, kind or call are skipped and counted", "[report][violations]") {
  const Schedule s = twoStepSchedule();
  std::vector<EventRecord> records;
  addViolation(records, 9, ViolationKind::kAllocation, CheckCall::kMalloc, 1, "");
  EventRecord badKind = makeViolationRecord(ViolationKind::kAllocation, CheckCall::kMalloc, 0, 0, 1, kT0, 0);
  badKind.detail = 200;
  records.push_back(badKind);
  EventRecord badCall = makeViolationRecord(ViolationKind::kAllocation, CheckCall::kMalloc, 0, 0, 1, kT0, 0);
  badCall.endNs = 0xfff0;
  records.push_back(badCall);
  // A site with control bytes is printed as '?'.
  addViolation(records, 0, ViolationKind::kThreadCreation, CheckCall::kPthreadCreate, 2, "evil\x1b[2Jsite");
  std::uint64_t invalid = 0;
  const std::vector<ViolationRow> rows = collectViolations(s, records, &invalid);
  CHECK(invalid == 3);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].firstSite == "evil?[2Jsite");
}

TEST_CASE("tactus-report prints the violations table, --violations CSV, and fails on them when asked",
          "[report][violations]") {
  const Schedule s = twoStepSchedule();
  const std::string sched = tempPath("s.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  std::vector<EventRecord> records = knownRecords();
  const std::string clean = writeLogFile(s, records);
  addViolation(records, 0, ViolationKind::kPageFault, CheckCall::kMinorFault, 512, "");
  const std::string dirty = writeLogFile(s, records);
  std::string out, err;
  CHECK(runCommand({clean, sched, "--violations"}, out, err) == 0);
  CHECK(out == "runnable,kind,call,count,first_site\n");
  CHECK(runCommand({clean, sched, "--fail-on-violation"}, out, err) == 0);
  CHECK(out.find("contract violations") == std::string::npos);
  CHECK(runCommand({dirty, sched}, out, err) == 0);
  CHECK(out.find("contract violations (tactus-check): 1") != std::string::npos);
  CHECK(out.find("Client0.A") != std::string::npos);
  CHECK(runCommand({dirty, sched, "--violations"}, out, err) == 0);
  CHECK(out == "runnable,kind,call,count,first_site\nClient0.A,page-fault,minor-fault,512,\n");
  CHECK(runCommand({dirty, sched, "--fail-on-violation"}, out, err) == 1);
  CHECK(err.find("1 contract violations") != std::string::npos);
  CHECK(runCommand({dirty, sched, "--violations", "--csv"}, out, err) == 2);
  CHECK(err.find("--violations excludes --json and --csv") != std::string::npos);
  CHECK(runCommand({clean, sched, "--csv-of", "chain"}, out, err) == 2);
  CHECK(err.find("--csv-of takes runs, releases or chains, not 'chain'") != std::string::npos);
  CHECK(runCommand({clean, sched, "--csv-of", "releases"}, out, err) == 0);
  CHECK(out.rfind("iteration,epoch,frame,ideal_ns,actual_ns,late_ns,schedule\n", 0) == 0);
  CHECK(runCommand({clean, sched, "--csv-of", "chains"}, out, err) == 0);
  CHECK(out.rfind("chain,measure,source_client,", 0) == 0);
  CHECK(runCommand({"--schedule", sched, "--fail-on-violation", "--html", tempPath("x.html")}, out, err) == 2);
  // The HTML view marks the runnable.
  const std::string html = tempPath("v.html");
  CHECK(runCommand({dirty, sched, "--html", html}, out, err) == 0);
  CHECK(readAll(html).find("page-fault: minor-fault x512") != std::string::npos);
  for (const std::string& p : {sched, clean, dirty, html}) std::remove(p.c_str());
}

TEST_CASE("info rows (the CUDA runtime's work in a runnable's call) are shown apart and never fail a run",
          "[report][violations]") {
  const Schedule s = twoStepSchedule();
  std::vector<EventRecord> records = knownRecords();
  const auto context = static_cast<std::uint32_t>(CheckCall::kCudaMemcpyAsync) + 1;
  records.push_back(makeViolationRecord(ViolationKind::kInfo, CheckCall::kOperatorNew, 0, 0, 5, kT0, 0, context));
  // Bad contexts: info without one, another kind with one, one out of range.
  records.push_back(makeViolationRecord(ViolationKind::kInfo, CheckCall::kMalloc, 0, 0, 1, kT0, 0, 0));
  records.push_back(makeViolationRecord(ViolationKind::kAllocation, CheckCall::kMalloc, 0, 0, 1, kT0, 0, context));
  records.push_back(makeViolationRecord(ViolationKind::kInfo, CheckCall::kMalloc, 0, 0, 1, kT0, 0, 0xfff0));
  std::uint64_t invalid = 0;
  const std::vector<ViolationRow> rows = collectViolations(s, records, &invalid);
  CHECK(invalid == 3);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].info);
  CHECK(rows[0].kind == "info");
  CHECK(rows[0].call == "cudaMemcpyAsync: operator new");
  CHECK(countViolations(rows) == 0);
  std::ostringstream table;
  writeViolationsTable(table, rows);
  CHECK(table.str().find("contract violations") == std::string::npos);
  CHECK(table.str().find("information, not violations): 1") != std::string::npos);

  const std::string sched = tempPath("i.tsched");
  REQUIRE(saveScheduleFile(s, sched));
  records.resize(knownRecords().size() + 1);
  addViolation(records, 1, ViolationKind::kAllocation, CheckCall::kUnitemised, 7, "");
  const std::string log = writeLogFile(s, records);
  std::string out, err;
  CHECK(runCommand({log, sched, "--violations"}, out, err) == 0);
  CHECK(out ==
        "runnable,kind,call,count,first_site\n"
        "Client0.A,info,cudaMemcpyAsync: operator new,5,\n"
        "Client0.B,allocation,unitemised,7,\n");
  CHECK(runCommand({log, sched}, out, err) == 0);
  CHECK(out.find("7 further occurrences were not itemised") != std::string::npos);
  CHECK(runCommand({log, sched, "--fail-on-violation"}, out, err) == 1);
  CHECK(err.find("1 contract violations") != std::string::npos);
  // Info alone does not fail.
  records.resize(knownRecords().size() + 1);
  const std::string infoOnly = writeLogFile(s, records);
  CHECK(runCommand({infoOnly, sched, "--fail-on-violation"}, out, err) == 0);
  for (const std::string& p : {sched, log, infoOnly}) std::remove(p.c_str());
}

TEST_CASE("a version 1 event log (before tactus-check) is still read", "[report][violations]") {
  const Schedule s = twoStepSchedule();
  const std::string path = writeLogFile(s, knownRecords());
  const std::string bytes = v1LogBytes(s, knownRecords());
  auto log = parseLog(bytes, "v1.tlog");
  REQUIRE(log.has_value());
  CHECK(log->records.size() == knownRecords().size());
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  auto core = readEventLog(path);
  REQUIRE(core.has_value());
  CHECK(core->header.version == 1);
  std::remove(path.c_str());
}
