// The compact YAML tree that the graph and WCET readers walk: one vector of nodes, one of child
// indices, one arena of scalar text, each node with its line. yaml_tree.cpp is the only file of
// the compiler that includes yaml-cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::compiler::parse {

using u32 = std::uint32_t;

/// A broken rule, thrown inside the readers only and turned into an Error at their API.
struct Failure {
  Error error;
};

/// What a YAML node is.
enum class NodeKind : std::uint8_t { kNull, kScalar, kSeq, kMap };

/// One YAML node. Scalars: text at [a, a+b) of the arena. Containers: children at kids[a..a+b)
/// (maps as key, value, key, value, ...).
struct YNode {
  NodeKind kind = NodeKind::kNull;
  u32 line = 0;  ///< 1-based; a block collection or empty value of a map: its key's line
  u32 a = 0;
  u32 b = 0;
};

/// A whole document; aliases share the anchored node.
struct YTree {
  std::vector<YNode> nodes;
  std::vector<u32> kids;
  std::string arena;
  u32 root = kNone;  ///< kNone: no document at all

  /// The text of a scalar (empty for other kinds).
  std::string_view text(u32 n) const {
    const YNode& node = nodes[n];
    if (node.kind != NodeKind::kScalar) return {};
    return std::string_view(arena).substr(node.a, node.b);
  }
  /// Children of a container (a map counts keys and values).
  std::size_t size(u32 n) const { return nodes[n].b; }
  /// The i-th child of a container.
  u32 kid(u32 n, std::size_t i) const { return kids[nodes[n].a + i]; }
};

/// How a document is read.
struct TreeOptions {
  /// Aliases (`*name`) allowed; when false an alias is an error at its line.
  bool aliases = true;
  /// What the file holds, for the second-document message (`a graph file holds one`).
  std::string_view holds = "a graph file holds one";
  /// What the bytes are, for the NUL-byte message (`graph`, `WCET file`).
  std::string_view what = "graph";
  /// Read with yaml-cpp alone, never with the fast reader of the plain subset (tests compare the two).
  bool yamlCppOnly = false;
};

/// Reads the first YAML document of `text` into a tree. Errors (kParse, each `origin:line: ...`):
/// a NUL byte, a syntax error, nesting deeper than 256 levels, an alias to an unknown or an
/// enclosing anchor (or any alias when options.aliases is false), a second document; out of
/// memory is kInternal. Never throws.
Result<YTree> readYamlTree(std::string_view text, const std::string& origin, const TreeOptions& options = {});

}  // namespace tactus::compiler::parse
