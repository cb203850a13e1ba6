// The tactus-report command: argument parsing, loading, and dispatch to the outputs. One path
// serves every run: 1..N schedules (N > 1: a run with a schedule manager) and 1..K event logs
// (K > 1: the masters of one multi-SoC run, merged); a run of one schedule is the case N = 1.
#include "report_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <ostream>
#include <set>

#include <unistd.h>

#include "analysis.hpp"
#include "chains.hpp"
#include "log_merge.hpp"
#include "outputs.hpp"
#include "report_args.hpp"
#include "switch_marks.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "tactus_config.h"
#include "violations.hpp"

namespace tactus::report {
namespace {

using Options = ReportOptions;  // report_args.cpp parses them

// The schedule operand: a file, or standard input for `-`.
Result<Schedule> loadScheduleOperand(const std::string& path) {
  if (path != kStdStream) return loadScheduleFile(path);
  auto text = readInputOperand(path, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  return readSchedule(*text, "stdin");
}

// The log operand: a file, or standard input for `-`.
Result<LogFile> readLogOperand(const std::string& path) {
  if (path != kStdStream) return readLogFile(path);
  auto bytes = readInputOperand(path, "event log", limits::kMaxEventLogBytes);
  if (!bytes) return bytes.error();
  return parseLog(*bytes, "stdin");
}

Result<void> writeFile(const std::string& path, const std::string& text) {
  return writeOutputOperand(path, text, "output file");
}

// Text for a switch record's schedule reference (aux).
std::string scheduleRef(std::uint32_t id) { return id == 0xffffffffu ? std::string("-") : std::to_string(id); }

// Schedule k's file of a per-schedule output (--html, --wcet-out) in a run of several: the first
// schedule's is FILE itself, another's FILE-ID.EXT (FILE-ID without an extension).
std::string perSchedulePath(const std::string& first, std::size_t k, std::uint16_t id) {
  if (k == 0) return first;
  const std::size_t slash = first.rfind('/');
  const std::size_t dot = first.rfind('.');
  const bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return hasExtension ? first.substr(0, dot) + "-" + std::to_string(id) + first.substr(dot)
                      : first + "-" + std::to_string(id);
}

// Writes an output FILE (`-`: `out`) as `write` produces it (a trace of millions of runs is never
// held whole).
template <typename Write>
Result<void> streamOutput(const std::string& path, std::ostream& out, Write write) {
  if (path == kStdStream) {
    out.flush();
    write(out);
    return {};
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return fail(ErrorCode::kIo, path + ": cannot create file");
  write(f);
  f.flush();
  if (!f) return fail(ErrorCode::kIo, path + ": cannot write file");
  return {};
}

// The master's switching-policy decisions (kPolicyDecision records), one line each: the rule's
// number in the policy file, what fired it (hyperepoch and client named from the schedules) and
// the schedule it rolled over to.
std::string formatPolicyDecisions(const LogFile& log, const std::vector<Schedule>& schedules) {
  std::string text;
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kPolicyDecision)) continue;
    const Schedule* sc = scheduleOf(schedules, r.schedule);
    std::string why;
    switch (r.detail) {
      case 1:
        why = "hyperepoch " +
              (sc != nullptr && r.iteration < sc->hyperepochs.size()
                   ? quoted(sc->hyperepochs[HyperepochId{r.iteration}].name)
                   : std::to_string(r.iteration)) +
              " of schedule " + std::to_string(r.schedule) + " overran";
        break;
      case 2: why = "schedule " + std::to_string(r.schedule) + " ran its clean iterations"; break;
      case 3:
        why = "client " +
              (sc != nullptr && r.iteration < sc->clients.size() ? quoted(sc->clients[ClientId{r.iteration}].name)
                                                                 : std::to_string(r.iteration)) +
              " died";
        break;
      default: why = "trigger " + std::to_string(r.detail); break;
    }
    char at[64];
    std::snprintf(at, sizeof at, " (at %.3f ms)", static_cast<double>(r.startNs - log.header.runStartNs) / 1e6);
    text += "  policy rule " + std::to_string(r.instance + 1) + ": " + why +
            (r.aux != 0xffffffffu ? " -> rolled over to schedule " + std::to_string(r.aux) : " -> no switch") + at +
            "\n";
  }
  if (!text.empty()) text = "\nswitching policy decisions (rule = its number in the --policy file):\n" + text;
  return text;
}

// The starts, stops and switches of a run with a schedule manager, with the dead time of each:
// from the last end of a run of the stopped schedule on that hyperepoch (before the start) to the
// started schedule's first release there. A rollover's start pairs with the stop of the same
// request; a plain start with the latest stop before it.
std::string formatSwitches(const LogFile& log, const std::vector<Schedule>& schedules) {
  const auto isStart = [](const EventRecord& r) {
    return r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart);
  };
  const auto isStop = [](const EventRecord& r) {
    return r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStop);
  };
  std::vector<const EventRecord*> events;
  for (const EventRecord& r : log.records) {
    if (isStart(r) || isStop(r)) events.push_back(&r);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const EventRecord* a, const EventRecord* b) { return switchAtNs(*a) < switchAtNs(*b); });
  // The last end of a run of schedule `id`'s hyperepoch `he` at or before `beforeNs`.
  auto lastEnd = [&](std::uint32_t id, HyperepochId he, std::int64_t beforeNs) {
    const Schedule* sc = scheduleOf(schedules, id);
    std::int64_t last = 0;
    if (sc == nullptr) return last;
    for (const EventRecord& r : log.records) {
      const InstanceId instance{r.instance};
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.schedule != id ||
          !sc->instances.contains(instance))
        continue;
      if (r.endNs <= beforeNs && r.endNs > last && instanceHyperepoch(*sc, instance) == he) last = r.endNs;
    }
    return last;
  };
  std::string text =
      "\nschedule starts and stops (per hyperepoch; at = ms from the run start; dead time = from the last end\n"
      "of the stopped schedule's runs there, or the master taking the request if later, to the started\n"
      "schedule's first release there):\n";
  text += "  event  schedule  hyperepoch  iteration  other   at_ms        dead_time_us\n";
  std::vector<std::int64_t> rolloverDead, swapDead;
  char line[200];
  for (std::size_t k = 0; k < events.size(); ++k) {
    const EventRecord& r = *events[k];
    std::string deadText;
    if (isStart(r)) {
      const EventRecord* stop = nullptr;
      for (std::size_t j = k; j-- > 0;) {
        const EventRecord& p = *events[j];
        if (!isStop(p)) continue;
        if (r.aux != 0xffffffffu ? (p.schedule == r.aux && p.startNs == r.startNs) : true) {
          stop = &p;
          break;
        }
      }
      if (stop != nullptr) {
        // A request that came while the stopped schedule was idle counts from when it came.
        const std::int64_t end = std::max(lastEnd(stop->schedule, HyperepochId{stop->instance}, r.endNs), r.startNs);
        if (end > 0) {
          const std::int64_t d = r.endNs - end;
          (r.aux != 0xffffffffu ? rolloverDead : swapDead).push_back(d);
          char b[32];
          std::snprintf(b, sizeof b, "%.1f", static_cast<double>(d) / 1e3);
          deadText = b;
        }
      }
    }
    std::snprintf(line, sizeof line, "  %-5s  %8u  %10u  %9u  %-6s  %-11.3f  %s\n", isStart(r) ? "start" : "stop",
                  static_cast<unsigned>(r.schedule), r.instance, r.iteration, scheduleRef(r.aux).c_str(),
                  static_cast<double>(switchAtNs(r) - log.header.runStartNs) / 1e6, deadText.c_str());
    text += line;
  }
  if (events.empty()) text += "  (none: no schedule was started)\n";
  for (auto* sample : {&rolloverDead, &swapDead}) {
    if (sample->empty()) continue;
    const Quantiles q = summarize(*sample);
    std::snprintf(line, sizeof line, "  %s dead time: %llu switches, median %.1f us, p99 %.1f us, max %.1f us\n",
                  sample == &rolloverDead ? "rollover" : "stop-then-start", static_cast<unsigned long long>(q.count),
                  static_cast<double>(q.medianNs) / 1e3, static_cast<double>(q.p99Ns) / 1e3,
                  static_cast<double>(q.maxNs) / 1e3);
    text += line;
  }
  text += formatPolicyDecisions(log, schedules);
  return text;
}

