// tactus-top: a view of a running instance from what its master publishes in shared memory (the
// segment's header, client slots, hyperepoch slots and statistics block), read through a
// read-only mapping: nothing is written into the run and nothing is added to the workers' path.
// The logic is here so tests link it; top_main.cpp is the thin main. tactus-manager status reads
// a plain run (no manager channel) through it too.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "tactus/core/command_line.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/stats_layout.hpp"

namespace tactus::top {

/// One client of a schedule as its slot says.
struct ClientRow {
  std::string name;
  std::uint32_t pid = 0;
  std::string state;  ///< absent, attached, entered, refused, exited
};

/// One runnable: its WCET and the statistics the master's drain published.
struct RunnableRow {
  std::string name;  ///< qualified: Client.Runnable
  std::string client;
  std::int64_t wcetNs = 0;
  shm::StatsSnapshot::Runnable stats;
};

/// One hyperepoch: the slot's counters and the published statistics.
struct HyperepochRow {
  std::string name;
  std::int64_t periodNs = 0;
  std::uint64_t completed = 0;  ///< iterations fully completed (HyperepochSlot::completed)
  std::uint64_t skipped = 0;    ///< periods skipped (HyperepochSlot::skipped)
  shm::StatsSnapshot::Hyperepoch stats;
};

/// One chain: its bounds from the published schedule and what the master's drain measured.
struct ChainRow {
  std::string name;
  std::string source, last;                              ///< qualified names of its first and last runnable
  std::int64_t plannedReactionNs = 0, plannedAgeNs = 0;  ///< allowance included
  std::int64_t maxReactionNs = -1, maxAgeNs = -1;        ///< MaxReaction, MaxAge; -1: none given
  bool measured = false;                                 ///< false: beyond the statistics block's kStatsChainCapacity
  shm::StatsSnapshot::Chain stats;
};

/// One channel: its writer and what the master's drain found of its writer runs' versions.
struct ChannelRow {
  std::string name;
  std::string writer;        ///< qualified name
  std::uint32_t writes = 0;  ///< writer runs per hyperepoch iteration
  bool measured = false;     ///< false: beyond the statistics block's kStatsChannelCapacity
  shm::StatsSnapshot::Channel stats;
};

/// One schedule's segment.
struct ScheduleView {
  std::string segment;  ///< the instance name of the segment (`demo`, `demo.schedule1`)
  std::string name;     ///< the schedule's name (its graph's ID)
  std::uint32_t identifier = 0;
  std::uint32_t index = 0;          ///< position in the master's -s list
  std::uint32_t scheduleCount = 1;  ///< schedules of the instance
  std::uint32_t masterPid = 0;
  std::string state;       ///< creating, published, running, finished, aborted
  std::string stopReason;  ///< "" while running
  std::int64_t runStartNs = 0;
  std::vector<HyperepochRow> hyperepochs;
  std::vector<ClientRow> clients;
  std::vector<RunnableRow> runnables;
  std::vector<ChainRow> chains;
  std::vector<ChannelRow> channels;
  /// The instance's switch history: kept in the first schedule's block only (the master's switch
  /// records are the instance's, not one schedule's); empty in the others.
  std::vector<shm::StatsSnapshot::Switch> switches;
};

/// What tactus-top shows of an instance: every schedule's segment.
struct Snapshot {
  std::string instance;
  std::vector<ScheduleView> schedules;
  /// Under a schedule manager (-N): the identifier of the running schedule, if one runs.
  std::optional<std::uint32_t> managedRunning;
  bool managed = false;
  /// The latest schedule switches of the instance, oldest first (under a manager).
  std::vector<shm::StatsSnapshot::Switch> switches;
};

/// Reads one segment's bytes (a read-only mapping or a test's buffer): validates the segment and
/// its statistics block (a block of another version is refused, named), parses the published
/// schedule text and copies the statistics. `segment` names it in messages.
Result<ScheduleView> readSegment(std::span<std::byte> bytes, const std::string& segment);

/// Reads the instance's segments read-only (the instance's own, then schedule k's for a master
/// of several schedules). kNotFound when no master publishes the instance.
Result<Snapshot> takeSnapshot(const std::string& instance);

/// The snapshot as text for a terminal (one screen).
std::string renderText(const Snapshot& snapshot);
/// The snapshot as one JSON object (the `--json` format, stable keys).
std::string renderJson(const Snapshot& snapshot);
/// tactus-manager status's line for a run without a manager: the schedule, state, iterations,
/// overruns and clients.
std::string plainStatus(const Snapshot& snapshot);

/// The start of tactus-top's and tactus-manager's command lines (`program`): parses `args` on
/// `specs`, answers --help (`usage`) and --version on `out`, and refuses on `err` a bad line, an
/// operand where `operands` is false, and an empty -D (a unit's `-D ${X}` with X unset would
/// read another instance than the one meant). Returns the exit status when that is all (0 or 2),
/// else -1 with `line` and `instance` (-D's value; "" when not given).
int startCommandLine(const char* program, std::span<const OptionSpec> specs, const std::string& usage, bool operands,
                     const std::vector<std::string>& args, std::ostream& out, std::ostream& err, CommandLine& line,
                     std::string& instance);

/// tactus-top's command line, run: the exit status (0, 1 nothing to read, 2 bad arguments).
int topMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::top
