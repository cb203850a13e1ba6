// WCET side files: a flat YAML map `Client.Runnable: <ns or duration>` applied over a Graph.
#include "wcet_file.hpp"

#include "graph/yaml_tree.hpp"
#include "graph_parser.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "duration.hpp"
#include "tactus/core/hash.hpp"

namespace tactus::compiler {
namespace {

using parse::NodeKind;
using parse::u32;

/// One `key: value` line of the side file.
struct Entry {
  std::string_view key;
  std::string_view value;
  int line = 0;
};

/// The entries of the side file's flat map (none for an empty document); anything else is an
/// error `origin:line: ...`.
Result<std::vector<Entry>> flatEntries(const parse::YTree& t, const std::string& origin) {
  std::vector<Entry> out;
  auto bad = [&](u32 node, const std::string& what) {
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(t.nodes[node].line) + ": " + what);
  };
  if (t.root == kNone || t.nodes[t.root].kind == NodeKind::kNull) return out;  // no overrides
  const NodeKind top = t.nodes[t.root].kind;
  if (top == NodeKind::kScalar) return bad(t.root, "expected a map of `Client.Runnable: WCET` entries");
  if (top == NodeKind::kSeq) return bad(t.root, "expected a map of `Client.Runnable: WCET` entries, not a list");
  out.reserve(t.size(t.root) / 2);
  for (std::size_t i = 0; i + 1 < t.size(t.root); i += 2) {
    const u32 key = t.kid(t.root, i);
    const u32 value = t.kid(t.root, i + 1);
    for (u32 n : {key, value}) {
      const NodeKind k = t.nodes[n].kind;
      if (k == NodeKind::kSeq) return bad(n, "a WCET must be a number or a duration, not a list");
      if (k == NodeKind::kMap) return bad(n, "a WCET must be a number or a duration, not a map");
    }
    if (t.nodes[key].kind == NodeKind::kNull) return bad(key, "empty key");
    if (t.nodes[value].kind == NodeKind::kNull) return bad(value, "no WCET given for " + quoted(t.text(key)));
    out.push_back(Entry{t.text(key), t.text(value), static_cast<int>(t.nodes[key].line)});
  }
  return out;
}

/// A WCET value: whole nanoseconds, or a duration string with a unit.
Result<std::int64_t> parseWcet(std::string_view value) {
  bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) return parseDuration(std::string(value) + "ns");
  return parseDuration(value);
}

// For an unknown `Client.Runnable`: ` (did you mean ...? client 'C' declares ...)`, or the
// declared clients when the client part is unknown.
std::string hint(const Graph& graph, std::string_view key) {
  const std::size_t dot = key.find('.');
  if (dot == std::string_view::npos) return " (write Client.Runnable)";
  const std::string_view clientName = key.substr(0, dot), name = key.substr(dot + 1);
  std::vector<std::string_view> clients;
  ClientId client = kNone;
  for (ClientId c : graph.clients.ids()) {
    clients.push_back(graph.clients[c].name);
    if (graph.clients[c].name == clientName) client = c;
  }
  if (client == kNone) {
    const std::string_view guess = closestName(clientName, clients);
    return " (no client " + quoted(clientName) + (guess.empty() ? "" : "; did you mean " + quoted(guess) + "?") +
           (clients.empty() ? std::string()
                            : (guess.empty() ? "; " : " ") + ("declared clients: " + nameList(clients))) +
           ")";
  }
  std::vector<std::string_view> names;
  for (const GraphRunnable& r : graph.runnables)
    if (r.client == client && r.kind != RunnableKind::kAliasGroup) names.push_back(r.name);
  const std::string_view guess = closestName(name, names);
  return " (" +
         (guess.empty() ? std::string()
                        : "did you mean " + quoted(std::string(clientName) + "." + std::string(guess)) + "? ") +
         "client " + quoted(clientName) + " declares " + nameList(names) + ")";
}

}  // namespace

Result<void> applyWcetFile(Graph& graph, std::string_view text, const std::string& origin) {
  parse::TreeOptions options;
  options.aliases = false;
  options.holds = "a WCET file holds one map";
  options.what = "WCET file";
  Result<parse::YTree> tree = parse::readYamlTree(text, origin, options);
  if (!tree) return tree.error();
  Result<std::vector<Entry>> read = flatEntries(*tree, origin);
  if (!read) return read.error();
  const std::vector<Entry>& entries = *read;

  // Resolve every entry before changing anything, so a failure leaves the graph as it was.
  std::unordered_map<std::string_view, ClientId> clients;
  for (ClientId c : graph.clients.ids()) clients.emplace(graph.clients[c].name, c);
  IdVector<ClientId, std::unordered_map<std::string_view, RunnableId>> runnables(graph.clients.size());
  for (RunnableId r : graph.runnables.ids()) {
    const GraphRunnable& gr = graph.runnables[r];
    if (runnables.contains(gr.client)) runnables[gr.client].emplace(gr.name, r);
  }
  std::vector<std::pair<RunnableId, std::int64_t>> updates;
  std::unordered_map<RunnableId, int> seen;
  updates.reserve(entries.size());
  for (const Entry& e : entries) {
    std::string where = origin + ":" + std::to_string(e.line) + ": ";
    std::size_t dot = e.key.find('.');
    RunnableId r = kNone;
    if (dot != std::string::npos) {
      auto c = clients.find(e.key.substr(0, dot));
      if (c != clients.end()) {
        auto it = runnables[c->second].find(e.key.substr(dot + 1));
        if (it != runnables[c->second].end()) r = it->second;
      }
    }
    if (r == kNone)
      return fail(ErrorCode::kValidation, where + "unknown runnable " + quoted(e.key) + hint(graph, e.key));
    if (graph.runnables[r].kind == RunnableKind::kAliasGroup)
      return fail(ErrorCode::kValidation,
                  where + quoted(e.key) + " is a round-robin group: give the WCETs of its members");
    auto [it, fresh] = seen.emplace(r, e.line);
    if (!fresh)
      return fail(ErrorCode::kValidation, where + "runnable " + quoted(e.key) + " given twice (first at line " +
                                              std::to_string(it->second) + ")");
    auto wcet = parseWcet(e.value);
    if (!wcet) return fail(ErrorCode::kParse, where + "WCET of " + quoted(e.key) + ": " + wcet.error().message);
    updates.push_back({r, *wcet});
  }
  for (auto [r, wcet] : updates) graph.runnables[r].wcetNs = wcet;
  // A round-robin group takes as long as its longest member.
  for (GraphRunnable& group : graph.runnables) {
    if (group.kind != RunnableKind::kAliasGroup) continue;
    std::int64_t longest = 0;
    for (RunnableId m : group.steps)
      if (m != kNone && graph.runnables.contains(m)) longest = std::max(longest, graph.runnables[m].wcetNs);
    group.wcetNs = longest;
  }
  graph.sourceHash = hashBytes(graph.sourceHash, text);
  return {};
}

Result<void> applyWcetFileFromPath(Graph& graph, const std::string& path) {
  auto text = readInputOperand(path, "WCET file", kMaxGraphFileBytes);
  if (!text) return text.error();
  return applyWcetFile(graph, *text, path == kStdStream ? "stdin" : path);
}

}  // namespace tactus::compiler