using Part = ReportPart;
using Inputs = ReportInputs;

// Loads and verifies every schedule operand; their identifiers must differ.
Result<std::vector<Schedule>> loadSchedules(const Options& o) {
  std::vector<Schedule> schedules;
  for (const std::string& path : o.schedules) {
    auto schedule = loadScheduleOperand(path);
    if (!schedule)
      return fail(schedule.error().code,
                  schedule.error().message + (schedules.empty() ? swappedArgumentsHint(o) : std::string()));
    // Every index the report follows must be in range: the verifier checks that (and the rest).
    VerifyOptions vo;
    vo.allowOverlength = true;
    auto verified = verifyScheduleResult(*schedule, vo);
    if (!verified) return fail(ErrorCode::kValidation, path + ": " + verified.error().message);
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      if (schedules[k].identifier == schedule->identifier)
        return fail(ErrorCode::kValidation, o.schedules[k] + " and " + path + " have the same identifier " +
                                                std::to_string(schedule->identifier));
    }
    schedules.push_back(std::move(*schedule));
  }
  return schedules;
}

// Reads the log operands (several: one multi-SoC run's, merged) and checks they are of these
// schedules: the schedule the header names matches its content hash (one schedule: it is that
// one), and a log of several schedules holds records of the given ones only.
Result<LogFile> loadLog(const Options& o, const std::vector<Schedule>& schedules) {
  std::vector<LogFile> logs;
  for (const std::string& path : o.logs) {
    auto log = readLogOperand(path);
    if (!log) return log.error();
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      if (schedules.size() > 1 && schedules[k].identifier != log->header.scheduleIdentifier) continue;
      if (auto matches = checkLogMatches(*log, schedules[k], o.schedules[k]); !matches) return matches.error();
    }
    logs.push_back(std::move(*log));
  }
  Result<LogFile> log = logs.size() > 1 ? mergeSocLogs(std::move(logs)) : Result<LogFile>(std::move(logs[0]));
  if (!log || schedules.size() == 1) return log;
  if (log->header.scheduleCount < 2)
    return fail(ErrorCode::kValidation, log->path + ": the log is of a run of one schedule; give that schedule only");
  std::set<std::uint16_t> known;
  for (const Schedule& sc : schedules) known.insert(sc.identifier);
  for (const EventRecord& r : log->records) {
    if (known.count(r.schedule) == 0)
      return fail(ErrorCode::kValidation, log->path + ": the log has records of schedule " +
                                              std::to_string(r.schedule) + ", which none of the given schedules is");
  }
  return log;
}

