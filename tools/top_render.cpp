// tactus-top's outputs: the terminal screen, the --json object and tactus-manager status's line
// for a plain run (see top.hpp).
#include <algorithm>
#include <sstream>

#include "tactus/core/text.hpp"
#include "top.hpp"

namespace tactus::top {

namespace {

std::int64_t mean(std::int64_t total, std::uint64_t count) {
  return count == 0 ? 0 : total / static_cast<std::int64_t>(count);
}

// A duration for a column: "-" before the first value.
std::string cell(std::int64_t ns, bool any) { return any ? humanDuration(ns) : "-"; }

std::uint64_t iterations(const ScheduleView& s) {
  std::uint64_t n = 0;
  for (const HyperepochRow& h : s.hyperepochs) n = std::max(n, h.completed);
  return n;
}

std::uint64_t overruns(const ScheduleView& s) {
  std::uint64_t n = 0;
  for (const RunnableRow& r : s.runnables) n += r.stats.overruns;
  return n;
}

std::uint64_t skipped(const ScheduleView& s) {
  std::uint64_t n = 0;
  for (const HyperepochRow& h : s.hyperepochs) n += h.skipped;
  return n;
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string switchLine(const shm::StatsSnapshot::Switch& w, const ScheduleView& s) {
  std::string line = std::string(w.kind == 1 ? "start" : "stop ") + " schedule " + std::to_string(w.schedule);
  if (w.other != 0xffffffffu)
    line += (w.kind == 1 ? " (rolled over from " : " (rolled over to ") + std::to_string(w.other) + ")";
  line += " hyperepoch " + std::to_string(w.hyperepoch) + " at iteration " + std::to_string(w.iteration);
  if (s.runStartNs != 0 && w.timeNs >= s.runStartNs)
    line += ", " + humanDuration(w.timeNs - s.runStartNs) + " into the run";
  return line;
}

void textOfSchedule(const ScheduleView& s, const Snapshot& snap, std::ostringstream& o) {
  o << "schedule " << s.identifier << " (segment " << s.segment << ", master pid " << s.masterPid << "): " << s.state;
  if (!s.stopReason.empty()) o << " (" << s.stopReason << ")";
  if (snap.managed) o << (snap.managedRunning == s.identifier ? ", running under the manager" : ", not running");
  o << "\n  iterations " << iterations(s) << ", runs beyond WCET " << overruns(s) << ", periods skipped " << skipped(s)
    << "\n\n";
  o << "  " << padded("hyperepoch", 20) << padded("period", 10) << padded("iterations", 12) << padded("skipped", 9)
    << padded("late frames", 13) << padded("jitter last", 13) << padded("mean", 10) << "max\n";
  for (const HyperepochRow& h : s.hyperepochs) {
    const bool any = h.stats.releases > 0;
    o << "  " << padded(h.name, 20) << padded(humanDuration(h.periodNs), 10) << padded(std::to_string(h.completed), 12)
      << padded(std::to_string(h.skipped), 9) << padded(std::to_string(h.stats.lateFrames), 13)
      << padded(cell(h.stats.lastJitterNs, any), 13)
      << padded(cell(mean(h.stats.totalJitterNs, h.stats.releases), any), 10) << cell(h.stats.maxJitterNs, any) << "\n";
  }
  o << "\n  " << padded("client", 20) << padded("pid", 9) << "state\n";
  for (const ClientRow& c : s.clients)
    o << "  " << padded(c.name, 20) << padded(std::to_string(c.pid), 9) << c.state << "\n";
  o << "\n  " << padded("runnable", 32) << padded("runs", 9) << padded("last", 10) << padded("median", 10)
    << padded("max", 10) << padded("WCET", 10) << "overruns\n";
  for (const RunnableRow& r : s.runnables) {
    const bool any = r.stats.count > 0;
    o << "  " << padded(r.name, 32) << padded(std::to_string(r.stats.count), 9) << padded(cell(r.stats.lastNs, any), 10)
      << padded(cell(r.stats.medianNs, any), 10) << padded(cell(r.stats.maxNs, any), 10)
      << padded(humanDuration(r.wcetNs), 10) << r.stats.overruns << (r.stats.maxNs > r.wcetNs && any ? "  >WCET" : "")
      << "\n";
  }
}

void jsonNumber(std::string& out, const char* key, std::int64_t value, bool comma = true) {
  out += "\"";
  out += key;
  out += "\":" + std::to_string(value) + (comma ? "," : "");
}

void jsonText(std::string& out, const char* key, const std::string& value, bool comma = true) {
  out += "\"";
  out += key;
  out += "\":" + jsonString(value) + (comma ? "," : "");
}

// Appends `items` as JSON objects, comma-separated, each `{` what `members` writes of it `}`.
template <typename T, typename Members>
void jsonObjects(std::string& out, const std::vector<T>& items, Members members) {
  for (std::size_t k = 0; k < items.size(); ++k) {
    out += k ? ",{" : "{";
    members(items[k]);
    out += "}";
  }
}

void jsonRows(std::string& out, const ScheduleView& s) {
  out += "\"hyperepochs\":[";
  jsonObjects(out, s.hyperepochs, [&](const HyperepochRow& h) {
    jsonText(out, "name", h.name);
    jsonNumber(out, "period_ns", h.periodNs);
    jsonNumber(out, "iterations", static_cast<std::int64_t>(h.completed));
    jsonNumber(out, "skipped_periods", static_cast<std::int64_t>(h.skipped));
    jsonNumber(out, "late_iterations", static_cast<std::int64_t>(h.stats.lateIterations));
    jsonNumber(out, "late_frames", static_cast<std::int64_t>(h.stats.lateFrames));
    jsonNumber(out, "releases", static_cast<std::int64_t>(h.stats.releases));
    jsonNumber(out, "jitter_last_ns", h.stats.lastJitterNs);
    jsonNumber(out, "jitter_mean_ns", mean(h.stats.totalJitterNs, h.stats.releases));
    jsonNumber(out, "jitter_max_ns", h.stats.maxJitterNs, false);
  });
  out += "],\"clients\":[";
  jsonObjects(out, s.clients, [&](const ClientRow& c) {
    jsonText(out, "name", c.name);
    jsonNumber(out, "pid", c.pid);
    jsonText(out, "state", c.state, false);
  });
  out += "],\"runnables\":[";
  jsonObjects(out, s.runnables, [&](const RunnableRow& r) {
    jsonText(out, "name", r.name);
    jsonText(out, "client", r.client);
    jsonNumber(out, "wcet_ns", r.wcetNs);
    jsonNumber(out, "count", static_cast<std::int64_t>(r.stats.count));
    jsonNumber(out, "last_ns", r.stats.lastNs);
    jsonNumber(out, "median_ns", r.stats.medianNs);
    jsonNumber(out, "mean_ns", mean(r.stats.totalNs, r.stats.count));
    jsonNumber(out, "max_ns", r.stats.maxNs);
    jsonNumber(out, "overruns", static_cast<std::int64_t>(r.stats.overruns), false);
  });
  out += "]";
}

}  // namespace

std::string renderText(const Snapshot& snap) {
  std::ostringstream o;
  o << "tactus-top: instance " << snap.instance;
  if (snap.managed) {
    o << ", schedule manager: "
      << (snap.managedRunning ? "schedule " + std::to_string(*snap.managedRunning) + " running" : "none running");
  }
  o << "\n\n";
  for (const ScheduleView& s : snap.schedules) {
    textOfSchedule(s, snap, o);
    o << "\n";
  }
  if (!snap.switches.empty()) {
    o << "switches (latest " << snap.switches.size() << "):\n";
    for (const auto& w : snap.switches) o << "  " << switchLine(w, snap.schedules.front()) << "\n";
  }
  return o.str();
}

std::string renderJson(const Snapshot& snap) {
  std::string out = "{";
  jsonText(out, "instance", snap.instance);
  out += "\"managed\":" + std::string(snap.managed ? "true" : "false") + ",";
  out += "\"running_schedule\":" + (snap.managedRunning ? std::to_string(*snap.managedRunning) : std::string("null"));
  out += ",\"schedules\":[";
  jsonObjects(out, snap.schedules, [&](const ScheduleView& s) {
    jsonNumber(out, "identifier", s.identifier);
    jsonText(out, "segment", s.segment);
    jsonNumber(out, "master_pid", s.masterPid);
    jsonText(out, "state", s.state);
    jsonText(out, "stop_reason", s.stopReason);
    jsonNumber(out, "iterations", static_cast<std::int64_t>(iterations(s)));
    jsonNumber(out, "overruns", static_cast<std::int64_t>(overruns(s)));
    jsonNumber(out, "skipped_periods", static_cast<std::int64_t>(skipped(s)));
    jsonRows(out, s);
  });
  out += "],\"switches\":[";
  jsonObjects(out, snap.switches, [&](const auto& w) {
    jsonText(out, "kind", w.kind == 1 ? "start" : "stop");
    jsonNumber(out, "schedule", w.schedule);
    jsonNumber(out, "other", w.other == 0xffffffffu ? -1 : std::int64_t{w.other});
    jsonNumber(out, "hyperepoch", w.hyperepoch);
    jsonNumber(out, "iteration", static_cast<std::int64_t>(w.iteration));
    jsonNumber(out, "time_ns", w.timeNs, false);
  });
  out += "]}\n";
  return out;
}

std::string plainStatus(const Snapshot& snap) {
  const ScheduleView& s = snap.schedules.front();
  std::string line = "no schedule manager (a plain run): schedule " + std::to_string(s.identifier) + " " + s.state;
  if (!s.stopReason.empty()) line += " (" + s.stopReason + ")";
  line += ", " + std::to_string(iterations(s)) + " iterations, " + std::to_string(overruns(s)) + " overruns, " +
          std::to_string(skipped(s)) + " periods skipped; clients:";
  for (const ClientRow& c : s.clients) line += " " + c.name + " " + c.state;
  return line + "\n";
}

}  // namespace tactus::top
