// Graph-level rules that need no YAML: round-robin redirection, submission order, cycles,
// stream limits, and the hyperepochs' resource lists. Each works on a Graph as built, and a
// broken rule is an error `file:line: ...` (Graph::sourceFile and the runnables' lines).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler::parse {

/// `Client.Runnable` of runnable r (unescaped; quote it for messages).
std::string runnableName(const Graph& g, std::uint32_t r);

/// Sorts and removes duplicates.
void sortUnique(std::vector<std::uint32_t>& v);

/// Redirects dependencies on round-robin members to their group and moves the members'
/// dependencies to the group; refuses a group depending on a group of another step count.
Result<void> redirectToGroups(Graph& g);

/// A submitter enqueues its submittee behind the submittee's predecessors: CPU work must have
/// ended and GPU work must have been submitted (its event recorded) by the time the submitter
/// runs. So the submitter depends on the submittee's CPU predecessors and on the submitters of
/// its GPU predecessors; the scheduler then orders them and the runtime never waits on work
/// queued behind itself on the same core.
void orderSubmissions(Graph& g);

/// Refuses a dependency cycle, naming it (`'A.X' -> 'A.Y' -> 'A.X'`), with `why` appended.
Result<void> checkCycles(const Graph& g, const char* why);

/// Refuses a GPU with more client streams mapped to it than its stream limit;
/// `resourceLines` holds each resource's line.
Result<void> checkStreamLimits(const Graph& g, const std::vector<std::uint32_t>& resourceLines);

/// Fills each hyperepoch's resource list from the resources' hyperepochs (in resource order).
void finishHyperepochs(Graph& g);

}  // namespace tactus::compiler::parse
