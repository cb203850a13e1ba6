// Fuzz entry point for the event log: tactus-report's reading and analysis of a log against a
// fixed schedule, and every output made from it. The bytes are read twice: as a whole log file
// (header checks), and as the run's start (8 bytes) and records after a valid header for the
// schedule, so that mutations reach the analysis.
#include <cstring>
#include <sstream>
#include <string>

#include "analysis.hpp"
#include "fuzz_target.hpp"
#include "outputs.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "violations.hpp"

namespace {

// Two clients, CPU, GPU, a CUDA stream, a mutex, a submitter and its submittee, a round-robin
// group with an empty step, two frames, a Deadline, a Monitor and an EndMonitorThreshold budget.
constexpr const char* kSchedule = R"(
tactus-schedule 4
schedule name=Sample identifier=7 source_hash=0000000000001234 cross_soc_latency_ns=0
client id=0 name=Client0 soc=-
client id=1 name=Client1 soc=-
resource id=0 name=CPU0 type=CPU kind=cpu client=- hyperepoch=0 core=0 device=- stream_limit=- soc=-
resource id=1 name=CPU1 type=CPU kind=cpu client=- hyperepoch=0 core=1 device=- stream_limit=- soc=-
resource id=2 name=GPU0 type=GPU kind=gpu client=- hyperepoch=0 core=- device=- stream_limit=4 soc=-
resource id=3 name=MUTEX0 type=MUTEX kind=mutex client=- hyperepoch=0 core=- device=- stream_limit=- soc=-
resource id=4 name=STREAM0 type=CUDA_STREAM kind=cuda_stream client=1 hyperepoch=0 core=- device=2 stream_limit=- soc=-
hyperepoch id=0 name=H period_ns=10000000 monitor_ns=9000000 resources=0,1,2,3,4 epochs=0
epoch id=0 name=E hyperepoch=0 period_ns=5000000 frames=2
runnable id=0 name=A client=0 epoch=0 kind=cpu wcet_ns=1000000 start_ns=0 deadline_ns=- end_monitor_ns=1500000 priority=10 deps= submits=- submitted_by=- alias_group=- steps=
runnable id=1 name=B client=1 epoch=0 kind=submitter wcet_ns=1000000 start_ns=0 deadline_ns=- end_monitor_ns=- priority=10 deps=0 submits=2 submitted_by=- alias_group=- steps=
runnable id=2 name=G client=1 epoch=0 kind=submittee wcet_ns=1000000 start_ns=0 deadline_ns=- end_monitor_ns=- priority=10 deps=1 submits=- submitted_by=1 alias_group=- steps=
runnable id=3 name=C client=0 epoch=0 kind=cpu wcet_ns=1000000 start_ns=0 deadline_ns=4500000 end_monitor_ns=- priority=10 deps=2 submits=- submitted_by=- alias_group=- steps=
runnable id=4 name=R client=1 epoch=0 kind=alias_group wcet_ns=1000000 start_ns=0 deadline_ns=- end_monitor_ns=- priority=10 deps= submits=- submitted_by=- alias_group=- steps=5,-
runnable id=5 name=R1 client=1 epoch=0 kind=cpu wcet_ns=1000000 start_ns=0 deadline_ns=- end_monitor_ns=- priority=10 deps= submits=- submitted_by=- alias_group=4 steps=
instance id=0 runnable=0 frame=0 start_ns=0 end_ns=1000000 resources=0 deps=
instance id=1 runnable=1 frame=0 start_ns=1000000 end_ns=2000000 resources=1,4 deps=0
instance id=2 runnable=2 frame=0 start_ns=2000000 end_ns=3000000 resources=2 deps=1
instance id=3 runnable=4 frame=0 start_ns=2000000 end_ns=3000000 resources=1 deps=
instance id=4 runnable=3 frame=0 start_ns=3000000 end_ns=4000000 resources=0,3 deps=2
instance id=5 runnable=0 frame=1 start_ns=5000000 end_ns=6000000 resources=0 deps=
instance id=6 runnable=1 frame=1 start_ns=6000000 end_ns=7000000 resources=1,4 deps=5
instance id=7 runnable=2 frame=1 start_ns=7000000 end_ns=8000000 resources=2 deps=6
instance id=8 runnable=4 frame=1 start_ns=7000000 end_ns=8000000 resources=1 deps=
instance id=9 runnable=3 frame=1 start_ns=8000000 end_ns=9000000 resources=0,3 deps=7
timeline resource=0 instances=0,4,5,9
timeline resource=1 instances=1,3,6,8
timeline resource=2 instances=2,7
timeline resource=3 instances=4,9
timeline resource=4 instances=1,6
content_hash 0f248b7b15e00b32
)";

const tactus::Schedule& schedule() {
  static const tactus::Schedule s = [] {
    auto read = tactus::readSchedule(std::string_view(kSchedule).substr(1), "log_fuzz.tsched");
    if (!read) tactus::fuzz::fail("the log fuzzer's schedule does not read", read.error().message);
    if (!tactus::verifySchedule(*read).ok()) tactus::fuzz::fail("the log fuzzer's schedule does not verify", "");
    return *read;
  }();
  return s;
}

void analyzeAndWrite(const tactus::Schedule& s, const tactus::report::LogFile& log) {
  using namespace tactus::report;
  const Analysis a = analyze(s, log);
  for (const std::string& w : a.warnings) tactus::fuzz::checkMessage(w);
  std::ostringstream sink;
  writeCsv(sink, s, log, a);
  writeTrace(sink, s, &log, &a);
  sink << formatText(s, log, a) << formatJson(s, log, a) << formatWcetFile(s, a, 99, 1.2);
  // tactus-check's violation records: the table, the CSV and the HTML marks.
  const std::vector<ViolationRow> rows = collectViolations(s, log.records);
  writeViolationsCsv(sink, rows);
  writeViolationsTable(sink, rows);
  tactus::view::Execution x = makeExecution(s, log, a);
  markViolations(x, rows);
  sink << tactus::view::renderHtml(s, &x);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tactus;
  const Schedule& s = schedule();
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  auto whole = report::parseLog(bytes, "fuzz.tlog");
  if (whole) {
    if (report::checkLogMatches(*whole, s, "log_fuzz.tsched")) analyzeAndWrite(s, *whole);
  } else {
    fuzz::checkMessage(whole.error().message);
  }

  report::LogFile log;
  log.path = "fuzz.tlog";
  log.header = makeEventLogHeader(s.identifier, scheduleContentHash(s));
  std::size_t at = 0;
  if (size >= sizeof log.header.runStartNs) {
    std::memcpy(&log.header.runStartNs, data, sizeof log.header.runStartNs);
    at = sizeof log.header.runStartNs;
  }
  log.records.resize((size - at) / sizeof(EventRecord));
  if (!log.records.empty()) std::memcpy(log.records.data(), data + at, log.records.size() * sizeof(EventRecord));
  analyzeAndWrite(s, log);
  return 0;
}
