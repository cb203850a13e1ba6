// tactus-compile's command line (see compile_args.hpp), on the tools' one parser.
#include "compile_args.hpp"

#include <charconv>
#include <cstdio>
#include <memory>
#include <ostream>

#include "duration.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {

namespace {

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"input", 'i', "FILE", "the input graph (required; - reads standard input)", {}},
      {"output",
       'o',
       "FILE",
       "the schedule file to write (default: the input with extension .tsched);\n"
       "- writes it to standard output, and the report to standard error",
       {}},
      {"report-json", 'k', "FILE", "also write the report as JSON to FILE (- for standard output)", {}},
      {"wcet",
       0,
       "FILE",
       "WCET side file (`Client.Runnable: ns`) overriding the graph's WCETs\n"
       "(- reads standard input; not with -i -)",
       {}},
      {"html",
       0,
       "FILE",
       "also write the graph and the schedule as one self-contained HTML page\n"
       "(- for standard output)",
       {}},
      {"compare",
       0,
       "OLD",
       "also print what changes against the old schedule file OLD (- reads\n"
       "standard input): the graph's changes (runnables, resources, clients\n"
       "added or removed; WCETs, start times, deadlines, epochs, dependencies,\n"
       "pinned resources), per hyperepoch the schedule length, lower bound and\n"
       "each resource's load, per chain its planned reaction and age and\n"
       "their MaxReaction and MaxAge, old, new and the difference, matched by\n"
       "name (in -k as \"compare\"). Exit status 0 whatever changed; OLD must\n"
       "not be the file -o writes",
       {}},
      {"time",
       't',
       "SECONDS",
       "search time per hyperepoch (default 0: first schedule found); the\n"
       "best schedule found in time is kept, and may differ from run to run",
       {}},
      {"search-steps", 0, "N", "search steps per hyperepoch (reproducible; with -t, whichever ends first)", {}},
      {"jobs",
       'j',
       "N",
       "parallel search workers (default 1); -t 0 or a step budget gives the\n"
       "same schedule for every N",
       {}},
      {"fusion-threshold",
       0,
       "DURATION",
       "runnable fusion everywhere: chains of CPU runnables shorter than\n"
       "DURATION (e.g. 500us; a runnable whose only successor has it as only\n"
       "predecessor, same client, epoch and resources) are scheduled as one\n"
       "unit and split back afterwards. Without -wt, fusion (threshold 500us)\n"
       "runs only on hyperepochs of more than 400 instances, where the search\n"
       "is heuristic: on smaller ones it can lose the optimum the exact search\n"
       "finds (measured on the STG set), so they are left unfused",
       {"wt"}},
      {"no-fusion", 0, "", "no runnable fusion at all", {"nrf"}},
      {"no-grouping",
       0,
       "",
       "keep the order the search found on every core: without it, a client's\n"
       "runs on a core are moved together where the schedule stays as good\n"
       "(no longer, no more misses), so the core switches between client\n"
       "processes less often (the report's 'client switches')",
       {}},
      {"cross-soc-latency",
       0,
       "DURATION",
       "multi-SoC graphs: the transfer time a dependency between runnables of\n"
       "two SoCs adds before its successor may start, for the SoC pairs the\n"
       "graph's CrossSocLatency does not list (default 200us: above the p99\n"
       "of a runnable end through the link over loopback, 57-78us measured\n"
       "by bench/multisoc/link-handoff; see docs/performance.md)",
       {}},
      {"chain-allowance",
       0,
       "DURATION",
       "graphs with Chains: the allowance per runnable of a chain for the\n"
       "runtime's own hand-off and release, added to the planned reaction and\n"
       "age bounds (default 100us: above the hand-off p99 and release error of\n"
       "the runtime-handoff and runtime-release benchmarks; see\n"
       "docs/design/channels.md)",
       {}},
      {"favour-chains",
       0,
       "",
       "graphs with Chains: reschedule to shorten every chain's planned\n"
       "reaction and age, not only those over their MaxReaction or MaxAge\n"
       "(chain-guided scheduling, up to 8 rounds; kept only where the\n"
       "schedule fits as well: see docs/design/channels.md)",
       {}},
      {"allow-overlength", 0, "", "accept a schedule longer than its hyperepoch period (warning)", {}},
      {"werror",
       0,
       "",
       "treat warnings as errors (for CI): any warning (an epoch whose frames\n"
       "leave its hyperepoch partly empty, a missed deadline, an overlength\n"
       "schedule) exits 1 without writing the schedule file; -k and --html\n"
       "are still written",
       {"Werror"}},
      {"quiet", 'q', "", "no search progress on standard error", {}},
      {"verbose", 'v', "", "verbose: time each step and print the planned timelines", {}},
      {"version", 'V', "", "print the version and exit", {}},
      {"help", 'h', "", "print this help and exit", {}},
  };
  return kSpecs;
}

}  // namespace

