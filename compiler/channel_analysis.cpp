// Channels and chains on the finished schedule (channel_analysis.hpp).
#include "channel_analysis.hpp"

#include <algorithm>
#include <optional>

#include "tactus/core/channels.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

std::string where(const SourceLoc& loc) {
  return loc.file.empty() ? std::string() : loc.file + ":" + std::to_string(loc.line) + ": ";
}

// `'C.B' (12ms from the end of 'C.A' to its own end)`: what the costliest runnable costs.
std::string costliest(const Schedule& s, const ChainInfo& chain, RunnableId r, std::int64_t ns) {
  std::string from = "its frame's release";
  for (std::size_t k = 1; k < chain.runnables.size(); ++k)
    if (chain.runnables[k] == r) from = "the end of " + quoted(qualifiedName(s, chain.runnables[k - 1]));
  return quoted(qualifiedName(s, r)) + " (" + humanDuration(ns) + " from " + from +
         " to its own end, waiting and running)";
}

// The frame release of instance `i`, from its iteration's start.
std::int64_t releaseOf(const Schedule& s, InstanceId i) {
  const InstanceInfo& inst = s.instances[i];
  return static_cast<std::int64_t>(inst.frame) * s.epochs[s.runnables[inst.runnable].epoch].periodNs;
}

// For each channel hop of the chain whose reader runs see an older frame's version than the plan
// could give them: how to make them read a newer one. Same rate: a dependency on the writer (the
// same frame's version); another rate: a StartTime after the latest writer run the reader can
// still follow within its frame. Empty when no hop reads older data than it could.
std::string freshnessHints(const Schedule& s, const ChainInfo& chain, const ChainBounds& bounds) {
  std::string hints;
  for (std::size_t k = 0; k + 1 < chain.runnables.size() && k < bounds.links.size(); ++k) {
    if (bounds.links[k] != ChainLink::kChannel) continue;
    const RunnableId w = chain.runnables[k], r = chain.runnables[k + 1];
    const RunnableInfo& reader = s.runnables[r];
    const std::string rName = quoted(qualifiedName(s, r)), wName = qualifiedName(s, w);
    const std::string channel = quoted(s.channels[bounds.linkChannel[k]].name);
    std::int64_t suggestNs = -1;  // a StartTime for the reader, from its frame's release
    bool stale = false;
    for (const ChannelRead& read : s.channelReads) {
      if (read.channel != bounds.linkChannel[k] || s.instances[read.instance].runnable != r) continue;
      const std::int64_t rRelease = releaseOf(s, read.instance);
      const std::int64_t latestStart = rRelease + s.epochs[reader.epoch].periodNs - reader.wcetNs;
      // The newest writer run of the iteration the reader could follow and still end in its frame.
      std::optional<InstanceId> best;
      for (InstanceId i : s.instances.ids()) {
        const InstanceInfo& inst = s.instances[i];
        if (inst.runnable != w || inst.endNs > latestStart) continue;
        if (!best || inst.endNs > s.instances[*best].endNs) best = i;
      }
      if (!best) continue;
      const bool older = read.previousIteration || releaseOf(s, read.writer) < releaseOf(s, *best);
      if (!older) continue;
      stale = true;
      suggestNs = std::max(suggestNs, s.instances[*best].endNs - rRelease);
    }
    if (!stale) continue;
    hints.append("; hint: ").append(rName).append(" reads channel ").append(channel);
    if (reader.epoch == s.runnables[w].epoch) {
      hints.append(" from an older frame's run of ").append(quoted(wName)).append(": 'Dependencies: [");
      hints.append(wName).append("]' on ").append(rName).append(" makes it read the same frame's version");
    } else if (suggestNs > reader.startTimeNs) {
      hints.append(" from an older run of ").append(quoted(wName)).append(" than it could: 'StartTime: ");
      hints.append(humanDuration(suggestNs)).append("' on ").append(rName);
      hints.append(" makes it start after the newest run it can follow in its frame, and read that one");
    } else {
      hints.append(" from an older run of ").append(quoted(wName)).append(" than it could");
    }
  }
  return hints;
}

