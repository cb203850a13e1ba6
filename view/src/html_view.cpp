// Renders a schedule (and optionally executed iterations) as one self-contained HTML page.
#include "tactus/view/html_view.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "html_assets.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/text.hpp"

namespace tactus::view {
namespace {

// An id as a JSON number.
template <StrongId Id>
std::string jsonId(Id id) {
  return std::to_string(index(id));
}

// An id that may be kNone, as a JSON number (-1 for none).
template <StrongId Id>
void jsonIndex(std::string& out, Id v) {
  if (v == kNone) out += "-1";
  else out += jsonId(v);
}

template <StrongId Id>
void jsonList(std::string& out, const std::vector<Id>& v) {
  out += '[';
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) out += ',';
    jsonIndex(out, v[k]);
  }
  out += ']';
}

std::string htmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The schedule's machine into the page's data: clients, SoCs (empty for one machine) and
// resources (res[4] is a resource's SoC), from `,"clients":` on.
void machineJson(std::string& o, const Schedule& s) {
  o += ",\"clients\":[";
  for (std::size_t k = 0; k < s.clients.size(); ++k) {
    if (k) o += ',';
    jsonString(o, s.clients[k].name);
  }
  o += "],\"socs\":[";
  for (std::size_t k = 0; k < s.socs.size(); ++k) {
    if (k) o += ',';
    jsonString(o, s.socs[k].name);
  }
  o += "],\"res\":[";
  for (std::size_t k = 0; k < s.resources.size(); ++k) {
    const ResourceInfo& r = s.resources[k];
    if (k) o += ',';
    o += '[';
    jsonString(o, r.name);
    o += ',';
    jsonString(o, r.type);
    o += ',';
    jsonIndex(o, r.hyperepoch);
    o += ',';
    jsonIndex(o, r.client);
    o += ',' + (r.soc == kNone ? std::string("-1") : std::to_string(r.soc)) + ']';
  }
  o += ']';
}

// Hyperepochs, epochs and runnables into the page's data.
void workJson(std::string& o, const Schedule& s) {
  o += ",\"hyp\":[";
  for (std::size_t k = 0; k < s.hyperepochs.size(); ++k) {
    const HyperepochInfo& h = s.hyperepochs[k];
    if (k) o += ',';
    o += '[';
    jsonString(o, h.name);
    o += ',' + std::to_string(h.periodNs) + ',';
    jsonList(o, h.resources);
    o += ']';
  }
  o += "],\"ep\":[";
  for (std::size_t k = 0; k < s.epochs.size(); ++k) {
    const EpochInfo& e = s.epochs[k];
    if (k) o += ',';
    o += '[';
    jsonString(o, e.name);
    o += ',' + jsonId(e.hyperepoch) + ',' + std::to_string(e.periodNs) + ',' + std::to_string(e.frames) + ']';
  }
  // run: [name, client, epoch, kind, wcet, deps, submits, deadline, startTime, endMonitor, submittedBy]
  o += "],\"run\":[";
  for (std::size_t k = 0; k < s.runnables.size(); ++k) {
    const RunnableInfo& r = s.runnables[k];
    if (k) o += ',';
    o += '[';
    jsonString(o, r.name);
    o += ',' + jsonId(r.client) + ',' + jsonId(r.epoch) + ',' + std::to_string(static_cast<int>(r.kind)) + ',' +
         std::to_string(r.wcetNs) + ',';
    jsonList(o, r.dependencies);
    o += ',';
    jsonIndex(o, r.submits);
    o += ',' + std::to_string(r.deadlineNs) + ',' + std::to_string(r.startTimeNs) + ',' +
         std::to_string(r.endMonitorThresholdNs) + ',';
    jsonIndex(o, r.submittedBy);
    o += ']';
  }
  o += ']';
}

// The plan's instances into the page's data.
// inst: [runnable, frame, start, end, resources]
void instancesJson(std::string& o, const Schedule& s) {
  o += ",\"inst\":[";
  for (std::size_t k = 0; k < s.instances.size(); ++k) {
    const InstanceInfo& i = s.instances[k];
    if (k) o += ',';
    o += '[' + jsonId(i.runnable) + ',' + std::to_string(i.frame) + ',' + std::to_string(i.startNs) + ',' +
         std::to_string(i.endNs) + ',';
    jsonList(o, i.resources);
    o += ']';
  }
  o += ']';
}

