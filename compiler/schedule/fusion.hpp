// Runnable fusion (-wt, -nrf; see Fusion in scheduler.hpp): chains of short CPU runnables of a
// hyperepoch's problem fused into one unit each, and a fused schedule split back.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/problem.hpp"
#include "scheduler.hpp"

namespace tactus::compiler::schedule {

/// A hyperepoch's problem with chains of short CPU runnables fused into one local runnable each.
struct FusedProblem {
  Problem pb;                                      // the fused problem (heads stand for their chains)
  IdVector<RunnableId, std::int64_t> wcet;         // the graph's WCETs, a head's = its chain's sum
  std::vector<std::uint32_t> fusedOf;              // unfused local -> fused local
  std::vector<std::int64_t> offsetNs;              // unfused local -> start offset inside its chain
  std::vector<std::uint32_t> position;             // unfused local -> position inside its chain
  std::vector<std::vector<std::uint32_t>> chains;  // the chains of two or more (unfused locals)
  std::uint32_t longest = 1;                       // longest chain
};

/// Fuses the chains of `pb`: a link a -> b where b is a's only successor and a is b's only
/// predecessor, both plain CPU runnables (no submitter, submittee or round-robin group) of one
/// client and epoch with the same requests and WCETs below `thresholdNs`; b has no StartTime
/// and a no Deadline (so a chain keeps its head's StartTime and its tail's Deadline). No chains:
/// `chains` is empty and the rest is not to be used.
FusedProblem fuseChains(const Problem& pb, const IdVector<RunnableId, std::int64_t>& wcet, std::int64_t thresholdNs);

/// Splits a schedule of the fused problem back: each chain member runs right after its
/// predecessor on the same resources; the placement order keeps the chain's order.
Attempt splitFused(const Problem& pb, const FusedProblem& fp, const Attempt& fa);

/// Whether runnable fusion runs for a hyperepoch of `instances` unfused instances.
bool fusionApplies(const ScheduleOptions& options, std::size_t instances);

}  // namespace tactus::compiler::schedule
