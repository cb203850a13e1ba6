// Warnings about a graph that is valid but most likely not what its author meant (the traps of
// the format), found on the Graph without YAML: `file:line: ...` each.
#pragma once

#include <string>
#include <vector>

#include "graph.hpp"

namespace tactus::compiler {

/// An epoch whose Period x Frames covers less than this share of its hyperepoch's period is
/// warned about (percent).
inline constexpr int kMinEpochCoveragePercent = 90;

/// The warnings of a checked graph, in graph order. Today: an epoch whose Period x Frames covers
/// less than 90% of its hyperepoch's period (`{Period: 33.33ms}` in a 100 ms hyperepoch without
/// `Frames: 3` runs at 10 Hz, not 30), naming the `Frames:` value that fills it, or, where none
/// does, a Period that would.
std::vector<std::string> graphWarnings(const Graph& g);

}  // namespace tactus::compiler
