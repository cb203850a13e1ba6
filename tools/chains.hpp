// tactus-report's measured cause-effect chains: every occurrence of each chain of the schedule in
// an event log, by the definitions of the planned bounds (core/channels.hpp) on measured times.
//
//   source run S (iteration h)    last runnable's runs
//   release R ----[S]--[..]==channel==>[..]--[L]  end E
//   reaction of S: E - R, L the first run of the last runnable that sees S's data or newer
//   data age at L: E - R, S the source run whose data L decides on (ChannelRead: iteration h or
//                  h - 1; a dependency: the same frame's run)
//
// R is the source frame's ideal release as the master logged it (kRelease), as the plan counts
// from the ideal release and the deadline check does; the runs are followed by the schedule's
// ChainMap, the same as the compiler's; only the times differ. An occurrence counts when the log
// holds both its source run and its last run.
#pragma once

#include <string>
#include <vector>

#include "analysis.hpp"

namespace tactus::report {

/// Every chain of the schedule measured on the log (per chain, in the schedule's order); the
/// analysis gives the valid runs, the iterations and their starts. A chain the schedule's plan
/// cannot follow (a verified schedule always can) has its error and no occurrence.
std::vector<ChainStats> measureChains(const Schedule& schedule, const LogFile& log, const Analysis& analysis);

/// A chain occurrence over a bound, for a message.
struct ChainMiss {
  std::size_t chain = 0;  ///< index into Schedule::chains
  bool reaction = true;   ///< a reaction (else a data age)
  ChainOccurrence occurrence;
  bool overPlanned = false;   ///< longer than the planned bound (allowance included)
  bool overRequired = false;  ///< longer than MaxReaction / MaxAge
};

/// Every occurrence over its planned bound or its requirement, chain by chain, reactions first.
std::vector<ChainMiss> chainMisses(const Schedule& schedule, const Analysis& analysis);

/// One line on a miss: `chain 'C' reaction from Sensing.Capture frame 1 of iteration 12 to
/// Planning.Actuate frame 0 of iteration 13: 65.2ms, over its planned 51.5ms and its MaxReaction 60ms`.
std::string describeChainMiss(const Schedule& schedule, const ChainMiss& miss);

}  // namespace tactus::report