std::span<const OptionSpec> compileOptionSpecs() { return specs(); }

std::string compileUsage() {
  return "usage: tactus-compile -i GRAPH.yaml [options]\n"
         "\n"
         "Compiles an STM-format YAML compute graph into a verified static schedule file.\n"
         "Options take --name=value or --name value; -t 5, -t5 and --time=5 are the same.\n"
         "A search (-t, --search-steps) prints its progress to standard error once a second\n"
         "(best length, lower bound, gap) unless -q. One of -o, -k and --html may be - (standard\n"
         "output); the report then goes to standard error.\n"
         "\n"
         "options:\n" +
         optionsHelp(specs()) +
         "\n"
         "examples:\n"
         "  tactus-compile -i graph.yaml -o graph.tsched -t 10 -j 2\n"
         "  tactus-compile -i - -o - < graph.yaml > graph.tsched\n"
         "\n"
         "exit status: 0 success (warnings, if any, on standard error), 1 the graph cannot be\n"
         "compiled (or a warning under --werror), 2 bad command line\n"
         "\n"
         "graph format:\n"
         "  every key with its type, default, unit and STM name, and what the run does with\n"
         "  them: docs/format.md in the source tree, share/doc/tactus/format.md when installed\n";
}

decltype(ScheduleOptions::progress) searchProgressPrinter(std::ostream& out) {
  struct State {
    std::string hyperepoch;  // whose search the figures are of
    double last = 0;         // its seconds at the last call
    double nextAt = 1.0;     // when the next line is due
  };
  auto state = std::make_shared<State>();
  return [&out, state](const std::string& hyperepoch, double seconds, std::int64_t bestNs, std::int64_t boundNs,
                       std::uint64_t steps) {
    if (hyperepoch != state->hyperepoch || seconds < state->last) {  // another search began
      *state = State{hyperepoch, 0, 1.0};
    }
    state->last = seconds;
    double* nextAt = &state->nextAt;
    if (seconds < *nextAt) return;
    *nextAt = seconds + 1.0;
    const double gap =
        bestNs > 0 && boundNs > 0 ? 100.0 * static_cast<double>(bestNs - boundNs) / static_cast<double>(bestNs) : 0;
    char figures[160];
    std::snprintf(figures, sizeof figures, " %.1f s: best %s, lower bound %s, gap %.2f%%, %llu steps\n", seconds,
                  humanDuration(bestNs).c_str(), humanDuration(boundNs).c_str(), gap,
                  static_cast<unsigned long long>(steps));
    out << "tactus-compile: searching " << quoted(hyperepoch) << figures << std::flush;
  };
}

