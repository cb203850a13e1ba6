// The compiler's front end: YAML text -> compact event tree -> checked Graph (stm-model.md s. 2).
//
// yaml-cpp's parser delivers events; we build a small flat tree from them (one vector of nodes,
// one of child indices, one arena of scalar text) instead of yaml-cpp's node graph, which is
// far heavier per node on large graphs. The tree is then walked once, resolving
// names through hash maps, so a graph with a million runnables parses in linear time.
//
// Inside this file a broken rule throws a private Failure that parseGraph turns into an Error;
// nothing escapes the public functions.
#include "graph_parser.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <new>
#include <sstream>
#include <streambuf>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "duration.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

using u32 = std::uint32_t;

// Nesting deeper than this is refused. yaml-cpp recurses once per level and reports the start
// of each container before descending, so refusing at the start event bounds its stack use.
constexpr std::size_t kMaxNesting = 256;

/// A broken rule, thrown inside this file only and turned into an Error at the API.
struct Failure {
  Error error;
};

// ---------------------------------------------------------------------------------------------
// Compact YAML tree

enum class NodeKind : std::uint8_t { kNull, kScalar, kSeq, kMap };

/// One YAML node. Scalars: text at [a, a+b) of the arena. Containers: children at kids[a..a+b)
/// (maps as key, value, key, value, ...).
struct YNode {
  NodeKind kind = NodeKind::kNull;
  u32 line = 0;  // 1-based
  u32 a = 0;
  u32 b = 0;
};

struct YTree {
  std::vector<YNode> nodes;
  std::vector<u32> kids;
  std::string arena;
  u32 root = kNone;

  std::string_view text(u32 n) const {
    const YNode& node = nodes[n];
    if (node.kind != NodeKind::kScalar) return {};
    return std::string_view(arena).substr(node.a, node.b);
  }
  std::size_t size(u32 n) const { return nodes[n].b; }
  u32 kid(u32 n, std::size_t i) const { return kids[nodes[n].a + i]; }
};

/// Builds a YTree from yaml-cpp's events. Aliases share the anchored node.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(YTree& tree, const std::string& origin) : tree_(tree), origin_(origin) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    attach(make(NodeKind::kNull, mark), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fault(mark, "alias to an unknown anchor");
    for (std::size_t i = 0; i < depth_; ++i)
      if (stack_[i].node == it->second) fault(mark, "an alias refers to a node that contains it");
    attach(it->second, YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    if (value.size() > 0xffffffffu || tree_.arena.size() > 0xffffffffu - value.size())
      fault(mark, "text too large");
    u32 n = make(NodeKind::kScalar, mark);
    tree_.nodes[n].a = static_cast<u32>(tree_.arena.size());
    tree_.nodes[n].b = static_cast<u32>(value.size());
    tree_.arena += value;
    attach(n, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(make(NodeKind::kSeq, mark), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(make(NodeKind::kMap, mark), anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    u32 node;
    std::vector<u32> kids;
  };

  [[noreturn]] void fault(const YAML::Mark& mark, const std::string& what) {
    throw Failure{fail(ErrorCode::kParse,
                       origin_ + ":" + std::to_string(mark.line + 1) + ": " + what)};
  }
  u32 make(NodeKind kind, const YAML::Mark& mark) {
    if (tree_.nodes.size() >= 0xfffffff0u) fault(mark, "too many yaml nodes");
    YNode node;
    node.kind = kind;
    node.line = static_cast<u32>(mark.line < 0 ? 1 : mark.line + 1);
    tree_.nodes.push_back(node);
    return static_cast<u32>(tree_.nodes.size() - 1);
  }
  void attach(u32 n, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    append(n);
  }
  void append(u32 n) {
    if (depth_ == 0) {
      tree_.root = n;
      return;
    }
    Frame& parent = stack_[depth_ - 1];
    // A block collection or an empty value starts on a later line than its key; messages
    // about such a value point at the key, where the reader looks for it.
    YNode& node = tree_.nodes[n];
    if (tree_.nodes[parent.node].kind == NodeKind::kMap && parent.kids.size() % 2 == 1 &&
        node.kind != NodeKind::kScalar)
      node.line = std::min(node.line, tree_.nodes[parent.kids.back()].line);
    parent.kids.push_back(n);
  }
  void open(u32 n, YAML::anchor_t anchor) {
    if (depth_ >= kMaxNesting)
      throw Failure{fail(ErrorCode::kParse, origin_ + ":" + std::to_string(tree_.nodes[n].line) +
                                                ": yaml nested deeper than " + std::to_string(kMaxNesting) +
                                                " levels")};
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    // Frames are reused so that their vectors keep their capacity.
    if (depth_ == stack_.size()) stack_.push_back(Frame{});
    stack_[depth_].node = n;
    stack_[depth_].kids.clear();
    ++depth_;
  }
  void close() {
    Frame& f = stack_[depth_ - 1];
    if (tree_.kids.size() > 0xffffffffu - f.kids.size())
      throw Failure{fail(ErrorCode::kParse, origin_ + ": too many yaml nodes")};
    tree_.nodes[f.node].a = static_cast<u32>(tree_.kids.size());
    tree_.nodes[f.node].b = static_cast<u32>(f.kids.size());
    tree_.kids.insert(tree_.kids.end(), f.kids.begin(), f.kids.end());
    u32 n = f.node;
    --depth_;
    append(n);
  }

  YTree& tree_;
  const std::string& origin_;
  std::vector<Frame> stack_;
  std::size_t depth_ = 0;
  std::unordered_map<YAML::anchor_t, u32> anchors_;
};

/// A read-only streambuf over a string_view, so yaml-cpp reads the text without a copy.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());
    setg(p, p, p + text.size());
  }
};

// ---------------------------------------------------------------------------------------------
// Graph building

/// The kind that a resource type name denotes.
ResourceKind kindOfType(std::string_view type) {
  if (type == "CPU") return ResourceKind::kCpu;
  if (type == "GPU") return ResourceKind::kGpu;
  if (type == "CUDA_STREAM") return ResourceKind::kCudaStream;
  return ResourceKind::kMutex;
}

bool isHardware(ResourceKind kind) { return kind == ResourceKind::kCpu || kind == ResourceKind::kGpu; }

/// A reference `Client.Name` as written, with its line.
struct Ref {
  std::string_view text;
  u32 line = 0;
};

/// What a runnable wrote, kept until every runnable is known.
struct RawRunnable {
  std::vector<Ref> resources;
  std::vector<Ref> dependencies;
  Ref submits;
  bool hasSubmits = false;
};

/// A round-robin group as written.
struct RawGroup {
  u32 nameNode = kNone;
  u32 valueNode = kNone;
  u32 epoch = 0;
  u32 client = kNone;  // set when written under a client's epoch entry
};

class Builder {
 public:
  Builder(const YTree& tree, const std::string& origin) : t_(tree), origin_(origin) {}

