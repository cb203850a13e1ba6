// The tactus-report command: argument parsing, loading, and dispatch to the outputs.
#include "report_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <ostream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "analysis.hpp"
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

// The HTML page of schedule `id` in a run of several: FILE.html -> FILE-ID.html (FILE -> FILE-ID).
std::string htmlPathFor(const std::string& first, std::uint16_t id) {
  const std::size_t slash = first.rfind('/');
  const std::size_t dot = first.rfind('.');
  const bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return hasExtension ? first.substr(0, dot) + "-" + std::to_string(id) + first.substr(dot)
                      : first + "-" + std::to_string(id);
}

// The master's switching-policy decisions (kPolicyDecision records), one line each: the rule's
// number in the policy file, what fired it (hyperepoch and client named from the schedules) and
// the schedule it rolled over to.
std::string formatPolicyDecisions(const LogFile& log, const std::vector<Schedule>& schedules) {
  std::string text;
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kPolicyDecision)) continue;
    const Schedule* sc = nullptr;
    for (const Schedule& s : schedules) {
      if (s.identifier == r.schedule) sc = &s;
    }
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
                   [](const EventRecord* a, const EventRecord* b) { return a->endNs < b->endNs; });
  auto scheduleOf = [&](std::uint32_t id) -> const Schedule* {
    for (const Schedule& sc : schedules) {
      if (sc.identifier == id) return &sc;
    }
    return nullptr;
  };
  // The last end of a run of schedule `id`'s hyperepoch `he` at or before `beforeNs`.
  auto lastEnd = [&](std::uint32_t id, HyperepochId he, std::int64_t beforeNs) {
    const Schedule* sc = scheduleOf(id);
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
                  static_cast<double>(r.endNs - log.header.runStartNs) / 1e6, deadText.c_str());
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

// LOG A.tsched B.tsched ...: a run with a schedule manager, analyzed per schedule.
int runSeveral(const Options& o, std::ostream& out, std::ostream& err) {
  auto fatal = [&](const Error& e) {
    err << "tactus-report: " << e.message << "\n";
    return 1;
  };
  std::vector<Schedule> schedules;
  for (const std::string& path : o.schedules) {
    auto schedule = loadScheduleOperand(path);
    if (!schedule) return fatal(schedule.error());
    VerifyOptions vo;
    vo.allowOverlength = true;
    auto verified = verifyScheduleResult(*schedule, vo);
    if (!verified) return fatal(fail(ErrorCode::kValidation, path + ": " + verified.error().message));
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      if (schedules[k].identifier == schedule->identifier) {
        return fatal(fail(ErrorCode::kValidation, o.schedules[k] + " and " + path + " have the same identifier " +
                                                      std::to_string(schedule->identifier)));
      }
    }
    schedules.push_back(std::move(*schedule));
  }
  auto log = readLogOperand(o.log);
  if (!log) return fatal(log.error());
  if (log->header.scheduleCount < 2 && schedules.size() > 1) {
    return fatal(
        fail(ErrorCode::kValidation, o.log + ": the log is of a run of one schedule; give that schedule only"));
  }
  std::set<std::uint16_t> known;
  for (const Schedule& sc : schedules) known.insert(sc.identifier);
  for (const EventRecord& r : log->records) {
    if (known.count(r.schedule) == 0) {
      return fatal(fail(ErrorCode::kValidation, o.log + ": the log has records of schedule " +
                                                    std::to_string(r.schedule) +
                                                    ", which none of the given schedules is"));
    }
  }
  const std::vector<SwitchMark> marks = collectSwitchMarks(*log, schedules);
  std::vector<CsvRow> rows;
  std::vector<view::TitledPage> stdoutPages;
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    const Schedule& sc = schedules[k];
    LogFile part = *log;
    part.records.clear();
    for (const EventRecord& r : log->records) {
      if (r.schedule == sc.identifier && r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStart) &&
          r.kind != static_cast<std::uint16_t>(EventKind::kScheduleStop) &&
          r.kind != static_cast<std::uint16_t>(EventKind::kPolicyDecision)) {
        part.records.push_back(r);
      }
    }
    if (sc.identifier == log->header.scheduleIdentifier) {
      if (auto matches = checkLogMatches(*log, sc, o.schedules[k]); !matches) return fatal(matches.error());
    }
    const Analysis analysis = analyze(sc, part);
    for (const std::string& w : analysis.warnings)
      err << "tactus-report: warning: schedule " << sc.identifier << ": " << w << "\n";
    if (!o.html.empty()) {  // one page per schedule, each marking every switch of the run
      view::Execution execution = makeExecution(sc, part, analysis);
      for (const SwitchMark& m : marks) {
        execution.marks.push_back({m.atNs - log->header.runStartNs, m.text, m.schedule == sc.identifier});
      }
      if (o.html == kStdStream) {  // one document on standard output, every schedule's page in it
        stdoutPages.push_back(
            {"schedule " + std::to_string(sc.identifier) + " " + quoted(sc.name) + " (" + o.schedules[k] + ")",
             view::renderHtml(sc, &execution)});
      } else if (auto w = view::writeHtml(k == 0 ? o.html : htmlPathFor(o.html, sc.identifier), sc, &execution); !w) {
        return fatal(w.error());
      }
    }
    if (o.csv) {
      appendCsvRows(rows, sc, part, analysis);
    } else if (o.statisticsOnStdout) {
      out << "=== schedule " << sc.identifier << " " << quoted(sc.name) << " (" << o.schedules[k] << ") ===\n";
      out << formatText(sc, part, analysis) << "\n";
    }
  }
  if (!o.traceOut.empty()) {
    std::ostringstream t;
    writeManagedTrace(t, *log, schedules);
    if (o.traceOut == kStdStream) {
      out << t.str();
      return 0;
    }
    if (auto w = writeFile(o.traceOut, t.str()); !w) return fatal(w.error());
  }
  if (!stdoutPages.empty()) {
    std::string title = "tactus run of schedules";
    for (const Schedule& sc : schedules) title += " " + std::to_string(sc.identifier);
    if (auto w = writeFile(o.html, view::renderPageSet(title, stdoutPages)); !w) return fatal(w.error());
  }
  if (o.csv) {
    writeCsvRows(out, rows);
  } else if (o.statisticsOnStdout) {
    out << formatSwitches(*log, schedules);
  }
  return 0;
}

