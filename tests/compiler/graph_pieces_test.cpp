// Unit tests of the graph reader's pieces on their own (compiler/graph/): the YAML tree, typed
// reading, the graph-level rules on hand-built Graphs without YAML, and the limits of limits.hpp
// where the graph is read.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graph/graph_rules.hpp"
#include "graph/tree_reader.hpp"
#include "graph/yaml_tree.hpp"
#include "graph_builder.hpp"
#include "graph_parser.hpp"
#include "id_list.hpp"
#include "tactus/core/limits.hpp"

using tactus::test::ids;

using namespace tactus;
using namespace tactus::compiler;
using namespace tactus::compiler::parse;
using tactus::compiler::test::GraphBuilder;

namespace {

constexpr std::int64_t kMs = 1000000;

// A graph of one client C with the given runnables in epoch H.E (`Frames` frames).
std::string graphText(const std::string& runnables, int frames = 1, const std::string& extraEpochs = "") {
  return "Version: 3.0.0\n"
         "G:\n"
         "  Resources:\n"
         "    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n"
         "    - H:\n"
         "        Period: 1000s\n"
         "        Epochs:\n"
         "          - E: {Period: 10ms, Frames: " +
         std::to_string(frames) + "}\n" + extraEpochs +
         "  Clients:\n"
         "    - C:\n"
         "        Epochs:\n"
         "          - H.E:\n"
         "              Runnables:\n" +
         runnables;
}

std::string errorOf(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  if (g) return "(parsed)";
  return g.error().message;
}

}  // namespace

TEST_CASE("readYamlTree: nodes with lines, aliases shared, a second document located", "[graph]") {
  auto t = readYamlTree("a: &x [1, 2]\nb:\n  c: *x\n", "t.yaml");
  REQUIRE(t.has_value());
  const YTree& tree = *t;
  REQUIRE(tree.root != kNone);
  CHECK(tree.nodes[tree.root].kind == NodeKind::kMap);
  CHECK(tree.size(tree.root) == 4);
  const u32 a = tree.kid(tree.root, 1);
  CHECK(tree.nodes[a].kind == NodeKind::kSeq);
  CHECK(tree.text(tree.kid(a, 1)) == "2");
  const u32 b = tree.kid(tree.root, 3);
  CHECK(tree.nodes[b].line == 2);  // a block map: the key's line
  CHECK(tree.nodes[tree.kid(b, 0)].line == 3);
  CHECK(tree.kid(b, 1) == a);  // the alias is the anchored node itself

  CHECK(readYamlTree("", "t.yaml")->root == kNone);
  CHECK(readYamlTree("a: 1\n\n---\nb: 2\n", "t.yaml").error().message ==
        "t.yaml:3: more than one yaml document (a graph file holds one)");
  TreeOptions noAliases;
  noAliases.aliases = false;
  CHECK(readYamlTree("a: &x 1\nb: *x\n", "t.yaml", noAliases).error().message ==
        "t.yaml:2: aliases are not allowed here");
  CHECK(readYamlTree("a: [1\n", "t.yaml").error().message.rfind("t.yaml:", 0) == 0);
  CHECK(readYamlTree(std::string("a: 1\nb: \0\n", 10), "t.yaml").error().message ==
        "t.yaml:2: the graph contains a NUL byte (binary data, not YAML)");
}

namespace {

// Both readers' results as text: every node (kind, line, a, b), the children, the arena and the
// root, or the error message.
std::string treeDump(const Result<YTree>& t) {
  if (!t.has_value()) return "error: " + t.error().message;
  std::string out = "root " + std::to_string(t->root) + "\n";
  for (const YNode& n : t->nodes)
    out += std::to_string(static_cast<int>(n.kind)) + " " + std::to_string(n.line) + " " + std::to_string(n.a) + " " +
           std::to_string(n.b) + "\n";
  for (u32 k : t->kids) out += std::to_string(k) + ",";
  return out + "\n" + t->arena;
}

std::string sameTreeBothReaders(const std::string& text) {
  TreeOptions yamlCpp;
  yamlCpp.yamlCppOnly = true;
  const std::string fast = treeDump(readYamlTree(text, "t.yaml"));
  const std::string slow = treeDump(readYamlTree(text, "t.yaml", yamlCpp));
  return fast == slow ? std::string("same") : "fast:\n" + fast + "\nyaml-cpp:\n" + slow;
}

}  // namespace