// Splits the log per schedule (several), analyzes each part and collects its contract violations;
// warnings go to `err`, naming the schedule when there are several.
void analyzeParts(Inputs& in, std::ostream& err) {
  in.parts.resize(in.schedules.size());
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const Schedule& sc = in.schedules[k];
    Part& part = in.parts[k];
    if (in.several()) {  // the schedule's own records, under a header naming it
      part.own = LogFile{in.log.path, in.log.header, {}, in.log.warnings};
      part.own.header.scheduleIdentifier = sc.identifier;
      part.own.header.scheduleContentHash = scheduleContentHash(sc);
      for (const EventRecord& r : in.log.records) {
        const auto kind = static_cast<EventKind>(r.kind);
        if (r.schedule == sc.identifier && kind != EventKind::kScheduleStart && kind != EventKind::kScheduleStop &&
            kind != EventKind::kPolicyDecision)
          part.own.records.push_back(r);
      }
    }
    const std::string warning =
        "tactus-report: warning: " + (in.several() ? "schedule " + std::to_string(sc.identifier) + ": " : "");
    part.analysis = analyze(sc, in.logOf(k));
    for (const std::string& w : part.analysis.warnings) err << warning << w << "\n";
    std::uint64_t invalid = 0;
    part.violations = collectViolations(sc, in.logOf(k).records, &invalid);
    if (invalid != 0)
      err << warning << invalid << " violation records name an unknown runnable, kind, call or context (ignored)\n";
  }
}

