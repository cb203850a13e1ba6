// tactus-report's outputs: the text report, JSON, raw CSV, the measured-WCET side file, the
// Chrome trace (Perfetto) and the executed iterations handed to the HTML view.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "tactus/view/html_view.hpp"

namespace tactus::report {

/// The report for people: summary, then tables per hyperepoch, runnable, frame, resource, client.
std::string formatText(const Schedule& schedule, const LogFile& log, const Analysis& analysis);

/// The same statistics as one JSON object (all times in integer ns).
std::string formatJson(const Schedule& schedule, const LogFile& log, const Analysis& analysis);

/// The raw runs, sorted by start:
/// `frame,hyperepoch,epoch,client,runnable,resource,start_ns,end_ns,schedule` (frame within the
/// hyperepoch iteration, hyperepoch = iteration number, epoch = `Hyperepoch.Epoch`, resource = the
/// hardware resource, schedule = the schedule's identifier). Invalid records are left out.
void writeCsv(std::ostream& out, const Schedule& schedule, const LogFile& log, const Analysis& analysis);

/// One CSV line (with its newline) and the start it sorts by.
struct CsvRow {
  std::int64_t startNs = 0;
  std::string line;
};
/// The CSV lines of one schedule's valid runs, unsorted (several schedules: one call each).
void appendCsvRows(std::vector<CsvRow>& rows, const Schedule& schedule, const LogFile& log, const Analysis& analysis);
/// The CSV lines of one schedule's valid frame releases (tactus-report --csv-of releases), unsorted:
/// `iteration,epoch,frame,ideal_ns,actual_ns,late_ns,schedule`, sorting by the actual release.
void appendReleaseCsvRows(std::vector<CsvRow>& rows, const Schedule& schedule, const LogFile& log,
                          const Analysis& analysis);
/// The CSV lines of one schedule's measured chain occurrences (--csv-of chains), unsorted:
/// `chain,measure,source_client,source_runnable,source_iteration,source_frame,last_client,
/// last_runnable,last_iteration,last_frame,release_ns,end_ns,value_ns,planned_ns,required_ns,schedule`,
/// sorting by the source's release.
void appendChainCsvRows(std::vector<CsvRow>& rows, const Schedule& schedule, const Analysis& analysis);
/// The header line of the runs' CSV, of the releases' and of the chains'.
extern const char* const kRunsCsvHeader;
extern const char* const kReleasesCsvHeader;
extern const char* const kChainsCsvHeader;
/// Sorts the lines by start and writes them under `header` (the runs' by default).
void writeCsvRows(std::ostream& out, std::vector<CsvRow>& rows, const char* header = kRunsCsvHeader);

/// The measured-WCET side file the compiler reads with --wcet: `Client.Runnable: ns` for every
/// measured runnable, value = ceil(percentile(durations) * margin).
std::string formatWcetFile(const Schedule& schedule, const Analysis& analysis, double percentile, double margin);

/// Chrome trace event format (trace.cpp): process 1 "master" with the frame releases (instant
/// events, args: epoch, iteration, frame, ideal time, jitter), frame overruns and skips; one process
/// per client with two threads per worker (hardware resource): "CPU0 plan", the plan of every
/// iteration the log names, and "CPU0", one complete event per valid kRun record (args: iteration,
/// frame, instance, planned_start_us, wcet_us, jitter_us; a run longer than its WCET is named
/// "OVERRUN Client.Runnable", with over_wcet_us); flow events ("s"/"f", cat "dependency") from a run
/// to each run of another client that depends on it; process 2 "chains" (a schedule with chains)
/// with an async slice ("b"/"e", cat "chain") per measured chain occurrence from the source frame's
/// release to the last run's end, named "Chain reaction" or "Chain data age", "MISS ..." (cat
/// "chain,miss") over its planned bound or requirement (args: iteration, frame, measured_us,
/// planned_us, required_us). `log` may be null: the plan of one iteration from time 0.
void writeTrace(std::ostream& out, const Schedule& schedule, const LogFile* log, const Analysis* analysis);

/// The most runs the HTML view's page carries (about 40 bytes each): a log of more draws the
/// iterations worth a note and as many others, in order, as fit.
inline constexpr std::size_t kHtmlMaxRuns = 250'000;

/// The executed iterations the HTML view steps through: every iteration of every hyperepoch the log
/// names, in order, while they hold at most `maxRuns` runs in all; per hyperepoch its first and
/// second iteration, the one with the most WCET overruns and the one with the longest span are
/// always drawn, with a note saying so.
view::Execution makeExecution(const Schedule& schedule, const LogFile& log, const Analysis& analysis,
                              std::size_t maxRuns = kHtmlMaxRuns);

}  // namespace tactus::report