// What no schedule can beat: the chain's runnables run one after another (each after the data of
// the one before it), so a reaction or data age is at least their WCETs' sum, allowance included.
std::int64_t chainFloorNs(const Schedule& s, const ChainInfo& chain) {
  std::int64_t sum = chainAllowanceNs(chain);
  for (RunnableId r : chain.runnables) sum += s.runnables[r].wcetNs;
  return sum;
}

// The error of a chain over MaxReaction and/or MaxAge: both named, an impossible bound (below the
// WCETs, or `proven` so by chain-guided scheduling) called so, else with how the data could be
// fresher.
Error chainOver(const Schedule& s, const ChainInfo& chain, const ChainBounds& bounds, const std::string& at,
                bool proven) {
  const std::int64_t allowance = chainAllowanceNs(chain), floor = chainFloorNs(s, chain);
  std::string what;
  bool impossible = false;
  const auto one = [&](const char* measure, const char* key, std::int64_t planned, std::int64_t bound,
                       RunnableId costly, std::int64_t costlyNs) {
    if (bound == kNoDuration || planned <= bound) return;
    what += std::string(what.empty() ? "" : "; and ") + "its " + measure + " " + humanDuration(planned) + " (planned " +
            humanDuration(planned - allowance) + " + allowance " + humanDuration(allowance) + ") exceeds its " + key +
            " " + humanDuration(bound);
    impossible = impossible || bound < floor || proven;
    if (bound < floor)
      what += ", which no schedule can meet: its runnables' WCETs and allowance alone take " + humanDuration(floor) +
              " (a " + key + " below that is impossible)";
    else if (proven)
      what +=
          ", which no schedule can meet (chain-guided scheduling tried every StartTime of the chains' readers "
          "that changes the data they read, and nothing else moves their runs)";
    else what += "; costliest on it: " + costliest(s, chain, costly, costlyNs);
  };
  one("reaction", "MaxReaction", chain.reactionNs, chain.maxReactionNs, bounds.reactionCostliest,
      bounds.reactionCostliestNs);
  one("data age", "MaxAge", chain.ageNs, chain.maxAgeNs, bounds.ageCostliest, bounds.ageCostliestNs);
  return Error{ErrorCode::kInfeasible, at + "chain " + quoted(chain.name) + ": " + what +
                                           (impossible ? std::string() : freshnessHints(s, chain, bounds))};
}

}  // namespace

Result<void> analyseChannels(const Graph& graph, Schedule& schedule, std::int64_t hopAllowanceNs,
                             bool provenImpossible) {
  if (graph.channels.empty() && graph.chains.empty()) return {};
  schedule.channels.clear();
  for (const GraphChannel& c : graph.channels) {
    ChannelInfo info;
    info.name = c.name;
    info.sizeBytes = c.sizeBytes;
    info.writer = c.writer;
    info.readers = c.readers;
    schedule.channels.push_back(std::move(info));
  }
  if (auto planned = planChannels(schedule); !planned)
    return Error{planned.error().code, graph.sourceFile + ": " + planned.error().message};
  schedule.chains.clear();
  std::optional<Error> over;
  for (const GraphChain& c : graph.chains) {
    ChainInfo chain;
    chain.name = c.name;
    chain.runnables = c.runnables;
    chain.maxReactionNs = c.maxReactionNs;
    chain.maxAgeNs = c.maxAgeNs;
    chain.hopAllowanceNs = hopAllowanceNs;
    auto bounds = computeChainBounds(schedule, chain);
    if (!bounds) return Error{bounds.error().code, where(c.loc) + bounds.error().message};
    const std::int64_t allowance = chainAllowanceNs(chain);
    chain.reactionNs = bounds->reactionNs + allowance;
    chain.ageNs = bounds->ageNs + allowance;
    // The first chain over its requirements is the error; every chain stays in the schedule, for
    // the report and the view of the schedule made.
    const bool overReaction = chain.maxReactionNs != kNoDuration && chain.reactionNs > chain.maxReactionNs;
    const bool overAge = chain.maxAgeNs != kNoDuration && chain.ageNs > chain.maxAgeNs;
    if (!over && (overReaction || overAge)) over = chainOver(schedule, chain, *bounds, where(c.loc), provenImpossible);
    schedule.chains.push_back(std::move(chain));
  }
  if (over) return *over;
  return {};
}

}  // namespace tactus::compiler
