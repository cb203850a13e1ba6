// tactus-report's contract violations: the kViolation records tactus-check leaves in an event
// log, summed per (runnable, kind, call), with the first call site; as a text table and as CSV.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/view/html_view.hpp"

namespace tactus::report {

/// One row: what one runnable did against its contract, how often, and where first.
struct ViolationRow {
  RunnableId runnable{};    ///< the runnable that violated
  std::string name;         ///< `client.runnable`
  std::string kind;         ///< `allocation`, `blocking-call`, ...
  std::string call;         ///< `malloc`, `nanosleep`, ...; kind info: `cudaMemcpyAsync: operator new`
  bool info = false;        ///< kind info: the CUDA runtime's work in a runnable's call, not a violation
  std::uint64_t count = 0;  ///< occurrences (saturating)
  std::string firstSite;    ///< `function+0xOFF (object)`, printable ASCII only; empty when unknown
};

/// The violations (and info rows) of a log, ordered by runnable name, kind and call. Records with an index or a
/// code out of range are skipped and counted in `invalid`.
std::vector<ViolationRow> collectViolations(const Schedule& schedule, const std::vector<EventRecord>& records,
                                            std::uint64_t* invalid = nullptr);

/// How many rows are violations (not kind info).
std::size_t countViolations(const std::vector<ViolationRow>& rows);

/// `runnable,kind,call,count,first_site` (the header unless `header` is false) and one line per row
/// (fields CSV-quoted when needed); a `schedule` other than "" adds a last column `schedule` with it
/// (a run of several schedules: one call per schedule, the header with the first).
void writeViolationsCsv(std::ostream& out, const std::vector<ViolationRow>& rows, const std::string& schedule = "",
                        bool header = true);

/// The "contract violations" table of the text report (nothing when there are none), then the
/// CUDA runtime's work in runnables (kind info) as a table of its own.
void writeViolationsTable(std::ostream& out, const std::vector<ViolationRow>& rows);

/// Marks the runnables that violated (info rows are not violations) in the HTML view (their summary's `violations`
/// text).
void markViolations(view::Execution& execution, const std::vector<ViolationRow>& rows);

}  // namespace tactus::report