// --json of a run of several schedules: each schedule's statistics as a run of one has them, and
// the switches (at_ns from the run's start).
std::string formatSeveralJson(const Inputs& in) {
  std::string o = "{\"log\":";
  jsonString(o, in.log.path);
  o += ",\"schedules\":[";
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    std::string one = formatJson(in.schedules[k], in.logOf(k), in.parts[k].analysis);
    one.pop_back();  // its newline
    o += (k == 0 ? "" : ",") + one;
  }
  o += "],\"switches\":[";
  bool first = true;
  for (const SwitchMark& m : collectSwitchMarks(in.log, in.schedules)) {
    o += (first ? "{\"at_ns\":" : ",{\"at_ns\":") + std::to_string(m.atNs - in.log.header.runStartNs) +
         ",\"schedule\":" + std::to_string(m.schedule) + ",\"hyperepoch\":" + std::to_string(m.hyperepoch) +
         ",\"text\":";
    jsonString(o, m.text);
    o += "}";
    first = false;
  }
  return o + "]}\n";
}

// The statistics on standard output: --violations, --csv, --json or the text report.
void writeStatistics(const Options& o, const Inputs& in, std::ostream& out) {
  const std::size_t n = in.schedules.size();
  if (o.violations) {  // several: one table, a schedule column last
    for (std::size_t k = 0; k < n; ++k)
      writeViolationsCsv(out, in.parts[k].violations, in.several() ? std::to_string(in.schedules[k].identifier) : "",
                         k == 0);
  } else if (o.csv) {
    std::vector<CsvRow> rows;
    rows.reserve(in.log.records.size());
    for (std::size_t k = 0; k < n; ++k) {
      const Analysis& a = in.parts[k].analysis;
      switch (o.csvTable) {
        case CsvTable::kRuns: appendCsvRows(rows, in.schedules[k], in.logOf(k), a); break;
        case CsvTable::kReleases: appendReleaseCsvRows(rows, in.schedules[k], in.logOf(k), a); break;
        case CsvTable::kChains: appendChainCsvRows(rows, in.schedules[k], a); break;
      }
    }
    writeCsvRows(out, rows,
                 o.csvTable == CsvTable::kRuns       ? kRunsCsvHeader
                 : o.csvTable == CsvTable::kReleases ? kReleasesCsvHeader
                                                     : kChainsCsvHeader);
  } else if (o.json) {
    out << formatReportJson(in);
  } else if (o.statisticsOnStdout) {
    for (std::size_t k = 0; k < n; ++k) {
      if (in.several()) out << "=== " << in.title(k) << " ===\n";
      out << formatText(in.schedules[k], in.logOf(k), in.parts[k].analysis);
      writeViolationsTable(out, in.parts[k].violations);
      if (in.several()) out << "\n";
    }
    if (in.several()) out << formatSwitches(in.log, in.schedules);
  }
}

// --wcet-out: a file per schedule, each for tactus-compile --wcet with that schedule's graph; to
// standard output one after another, each under a `# schedule ...` line.
Result<void> writeWcets(const Options& o, const Inputs& in) {
  std::string all;
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const std::string text = formatWcetFile(in.schedules[k], in.parts[k].analysis, o.percentile, o.margin);
    if (o.wcetOut == kStdStream) {
      all += (in.several() ? "# " + in.title(k) + "\n" : std::string()) + text;
    } else if (auto w = writeFile(perSchedulePath(o.wcetOut, k, in.schedules[k].identifier), text); !w) {
      return w;
    }
  }
  return o.wcetOut == kStdStream ? writeFile(o.wcetOut, all) : Result<void>();
}

// --html: a page per schedule with its violations and every switch of the run marked; to
// standard output one document (several: every schedule's page in it).
Result<void> writeHtmlPages(const Options& o, const Inputs& in) {
  const std::vector<SwitchMark> marks = collectSwitchMarks(in.log, in.schedules);
  std::vector<view::TitledPage> pages;
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const Schedule& sc = in.schedules[k];
    view::Execution execution = makeExecution(sc, in.logOf(k), in.parts[k].analysis);
    markViolations(execution, in.parts[k].violations);
    for (const SwitchMark& m : marks)
      execution.marks.push_back({m.atNs - in.log.header.runStartNs, m.text, m.schedule == sc.identifier});
    if (o.html == kStdStream) pages.push_back({in.title(k), view::renderHtml(sc, &execution)});
    else if (auto w = view::writeHtml(perSchedulePath(o.html, k, sc.identifier), sc, &execution); !w) return w;
  }
  if (pages.size() == 1) return writeFile(o.html, pages[0].html);
  std::string title = "tactus run of schedules";
  for (const Schedule& sc : in.schedules) title += " " + std::to_string(sc.identifier);
  return pages.empty() ? Result<void>() : writeFile(o.html, view::renderPageSet(title, pages));
}

