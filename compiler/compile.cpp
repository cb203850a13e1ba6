// The compile driver and the tactus-compile command line.
#include "compile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "chain_search.hpp"
#include "channel_analysis.hpp"
#include "compare.hpp"
#include "compile_args.hpp"
#include "fit_diagnosis.hpp"
#include "graph/warnings.hpp"
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

namespace {

// The input as messages name it.
std::string inputName(const CompileOptions& options) {
  return options.input == kStdStream ? std::string("stdin") : options.input;
}

// `-k` and `--html`, when asked for.
Result<void> writeDiagnostics(const CompileOptions& options, const CompileReport& report, const Schedule& schedule) {
  if (!options.reportJsonPath.empty()) {
    auto written = writeOutputOperand(options.reportJsonPath, reportJson(report), "report file");
    if (!written) return written.error();
  }
  if (!options.htmlPath.empty()) {  // `--html -`: standard output
    auto written = writeOutputOperand(options.htmlPath, view::renderHtml(schedule), "html file");
    if (!written) return written.error();
  }
  return {};
}

// A graph whose schedule does not fit: the error says why, and `-k` and `--html` show the
// schedule made anyway (the schedule file is not written).
Error doesNotFit(const CompileOptions& options, const Graph& graph, const UnfitSchedule& unfit,
                 const SearchInfo& searchInfo, const Error& error) {
  const CompileReport report = buildReport(graph, unfit.schedule, &searchInfo);
  const HyperepochReport* hr =
      index(unfit.hyperepoch) < report.hyperepochs.size() ? &report.hyperepochs[index(unfit.hyperepoch)] : nullptr;
  std::string msg = error.message + whyItDoesNotFit(unfit, hr ? hr->lowerBoundNs : 0, hr && hr->searched);
  auto written = writeDiagnostics(options, report, unfit.schedule);
  if (!written) return written.error();
  std::vector<std::string> shown;
  if (!options.reportJsonPath.empty()) shown.push_back(operandName(options.reportJsonPath, true) + " (-k)");
  if (!options.htmlPath.empty()) shown.push_back(operandName(options.htmlPath, true) + " (--html)");
  if (shown.empty()) {
    msg += "\n  -k REPORT.json and --html VIEW.html write the schedule that does not fit, to look at";
  } else {
    msg += "\n  wrote the schedule that does not fit to " + shown.front() +
           (shown.size() > 1 ? " and " + shown.back() : std::string()) + "; no schedule file";
  }
  return Error{error.code, msg};
}

// Each step's wall time, in the order the steps ended (CompileOutcome::stepMs).
class StepTimer {
 public:
  using Clock = std::chrono::steady_clock;
  void end(const char* name) {
    const auto now = Clock::now();
    steps_.emplace_back(name, std::chrono::duration<double, std::milli>(now - stepStart_).count());
    stepStart_ = now;
  }
  [[nodiscard]] double totalMs() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
  }
  std::vector<std::pair<std::string, double>> take() { return std::move(steps_); }

 private:
  Clock::time_point started_ = Clock::now();
  Clock::time_point stepStart_ = started_;
  std::vector<std::pair<std::string, double>> steps_;
};

// What the parse step reads: the graph (with its WCET file applied), the schedule compared
// against (`--compare OLD`) and the graph's warnings.
struct CompileInput {
  Graph graph;
  std::optional<Schedule> oldSchedule;
  std::vector<std::string> warnings;
};

Result<CompileInput> readCompileInput(const CompileOptions& options) {
  // `-i -`: the graph from standard input (command_line.cpp), named `stdin` in messages.
  auto graphText = readInputOperand(options.input, "graph file", kMaxGraphFileBytes);
  if (!graphText) return graphText.error();
  auto graph = parseGraph(*graphText, options.input == kStdStream ? "stdin" : options.input);
  std::string().swap(*graphText);  // the text is not needed past the parse: its memory back for the schedule
  if (!graph) return graph.error();
  if (!options.wcetPath.empty()) {  // `--wcet -`: from standard input (not with `-i -`: compile_args.cpp)
    auto applied = applyWcetFileFromPath(*graph, options.wcetPath);
    if (!applied) return applied.error();
  }
  CompileInput in;
  if (!options.comparePath.empty()) {  // `--compare OLD`: read before anything is written
    auto loaded = loadComparedSchedule(options.comparePath);
    if (!loaded) return loaded.error();
    in.oldSchedule = std::move(*loaded);
  }
  graph->crossSocLatencyNs = options.crossSocLatencyNs;
  in.warnings = graphWarnings(*graph);
  in.graph = std::move(*graph);
  return in;
}

