// docs/format.md against the reader's tables of keys (compiler/graph/keys.hpp): every key table of
// the reference is one of the reader's, row for row (key, type, default, unit, STM name, meaning),
// and the reference's example graphs compile and use every key of every table, so the reference
// cannot drift from what the compiler reads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/keys.hpp"
#include "graph/yaml_tree.hpp"
#include "graph_parser.hpp"
#include "tactus/core/schedule.hpp"

namespace {

using tactus::compiler::parse::KeySpec;
using tactus::compiler::parse::KeyTable;
using tactus::compiler::parse::kKeyTables;
using tactus::compiler::parse::NodeKind;
using tactus::compiler::parse::u32;
using tactus::compiler::parse::YTree;

constexpr std::string_view kHeader = "| key | type | default | unit | STM | meaning |";

std::string referenceText() {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  const std::string path = std::string(root ? root : "../..") + "/docs/format.md";
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The cells of a table row `| a | b |`.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string_view rest = std::string_view(row).substr(2, row.size() - 4);  // without `| ` and ` |`
  for (std::size_t bar; (bar = rest.find(" | ")) != std::string_view::npos; rest.remove_prefix(bar + 3))
    out.emplace_back(rest.substr(0, bar));
  out.emplace_back(rest);
  return out;
}

/// The key tables of the reference: per `### Title` heading followed by a table with kHeader, its rows.
std::map<std::string, std::vector<std::vector<std::string>>> referenceTables(const std::string& text) {
  std::map<std::string, std::vector<std::vector<std::string>>> tables;
  std::istringstream in(text);
  std::string line, title;
  bool inTable = false;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0) {
      title = line.substr(4);
      inTable = false;
    } else if (line == kHeader) {
      CHECK(tables.count(title) == 0);  // one key table per heading
      tables[title];
      inTable = true;
    } else if (inTable && line.rfind("| ---", 0) == 0) {
      continue;
    } else if (inTable && line.rfind("| ", 0) == 0) {
      tables[title].push_back(cells(line));
    } else {
      inTable = false;
    }
  }
  return tables;
}

std::vector<std::string> expectedRow(const KeySpec& k) {
  return {"`" + std::string(k.key) + "`",
          std::string(k.type),
          std::string(k.fallback),
          std::string(k.unit),
          std::string(k.stm),
          std::string(k.meaning)};
}

std::vector<std::string> yamlExamples(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = text.find("```yaml\n"); at != std::string::npos; at = text.find("```yaml\n", at)) {
    at += 8;
    const std::size_t end = text.find("```", at);
    REQUIRE(end != std::string::npos);
    out.push_back(text.substr(at, end - at));
  }
  return out;
}

/// Where a key's value holds maps of another table: a list of `- Name: {...}` items (`named`) or
/// of plain maps.
struct Child {
  std::string_view table, key, child;
  bool named;
};
constexpr Child kChildren[] = {
    {"Top level", "SOC", "SoC", true},
    {"Top level", "CrossSocLatency", "CrossSocLatency entry", false},
    {"Graph", "Hyperepochs", "Hyperepoch", true},
    {"Graph", "Clients", "Client", true},
    {"Graph", "SOC", "SoC", true},
    {"Graph", "CrossSocLatency", "CrossSocLatency entry", false},
    {"Hyperepoch", "Epochs", "Epoch", true},
    {"Epoch", "AliasGroups", "Alias group", true},
    {"Client", "Epochs", "Client epoch", true},
    {"Client epoch", "Runnables", "Runnable", true},
    {"Client epoch", "AliasGroups", "Alias group", true},
    {"Graph", "Channels", "Channel", true},
    {"Graph", "Chains", "Chain", true},
};

using Used = std::set<std::pair<std::string, std::string>>;  // (table title, key)

void walk(const YTree& t, u32 map, std::string_view table, Used& used) {
  if (t.nodes[map].kind != NodeKind::kMap) return;
  for (std::size_t i = 0; i < t.size(map) / 2; ++i) {
    std::string key(t.text(t.kid(map, 2 * i)));
    const u32 value = t.kid(map, 2 * i + 1);
    if (table == "Top level" && key != "Version" && key != "SOC" && key != "CrossSocLatency") {
      used.emplace(table, "<graph id>");
      walk(t, value, "Graph", used);
      continue;
    }
    used.emplace(table, key);
    for (const Child& c : kChildren) {
      if (c.table != table || c.key != key || t.nodes[value].kind != NodeKind::kSeq) continue;
      for (std::size_t j = 0; j < t.size(value); ++j) {
        const u32 item = t.kid(value, j);
        if (!c.named) walk(t, item, c.child, used);
        else if (t.nodes[item].kind == NodeKind::kMap && t.size(item) == 2) walk(t, t.kid(item, 1), c.child, used);
      }
    }
  }
}

}  // namespace

TEST_CASE("docs/format.md lists the keys the reader allows, row for row, and no other key table", "[reference]") {
  const auto tables = referenceTables(referenceText());
  std::set<std::string> titles;
  for (const KeyTable& table : kKeyTables) {
    const std::string title(table.title);
    titles.insert(title);
    INFO("docs/format.md section `### " << title << "`");
    const auto it = tables.find(title);
    REQUIRE(it != tables.end());
    const auto& rows = it->second;
    for (std::size_t i = 0; i < table.keys.size(); ++i) {
      INFO("key '" << table.keys[i].key << "' (row " << i + 1 << " in compiler/graph/keys.hpp)");
      REQUIRE(i < rows.size());
      CHECK(rows[i] == expectedRow(table.keys[i]));
    }
    for (std::size_t i = table.keys.size(); i < rows.size(); ++i) {
      INFO("row " << i + 1 << " of the reference, which compiler/graph/keys.hpp does not have");
      CHECK(rows[i].empty());
    }
  }
  for (const auto& [title, rows] : tables) {
    INFO("docs/format.md section `### " << title << "` has a key table that compiler/graph/keys.hpp does not");
    CHECK(titles.count(title) == 1);
  }
}

TEST_CASE("the example graphs of docs/format.md compile and use every key of the format", "[reference]") {
  const std::vector<std::string> examples = yamlExamples(referenceText());
  REQUIRE(examples.size() >= 2);
  Used used;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const std::string origin = "docs/format.md example " + std::to_string(i + 1);
    auto graph = tactus::compiler::parseGraph(examples[i], origin);
    INFO((graph ? std::string() : graph.error().message));
    CHECK(graph.has_value());
    auto tree = tactus::compiler::parse::readYamlTree(examples[i], origin);
    REQUIRE(tree.has_value());
    walk(*tree, tree->root, "Top level", used);
  }
  for (const KeyTable& table : kKeyTables)
    for (const KeySpec& k : table.keys) {
      INFO("key '" << k.key << "' of section `### " << table.title << "` is in no example graph");
      CHECK(used.count({std::string(table.title), std::string(k.key)}) == 1);
    }
}

TEST_CASE("docs/format.md names every built-in resource type", "[reference]") {
  const std::string text = referenceText();
  using tactus::ResourceKind;
  for (ResourceKind k : {ResourceKind::kCpu, ResourceKind::kGpu, ResourceKind::kCudaStream, ResourceKind::kDla,
                         ResourceKind::kVpu, ResourceKind::kDlaHandle, ResourceKind::kPvaStream}) {
    INFO(tactus::typeKeyOf(k));
    CHECK(text.find("| `" + std::string(tactus::typeKeyOf(k)) + "` |") != std::string::npos);
  }
}
