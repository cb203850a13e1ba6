// The keys of the graph format, one table per kind of map: what the reader allows (an unknown key
// is refused from here, with the closest allowed one as a guess) and what docs/format.md lists
// (tests/compiler/format_reference_test.cpp fails when the two differ).
#pragma once

#include <span>
#include <string_view>

namespace tactus::compiler::parse {

/// One key of a map of the graph, as the reference states it.
struct KeySpec {
  std::string_view key;       ///< as written in the YAML; `<graph id>`: any name (not a literal key)
  std::string_view type;      ///< `duration`, `whole number 1..10`, `list of names`, ...
  std::string_view fallback;  ///< the default: `required`, `none`, `10`, or what is taken instead
  std::string_view unit;      ///< `-` when it has none
  std::string_view stm;       ///< STM's name for it, or `tactus extension`
  std::string_view meaning;   ///< one line
  bool multiSocOnly = false;  ///< named among the allowed keys only in a multi-SoC graph
};

/// The keys of one kind of map; `title` is its section in docs/format.md (`### Runnable`).
struct KeyTable {
  std::string_view title;
  std::span<const KeySpec> keys;

  /// Whether `key` is one of the table's literal keys.
  constexpr bool has(std::string_view key) const {
    for (const KeySpec& k : keys)
      if (k.key == key) return true;
    return false;
  }
};

inline constexpr std::string_view kDuration = "duration";
inline constexpr std::string_view kTimeUnit = "ns, us, ms or s";
inline constexpr std::string_view kExtension = "tactus extension";

inline constexpr KeySpec kTopKeys[] = {
    {"Version", "text: 2.0.0 or 3.0.0", "required", "-", "Version", "the format version"},
    {"<graph id>", "map (Graph)", "required", "-", "graph ID",
     "the one other top-level key: its name is the schedule's name"},
    {"SOC", "list of `- Name: {Resources: ...}` (SoC)", "none", "-", "SOC",
     "the multi-SoC form (also allowed under the graph id)"},
    {"CrossSocLatency", "list of `{From, To, Latency}`", "none", "-", kExtension,
     "transfer times between SoCs (also allowed under the graph id)"},
};

inline constexpr KeySpec kGraphKeys[] = {
    {"Identifier", "whole number 0..65535", "0", "-", "Identifier",
     "the schedule identifier a schedule manager starts and stops"},
    {"Resources", "map: type -> list of names (Resource types)", "none", "-", "Resources",
     "the global resources (hardware engines and scheduling mutexes); not with SOC"},
    {"Hyperepochs", "list of `- Name: {...}` (Hyperepoch)", "required", "-", "Hyperepochs",
     "the timing partitions, each with its own period"},
    {"Clients", "list of `- Name: {...}` (Client)", "required", "-", "Clients",
     "the processes; a client's name is what it passes at init"},
    {"SOC", "list of `- Name: {Resources: ...}` (SoC)", "none", "-", "SOC",
     "the multi-SoC form: resources per SoC, named `Soc.Name`; not with Resources"},
    {"CrossSocLatency", "list of `{From, To, Latency}` (CrossSocLatency entry)",
     "`--cross-soc-latency` (200us) for the pairs not listed", "-", kExtension,
     "the time a dependency between two SoCs adds before its successor may start"},
    {"Channels", "list of `- Name: {...}` (Channel)", "none", "-", kExtension,
     "buffers one runnable writes and others read, each reader run seeing a version the plan fixes"},
    {"Chains", "list of `- Name: {...}` (Chain)", "none", "-", kExtension,
     "cause-effect chains whose reaction time and data age the compiler bounds"},
};

inline constexpr KeySpec kChannelKeys[] = {
    {"Writer", "`Client.Runnable`", "required", "-", kExtension, "the one runnable that writes the channel"},
    {"Readers", "list of `Client.Runnable`", "required", "-", kExtension,
     "the runnables that read it: any client and epoch of the writer's hyperepoch and SoC"},
    {"Size", "whole number 1..4294967296", "required", "bytes", kExtension, "the size of one buffer of the ring"},
};

inline constexpr KeySpec kChainKeys[] = {
    {"Runnables", "list of `Client.Runnable`", "required", "-", kExtension,
     "the path, source first: each linked to the next by a dependency, submission or channel"},
    {"MaxReaction", kDuration, "none", kTimeUnit, kExtension,
     "the longest time allowed from the source's frame release to the end of the last runnable"},
    {"MaxAge", kDuration, "none", kTimeUnit, kExtension,
     "the oldest source data allowed at the end of the last runnable (from the source's release)"},
};

inline constexpr KeySpec kSocKeys[] = {
    {"Resources", "map: type -> list of names (Resource types)", "required", "-", "Resources",
     "the SoC's global resources, named `Soc.Name` elsewhere"},
};

inline constexpr KeySpec kLatencyKeys[] = {
    {"From", "SoC name", "required", "-", kExtension, "the SoC of the predecessor"},
    {"To", "SoC name", "required", "-", kExtension, "the SoC of the successor (not From)"},
    {"Latency", kDuration, "required", kTimeUnit, kExtension, "the transfer time; a bare 0 is allowed"},
};

inline constexpr KeySpec kHyperepochKeys[] = {
    {"Period", kDuration, "its epoch's Period x Frames when it has one epoch; required otherwise", kTimeUnit, "Period",
     "the time of one hyperepoch iteration"},
    {"Resources", "list of global resource names", "every global resource when there is one hyperepoch", "-",
     "Resources", "the hyperepoch's resources; hyperepochs' sets are disjoint"},
    {"Epochs", "list of `- Name: {...}` (Epoch)", "required", "-", "Epochs", "the epochs it runs"},
    {"Monitor", kDuration, "none (the master's -t)", kTimeUnit, "Monitor",
     "the stuck budget: a wait this long for one runnable ends the run (0: none)"},
};

inline constexpr KeySpec kEpochKeys[] = {
    {"Period", kDuration, "required", kTimeUnit, "Period", "the time between two frames' releases (> 0)"},
    {"Frames", "whole number 1..65536", "1", "frames per iteration", "Frames",
     "how many frames run per hyperepoch iteration"},
    {"AliasGroups", "list of `- Name: {Steps: [...]}` (Alias group)", "none", "-", "AliasGroups",
     "round robin: runnables that take turns by frame"},
};

inline constexpr KeySpec kAliasGroupKeys[] = {
    {"Steps", "list of `Client.Runnable` or None", "required", "-", "Steps",
     "frame k runs step k mod the number of steps; None runs nothing"},
};

inline constexpr KeySpec kClientKeys[] = {
    {"SOC", "SoC name", "required in a multi-SoC graph, refused otherwise", "-", "SOC", "the SoC the client runs on",
     true},
    {"Resources", "map: type -> list (Resource types)", "none", "-", "Resources",
     "client-local resources: engine queues (`- Name: Engine`) and mutexes"},
    {"Epochs", "list of `- Hyperepoch.Epoch: {...}` (Client epoch)", "none", "-", "Epochs",
     "the client's runnables per epoch"},
};

inline constexpr KeySpec kClientEpochKeys[] = {
    {"Runnables", "list of `- Name: {...}` (Runnable)", "none", "-", "Runnables",
     "the client's runnables of the epoch"},
    {"AliasGroups", "list of `- Name: {Steps: [...]}` (Alias group)", "none", "-", "AliasGroups",
     "round robin, as under an epoch"},
};

inline constexpr KeySpec kRunnableKeys[] = {
    {"WCET", kDuration, "required", kTimeUnit, "WCET",
     "worst-case execution time the plan is made with; a bare 0 is allowed"},
    {"Resources", "list of resource or type names", "required", "-", "Resources",
     "exactly one hardware engine (or its type), any software resources"},
    {"Dependencies", "list of `Client.Runnable`", "none", "-", "Dependencies",
     "runnables of the same epoch it starts after (other clients allowed)"},
    {"Submits", "`Client.Runnable`", "none", "-", "Submits", "its submittee: the engine work this submitter enqueues"},
    {"StartTime", kDuration, "0", kTimeUnit, "StartTime",
     "earliest start, from its frame's release; a bare 0 is allowed"},
    {"Deadline", kDuration, "none", kTimeUnit, "Deadline",
     "finish by, from its frame's release (> 0); a miss is a warning"},
    {"Priority", "whole number 1..10", "10", "-", "Priority",
     "1 highest: breaks ties between runnables the list scheduler could place next"},
    {"EndMonitorThreshold", kDuration, "0", kTimeUnit, "EndMonitorThreshold",
     "a run longer than WCET + this is an overrun"},
};

inline constexpr KeyTable kTopTable{"Top level", kTopKeys};
inline constexpr KeyTable kGraphTable{"Graph", kGraphKeys};
inline constexpr KeyTable kSocTable{"SoC", kSocKeys};
inline constexpr KeyTable kLatencyTable{"CrossSocLatency entry", kLatencyKeys};
inline constexpr KeyTable kHyperepochTable{"Hyperepoch", kHyperepochKeys};
inline constexpr KeyTable kEpochTable{"Epoch", kEpochKeys};
inline constexpr KeyTable kAliasGroupTable{"Alias group", kAliasGroupKeys};
inline constexpr KeyTable kClientTable{"Client", kClientKeys};
inline constexpr KeyTable kClientEpochTable{"Client epoch", kClientEpochKeys};
inline constexpr KeyTable kRunnableTable{"Runnable", kRunnableKeys};
inline constexpr KeyTable kChannelTable{"Channel", kChannelKeys};
inline constexpr KeyTable kChainTable{"Chain", kChainKeys};

/// Every table, in the order of docs/format.md.
inline constexpr KeyTable kKeyTables[] = {kTopTable,         kGraphTable,    kSocTable,        kLatencyTable,
                                          kHyperepochTable,  kEpochTable,    kAliasGroupTable, kClientTable,
                                          kClientEpochTable, kRunnableTable, kChannelTable,    kChainTable};

}  // namespace tactus::compiler::parse