ScheduleOptions scheduleOptions(const CompileOptions& options) {
  ScheduleOptions so;
  so.timeBudgetSeconds = options.timeBudgetSeconds;
  so.searchSteps = options.searchSteps;
  so.workers = options.workers;
  so.allowOverlength = options.allowOverlength;
  so.fusion = options.fusion;
  so.fusionThresholdNs = options.fusionThresholdNs;
  so.groupClients = options.groupClients;
  if (options.progress != nullptr) so.progress = searchProgressPrinter(*options.progress);  // compile_args.cpp
  return so;
}

// A chain over its requirement: as for a schedule that does not fit, `-k` and `--html` show
// the schedule made and every chain's bounds (no schedule file).
Error chainOverRequirement(const CompileOptions& options, const Graph& graph, const Schedule& schedule,
                           const SearchInfo& searchInfo, const std::string& chainSearch, const Error& error) {
  CompileReport report = buildReport(graph, schedule, &searchInfo);
  report.chainSearch = chainSearch;
  auto written = writeDiagnostics(options, report, schedule);
  if (!written) return written.error();
  std::string msg = error.message;
  if (!chainSearch.empty()) msg += "\n  " + chainSearch;
  if (!options.reportJsonPath.empty() || !options.htmlPath.empty())
    msg += "\n  wrote the schedule and its chains' bounds to the report (-k) and the view (--html); no schedule file";
  return Error{ErrorCode::kInfeasible, msg};
}

// The verifier's report on the computed schedule; a schedule that breaks an invariant is the
// scheduler's bug, stated in full.
Result<VerifyReport> verifyComputed(const CompileOptions& options, const Schedule& schedule) {
  VerifyOptions vo;
  vo.allowOverlength = options.allowOverlength;
  VerifyReport verified = verifySchedule(schedule, vo);
  if (!verified.ok()) {
    std::string msg = options.input + ": internal error: the computed schedule fails verification:";
    for (const std::string& e : verified.errors) msg += "\n  " + e;
    return fail(ErrorCode::kInternal, msg);
  }
  return verified;
}

// Under --allow-overlength, the verifier's warning on a hyperepoch too long says why ...
void explainOverlength(const CompileReport& report, const Schedule& schedule, std::vector<std::string>& warnings) {
  for (const HyperepochReport& hr : report.hyperepochs) {
    if (hr.scheduleLengthNs <= hr.periodNs) continue;
    const std::string said = "hyperepoch " + quoted(hr.name) + ": schedule length " +
                             humanDuration(hr.scheduleLengthNs) + " exceeds its period " + humanDuration(hr.periodNs);
    const HyperepochId h{static_cast<std::uint32_t>(&hr - report.hyperepochs.data())};
    const std::string why = whyOverlength(schedule, h, hr.lowerBoundNs, hr.searched);
    auto it = std::find(warnings.begin(), warnings.end(), said);
    if (it != warnings.end()) *it += why;
  }
  // ... and that is all it says: an instance of an epoch's last frame that ends after the
  // hyperepoch's period is the overlength just explained, and the verifier's warning naming it
  // blamed whichever runnable was placed last, not the cause.
  for (const InstanceInfo& in : schedule.instances) {
    const EpochInfo& e = schedule.epochs[schedule.runnables[in.runnable].epoch];
    const std::int64_t boundary = e.periodNs * (in.frame + 1);
    if (in.frame + 1 != e.frames || in.endNs <= boundary || boundary < schedule.hyperepochs[e.hyperepoch].periodNs)
      continue;
    const std::string said = "runnable " + quoted(qualifiedName(schedule, in.runnable)) + " frame " +
                             std::to_string(in.frame) + " ends at " + humanDuration(in.endNs) + ", after epoch " +
                             quoted(e.name) + " releases its next frame at " + humanDuration(boundary);
    std::erase(warnings, said);
  }
}