// An execution (a run's log) into the page's data: its source, per-runnable statistics and the
// iterations in the log.
void executionJson(std::string& o, const Execution& execution) {
  o += ",\"source\":";
  jsonString(o, execution.source);
  // stats: per runnable [runs, min, median, p99, max, overruns, violations text ("" none),
  // jitter median, jitter p99, jitter max] or 0
  o += ",\"stats\":[";
  for (std::size_t k = 0; k < execution.runnables.size(); ++k) {
    const RunnableSummary& r = execution.runnables[k];
    if (k) o += ',';
    if (r.runs == 0 && r.violations.empty()) {
      o += '0';
      continue;
    }
    o += '[' + std::to_string(r.runs) + ',' + std::to_string(r.minNs) + ',' + std::to_string(r.medianNs) + ',' +
         std::to_string(r.p99Ns) + ',' + std::to_string(r.maxNs) + ',' + std::to_string(r.overruns) + ',';
    jsonString(o, r.violations);
    o += ',' + std::to_string(r.jitterMedianNs) + ',' + std::to_string(r.jitterP99Ns) + ',' +
         std::to_string(r.jitterMaxNs) + ']';
  }
  o += "],\"itlog\":" + std::to_string(execution.iterationsInLog);
  // it: [hyperepoch, iteration, note, [instance, runnable, start, end, ...]]
  o += ",\"it\":[";
  for (std::size_t k = 0; k < execution.iterations.size(); ++k) {
    const ExecutedIteration& it = execution.iterations[k];
    if (k) o += ',';
    o += '[' + jsonId(it.hyperepoch) + ',' + std::to_string(it.iteration) + ',';
    jsonString(o, it.note);
    o += ",[";
    for (std::size_t j = 0; j < it.runs.size(); ++j) {
      const ExecutedRun& r = it.runs[j];
      if (j) o += ',';
      o += jsonId(r.instance) + ',';
      jsonIndex(o, r.runnable);
      o += ',' + std::to_string(r.startNs) + ',' + std::to_string(r.endNs);
    }
    o += "]]";
  }
  o += ']';
}

// The page's data: compact arrays, decoded by the script (field order documented there).
std::string dataJson(const Schedule& s, const Execution* execution, const std::string& title) {
  std::string o;
  o.reserve(256 + s.instances.size() * 48 + s.runnables.size() * 64);
  o += "{\"name\":";
  jsonString(o, s.name);
  o += ",\"title\":";
  jsonString(o, title);
  o += ",\"id\":" + std::to_string(s.identifier);
  machineJson(o, s);
  workJson(o, s);
  instancesJson(o, s);
  if (execution) executionJson(o, *execution);
  else o += ",\"stats\":null,\"it\":null";
  o += '}';
  return o;
}

// The switches of a run of several schedules: a strip over the run's time with a tick per
// switch (this page's schedule in orange), then the list. Drawn here, without the script.
std::string switchesSection(const Execution& x) {
  std::int64_t last = 1;
  for (const TimeMark& m : x.marks) last = std::max(last, m.atNs);
  constexpr int kWidth = 900;
  std::string o =
      "<h2>Schedule switches</h2>\n<div class=\"meta\">every start and stop of a schedule on a hyperepoch and "
      "every policy decision of the run, ms from its start; orange: this schedule</div>\n";
  o += "<svg id=\"switches\" width=\"" + std::to_string(kWidth + 20) +
       "\" height=\"34\" role=\"img\"><line x1=\"10\" y1=\"17\" x2=\"" + std::to_string(kWidth + 10) +
       "\" y2=\"17\" stroke=\"#888\"/>";
  for (const TimeMark& m : x.marks) {
    const double at =
        10.0 + kWidth * static_cast<double>(std::max<std::int64_t>(0, m.atNs)) / static_cast<double>(last);
    char tick[160];
    std::snprintf(tick, sizeof tick, "<line class=\"switch\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"30\" stroke=\"%s\">",
                  at, at, m.own ? "#e8590c" : "#1c7ed6");
    o += tick;
    o += "<title>" + htmlEscape(m.text) + "</title></line>";
  }
  o += "</svg>\n<table class=\"switches\"><tr><th>at ms</th><th>switch</th></tr>\n";
  for (const TimeMark& m : x.marks) {
    char at[48];
    std::snprintf(at, sizeof at, "%.3f", static_cast<double>(m.atNs) / 1e6);
    o += std::string("<tr") + (m.own ? " class=\"own\"" : "") + "><td>" + at + "</td><td>" + htmlEscape(m.text) +
         "</td></tr>\n";
  }
  o += "</table>\n";
  return o;
}

