// The improvement search for hyperepochs too large for the branch and bound: iterated list
// scheduling with perturbed priorities.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/problem.hpp"
#include "schedule/search_problem.hpp"

namespace tactus::compiler::schedule {

/// A deterministic 64-bit mix (SplitMix64's step): the perturbations' random numbers.
std::uint64_t splitMix(std::uint64_t x);

/// Improvement for hyperepochs too large for the tree: iterated list scheduling with perturbed
/// priorities (latest start plus noise, or the best schedule's start order plus noise), in
/// rounds of a fixed number of runs merged in run order, so a step budget is -j independent.
/// `touched` are the resources whose free time each run starts from empty.
SearchResult perturbedLists(const Problem& pb, const SProblem& sp, const Attempt& first,
                            const std::vector<std::uint32_t>& touched, const SearchLimits& lim);

}  // namespace tactus::compiler::schedule