TEST_CASE("readYamlTree: the plain-subset reader builds yaml-cpp's tree, or leaves the text to it", "[graph]") {
  const char* snippets[] = {
      "Version: 3.0.0\nG:\n  Identifier: 1\n  Resources:\n    CPU: [CPU0, CPU1]\n    GPU: [GPU0]\n"
      "  Hyperepochs:\n    - Main:\n        Period: 100000us\n        Epochs:\n          - Fast: {Period: 25000us, "
      "Frames: 4}\n"
      "  Clients:\n    - C0:\n        Resources:\n          CUDA_STREAM:\n            - S0: GPU0\n        Epochs:\n"
      "          - Main.Fast:\n              Runnables:\n                - R0: {WCET: 382us, Resources: [CPU]}\n"
      "                - R5: {WCET: 1us, Resources: [CPU, CUDA_STREAM], Submits: C0.R5Gpu}\n"
      "                - R6: {WCET: 1us, Resources: [], Dependencies: [C0.R0,C0.R5], X: {}}\n",
      "a: 1",
      "a: 1\n\n\n  \nb: 2\n   \n",
      "a:\n  - x\n  - y\nb: z",
      "a:\n- x\n- y\n",
      "a:\nb: 1\n",
      "a: \n",
      "a: b c\n",
      "a: b\n  c\n",
      "a: 'q'\n",
      "a: \"q\"\n",
      "a: 1 # c\n",
      "# c\na: 1\n",
      "a: null\n",
      "a: ~\n",
      "a: -1\n",
      "a: .5\n",
      "a: [1, 2,]\n",
      "a: [1,\n  2]\n",
      "a: {b: 1,\n  c: 2}\n",
      "a: {b:1}\n",
      "a: {b: }\n",
      "a: [b: 1]\n",
      "a: [[1, 2], {c: [d]}]\n",
      "a b: 1\n",
      "a: b: c\n",
      "a:b\n",
      "a: b:c\n",
      "---\na: 1\n",
      "a: 1\n---\nb: 2\n",
      "a: 1\n...\n",
      "- a\n- b: c\n  d: e\n- [f]\n",
      "- - a\n",
      "-\n  a: 1\n",
      "a:\n  b: 1\n c: 2\n",
      "a:\n    b: 1\n  c: 2\n",
      "a:\n  b: 1\n    c: 2\n",
      "a: 1\n  b: 2\n",
      "  a: 1\n  b: 2\n",
      "a:\tb\n",
      "a: 1\r\nb: 2\r\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "a: |\n  x\n",
      "a: >\n  x\n",
      "? a\n: b\n",
      "a: 1\na: 2\n",
      "a: [1, 2] x\n",
      "a: {b: 1}}\n",
      "a: [1, 2\n",
      "",
      "\n\n",
      "- x\n-\n",
      "a:  [ 1 ,2 ]  \n",
      "-  a: 1\n   b: 2\n-   c: 3\n",
      "a:\n  - b:\n      - c\n    d: [e]\n  - f\n",
      "x: y\n\xef\xbb\xbf",
      "a: 1\nb:\n",
      "a:\n  b:\n    c:\n      d: [[[[[x]]]]]\n",
      "A_b-c.d: E-f_g.h\n",
      "a: 1e5\n",
      "a: 0x1F\n",
      "a: true\n"};
  for (const char* snippet : snippets) {
    INFO(snippet);
    CHECK(sameTreeBothReaders(snippet) == "same");
  }
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "[";
  CHECK(sameTreeBothReaders("a: " + deep + "\n") == "same");
  std::string deepBlock;
  for (int i = 0; i < 100; ++i) deepBlock += std::string(static_cast<std::size_t>(2 * i), ' ') + "k:\n";
  CHECK(sameTreeBothReaders(deepBlock + std::string(200, ' ') + "k: v\n") == "same");

  // Every graph and WCET file of the repository.
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  const std::filesystem::path top = root ? root : "../..";
  int files = 0;
  for (const char* dir : {"schedules", "samples", "tests", "fuzz", "bench"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(top / dir)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      INFO(entry.path().string());
      CHECK(sameTreeBothReaders(text.str()) == "same");
      ++files;
    }
  CHECK(files > 50);
}

TEST_CASE("TreeReader: typed values refused with file and line", "[graph]") {
  auto t = readYamlTree("d: 10ms\nz: 0\nbig: 1001s\nn: 12\nx: [a]\nk: {a: 1, a: 2}\n", "r.yaml");
  REQUIRE(t.has_value());
  const std::string origin = "r.yaml";  // the reader keeps a reference
  const TreeReader rd(*t, origin);
  const YTree& tree = *t;
  auto value = [&](int i) { return tree.kid(tree.root, 2 * static_cast<std::size_t>(i) + 1); };
  auto failure = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Failure& e) {
      return e.error.message;
    }
    return "(no failure)";
  };
  CHECK(rd.duration(value(0), "D", false, false) == 10 * kMs);
  CHECK(failure([&] { rd.duration(value(1), "Z", true, false); }) == "r.yaml:2: Z '0' needs a unit (ns, us, ms or s)");
  CHECK(failure([&] { rd.duration(value(2), "Big", true, true); }) ==
        "r.yaml:3: Big: bad duration '1001s': too large (at most 1000s)");
  CHECK(rd.integer(value(3), "N", 1, 20) == 12);
  CHECK(failure([&] { rd.integer(value(3), "N", 1, 10); }) == "r.yaml:4: N is '12', out of range 1..10");
  CHECK(failure([&] { rd.scalar(value(4), "X"); }) == "r.yaml:5: X must be a scalar, not a list");
  CHECK(failure([&] { rd.forEachEntry(value(5), "K", [](auto, auto, auto) {}); }) ==
        "r.yaml:6: duplicate key 'a' in K");
  CHECK(failure([&] {
          rd.checkName(std::string(limits::kMaxNameBytes + 1, 'n'), value(3), "runnable", false);
        }).find("r.yaml:4: runnable name 'nnn") == 0);
  CHECK(failure([&] { rd.checkName(std::string(limits::kMaxNameBytes, 'n'), value(3), "runnable", false); }) ==
        "(no failure)");
  CHECK(failure([&] {
          rd.checkName(
              "a\x1b"
              "b",
              value(3), "client", false);
        }) == "r.yaml:4: client name 'a\\x1bb' contains white space, a control character, ',', '=' or '#'");
}

