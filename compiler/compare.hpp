// `tactus-compile --compare OLD.tsched`: what changes between the schedule compiled now and an
// old schedule file (a what-if before deploying): per hyperepoch the schedule length and its
// lower bound and every resource's load, per chain its planned reaction and age and their
// requirements, old and new. Things are matched by name; one only in either is added or removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

struct CompileReport;
struct Graph;

/// One figure, old and new; kNoDuration where a side has none (a chain without MaxAge).
struct ComparedValue {
  std::int64_t oldNs = kNoDuration;
  std::int64_t newNs = kNoDuration;
  bool changed() const { return oldNs != newNs; }
};

/// Where a compared item is: in both schedules, only in the new one (added) or only in the old.
enum class Presence { kBoth, kAdded, kRemoved };

/// A resource's load within its hyperepoch.
struct ResourceComparison {
  std::string name;
  Presence presence = Presence::kBoth;
  ComparedValue load;
};

/// A hyperepoch's length, lower bound and loads.
struct HyperepochComparison {
  std::string name;
  Presence presence = Presence::kBoth;
  ComparedValue length;
  ComparedValue lowerBound;
  std::vector<ResourceComparison> resources;  ///< the new schedule's order, then those removed
};

/// A chain's planned bounds and requirements.
struct ChainComparison {
  std::string name;
  Presence presence = Presence::kBoth;
  ComparedValue reaction, maxReaction, age, maxAge;
};

/// A change of the input between the old schedule and the new graph (compare_inputs.cpp): a
/// runnable, resource or client added or removed, or a runnable's figure or links changed.
struct InputChange {
  std::string item;    ///< `runnable`, `resource` or `client`
  std::string name;    ///< qualified (`Client.Runnable`, `Client.Stream` for a client's own resource)
  std::string change;  ///< `added`, `removed`, `WCET`, `start time`, `deadline`, `epoch`, `dependencies`, `resources`
  /// As text (`3ms`, `A.x, A.y`); added or removed: a runnable's WCET on its side, else empty.
  std::string oldValue, newValue;
};

/// The whole comparison.
struct ScheduleComparison {
  std::string oldOrigin;  ///< the old schedule file as messages name it
  std::string oldGraph, newGraph;
  std::uint16_t oldIdentifier = 0, newIdentifier = 0;
  std::vector<HyperepochComparison> hyperepochs;  ///< the new schedule's order, then those removed
  std::vector<ChainComparison> chains;            ///< likewise
  std::vector<InputChange> inputs;                ///< the graph's changes, runnables first
  /// Figures changed plus items added or removed plus input changes (0: nothing changed).
  std::size_t changes() const;
};

/// Reads and verifies the old schedule file (`-`: standard input). Errors name the file, with
/// its line where the file's syntax is wrong.
Result<Schedule> loadComparedSchedule(const std::string& path);

/// Compares the new schedule's report with the old schedule's, computed here: with `graph` for
/// the lower bound's candidate sets where the old schedule has the same runnables as the graph
/// (the figures of a schedule compared with itself are then the same), else from its resource
/// types.
ScheduleComparison compareSchedules(const Graph& graph, const Schedule& oldSchedule, const std::string& oldOrigin,
                                    const Schedule& newSchedule, const CompileReport& newReport);

/// What changed in the input: the new graph `g`'s runnables, resources and clients against the
/// old schedule `s`'s, matched by qualified name (compare_inputs.cpp).
std::vector<InputChange> inputChanges(const Graph& g, const Schedule& s);

/// A graph for the old schedule's lower bound: its runnables (the old schedule's ids), each with
/// the requests of the new graph's runnable of the same name where every candidate is also in
/// the old schedule, else none (the report then takes its held resources' types).
Graph requestsForOldSchedule(const Graph& g, const Schedule& s);

/// The comparison as aligned text: a header line, one line per figure (old, new, difference).
std::string comparisonText(const ScheduleComparison& comparison);

/// The comparison as the JSON report's "compare" object (indented for its place in the report).
std::string comparisonJson(const ScheduleComparison& comparison);

}  // namespace tactus::compiler