// The measured chains (a run's log): per chain and measure the count, median, p99 and max beside
// the planned bound and the requirement, and the occurrences over each (class "miss" when any).
std::string measuredChainsTable(const Schedule& s, const Execution& x) {
  std::string o =
      "<div class=\"meta\">measured in " + htmlEscape(x.source) +
      ": every occurrence of each chain (a reaction per source run, a data age per last-runnable run)</div>\n"
      "<table class=\"switches\" id=\"chains-measured\"><tr><th>chain</th><th>measure</th><th>count</th>"
      "<th>median</th><th>p99</th><th>max</th><th>planned</th><th>required</th><th>over planned</th>"
      "<th>over required</th></tr>\n";
  auto row = [&](const std::string& name, const char* what, const ChainMeasure& m, std::int64_t planned,
                 std::int64_t required) {
    const bool any = m.count != 0;
    auto time = [&](std::int64_t ns) { return any ? humanDuration(ns) : std::string("-"); };
    o += std::string("<tr") + (m.overPlanned + m.overRequired != 0 ? " class=\"miss\"" : "") + "><td>" +
         htmlEscape(name) + "</td><td>" + what + "</td><td>" + std::to_string(m.count) + "</td><td>" +
         time(m.medianNs) + "</td><td>" + time(m.p99Ns) + "</td><td>" + time(m.maxNs) + "</td><td>" +
         humanDuration(planned) + "</td><td>" + (required == kNoDuration ? "-" : humanDuration(required)) +
         "</td><td>" + std::to_string(m.overPlanned) + "</td><td>" +
         (required == kNoDuration ? "-" : std::to_string(m.overRequired)) + "</td></tr>\n";
  };
  for (std::size_t c = 0; c < s.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    row(chain.name, "reaction", x.chains[c].reaction, chain.reactionNs, chain.maxReactionNs);
    row(chain.name, "data age", x.chains[c].age, chain.ageNs, chain.maxAgeNs);
  }
  return o + "</table>\n";
}

// Channels and chains (tactus extension): each channel's ring and ends, each chain's path and its
// planned bounds against its requirements, and how each chain ran when measured. Nothing for a
// schedule without them.
std::string channelsSection(const Schedule& s, const Execution* execution) {
  if (s.channels.empty() && s.chains.empty()) return {};
  auto name = [&](RunnableId r) { return htmlEscape(qualifiedName(s, r)); };
  std::string o =
      "<h2>Channels and chains</h2>\n<div class=\"meta\">the buffers of each channel's ring; each chain's "
      "planned worst reaction (source release to the last runnable's end) and data age, allowance "
      "included, against its requirement</div>\n<table class=\"switches\"><tr><th>channel</th><th>size</th>"
      "<th>buffers</th><th>writer</th><th>readers</th></tr>\n";
  for (const ChannelInfo& c : s.channels) {
    o += "<tr><td>" + htmlEscape(c.name) + "</td><td>" + std::to_string(c.sizeBytes) + " B</td><td>" +
         std::to_string(c.depth) + "</td><td>" + name(c.writer) + "</td><td>";
    for (std::size_t k = 0; k < c.readers.size(); ++k) o += (k ? ", " : "") + name(c.readers[k]);
    o += "</td></tr>\n";
  }
  o += "</table>\n<table class=\"switches\"><tr><th>chain</th><th>reaction</th><th>data age</th><th>path</th></tr>\n";
  auto bound = [](std::int64_t planned, std::int64_t limit) {
    return humanDuration(planned) + (limit == kNoDuration ? std::string() : " (max " + humanDuration(limit) + ")");
  };
  for (const ChainInfo& c : s.chains) {
    o += "<tr><td>" + htmlEscape(c.name) + "</td><td>" + bound(c.reactionNs, c.maxReactionNs) + "</td><td>" +
         bound(c.ageNs, c.maxAgeNs) + "</td><td>";
    for (std::size_t k = 0; k < c.runnables.size(); ++k) o += (k ? " &rarr; " : "") + name(c.runnables[k]);
    o += "</td></tr>\n";
  }
  o += "</table>\n";
  if (execution != nullptr && execution->chains.size() == s.chains.size()) o += measuredChainsTable(s, *execution);
  return o;
}

}  // namespace

