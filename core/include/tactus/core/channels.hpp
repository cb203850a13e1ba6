// Channels and cause-effect chains on a planned schedule: which writer run each reader run sees,
// how many buffers a channel's ring needs, what each run must wait for so that the mapping holds
// at run time, and the planned reaction and data-age bounds of a chain.
//
// The mapping, per channel (writer W with n runs per hyperepoch iteration of period P):
//
//   hyperepoch time  0                                   P
//   W (n = 2)        |W0|            |W1|                |W0'| ...
//   reader R (fast)     |R0|  |R1|      |R2|  |R3|
//   R0 and R1 start after W0 ends -> version of W0; R2, R3 -> W1. A reader that starts before
//   the first writer run of the iteration ends reads the last run of iteration h - 1 (in the
//   first iteration: no version yet).
//
// The same mapping holds in every iteration and whatever the actual durations (within WCET):
// a reader run of the same iteration as its writer run waits for it (as for a dependency), and
// a writer run waits for the reader runs of its iteration still planned to read the version its
// buffer holds. Waits on runs of earlier iterations are implied: the master releases an
// iteration's frames only once every instance of the previous iteration has ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus {

/// The default allowance per runnable of a chain for the runtime's own hand-off (the release of
/// the source's frame and each hand-off to the next runnable), added to the planned bounds: a
/// margin above the p99 of a cross-process hand-off and of the release error that the
/// runtime-handoff and runtime-release benchmarks measure (tens of microseconds on the 2-core VM).
inline constexpr std::int64_t kDefaultChainHopAllowanceNs = 100'000;

/// What the plan gives a schedule's channels: per channel its writer runs per iteration and its
/// ring depth, every writer run's buffer and waits, every reader run's version.
struct ChannelPlan {
  std::vector<std::uint32_t> writes;  ///< per channel
  std::vector<std::uint32_t> depth;   ///< per channel
  std::vector<ChannelWrite> channelWrites;
  std::vector<ChannelRead> channelReads;
};

/// Computes the channel plan of a schedule from its instances and its channels' name, writer and
/// readers (their `writes` and `depth` are not read). Fails (kValidation) on a channel it cannot
/// map: a writer or reader out of range, a round-robin one, one of another hyperepoch than the
/// writer, a writer run missing from the plan, or a reader with no writer run before it (an
/// overlength hyperepoch).
Result<ChannelPlan> computeChannelPlan(const Schedule& schedule);

/// computeChannelPlan, stored into the schedule (channels' writes and depth, channelWrites,
/// channelReads).
Result<void> planChannels(Schedule& schedule);

/// How a chain's runnable gets its data from the one before it.
enum class ChainLink : std::uint8_t {
  kDependency,  ///< a dependency or submission: the same frame's run
  kChannel,     ///< a channel: the reader run's version (ChannelRead)
};

/// A run of an instance in hyperepoch iteration `iteration` (negative: before the first).
struct ChainRun {
  InstanceId instance{};
  std::int64_t iteration = 0;
};

/// A chain's links and how its data moves from run to run, resolved once from a schedule's plan
/// (its instances and channel plan). Runs are (instance, iteration), without times, so the same
/// paths give the planned bounds (computeChainBounds, on the plan's times) and the measured ones
/// (tactus-report, on an event log's times):
///
///   source run S (iteration h)  --dataPath-->   the run of each runnable whose data a run of the
///   last runnable decides on, going back (a channel hop: the writer run the reader's ChannelRead
///   names, of iteration h or h - 1; a dependency: the same frame's run)
///   --reactionPath-->  from S forwards, the first run of each next runnable that sees S's data or
///   newer (a channel hop: the first reader run, in time order, whose version is S's or newer)
///
/// Keeps a reference to the schedule, which must outlive it.
class ChainMap {
 public:
  /// Resolves the chain's links and runs. Fails (kValidation) on a chain whose runnables are out of
  /// range, fewer than two, round-robin, of several hyperepochs, or two consecutive ones linked by
  /// neither a dependency (submission) nor a channel, or on a channel plan without a version for a
  /// reader run of the chain.
  static Result<ChainMap> make(const Schedule& schedule, const ChainInfo& chain);

