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
  std::string call;         ///< `malloc`, `nanosleep`, ...
  std::uint64_t count = 0;  ///< occurrences (saturating)
  std::string firstSite;    ///< `function+0xOFF (object)`, printable ASCII only; empty when unknown
};

/// The violations of a log, ordered by runnable name, kind and call. Records with an index or a
/// code out of range are skipped and counted in `invalid`.
std::vector<ViolationRow> collectViolations(const Schedule& schedule, const std::vector<EventRecord>& records,
                                            std::uint64_t* invalid = nullptr);

/// `runnable,kind,call,count,first_site` and one line per row (fields CSV-quoted when needed).
void writeViolationsCsv(std::ostream& out, const std::vector<ViolationRow>& rows);

/// The "contract violations" table of the text report (nothing when there are none).
void writeViolationsTable(std::ostream& out, const std::vector<ViolationRow>& rows);

/// Marks the runnables that violated in the HTML view (their summary's `violations` text).
void markViolations(view::Execution& execution, const std::vector<ViolationRow>& rows);

}  // namespace tactus::report
