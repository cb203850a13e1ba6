// tactus-report's command line (see report_args.hpp), on the tools' one parser.
#include "report_args.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "tactus/core/event_log.hpp"
#include "tactus/core/text.hpp"

namespace tactus::report {

namespace {

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"json",
       0,
       "",
       "print the statistics as JSON (times in ns) instead of text (several schedules: {\"log\", \"schedules\": one "
       "object each, \"switches\"})",
       {}},
      {"csv",
       0,
       "",
       "print the raw runs as CSV instead:\n"
       "frame,hyperepoch,epoch,client,runnable,resource,start_ns,end_ns,schedule\n"
       "(frame within the hyperepoch iteration, hyperepoch = iteration number,\n"
       "epoch = Hyperepoch.Epoch, resource = the hardware resource,\n"
       "schedule = the schedule's identifier)",
       {}},
      {"csv-of",
       0,
       "TABLE",
       "--csv, of another table (TABLE: runs, releases or chains):\n"
       "releases: iteration,epoch,frame,ideal_ns,actual_ns,late_ns,schedule\n"
       "  (one row per frame release; late_ns = actual - ideal)\n"
       "chains: chain,measure,source_client,source_runnable,source_iteration,source_frame,\n"
       "  last_client,last_runnable,last_iteration,last_frame,release_ns,end_ns,value_ns,\n"
       "  planned_ns,required_ns,schedule\n"
       "  (one row per chain occurrence: measure = reaction or age, value_ns = end - release,\n"
       "  planned_ns = the compiler's bound, required_ns = MaxReaction/MaxAge or empty)",
       {}},
      {"violations",
       0,
       "",
       "print the contract violations tactus-check logged as CSV instead:\n"
       "runnable,kind,call,count,first_site (the header alone when none; several schedules: and schedule)",
       {}},
      {"fail-on-violation", 0, "", "exit with 1 when the log holds any contract violation (for CI)", {}},
      {"fail-on-overrun",
       0,
       "",
       "exit with 1 when a run took longer than its WCET + EndMonitorThreshold, a frame was late or\n"
       "a period was skipped (for CI; the master's --fail-on-overrun judges the same)",
       {}},
      {"fail-on-chain-miss",
       0,
       "",
       "exit with 1 when a chain's measured reaction or data age exceeded its planned bound\n"
       "(allowance included) or its MaxReaction / MaxAge, naming each (for CI)",
       {}},
      {"wcet-out",
       0,
       "FILE",
       "write measured WCETs (`Client.Runnable: ns`) for tactus-compile --wcet (several schedules: one file each, "
       "FILE and FILE-ID.EXT, for its graph; to - each under a `# schedule` line)",
       {}},
      {"wcet-percentile", 0, "P", "percentile of the measured durations used for them (default 99)", {}},
      {"wcet-margin", 0, "X", "factor applied to it (default 1.2)", {}},
      {"html",
       0,
       "FILE",
       "write the graph, the plan and the executed iterations as one HTML file (several schedules: one page each, FILE "
       "and FILE-ID.html, marking every switch)",
       {}},
      {"trace-out", 0, "FILE", "write a Chrome trace (open in Perfetto or chrome://tracing)", {}},
      {"schedule", 's', "FILE", "the schedule file (instead of the second argument)", {}},
      {"version", 'V', "", "print the version and exit", {}},
      {"help", 'h', "", "print this help and exit", {}},
  };
  return kSpecs;
}

Result<double> parseNumber(const std::string& option, const std::string& v, double lo, double hi) {
  double x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || !(x >= lo && x <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "%g..%g", lo, hi);
    return fail(ErrorCode::kBadParameter, "option " + option + ": '" + v + "' is not a number in " + range);
  }
  return x;
}

// The first bytes of a file ("" when unreadable or standard input).
std::string head(const std::string& path, std::size_t n) {
  if (path.empty() || path == kStdStream) return "";
  std::ifstream f(path, std::ios::binary);
  std::string bytes(n, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<std::size_t>(f.gcount()));
  return bytes;
}

bool looksLikeLog(const std::string& path) {
  const std::string h = head(path, sizeof kEventLogMagic);
  return h.size() == sizeof kEventLogMagic && std::memcmp(h.data(), kEventLogMagic, sizeof kEventLogMagic) == 0;
}

bool looksLikeSchedule(const std::string& path) { return head(path, 16).rfind("tactus-schedule ", 0) == 0; }

}  // namespace

std::string reportUsage() {
  return "usage: tactus-report LOG [LOG...] SCHEDULE [SCHEDULE...] [options]\n"
         "       tactus-report --schedule SCHEDULE [--html FILE] [--trace-out FILE]   (the plan alone)\n"
         "       tactus-report --recording DIR [--export-channel NAME --export-dir OUT]   (a recording)\n"
         "                     [--merged-releases FILE]   (every SoC's releases on the primary's clock, CSV)\n"
         "       tactus-report --compare-recordings A B   (exit 0 same, 1 different, 2 unreadable)\n"
         "\n"
         "Statistics of a run from the event log tactus-master wrote (-l) and the schedule file it ran:\n"
         "per runnable, epoch frame, resource, client and hyperepoch (durations, start jitter against the\n"
         "plan, overruns against WCET and Monitor/EndMonitorThreshold budgets, deadline misses, skipped\n"
         "frames, busy and idle time against the plan). Several logs are those of every SoC's master of one\n"
         "multi-SoC run, merged. A log of a master with a schedule manager (-N) takes every schedule of\n"
         "the run: every output per schedule, then the starts, stops and switches with their dead time.\n"
         "One LOG or SCHEDULE may be - (standard input); an output FILE may be - (standard output; the\n"
         "statistics are then not printed).\n"
         "Options take --name=value or --name value.\n"
         "\n"
         "options:\n" +
         optionsHelp(specs()) +
         "\n"
         "exit status: 0 success, 1 unreadable or mismatched input (or a violation with\n"
         "--fail-on-violation, an overrun with --fail-on-overrun, a chain over its bound with\n"
         "--fail-on-chain-miss), 2 bad command line\n";
}