// --fail-on-violation: 1 with a message when any schedule's records hold a contract violation.
int failOnViolations(const Options& o, const Inputs& in, std::ostream& err) {
  std::size_t total = 0;
  std::string each, logs;
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const std::size_t n = countViolations(in.parts[k].violations);
    total += n;
    if (n != 0 && in.several())
      each += (each.empty() ? " (schedule " : ", schedule ") + std::to_string(in.schedules[k].identifier) + ": " +
              std::to_string(n);
  }
  if (total == 0) return 0;
  for (const std::string& path : o.logs) logs += (logs.empty() ? "" : ", ") + path;
  err << "tactus-report: " << total << " contract violations (runnable, kind, call) in " << logs
      << (each.empty() ? "" : each + ")") << "\n";
  return 1;
}

// --fail-on-overrun: 1 with a message when a run took longer than its WCET + EndMonitorThreshold
// (the master's rule, overrun_watch.hpp), a frame was late or a period was skipped.
int failOnOverruns(const Options& o, const Inputs& in, std::ostream& err) {
  std::uint64_t runs = 0, frames = 0, skipped = 0;
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const Schedule& s = in.schedules[k];
    const Analysis& a = in.parts[k].analysis;
    for (RunnableId r : s.runnables.ids()) {
      const RunnableInfo& info = s.runnables[r];
      if (info.wcetNs <= 0) continue;
      const std::int64_t limit = overrunLimitNs(info);
      const std::vector<std::int64_t>& d = a.runnables[r].durations;  // ascending
      runs += static_cast<std::uint64_t>(d.end() - std::upper_bound(d.begin(), d.end(), limit));
    }
    frames += a.overrunRecords;
    for (HyperepochId he : s.hyperepochs.ids()) skipped += a.hyperepochs[he].skippedPeriods;
  }
  if (runs + frames + skipped == 0) return 0;
  std::string logs;
  for (const std::string& path : o.logs) logs += (logs.empty() ? "" : ", ") + path;
  err << "tactus-report: the run overran (" << logs << "): " << runs << " runs beyond WCET + EndMonitorThreshold, "
      << frames << " frames late, " << skipped << " periods skipped\n";
  return 1;
}

// --fail-on-chain-miss: 1 when a chain occurrence of any schedule exceeded its planned bound or its
// requirement; names the first kMaxNamed of them (chain, iterations, measured against the bound),
// then a count per chain.
int failOnChainMisses(const Options& o, const Inputs& in, std::ostream& err) {
  constexpr std::size_t kMaxNamed = 20;
  std::size_t total = 0;
  std::string counts;
  for (std::size_t k = 0; k < in.schedules.size(); ++k) {
    const Schedule& s = in.schedules[k];
    const std::string where = in.several() ? "schedule " + std::to_string(s.identifier) + ": " : "";
    const std::vector<ChainMiss> misses = chainMisses(s, in.parts[k].analysis);
    for (const ChainMiss& m : misses)
      if (total++ < kMaxNamed) err << "tactus-report: " << where << describeChainMiss(s, m) << "\n";
    for (std::size_t c = 0; c < s.chains.size(); ++c) {
      std::size_t reactions = 0, ages = 0;
      for (const ChainMiss& m : misses)
        if (m.chain == c) ++(m.reaction ? reactions : ages);
      if (reactions + ages != 0)
        counts += (counts.empty() ? "" : ", ") + where + quoted(s.chains[c].name) + ": reactions " +
                  std::to_string(reactions) + ", data ages " + std::to_string(ages);
    }
  }
  if (total == 0) return 0;
  if (total > kMaxNamed) err << "tactus-report: ... and " << total - kMaxNamed << " more\n";
  std::string logs;
  for (const std::string& path : o.logs) logs += (logs.empty() ? "" : ", ") + path;
  err << "tactus-report: " << total << " chain occurrences over their planned bound or requirement in " << logs << " ("
      << counts << ")\n";
  return 1;
}

