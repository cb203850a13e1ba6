// The tactus-report command line: parses arguments, loads schedule and log, writes the outputs.
#pragma once

#include <array>
#include <iosfwd>
#include <streambuf>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "report_args.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/text.hpp"
#include "violations.hpp"

namespace tactus::report {

/// One schedule of the run and what the report derives from its records.
struct ReportPart {
  LogFile own;  ///< several schedules: this schedule's records; one: unused (the whole log)
  Analysis analysis;
  std::vector<ViolationRow> violations;
};

/// What a report is made from: 1..N schedules, their 1..K logs merged into one, a part per
/// schedule (the Python package reads a run through this too).
struct ReportInputs {
  std::vector<Schedule> schedules;
  std::vector<std::string> origins;  ///< each schedule's operand
  LogFile log;
  std::vector<ReportPart> parts;
  bool several() const { return schedules.size() > 1; }
  /// Schedule k's records: the whole log when the run has one schedule.
  const LogFile& logOf(std::size_t k) const { return several() ? parts[k].own : log; }
  std::string title(std::size_t k) const {
    return "schedule " + std::to_string(schedules[k].identifier) + " " + quoted(schedules[k].name) + " (" + origins[k] +
           ")";
  }
};

/// Loads, verifies and analyzes what `o` names (its logs and schedules; at least one log), as
/// tactus-report does; the analyses' warnings go to `err`. Errors name the file.
Result<ReportInputs> loadReportInputs(const ReportOptions& o, std::ostream& err);

/// The --json output of those inputs.
std::string formatReportJson(const ReportInputs& in);

/// An output buffer on a file descriptor (tactus-report's standard output) that keeps the errno
/// of its first failed write, so a full disk or a closed pipe can be reported with its reason.
class FdOutputBuffer : public std::streambuf {
 public:
  explicit FdOutputBuffer(int fd);
  /// The errno of the first failed write (0 while every write succeeded).
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool drain();
  int fd_;
  int error_ = 0;
  std::array<char, 65536> buffer_{};
};

/// Runs `tactus-report` with `args` (without the program name); report text goes to `out`,
/// messages and warnings to `err`. Returns the exit code: 0 ok, 1 bad input or `out` could not
/// be written (flushed and checked at the end; the reason from an FdOutputBuffer), 2 usage error.
int runReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::report
