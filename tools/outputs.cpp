// The text, JSON, CSV, WCET side file, Chrome trace and HTML-view outputs of tactus-report.
#include "outputs.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "tactus/core/channels.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus::report {
namespace {

// A duration for people: 950 ns, 12.3 us, 4.56 ms, 1.234 s.
std::string human(double ns) {
  char buf[48];
  const double a = std::fabs(ns);
  if (a < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

// A duration in ns (every figure of the analysis) in the unit that suits it.
std::string human(std::int64_t ns) { return human(static_cast<double>(ns)); }

// Simple column-aligned table.
class Table {
 public:
  explicit Table(std::vector<std::string> head) { rows_.push_back(std::move(head)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_)
      for (std::size_t k = 0; k < r.size(); ++k) {
        if (w.size() <= k) w.push_back(0);
        w[k] = std::max(w[k], r[k].size());
      }
    std::string out;
    for (const auto& r : rows_) {
      out += "  ";
      for (std::size_t k = 0; k < r.size(); ++k) {
        // First column left-aligned, numbers right-aligned.
        if (k == 0) out += r[k] + std::string(w[k] - r[k].size(), ' ');
        else out += "  " + std::string(w[k] - r[k].size(), ' ') + r[k];
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string jsonQuantiles(const Quantiles& q) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "{\"count\":%" PRIu64 ",\"min_ns\":%" PRId64 ",\"median_ns\":%" PRId64 ",\"p99_ns\":%" PRId64
                ",\"max_ns\":%" PRId64 ",\"mean_ns\":%.1f}",
                q.count, q.minNs, q.medianNs, q.p99Ns, q.maxNs, q.meanNs);
  return buf;
}

std::string optDuration(std::int64_t v) { return v == kNoDuration ? "null" : std::to_string(v); }

// The measured chains, each beside its planned bound (allowance included) and its requirement;
// nothing for a schedule without chains.
std::string chainsText(const Schedule& s, const Analysis& a) {
  if (s.chains.empty()) return {};
  std::string out =
      "\nchains (reaction: the source frame's release to the end of the first last-runnable run that sees it;\n"
      "data age: the release of the source data at a last-runnable run's end; planned: the compiler's bound,\n"
      "allowance included; required: MaxReaction / MaxAge)\n";
  Table t(
      {"chain", "measure", "count", "median", "p99", "max", "planned", "required", "over planned", "over required"});
  for (std::size_t c = 0; c < s.chains.size() && c < a.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    const ChainStats& x = a.chains[c];
    if (!x.error.empty()) {
      t.add({chain.name, "not measured: " + x.error});
      continue;
    }
    auto row = [&](const std::string& name, const char* what, const Quantiles& q, std::int64_t planned,
                   std::int64_t required, std::uint64_t overPlanned, std::uint64_t overRequired) {
      const bool any = q.count != 0;
      t.add({name, what, std::to_string(q.count), any ? human(q.medianNs) : "-", any ? human(q.p99Ns) : "-",
             any ? human(q.maxNs) : "-", human(planned), required == kNoDuration ? "-" : human(required),
             std::to_string(overPlanned), required == kNoDuration ? "-" : std::to_string(overRequired)});
    };
    row(chain.name, "reaction", x.reaction, chain.reactionNs, chain.maxReactionNs, x.reactionsOverPlanned,
        x.reactionsOverRequired);
    row("", "data age", x.age, chain.ageNs, chain.maxAgeNs, x.agesOverPlanned, x.agesOverRequired);
  }
  return out + t.str();
}

// The measured chains as JSON: per chain its reaction and data age figures, bounds and misses.
std::string chainsJson(const Schedule& s, const Analysis& a) {
  std::string o = "[";
  for (std::size_t c = 0; c < s.chains.size() && c < a.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    const ChainStats& x = a.chains[c];
    if (c) o += ',';
    o += "{\"name\":";
    jsonString(o, chain.name);
    if (!x.error.empty()) {
      o += ",\"error\":";
      jsonString(o, x.error);
    }
    o += ",\"reaction\":" + jsonQuantiles(x.reaction) + ",\"planned_reaction_ns\":" + std::to_string(chain.reactionNs) +
         ",\"max_reaction_ns\":" + optDuration(chain.maxReactionNs) +
         ",\"reactions_over_planned\":" + std::to_string(x.reactionsOverPlanned) +
         ",\"reactions_over_required\":" + std::to_string(x.reactionsOverRequired) +
         ",\"age\":" + jsonQuantiles(x.age) + ",\"planned_age_ns\":" + std::to_string(chain.ageNs) +
         ",\"max_age_ns\":" + optDuration(chain.maxAgeNs) +
         ",\"ages_over_planned\":" + std::to_string(x.agesOverPlanned) +
         ",\"ages_over_required\":" + std::to_string(x.agesOverRequired) +
         ",\"allowance_ns\":" + std::to_string(chainAllowanceNs(chain)) + "}";
  }
  return o + "]";
}

}  // namespace

std::string formatText(const Schedule& s, const LogFile& log, const Analysis& a) {
  std::string out;
  out += "schedule " + quoted(s.name) + " (identifier " + std::to_string(s.identifier) + "), log " + log.path + "\n";
  out += "  " + std::to_string(a.runRecords) + " runs, " + std::to_string(a.releaseRecords) + " frame releases, " +
         std::to_string(a.skippedRecords) + " skips, " + std::to_string(a.overrunRecords) + " frame overruns, " +
         std::to_string(a.lostRecords) + " records lost, " + std::to_string(a.invalidRecords) + " invalid records\n";
  for (const std::string& w : a.warnings) out += "  warning: " + w + "\n";

  out += "\nhyperepochs\n";
  Table ht({"hyperepoch", "period", "iterations", "span median", "span p99", "span max", "monitor", "over monitor",
            "skips", "skipped periods", "overruns"});
  for (HyperepochId h : s.hyperepochs.ids()) {
    const HyperepochStats& x = a.hyperepochs[h];
    ht.add({s.hyperepochs[h].name, human(s.hyperepochs[h].periodNs), std::to_string(x.iterations),
            x.span.count ? human(x.span.medianNs) : "-", x.span.count ? human(x.span.p99Ns) : "-",
            x.span.count ? human(x.span.maxNs) : "-",
            s.hyperepochs[h].monitorNs == kNoDuration ? "-" : human(s.hyperepochs[h].monitorNs),
            std::to_string(x.monitorViolations), std::to_string(x.skipEvents), std::to_string(x.skippedPeriods),
            std::to_string(x.overrunRecords)});
  }
  out += ht.str();

  out += "\nrunnables (durations; start jitter = actual start - planned start)\n";
  Table rt({"runnable", "runs", "min", "median", "p99", "max", "wcet", ">wcet", "worst over", "jitter median",
            "jitter p99", "jitter max", "deadline miss", "end-monitor"});
  for (RunnableId r : s.runnables.ids()) {
    const RunnableStats& x = a.runnables[r];
    if (s.runnables[r].kind == RunnableKind::kAliasGroup) continue;
    if (x.duration.count == 0) {
      rt.add({qualifiedName(s, r), "0", "-", "-", "-", "-", human(s.runnables[r].wcetNs), "-", "-", "-", "-", "-", "-",
              "-"});
      continue;
    }
    rt.add({qualifiedName(s, r), std::to_string(x.duration.count), human(x.duration.minNs), human(x.duration.medianNs),
            human(x.duration.p99Ns), human(x.duration.maxNs), human(s.runnables[r].wcetNs),
            std::to_string(x.overrunsWcet), x.overrunsWcet ? human(x.worstOverrunNs) : "-",
            human(x.startJitter.medianNs), human(x.startJitter.p99Ns), human(x.startJitter.maxNs),
            s.runnables[r].deadlineNs == kNoDuration ? "-" : std::to_string(x.deadlineMisses),
            s.runnables[r].endMonitorThresholdNs == kNoDuration ? "-" : std::to_string(x.endMonitorViolations)});
  }
  out += rt.str();

  out += "\nframes (span = last end - ideal release; release jitter = actual - ideal release)\n";
  Table ft({"epoch frame", "releases", "release jitter median", "release jitter p99", "release jitter max",
            "span median", "span p99", "span max", "period", "overruns", "deadline miss"});
  for (const FrameStats& f : a.frames) {
    ft.add({epochName(s, f.epoch) + " #" + std::to_string(f.frame), std::to_string(f.releases),
            f.releaseJitter.count ? human(f.releaseJitter.medianNs) : "-",
            f.releaseJitter.count ? human(f.releaseJitter.p99Ns) : "-",
            f.releaseJitter.count ? human(f.releaseJitter.maxNs) : "-", f.span.count ? human(f.span.medianNs) : "-",
            f.span.count ? human(f.span.p99Ns) : "-", f.span.count ? human(f.span.maxNs) : "-",
            human(s.epochs[f.epoch].periodNs), std::to_string(f.overruns), std::to_string(f.deadlineMisses)});
  }
  out += ft.str();

  out += "\nresources (busy time per hyperepoch iteration; spin: CPU time its worker spun waiting)\n";
  Table bt({"resource", "runs", "planned busy", "measured busy", "period", "planned load", "measured load",
            "measured idle", "spin"});
  for (ResourceId r : s.resources.ids()) {
    const ResourceStats& x = a.resources[r];
    if (x.periodNs <= 0) continue;
    char pl[32], ml[32];
    std::snprintf(pl, sizeof pl, "%.1f%%",
                  100.0 * static_cast<double>(x.plannedBusyNs) / static_cast<double>(x.periodNs));
    std::snprintf(ml, sizeof ml, "%.1f%%",
                  100.0 * static_cast<double>(x.measuredBusyNs) / static_cast<double>(x.periodNs));
    bt.add({s.resources[r].name, std::to_string(x.runs), human(x.plannedBusyNs), human(x.measuredBusyNs),
            human(x.periodNs), pl, ml, human(static_cast<double>(x.periodNs) - x.measuredBusyNs), human(x.spinNs)});
  }
  out += bt.str();

  out += "\nclients\n";
  Table ct({"client", "runs", "busy", ">wcet", "deadline miss", "end-monitor", "records lost"});
  for (ClientId c : s.clients.ids()) {
    const ClientStats& x = a.clients[c];
    ct.add({s.clients[c].name, std::to_string(x.runs), human(static_cast<double>(x.busyNs)),
            std::to_string(x.overrunsWcet), std::to_string(x.deadlineMisses), std::to_string(x.endMonitorViolations),
            std::to_string(x.droppedRecords)});
  }
  out += ct.str();
  out += chainsText(s, a);
  return out;
}

std::string formatJson(const Schedule& s, const LogFile& log, const Analysis& a) {
  std::string o = "{\"schedule\":";
  jsonString(o, s.name);
  o += ",\"identifier\":" + std::to_string(s.identifier) + ",\"content_hash\":";
  jsonString(o, hashToHex(log.header.scheduleContentHash));
  o += ",\"log\":";
  jsonString(o, log.path);
  o += ",\"records\":{\"run\":" + std::to_string(a.runRecords) + ",\"release\":" + std::to_string(a.releaseRecords) +
       ",\"skipped\":" + std::to_string(a.skippedRecords) + ",\"overrun\":" + std::to_string(a.overrunRecords) +
       ",\"dropped\":" + std::to_string(a.droppedRecords) + ",\"lost\":" + std::to_string(a.lostRecords) +
       ",\"invalid\":" + std::to_string(a.invalidRecords) + ",\"empty_steps\":" + std::to_string(a.emptyRuns) + "}";
  o += ",\"warnings\":[";
  for (std::size_t k = 0; k < a.warnings.size(); ++k) {
    if (k) o += ',';
    jsonString(o, a.warnings[k]);
  }
  o += "],\"hyperepochs\":[";
  for (HyperepochId h : s.hyperepochs.ids()) {
    const HyperepochStats& x = a.hyperepochs[h];
    if (index(h) != 0) o += ',';
    o += "{\"name\":";
    jsonString(o, s.hyperepochs[h].name);
    o += ",\"period_ns\":" + std::to_string(s.hyperepochs[h].periodNs) +
         ",\"monitor_ns\":" + optDuration(s.hyperepochs[h].monitorNs) +
         ",\"iterations\":" + std::to_string(x.iterations) + ",\"span\":" + jsonQuantiles(x.span) +
         ",\"monitor_violations\":" + std::to_string(x.monitorViolations) +
         ",\"skip_events\":" + std::to_string(x.skipEvents) +
         ",\"skipped_periods\":" + std::to_string(x.skippedPeriods) +
         ",\"overruns\":" + std::to_string(x.overrunRecords) + "}";
  }
  o += "],\"runnables\":[";
  bool first = true;
  for (RunnableId r : s.runnables.ids()) {
    if (s.runnables[r].kind == RunnableKind::kAliasGroup) continue;
    const RunnableStats& x = a.runnables[r];
    if (!first) o += ',';
    first = false;
    o += "{\"name\":";
    jsonString(o, qualifiedName(s, r));
    o += ",\"epoch\":";
    jsonString(o, epochName(s, s.runnables[r].epoch));
    o += ",\"wcet_ns\":" + std::to_string(s.runnables[r].wcetNs) +
         ",\"deadline_ns\":" + optDuration(s.runnables[r].deadlineNs) +
         ",\"end_monitor_threshold_ns\":" + optDuration(s.runnables[r].endMonitorThresholdNs) +
         ",\"duration\":" + jsonQuantiles(x.duration) + ",\"start_jitter\":" + jsonQuantiles(x.startJitter) +
         ",\"overruns_wcet\":" + std::to_string(x.overrunsWcet) +
         ",\"worst_overrun_ns\":" + std::to_string(x.worstOverrunNs) +
         ",\"deadline_misses\":" + std::to_string(x.deadlineMisses) +
         ",\"end_monitor_violations\":" + std::to_string(x.endMonitorViolations) + "}";
  }
  o += "],\"frames\":[";
  for (std::size_t k = 0; k < a.frames.size(); ++k) {
    const FrameStats& f = a.frames[k];
    if (k) o += ',';
    o += "{\"epoch\":";
    jsonString(o, epochName(s, f.epoch));
    o += ",\"frame\":" + std::to_string(f.frame) + ",\"releases\":" + std::to_string(f.releases) +
         ",\"release_jitter\":" + jsonQuantiles(f.releaseJitter) + ",\"span\":" + jsonQuantiles(f.span) +
         ",\"overruns\":" + std::to_string(f.overruns) + ",\"deadline_misses\":" + std::to_string(f.deadlineMisses) +
         "}";
  }
  o += "],\"resources\":[";
  first = true;
  for (ResourceId r : s.resources.ids()) {
    const ResourceStats& x = a.resources[r];
    if (x.periodNs <= 0) continue;
    if (!first) o += ',';
    first = false;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", x.measuredBusyNs);
    o += "{\"name\":";
    jsonString(o, s.resources[r].name);
    o += ",\"runs\":" + std::to_string(x.runs) + ",\"period_ns\":" + std::to_string(x.periodNs) +
         ",\"planned_busy_ns\":" + std::to_string(x.plannedBusyNs) + ",\"measured_busy_ns\":" + buf +
         ",\"planned_idle_ns\":" + std::to_string(x.periodNs - x.plannedBusyNs);
    std::snprintf(buf, sizeof buf, "%.1f", x.spinNs);
    o += ",\"spin_ns\":" + std::string(buf) + "}";
  }
  o += "],\"clients\":[";
  for (ClientId c : s.clients.ids()) {
    const ClientStats& x = a.clients[c];
    if (index(c) != 0) o += ',';
    o += "{\"name\":";
    jsonString(o, s.clients[c].name);
    o += ",\"runs\":" + std::to_string(x.runs) + ",\"busy_ns\":" + std::to_string(x.busyNs) +
         ",\"overruns_wcet\":" + std::to_string(x.overrunsWcet) +
         ",\"deadline_misses\":" + std::to_string(x.deadlineMisses) +
         ",\"end_monitor_violations\":" + std::to_string(x.endMonitorViolations) +
         ",\"records_lost\":" + std::to_string(x.droppedRecords) + "}";
  }
  o += "],\"chains\":" + chainsJson(s, a) + "}\n";
  return o;
}

void appendCsvRows(std::vector<CsvRow>& rows, const Schedule& s, const LogFile& log, const Analysis& a) {
  IdVector<EpochId, std::string> epochNames(s.epochs.size());
  for (EpochId e : s.epochs.ids()) epochNames[e] = epochName(s, e);
  const std::string identifier = std::to_string(s.identifier);
  for (const EventRecord& r : log.records) {
    if (!validRun(s, a, r)) continue;
    const InstanceInfo& inst = s.instances[InstanceId{r.instance}];
    const RunnableId shown = r.aux == kNone ? inst.runnable : RunnableId{r.aux};
    const RunnableInfo& ran = s.runnables[shown];
    std::string buf = std::to_string(inst.frame);
    buf += ',';
    buf += std::to_string(r.iteration);
    buf += ',';
    buf += epochNames.contains(ran.epoch) ? epochNames[ran.epoch] : "?";
    buf += ',';
    buf += s.clients.contains(ran.client) ? s.clients[ran.client].name : "?";
    buf += ',';
    buf += r.aux == kNone ? ran.name + "(empty)" : ran.name;
    buf += ',';
    buf +=
        !inst.resources.empty() && s.resources.contains(inst.resources[0]) ? s.resources[inst.resources[0]].name : "?";
    buf += ',';
    buf += std::to_string(r.startNs);
    buf += ',';
    buf += std::to_string(r.endNs);
    buf += ',';
    buf += identifier;
    buf += '\n';
    rows.push_back({r.startNs, std::move(buf)});
  }
}

const char* const kRunsCsvHeader = "frame,hyperepoch,epoch,client,runnable,resource,start_ns,end_ns,schedule\n";
const char* const kReleasesCsvHeader = "iteration,epoch,frame,ideal_ns,actual_ns,late_ns,schedule\n";
const char* const kChainsCsvHeader =
    "chain,measure,source_client,source_runnable,source_iteration,source_frame,last_client,last_runnable,"
    "last_iteration,last_frame,release_ns,end_ns,value_ns,planned_ns,required_ns,schedule\n";

void appendReleaseCsvRows(std::vector<CsvRow>& rows, const Schedule& s, const LogFile& log, const Analysis& a) {
  const std::string identifier = std::to_string(s.identifier);
  for (const EventRecord& r : log.records) {
    if (!validRelease(s, a, r)) continue;
    std::string buf = std::to_string(r.iteration) + ',' + epochName(s, EpochId{r.instance}) + ',' +
                      std::to_string(r.aux) + ',' + std::to_string(r.startNs) + ',' + std::to_string(r.endNs) + ',' +
                      std::to_string(r.endNs - r.startNs) + ',' + identifier + '\n';
    rows.push_back({r.endNs, std::move(buf)});
  }
}

namespace {

// `client,runnable,iteration,frame` of a chain's run.
std::string chainRunCsv(const Schedule& s, const ChainRun& run) {
  if (!s.instances.contains(run.instance)) return "?,?," + std::to_string(run.iteration) + ",?";
  const InstanceInfo& inst = s.instances[run.instance];
  const RunnableInfo& r = s.runnables[inst.runnable];
  return (s.clients.contains(r.client) ? s.clients[r.client].name : "?") + ',' + r.name + ',' +
         std::to_string(run.iteration) + ',' + std::to_string(inst.frame);
}

}  // namespace

void appendChainCsvRows(std::vector<CsvRow>& rows, const Schedule& s, const Analysis& a) {
  const std::string identifier = std::to_string(s.identifier);
  for (std::size_t c = 0; c < s.chains.size() && c < a.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    for (const bool reaction : {true, false}) {
      const std::int64_t planned = reaction ? chain.reactionNs : chain.ageNs;
      const std::int64_t required = reaction ? chain.maxReactionNs : chain.maxAgeNs;
      const std::string tail = ',' + std::to_string(planned) + ',' +
                               (required == kNoDuration ? std::string() : std::to_string(required)) + ',' + identifier +
                               '\n';
      for (const ChainOccurrence& x : reaction ? a.chains[c].reactions : a.chains[c].ages) {
        std::string buf = chain.name + (reaction ? ",reaction," : ",age,") + chainRunCsv(s, x.source) + ',' +
                          chainRunCsv(s, x.last) + ',' + std::to_string(x.releaseNs) + ',' + std::to_string(x.endNs) +
                          ',' + std::to_string(x.ns()) + tail;
        rows.push_back({x.releaseNs, std::move(buf)});
      }
    }
  }
}

void writeCsvRows(std::ostream& out, std::vector<CsvRow>& rows, const char* header) {
  std::stable_sort(rows.begin(), rows.end(), [](const CsvRow& x, const CsvRow& y) { return x.startNs < y.startNs; });
  std::string buf = header;
  for (const CsvRow& row : rows) {
    buf += row.line;
    if (buf.size() > (1u << 20)) {
      out << buf;
      buf.clear();
    }
  }
  out << buf;
}

void writeCsv(std::ostream& out, const Schedule& s, const LogFile& log, const Analysis& a) {
  std::vector<CsvRow> rows;
  rows.reserve(log.records.size());
  appendCsvRows(rows, s, log, a);
  writeCsvRows(out, rows);
}

std::string formatWcetFile(const Schedule& s, const Analysis& a, double percentile, double margin) {
  char head[160];
  std::snprintf(head, sizeof head,
                "# measured WCETs (ns) from tactus-report: p%g of the measured durations x %g; "
                "use with tactus-compile --wcet\n",
                percentile, margin);
  std::string out = head;
  std::vector<std::pair<std::string, std::int64_t>> rows;
  for (RunnableId r : s.runnables.ids()) {
    if (s.runnables[r].kind == RunnableKind::kAliasGroup || a.runnables[r].durations.empty()) continue;
    // Capped at the longest WCET the compiler accepts (and so that the conversion is defined).
    const double v =
        std::min(std::ceil(static_cast<double>(percentileOfSorted(a.runnables[r].durations, percentile)) * margin),
                 static_cast<double>(limits::kMaxDurationNs));
    rows.emplace_back(qualifiedName(s, r), std::max<std::int64_t>(1, static_cast<std::int64_t>(v)));
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [name, ns] : rows) out += name + ": " + std::to_string(ns) + "\n";
  return out;
}

view::Execution makeExecution(const Schedule& s, const LogFile& log, const Analysis& a, std::size_t maxRuns) {
  view::Execution x;
  x.source = log.path;
  x.runnables.resize(s.runnables.size());
  for (RunnableId r : s.runnables.ids()) {
    const RunnableStats& st = a.runnables[r];
    view::RunnableSummary& v = x.runnables[r];
    v.runs = st.duration.count;
    v.minNs = st.duration.minNs;
    v.medianNs = st.duration.medianNs;
    v.p99Ns = st.duration.p99Ns;
    v.maxNs = st.duration.maxNs;
    v.overruns = st.overrunsWcet;
    v.jitterMedianNs = st.startJitter.medianNs;
    v.jitterP99Ns = st.startJitter.p99Ns;
    v.jitterMaxNs = st.startJitter.maxNs;
  }
  for (const ChainStats& c : a.chains) {
    auto measure = [](const Quantiles& q, std::uint64_t overPlanned, std::uint64_t overRequired) {
      return view::ChainMeasure{q.count, q.medianNs, q.p99Ns, q.maxNs, overPlanned, overRequired};
    };
    x.chains.push_back({measure(c.reaction, c.reactionsOverPlanned, c.reactionsOverRequired),
                        measure(c.age, c.agesOverPlanned, c.agesOverRequired)});
  }
  // Per hyperepoch and iteration (row of Analysis::iterations): runs, overruns and span.
  const std::size_t nHyp = s.hyperepochs.size();
  IdVector<HyperepochId, std::vector<std::uint32_t>> overruns(nHyp);
  IdVector<HyperepochId, std::vector<std::uint64_t>> runs(nHyp);
  IdVector<HyperepochId, std::vector<std::int64_t>> lastEnd(nHyp);
  for (HyperepochId h : s.hyperepochs.ids()) {
    overruns[h].assign(a.iterations[h].size(), 0);
    runs[h].assign(a.iterations[h].size(), 0);
    lastEnd[h].assign(a.iterations[h].size(), std::numeric_limits<std::int64_t>::min());
    x.iterationsInLog += a.iterations[h].size();
  }
  for (const EventRecord& r : log.records) {
    if (!validRun(s, a, r)) continue;
    const HyperepochId h = a.instanceHyperepoch[InstanceId{r.instance}];
    const std::size_t row = iterationIndex(a, h, r.iteration);
    if (row == kNoIteration) continue;
    if (r.aux != kNone && r.endNs - r.startNs > s.runnables[RunnableId{r.aux}].wcetNs) ++overruns[h][row];
    ++runs[h][row];
    lastEnd[h][row] = std::max(lastEnd[h][row], r.endNs);
  }
  // The iterations worth a note (first, second, most overruns, longest) are drawn whatever the
  // budget; the others in order while the page's run budget lasts.
  IdVector<HyperepochId, std::vector<std::string>> notes(nHyp);
  std::uint64_t budget = maxRuns;
  for (HyperepochId h : s.hyperepochs.ids()) {
    notes[h].assign(a.iterations[h].size(), "");
    auto note = [&](std::int64_t row, const std::string& text) {
      std::string& n = notes[h][static_cast<std::size_t>(row)];
      n += (n.empty() ? "" : ", ") + text;
      budget -= std::min<std::uint64_t>(budget, runs[h][static_cast<std::size_t>(row)]);
    };
    std::int64_t firstSeen = -1, mostOver = -1, longest = -1;
    for (std::uint64_t i = 0; i < lastEnd[h].size(); ++i) {
      if (lastEnd[h][i] == std::numeric_limits<std::int64_t>::min()) continue;
      if (firstSeen < 0) firstSeen = static_cast<std::int64_t>(i);
      if (mostOver < 0 || overruns[h][i] > overruns[h][mostOver]) mostOver = static_cast<std::int64_t>(i);
      const std::int64_t span = lastEnd[h][i] - iterationStartNs(s, log, a, h, a.iterations[h][i]);
      if (longest < 0 || span > lastEnd[h][longest] - iterationStartNs(s, log, a, h, a.iterations[h][longest]))
        longest = static_cast<std::int64_t>(i);
    }
    if (firstSeen < 0) continue;
    note(firstSeen, "first");
    if (overruns[h][mostOver] > 0) note(mostOver, "most overruns: " + std::to_string(overruns[h][mostOver]));
    note(longest, "longest");
    if (firstSeen + 1 < static_cast<std::int64_t>(lastEnd[h].size()) &&
        lastEnd[h][firstSeen + 1] != std::numeric_limits<std::int64_t>::min())
      note(firstSeen + 1, "second");
  }
  // slot[h][row]: the iteration's position in x.iterations, or -1 when not drawn.
  IdVector<HyperepochId, std::vector<std::int64_t>> slot(nHyp);
  std::vector<std::int64_t> starts;
  for (HyperepochId h : s.hyperepochs.ids()) {
    slot[h].assign(a.iterations[h].size(), -1);
    for (std::size_t row = 0; row < a.iterations[h].size(); ++row) {
      if (lastEnd[h][row] == std::numeric_limits<std::int64_t>::min()) continue;  // releases only
      if (notes[h][row].empty()) {
        if (runs[h][row] > budget) continue;
        budget -= runs[h][row];
      }
      slot[h][row] = static_cast<std::int64_t>(x.iterations.size());
      view::ExecutedIteration it;
      it.hyperepoch = h;
      it.iteration = a.iterations[h][row];
      it.note = notes[h][row];
      it.runs.reserve(runs[h][row]);
      x.iterations.push_back(std::move(it));
      starts.push_back(iterationStartNs(s, log, a, h, a.iterations[h][row]));
    }
  }
  for (const EventRecord& r : log.records) {
    if (!validRun(s, a, r)) continue;
    const HyperepochId h = a.instanceHyperepoch[InstanceId{r.instance}];
    const std::size_t row = iterationIndex(a, h, r.iteration);
    if (row == kNoIteration || slot[h][row] < 0) continue;
    const auto k = static_cast<std::size_t>(slot[h][row]);
    x.iterations[k].runs.push_back(
        {InstanceId{r.instance}, RunnableId{r.aux}, r.startNs - starts[k], r.endNs - starts[k]});
  }
  return x;
}

}  // namespace tactus::report