Result<ReportOptions> parseReportArgs(const std::vector<std::string>& args) {
  auto line = parseCommandLine(specs(), args);
  if (!line) return line.error();
  ReportOptions o;
  std::string scheduleOption;  // --schedule
  for (const ParsedOption& p : line->options) {
    if (p.name == "help") o.help = true;
    else if (p.name == "version") o.version = true;
    else if (p.name == "json") o.json = true;
    else if (p.name == "csv") o.csv = true;
    else if (p.name == "csv-of") {
      o.csv = true;
      if (p.value == "runs") o.csvTable = CsvTable::kRuns;
      else if (p.value == "releases") o.csvTable = CsvTable::kReleases;
      else if (p.value == "chains") o.csvTable = CsvTable::kChains;
      else return fail(ErrorCode::kBadParameter, p.spelled + " takes runs, releases or chains, not " + quoted(p.value));
    } else if (p.name == "violations") o.violations = true;
    else if (p.name == "fail-on-violation") o.failOnViolation = true;
    else if (p.name == "fail-on-overrun") o.failOnOverrun = true;
    else if (p.name == "fail-on-chain-miss") o.failOnChainMiss = true;
    else if (p.name == "wcet-out") o.wcetOut = p.value;
    else if (p.name == "html") o.html = p.value;
    else if (p.name == "trace-out") o.traceOut = p.value;
    else if (p.name == "schedule") scheduleOption = p.value;
    else if (p.name == "wcet-percentile" || p.name == "wcet-margin") {
      const bool percentile = p.name == "wcet-percentile";
      auto x = percentile ? parseNumber(p.spelled, p.value, 1, 100) : parseNumber(p.spelled, p.value, 0.1, 100);
      if (!x) return x.error();
      (percentile ? o.percentile : o.margin) = *x;
    }
  }
  if (o.help || o.version) return o;
  std::vector<std::string> positional = line->operands;
  // LOG LOG... SCHEDULE: the logs of one multi-SoC run (told from schedules by their contents).
  while (positional.size() >= 3 && looksLikeLog(positional[1])) {
    if (o.logs.empty()) o.logs.push_back(positional[0]);
    o.logs.push_back(positional[1]);
    positional.erase(positional.begin() + 1);
  }
  if (positional.size() >= 2 && !scheduleOption.empty())
    return fail(ErrorCode::kBadParameter, "the schedule is given twice");
  if (positional.size() == 1 && scheduleOption.empty())
    return fail(ErrorCode::kBadParameter, "no schedule file: give LOG SCHEDULE");
  if (positional.empty() && scheduleOption.empty())
    return fail(ErrorCode::kBadParameter, "no schedule file: give LOG SCHEDULE or --schedule FILE");
  if (positional.size() >= 2) o.schedules.assign(positional.begin() + 1, positional.end());
  else o.schedules = {scheduleOption};
  if (o.logs.empty() && !positional.empty()) o.logs = {positional[0]};
  if (std::count(o.logs.begin(), o.logs.end(), kStdStream) +
          std::count(o.schedules.begin(), o.schedules.end(), kStdStream) >
      1)
    return fail(ErrorCode::kBadParameter, "the log and the schedule cannot both come from standard input (-)");
  if (o.json && o.csv) return fail(ErrorCode::kBadParameter, "--json and --csv exclude each other");
  if (o.violations && (o.json || o.csv))
    return fail(ErrorCode::kBadParameter, "--violations excludes --json and --csv");
  if (o.logs.empty() && (o.violations || o.failOnViolation || o.failOnOverrun || o.failOnChainMiss))
    return fail(ErrorCode::kBadParameter,
                "--violations, --fail-on-violation, --fail-on-overrun and --fail-on-chain-miss need an event log");
  if (o.logs.empty() && (o.json || o.csv || !o.wcetOut.empty()))
    return fail(ErrorCode::kBadParameter, "--json, --csv and --wcet-out need an event log");
  if (o.logs.empty() && o.html.empty() && o.traceOut.empty())
    return fail(ErrorCode::kBadParameter, "without a log, give --html FILE or --trace-out FILE");
  int onStdout = 0;
  for (const std::string* out : {&o.wcetOut, &o.html, &o.traceOut}) onStdout += *out == kStdStream ? 1 : 0;
  if (onStdout > 1) return fail(ErrorCode::kBadParameter, "only one output can go to standard output (-)");
  if (onStdout == 1) {
    if (o.json || o.csv)
      return fail(ErrorCode::kBadParameter, "--json or --csv and an output to - both want standard output");
    o.statisticsOnStdout = false;
  }
  return o;
}

std::string swappedArgumentsHint(const ReportOptions& o) {
  const std::string& schedule = o.schedules.front();
  const std::string log = o.logs.empty() ? "" : o.logs.front();
  const bool scheduleIsLog = looksLikeLog(schedule);
  const bool logIsSchedule = looksLikeSchedule(log);
  if (!scheduleIsLog && !logIsSchedule) return "";
  std::string what;
  if (scheduleIsLog) what = schedule + " is an event log";
  if (logIsSchedule) what += (what.empty() ? "" : " and ") + log + " a schedule";
  return " (the arguments look swapped: " + what + "; the order is tactus-report LOG SCHEDULE)";
}

}  // namespace tactus::report
