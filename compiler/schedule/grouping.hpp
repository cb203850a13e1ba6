// Client grouping: fewer process switches on a core, in a schedule that stays as good.
//
// At run time every client is a process with one worker per core, and a core's instances run in
// the plan's order; what they cost beyond their own work is mostly the hand-offs between them. A
// hand-off between two instances of one client on a core stays in one thread; one between two
// clients is a process switch (6-13 us on a paravirtualized 2-core VM, measured by
// runtime-density-bench). The list scheduler orders instances by urgency alone, so clients whose
// chains are equally urgent alternate on a core: in issue 49's graph (eight clients, each a chain
// of 50 runnables, on two cores) 398 of the 398 hand-offs on the cores were between clients;
// grouped, 26, with the same length.
//
// groupClients moves runs of one client's instances on a core next to that client's other
// instances there (a run moved back after the client's previous run, or forward before its
// next) and keeps a move only where the schedule stays valid and as good: every instance is
// retimed as early as the new orders allow (dependencies, releases, every resource's order) and
// the result may have no more boundary or deadline misses and no greater length than before. So
// a schedule proven optimal stays optimal, and lengths, bounds and fits are unchanged or better.
//
// What moves: plain CPU runnables holding one CPU resource and on no chain (tactus extension).
// Everything else (submitters and engine work, round-robin slots, instances with mutexes or
// several resources, chain members, whose times fix the chain's figures) keeps its planned start.
// Hyperepochs with cross-SoC transfer times are left as they are.
#pragma once

#include <cstdint>

#include "schedule/problem.hpp"

namespace tactus::compiler::schedule {

/// Work units (instances and dependencies retimed, per move tried) one hyperepoch's grouping may
/// spend: 0.05-0.1 s on the 2-core VM. A hyperepoch of a few thousand instances is grouped
/// throughout (issue 49's 400-instance graph needs about 0.7 million); on larger ones the moves
/// found within it are kept (a 5,000-runnable generated graph: 0.11 s to compile, 0.01 s of it
/// grouping, median of seven).
inline constexpr std::uint64_t kGroupingBudget = 4'000'000;

/// Grouping runs only where the budget allows this many moves to be tried: in a hyperepoch too
/// large for that (tens of thousands of instances) it could not change enough to be worth its
/// time (on a 50,000-runnable generated graph it took 0.2 s to remove 2 of 94,848 switches).
inline constexpr std::uint64_t kGroupingMinMoves = 32;

/// What grouping did for one hyperepoch.
struct GroupingInfo {
  std::uint64_t switchesBefore = 0;  ///< hand-offs between two clients on one core, before
  std::uint64_t switchesAfter = 0;   ///< and after
  std::uint64_t movesTried = 0;
  std::uint64_t movesKept = 0;
};

/// Hand-offs between two clients' instances on one CPU core in `a` (consecutive instances of a
/// core's order that belong to different clients).
std::uint64_t clientSwitches(const Problem& pb, const Attempt& a);

/// `best` with runs of one client's instances on a core grouped where that keeps it as good (see
/// above); `best` itself where nothing can move.
Attempt groupClients(const Problem& pb, Attempt best, GroupingInfo& info, std::uint64_t budget = kGroupingBudget);

}  // namespace tactus::compiler::schedule
