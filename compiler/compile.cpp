// The compile driver and the tactus-compile command line.
#include "compile.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>

#include "compile_args.hpp"
#include "graph_parser.hpp"
#include "scheduler.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "tactus_config.h"
#include "wcet_file.hpp"

namespace tactus::compiler {

std::string defaultOutputPath(const std::string& input) {
  std::size_t slash = input.find_last_of('/');
  std::size_t dot = input.find_last_of('.');
  std::string stem =
      (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) ? input.substr(0, dot) : input;
  return stem + kScheduleFileExtension;
}

Result<CompileOutcome> compileFile(const CompileOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto stepStart = started;
  std::vector<std::pair<std::string, double>> steps;
  auto endStep = [&](const char* name) {
    const auto now = Clock::now();
    steps.emplace_back(name, std::chrono::duration<double, std::milli>(now - stepStart).count());
    stepStart = now;
  };

  // `-i -`: the graph from standard input (command_line.cpp), named `stdin` in messages.
  auto graphText = readInputOperand(options.input, "graph file", kMaxGraphFileBytes);
  if (!graphText) return graphText.error();
  auto graph = parseGraph(*graphText, options.input == kStdStream ? "stdin" : options.input);
  if (!graph) return graph.error();
  if (!options.wcetPath.empty()) {  // `--wcet -`: from standard input (not with `-i -`: compile_args.cpp)
    auto applied = applyWcetFileFromPath(*graph, options.wcetPath);
    if (!applied) return applied.error();
  }
  graph->crossSocLatencyNs = options.crossSocLatencyNs;
  endStep("parse");
  ScheduleOptions so;
  so.timeBudgetSeconds = options.timeBudgetSeconds;
  so.searchSteps = options.searchSteps;
  so.workers = options.workers;
  so.allowOverlength = options.allowOverlength;
  so.fusion = options.fusion;
  so.fusionThresholdNs = options.fusionThresholdNs;
  if (options.progress != nullptr) so.progress = searchProgressPrinter(*options.progress);  // compile_args.cpp
  SearchInfo searchInfo;
  auto schedule = scheduleGraph(*graph, so, &searchInfo);
  if (!schedule) return schedule.error();
  endStep("schedule");

  VerifyOptions vo;
  vo.allowOverlength = options.allowOverlength;
  VerifyReport verified = verifySchedule(*schedule, vo);
  if (!verified.ok()) {
    // The scheduler made a schedule that breaks an invariant: our bug, stated in full.
    std::string msg = options.input + ": internal error: the computed schedule fails verification:";
    for (const std::string& e : verified.errors) msg += "\n  " + e;
    return fail(ErrorCode::kInternal, msg);
  }
  endStep("verify");

  CompileOutcome outcome;
  outcome.report = buildReport(*graph, *schedule, &searchInfo);
  outcome.warnings = std::move(verified.warnings);
  outcome.outputPath = options.output.empty() ? defaultOutputPath(options.input) : options.output;
  outcome.schedule = std::move(*schedule);
  outcome.report.compileTimeMs = std::chrono::duration<double, std::milli>(Clock::now() - started).count();

  if (outcome.outputPath == kStdStream) {  // `-o -`: standard output
    auto written = writeOutputOperand(outcome.outputPath, writeSchedule(outcome.schedule), "schedule file");
    if (!written) return written.error();
    outcome.contentHash = scheduleContentHash(outcome.schedule);
  } else {
    auto saved = saveScheduleFile(outcome.schedule, outcome.outputPath);
    if (!saved) return saved.error();
    outcome.contentHash = *saved;
  }
  if (!options.reportJsonPath.empty()) {
    auto written = writeOutputOperand(options.reportJsonPath, reportJson(outcome.report), "report file");
    if (!written) return written.error();
  }
  if (!options.htmlPath.empty()) {  // `--html -`: standard output
    auto written = writeOutputOperand(options.htmlPath, view::renderHtml(outcome.schedule), "html file");
    if (!written) return written.error();
  }
  endStep("write");
  outcome.stepMs = std::move(steps);
  return outcome;
}

std::string timelinesText(const Schedule& schedule, std::size_t maxPerResource) {
  std::string out;
  for (const TimelineInfo& t : schedule.timelines) {
    out += "  " + schedule.resources[t.resource].name + ":";
    std::size_t shown = 0;
    for (InstanceId i : t.instances) {
      if (shown++ == maxPerResource) {
        out += " ... (" + std::to_string(t.instances.size() - maxPerResource) + " more)";
        break;
      }
      const InstanceInfo& in = schedule.instances[i];
      out += (shown > 1 ? ", " : " ") + qualifiedName(schedule, in.runnable) + " f" + std::to_string(in.frame) + " " +
             humanDuration(in.startNs) + ".." + humanDuration(in.endNs);
    }
    out += "\n";
  }
  return out;
}

namespace {
int compileAndReport(const CompileOptions& options, std::ostream& out, std::ostream& err);
}  // namespace

int runCompileCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CompileOptions options;
  auto action = parseCompileArgs(args, options);
  if (!options.quiet) options.progress = &err;
  if (!action) {
    err << "tactus-compile: " << action.error().message << "\n(try 'tactus-compile --help')\n";
    return 2;
  }
  if (*action == CompileAction::kHelp) {
    out << compileUsage();
    return 0;
  }
  if (*action == CompileAction::kVersion) {
    out << "tactus-compile " << TACTUS_VERSION << " (schedule file format " << kScheduleFormatVersionOneSoc << "; "
        << kScheduleFormatVersionMultiSoc << " for multi-SoC schedules, " << kScheduleFormatVersionSocLatency
        << " with a transfer time per SoC pair, " << kScheduleFormatVersionGpu << " with GPU work)\n";
    return 0;
  }
  // Out of memory anywhere (reading, scheduling in any search worker, writing, the report) ends
  // with a message naming the input and exit status 1, like any graph that cannot be compiled.
  try {
    return compileAndReport(options, out, err);
  } catch (const std::bad_alloc&) {
    err << "tactus-compile: " << options.input << ": out of memory\n";
  } catch (const std::exception& e) {
    err << "tactus-compile: " << options.input << ": internal error: " << e.what() << "\n";
  }
  return 1;
}

