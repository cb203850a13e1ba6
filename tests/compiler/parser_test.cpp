// Tests of the compiler's front end: durations, the YAML graph parser and WCET side files.
// (Above 600 lines: one case per error the graph reader reports, each with its YAML snippet.)
#include <catch2/catch.hpp>

#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "duration.hpp"
#include "graph_parser.hpp"
#include "id_list.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "test_files.hpp"
#include "wcet_file.hpp"

using tactus::test::ids;

using namespace tactus;
using namespace tactus::compiler;

using tactus::test::readAll;
using tactus::test::sourceRoot;

namespace {

std::string fixture(const std::string& name) { return sourceRoot() + "/tests/compiler/fixtures/" + name; }

/// The 1-based line that a fixture marks with `# <-- error`.
int markedLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("<-- error") != std::string::npos) return n;
  return 0;
}

RunnableId runnableIndex(const Graph& g, const std::string& client, const std::string& name) {
  for (RunnableId r : g.runnables.ids())
    if (g.runnables[r].name == name && g.clients[g.runnables[r].client].name == client) return r;
  FAIL("no runnable " << client << "." << name);
  return kNone;
}

/// A small valid graph with one client `C` in epoch `H.E` on CPU0..CPU1; `runnables` is
/// inserted as the list under Runnables (indented 16 spaces).
std::string smallGraph(const std::string& runnables) {
  return "Version: 3.0.0\n"
         "G:\n"
         "  Resources:\n"
         "    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n"
         "    - H:\n"
         "        Epochs:\n"
         "          - E: {Period: 10ms}\n"
         "  Clients:\n"
         "    - C:\n"
         "        Epochs:\n"
         "          - H.E:\n"
         "              Runnables:\n" +
         runnables;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// durations

TEST_CASE("parseDuration reads every unit exactly", "[parser]") {
  CHECK(parseDuration("10us").value() == 10'000);
  CHECK(parseDuration("33.33ms").value() == 33'330'000);
  CHECK(parseDuration("1.00 us").value() == 1'000);
  CHECK(parseDuration("5000ns").value() == 5'000);
  CHECK(parseDuration("2s").value() == 2'000'000'000);
  CHECK(parseDuration("0.000000001s").value() == 1);
  CHECK(parseDuration("0").value() == 0);
  CHECK(parseDuration("0ms").value() == 0);
  CHECK(parseDuration("1000s").value() == limits::kMaxDurationNs);  // the longest duration allowed
  CHECK(isBareZero("0"));
  CHECK_FALSE(isBareZero("0ms"));
}

TEST_CASE("parseDuration rejects negatives, missing units, junk and overflow", "[parser]") {
  for (const char* bad :
       {"-5ms", "10", "ms", "", "10 parsecs", "1.5.ms", "1.ms", ".5ms", "10ms junk", "1000.000000001s", "1000000001s",
        "99999999999999999999999ms", "0.5ns", "1e3us", "+3ms", "3\x01ms"}) {
    auto d = parseDuration(bad);
    INFO(bad);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code == ErrorCode::kParse);
    CHECK(d.error().message.find("bad duration") != std::string::npos);
  }
  CHECK(parseDuration("-5ms").error().message.find("negative") != std::string::npos);
  CHECK(parseDuration("10").error().message.find("missing unit") != std::string::npos);
  CHECK(parseDuration("1000000001s").error().message.find("too large") != std::string::npos);
  CHECK(parseDuration("1000.000000001s").error().message.find("too large (at most 1000s)") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// failures, one fixture per kind

TEST_CASE("parseGraph rejects each broken fixture with file, line and the offending name", "[parser]") {
  struct Case {
    const char* file;
    ErrorCode code;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {"missing_version.yaml", ErrorCode::kValidation, {"Version"}},
      {"bad_version.yaml", ErrorCode::kValidation, {"4.1.0"}},
      {"identifier_range.yaml", ErrorCode::kValidation, {"Identifier", "65536"}},
      {"missing_wcet.yaml", ErrorCode::kValidation, {"C.NoWcet", "WCET"}},
      {"missing_resources.yaml", ErrorCode::kValidation, {"C.NoRes", "Resources"}},
      {"two_hardware.yaml", ErrorCode::kValidation, {"C.Greedy", "hardware"}},
      {"no_hardware.yaml", ErrorCode::kValidation, {"C.Floating", "hardware"}},
      {"unknown_resource.yaml", ErrorCode::kValidation, {"C.A", "NO_SUCH_LOCK", "hyperepoch 'H' has 'CPU0', 'CPU1'"}},
      {"invisible_resource.yaml", ErrorCode::kValidation, {"Third.Y", "OTHER_LOCK", "Other"}},
      {"bad_cpu_name.yaml", ErrorCode::kValidation, {"BigCore"}},
      {"stream_unknown_gpu.yaml", ErrorCode::kValidation, {"S0", "GPU7"}},
      {"stream_limit.yaml", ErrorCode::kValidation, {"GPU0", "2"}},
      {"overlapping_hyperepochs.yaml", ErrorCode::kValidation, {"CPU0", "Fast", "Slow"}},
      {"resource_of_other_hyperepoch.yaml", ErrorCode::kValidation, {"C.B", "CPU1", "Slow"}},
      {"cross_epoch_dependency.yaml", ErrorCode::kValidation, {"C.B", "C.A", "Fast.E", "Slow.E"}},
      {"unknown_dependency.yaml", ErrorCode::kValidation, {"C.A", "C.Ghost", "client 'C' declares 'A'"}},
      {"unknown_runnable_typo.yaml", ErrorCode::kValidation, {"Camera.Preprocces", "did you mean 'Camera.Preprocess'"}},
      {"unknown_client_typo.yaml", ErrorCode::kValidation, {"Camrea", "did you mean 'Camera'"}},
      {"unknown_resource_instance.yaml", ErrorCode::kValidation, {"CPU2", "'CPU0', 'CPU1'"}},
      {"unknown_epoch_typo.yaml", ErrorCode::kValidation, {"'Camera'", "did you mean 'Perception.Camera'"}},
      {"self_dependency.yaml", ErrorCode::kValidation, {"C.A", "itself"}},
      {"cycle.yaml", ErrorCode::kValidation, {"cycle", "C.First", "C.Second", "C.Third"}},
      {"submittee_not_submitted.yaml", ErrorCode::kValidation, {"C.Orphan"}},
      {"submitter_without_stream.yaml", ErrorCode::kValidation, {"C.Sub", "CUDA_STREAM"}},
      {"submittee_wrong_device.yaml", ErrorCode::kValidation, {"C.Sub", "C.Work"}},
      {"submitted_twice.yaml", ErrorCode::kValidation, {"C.Work", "C.Sub1", "C.Sub2"}},
      {"duplicate_runnable.yaml", ErrorCode::kValidation, {"duplicate", "C.A"}},
      {"duplicate_client.yaml", ErrorCode::kValidation, {"duplicate", "'C'"}},
      {"duplicate_resource.yaml", ErrorCode::kValidation, {"duplicate", "CPU1"}},
      {"duplicate_hyperepoch.yaml", ErrorCode::kValidation, {"duplicate", "'H'"}},
      {"duplicate_epoch.yaml", ErrorCode::kValidation, {"duplicate", "H.E"}},
      {"duplicate_key.yaml", ErrorCode::kParse, {"duplicate", "WCET", "C.A"}},
      {"duplicate_group.yaml", ErrorCode::kValidation, {"duplicate", "Slot"}},
      {"unknown_key.yaml", ErrorCode::kParse, {"Dependecies", "C.A", "did you mean 'Dependencies'"}},
      {"wrong_type.yaml", ErrorCode::kParse, {"Resources", "a map", "a list"}},
      {"bad_wcet.yaml", ErrorCode::kParse, {"C.A", "fast"}},
      {"wcet_without_unit.yaml", ErrorCode::kParse, {"C.A", "unit"}},
      {"bad_name.yaml", ErrorCode::kValidation, {"Bad,Name"}},
      {"priority_range.yaml", ErrorCode::kValidation, {"C.A", "Priority", "11"}},
      {"soc.yaml", ErrorCode::kValidation, {"SOC", "Resources", "per SoC"}},
      {"unknown_epoch.yaml", ErrorCode::kValidation, {"H.Nope", "declared: 'H.E'"}},
      {"frames_zero.yaml", ErrorCode::kValidation, {"Frames", "H.E"}},
      {"epoch_exceeds_hyperepoch.yaml", ErrorCode::kValidation, {"H.E", "30000000", "25000000"}},
      {"missing_hyperepoch_period.yaml", ErrorCode::kValidation, {"'H'", "Period"}},
      {"yaml_syntax.yaml", ErrorCode::kParse, {"yaml syntax error"}},
      {"alias_different_resources.yaml", ErrorCode::kValidation, {"Slot", "C.P", "C.R"}},
      {"alias_mixed_clients.yaml", ErrorCode::kValidation, {"Slot", "C.P"}},
      {"alias_step_mismatch.yaml", ErrorCode::kValidation, {"Kids", "Parents", "steps"}},
  };
  for (const Case& c : cases) {
    const std::string path = fixture(c.file);
    const std::string text = readAll(path);
    INFO(c.file);
    REQUIRE_FALSE(text.empty());
    const int line = markedLine(text);
    REQUIRE(line > 0);
    auto g = parseGraphFile(path);
    REQUIRE_FALSE(g.has_value());
    const std::string& msg = g.error().message;
    INFO(msg);
    CHECK(g.error().code == c.code);
    CHECK(msg.rfind(path + ":" + std::to_string(line) + ": ", 0) == 0);
    for (const std::string& name : c.names) CHECK(msg.find(name) != std::string::npos);
  }
}

TEST_CASE("parseGraphFile reports an unreadable file as an i/o error", "[parser]") {
  auto g = parseGraphFile(fixture("does_not_exist.yaml"));
  REQUIRE_FALSE(g.has_value());
  CHECK(g.error().code == ErrorCode::kIo);
  CHECK(g.error().message.find("does_not_exist.yaml") != std::string::npos);
}

TEST_CASE("parseGraph rejects more inline rule breaks", "[parser]") {
  auto failsWith = [](const std::string& yaml, const std::vector<std::string>& parts) {
    auto g = parseGraph(yaml, "inline.yaml");
    INFO(yaml);
    REQUIRE_FALSE(g.has_value());
    INFO(g.error().message);
    CHECK(g.error().message.rfind("inline.yaml:", 0) == 0);
    for (const auto& p : parts) CHECK(g.error().message.find(p) != std::string::npos);
  };
  failsWith("", {"empty"});
  failsWith("Version: 3.0.0\n", {"graph id"});
  failsWith("Version: 3.0.0\nA: {}\nB: {}\n", {"'B'"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0]}\n") + "---\nfoo: 1\n", {"document"});
  failsWith(smallGraph("                - \"Has Space\": {WCET: 1ms, Resources: [CPU0]}\n"), {"Has Space"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0], Dependencies: [NoDot]}\n"), {"NoDot"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0], Dependencies: [X.A]}\n"),
            {"unknown client", "'X'"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0], Dependencies: C.B}\n"),
            {"Dependencies", "a list"});
  failsWith(smallGraph("                - A: {WCET: [1ms], Resources: [CPU0]}\n"), {"WCET", "a scalar"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Deadline: 0, Resources: [CPU0]}\n"), {"Deadline", "unit"});
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0, CPU0]}\n"), {"CPU0", "twice"});
  failsWith(std::string(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0]}\n"))
                .insert(std::string("Version: 3.0.0\nG:\n").size(), "  Identifier: 99999999999999999999999\n"),
            {"Identifier", "out of range"});
  // a client-local resource used from two hyperepochs
  failsWith(
      "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0, CPU1]}\n  Hyperepochs:\n"
      "    - A: {Resources: [CPU0], Epochs: [{E: {Period: 1ms}}]}\n"
      "    - B: {Resources: [CPU1], Epochs: [{E: {Period: 1ms}}]}\n"
      "  Clients:\n    - C:\n        Resources: {LOCK: [L0]}\n        Epochs:\n"
      "          - A.E: {Runnables: [{X: {WCET: 1us, Resources: [CPU0, L0]}}]}\n"
      "          - B.E: {Runnables: [{Y: {WCET: 1us, Resources: [CPU1, L0]}}]}\n",
      {"C.Y", "L0", "'A'", "'B'"});
  // a round-robin member whose step names a runnable of another epoch
  failsWith(
      "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  Hyperepochs:\n"
      "    - H: {Period: 10ms, Epochs: [{E: {Period: 1ms}}, {F: {Period: 1ms}}]}\n"
      "  Clients:\n    - C:\n        Epochs:\n"
      "          - H.E: {Runnables: [{X: {WCET: 1us, Resources: [CPU0]}}]}\n"
      "          - H.F:\n              Runnables: [{Y: {WCET: 1us, Resources: [CPU0]}}]\n"
      "              AliasGroups: [{G: {Steps: [C.X, C.Y]}}]\n",
      {"C.X", "H.E", "H.F"});
  // a group of nothing but empty steps
  failsWith(smallGraph("                - A: {WCET: 1ms, Resources: [CPU0]}\n"
                       "              AliasGroups: [{Empty: {Steps: [None, None]}}]\n"),
            {"Empty", "no runnable"});
  // an anchor and an alias that would make a node contain itself
  failsWith("Version: 3.0.0\nG: &g\n  X: *g\n", {"contains"});
}

// ---------------------------------------------------------------------------------------------
// good graphs and the model mapping

TEST_CASE("every example graph in schedules/ parses", "[parser]") {
  for (const char* name :
       {"minimal_cpu.yaml", "two_client.yaml", "multi_rate.yaml", "cuda_two_client.yaml", "round_robin.yaml"}) {
    const std::string path = sourceRoot() + "/schedules/" + name;
    auto g = parseGraphFile(path);
    INFO(path << ": " << (g ? std::string() : g.error().message));
    REQUIRE(g.has_value());
    CHECK(g->sourceFile == path);
    CHECK(g->sourceHash == hashBytes(kHashSeed, readAll(path)));
    CHECK_FALSE(g->runnables.empty());
    for (const ResourceInfo& r : g->resources)
      if (r.kind == ResourceKind::kCpu) CHECK(r.core <= 1);  // the test machine has two cores
  }
}

TEST_CASE("the stm-model example maps onto the Graph as the scheduler expects", "[parser]") {
  auto parsed = parseGraphFile(fixture("stm_example.yaml"));
  INFO((parsed ? std::string() : parsed.error().message));
  REQUIRE(parsed.has_value());
  const Graph& g = *parsed;
  CHECK(g.version == "3.0.0");
  CHECK(g.name == "Drive");
  CHECK(g.identifier == 101);

  // resources: globals in file order, then client-local ones
  std::vector<std::string> names;
  for (const auto& r : g.resources) names.push_back(r.name);
  CHECK(names ==
        std::vector<std::string>{"CPU0", "CPU1", "CPU2", "GPU0", "GPU1", "MEM_BW_MUTEX", "CUDA_STREAM0", "LOCK0"});
  const auto& cpu2 = g.resources[2];
  CHECK((cpu2.kind == ResourceKind::kCpu && cpu2.core == 2 && cpu2.client == kNone &&
         cpu2.hyperepoch == HyperepochId{0}));
  CHECK(g.resources[3].kind == ResourceKind::kGpu);
  CHECK(g.resources[3].streamLimit == kNone);
  CHECK(g.resources[4].streamLimit == 8);
  CHECK(g.resources[4].hyperepoch == kNone);  // GPU1 is in no hyperepoch's list
  CHECK(g.resources[5].kind == ResourceKind::kMutex);
  CHECK(g.resources[5].type == "MUTEX");
  const auto& stream = g.resources[6];
  CHECK((stream.kind == ResourceKind::kCudaStream && stream.device == ResourceId{3} && stream.client == ClientId{0} &&
         stream.hyperepoch == HyperepochId{0}));
  CHECK((g.resources[7].kind == ResourceKind::kMutex && g.resources[7].client == ClientId{0} &&
         g.resources[7].type == "LOCAL_LOCK"));
  CHECK(g.resources[0].hyperepoch == HyperepochId{1});

  // hyperepochs and epochs
  REQUIRE(g.hyperepochs.size() == 2);
  CHECK(g.hyperepochs[0].periodNs == 100'000'000);
  CHECK(g.hyperepochs[0].monitorNs == 120'000'000);
  CHECK(g.hyperepochs[0].resources == ids<ResourceId>({1, 2, 3, 5, 6, 7}));
  CHECK(g.hyperepochs[0].epochs == ids<EpochId>({0, 1}));
  CHECK(g.hyperepochs[1].periodNs == 10'000'000);  // left out: the single epoch's period
  CHECK(g.hyperepochs[1].resources == ids<ResourceId>({0}));
  REQUIRE(g.epochs.size() == 3);
  CHECK((g.epochs[0].name == "Camera" && g.epochs[0].periodNs == 33'330'000 && g.epochs[0].frames == 3));
  CHECK((g.epochs[1].frames == 1 && g.epochs[2].hyperepoch == HyperepochId{1}));

  // runnables
  const auto readCamera = runnableIndex(g, "Client0", "ReadCamera");
  const auto pre = runnableIndex(g, "Client0", "PreProcess");
  const auto gpu = runnableIndex(g, "Client0", "PreProcessGpu");
  const auto post = runnableIndex(g, "Client0", "PostProcess");
  const auto& rc = g.runnables[readCamera];
  CHECK(rc.kind == RunnableKind::kCpu);
  CHECK(rc.wcetNs == 10'000);
  CHECK(rc.priority == 10);
  CHECK(rc.loc.line == 34);  // the line of `- ReadCamera:`
  REQUIRE(rc.resources.size() == 1);
  CHECK((rc.resources[0].isType && rc.resources[0].text == "CPU"));
  CHECK(rc.resources[0].candidates == ids<ResourceId>({1, 2}));  // CPU0 is Control's

  const auto& p = g.runnables[pre];
  CHECK(p.kind == RunnableKind::kSubmitter);
  CHECK(p.submits == gpu);
  CHECK(p.startTimeNs == 1'000'000);
  REQUIRE(p.resources.size() == 2);
  CHECK((!p.resources[0].isType && p.resources[0].candidates == ids<ResourceId>({1})));
  CHECK((p.resources[1].kind == ResourceKind::kCudaStream && p.resources[1].candidates == ids<ResourceId>({6})));
  CHECK(p.dependencies == std::vector<RunnableId>{readCamera});

  const auto& s = g.runnables[gpu];
  CHECK(s.kind == RunnableKind::kSubmittee);
  CHECK(s.submittedBy == pre);
  CHECK(s.deadlineNs == 30'000'000);
  CHECK(s.wcetNs == 5'000);
  REQUIRE(s.resources.size() == 1);  // no stream listed for a submittee
  CHECK(s.resources[0].candidates == ids<ResourceId>({3}));
  CHECK(s.dependencies == std::vector<RunnableId>{pre});  // the implicit submitter edge

  const auto& pp = g.runnables[post];
  CHECK(pp.priority == 1);
  CHECK(pp.endMonitorThresholdNs == 1'500'000);
  REQUIRE(pp.resources.size() == 2);
  CHECK(pp.resources[1].candidates == ids<ResourceId>({5}));
  CHECK(pp.dependencies == std::vector<RunnableId>{gpu});

  const auto vc = runnableIndex(g, "Client1", "VehicleControl");
  CHECK(g.runnables[vc].epoch == EpochId{2});
  CHECK(g.runnables[vc].client == ClientId{1});
  CHECK(g.runnables[runnableIndex(g, "Client1", "Actuate")].dependencies == std::vector<RunnableId>{vc});
}

TEST_CASE("the hardware request goes first and dependencies are sorted and deduplicated", "[parser]") {
  auto h = parseGraph(
      std::string(smallGraph("                - A: {WCET: 0, Resources: [CPU1]}\n"
                             "                - B: {WCET: 0, Resources: [CPU1]}\n"
                             "                - D:\n"
                             "                    WCET: 1ms\n"
                             "                    StartTime: 0\n"
                             "                    Resources: [M, CPU]\n"
                             "                    Dependencies: [C.B, C.A, C.B]\n"))
          .insert(std::string("Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0, CPU1]\n").size(), "    MUTEX: [M]\n"),
      "x.yaml");
  INFO((h ? std::string() : h.error().message));
  REQUIRE(h.has_value());
  const auto& d = h->runnables[2];
  REQUIRE(d.resources.size() == 2);
  CHECK(d.resources[0].kind == ResourceKind::kCpu);
  CHECK(d.resources[0].candidates == ids<ResourceId>({0, 1}));
  CHECK(d.resources[1].kind == ResourceKind::kMutex);
  CHECK(d.dependencies == ids<RunnableId>({0, 1}));
  CHECK(h->runnables[0].wcetNs == 0);
}

TEST_CASE("runnable references split at the first dot, so runnable names may hold dots", "[parser]") {
  auto g = parseGraph(smallGraph("                - cam.front.read: {WCET: 1ms, Resources: [CPU0]}\n"
                                 "                - cam.front.use:\n"
                                 "                    WCET: 1ms\n"
                                 "                    Resources: [CPU0]\n"
                                 "                    Dependencies: [C.cam.front.read]\n"),
                      "dots.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  CHECK(g->runnables[0].name == "cam.front.read");
  CHECK(g->runnables[1].dependencies == ids<RunnableId>({0}));
}

TEST_CASE("round-robin groups become runnables and take over their members' edges", "[parser]") {
  auto parsed = parseGraphFile(sourceRoot() + "/schedules/round_robin.yaml");
  INFO((parsed ? std::string() : parsed.error().message));
  REQUIRE(parsed.has_value());
  const Graph& g = *parsed;
  const auto sample = runnableIndex(g, "Worker", "Sample");
  const auto housekeeping = runnableIndex(g, "Worker", "Housekeeping");
  const auto heavy = runnableIndex(g, "Worker", "Heavy");
  const auto log = runnableIndex(g, "Worker", "Log");
  const auto calibA = runnableIndex(g, "Worker", "CalibA");
  const auto calibB = runnableIndex(g, "Worker", "CalibB");
  const auto& hk = g.runnables[housekeeping];
  CHECK(hk.kind == RunnableKind::kAliasGroup);
  REQUIRE(hk.steps.size() == 3);
  CHECK(hk.steps[0] == runnableIndex(g, "Worker", "Diag"));
  CHECK(hk.steps[2] == kNone);
  CHECK(hk.wcetNs == 2'000'000);  // the longest member
  CHECK(g.runnables[calibA].aliasGroup == heavy);
  CHECK(g.runnables[calibA].dependencies.empty());  // moved to the group
  CHECK(g.runnables[heavy].dependencies == std::vector<RunnableId>{sample});
  CHECK(g.runnables[log].dependencies == std::vector<RunnableId>{heavy});  // redirected
  CHECK(g.runnables[heavy].wcetNs == 3'000'000);
  CHECK(g.runnables[heavy].resources.size() == 1);
  CHECK(g.runnables[heavy].resources[0].candidates == g.runnables[calibB].resources[0].candidates);
}

TEST_CASE("a submittee's GPU candidates narrow to the devices of its submitter's streams", "[parser]") {
  const std::string yaml =
      "Version: 2.0.0\nG:\n  Resources:\n    CPU: [CPU0]\n    GPU: [GPU0, GPU1]\n"
      "  Hyperepochs:\n    - H: {Epochs: [{E: {Period: 10ms}}]}\n"
      "  Clients:\n    - C:\n        Resources: {CUDA_STREAM: [{S1: GPU1}]}\n        Epochs:\n"
      "          - H.E:\n              Runnables:\n"
      "                - Sub: {WCET: 1us, Resources: [CPU0, CUDA_STREAM], Submits: C.Work}\n"
      "                - Work: {WCET: 1us, Resources: [GPU]}\n";
  auto g = parseGraph(yaml, "narrow.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  CHECK(g->runnables[1].resources[0].candidates == ids<ResourceId>({2}));  // GPU1 only
  CHECK(g->runnables[1].dependencies == ids<RunnableId>({0}));
  CHECK(g->resources[3].device == ResourceId{2});
}

TEST_CASE("a submitter depends only on what the graph says, its GPU work on its predecessors anywhere",
          "[parser][gpu]") {
  // A.Sub submits A.Gpu; B.Sub submits B.Gpu which waits for A.Gpu (GPU) and A.Cpu (CPU).
  const std::string yaml =
      "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0, CPU1]\n    GPU: [GPU0]\n"
      "  Hyperepochs:\n    - H: {Epochs: [{E: {Period: 10ms}}]}\n"
      "  Clients:\n"
      "    - A:\n        Resources: {CUDA_STREAM: [{SA: GPU0}]}\n        Epochs:\n"
      "          - H.E:\n              Runnables:\n"
      "                - Sub: {WCET: 1us, Resources: [CPU0, CUDA_STREAM], Submits: A.Gpu}\n"
      "                - Gpu: {WCET: 5us, Resources: [GPU]}\n"
      "                - Cpu: {WCET: 5us, Resources: [CPU0]}\n"
      "    - B:\n        Resources: {CUDA_STREAM: [{SB: GPU0}]}\n        Epochs:\n"
      "          - H.E:\n              Runnables:\n"
      "                - Sub: {WCET: 1us, Resources: [CPU1, CUDA_STREAM], Submits: B.Gpu}\n"
      "                - Gpu: {WCET: 5us, Resources: [GPU], Dependencies: [A.Gpu, A.Cpu]}\n";
  auto g = parseGraph(yaml, "order.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  const auto aSub = runnableIndex(*g, "A", "Sub"), aCpu = runnableIndex(*g, "A", "Cpu"),
             aGpu = runnableIndex(*g, "A", "Gpu");
  const auto bSub = runnableIndex(*g, "B", "Sub"), bGpu = runnableIndex(*g, "B", "Gpu");
  CHECK(g->runnables[bSub].dependencies.empty());
  std::vector<RunnableId> want{aGpu, aCpu, bSub};
  std::sort(want.begin(), want.end());
  CHECK(g->runnables[bGpu].dependencies == want);
  CHECK(g->runnables[aSub].dependencies.empty());

  // The old implicit rule saw a cycle here (A.Sub after B.Sub after A.Gpu's submitter); the
  // streams wait on the GPU instead, so it compiles.
  std::string crossed = yaml;
  crossed.replace(crossed.find("- Sub: {WCET: 1us, Resources: [CPU0, CUDA_STREAM], Submits: A.Gpu}"),
                  std::string("- Sub: {WCET: 1us, Resources: [CPU0, CUDA_STREAM], Submits: A.Gpu}").size(),
                  "- Sub: {WCET: 1us, Resources: [CPU0, CUDA_STREAM], Submits: A.Gpu, Dependencies: [B.Sub]}");
  auto ok = parseGraph(crossed, "crossed.yaml");
  INFO((ok ? std::string() : ok.error().message));
  CHECK(ok.has_value());
}

TEST_CASE("STM's shipped two-process GPU sample compiles", "[parser][gpu]") {
  auto g = parseGraphFile(sourceRoot() + "/schedules/stm_two_process_gpu.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  const auto ySubmit = runnableIndex(*g, "clientGpuY", "submit");
  CHECK(g->runnables[ySubmit].dependencies.empty());
}

TEST_CASE("two submitters of one stream get one submission order, work following work", "[parser][gpu]") {
  // S1 and S2 share stream S; W1 waits for W2, so S2 must submit first: the compiler orders the
  // pairs that way (S1 after S2, W1 after W2) and adds nothing else.
  const std::string yaml =
      "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0, CPU1]\n    GPU: [GPU0]\n"
      "  Hyperepochs:\n    - H: {Epochs: [{E: {Period: 10ms}}]}\n"
      "  Clients:\n"
      "    - C:\n        Resources: {CUDA_STREAM: [{S: GPU0}]}\n        Epochs:\n"
      "          - H.E:\n              Runnables:\n"
      "                - S1: {WCET: 1us, Resources: [CPU0, S], Submits: C.W1}\n"
      "                - W1: {WCET: 5us, Resources: [GPU], Dependencies: [C.W2]}\n"
      "                - S2: {WCET: 1us, Resources: [CPU1, S], Submits: C.W2}\n"
      "                - W2: {WCET: 5us, Resources: [GPU]}\n";
  auto g = parseGraph(yaml, "shared.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  const auto s1 = runnableIndex(*g, "C", "S1"), s2 = runnableIndex(*g, "C", "S2");
  const auto w1 = runnableIndex(*g, "C", "W1"), w2 = runnableIndex(*g, "C", "W2");
  CHECK(g->runnables[s1].dependencies == std::vector<RunnableId>{s2});
  CHECK(g->runnables[s2].dependencies.empty());
  std::vector<RunnableId> want{s1, w2};
  std::sort(want.begin(), want.end());
  CHECK(g->runnables[w1].dependencies == want);
}

TEST_CASE("stream order plus a dependency that would deadlock is refused, naming the cycle", "[parser][gpu]") {
  // S2 depends on S1, so S1 submits first on the shared stream S and W1 runs before W2; but W1
  // waits for W2: W1 would wait for work queued behind it.
  const std::string yaml =
      "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0]\n    GPU: [GPU0]\n"
      "  Hyperepochs:\n    - H: {Epochs: [{E: {Period: 10ms}}]}\n"
      "  Clients:\n"
      "    - C:\n        Resources: {CUDA_STREAM: [{S: GPU0}]}\n        Epochs:\n"
      "          - H.E:\n              Runnables:\n"
      "                - S1: {WCET: 1us, Resources: [CPU0, S], Submits: C.W1}\n"
      "                - W1: {WCET: 5us, Resources: [GPU], Dependencies: [C.W2]}\n"
      "                - S2: {WCET: 1us, Resources: [CPU0, S], Submits: C.W2, Dependencies: [C.S1]}\n"
      "                - W2: {WCET: 5us, Resources: [GPU]}\n";
  auto g = parseGraph(yaml, "deadlock.yaml");
  REQUIRE_FALSE(g.has_value());
  CHECK(g.error().code == ErrorCode::kValidation);
  CHECK(g.error().message ==
        "deadlock.yaml:17: GPU wait cycle through stream 'S': 'C.S1' -> 'C.S2' and 'C.W2' -> 'C.W1'; "
        "'C.S1' and "
        "'C.S2' share the stream, which runs work in submission order, so one of 'C.W1' and 'C.W2' would wait "
        "for work queued behind it");
}

// ---------------------------------------------------------------------------------------------
// WCET side files

TEST_CASE("a WCET side file overrides WCETs and changes the source hash", "[parser]") {
  auto parsed = parseGraphFile(sourceRoot() + "/schedules/round_robin.yaml");
  REQUIRE(parsed.has_value());
  Graph g = *parsed;
  const std::uint64_t before = g.sourceHash;
  const std::string side = "Worker.CalibB: 7000000\nWorker.Sample: 12us\n";
  auto ok = applyWcetFile(g, side, "wcet.yaml");
  INFO((ok ? std::string() : ok.error().message));
  REQUIRE(ok.has_value());
  CHECK(g.runnables[runnableIndex(g, "Worker", "CalibB")].wcetNs == 7'000'000);
  CHECK(g.runnables[runnableIndex(g, "Worker", "Sample")].wcetNs == 12'000);
  CHECK(g.runnables[runnableIndex(g, "Worker", "Heavy")].wcetNs == 7'000'000);  // the group follows
  CHECK(g.sourceHash == hashBytes(before, side));
  CHECK(g.sourceHash != before);
}

TEST_CASE("a WCET side file with an unknown runnable or a bad value fails and changes nothing", "[parser]") {
  auto parsed = parseGraphFile(sourceRoot() + "/schedules/minimal_cpu.yaml");
  REQUIRE(parsed.has_value());
  Graph g = *parsed;
  const Graph original = g;
  auto unknown = applyWcetFile(g, "Pipeline.Read: 1000\nPipeline.Nope: 5\n", "w.yaml");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.rfind("w.yaml:2: ", 0) == 0);
  CHECK(unknown.error().message.find("Pipeline.Nope") != std::string::npos);
  CHECK(g.runnables[0].wcetNs == original.runnables[0].wcetNs);
  CHECK(g.sourceHash == original.sourceHash);

  for (const char* bad : {"Pipeline.Read: -5\n", "Pipeline.Read: fast\n", "Pipeline.Read: [1]\n", "- Pipeline.Read\n",
                          "Pipeline.Read: 1\nPipeline.Read: 2\n", "Pipeline.Read: {a: 1}\n",
                          "Pipeline.Read: 1\n---\nx: 1\n", "Pipeline.Read: [\n"}) {
    INFO(bad);
    auto r = applyWcetFile(g, bad, "w.yaml");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.rfind("w.yaml:", 0) == 0);
  }
  CHECK(applyWcetFile(g, "", "empty.yaml").has_value());
  CHECK(applyWcetFileFromPath(g, "/nonexistent/wcet.yaml").error().code == ErrorCode::kIo);
}

// ---------------------------------------------------------------------------------------------
// robustness and scale

TEST_CASE("parseGraph survives random bytes, truncations and deep nesting", "[parser]") {
  std::vector<std::string> samples;
  for (const char* name :
       {"minimal_cpu.yaml", "two_client.yaml", "multi_rate.yaml", "cuda_two_client.yaml", "round_robin.yaml"})
    samples.push_back(readAll(sourceRoot() + "/schedules/" + name));
  samples.push_back(readAll(fixture("stm_example.yaml")));
  std::mt19937_64 rng(12345);
  int failures = 0;
  // every truncation of every sample: must return (mostly errors), never crash or throw
  for (const std::string& s : samples) {
    for (std::size_t cut = 0; cut < s.size(); cut += 7) {
      auto g = parseGraph(std::string_view(s).substr(0, cut), "cut.yaml");
      if (!g) {
        ++failures;
        CHECK(g.error().message.rfind("cut.yaml", 0) == 0);
      }
    }
  }
  CHECK(failures > 0);
  // random bytes, and samples with random bytes flipped
  for (int i = 0; i < 400; ++i) {
    std::string junk(rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    CHECK_FALSE(parseGraph(junk, "junk.yaml").has_value());
    std::string mutated = samples[i % samples.size()];
    for (int k = 0; k < 4; ++k) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    auto g = parseGraph(mutated, "mutated.yaml");
    if (!g) CHECK(!g.error().message.empty());
  }
  // deep nesting, flow and block, and huge numbers
  auto deepFlow = std::string(100000, '[') + std::string(100000, ']');
  auto r1 = parseGraph(deepFlow, "deep.yaml");
  REQUIRE_FALSE(r1.has_value());
  CHECK(r1.error().message.find("nested deeper") != std::string::npos);
  std::string deepBlock;
  for (int i = 0; i < 3000; ++i) deepBlock += "- ";
  deepBlock += "x\n";
  CHECK_FALSE(parseGraph(deepBlock, "deep.yaml").has_value());
  std::string deepMap;
  for (int i = 0; i < 3000; ++i) deepMap += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  CHECK_FALSE(parseGraph(deepMap, "deep.yaml").has_value());
  CHECK_FALSE(parseGraph(smallGraph("                - A: {WCET: 99999999999999999999999999ms, Resources: [CPU0]}\n"),
                         "big.yaml")
                  .has_value());
}

TEST_CASE("parseGraph handles a hundred thousand runnables in linear time", "[parser]") {
  auto build = [](int n) {
    std::string yaml = smallGraph("");
    yaml.reserve(yaml.size() + static_cast<std::size_t>(n) * 80);
    for (int i = 0; i < n; ++i) {
      yaml += "                - R" + std::to_string(i) + ": {WCET: 1us, Resources: [CPU]";
      if (i > 0) yaml += ", Dependencies: [C.R" + std::to_string(i - 1) + "]";
      yaml += "}\n";
    }
    return yaml;
  };
  auto timeOf = [](const std::string& yaml, std::size_t expected) {
    auto t0 = std::chrono::steady_clock::now();
    auto g = parseGraph(yaml, "big.yaml");
    auto t1 = std::chrono::steady_clock::now();
    REQUIRE(g.has_value());
    CHECK(g->runnables.size() == expected);
    return std::chrono::duration<double>(t1 - t0).count();
  };
  const double small = timeOf(build(10000), 10000);
  const double large = timeOf(build(100000), 100000);
  // Ten times the runnables must not cost a hundred times the time (quadratic behaviour). A ratio
  // measured in one run, no absolute bound: ASan at -O0 on a loaded machine takes 18 s here.
  CHECK(large < 40.0 * small + 0.5);
}
