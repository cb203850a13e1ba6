// The HTML view of a schedule: one self-contained file (inline CSS, JS and SVG, no network) with
// the input graph, the plan as one lane per resource over the hyperepoch (a multi-SoC schedule's
// lanes grouped per SoC under its heading), and, when given, the executed iterations drawn against
// the plan with overruns marked.
//
//   Plan      CPU0 |ReadCam|PreProc|        |ReadCam|...
//             GPU0 |       |       |PreGpu  |       |...
//   Executed  CPU0 |ReadCam|PreProc--|      |ReadCam|...   (red: ran longer than its WCET)
//
// Used by tactus-compile (`--html`, plan only) and tactus-report (`--html`, plan and log).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::view {

/// One executed run of a scheduled instance, drawn against the plan.
struct ExecutedRun {
  InstanceId instance{};        ///< the instance that ran
  RunnableId runnable = kNone;  ///< the runnable that actually ran (kNone: empty round-robin step)
  std::int64_t startNs = 0;     ///< start, from the iteration's planned start
  std::int64_t endNs = 0;       ///< end, from the iteration's planned start
};

/// One hyperepoch iteration of the run, as it executed.
struct ExecutedIteration {
  HyperepochId hyperepoch{};      ///< the iteration's hyperepoch
  std::uint64_t iteration = 0;    ///< hyperepoch iteration number
  std::string note;               ///< why it is shown (`first`, `most overruns`), may be empty
  std::vector<ExecutedRun> runs;  ///< its runs, any order
};

/// Measured statistics of one runnable, shown in the tooltips.
struct RunnableSummary {
  std::uint64_t runs = 0;           ///< number of runs measured (0: no row shown)
  std::int64_t minNs = 0;           ///< shortest duration
  std::int64_t medianNs = 0;        ///< median duration
  std::int64_t p99Ns = 0;           ///< 99th percentile duration
  std::int64_t maxNs = 0;           ///< longest duration
  std::uint64_t overruns = 0;       ///< runs longer than the WCET
  std::string violations;           ///< contract violations tactus-check found (`kind: call xN, ...`); empty: none
  std::int64_t jitterMedianNs = 0;  ///< median start jitter (actual - planned start)
  std::int64_t jitterP99Ns = 0;     ///< 99th percentile start jitter
  std::int64_t jitterMaxNs = 0;     ///< largest start jitter
};

/// Measured figures of a chain's reactions or data ages (tactus-report), shown beside its bounds.
struct ChainMeasure {
  std::uint64_t count = 0;         ///< occurrences measured
  std::int64_t medianNs = 0;       ///< median
  std::int64_t p99Ns = 0;          ///< 99th percentile
  std::int64_t maxNs = 0;          ///< longest
  std::uint64_t overPlanned = 0;   ///< occurrences over the planned bound (allowance included)
  std::uint64_t overRequired = 0;  ///< occurrences over MaxReaction / MaxAge (0 without one)
};

/// A chain as measured: its reactions and its data ages.
struct ChainSummary {
  ChainMeasure reaction;  ///< from a source frame's release to the first last-runnable run that sees it
  ChainMeasure age;       ///< the age of the source data at a last-runnable run's end
};

/// A moment of the run worth marking: a schedule switch or a switching-policy decision.
struct TimeMark {
  std::int64_t atNs = 0;  ///< from the run's start
  std::string text;       ///< caption (escaped when drawn)
  bool own = false;       ///< whether it concerns the schedule the page shows (drawn highlighted)
};

/// What a log adds to the view: some iterations to draw and per-runnable statistics.
struct Execution {
  std::string source;  ///< the log's name, shown in the header
  /// Iterations to draw, by hyperepoch then iteration number; the page steps through them.
  std::vector<ExecutedIteration> iterations;
  std::uint64_t iterationsInLog = 0;                ///< iterations the log has (more than drawn: the run budget)
  IdVector<RunnableId, RunnableSummary> runnables;  ///< per runnable; empty when not measured
  std::vector<TimeMark> marks;                      ///< a run of several schedules: every switch, in time order
  std::vector<ChainSummary> chains;                 ///< per chain of the schedule; empty when not measured
};

/// Options of the rendering.
struct HtmlOptions {
  std::string title;  ///< page title; empty = the schedule's name
};

/// Renders the page. Same input, same bytes. Names are escaped; the page loads no resources.
std::string renderHtml(const Schedule& schedule, const Execution* execution = nullptr, const HtmlOptions& options = {});

/// One page of a set (renderPageSet).
struct TitledPage {
  std::string title;  ///< the page's heading in the set (escaped when drawn)
  std::string html;   ///< a whole page, as renderHtml makes it
};

/// One self-contained document holding several pages, each under its heading in a frame of its
/// own (an iframe's srcdoc), so their scripts and element ids stay apart: a run of several
/// schedules written to one stream (`tactus-report LOG A B --html -`).
std::string renderPageSet(const std::string& title, const std::vector<TitledPage>& pages);

/// Renders the page and writes it to `path` (kIo on failure).
Result<void> writeHtml(const std::string& path, const Schedule& schedule, const Execution* execution = nullptr,
                       const HtmlOptions& options = {});

}  // namespace tactus::view