  Graph build() {
    if (t_.root == kNone) die(ErrorCode::kParse, 1, "empty graph (expected a map with Version and the graph id)");
    buildTop(t_.root);
    resolveRunnables();
    buildGroups();
    redirectToGroups();
    checkCycles("");
    orderSubmissions();
    checkCycles(" (a submitter implicitly depends on the CPU predecessors of its submittee and on the "
                "submitters of its GPU predecessors, so that its stream only waits for work already "
                "submitted)");
    finishHyperepochs();
    return std::move(g_);
  }

 private:
  // ---- errors and typed access ----
  [[noreturn]] void die(ErrorCode code, u32 line, const std::string& what) const {
    throw Failure{fail(code, origin_ + ":" + std::to_string(line) + ": " + what)};
  }
  u32 line(u32 node) const { return t_.nodes[node].line; }
  NodeKind kind(u32 node) const { return t_.nodes[node].kind; }

  static const char* kindName(NodeKind k) {
    switch (k) {
      case NodeKind::kNull: return "nothing";
      case NodeKind::kScalar: return "a scalar";
      case NodeKind::kSeq: return "a list";
      case NodeKind::kMap: return "a map";
    }
    return "?";
  }
  void expect(u32 node, NodeKind want, const std::string& what) const {
    if (kind(node) != want)
      die(ErrorCode::kParse, line(node),
          what + " must be " + kindName(want) + ", not " + kindName(kind(node)));
  }
  std::string_view scalar(u32 node, const std::string& what) const {
    expect(node, NodeKind::kScalar, what);
    return t_.text(node);
  }

  /// Visits the entries of a map, refusing non-scalar and duplicate keys.
  template <typename F>
  void forEachEntry(u32 map, const std::string& what, F&& f) const {
    expect(map, NodeKind::kMap, what);
    std::size_t count = t_.size(map) / 2;
    std::unordered_set<std::string_view> seen;
    if (count > 16) seen.reserve(count * 2);
    for (std::size_t i = 0; i < count; ++i) {
      u32 key = t_.kid(map, 2 * i);
      u32 value = t_.kid(map, 2 * i + 1);
      std::string_view name = scalar(key, "a key in " + what);
      bool dup = false;
      if (count > 16) {
        dup = !seen.insert(name).second;
      } else {
        for (std::size_t j = 0; j < i; ++j)
          if (t_.text(t_.kid(map, 2 * j)) == name) dup = true;
      }
      if (dup) die(ErrorCode::kParse, line(key), "duplicate key " + quoted(name) + " in " + what);
      f(name, key, value);
    }
  }
  /// A list item of the form `- Name: value`; returns the key and value nodes.
  std::pair<u32, u32> singleEntry(u32 item, const std::string& what) const {
    if (kind(item) != NodeKind::kMap || t_.size(item) != 2)
      die(ErrorCode::kParse, line(item), what + " must be written `- Name: ...` (a map with one key)");
    u32 key = t_.kid(item, 0);
    scalar(key, "the name of " + what);
    return {key, t_.kid(item, 1)};
  }
  [[noreturn]] void unknownKey(std::string_view key, u32 keyNode, const std::string& where,
                               const char* allowed) const {
    if (key == "SOC")
      die(ErrorCode::kParse, line(keyNode), "the multi-SoC form 'SOC' is not supported yet (in " + where + ")");
    die(ErrorCode::kParse, line(keyNode),
        "unknown key " + quoted(key) + " in " + where + " (allowed: " + allowed + ")");
  }

  /// Names appear in the schedule file, which separates fields with blanks, `,`, `=` and `#`.
  void checkName(std::string_view name, u32 node, const char* what, bool dotAllowed) const {
    if (name.empty()) die(ErrorCode::kValidation, line(node), std::string("empty ") + what + " name");
    for (char c : name) {
      auto u = static_cast<unsigned char>(c);
      if (u <= 0x20 || u == 0x7f || c == ',' || c == '=' || c == '#')
        die(ErrorCode::kValidation, line(node),
            std::string(what) + " name " + quoted(name) +
                " contains white space, a control character, ',', '=' or '#'");
      if (c == '.' && !dotAllowed)
        die(ErrorCode::kValidation, line(node),
            std::string(what) + " name " + quoted(name) + " contains '.', which separates qualified names");
    }
  }