TEST_CASE("graph rules on a hand-built Graph: cycles, round robin, submissions, stream limits", "[graph]") {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("H", 10 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs);
  const auto x = b.runnable("X", e, kMs, {b.type("CPU")});
  const auto y = b.runnable("Y", e, kMs, {b.type("CPU")}, {x});
  b.g.sourceFile = "hand.yaml";
  b[x].loc = {"hand.yaml", 4};
  b[y].loc = {"hand.yaml", 5};
  CHECK(runnableName(b.g, y) == "Client0.Y");
  CHECK(checkCycles(b.g, "").has_value());
  b[x].dependencies = {y};
  auto cycle = checkCycles(b.g, " (why)");
  REQUIRE_FALSE(cycle.has_value());
  CHECK(cycle.error().message ==
        "hand.yaml:4: dependency cycle: 'Client0.X' -> 'Client0.Y' -> 'Client0.X' "
        "(each depends on the next) (why)");
  b[x].dependencies.clear();

  // Round robin: a dependency on a member becomes one on its group; the member's own move there.
  GraphRunnable group;
  group.name = "Grp";
  group.kind = RunnableKind::kAliasGroup;
  group.epoch = e;
  group.steps = {x};
  b.g.runnables.push_back(group);
  const RunnableId gi{static_cast<std::uint32_t>(b.g.runnables.size() - 1)};
  b[x].aliasGroup = gi;
  const auto z = b.runnable("Z", e, kMs, {b.type("CPU")}, {x});
  b[x].dependencies = {y};
  b[y].dependencies.clear();
  REQUIRE(redirectToGroups(b.g).has_value());
  CHECK(b[z].dependencies == std::vector<RunnableId>{gi});
  CHECK(b[gi].dependencies == std::vector<RunnableId>{y});
  CHECK(b[x].dependencies.empty());

  finishHyperepochs(b.g);
  CHECK(b.g.hyperepochs[h].resources == ids<ResourceId>({0, 1, 0, 1}));  // appended to the builder's
}

