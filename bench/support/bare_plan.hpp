// The plan run bare: a schedule's timelines executed with no runtime at all, as the machine
// allows, and the hand-off figures the benchmarks read from runs (tactus's and the bare one's).
// What a tactus run exceeds the bare run by is the runtime's own cost; what the bare run exceeds
// the plan by is the machine's (preemption, cold caches, the clock).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tactus/core/schedule.hpp"

namespace tactus::bench {

/// Per run with a predecessor: its start - the latest end of its predecessors (its dependencies and
/// the run before it on its core), apart by where that latest end was.
struct HandOffs {
  std::vector<std::int64_t> sameCore;   ///< on the run's own core (the run before it there, or a dependency there)
  std::vector<std::int64_t> crossCore;  ///< a dependency on another core: the cross-core hand-off
  void add(std::int64_t handOff, bool cross) { (cross ? crossCore : sameCore).push_back(handOff); }
};

/// The timeline of each instance (numbered from 1), and the instance before each on its timeline
/// (UINT32_MAX for the first).
struct Timelines {
  std::vector<std::uint32_t> of, previous;
  explicit Timelines(const Schedule& s);
};

/// Latest planned end - earliest planned start of the schedule's instances.
std::int64_t planLength(const Schedule& s);

/// What a bare run measured.
struct BareRun {
  std::vector<std::int64_t> makespans;  ///< per iteration: latest end - earliest start
  HandOffs handOffs;
  std::vector<std::int64_t> stretches;  ///< per run: measured length - the length it was given
  long preemptions = 0;                 ///< the two sides' involuntary context switches
};

/// Involuntary context switches of the reaped children so far: a child's threads taken off their
/// core while runnable (preempted), counted once the child has been waited for.
long childPreemptions();

/// The plan run without tactus: two processes pinned to cores 0 and 1, each running its cores'
/// timelines in plan order, every instance spinning (pause) on its dependencies' done words in
/// shared memory, then busy-waiting `length(instance)` ns (0: returns at once, as an empty
/// runnable); each iteration starts `periodNs` after the previous one, on both sides at once.
/// No makespans on failure.
BareRun bareRun(const Schedule& s, int iterations, std::int64_t periodNs,
                const std::function<std::int64_t(InstanceId)>& length);

/// The plan run bare as a tactus run's processes share the cores: one process per worker of the
/// run plan (a client's instances on one core), pinned to its core, running them in plan order;
/// an instance whose predecessor on its core belongs to another process sleeps on that one's done
/// word (futex) until its end wakes it, the first of a core's timeline sleeps until the iteration's
/// start (less 200 us, then spins), and dependencies on the other core are spun for (pause). So
/// every hand-off the plan makes between two processes on a core costs one futex wake and one
/// context switch, the least a runtime can pay for it: what tactus exceeds this by is its own cost.
/// Returns the makespans per iteration (empty on failure).
std::vector<std::int64_t> bareRunProcesses(const Schedule& s, int iterations, std::int64_t periodNs,
                                           const std::function<std::int64_t(InstanceId)>& length);

}  // namespace tactus::bench