int run(const Options& o, std::ostream& out, std::ostream& err) {
  if (o.schedules.size() > 1) return runSeveral(o, out, err);
  auto fatal = [&](const Error& e) {
    err << "tactus-report: " << e.message << "\n";
    return 1;
  };
  auto schedule = loadScheduleOperand(o.schedule);
  if (!schedule) return fatal(fail(schedule.error().code, schedule.error().message + swappedArgumentsHint(o)));
  // Every index the report follows must be in range: the verifier checks that (and the rest).
  VerifyOptions vo;
  vo.allowOverlength = true;
  auto verified = verifyScheduleResult(*schedule, vo);
  if (!verified) return fatal(fail(ErrorCode::kValidation, o.schedule + ": " + verified.error().message));

  if (o.log.empty()) {
    if (!o.html.empty()) {
      auto w =
          o.html == kStdStream ? writeFile(o.html, view::renderHtml(*schedule)) : view::writeHtml(o.html, *schedule);
      if (!w) return fatal(w.error());
    }
    if (!o.traceOut.empty()) {
      std::ostringstream t;
      writeTrace(t, *schedule, nullptr, nullptr);
      auto w = writeFile(o.traceOut, t.str());
      if (!w) return fatal(w.error());
    }
    return 0;
  }

  auto log = readLogOperand(o.log);
  if (!log) return fatal(log.error());
  if (o.logs.size() > 1) {  // a multi-SoC run: every SoC's master's log, merged (log_merge.hpp)
    std::vector<LogFile> all;
    for (const std::string& path : o.logs) {
      auto one = readLogOperand(path);
      if (!one) return fatal(one.error());
      if (auto ok = checkLogMatches(*one, *schedule, o.schedule); !ok) return fatal(ok.error());
      all.push_back(std::move(*one));
    }
    log = mergeSocLogs(std::move(all));
    if (!log) return fatal(log.error());
  }
  auto matches = checkLogMatches(*log, *schedule, o.schedule);
  if (!matches) return fatal(matches.error());
  const Analysis analysis = analyze(*schedule, *log);
  for (const std::string& w : analysis.warnings) err << "tactus-report: warning: " << w << "\n";

  std::uint64_t invalidViolations = 0;
  const std::vector<ViolationRow> violations = collectViolations(*schedule, log->records, &invalidViolations);
  if (invalidViolations != 0)
    err << "tactus-report: warning: " << invalidViolations
        << " violation records name an unknown runnable, kind, call or context (ignored)\n";

  if (o.violations) writeViolationsCsv(out, violations);
  else if (o.csv) writeCsv(out, *schedule, *log, analysis);
  else if (o.json) out << formatJson(*schedule, *log, analysis);
  else if (o.statisticsOnStdout) {
    out << formatText(*schedule, *log, analysis);
    writeViolationsTable(out, violations);
  }

  if (!o.wcetOut.empty()) {
    auto w = writeFile(o.wcetOut, formatWcetFile(*schedule, analysis, o.percentile, o.margin));
    if (!w) return fatal(w.error());
  }
  if (o.traceOut == kStdStream) {
    out.flush();
    out << [&] {
      std::ostringstream t;
      writeTrace(t, *schedule, &*log, &analysis);
      return t.str();
    }();
  } else if (!o.traceOut.empty()) {
    std::ofstream f(o.traceOut, std::ios::binary | std::ios::trunc);
    if (!f) return fatal(fail(ErrorCode::kIo, o.traceOut + ": cannot create file"));
    writeTrace(f, *schedule, &*log, &analysis);
    f.flush();
    if (!f) return fatal(fail(ErrorCode::kIo, o.traceOut + ": cannot write file"));
  }
  if (!o.html.empty()) {
    view::Execution execution = makeExecution(*schedule, *log, analysis);
    markViolations(execution, violations);
    auto w = o.html == kStdStream ? writeFile(o.html, view::renderHtml(*schedule, &execution))
                                  : view::writeHtml(o.html, *schedule, &execution);
    if (!w) return fatal(w.error());
  }
  if (o.failOnViolation && countViolations(violations) != 0) {
    err << "tactus-report: " << countViolations(violations) << " contract violations (runnable, kind, call) in "
        << o.log << "\n";
    return 1;
  }
  return 0;
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
    return run(*options, out, err);
  } catch (const std::bad_alloc&) {
    // Every table is sized by the limits and by the records; this is a machine short of memory.
    err << "tactus-report: out of memory reading " << (options->log.empty() ? "" : options->log + " with ")
        << options->schedule << "\n";
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
