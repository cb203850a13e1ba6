// The compile driver: graph file -> checked graph -> schedule -> verified schedule file + report,
// and the command-line front end of tactus-compile.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "graph.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// What to compile and how (the command line's options).
/// The default transfer time of a cross-SoC dependency: above the p99 of the hand-off between two
/// masters over Cyclone DDS on loopback (bench/multisoc).
inline constexpr std::int64_t kDefaultCrossSocLatencyNs = 200000;

struct CompileOptions {
  std::string input;              ///< `-i`: the YAML graph (`-`: standard input)
  std::string output;             ///< `-o`: the schedule file; empty = input with .tsched (`-`: stdout)
  std::string reportJsonPath;     ///< `-k`: write the JSON report here when set (`-`: stdout)
  std::string wcetPath;           ///< `--wcet`: WCET side file overriding the graph's WCETs (`-`: stdin)
  std::string htmlPath;           ///< `--html`: also write the HTML view here when set (`-`: stdout)
  std::string comparePath;        ///< `--compare`: the old schedule file to compare with (`-`: stdin)
  double timeBudgetSeconds = 0;   ///< `-t`: search time per hyperepoch; 0 = first schedule
  std::uint64_t searchSteps = 0;  ///< `--search-steps`: search steps per hyperepoch; 0 = none
  int workers = 1;                ///< `-j`: search workers
  bool allowOverlength = false;   ///< `--allow-overlength`: a too-long schedule warns instead of failing
  /// `--werror`: any warning fails the compilation (no schedule file; -k and --html are written)
  bool warningsAreErrors = false;
  /// `-wt DURATION` sets Fusion::kOn with this threshold; `-nrf` sets Fusion::kOff (see Fusion).
  Fusion fusion = Fusion::kAuto;
  std::int64_t fusionThresholdNs = 500000;  ///< `-wt`: fusion threshold (default 500us)
  bool groupClients = true;                 ///< `--no-grouping` clears it (ScheduleOptions::groupClients)
  /// `--cross-soc-latency`: transfer time of a dependency between two SoCs (multi-SoC graphs)
  std::int64_t crossSocLatencyNs = kDefaultCrossSocLatencyNs;
  /// `--chain-allowance`: allowance per runnable of a chain for the runtime's hand-off
  std::int64_t chainAllowanceNs = kDefaultChainHopAllowanceNs;
  /// `--favour-chains`: chain-guided scheduling shortens every chain, not only those over their
  /// requirements (chain_search.hpp)
  bool favourChains = false;
  bool verbose = false;  ///< `-v`
  bool quiet = false;    ///< `-q`: no search progress on standard error
  /// Where a search prints its progress once a second (runCompileCommand: standard error unless
  /// `-q`); null: nowhere.
  std::ostream* progress = nullptr;
};

/// What a successful compilation produced.
struct CompileOutcome {
  Schedule schedule;
  CompileReport report;
  std::vector<std::string> warnings;  ///< e.g. missed deadlines
  std::string outputPath;             ///< where the schedule file was written
  std::uint64_t contentHash = 0;      ///< content hash of the written schedule file
  /// Wall time of each step in milliseconds, in order (`parse`, `schedule`, `verify`, `write`).
  std::vector<std::pair<std::string, double>> stepMs;
};

/// The planned timelines as text, one line per resource: `CPU0  Client0.A f0 0ns..10us, ...`,
/// at most `maxPerResource` entries each (for `-v`).
std::string timelinesText(const Schedule& schedule, std::size_t maxPerResource);

/// The schedule file path used when `-o` is not given: the input with its extension replaced.
std::string defaultOutputPath(const std::string& input);

/// Parses, schedules, verifies and writes. The schedule file is written only when the schedule
/// verifies and fits (and, with warningsAreErrors, nothing was warned about). When it does not
/// fit (kInfeasible: the message says why: the busiest resource against the period, the critical
/// path) or a warning is an error, the report (`-k`) and the HTML view (`--html`) of the
/// schedule made are still written, for the user to look at.
Result<CompileOutcome> compileFile(const CompileOptions& options);

/// The whole tactus-compile command: parses argv, compiles, prints the report to `out` and
/// messages to `err`. Returns the process exit code: 0 success, 1 compile error, 2 usage error.
int runCompileCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::compiler
