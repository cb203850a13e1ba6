// The compile report: per-hyperepoch figures of a schedule (length, bounds, loads, idle gaps).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare.hpp"
#include "graph.hpp"
#include "scheduler.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Figures of one resource within its hyperepoch.
struct ResourceReport {
  std::string name;
  std::string client;             ///< a client-local resource's client (its name is the client's own), else empty
  std::int64_t loadNs = 0;        ///< sum of the WCETs of the instances holding it
  double utilisation = 0;         ///< load / schedule length (0 when the length is 0)
  double periodUtilisation = 0;   ///< load / hyperepoch period
  std::uint64_t instances = 0;    ///< instances holding it
  std::uint64_t idleGaps = 0;     ///< idle intervals between 0 and the schedule length
  std::int64_t idleNs = 0;        ///< total idle time between 0 and the schedule length
  std::int64_t largestGapNs = 0;  ///< longest idle interval
  double fragmentation = 0;       ///< 1 - largest gap / total idle (0 when no idle time)
};

/// A deadline missed by one instance.
struct DeadlineMiss {
  std::string runnable;  ///< qualified name `Client0.Foo`
  std::uint32_t frame = 0;
  std::int64_t endNs = 0;       ///< planned end, from the hyperepoch start
  std::int64_t deadlineNs = 0;  ///< absolute deadline, from the hyperepoch start
};

/// Figures of one hyperepoch.
struct HyperepochReport {
  std::string name;
  std::int64_t periodNs = 0;
  std::int64_t scheduleLengthNs = 0;  ///< latest instance end
  std::int64_t criticalPathNs = 0;    ///< longest dependency chain of WCETs and StartTime releases
  /// Lower bound on any valid schedule's length: the critical path, and for each requested
  /// candidate set (a pinned resource is a set of one) the work confined to it that cannot start
  /// before a release time t, spread over the set, plus the shortest tail after it, maximised
  /// over t; rounded up to the grain (the gcd of WCETs and releases, which every left-shifted
  /// schedule's length is a multiple of); and the search's bound when it proved more.
  std::int64_t lowerBoundNs = 0;
  /// The bound computed from the schedule alone (the above without the search's): what a
  /// schedule file read back gives, so what `--compare` sets against an old file's.
  std::int64_t computedLowerBoundNs = 0;
  std::int64_t searchLowerBoundNs = 0;    ///< searched: the bound the search proved (0: none)
  std::uint64_t instances = 0;            ///< scheduled instances (runnables x frames)
  std::uint64_t runnables = 0;            ///< scheduled runnables (round-robin groups count once)
  std::vector<ResourceReport> resources;  ///< resources held by its instances, by index
  std::vector<DeadlineMiss> deadlinesMissed;
  bool provenOptimal = false;      ///< scheduleLengthNs == lowerBoundNs
  bool searched = false;           ///< the search ran (a budget was given)
  std::int64_t firstLengthNs = 0;  ///< searched: length of the first (list) schedule
  std::uint64_t searchSteps = 0;   ///< searched: steps spent
  double secondsToBest = 0;        ///< searched: wall time to the best schedule (0: the first)
  /// Hand-offs between two clients on one CPU core (process switches at run time): in the
  /// schedule the search found, and after client grouping (scheduler.hpp); both 0 where no
  /// core is shared by two clients or the search info is not known.
  std::uint64_t clientSwitchesBefore = 0;
  std::uint64_t clientSwitchesAfter = 0;
  /// Multi-SoC: the dependencies between runnables of two SoCs (`A.x -> B.y (SocA -> SocB)`),
  /// and the transfer time they add along the critical path.
  std::vector<std::string> crossSocEdges;
  std::int64_t crossSocCriticalNs = 0;
};

/// A channel (tactus extension): its ring and its ends.
struct ChannelReport {
  std::string name;
  std::uint64_t sizeBytes = 0;  ///< one buffer
  std::uint32_t depth = 0;      ///< buffers in the ring
  std::string writer;           ///< qualified name
  std::uint32_t writes = 0;     ///< writer runs per hyperepoch iteration
  std::vector<std::string> readers;
  std::uint64_t readerRuns = 0;              ///< reader runs per iteration
  std::uint64_t previousIterationReads = 0;  ///< of those, runs reading the previous iteration's version
};

/// A cause-effect chain (tactus extension): its planned bounds against its requirements.
struct ChainReport {
  std::string name;
  std::vector<std::string> runnables;        ///< qualified names, source first
  std::vector<std::string> links;            ///< per hop: `dependency` or `channel 'Name'`
  std::int64_t reactionNs = 0;               ///< planned worst reaction, allowance included
  std::int64_t ageNs = 0;                    ///< planned worst data age, allowance included
  std::int64_t allowanceNs = 0;              ///< the allowance included in both
  std::int64_t maxReactionNs = kNoDuration;  ///< the requirement, if given
  std::int64_t maxAgeNs = kNoDuration;
  std::string reactionCostliest;  ///< the runnable costing most on the worst reaction
  std::int64_t reactionCostliestNs = 0;
  std::string ageCostliest;  ///< the runnable costing most on the oldest data
  std::int64_t ageCostliestNs = 0;
};

/// The whole report.
struct CompileReport {
  std::vector<HyperepochReport> hyperepochs;
  std::vector<ChannelReport> channels;  ///< tactus extension; empty for an STM graph
  std::vector<ChainReport> chains;      ///< tactus extension; empty for an STM graph
  std::string chainSearch;              ///< what chain-guided scheduling did (chain_search.hpp), if it ran
  bool multiSoc = false;                ///< the schedule has SoCs: the cross-SoC figures are shown
  double compileTimeMs = 0;             ///< filled by the caller
  /// `--compare OLD.tsched`: what changed against the old schedule (compare.hpp), filled by the caller
  std::optional<ScheduleComparison> compare;
};

/// Computes the report of a schedule made from `graph`. The graph supplies the requests'
/// candidate sets for the lower bound; when its runnables do not match the schedule's (e.g. an
/// empty Graph for a loaded schedule file), each held resource's type stands for the set.
/// `search`, when given, adds what the search proved and spent per hyperepoch.
CompileReport buildReport(const Graph& graph, const Schedule& schedule, const SearchInfo* search = nullptr);

/// The report as aligned human-readable text with units.
std::string reportText(const CompileReport& report);

/// The report as JSON, keys in a fixed order.
std::string reportJson(const CompileReport& report);

}  // namespace tactus::compiler
