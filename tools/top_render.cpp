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

// A bound for a column: "-" when none is given.
std::string boundCell(std::int64_t ns) { return ns < 0 ? "-" : humanDuration(ns); }

// The chains section: per chain a row for its reactions and one for its data ages, each with the
// latest and the worst occurrence against the planned bound and the requirement.
void textOfChains(const ScheduleView& s, std::ostringstream& o) {
  if (s.chains.empty()) return;
  o << "\n  " << padded("chain", 24) << padded("measure", 10) << padded("count", 8) << padded("latest", 10)
    << padded("worst", 10) << padded("planned", 10) << padded("required", 10) << "over planned/required\n";
  for (const ChainRow& c : s.chains) {
    if (!c.measured) {
      o << "  " << padded(c.name, 24) << "not measured at run time (beyond the " << shm::kStatsChainCapacity
        << " chains the statistics block holds): tactus-report measures it from the log\n";
      continue;
    }
    for (const bool reaction : {true, false}) {
      const shm::StatsSnapshot::Measure& m = reaction ? c.stats.reaction : c.stats.age;
      const std::int64_t planned = reaction ? c.plannedReactionNs : c.plannedAgeNs;
      const std::int64_t required = reaction ? c.maxReactionNs : c.maxAgeNs;
      const bool any = m.count > 0;
      o << "  " << padded(reaction ? c.name : "", 24) << padded(reaction ? "reaction" : "age", 10)
        << padded(std::to_string(m.count), 8) << padded(cell(m.lastNs, any), 10) << padded(cell(m.maxNs, any), 10)
        << padded(humanDuration(planned), 10) << padded(boundCell(required), 10) << m.overPlanned << "/"
        << m.overRequired;
      if (any && required >= 0 && m.maxNs > required) o << (reaction ? "  >MaxReaction" : "  >MaxAge");
      if (m.unmatched > 0) o << "  (" << m.unmatched << " not matched)";
      o << "\n";
    }
  }
}

// The channels section: per channel its writer runs' versions, written or not.
void textOfChannels(const ScheduleView& s, std::ostringstream& o) {
  if (s.channels.empty()) return;
  o << "\n  " << padded("channel", 24) << padded("writer", 32) << padded("writes", 9) << padded("not written", 13)
    << "unseen\n";
  for (const ChannelRow& c : s.channels) {
    o << "  " << padded(c.name, 24) << padded(c.writer, 32);
    if (!c.measured) {
      o << "not counted at run time (beyond the " << shm::kStatsChannelCapacity
        << " channels the statistics block holds)\n";
      continue;
    }
    o << padded(std::to_string(c.stats.writes), 9) << padded(std::to_string(c.stats.notWritten), 13) << c.stats.unseen
      << "\n";
  }
}

void textOfSchedule(const ScheduleView& s, const Snapshot& snap, std::ostringstream& o) {
  o << "schedule " << s.identifier << " " << quoted(s.name) << " (segment " << s.segment << ", master pid "
    << s.masterPid << "): " << s.state;
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
  textOfChains(s, o);
  textOfChannels(s, o);
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

void jsonMeasure(std::string& out, const char* key, const shm::StatsSnapshot::Measure& m, std::int64_t planned,
                 std::int64_t required) {
  out += "\"";
  out += key;
  out += "\":{";
  jsonNumber(out, "count", static_cast<std::int64_t>(m.count));
  jsonNumber(out, "last_ns", m.lastNs);
  jsonNumber(out, "last_end_ns", m.lastEndNs);
  jsonNumber(out, "last_iteration", m.lastIteration);
  jsonNumber(out, "max_ns", m.maxNs);
  jsonNumber(out, "over_planned", static_cast<std::int64_t>(m.overPlanned));
  jsonNumber(out, "over_required", static_cast<std::int64_t>(m.overRequired));
  jsonNumber(out, "unmatched", static_cast<std::int64_t>(m.unmatched));
  jsonNumber(out, "planned_ns", planned);
  out += "\"required_ns\":" + (required < 0 ? std::string("null") : std::to_string(required)) + "}";
}

void jsonChainsAndChannels(std::string& out, const ScheduleView& s) {
  out += ",\"chains\":[";
  jsonObjects(out, s.chains, [&](const ChainRow& c) {
    jsonText(out, "name", c.name);
    jsonText(out, "source", c.source);
    jsonText(out, "last", c.last);
    out += "\"measured\":" + std::string(c.measured ? "true" : "false");
    if (!c.measured) return;
    out += ",";
    jsonMeasure(out, "reaction", c.stats.reaction, c.plannedReactionNs, c.maxReactionNs);
    out += ",";
    jsonMeasure(out, "age", c.stats.age, c.plannedAgeNs, c.maxAgeNs);
  });
  out += "],\"channels\":[";
  jsonObjects(out, s.channels, [&](const ChannelRow& c) {
    jsonText(out, "name", c.name);
    jsonText(out, "writer", c.writer);
    jsonNumber(out, "writes_per_iteration", c.writes);
    out += "\"measured\":" + std::string(c.measured ? "true" : "false");
    if (!c.measured) return;
    out += ",";
    jsonNumber(out, "writes", static_cast<std::int64_t>(c.stats.writes));
    jsonNumber(out, "not_written", static_cast<std::int64_t>(c.stats.notWritten));
    jsonNumber(out, "unseen", static_cast<std::int64_t>(c.stats.unseen));
    jsonNumber(out, "last_iteration", c.stats.lastIteration, false);
  });
  out += "]";
}

// The running schedule under a manager: "schedule 402 'Mode402' running", or "none running".
std::string runningText(const Snapshot& snap) {
  if (!snap.managedRunning) return "none running";
  std::string text = "schedule " + std::to_string(*snap.managedRunning);
  for (const ScheduleView& s : snap.schedules)
    if (s.identifier == *snap.managedRunning) text += " " + quoted(s.name);
  return text + " running";
}

}  // namespace

std::string renderText(const Snapshot& snap) {
  std::ostringstream o;
  o << "tactus-top: instance " << snap.instance;
  if (snap.managed) {
    o << ", schedule manager: " << runningText(snap);
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
  std::string runningName;
  for (const ScheduleView& s : snap.schedules)
    if (snap.managedRunning && s.identifier == *snap.managedRunning) runningName = s.name;
  out += ",\"running_schedule_name\":" + (runningName.empty() ? std::string("null") : jsonString(runningName));
  out += ",\"schedules\":[";
  jsonObjects(out, snap.schedules, [&](const ScheduleView& s) {
    jsonNumber(out, "identifier", s.identifier);
    jsonText(out, "segment", s.segment);
    jsonText(out, "name", s.name);
    jsonNumber(out, "master_pid", s.masterPid);
    jsonText(out, "state", s.state);
    jsonText(out, "stop_reason", s.stopReason);
    jsonNumber(out, "iterations", static_cast<std::int64_t>(iterations(s)));
    jsonNumber(out, "overruns", static_cast<std::int64_t>(overruns(s)));
    jsonNumber(out, "skipped_periods", static_cast<std::int64_t>(skipped(s)));
    jsonRows(out, s);
    jsonChainsAndChannels(out, s);
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
