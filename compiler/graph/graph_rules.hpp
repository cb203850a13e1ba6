// Graph-level rules that need no YAML: round-robin redirection, shared-stream order, cycles,
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
std::string runnableName(const Graph& g, RunnableId r);

/// Sorts and removes duplicates.
void sortUnique(std::vector<RunnableId>& v);

/// Redirects dependencies on round-robin members to their group and moves the members'
/// dependencies to the group; refuses a group depending on a group of another step count.
Result<void> redirectToGroups(Graph& g);

/// A submitter depends only on what the graph says: it enqueues its work, and the stream waits
/// on the GPU for the work's predecessors (wherever they run), so nothing is added for them.
/// What is added is the order a shared stream forces: of two submitters bound to one stream in
/// one epoch, where one's submitter depends on the other's, or one's work on the other's work,
/// the other submits first, so each follows it and its work follows the other's work (the
/// stream runs its work in submission order). Other pairs get no order: the scheduler chooses
/// it. Refuses a GPU wait cycle (a pair forced both ways: the work queued first would wait for
/// work queued behind it), naming both paths.
Result<void> orderStreams(Graph& g);

/// Refuses a dependency cycle, naming it (`'A.X' -> 'A.Y' -> 'A.X'`), with `why` appended.
Result<void> checkCycles(const Graph& g, const char* why);

/// Refuses a GPU with more client streams mapped to it than its stream limit;
/// `resourceLines` holds each resource's line.
Result<void> checkStreamLimits(const Graph& g, const IdVector<ResourceId, std::uint32_t>& resourceLines);

/// Fills each hyperepoch's resource list from the resources' hyperepochs (in resource order).
void finishHyperepochs(Graph& g);

}  // namespace tactus::compiler::parse
