// WCET side files: a flat YAML map `Client.Runnable: <ns or duration>` applied over a Graph.
#include "wcet_file.hpp"

#include "graph_parser.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/text.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <new>
#include <streambuf>
#include <unordered_map>
#include <utility>

#include "duration.hpp"
#include "tactus/core/hash.hpp"

namespace tactus::compiler {
namespace {

/// A broken rule inside this file; turned into an Error at the API.
struct Failure {
  Error error;
};

/// One `key: value` line of the side file.
struct Entry {
  std::string key;
  std::string value;
  int line = 0;
};

/// Collects the entries of a flat map from yaml-cpp's events; anything else is an error.
class FlatMapReader : public YAML::EventHandler {
 public:
  explicit FlatMapReader(const std::string& origin) : origin_(origin) {}
  std::vector<Entry> entries;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    if (depth_ == 0) return;  // an empty document: no overrides
    if (!haveKey_) fault(mark, "empty key");
    fault(mark, "no WCET given for '" + pendingKey_ + "'");
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { fault(mark, "aliases are not allowed here"); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    if (depth_ == 0) fault(mark, "expected a map of `Client.Runnable: WCET` entries");
    if (!haveKey_) {
      pendingKey_ = value;
      keyLine_ = mark.line + 1;
      haveKey_ = true;
    } else {
      entries.push_back(Entry{std::move(pendingKey_), value, keyLine_});
      haveKey_ = false;
    }
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    fault(mark, depth_ == 0 ? "expected a map of `Client.Runnable: WCET` entries, not a list"
                            : "a WCET must be a number or a duration, not a list");
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    if (depth_ != 0) fault(mark, "a WCET must be a number or a duration, not a map");
    ++depth_;
  }
  void OnMapEnd() override { --depth_; }

 private:
  [[noreturn]] void fault(const YAML::Mark& mark, const std::string& what) const {
    throw Failure{fail(ErrorCode::kParse, origin_ + ":" + std::to_string(std::max(0, mark.line) + 1) + ": " + what)};
  }
  const std::string& origin_;
  int depth_ = 0;
  bool haveKey_ = false;
  std::string pendingKey_;
  int keyLine_ = 0;
};

class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());
    setg(p, p, p + text.size());
  }
};

/// A WCET value: whole nanoseconds, or a duration string with a unit.
Result<std::int64_t> parseWcet(const std::string& value) {
  bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) return parseDuration(value + "ns");
  return parseDuration(value);
}

}  // namespace

Result<void> applyWcetFile(Graph& graph, std::string_view text, const std::string& origin) {
  if (const std::size_t nulLine = firstNulLine(text))
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(nulLine) + ": the WCET file contains a NUL byte (binary data, not YAML)");
  std::vector<Entry> entries;
  try {
    ViewBuf buf(text);
    std::istream in(&buf);
    YAML::Parser parser(in);
    FlatMapReader reader(origin);
    if (parser.HandleNextDocument(reader)) {
      FlatMapReader rest(origin);
      if (parser.HandleNextDocument(rest))
        return fail(ErrorCode::kParse, origin + ": more than one yaml document (a WCET file holds one map)");
    }
    entries = std::move(reader.entries);
  } catch (const Failure& f) {
    return f.error;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(std::max(0, e.mark.line) + 1) +
                                       ": yaml syntax error: " + e.msg);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, origin + ": unexpected failure while reading: " + e.what());
  }

  // Resolve every entry before changing anything, so a failure leaves the graph as it was.
  std::unordered_map<std::string_view, std::uint32_t> clients;
  for (std::uint32_t c = 0; c < graph.clients.size(); ++c) clients.emplace(graph.clients[c].name, c);
  std::vector<std::unordered_map<std::string_view, std::uint32_t>> runnables(graph.clients.size());
  for (std::uint32_t r = 0; r < graph.runnables.size(); ++r) {
    const GraphRunnable& gr = graph.runnables[r];
    if (gr.client < runnables.size()) runnables[gr.client].emplace(gr.name, r);
  }
  std::vector<std::pair<std::uint32_t, std::int64_t>> updates;
  std::unordered_map<std::uint32_t, int> seen;
  updates.reserve(entries.size());
  for (const Entry& e : entries) {
    std::string where = origin + ":" + std::to_string(e.line) + ": ";
    std::size_t dot = e.key.find('.');
    std::uint32_t r = kNone;
    if (dot != std::string::npos) {
      auto c = clients.find(std::string_view(e.key).substr(0, dot));
      if (c != clients.end()) {
        auto it = runnables[c->second].find(std::string_view(e.key).substr(dot + 1));
        if (it != runnables[c->second].end()) r = it->second;
      }
    }
    if (r == kNone) return fail(ErrorCode::kValidation, where + "unknown runnable '" + e.key + "'");
    if (graph.runnables[r].kind == RunnableKind::kAliasGroup)
      return fail(ErrorCode::kValidation,
                  where + "'" + e.key + "' is a round-robin group: give the WCETs of its members");
    auto [it, fresh] = seen.emplace(r, e.line);
    if (!fresh)
      return fail(ErrorCode::kValidation, where + "runnable '" + e.key + "' given twice (first at line " +
                                              std::to_string(it->second) + ")");
    auto wcet = parseWcet(e.value);
    if (!wcet) return fail(ErrorCode::kParse, where + "WCET of '" + e.key + "': " + wcet.error().message);
    updates.push_back({r, *wcet});
  }
  for (auto [r, wcet] : updates) graph.runnables[r].wcetNs = wcet;
  // A round-robin group takes as long as its longest member.
  for (GraphRunnable& group : graph.runnables) {
    if (group.kind != RunnableKind::kAliasGroup) continue;
    std::int64_t longest = 0;
    for (std::uint32_t m : group.steps)
      if (m != kNone && m < graph.runnables.size()) longest = std::max(longest, graph.runnables[m].wcetNs);
    group.wcetNs = longest;
  }
  graph.sourceHash = hashBytes(graph.sourceHash, text);
  return {};
}

Result<void> applyWcetFileFromPath(Graph& graph, const std::string& path) {
  auto text = readRegularFile(path, "WCET file", kMaxGraphFileBytes);
  if (!text) return text.error();
  return applyWcetFile(graph, *text, path);
}

}  // namespace tactus::compiler
