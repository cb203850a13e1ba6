// The search beyond the first schedules (-t, --search-steps, -j) for hyperepochs of up to
// kSearchNodeLimit instances: branch and bound over time-ordered list-scheduling decisions.
#pragma once

#include <cstddef>

#include "schedule/problem.hpp"
#include "schedule/search_problem.hpp"

namespace tactus::compiler::schedule {

/// Above this many instances per hyperepoch the tree is too large: improvement by perturbed
/// lists (perturbed_search.hpp) instead, and fusion runs by default (Fusion::kAuto).
inline constexpr std::size_t kSearchNodeLimit = 400;

/// Branch and bound for one hyperepoch, starting from the best list schedule `first`.
SearchResult branchAndBound(const SProblem& sp, const Attempt& first, const SearchLimits& lim);

}  // namespace tactus::compiler::schedule
