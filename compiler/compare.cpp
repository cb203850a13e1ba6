// `tactus-compile --compare` (see compare.hpp): the old schedule's report against the new one's.
#include "compare.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "graph.hpp"
#include "report.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"

namespace tactus::compiler {

namespace {

// Whether `old` has the graph's resources and runnables, id for id (the graph's candidate sets
// then hold for it).
bool sameRunnables(const Graph& g, const Schedule& old) {
  if (g.runnables.size() != old.runnables.size() || g.resources.size() != old.resources.size() ||
      g.clients.size() != old.clients.size())
    return false;
  for (ResourceId r : old.resources.ids())
    if (g.resources[r].name != old.resources[r].name) return false;
  for (ClientId c : old.clients.ids())
    if (g.clients[c].name != old.clients[c].name) return false;
  for (RunnableId r : old.runnables.ids())
    if (g.runnables[r].name != old.runnables[r].name || g.runnables[r].client != old.runnables[r].client) return false;
  return true;
}

// Items of two lists matched by name: the new list's order, then those only in the old one.
template <typename Item, typename Out, typename Fill>
std::vector<Out> matchByName(const std::vector<Item>& olds, const std::vector<Item>& news, Fill fill) {
  std::vector<Out> out;
  auto find = [](const std::vector<Item>& in, const std::string& name) -> const Item* {
    auto it = std::find_if(in.begin(), in.end(), [&](const Item& x) { return x.name == name; });
    return it == in.end() ? nullptr : &*it;
  };
  for (const Item& n : news) {
    const Item* o = find(olds, n.name);
    Out item;
    item.name = n.name;
    item.presence = o ? Presence::kBoth : Presence::kAdded;
    fill(item, o, &n);
    out.push_back(std::move(item));
  }
  for (const Item& o : olds) {
    if (find(news, o.name)) continue;
    Out item;
    item.name = o.name;
    item.presence = Presence::kRemoved;
    fill(item, &o, nullptr);
    out.push_back(std::move(item));
  }
  return out;
}

// A hyperepoch's resources named as the comparison matches them: a client-local one (a CUDA
// stream, whose name each client may give its own) as `Client.Name`.
std::vector<ResourceReport> byQualifiedName(const HyperepochReport* h) {
  std::vector<ResourceReport> out = h ? h->resources : std::vector<ResourceReport>{};
  for (ResourceReport& r : out)
    if (!r.client.empty()) r.name = r.client + "." + r.name;
  return out;
}

const char* presenceWord(Presence p) {
  switch (p) {
    case Presence::kAdded: return "added";
    case Presence::kRemoved: return "removed";
    default: return "both";
  }
}

std::string signedDuration(std::int64_t ns) { return (ns > 0 ? "+" : "") + humanDuration(ns); }

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s + (right ? "" : " ");
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// One row of the text: label, old, new, difference.
std::string row(const std::string& label, const ComparedValue& v) {
  auto shown = [](std::int64_t ns) { return ns == kNoDuration ? std::string("-") : humanDuration(ns); };
  std::string diff;
  if (v.oldNs == kNoDuration && v.newNs == kNoDuration) {
    diff = "-";
  } else if (v.oldNs == kNoDuration) {
    diff = "added";
  } else if (v.newNs == kNoDuration) {
    diff = "removed";
  } else {
    diff = v.changed() ? signedDuration(v.newNs - v.oldNs) : std::string("unchanged");
  }
  return "    " + pad(label, 20, false) + pad(shown(v.oldNs), 12, true) + pad(shown(v.newNs), 12, true) +
         pad(diff, 13, true) + "\n";
}

std::string header(const std::string& what, const std::string& name, Presence p) {
  std::string title =
      what + " " + quoted(name) + (p == Presence::kBoth ? "" : std::string(" (") + presenceWord(p) + ")");
  return "  " + pad(title, 22, false) + pad("old", 12, true) + pad("new", 12, true) + pad("difference", 13, true) +
         "\n";
}

std::string valueJson(const ComparedValue& v) {
  auto n = [](std::int64_t ns) { return ns == kNoDuration ? std::string("null") : std::to_string(ns); };
  const bool both = v.oldNs != kNoDuration && v.newNs != kNoDuration;
  return "{\"old\": " + n(v.oldNs) + ", \"new\": " + n(v.newNs) +
         ", \"difference\": " + (both ? std::to_string(v.newNs - v.oldNs) : std::string("null")) + "}";
}

}  // namespace

std::size_t ScheduleComparison::changes() const {
  std::size_t n = 0;
  for (const HyperepochComparison& h : hyperepochs) {
    if (h.presence != Presence::kBoth) {
      ++n;
      continue;
    }
    n += (h.length.changed() ? 1 : 0) + (h.lowerBound.changed() ? 1 : 0);
    for (const ResourceComparison& r : h.resources) n += r.presence != Presence::kBoth || r.load.changed() ? 1 : 0;
  }
  for (const ChainComparison& c : chains) {
    if (c.presence != Presence::kBoth) {
      ++n;
      continue;
    }
    for (const ComparedValue* v : {&c.reaction, &c.maxReaction, &c.age, &c.maxAge}) n += v->changed() ? 1 : 0;
  }
  return n + inputs.size();
}

Result<Schedule> loadComparedSchedule(const std::string& path) {
  const std::string origin = operandName(path, false);
  auto text = readInputOperand(path, "schedule file (--compare)", kMaxScheduleFileBytes);
  if (!text) return text.error();
  auto schedule = readSchedule(*text, origin);
  if (!schedule) return schedule.error();
  VerifyOptions vo;
  vo.allowOverlength = true;  // an old schedule compiled with --allow-overlength is still compared
  const VerifyReport verified = verifySchedule(*schedule, vo);
  if (!verified.ok()) {
    std::string msg = origin + ": not a valid schedule file (--compare):";
    for (const std::string& e : verified.errors) msg += "\n  " + e;
    return fail(ErrorCode::kValidation, msg);
  }
  return schedule;
}

ScheduleComparison compareSchedules(const Graph& graph, const Schedule& oldSchedule, const std::string& oldOrigin,
                                    const Schedule& newSchedule, const CompileReport& newReport) {
  // The old schedule's bound from its requests: the graph's where its runnables are the
  // graph's, else those of the graph's runnables of the same names (its types for the others).
  const CompileReport oldReport = sameRunnables(graph, oldSchedule)
                                      ? buildReport(graph, oldSchedule)
                                      : buildReport(requestsForOldSchedule(graph, oldSchedule), oldSchedule);
  ScheduleComparison c;
  c.inputs = inputChanges(graph, oldSchedule);
  c.oldOrigin = oldOrigin;
  c.oldGraph = oldSchedule.name;
  c.newGraph = newSchedule.name;
  c.oldIdentifier = oldSchedule.identifier;
  c.newIdentifier = newSchedule.identifier;
  auto value = [](const auto* o, const auto* n, auto field) {
    return ComparedValue{o ? o->*field : kNoDuration, n ? n->*field : kNoDuration};
  };
  c.hyperepochs = matchByName<HyperepochReport, HyperepochComparison>(
      oldReport.hyperepochs, newReport.hyperepochs,
      [&](HyperepochComparison& h, const HyperepochReport* o, const HyperepochReport* n) {
        h.length = value(o, n, &HyperepochReport::scheduleLengthNs);
        // the bound computed from each schedule, not the search's (an old file has none)
        h.lowerBound = value(o, n, &HyperepochReport::computedLowerBoundNs);
        h.resources = matchByName<ResourceReport, ResourceComparison>(
            byQualifiedName(o), byQualifiedName(n),
            [&](ResourceComparison& r, const ResourceReport* ro, const ResourceReport* rn) {
              r.load = value(ro, rn, &ResourceReport::loadNs);
            });
      });
  c.chains = matchByName<ChainReport, ChainComparison>(
      oldReport.chains, newReport.chains, [&](ChainComparison& k, const ChainReport* o, const ChainReport* n) {
        k.reaction = value(o, n, &ChainReport::reactionNs);
        k.maxReaction = value(o, n, &ChainReport::maxReactionNs);
        k.age = value(o, n, &ChainReport::ageNs);
        k.maxAge = value(o, n, &ChainReport::maxAgeNs);
      });
  return c;
}

std::string comparisonText(const ScheduleComparison& c) {
  const std::size_t n = c.changes();
  std::string out = "compared with " + c.oldOrigin + ": " +
                    (n == 0 ? std::string("nothing changed") : std::to_string(n) + (n == 1 ? " change" : " changes")) +
                    "\n";
  if (c.oldGraph != c.newGraph || c.oldIdentifier != c.newIdentifier) {
    out += "  the old schedule is of graph " + quoted(c.oldGraph) + " (identifier " + std::to_string(c.oldIdentifier) +
           "), the new one of " + quoted(c.newGraph) + " (identifier " + std::to_string(c.newIdentifier) +
           "): compared by name\n";
  }
  if (!c.inputs.empty()) out += "  graph changes\n";
  for (const InputChange& i : c.inputs) {
    out += "    " + i.item + " " + quoted(i.name) + " " + i.change;
    if (i.change != "added" && i.change != "removed") out += ": " + i.oldValue + " -> " + i.newValue;
    out += "\n";
  }
  for (const HyperepochComparison& h : c.hyperepochs) {
    out += header("hyperepoch", h.name, h.presence);
    out += row("schedule length", h.length);
    out += row("lower bound", h.lowerBound);
    for (const ResourceComparison& r : h.resources) {
      const bool own = r.presence != Presence::kBoth && h.presence == Presence::kBoth;
      out += row("load " + r.name + (own ? std::string(" (") + presenceWord(r.presence) + ")" : ""), r.load);
    }
  }
  for (const ChainComparison& k : c.chains) {
    out += header("chain", k.name, k.presence);
    out += row("reaction", k.reaction);
    out += row("max reaction", k.maxReaction);
    out += row("data age", k.age);
    out += row("max age", k.maxAge);
  }
  return out;
}

std::string comparisonJson(const ScheduleComparison& c) {
  std::string o = "{\n    \"old\": " + jsonString(c.oldOrigin) + ",\n    \"old_graph\": " + jsonString(c.oldGraph) +
                  ",\n    \"old_identifier\": " + std::to_string(c.oldIdentifier) +
                  ",\n    \"new_graph\": " + jsonString(c.newGraph) +
                  ",\n    \"new_identifier\": " + std::to_string(c.newIdentifier) +
                  ",\n    \"changes\": " + std::to_string(c.changes()) + ",\n    \"hyperepochs\": [";
  for (std::size_t i = 0; i < c.hyperepochs.size(); ++i) {
    const HyperepochComparison& h = c.hyperepochs[i];
    o += std::string(i ? "," : "") + "\n      {\"name\": " + jsonString(h.name) +
         ", \"presence\": " + jsonString(presenceWord(h.presence)) +
         ", \"schedule_length_ns\": " + valueJson(h.length) + ", \"lower_bound_ns\": " + valueJson(h.lowerBound) +
         ", \"resources\": [";
    for (std::size_t k = 0; k < h.resources.size(); ++k) {
      const ResourceComparison& r = h.resources[k];
      o += std::string(k ? "," : "") + "\n        {\"name\": " + jsonString(r.name) +
           ", \"presence\": " + jsonString(presenceWord(r.presence)) + ", \"load_ns\": " + valueJson(r.load) + "}";
    }
    o += h.resources.empty() ? "]}" : "\n      ]}";
  }
  o += c.hyperepochs.empty() ? "]" : "\n    ]";
  o += ",\n    \"chains\": [";
  for (std::size_t i = 0; i < c.chains.size(); ++i) {
    const ChainComparison& k = c.chains[i];
    o += std::string(i ? "," : "") + "\n      {\"name\": " + jsonString(k.name) +
         ", \"presence\": " + jsonString(presenceWord(k.presence)) + ", \"reaction_ns\": " + valueJson(k.reaction) +
         ", \"max_reaction_ns\": " + valueJson(k.maxReaction) + ", \"age_ns\": " + valueJson(k.age) +
         ", \"max_age_ns\": " + valueJson(k.maxAge) + "}";
  }
  o += c.chains.empty() ? "]" : "\n    ]";
  o += ",\n    \"graph_changes\": [";
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const InputChange& x = c.inputs[i];
    o += std::string(i ? "," : "") + "\n      {\"item\": " + jsonString(x.item) + ", \"name\": " + jsonString(x.name) +
         ", \"change\": " + jsonString(x.change) + ", \"old\": " + jsonString(x.oldValue) +
         ", \"new\": " + jsonString(x.newValue) + "}";
  }
  o += c.inputs.empty() ? "]" : "\n    ]";
  o += "\n  }";
  return o;
}

}  // namespace tactus::compiler