  std::int64_t duration(u32 node, const std::string& what, bool zeroOk, bool bareZeroOk) const {
    std::string_view text = scalar(node, what);
    if (!bareZeroOk && isBareZero(text))
      die(ErrorCode::kParse, line(node), what + " " + quoted(text) + " needs a unit (ns, us, ms or s)");
    auto d = parseDuration(text);
    if (!d) die(ErrorCode::kParse, line(node), what + ": " + d.error().message);
    if (!zeroOk && *d == 0) die(ErrorCode::kValidation, line(node), what + " must be greater than 0");
    return *d;
  }
  std::uint64_t integer(u32 node, const std::string& what, std::uint64_t lo, std::uint64_t hi) const {
    std::string_view text = scalar(node, what);
    std::uint64_t v = 0;
    bool ok = !text.empty() && text.size() <= 20;
    for (char c : text) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      if (v > (UINT64_MAX - 9) / 10) {
        ok = false;
        break;
      }
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok) {
      bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits) die(ErrorCode::kParse, line(node), what + " is " + quoted(text) + ", not a whole number");
      die(ErrorCode::kValidation, line(node), what + " is " + quoted(text) + ", out of range " +
                                                  std::to_string(lo) + ".." + std::to_string(hi));
    }
    if (v < lo || v > hi)
      die(ErrorCode::kValidation, line(node), what + " is " + quoted(text) + ", out of range " +
                                                  std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }

  std::string rname(u32 r) const { return g_.clients[g_.runnables[r].client].name + "." + g_.runnables[r].name; }

  // ---- top level ----
  void buildTop(u32 root) {
    u32 graphKey = kNone, graphValue = kNone, versionNode = kNone;
    forEachEntry(root, "the top level", [&](std::string_view key, u32 k, u32 v) {
      if (key == "Version") {
        versionNode = v;
      } else if (key == "SOC") {
        unknownKey(key, k, "the top level", "");
      } else if (graphKey != kNone) {
        die(ErrorCode::kParse, line(k),
            "unexpected top-level key " + quoted(key) + ": a graph file holds Version and one graph id (already " +
                quoted(t_.text(graphKey)) + ")");
      } else {
        graphKey = k;
        graphValue = v;
      }
    });
    if (versionNode == kNone) die(ErrorCode::kValidation, line(root), "missing 'Version' (2.0.0 or 3.0.0)");
    std::string_view version = scalar(versionNode, "Version");
    if (version != "2.0.0" && version != "3.0.0")
      die(ErrorCode::kValidation, line(versionNode), "unknown Version " + quoted(version) + " (known: 2.0.0, 3.0.0)");
    g_.version = std::string(version);
    if (graphKey == kNone) die(ErrorCode::kValidation, line(root), "missing the graph id (the key next to Version)");
    std::string_view name = t_.text(graphKey);
    checkName(name, graphKey, "graph", false);
    g_.name = std::string(name);

    u32 resources = kNone, hyperepochs = kNone, clients = kNone;
    std::string where = "graph " + quoted(name);
    forEachEntry(graphValue, where, [&](std::string_view key, u32 k, u32 v) {
      if (key == "Identifier") {
        g_.identifier = static_cast<std::uint16_t>(integer(v, "Identifier", 0, 65535));
      } else if (key == "Resources") {
        resources = v;
      } else if (key == "Hyperepochs") {
        hyperepochs = v;
      } else if (key == "Clients") {
        clients = v;
      } else {
        unknownKey(key, k, where, "Identifier, Resources, Hyperepochs, Clients");
      }
    });
    if (resources != kNone) buildGlobalResources(resources);
    if (hyperepochs == kNone) die(ErrorCode::kValidation, line(graphKey), "graph " + quoted(name) + " has no Hyperepochs");
    buildHyperepochs(hyperepochs);
    if (clients == kNone) die(ErrorCode::kValidation, line(graphKey), "graph " + quoted(name) + " has no Clients");
    buildClients(clients);
    checkTypeNameClashes();
    checkStreamLimits();
  }

  // ---- resources ----
  u32 addResource(std::string_view name, std::string_view type, u32 nameNode, u32 client) {
    ResourceInfo r;
    r.name = std::string(name);
    r.type = std::string(type);
    r.kind = kindOfType(type);
    r.client = client;
    if (r.kind == ResourceKind::kCpu) {
      std::string_view digits = name.substr(std::min<std::size_t>(3, name.size()));
      bool ok = name.substr(0, 3) == "CPU" && !digits.empty() && digits.size() <= 5 &&
                std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!ok)
        die(ErrorCode::kValidation, line(nameNode),
            "CPU resource " + quoted(name) + " must be named CPU<n> (n = the core it runs on)");
      r.core = static_cast<u32>(std::stoul(std::string(digits)));
    }
    g_.resources.push_back(std::move(r));
    resourceLine_.push_back(line(nameNode));
    return static_cast<u32>(g_.resources.size() - 1);
  }

  void buildGlobalResources(u32 map) {
    forEachEntry(map, "the global Resources", [&](std::string_view type, u32 typeNode, u32 list) {
      checkName(type, typeNode, "resource type", false);
      if (type == "CUDA_STREAM")
        die(ErrorCode::kValidation, line(typeNode),
            "CUDA_STREAM resources are client-local: declare them under a client's Resources");
      expect(list, NodeKind::kSeq, "resource type " + quoted(type));
      globalTypes_.insert(type);
      for (std::size_t i = 0; i < t_.size(list); ++i) {
        u32 item = t_.kid(list, i);
        u32 nameNode = item, valueNode = kNone;
        if (kind(item) == NodeKind::kMap) std::tie(nameNode, valueNode) = singleEntry(item, "a resource");
        std::string_view name = scalar(nameNode, "a resource name");
        checkName(name, nameNode, "resource", false);
        if (!globalByName_.emplace(name, static_cast<u32>(g_.resources.size())).second)
          die(ErrorCode::kValidation, line(nameNode), "duplicate resource " + quoted(name));
        u32 r = addResource(name, type, nameNode, kNone);
        if (valueNode != kNone) {
          if (type != "GPU")
            die(ErrorCode::kParse, line(nameNode),
                "resource " + quoted(name) + " of type " + quoted(type) + " takes no value (only GPUs take a stream limit)");
          g_.resources[r].streamLimit =
              static_cast<u32>(integer(valueNode, "stream limit of " + quoted(name), 0, 1000000));
        }
      }
    });
  }

  void buildClientResources(u32 map, u32 client) {
    std::string where = "the Resources of client " + quoted(g_.clients[client].name);
    auto& locals = localByName_[client];
    forEachEntry(map, where, [&](std::string_view type, u32 typeNode, u32 list) {
      checkName(type, typeNode, "resource type", false);
      ResourceKind k = kindOfType(type);
      if (isHardware(k))
        die(ErrorCode::kValidation, line(typeNode),
            "hardware resources (" + std::string(type) + ") are global: declare them under the graph's Resources");
      expect(list, NodeKind::kSeq, "resource type " + quoted(type));
      localTypes_[client].insert(type);
      for (std::size_t i = 0; i < t_.size(list); ++i) {
        u32 item = t_.kid(list, i);
        u32 nameNode = item, valueNode = kNone;
        if (kind(item) == NodeKind::kMap) std::tie(nameNode, valueNode) = singleEntry(item, "a resource");
        std::string_view name = scalar(nameNode, "a resource name");
        checkName(name, nameNode, "resource", false);
        if (globalByName_.count(name) != 0)
          die(ErrorCode::kValidation, line(nameNode),
              "client " + quoted(g_.clients[client].name) + " resource " + quoted(name) + " has the name of a global resource");
        if (!locals.emplace(name, static_cast<u32>(g_.resources.size())).second)
          die(ErrorCode::kValidation, line(nameNode),
              "duplicate resource " + quoted(name) + " in client " + quoted(g_.clients[client].name));
        u32 r = addResource(name, type, nameNode, client);
        if (k == ResourceKind::kCudaStream) {
          if (valueNode == kNone)
            die(ErrorCode::kValidation, line(nameNode),
                "CUDA stream " + quoted(name) + " must name its GPU (`- " + std::string(name) + ": GPU0`)");
          std::string_view gpu = scalar(valueNode, "the GPU of CUDA stream " + quoted(name));
          auto it = globalByName_.find(gpu);
          if (it == globalByName_.end() || g_.resources[it->second].kind != ResourceKind::kGpu)
            die(ErrorCode::kValidation, line(valueNode),
                "CUDA stream " + quoted(name) + " maps to " + quoted(gpu) + ", which is not a declared GPU");
          g_.resources[r].device = it->second;
        } else if (valueNode != kNone) {
          die(ErrorCode::kParse, line(nameNode),
              "resource " + quoted(name) + " of type " + quoted(type) + " takes no value");
        }
      }
    });
  }

  void checkTypeNameClashes() const {
    auto clash = [&](u32 r, std::string_view type) {
      die(ErrorCode::kValidation, resourceLine_[r],
          "resource " + quoted(g_.resources[r].name) + " has the name of resource type " + quoted(type));
    };
    for (u32 r = 0; r < g_.resources.size(); ++r) {
      const std::string& name = g_.resources[r].name;
      if (name == "CPU" || name == "GPU" || name == "CUDA_STREAM" || globalTypes_.count(name) != 0)
        clash(r, name);
      if (g_.resources[r].client != kNone) {
        auto it = localTypes_.find(g_.resources[r].client);
        if (it != localTypes_.end() && it->second.count(name) != 0) clash(r, name);
      } else {
        for (const auto& [client, types] : localTypes_)
          if (types.count(name) != 0) clash(r, name);
      }
    }
  }

  void checkStreamLimits() const {
    std::vector<u32> count(g_.resources.size(), 0);
    for (const ResourceInfo& r : g_.resources)
      if (r.kind == ResourceKind::kCudaStream) ++count[r.device];
    for (u32 r = 0; r < g_.resources.size(); ++r) {
      const ResourceInfo& gpu = g_.resources[r];
      if (gpu.kind == ResourceKind::kGpu && gpu.streamLimit != kNone && count[r] > gpu.streamLimit)
        die(ErrorCode::kValidation, resourceLine_[r],
            "GPU " + quoted(gpu.name) + " allows " + std::to_string(gpu.streamLimit) + " client streams but " +
                std::to_string(count[r]) + " map to it");
    }
  }

  // ---- hyperepochs and epochs ----
  void buildHyperepochs(u32 list) {
    expect(list, NodeKind::kSeq, "Hyperepochs");
    if (t_.size(list) == 0) die(ErrorCode::kValidation, line(list), "Hyperepochs is empty");
    std::unordered_map<std::string_view, u32> names;
    std::vector<u32> resourceLists;
    std::vector<u32> nameNodes;
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "a hyperepoch");
      std::string_view name = t_.text(key);
      checkName(name, key, "hyperepoch", false);
      u32 h = static_cast<u32>(g_.hyperepochs.size());
      if (!names.emplace(name, h).second) die(ErrorCode::kValidation, line(key), "duplicate hyperepoch " + quoted(name));
      HyperepochInfo info;
      info.name = std::string(name);
      g_.hyperepochs.push_back(info);
      std::string where = "hyperepoch " + quoted(name);
      u32 period = kNone, resources = kNone, epochs = kNone;
      forEachEntry(value, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "Period") period = v;
        else if (k == "Resources") resources = v;
        else if (k == "Epochs") epochs = v;
        else if (k == "Monitor") g_.hyperepochs[h].monitorNs = duration(v, "Monitor of " + where, true, false);
        else unknownKey(k, kn, where, "Period, Resources, Epochs, Monitor");
      });
      if (epochs == kNone) die(ErrorCode::kValidation, line(key), where + " has no Epochs");
      buildEpochs(epochs, h);
      u32 epochCount = static_cast<u32>(g_.epochs.size()) - hyperFirstEpoch_[h];
      if (period != kNone) {
        g_.hyperepochs[h].periodNs = duration(period, "Period of " + where, false, false);
      } else if (epochCount == 1) {
        const EpochInfo& e = g_.epochs.back();
        __int128 p = static_cast<__int128>(e.periodNs) * e.frames;
        if (p > kMaxDurationNs) die(ErrorCode::kValidation, line(key), where + ": period too large");
        g_.hyperepochs[h].periodNs = static_cast<std::int64_t>(p);
      } else {
        die(ErrorCode::kValidation, line(key), where + " has several epochs and needs a Period");
      }
      for (u32 e = hyperFirstEpoch_[h]; e < g_.epochs.size(); ++e) {
        __int128 p = static_cast<__int128>(g_.epochs[e].periodNs) * g_.epochs[e].frames;
        if (p > g_.hyperepochs[h].periodNs)
          die(ErrorCode::kValidation, epochLine_[e],
              "epoch " + quoted(std::string(name) + "." + g_.epochs[e].name) + " period x frames (" +
                  std::to_string(static_cast<std::int64_t>(p)) + " ns) exceeds the hyperepoch period (" +
                  std::to_string(g_.hyperepochs[h].periodNs) + " ns)");
      }
      resourceLists.push_back(resources);
      nameNodes.push_back(key);
    }
    hyperByName_ = std::move(names);
    // resource partition
    std::size_t n = g_.hyperepochs.size();
    for (u32 h = 0; h < n; ++h) {
      u32 res = resourceLists[h];
      if (res == kNone) {
        if (n > 1)
          die(ErrorCode::kValidation, line(nameNodes[h]),
              "hyperepoch " + quoted(g_.hyperepochs[h].name) + " lists no Resources (needed when there are several hyperepochs)");
        for (ResourceInfo& r : g_.resources) r.hyperepoch = h;
        continue;
      }
      expect(res, NodeKind::kSeq, "the Resources of hyperepoch " + quoted(g_.hyperepochs[h].name));
      for (std::size_t i = 0; i < t_.size(res); ++i) {
        u32 item = t_.kid(res, i);
        std::string_view rn = scalar(item, "a resource of hyperepoch " + quoted(g_.hyperepochs[h].name));
        auto it = globalByName_.find(rn);
        if (it == globalByName_.end())
          die(ErrorCode::kValidation, line(item),
              "hyperepoch " + quoted(g_.hyperepochs[h].name) + " lists unknown resource " + quoted(rn) +
                  " (name global resource instances)");
        ResourceInfo& r = g_.resources[it->second];
        if (r.hyperepoch == h)
          die(ErrorCode::kValidation, line(item),
              "hyperepoch " + quoted(g_.hyperepochs[h].name) + " lists resource " + quoted(rn) + " twice");
        if (r.hyperepoch != kNone)
          die(ErrorCode::kValidation, line(item),
              "resource " + quoted(rn) + " is in hyperepochs " + quoted(g_.hyperepochs[r.hyperepoch].name) + " and " +
                  quoted(g_.hyperepochs[h].name) + " (hyperepoch resources must be disjoint)");
        r.hyperepoch = h;
      }
    }
  }

  void buildEpochs(u32 list, u32 h) {
    const std::string hname = g_.hyperepochs[h].name;
    expect(list, NodeKind::kSeq, "the Epochs of hyperepoch " + quoted(hname));
    if (t_.size(list) == 0) die(ErrorCode::kValidation, line(list), "hyperepoch " + quoted(hname) + " has no epochs");
    hyperFirstEpoch_.push_back(static_cast<u32>(g_.epochs.size()));
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "an epoch");
      std::string_view name = t_.text(key);
      checkName(name, key, "epoch", false);
      std::string full = hname + "." + std::string(name);
      u32 e = static_cast<u32>(g_.epochs.size());
      if (!epochByName_.emplace(full, e).second) die(ErrorCode::kValidation, line(key), "duplicate epoch " + quoted(full));
      EpochInfo info;
      info.name = std::string(name);
      info.hyperepoch = h;
      bool hasPeriod = false;
      std::string where = "epoch " + quoted(full);
      if (kind(value) != NodeKind::kMap) die(ErrorCode::kParse, line(key), where + " must be a map with a Period");
      forEachEntry(value, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "Period") {
          info.periodNs = duration(v, "Period of " + where, false, false);
          hasPeriod = true;
        } else if (k == "Frames") {
          info.frames = static_cast<u32>(integer(v, "Frames of " + where, 1, 1000000));
        } else if (k == "AliasGroups") {
          collectGroups(v, e, kNone);
        } else {
          unknownKey(k, kn, where, "Period, Frames, AliasGroups");
        }
      });
      if (!hasPeriod) die(ErrorCode::kValidation, line(key), where + " has no Period");
      g_.epochs.push_back(info);
      epochLine_.push_back(line(key));
      g_.hyperepochs[h].epochs.push_back(e);
    }
  }

  // ---- clients and runnables ----
  void buildClients(u32 list) {
    expect(list, NodeKind::kSeq, "Clients");
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "a client");
      std::string_view name = t_.text(key);
      checkName(name, key, "client", false);
      u32 c = static_cast<u32>(g_.clients.size());
      if (!clientByName_.emplace(name, c).second) die(ErrorCode::kValidation, line(key), "duplicate client " + quoted(name));
      g_.clients.push_back(ClientInfo{std::string(name)});
      runnableByName_.emplace_back();
      std::string where = "client " + quoted(name);
      u32 resources = kNone, epochs = kNone;
      forEachEntry(value, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "Resources") resources = v;
        else if (k == "Epochs") epochs = v;
        else unknownKey(k, kn, where, "Resources, Epochs");
      });
      if (resources != kNone) buildClientResources(resources, c);
      if (epochs != kNone) buildClientEpochs(epochs, c);
    }
  }

  void buildClientEpochs(u32 list, u32 c) {
    const std::string cname = g_.clients[c].name;
    expect(list, NodeKind::kSeq, "the Epochs of client " + quoted(cname));
    std::unordered_set<u32> seen;
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "an epoch entry of client " + quoted(cname));
      std::string_view ref = t_.text(key);
      auto it = epochByName_.find(std::string(ref));
      if (it == epochByName_.end())
        die(ErrorCode::kValidation, line(key),
            "client " + quoted(cname) + " names unknown epoch " + quoted(ref) + " (write Hyperepoch.Epoch)");
      u32 e = it->second;
      if (!seen.insert(e).second)
        die(ErrorCode::kValidation, line(key), "client " + quoted(cname) + " lists epoch " + quoted(ref) + " twice");
      std::string where = "epoch " + quoted(ref) + " of client " + quoted(cname);
      forEachEntry(value, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "Runnables") buildRunnables(v, c, e);
        else if (k == "AliasGroups") collectGroups(v, e, c);
        else unknownKey(k, kn, where, "Runnables, AliasGroups");
      });
    }
  }

  std::vector<Ref> refList(u32 node, const std::string& what) const {
    expect(node, NodeKind::kSeq, what);
    std::vector<Ref> out;
    out.reserve(t_.size(node));
    for (std::size_t i = 0; i < t_.size(node); ++i) {
      u32 item = t_.kid(node, i);
      out.push_back(Ref{scalar(item, "an entry of " + what), line(item)});
    }
    return out;
  }

  void buildRunnables(u32 list, u32 c, u32 e) {
    const std::string& cname = g_.clients[c].name;
    expect(list, NodeKind::kSeq, "the Runnables of client " + quoted(cname));
    auto& byName = runnableByName_[c];
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "a runnable");
      std::string_view name = t_.text(key);
      checkName(name, key, "runnable", true);
      u32 r = static_cast<u32>(g_.runnables.size());
      if (!byName.emplace(name, r).second)
        die(ErrorCode::kValidation, line(key), "duplicate runnable " + quoted(cname + "." + std::string(name)));
      GraphRunnable gr;
      gr.name = std::string(name);
      gr.client = c;
      gr.epoch = e;
      gr.loc = SourceLoc{origin_, static_cast<int>(line(key))};
      RawRunnable raw;
      std::string where = "runnable " + quoted(cname + "." + std::string(name));
      if (kind(value) != NodeKind::kMap)
        die(ErrorCode::kParse, line(key), where + " must be a map with WCET and Resources");
      bool hasWcet = false, hasResources = false;
      forEachEntry(value, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "WCET") {
          gr.wcetNs = duration(v, "WCET of " + where, true, true);
          hasWcet = true;
        } else if (k == "Resources") {
          raw.resources = refList(v, "the Resources of " + where);
          hasResources = true;
        } else if (k == "Dependencies") {
          raw.dependencies = refList(v, "the Dependencies of " + where);
        } else if (k == "Submits") {
          raw.submits = Ref{scalar(v, "Submits of " + where), line(v)};
          raw.hasSubmits = true;
        } else if (k == "StartTime") {
          gr.startTimeNs = duration(v, "StartTime of " + where, true, true);
        } else if (k == "Deadline") {
          gr.deadlineNs = duration(v, "Deadline of " + where, false, false);
        } else if (k == "Priority") {
          gr.priority = static_cast<u32>(integer(v, "Priority of " + where, 1, 10));
        } else if (k == "EndMonitorThreshold") {
          gr.endMonitorThresholdNs = duration(v, "EndMonitorThreshold of " + where, true, false);
        } else {
          unknownKey(k, kn, where,
                     "WCET, Resources, Dependencies, Submits, StartTime, Deadline, Priority, EndMonitorThreshold");
        }
      });
      if (!hasWcet) die(ErrorCode::kValidation, line(key), where + " has no WCET");
      if (!hasResources) die(ErrorCode::kValidation, line(key), where + " has no Resources");
      g_.runnables.push_back(std::move(gr));
      raw_.push_back(std::move(raw));
    }
  }

  /// Resolves `Client.Name` (split at the first dot) to a runnable index.
  u32 resolveRef(const Ref& ref, const std::string& context) const {
    std::size_t dot = ref.text.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == ref.text.size())
      die(ErrorCode::kValidation, ref.line,
          context + ": " + quoted(ref.text) + " is not a runnable reference (write Client.Runnable)");
    auto c = clientByName_.find(ref.text.substr(0, dot));
    if (c == clientByName_.end())
      die(ErrorCode::kValidation, ref.line,
          context + ": unknown client " + quoted(ref.text.substr(0, dot)) + " in " + quoted(ref.text));
    const auto& byName = runnableByName_[c->second];
    auto r = byName.find(ref.text.substr(dot + 1));
    if (r == byName.end()) die(ErrorCode::kValidation, ref.line, context + ": unknown runnable " + quoted(ref.text));
    return r->second;
  }

  /// Marks a client-local resource as used from hyperepoch h.
  void useLocal(u32 res, u32 h, u32 r, u32 atLine) {
    ResourceInfo& info = g_.resources[res];
    if (info.hyperepoch == kNone) {
      info.hyperepoch = h;
    } else if (info.hyperepoch != h) {
      die(ErrorCode::kValidation, atLine,
          "runnable " + quoted(rname(r)) + " uses client resource " + quoted(info.name) + " from hyperepoch " +
              quoted(g_.hyperepochs[h].name) + ", but it is already used in hyperepoch " +
              quoted(g_.hyperepochs[info.hyperepoch].name));
    }
  }

  void resolveRequests(u32 r) {
    GraphRunnable& gr = g_.runnables[r];
    const u32 h = g_.epochs[gr.epoch].hyperepoch;
    const std::string who = "runnable " + quoted(rname(r));
    auto& locals = localByName_[gr.client];
    auto localTypes = localTypes_.find(gr.client);
    std::vector<ResourceRequest> hardware, software;
    std::vector<std::pair<u32, u32>> taken;  // resource, line of the request
    for (const Ref& ref : raw_[r].resources) {
      ResourceRequest req;
      req.text = std::string(ref.text);
      bool globalType = globalTypes_.count(ref.text) != 0 || ref.text == "CPU" || ref.text == "GPU";
      bool localType = localTypes != localTypes_.end() && localTypes->second.count(ref.text) != 0;
      if (globalType || localType || ref.text == "CUDA_STREAM") {
        req.isType = true;
        req.kind = kindOfType(ref.text);
        // globals of the type in this hyperepoch, then the client's own of the type
        auto byType = byType_.find(ref.text);
        const std::vector<u32> none;
        for (u32 i : byType == byType_.end() ? none : byType->second) {
          const ResourceInfo& info = g_.resources[i];
          if (info.client == kNone && info.hyperepoch == h) req.candidates.push_back(i);
          if (info.client == gr.client) {
            useLocal(i, h, r, ref.line);
            req.candidates.push_back(i);
          }
        }
        if (req.candidates.empty())
          die(ErrorCode::kValidation, ref.line,
              who + " requests type " + quoted(ref.text) + ", but no resource of that type is in hyperepoch " +
                  quoted(g_.hyperepochs[h].name) + " or local to its client");
      } else {
        u32 res = kNone;
        auto g = globalByName_.find(ref.text);
        if (g != globalByName_.end()) {
          res = g->second;
          u32 rh = g_.resources[res].hyperepoch;
          if (rh != h)
            die(ErrorCode::kValidation, ref.line,
                who + " of hyperepoch " + quoted(g_.hyperepochs[h].name) + " uses resource " + quoted(ref.text) +
                    (rh == kNone ? std::string(", which belongs to no hyperepoch")
                                 : ", which belongs to hyperepoch " + quoted(g_.hyperepochs[rh].name)));
        } else {
          auto l = locals.find(ref.text);
          if (l == locals.end()) {
            for (u32 other = 0; other < g_.clients.size(); ++other)
              if (localByName_[other].count(ref.text) != 0)
                die(ErrorCode::kValidation, ref.line,
                    who + " uses resource " + quoted(ref.text) + " of client " + quoted(g_.clients[other].name) +
                        ", which only that client sees");
            die(ErrorCode::kValidation, ref.line, who + " uses unknown resource " + quoted(ref.text));
          }
          res = l->second;
          useLocal(res, h, r, ref.line);
        }
        req.kind = g_.resources[res].kind;
        req.candidates.push_back(res);
      }
      for (u32 cand : req.candidates) taken.push_back({cand, ref.line});
      if (isHardware(req.kind)) hardware.push_back(std::move(req));
      else software.push_back(std::move(req));
    }
    std::sort(taken.begin(), taken.end());
    for (std::size_t i = 1; i < taken.size(); ++i)
      if (taken[i].first == taken[i - 1].first)
        die(ErrorCode::kValidation, taken[i].second,
            who + " requests resource " + quoted(g_.resources[taken[i].first].name) + " twice");
    if (hardware.size() != 1)
      die(ErrorCode::kValidation, gr.loc.line,
          who + " must hold exactly one hardware resource (a CPU or a GPU), not " + std::to_string(hardware.size()));
    gr.resources.clear();
    gr.resources.push_back(std::move(hardware.front()));
    for (ResourceRequest& s : software) gr.resources.push_back(std::move(s));
    gr.kind = gr.resources.front().kind == ResourceKind::kGpu ? RunnableKind::kSubmittee : RunnableKind::kCpu;
  }

  void resolveRunnables() {
    const u32 count = static_cast<u32>(g_.runnables.size());
    // Type requests look resources up by type: index them once, in resource order.
    for (u32 i = 0; i < g_.resources.size(); ++i) byType_[g_.resources[i].type].push_back(i);
    for (u32 r = 0; r < count; ++r) resolveRequests(r);
    // submitters and submittees
    for (u32 r = 0; r < count; ++r) {
      if (!raw_[r].hasSubmits) continue;
      GraphRunnable& gr = g_.runnables[r];
      const std::string who = "runnable " + quoted(rname(r));
      u32 s = resolveRef(raw_[r].submits, who + " Submits");
      GraphRunnable& se = g_.runnables[s];
      u32 at = raw_[r].submits.line;
      if (gr.resources.front().kind != ResourceKind::kCpu)
        die(ErrorCode::kValidation, at, who + " submits GPU work and must run on a CPU");
      if (se.resources.front().kind != ResourceKind::kGpu)
        die(ErrorCode::kValidation, at, who + " submits " + quoted(rname(s)) + ", which does not run on a GPU");
      if (s == r) die(ErrorCode::kValidation, at, who + " submits itself");
      if (se.client != gr.client)
        die(ErrorCode::kValidation, at, who + " submits " + quoted(rname(s)) + " of another client");
      if (se.epoch != gr.epoch)
        die(ErrorCode::kValidation, at, who + " submits " + quoted(rname(s)) + " of another epoch");
      if (se.submittedBy != kNone)
        die(ErrorCode::kValidation, at,
            quoted(rname(s)) + " is submitted by both " + quoted(rname(se.submittedBy)) + " and " + quoted(rname(r)));
      ResourceRequest* stream = nullptr;
      for (ResourceRequest& req : gr.resources) {
        if (req.kind != ResourceKind::kCudaStream) continue;
        if (stream != nullptr) die(ErrorCode::kValidation, at, who + " holds more than one CUDA stream");
        stream = &req;
      }
      if (stream == nullptr)
        die(ErrorCode::kValidation, at, who + " submits GPU work but holds no CUDA_STREAM resource");
      // The submittee runs on a device that one of the submitter's streams maps to.
      std::vector<u32>& gpus = se.resources.front().candidates;
      std::vector<u32> narrowed;
      for (u32 gpu : gpus)
        for (u32 st : stream->candidates)
          if (g_.resources[st].device == gpu) {
            narrowed.push_back(gpu);
            break;
          }
      if (narrowed.empty())
        die(ErrorCode::kValidation, at,
            who + " submits " + quoted(rname(s)) + ", but none of its CUDA streams maps to a GPU that " +
                quoted(rname(s)) + " may run on");
      std::vector<u32> streams;
      for (u32 st : stream->candidates)
        if (std::find(narrowed.begin(), narrowed.end(), g_.resources[st].device) != narrowed.end())
          streams.push_back(st);
      gpus = std::move(narrowed);
      stream->candidates = std::move(streams);
      gr.kind = RunnableKind::kSubmitter;
      gr.submits = s;
      se.submittedBy = r;
    }
    for (u32 r = 0; r < count; ++r) {
      const GraphRunnable& gr = g_.runnables[r];
      if (gr.kind == RunnableKind::kSubmittee && gr.submittedBy == kNone)
        die(ErrorCode::kValidation, gr.loc.line,
            "GPU runnable " + quoted(rname(r)) + " is submitted by no runnable (a CPU runnable must name it in Submits)");
    }
    // dependencies
    for (u32 r = 0; r < count; ++r) {
      GraphRunnable& gr = g_.runnables[r];
      const std::string who = "runnable " + quoted(rname(r));
      for (const Ref& ref : raw_[r].dependencies) {
        u32 d = resolveRef(ref, who);
        if (d == r) die(ErrorCode::kValidation, ref.line, who + " depends on itself");
        if (g_.runnables[d].epoch != gr.epoch)
          die(ErrorCode::kValidation, ref.line,
              who + " of epoch " + quoted(epochName(gr.epoch)) + " depends on " + quoted(rname(d)) + " of epoch " +
                  quoted(epochName(g_.runnables[d].epoch)) + " (dependencies must stay within one epoch)");
        gr.dependencies.push_back(d);
      }
      if (gr.submittedBy != kNone) gr.dependencies.push_back(gr.submittedBy);
      sortUnique(gr.dependencies);
    }
  }

  std::string epochName(u32 e) const { return g_.hyperepochs[g_.epochs[e].hyperepoch].name + "." + g_.epochs[e].name; }

  static void sortUnique(std::vector<u32>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // ---- round robin ----
  void collectGroups(u32 list, u32 e, u32 c) {
    expect(list, NodeKind::kSeq, "AliasGroups");
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      auto [key, value] = singleEntry(t_.kid(list, i), "an alias group");
      rawGroups_.push_back(RawGroup{key, value, e, c});
    }
  }

  static bool sameRequests(const GraphRunnable& a, const GraphRunnable& b) {
    if (a.resources.size() != b.resources.size()) return false;
    for (std::size_t i = 0; i < a.resources.size(); ++i)
      if (a.resources[i].kind != b.resources[i].kind || a.resources[i].candidates != b.resources[i].candidates)
        return false;
    return true;
  }

  void buildGroups() {
    std::unordered_set<std::string_view> names;
    for (const RawGroup& raw : rawGroups_) {
      std::string_view name = t_.text(raw.nameNode);
      u32 at = line(raw.nameNode);
      checkName(name, raw.nameNode, "alias group", true);
      if (!names.insert(name).second) die(ErrorCode::kValidation, at, "duplicate alias group " + quoted(name));
      std::string where = "alias group " + quoted(name);
      u32 steps = kNone;
      forEachEntry(raw.valueNode, where, [&](std::string_view k, u32 kn, u32 v) {
        if (k == "Steps") steps = v;
        else unknownKey(k, kn, where, "Steps");
      });
      if (steps == kNone) die(ErrorCode::kValidation, at, where + " has no Steps");
      expect(steps, NodeKind::kSeq, "the Steps of " + where);
      GraphRunnable group;
      group.name = std::string(name);
      group.kind = RunnableKind::kAliasGroup;
      group.epoch = raw.epoch;
      group.client = raw.client;
      group.loc = SourceLoc{origin_, static_cast<int>(at)};
      group.priority = 10;
      u32 first = kNone;
      const u32 gi = static_cast<u32>(g_.runnables.size());
      for (std::size_t i = 0; i < t_.size(steps); ++i) {
        u32 item = t_.kid(steps, i);
        if (kind(item) == NodeKind::kNull || (kind(item) == NodeKind::kScalar && t_.text(item) == "None")) {
          group.steps.push_back(kNone);
          continue;
        }
        Ref ref{scalar(item, "a step of " + where), line(item)};
        u32 m = resolveRef(ref, where);
        GraphRunnable& mr = g_.runnables[m];
        if (mr.epoch != raw.epoch)
          die(ErrorCode::kValidation, ref.line,
              where + " of epoch " + quoted(epochName(raw.epoch)) + " names " + quoted(rname(m)) + " of epoch " +
                  quoted(epochName(mr.epoch)));
        if (group.client == kNone) group.client = mr.client;
        if (mr.client != group.client)
          die(ErrorCode::kValidation, ref.line,
              where + " mixes clients: " + quoted(rname(m)) + " is not of client " + quoted(g_.clients[group.client].name));
        if (mr.aliasGroup != kNone && mr.aliasGroup != gi)
          die(ErrorCode::kValidation, ref.line,
              quoted(rname(m)) + " is in alias groups " + quoted(g_.runnables[mr.aliasGroup].name) + " and " + quoted(name));
        if (mr.kind != RunnableKind::kCpu)
          die(ErrorCode::kValidation, ref.line,
              where + ": " + quoted(rname(m)) + " is a submitter or submittee; round robin of GPU work is not supported");
        if (first == kNone) {
          first = m;
          group.wcetNs = mr.wcetNs;
          group.resources = mr.resources;
          group.priority = mr.priority;
          group.startTimeNs = mr.startTimeNs;
        } else if (!sameRequests(g_.runnables[first], mr)) {
          die(ErrorCode::kValidation, ref.line,
              where + ": " + quoted(rname(m)) + " and " + quoted(rname(first)) + " use different resources");
        }
        if (group.client != kNone) {
          auto& byName = runnableByName_[group.client];
          auto clash = byName.find(name);
          if (clash != byName.end() && g_.runnables[clash->second].kind != RunnableKind::kAliasGroup)
            die(ErrorCode::kValidation, at, where + " has the name of runnable " + quoted(rname(clash->second)));
        }
        group.wcetNs = std::max(group.wcetNs, mr.wcetNs);
        group.priority = std::min(group.priority, mr.priority);
        group.startTimeNs = std::max(group.startTimeNs, mr.startTimeNs);
        if (mr.deadlineNs != kNoDuration &&
            (group.deadlineNs == kNoDuration || mr.deadlineNs < group.deadlineNs))
          group.deadlineNs = mr.deadlineNs;
        if (mr.endMonitorThresholdNs != kNoDuration)
          group.endMonitorThresholdNs = std::max(group.endMonitorThresholdNs, mr.endMonitorThresholdNs);
        mr.aliasGroup = gi;
        group.steps.push_back(m);
      }
      if (first == kNone) die(ErrorCode::kValidation, at, where + " has no runnable among its steps");
      g_.runnables.push_back(std::move(group));
    }
  }

  void redirectToGroups() {
    const u32 count = static_cast<u32>(g_.runnables.size());
    bool any = false;
    for (u32 r = 0; r < count; ++r) any = any || g_.runnables[r].aliasGroup != kNone;
    if (!any) return;
    auto target = [&](u32 d) { return g_.runnables[d].aliasGroup != kNone ? g_.runnables[d].aliasGroup : d; };
    for (u32 r = 0; r < count; ++r) {
      GraphRunnable& gr = g_.runnables[r];
      if (gr.aliasGroup != kNone) {
        GraphRunnable& group = g_.runnables[gr.aliasGroup];
        for (u32 d : gr.dependencies) group.dependencies.push_back(target(d));
        gr.dependencies.clear();
      } else if (gr.kind != RunnableKind::kAliasGroup) {
        for (u32& d : gr.dependencies) d = target(d);
        sortUnique(gr.dependencies);
      }
    }
    for (u32 r = 0; r < count; ++r) {
      GraphRunnable& gr = g_.runnables[r];
      if (gr.kind != RunnableKind::kAliasGroup) continue;
      gr.dependencies.erase(std::remove(gr.dependencies.begin(), gr.dependencies.end(), r), gr.dependencies.end());
      sortUnique(gr.dependencies);
    }
    for (u32 r = 0; r < count; ++r) {
      const GraphRunnable& gr = g_.runnables[r];
      if (gr.kind != RunnableKind::kAliasGroup) continue;
      for (u32 d : gr.dependencies) {
        const GraphRunnable& p = g_.runnables[d];
        if (p.kind == RunnableKind::kAliasGroup && p.steps.size() != gr.steps.size())
          die(ErrorCode::kValidation, gr.loc.line,
              "alias group " + quoted(gr.name) + " (" + std::to_string(gr.steps.size()) + " steps) depends on alias group " +
                  quoted(p.name) + " (" + std::to_string(p.steps.size()) + " steps): round-robinned parents and children need equal step counts");
      }
    }
  }

  // A submitter enqueues its submittee behind the submittee's predecessors: CPU work must have
  // ended and GPU work must have been submitted (its event recorded) by the time the submitter
  // runs. So the submitter depends on the submittee's CPU predecessors and on the submitters of
  // its GPU predecessors; the scheduler then orders them and the runtime never waits on work
  // queued behind itself on the same core.
  void orderSubmissions() {
    const u32 count = static_cast<u32>(g_.runnables.size());
    for (u32 g = 0; g < count; ++g) {
      const GraphRunnable& gr = g_.runnables[g];
      if (gr.kind != RunnableKind::kSubmittee || gr.submittedBy == kNone) continue;
      const u32 s = gr.submittedBy;
      std::vector<u32> extra;
      for (u32 d : gr.dependencies) {
        if (d == s) continue;
        const GraphRunnable& dr = g_.runnables[d];
        const u32 before = dr.kind == RunnableKind::kSubmittee ? dr.submittedBy : d;
        if (before != kNone && before != s) extra.push_back(before);
      }
      if (extra.empty()) continue;
      auto& deps = g_.runnables[s].dependencies;
      deps.insert(deps.end(), extra.begin(), extra.end());
      sortUnique(deps);
    }
  }

  void checkCycles(const char* why) const {
    const u32 count = static_cast<u32>(g_.runnables.size());
    std::vector<std::uint8_t> color(count, 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::pair<u32, u32>> stack;     // runnable, next dependency to visit
    for (u32 root = 0; root < count; ++root) {
      if (color[root] != 0) continue;
      stack.push_back({root, 0});
      color[root] = 1;
      while (!stack.empty()) {
        auto& [r, next] = stack.back();
        const auto& deps = g_.runnables[r].dependencies;
        if (next == deps.size()) {
          color[r] = 2;
          stack.pop_back();
          continue;
        }
        u32 d = deps[next++];
        if (color[d] == 1) {
          // the path from d to r, then back to d
          std::size_t from = 0;
          while (stack[from].first != d) ++from;
          std::string cycle;
          for (std::size_t i = from; i < stack.size(); ++i) cycle += quoted(rname(stack[i].first)) + " -> ";
          cycle += quoted(rname(d));
          die(ErrorCode::kValidation, g_.runnables[d].loc.line,
              "dependency cycle: " + cycle + " (each depends on the next)" + why);
        }
        if (color[d] == 0) {
          color[d] = 1;
          stack.push_back({d, 0});
        }
      }
    }
  }

  void finishHyperepochs() {
    for (u32 r = 0; r < g_.resources.size(); ++r)
      if (g_.resources[r].hyperepoch != kNone) g_.hyperepochs[g_.resources[r].hyperepoch].resources.push_back(r);
  }

  const YTree& t_;
  const std::string& origin_;
  Graph g_;
  std::vector<u32> resourceLine_;
  std::vector<u32> epochLine_;
  std::vector<u32> hyperFirstEpoch_;
  std::unordered_map<std::string_view, u32> globalByName_;
  std::unordered_set<std::string_view> globalTypes_;
  std::unordered_map<u32, std::unordered_set<std::string_view>> localTypes_;
  std::unordered_map<u32, std::unordered_map<std::string_view, u32>> localByName_;
  std::unordered_map<std::string_view, u32> hyperByName_;
  std::unordered_map<std::string, u32> epochByName_;
  std::unordered_map<std::string_view, u32> clientByName_;
  std::vector<std::unordered_map<std::string_view, u32>> runnableByName_;
  std::vector<RawRunnable> raw_;
  std::unordered_map<std::string_view, std::vector<u32>> byType_;
  std::vector<RawGroup> rawGroups_;
};

}  // namespace

Result<Graph> parseGraph(std::string_view yamlText, const std::string& origin, const ParseOptions&) {
  if (const std::size_t nulLine = firstNulLine(yamlText))
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(nulLine) + ": the graph contains a NUL byte (binary data, not YAML)");
  try {
    YTree tree;
    {
      ViewBuf buf(yamlText);
      std::istream in(&buf);
      YAML::Parser parser(in);
      TreeBuilder builder(tree, origin);
      if (!parser.HandleNextDocument(builder))
        return fail(ErrorCode::kParse, origin + ":1: empty graph (expected a map with Version and the graph id)");
      YTree ignored;
      TreeBuilder rest(ignored, origin);
      if (parser.HandleNextDocument(rest))
        return fail(ErrorCode::kParse, origin + ": more than one yaml document (a graph file holds one)");
    }
    Builder builder(tree, origin);
    Graph graph = builder.build();
    graph.sourceFile = origin;
    graph.sourceHash = hashBytes(kHashSeed, yamlText);
    return graph;
  } catch (const Failure& f) {
    return f.error;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(std::max(0, e.mark.line) + 1) +
                                       ": yaml syntax error: " + e.msg);
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