Result<CompileAction> parseCompileArgs(const std::vector<std::string>& args, CompileOptions& o) {
  auto line = parseCommandLine(specs(), args);
  if (!line) return line.error();
  if (line->has("help")) return CompileAction::kHelp;
  if (line->has("version")) return CompileAction::kVersion;
  bool sawNrf = false, sawWt = false;
  for (const ParsedOption& p : line->options) {
    const std::string& v = p.value;
    if (p.name == "input") {
      o.input = v;
    } else if (p.name == "output") {
      o.output = v;
    } else if (p.name == "report-json") {
      o.reportJsonPath = v;
    } else if (p.name == "wcet") {
      o.wcetPath = v;
    } else if (p.name == "html") {
      o.htmlPath = v;
    } else if (p.name == "compare") {
      o.comparePath = v;
    } else if (p.name == "time") {
      double t = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), t);
      if (ec != std::errc() || end != v.data() + v.size() || !(t >= 0) || t > 86400)
        return fail(ErrorCode::kBadParameter,
                    "option " + p.spelled + ": '" + v + "' is not a number of seconds in 0..86400");
      o.timeBudgetSeconds = t;
    } else if (p.name == "search-steps") {
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || v.empty())
        return fail(ErrorCode::kBadParameter, "option " + p.spelled + ": '" + v + "' is not a step count");
      o.searchSteps = n;
    } else if (p.name == "jobs") {
      int j = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), j);
      if (ec != std::errc() || end != v.data() + v.size() || j < 1 || j > 1024)
        return fail(ErrorCode::kBadParameter, "option " + p.spelled + ": '" + v + "' is not a worker count in 1..1024");
      o.workers = j;
    } else if (p.name == "fusion-threshold") {
      auto d = parseDuration(v);
      if (!d || *d <= 0) {
        return fail(ErrorCode::kBadParameter,
                    "option " + p.spelled + ": '" + v + "' is not a positive duration (e.g. 500us)");
      }
      o.fusion = Fusion::kOn;
      o.fusionThresholdNs = *d;
      sawWt = true;
    } else if (p.name == "cross-soc-latency") {
      auto d = parseDuration(v);
      if (!d || *d < 0 || *d > limits::kMaxDurationNs)
        return fail(ErrorCode::kBadParameter,
                    "option " + p.spelled + ": '" + v + "' is not a duration (e.g. 200us, or 0)");
      o.crossSocLatencyNs = *d;
    } else if (p.name == "chain-allowance") {
      auto d = parseDuration(v);
      if (!d || *d < 0 || *d > limits::kMaxDurationNs)
        return fail(ErrorCode::kBadParameter,
                    "option " + p.spelled + ": '" + v + "' is not a duration (e.g. 100us, or 0)");
      o.chainAllowanceNs = *d;
    } else if (p.name == "favour-chains") {
      o.favourChains = true;
    } else if (p.name == "no-grouping") {
      o.groupClients = false;
    } else if (p.name == "no-fusion") {
      o.fusion = Fusion::kOff;
      sawNrf = true;
    } else if (p.name == "allow-overlength") {
      o.allowOverlength = true;
    } else if (p.name == "werror") {
      o.warningsAreErrors = true;
    } else if (p.name == "quiet") {
      o.quiet = true;
    } else if (p.name == "verbose") {
      o.verbose = true;
    }
  }
  if (!line->operands.empty()) {
    const std::string& a = line->operands.front();
    return fail(ErrorCode::kBadParameter, "unexpected argument '" + a + "' (the graph is given with -i" +
                                              (o.input.empty() ? ": -i " + a : std::string()) + ")");
  }
  if (o.input.empty()) return fail(ErrorCode::kBadParameter, "no input graph: give it with -i GRAPH.yaml");
  if (sawNrf && sawWt) return fail(ErrorCode::kBadParameter, "options -wt and -nrf exclude each other");
  if (o.input == kStdStream && o.output.empty()) {
    return fail(ErrorCode::kBadParameter, "-i - (standard input) needs -o FILE or -o - (there is no name to derive)");
  }
  if (o.input == kStdStream && o.wcetPath == kStdStream) {
    return fail(ErrorCode::kBadParameter,
                "-i - and --wcet - both want standard input: give the graph or the WCET file as a file");
  }
  if (o.comparePath == kStdStream && (o.input == kStdStream || o.wcetPath == kStdStream)) {
    return fail(ErrorCode::kBadParameter,
                "--compare - wants standard input, as does -i - or --wcet -: give the old schedule as a file");
  }
  if (!o.comparePath.empty() && o.comparePath != kStdStream &&
      o.comparePath == (o.output.empty() ? defaultOutputPath(o.input) : o.output)) {
    return fail(ErrorCode::kBadParameter, "--compare " + o.comparePath +
                                              " is the schedule file this compilation writes: give the new one "
                                              "another name with -o NEW.tsched");
  }
  int onStdout = 0;
  for (const std::string* out : {&o.output, &o.reportJsonPath, &o.htmlPath}) onStdout += *out == kStdStream ? 1 : 0;
  if (onStdout > 1) {
    return fail(ErrorCode::kBadParameter,
                "only one output can go to standard output (-): -o, -k (--report-json) and --html each want it");
  }
  return CompileAction::kCompile;
}

}  // namespace tactus::compiler