// Without a log: the plan of the schedule alone, as HTML and as a trace.
Result<void> writePlan(const Options& o, const Schedule& schedule, std::ostream& out) {
  if (!o.html.empty()) {
    auto w = o.html == kStdStream ? writeFile(o.html, view::renderHtml(schedule)) : view::writeHtml(o.html, schedule);
    if (!w) return w;
  }
  if (o.traceOut.empty()) return {};
  return streamOutput(o.traceOut, out, [&](std::ostream& f) { writeTrace(f, schedule, nullptr, nullptr); });
}

int report(const Options& o, std::ostream& out, std::ostream& err) {
  auto fatal = [&](const Error& e) {
    err << "tactus-report: " << e.message << "\n";
    return 1;
  };
  Inputs in;
  auto schedules = loadSchedules(o);
  if (!schedules) return fatal(schedules.error());
  in.schedules = std::move(*schedules);
  in.origins = o.schedules;
  if (o.logs.empty()) {
    auto w = writePlan(o, in.schedules[0], out);
    return w ? 0 : fatal(w.error());
  }
  auto log = loadLog(o, in.schedules);
  if (!log) return fatal(log.error());
  in.log = std::move(*log);
  analyzeParts(in, err);
  writeStatistics(o, in, out);
  if (!o.wcetOut.empty()) {
    if (auto w = writeWcets(o, in); !w) return fatal(w.error());
  }
  if (!o.traceOut.empty()) {
    auto w = streamOutput(o.traceOut, out, [&](std::ostream& f) {
      if (in.several()) writeManagedTrace(f, in.log, in.schedules);
      else writeTrace(f, in.schedules[0], &in.log, &in.parts[0].analysis);
    });
    if (!w) return fatal(w.error());
  }
  if (!o.html.empty()) {
    if (auto w = writeHtmlPages(o, in); !w) return fatal(w.error());
  }
  const int violations = o.failOnViolation ? failOnViolations(o, in, err) : 0;
  const int overruns = o.failOnOverrun ? failOnOverruns(o, in, err) : 0;
  const int chains = o.failOnChainMiss ? failOnChainMisses(o, in, err) : 0;
  return std::max({violations, overruns, chains});
}

// The command without the final check of `out`.
int dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto options = parseReportArgs(args);
  if (!options) {
    err << "tactus-report: " << options.error().message << "\n(try 'tactus-report --help')\n";
    return 2;
  }
  if (options->help) {
    out << reportUsage();
    return 0;
  }
  if (options->version) {
    out << "tactus-report " << TACTUS_VERSION << " (event log version " << kEventLogVersion << ")\n";
    return 0;
  }
  try {
    return report(*options, out, err);
  } catch (const std::bad_alloc&) {
    // Every table is sized by the limits and by the records; this is a machine short of memory.
    err << "tactus-report: out of memory reading " << (options->logs.empty() ? "" : options->logs[0] + " with ")
        << options->schedules[0] << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Allocation failure on a huge input, or a stream error: report, never crash.
    err << "tactus-report: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

FdOutputBuffer::FdOutputBuffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool FdOutputBuffer::drain() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return error_ == 0;
}

FdOutputBuffer::int_type FdOutputBuffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

int FdOutputBuffer::sync() { return drain() ? 0 : -1; }

Result<ReportInputs> loadReportInputs(const ReportOptions& o, std::ostream& err) {
  Inputs in;
  auto schedules = loadSchedules(o);
  if (!schedules) return schedules.error();
  in.schedules = std::move(*schedules);
  in.origins = o.schedules;
  if (o.logs.empty()) return fail(ErrorCode::kBadParameter, "no event log given");
  auto log = loadLog(o, in.schedules);
  if (!log) return log.error();
  in.log = std::move(*log);
  analyzeParts(in, err);
  return in;
}

std::string formatReportJson(const ReportInputs& in) {
  return in.several() ? formatSeveralJson(in) : formatJson(in.schedules[0], in.log, in.parts[0].analysis);
}

int runReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int code = dispatch(args, out, err);
  // The report is only delivered once flushed: a full disk or a closed pipe is an error.
  errno = 0;
  out.flush();
  const auto* fdBuffer = dynamic_cast<const FdOutputBuffer*>(out.rdbuf());
  const int error = fdBuffer != nullptr ? fdBuffer->error() : errno;
  if (!out) {
    err << "tactus-report: cannot write to standard output: " << (error != 0 ? std::strerror(error) : "write error")
        << "\n";
    if (code == 0) code = 1;
  }
  return code;
}

}  // namespace tactus::report