TEST_CASE("orderStreams: a submitter gains no dependency on its submittee's predecessors", "[graph]") {
  GraphBuilder b;
  b.cpus(1);
  const auto gpu = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto st = b.stream("S0", gpu);
  const auto h = b.hyperepoch("H", 10 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs);
  const auto pre = b.runnable("Pre", e, kMs, {b.type("CPU")});
  const auto sub = b.runnable("Sub", e, kMs, {b.type("CPU"), b.instance(st)});
  const auto gk = b.runnable("Kernel", e, kMs, {b.instance(gpu)}, {pre, sub});
  b[sub].kind = RunnableKind::kSubmitter;
  b[sub].submits = gk;
  b[gk].kind = RunnableKind::kSubmittee;
  b[gk].submittedBy = sub;
  REQUIRE(orderStreams(b.g).has_value());
  CHECK(b[sub].dependencies.empty());
  CHECK(b[gk].dependencies == std::vector<RunnableId>{pre, sub});

  b.g.sourceFile = "s.yaml";
  b.g.resources[gpu].streamLimit = 0;
  auto limit = checkStreamLimits(b.g, IdVector<ResourceId, std::uint32_t>(b.g.resources.size(), 9));
  REQUIRE_FALSE(limit.has_value());
  CHECK(limit.error().message == "s.yaml:9: GPU 'GPU0' allows 0 client streams but 1 map to it");
  b.g.resources[gpu].streamLimit = 1;
  CHECK(checkStreamLimits(b.g, IdVector<ResourceId, std::uint32_t>(b.g.resources.size(), 9)).has_value());
}

TEST_CASE("limits are checked where the graph is read, with file, line and name", "[graph][limits]") {
  const std::string one = "                - A: {WCET: 1ms, Resources: [CPU]}\n";
  CHECK(errorOf(graphText(one, 65536)) == "(parsed)");
  CHECK(errorOf(graphText(one, 65537)) == "g.yaml:9: Frames of epoch 'H.E' is '65537', out of range 1..65536");
  CHECK(errorOf(graphText("                - A: {WCET: 1000.5s, Resources: [CPU]}\n")) ==
        "g.yaml:15: WCET of runnable 'C.A': bad duration '1000.5s': too large (at most 1000s)");
  // (a resource: YAML itself refuses keys of more than 1024 characters, names in lists are free)
  std::string longName = graphText(one);
  longName.replace(longName.find("    CPU: [CPU0, CPU1]\n"), 21,
                   "    CPU: [CPU0, CPU1]\n    LOCK: [" + std::string(1025, 'r') + "]\n");
  longName = errorOf(longName);
  CHECK(longName.rfind("g.yaml:5: resource name 'rrrr", 0) == 0);
  CHECK_THAT(longName, Catch::EndsWith("is 1025 bytes long (at most 1024)"));
  // Instances: 64 runnables x 65,536 frames = 2^22 is the most a hyperepoch holds.
  std::string many;
  for (int i = 0; i < 65; ++i) many += "                - R" + std::to_string(i) + ": {WCET: 1ns, Resources: [CPU]}\n";
  CHECK(errorOf(graphText(many, 65536)) ==
        "g.yaml:79: runnable 'C.R64': hyperepoch 'H' has more than 4194304 instances (runnables x frames of their "
        "epochs)");
  // A single-epoch hyperepoch without Period takes period x frames, which must stay a duration.
  const std::string noPeriod =
      "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0]\n  Hyperepochs:\n    - H:\n        Epochs:\n"
      "          - E: {Period: 1000s, Frames: 2}\n  Clients:\n    - C:\n        Epochs:\n          - H.E:\n"
      "              Runnables:\n" +
      one;
  CHECK(errorOf(noPeriod) == "g.yaml:6: hyperepoch 'H': period too large");
}
