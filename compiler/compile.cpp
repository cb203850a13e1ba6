// The compile driver and the tactus-compile command line.
#include "compile.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <set>

#include "duration.hpp"
#include "graph_parser.hpp"
#include "scheduler.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "tactus_config.h"
#include "wcet_file.hpp"

namespace tactus::compiler {
namespace {

constexpr const char* kUsage =
    "usage: tactus-compile -i GRAPH.yaml [options]\n"
    "\n"
    "Compiles an STM-format YAML compute graph into a verified static schedule file.\n"
    "\n"
    "options:\n"
    "  -i FILE              the input graph (required)\n"
    "  -o FILE              the schedule file to write (default: the input with extension .tsched)\n"
    "  -k FILE              also write the report as JSON to FILE\n"
    "  --wcet FILE          WCET side file (`Client.Runnable: ns`) overriding the graph's WCETs\n"
    "  --html FILE          also write the graph and the schedule as one self-contained HTML page\n"
    "  -t SECONDS           search time per hyperepoch (default 0: first schedule found); the\n"
    "                       best schedule found in time is kept, and may differ from run to run\n"
    "  --search-steps N     search steps per hyperepoch (reproducible; with -t, whichever ends first)\n"
    "  -j N                 parallel search workers (default 1); -t 0 or a step budget gives the\n"
    "                       same schedule for every N\n"
    "  -wt DURATION         runnable fusion everywhere: chains of CPU runnables shorter than\n"
    "                       DURATION (e.g. 500us; a runnable whose only successor has it as only\n"
    "                       predecessor, same client, epoch and resources) are scheduled as one\n"
    "                       unit and split back afterwards. Without -wt, fusion (threshold 500us)\n"
    "                       runs only on hyperepochs of more than 400 instances, where the search\n"
    "                       is heuristic: on smaller ones it can lose the optimum the exact search\n"
    "                       finds (measured on the STG set), so they are left unfused\n"
    "  -nrf                 no runnable fusion at all\n"
    "  --allow-overlength   accept a schedule longer than its hyperepoch period (warning)\n"
    "  -v                   verbose: time each step and print the planned timelines\n"
    "  -V, --version        print the version and exit\n"
    "  -h, --help           print this help and exit\n"
    "\n"
    "exit status: 0 success, 1 the graph cannot be compiled, 2 bad command line\n";

// Parses the command line into options; `action` says whether to compile, print help or version.
enum class Action { kCompile, kHelp, kVersion };

Result<Action> parseArgs(const std::vector<std::string>& args, CompileOptions& o) {
  auto needValue = [&](std::size_t& i) -> Result<std::string> {
    if (i + 1 >= args.size()) return fail(ErrorCode::kBadParameter, "option '" + args[i] + "' needs a value");
    return args[++i];
  };
  bool sawNrf = false, sawWt = false;
  std::set<std::string> seen;  // value options: a second one is a mistake, not an override
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool takesValue = a == "-i" || a == "-o" || a == "-k" || a == "--wcet" || a == "--html" || a == "-t" ||
                            a == "-j" || a == "-wt" || a == "--search-steps";
    if (takesValue && !seen.insert(a).second) return fail(ErrorCode::kBadParameter, "option '" + a + "' given twice");
    if (a == "-h" || a == "--help") return Action::kHelp;
    if (a == "-V" || a == "--version") return Action::kVersion;
    if (a == "-v") {
      o.verbose = true;
      continue;
    }
    if (a == "--allow-overlength") {
      o.allowOverlength = true;
      continue;
    }
    if (a == "-nrf") {
      o.fusion = Fusion::kOff;
      sawNrf = true;
      continue;
    }
    if (a == "-wt") {
      auto v = needValue(i);
      if (!v) return v.error();
      auto d = parseDuration(*v);
      if (!d || *d <= 0) {
        return fail(ErrorCode::kBadParameter, "option -wt: '" + *v + "' is not a positive duration (e.g. 500us)");
      }
      o.fusion = Fusion::kOn;
      o.fusionThresholdNs = *d;
      sawWt = true;
      continue;
    }
    if (a == "--search-steps") {
      auto v = needValue(i);
      if (!v) return v.error();
      std::uint64_t n = 0;
      auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
      if (ec != std::errc() || p != v->data() + v->size() || v->empty())
        return fail(ErrorCode::kBadParameter, "option --search-steps: '" + *v + "' is not a step count");
      o.searchSteps = n;
      continue;
    }
    if (a == "-i" || a == "-o" || a == "-k" || a == "--wcet" || a == "--html" || a == "-t" || a == "-j") {
      auto v = needValue(i);
      if (!v) return v.error();
      if (a == "-i") o.input = *v;
      else if (a == "-o") o.output = *v;
      else if (a == "-k") o.reportJsonPath = *v;
      else if (a == "--wcet") o.wcetPath = *v;
      else if (a == "--html") o.htmlPath = *v;
      else if (a == "-t") {
        double t = 0;
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), t);
        if (ec != std::errc() || p != v->data() + v->size() || !(t >= 0) || t > 86400)
          return fail(ErrorCode::kBadParameter, "option -t: '" + *v + "' is not a number of seconds in 0..86400");
        o.timeBudgetSeconds = t;
      } else {
        int j = 0;
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), j);
        if (ec != std::errc() || p != v->data() + v->size() || j < 1 || j > 1024)
          return fail(ErrorCode::kBadParameter, "option -j: '" + *v + "' is not a worker count in 1..1024");
        o.workers = j;
      }
      continue;
    }
    if (!a.empty() && a[0] == '-') return fail(ErrorCode::kBadParameter, "unknown option '" + a + "'");
    return fail(ErrorCode::kBadParameter, "unexpected argument '" + a + "' (the graph is given with -i)");
  }
  if (o.input.empty()) return fail(ErrorCode::kBadParameter, "no input graph: give it with -i GRAPH.yaml");
  if (sawNrf && sawWt) return fail(ErrorCode::kBadParameter, "options -wt and -nrf exclude each other");
  return Action::kCompile;
}

}  // namespace

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

  auto graph = parseGraphFile(options.input);
  if (!graph) return graph.error();
  if (!options.wcetPath.empty()) {
    auto applied = applyWcetFileFromPath(*graph, options.wcetPath);
    if (!applied) return applied.error();
  }
  endStep("parse");
  ScheduleOptions so;
  so.timeBudgetSeconds = options.timeBudgetSeconds;
  so.searchSteps = options.searchSteps;
  so.workers = options.workers;
  so.allowOverlength = options.allowOverlength;
  so.fusion = options.fusion;
  so.fusionThresholdNs = options.fusionThresholdNs;
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

  auto saved = saveScheduleFile(outcome.schedule, outcome.outputPath);
  if (!saved) return saved.error();
  outcome.contentHash = *saved;
  if (!options.reportJsonPath.empty()) {
    auto written = writeFileAtomically(options.reportJsonPath, reportJson(outcome.report), "report file");
    if (!written) return written.error();
  }
  if (!options.htmlPath.empty()) {
    auto written = view::writeHtml(options.htmlPath, outcome.schedule);
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
    for (std::uint32_t i : t.instances) {
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
  auto action = parseArgs(args, options);
  if (!action) {
    err << "tactus-compile: " << action.error().message << "\n(try 'tactus-compile --help')\n";
    return 2;
  }
  if (*action == Action::kHelp) {
    out << kUsage;
    return 0;
  }
  if (*action == Action::kVersion) {
    out << "tactus-compile " << TACTUS_VERSION << " (schedule file format " << kScheduleFormatVersion << ")\n";
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
int compileAndReport(const CompileOptions& options, std::ostream& out, std::ostream& err) {
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
  out << "wrote " << outcome->outputPath << " (schedule '" << outcome->schedule.name << "', "
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
