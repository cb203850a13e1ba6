// tactus-report's command line: its options, their checks, its --help text and the hints for
// common mistakes (the log and the schedule swapped), apart from what the report computes.
#pragma once

#include <string>
#include <vector>

#include "tactus/core/command_line.hpp"
#include "tactus/core/result.hpp"

namespace tactus::report {

/// What --csv prints: the runs, the frame releases or the chain occurrences (--csv-of).
enum class CsvTable { kRuns, kReleases, kChains };

/// What tactus-report was asked for.
struct ReportOptions {
  /// Every log (`-`: standard input): one, or those of every SoC's master of one multi-SoC run
  /// (LOG LOG... SCHEDULE...); none: the plan alone
  std::vector<std::string> logs;
  /// Every schedule file (`-`: standard input): one, or those of a run with a schedule manager
  /// (LOG A B ...); never empty once parsed
  std::vector<std::string> schedules;
  std::string wcetOut, html, traceOut;  ///< outputs (`-`: standard output); empty: not written
  bool json = false, csv = false, help = false, version = false;
  CsvTable csvTable = CsvTable::kRuns;               ///< --csv-of
  bool violations = false, failOnViolation = false;  ///< tactus-check's contract violations
  bool failOnOverrun = false;                        ///< exit 1 when a run, frame or period overran
  bool failOnChainMiss = false;  ///< exit 1 when a chain occurrence exceeded its planned bound or requirement
  double percentile = 99, margin = 1.2;
  /// Whether the statistics go to standard output (not when an output file is `-`).
  bool statisticsOnStdout = true;
};

/// Parses the arguments. Errors (kBadParameter) name the option and the value.
Result<ReportOptions> parseReportArgs(const std::vector<std::string>& args);

/// The --help text.
std::string reportUsage();

/// When the schedule could not be read: a hint if the two operands look swapped (the schedule
/// operand holds an event log, or the log operand a schedule), else "".
std::string swappedArgumentsHint(const ReportOptions& o);

}  // namespace tactus::report
