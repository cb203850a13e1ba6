// The compiler's front end: YAML text -> compact tree -> checked Graph (stm-model.md s. 2).
//
// The pieces live under graph/: yaml_tree (the only user of yaml-cpp) builds the tree with line
// numbers; tree_reader reads typed values from it; builder and resolve build the Graph;
// graph_rules checks what needs no YAML (round robin, submissions, cycles). Names are resolved
// through hash maps, so a graph with a million runnables parses in linear time. Inside, a broken
// rule throws a private Failure that parseGraph turns into an Error; nothing escapes.
#include "graph_parser.hpp"

#include <exception>
#include <new>
#include <string_view>

#include "graph/builder.hpp"
#include "graph/yaml_tree.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"

namespace tactus::compiler {

Result<Graph> parseGraph(std::string_view yamlText, const std::string& origin, const ParseOptions&) {
  Result<parse::YTree> tree = parse::readYamlTree(yamlText, origin);
  if (!tree) return tree.error();
  try {
    if (tree->root == kNone)
      return fail(ErrorCode::kParse, origin + ":1: empty graph (expected a map with Version and the graph id)");
    parse::Builder builder(*tree, origin);
    Graph graph = builder.build();
    graph.sourceFile = origin;
    graph.sourceHash = hashBytes(kHashSeed, yamlText);
    return graph;
  } catch (const parse::Failure& f) {
    return f.error;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kInternal, origin + ": out of memory while parsing");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, origin + ": unexpected failure while parsing: " + e.what());
  }
}

Result<Graph> parseGraphFile(const std::string& path, const ParseOptions& options) {
  auto text = readRegularFile(path, "graph file", kMaxGraphFileBytes);
  if (!text) return text.error();
  return parseGraph(*text, path, options);
}

}  // namespace tactus::compiler
