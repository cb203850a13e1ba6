// Channels and chains on the finished schedule (channel_analysis.hpp).
#include "channel_analysis.hpp"

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

}  // namespace

Result<void> analyseChannels(const Graph& graph, Schedule& schedule, std::int64_t hopAllowanceNs) {
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
    // The first chain over its requirement is the error; every chain stays in the schedule, for
    // the report and the view of the schedule made.
    const std::string plus = " (planned ";
    if (!over && chain.maxReactionNs != kNoDuration && chain.reactionNs > chain.maxReactionNs)
      over = Error{ErrorCode::kInfeasible,
                   where(c.loc) + "chain " + quoted(c.name) + ": its reaction " + humanDuration(chain.reactionNs) +
                       plus + humanDuration(bounds->reactionNs) + " + allowance " + humanDuration(allowance) +
                       ") exceeds its MaxReaction " + humanDuration(chain.maxReactionNs) + "; costliest on it: " +
                       costliest(schedule, chain, bounds->reactionCostliest, bounds->reactionCostliestNs)};
    if (!over && chain.maxAgeNs != kNoDuration && chain.ageNs > chain.maxAgeNs)
      over = Error{ErrorCode::kInfeasible,
                   where(c.loc) + "chain " + quoted(c.name) + ": its data age " + humanDuration(chain.ageNs) + plus +
                       humanDuration(bounds->ageNs) + " + allowance " + humanDuration(allowance) +
                       ") exceeds its MaxAge " + humanDuration(chain.maxAgeNs) + "; costliest on it: " +
                       costliest(schedule, chain, bounds->ageCostliest, bounds->ageCostliestNs)};
    schedule.chains.push_back(std::move(chain));
  }
  if (over) return *over;
  return {};
}

}  // namespace tactus::compiler