namespace {

// Compiles and prints the report (runCompileCommand after the command line); the exit status.
int compileAndReport(const CompileOptions& options, std::ostream& stdOut, std::ostream& err) {
  // With an output on standard output (`-o -`, `-k -`, `--html -`) the report goes to standard error.
  const bool stdoutTaken =
      options.output == kStdStream || options.reportJsonPath == kStdStream || options.htmlPath == kStdStream;
  std::ostream& out = stdoutTaken ? err : stdOut;
  Result<CompileOutcome> outcome = compileFile(options);
  if (!outcome) {
    err << "tactus-compile: " << outcome.error().message << "\n";
    return 1;
  }
  for (const std::string& w : outcome->warnings) err << "tactus-compile: warning: " << w << "\n";
  if (options.verbose) {
    for (const auto& [step, ms] : outcome->stepMs) {
      char line[96];
      std::snprintf(line, sizeof line, "tactus-compile: %-8s %10.3f ms\n", step.c_str(), ms);
      out << line;
    }
    out << "planned timelines (hyperepoch time):\n" << timelinesText(outcome->schedule, 12);
  }
  out << reportText(outcome->report);
  out << "wrote " << operandName(outcome->outputPath, true) << " (schedule '" << outcome->schedule.name << "', "
      << outcome->schedule.instances.size() << " instances, content hash " << hashToHex(outcome->contentHash) << ")\n";
  out.flush();
  if (!out) {
    err << "tactus-compile: cannot write the report to standard output\n";
    return 1;
  }
  return 0;
}

}  // namespace

}  // namespace tactus::compiler