// Warnings under --werror: as for a schedule that does not fit, no schedule file, but the report
// and the view to look at.
Error warningsAsErrors(const CompileOptions& options, const CompileReport& report, const Schedule& schedule,
                       const std::vector<std::string>& warnings) {
  auto written = writeDiagnostics(options, report, schedule);
  if (!written) return written.error();
  std::string msg = inputName(options) + ": " + std::to_string(warnings.size()) +
                    (warnings.size() == 1 ? " warning, an error" : " warnings, errors") +
                    " under --werror (no schedule written):";
  for (const std::string& w : warnings) msg += "\n  " + w;
  return Error{ErrorCode::kValidation, msg};
}

// The schedule file (`-o -`: standard output) and its content hash into the outcome, then `-k`
// and `--html`.
Result<void> writeOutputs(const CompileOptions& options, CompileOutcome& outcome) {
  if (outcome.outputPath == kStdStream) {
    auto written = writeOutputOperand(outcome.outputPath, writeSchedule(outcome.schedule), "schedule file");
    if (!written) return written.error();
    outcome.contentHash = scheduleContentHash(outcome.schedule);
  } else {
    auto saved = saveScheduleFile(outcome.schedule, outcome.outputPath);
    if (!saved) return saved.error();
    outcome.contentHash = *saved;
  }
  return writeDiagnostics(options, outcome.report, outcome.schedule);
}

}  // namespace

Result<CompileOutcome> compileFile(const CompileOptions& options) {
  StepTimer timer;
  auto input = readCompileInput(options);
  if (!input) return input.error();
  const Graph& graph = input->graph;
  std::vector<std::string> warnings = std::move(input->warnings);
  timer.end("parse");
  const ScheduleOptions so = scheduleOptions(options);
  SearchInfo searchInfo;
  std::optional<UnfitSchedule> unfit;
  auto schedule = scheduleGraph(graph, so, &searchInfo, &unfit);
  if (!schedule && unfit) return doesNotFit(options, graph, *unfit, searchInfo, schedule.error());
  if (!schedule) return schedule.error();
  timer.end("schedule");

  // Chains (tactus extension) over their requirements, or all of them with --favour-chains: the
  // scheduler runs again guided by them (chain_search.hpp).
  std::string chainSearch;
  ChainSearchNote note;
  if (chainsToShorten(graph, *schedule, options.chainAllowanceNs, options.favourChains)) {
    *schedule =
        chainGuidedSchedule(graph, so, options.chainAllowanceNs, options.favourChains, std::move(*schedule), note);
    chainSearch = note.text();
    timer.end("chains");
  }

  // Channels and chains (tactus extension): versions planned and bounds computed on the finished
  // schedule; a chain still over its requirement is refused here.
  if (auto analysed = analyseChannels(graph, *schedule, options.chainAllowanceNs, note.impossible); !analysed) {
    if (analysed.error().code != ErrorCode::kInfeasible) return analysed.error();
    return chainOverRequirement(options, graph, *schedule, searchInfo, chainSearch, analysed.error());
  }
  if (!graph.channels.empty() || !graph.chains.empty()) timer.end("channels");

  auto verified = verifyComputed(options, *schedule);
  if (!verified) return verified.error();
  timer.end("verify");

  CompileOutcome outcome;
  outcome.report = buildReport(graph, *schedule, &searchInfo);
  outcome.report.chainSearch = chainSearch;
  if (input->oldSchedule) {
    outcome.report.compare = compareSchedules(graph, *input->oldSchedule, operandName(options.comparePath, false),
                                              *schedule, outcome.report);
  }
  explainOverlength(outcome.report, *schedule, verified->warnings);
  warnings.insert(warnings.end(), verified->warnings.begin(), verified->warnings.end());
  if (options.warningsAreErrors && !warnings.empty())
    return warningsAsErrors(options, outcome.report, *schedule, warnings);
  outcome.warnings = std::move(warnings);
  outcome.outputPath = options.output.empty() ? defaultOutputPath(options.input) : options.output;
  outcome.schedule = std::move(*schedule);
  outcome.report.compileTimeMs = timer.totalMs();
  auto written = writeOutputs(options, outcome);
  if (!written) return written.error();
  timer.end("write");
  outcome.stepMs = timer.take();
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
        << " with a transfer time per SoC pair, " << kScheduleFormatVersionGpu << " with GPU work, "
        << kScheduleFormatVersionEngines << " with DLA or VPU engines, " << kScheduleFormatVersionChannels
        << " with channels or chains)\n";
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