  /// Per hop (runnables - 1): how the next runnable gets the data.
  const std::vector<ChainLink>& links() const { return links_; }
  /// Per hop: the channel of a kChannel link, else kNone.
  const std::vector<std::uint32_t>& linkChannels() const { return linkChannel_; }
  /// The instances of the chain's k-th runnable (one per frame), in planned start order.
  const std::vector<InstanceId>& runs(std::size_t k) const { return byStart_[k]; }
  /// path (resized to the chain's length): from `last`, a run of the last runnable, back to the
  /// source; path[k] is the run of the chain's k-th runnable whose data `last` decides on.
  void dataPath(ChainRun last, std::vector<ChainRun>& path) const;
  /// path (resized to the chain's length): from `source`, a run of the source, forwards; path[k] is
  /// the first run of the chain's k-th runnable that sees its data or newer. Fails (kValidation)
  /// when a hop has no such run within two iterations (a channel plan that cannot be).
  Result<void> reactionPath(ChainRun source, std::vector<ChainRun>& path) const;

 private:
  ChainMap(const Schedule& schedule, const ChainInfo& chain) : s_(&schedule), chain_(&chain) {}
  Result<void> resolve();

  // A channel hop's reader: per frame, the writer instance it reads and whether of iteration h - 1.
  struct Read {
    InstanceId writer{};
    bool previous = false;
  };
  // A channel hop's reader runs in start order, each with the version it reads in iteration 0
  // (writer frame, less the writer's runs per iteration for the previous iteration's).
  struct ReaderRuns {
    std::vector<InstanceId> runs;
    std::vector<std::int64_t> offsets;
    std::vector<Read> byFrame;
  };
  const Schedule* s_;
  const ChainInfo* chain_;
  std::vector<ChainLink> links_;
  std::vector<std::uint32_t> linkChannel_;
  std::vector<std::vector<InstanceId>> byFrame_;  // per chain position: its instance per frame
  std::vector<std::vector<InstanceId>> byStart_;  // per chain position: its instances in start order
  std::vector<ReaderRuns> readers_;               // per hop (empty for a dependency)
};

/// The planned bounds of one chain, allowance not included.
struct ChainBounds {
  std::vector<ChainLink> links;            ///< per hop (runnables.size() - 1)
  std::vector<std::uint32_t> linkChannel;  ///< per hop: the channel of a kChannel link, else kNone
  std::int64_t reactionNs = 0;  ///< the worst time from a source run's release to the end of the first last-runnable
                                ///< run that sees it (or newer)
  std::int64_t ageNs = 0;       ///< the worst age of the source data at the end of a last-runnable run
  /// On the worst reaction and the worst age path: the runnable that costs most (the time from the
  /// end of the run before it, or the source's release, to its own end) and that time.
  RunnableId reactionCostliest = kNone;
  std::int64_t reactionCostliestNs = 0;
  RunnableId ageCostliest = kNone;
  std::int64_t ageCostliestNs = 0;
};

/// The links of a chain and its planned bounds over the steady state of the plan (multi-rate
/// epochs, the hyperepoch wrap). Needs the schedule's channel plan (channelReads). Fails
/// (kValidation) on a chain whose runnables are out of range, fewer than two, round-robin, of
/// several hyperepochs, or two consecutive ones linked by neither a dependency (submission)
/// nor a channel.
Result<ChainBounds> computeChainBounds(const Schedule& schedule, const ChainInfo& chain);

/// The allowance a chain's stated bounds include: hopAllowanceNs per runnable.
inline std::int64_t chainAllowanceNs(const ChainInfo& chain) {
  return chain.hopAllowanceNs * static_cast<std::int64_t>(chain.runnables.size());
}

/// Checks a schedule's channels and chains against its plan (the verifier's pass): the stored
/// writes, depths, writer and reader records equal what computeChannelPlan gives, and every
/// chain's stated bounds equal its computed ones plus its allowance. Returns the errors (none:
/// consistent); each names the channel or chain.
std::vector<std::string> channelErrors(const Schedule& schedule);

}  // namespace tactus
