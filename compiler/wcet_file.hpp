// WCET side files: a YAML map `Client.Runnable: <ns or duration>` that overrides a graph's WCETs.
#pragma once

#include <string>
#include <string_view>

#include "graph.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler {

/// Applies a WCET side file to a parsed graph: each key `Client.Runnable` (split at the first
/// dot) names a runnable, each value is nanoseconds as an integer or a duration string (`12us`).
/// Round-robin groups take the new maximum of their members. Unknown runnables, duplicate keys
/// and bad values are errors naming `origin:line`; on error the graph is left unchanged. On
/// success the side file's bytes are folded into graph.sourceHash.
Result<void> applyWcetFile(Graph& graph, std::string_view text, const std::string& origin);

/// Reads a side file (`-`: standard input) and applies it with applyWcetFile (origin = path, or
/// "stdin"); unreadable is kIo.
Result<void> applyWcetFileFromPath(Graph& graph, const std::string& path);

}  // namespace tactus::compiler
