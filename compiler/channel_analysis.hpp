// Channels and cause-effect chains on the finished schedule (tactus extension): the graph's
// channels and chains copied into the schedule, each channel's versions planned, each chain's
// reaction and data-age bounds computed and held against its requirements.
#pragma once

#include <cstdint>

#include "graph.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Copies the graph's channels and chains into `schedule` (made from `graph`), plans the
/// channels' versions (planChannels) and states every chain's bounds with `hopAllowanceNs` per
/// runnable. Refuses (kInfeasible) a chain whose bound exceeds its MaxReaction or MaxAge, naming
/// the chain, where it is written, the bound and the runnable on it that costs most; the schedule
/// then holds every chain, for the report and the view. This is a check on the schedule made:
/// chain-guided scheduling (chain_search.hpp) is what shortens chains.
/// With `provenImpossible` (chain-guided scheduling proved that no schedule meets the chains,
/// ChainSearchNote::impossible), the refusal calls the bound impossible and says why, with no hint.
Result<void> analyseChannels(const Graph& graph, Schedule& schedule, std::int64_t hopAllowanceNs,
                             bool provenImpossible = false);

}  // namespace tactus::compiler