std::string renderHtml(const Schedule& schedule, const Execution* execution, const HtmlOptions& options) {
  const std::string title = options.title.empty() ? "tactus schedule " + schedule.name : options.title;
  std::size_t instanceCount = schedule.instances.size();
  std::string page;
  page.reserve(32768 + instanceCount * 64);
  page += "<!DOCTYPE html>\n<html lang=\"en\" data-errors=\"\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  page += htmlEscape(title);
  page += "</title>\n<script>";
  page += detail::kErrorTrap;
  page += "</script>\n<style>";
  page += detail::kStyle;
  page += "</style>\n</head>\n<body>\n<h1>";
  page += htmlEscape(title);
  page += "</h1>\n<div class=\"meta\">schedule '" + htmlEscape(schedule.name) + "' (identifier " +
          std::to_string(schedule.identifier) + "): " + std::to_string(schedule.clients.size()) + " clients, " +
          std::to_string(schedule.hyperepochs.size()) + " hyperepochs, " + std::to_string(schedule.epochs.size()) +
          " epochs, " + std::to_string(schedule.runnables.size()) + " runnables, " + std::to_string(instanceCount) +
          " scheduled instances";
  if (execution) page += "; executed: " + htmlEscape(execution->source);
  page += "</div>\n<div class=\"legend\" id=\"legend\"></div>\n";
  page +=
      "<h2>Graph</h2>\n<div class=\"meta\">one column per dependency depth; grey: dependency, "
      "dashed orange: submitter &rarr; submittee; hover a box for details. Collapsed: one box per client or "
      "epoch with the dependencies between them counted; click a box to open it. The filter applies to the "
      "graph, the bands and the statistics</div>\n<div class=\"ctl\" id=\"graph-ctl\"></div>\n"
      "<div id=\"graph\"></div>\n";
  // A multi-SoC schedule: the lanes of each SoC's resources under its heading.
  std::string lanes = "one lane per resource";
  if (!schedule.socs.empty()) {
    lanes = "one lane group per SoC (";
    for (std::size_t k = 0; k < schedule.socs.size(); ++k)
      lanes += (k ? ", " : "") + std::string("<span class=\"soc\">") + htmlEscape(schedule.socs[k].name) + "</span>";
    lanes += "), in it one lane per resource of that SoC,";
  }
  page += "<h2>Plan</h2>\n<div class=\"meta\" id=\"plan-meta\">" + lanes +
          " over one hyperepoch iteration; dotted lines: frame releases, red dashed: the period</div>\n"
          "<div id=\"plan\"></div>\n";
  page +=
      "<div id=\"exec-section\" style=\"display:none\"><h2>Executed against the plan</h2>\n<div class=\"meta\">"
      "per lane: the plan (faint, top) and what ran (bottom); times from the iteration's planned start; "
      "red outline: ran longer than its WCET; step with the buttons, the slider or the arrow keys</div>\n"
      "<div id=\"exec\"></div>\n<h2>Every iteration per runnable</h2>\n<div class=\"meta\">one row per "
      "runnable, one column per iteration: its longest run against its WCET (light: under half, green: under "
      "80%, yellow: under 100%, red: over); the outlined column is the iteration shown above; click a cell "
      "to show its iteration</div>\n<div id=\"bands\"></div>\n<h2>Statistics</h2>\n<div class=\"meta\">per "
      "runnable over the whole log (start jitter = actual - planned start); click a column to sort</div>\n"
      "<div id=\"stats\"></div></div>\n";
  page += channelsSection(schedule, execution);
  if (execution != nullptr && !execution->marks.empty()) page += switchesSection(*execution);
  page += "<div id=\"tip\"></div>\n<script type=\"application/json\" id=\"data\">";
  page += dataJson(schedule, execution, title);
  page += "</script>\n<script>";
  page += detail::kScript;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

std::string renderPageSet(const std::string& title, const std::vector<TitledPage>& pages) {
  std::string doc = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  doc += htmlEscape(title);
  doc +=
      "</title>\n<style>body{font-family:sans-serif;margin:1em}iframe{width:100%;height:90vh;"
      "border:1px solid #bbb}</style>\n</head>\n<body>\n<h1>";
  doc += htmlEscape(title) + "</h1>\n<ul>\n";
  for (std::size_t k = 0; k < pages.size(); ++k) {
    doc += "<li><a href=\"#page-" + std::to_string(k) + "\">" + htmlEscape(pages[k].title) + "</a></li>\n";
  }
  doc += "</ul>\n";
  for (std::size_t k = 0; k < pages.size(); ++k) {
    doc += "<h2 id=\"page-" + std::to_string(k) + "\">" + htmlEscape(pages[k].title) + "</h2>\n<iframe srcdoc=\"";
    doc += htmlEscape(pages[k].html);
    doc += "\"></iframe>\n";
  }
  doc += "</body>\n</html>\n";
  return doc;
}

Result<void> writeHtml(const std::string& path, const Schedule& schedule, const Execution* execution,
                       const HtmlOptions& options) {
  return writeFileAtomically(path, renderHtml(schedule, execution, options), "html file");
}

}  // namespace tactus::view
