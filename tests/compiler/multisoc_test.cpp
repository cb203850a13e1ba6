// Unit tests of the multi-SoC graph form (the SOC list): names, SoCs of clients and resources,
// the per-SoC rules with their located messages, the cross-SoC latency in the schedule, and the
// SoC fields of the schedule file and its verifier.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "graph_parser.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using namespace tactus::compiler;

namespace {

constexpr std::int64_t kUs = 1000;

// Two SoCs: Sensor (SocA) -> Planner (SocB) -> Sensor.Fuse (SocA). `sensorExtra` goes under the
// Sensor client (after its SOC key); `planRes` is Plan's resource list; `fuseRes` is Fuse's.
std::string twoSoc(const std::string& sensorExtra = "", const std::string& planRes = "[CPU0, LOG_MUTEX]",
                   const std::string& fuseRes = "[CPU]", const std::string& sensorSoc = "SocA") {
  return "Version: 3.0.0\n"
         "TwoSoc:\n"
         "  Identifier: 12\n"
         "  SOC:\n"
         "    - SocA:\n"
         "        Resources:\n"
         "          CPU: [CPU0, CPU1]\n"
         "          GPU: [dGPU]\n"
         "    - SocB:\n"
         "        Resources:\n"
         "          CPU: [CPU0]\n"
         "          MUTEX: [LOG_MUTEX]\n"
         "          GPU: [iGPU]\n"
         "  Hyperepochs:\n"
         "    - Main:\n"
         "        Epochs:\n"
         "          - Frame: {Period: 10ms}\n"
         "  Clients:\n"
         "    - Sensor:\n"
         "        SOC: " +
         sensorSoc + "\n" + sensorExtra +
         "        Epochs:\n"
         "          - Main.Frame:\n"
         "              Runnables:\n"
         "                - Capture: {WCET: 500us, Resources: [SocA.CPU0]}\n"
         "                - Fuse: {WCET: 300us, Resources: " +
         fuseRes +
         ", Dependencies: [Planner.Plan]}\n"
         "    - Planner:\n"
         "        SOC: SocB\n"
         "        Epochs:\n"
         "          - Main.Frame:\n"
         "              Runnables:\n"
         "                - Plan: {WCET: 1ms, Resources: " +
         planRes + ", Dependencies: [Sensor.Capture]}\n";
}

// `yaml` (a twoSoc graph) with a CrossSocLatency list of `entries` (lines `    - {...}`) under the
// graph id, after the SOC list: the list key on line 14, its entries from line 15.
std::string withLatencies(std::string yaml, const std::string& entries) {
  const auto at = yaml.find("  Hyperepochs:\n");
  REQUIRE(at != std::string::npos);
  return yaml.insert(at, "  CrossSocLatency:\n" + entries);
}

std::string errorOf(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  if (g) return "(parsed)";
  return g.error().message;
}

Schedule compiled(const std::string& yaml, std::int64_t latencyNs) {
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE(g.has_value());
  g->crossSocLatencyNs = latencyNs;
  auto s = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(s.has_value());
  return std::move(*s);
}

std::uint32_t instanceOf(const Schedule& s, const std::string& name) {
  for (std::uint32_t i = 0; i < s.instances.size(); ++i)
    if (qualifiedName(s, s.instances[i].runnable) == name) return i;
  FAIL("no instance of " << name);
  return kNone;
}

}  // namespace

TEST_CASE("the SOC form: SoC-qualified resources, each client and resource on its SoC", "[multisoc]") {
  auto g = parseGraph(twoSoc(), "g.yaml");
  REQUIRE(g.has_value());
  REQUIRE(g->socs.size() == 2);
  CHECK(g->socs[0].name == "SocA");
  CHECK(g->socs[1].name == "SocB");
  REQUIRE(g->clients.size() == 2);
  CHECK(g->clients[0].soc == 0);
  CHECK(g->clients[1].soc == 1);
  REQUIRE(g->resources.size() == 6);
  CHECK(g->resources[0].name == "SocA.CPU0");
  CHECK(g->resources[0].core == 0);
  CHECK(g->resources[0].soc == 0);
  CHECK(g->resources[3].name == "SocB.CPU0");
  CHECK(g->resources[3].core == 0);
  CHECK(g->resources[3].soc == 1);
  // Fuse asked for the type CPU: only SocA's CPUs are candidates.
  const GraphRunnable& fuse = g->runnables[1];
  REQUIRE(fuse.name == "Fuse");
  CHECK(fuse.resources[0].candidates == std::vector<ResourceId>{ResourceId{0}, ResourceId{1}});
  // Plan wrote CPU0 and LOG_MUTEX unqualified: its own SoC's.
  const GraphRunnable& plan = g->runnables[2];
  CHECK(plan.resources[0].candidates == std::vector<ResourceId>{ResourceId{3}});
  CHECK(plan.resources[1].candidates == std::vector<ResourceId>{ResourceId{4}});
}

TEST_CASE("the SOC form: client-local streams on the client's SoC, written <client>.<Soc>.<name>", "[multisoc]") {
  const std::string streams = "        Resources:\n          CUDA_STREAM:\n            - S0: dGPU\n";
  auto g = parseGraph(twoSoc(streams, "[CPU0]", "[CPU1, Sensor.SocA.S0]"), "g.yaml");
  REQUIRE(g.has_value());
  const GraphRunnable& fuse = g->runnables[1];
  REQUIRE(fuse.resources.size() == 2);
  const ResourceInfo& s0 = g->resources[fuse.resources[1].candidates.at(0)];
  CHECK(s0.name == "S0");
  CHECK(s0.soc == 0);
  CHECK(g->resources[s0.device].name == "SocA.dGPU");

  // The stream's GPU on another SoC.
  CHECK(errorOf(twoSoc("        Resources:\n          CUDA_STREAM:\n            - S0: SocB.iGPU\n")) ==
        "g.yaml:23: CUDA stream 'S0' of client 'Sensor' maps to GPU 'SocB.iGPU' of SoC 'SocB', but the client "
        "runs on SoC 'SocA'");
  // <client>.<Soc>.<name> with the wrong SoC, another client, an unknown SoC.
  CHECK(errorOf(twoSoc(streams, "[CPU0]", "[CPU1, Sensor.SocB.S0]")) ==
        "g.yaml:28: runnable 'Sensor.Fuse' uses resource 'Sensor.SocB.S0' of SoC 'SocB', but its client 'Sensor' "
        "runs on SoC 'SocA'");
  CHECK(errorOf(twoSoc(streams, "[CPU0, Sensor.SocA.S0]")) ==
        "g.yaml:34: runnable 'Planner.Plan' uses resource 'Sensor.SocA.S0' of client 'Sensor', which only that "
        "client sees");
  CHECK(errorOf(twoSoc(streams, "[CPU0]", "[CPU1, Sensor.SocZ.S0]")) ==
        "g.yaml:28: runnable 'Sensor.Fuse' uses resource 'Sensor.SocZ.S0' of unknown SoC 'SocZ'");
}

TEST_CASE("the SOC form: located messages for unknown SoCs and resources of another SoC", "[multisoc]") {
  CHECK(errorOf(twoSoc("", "[CPU0, LOG_MUTEX]", "[CPU]", "SocC")) ==
        "g.yaml:20: client 'Sensor' names unknown SoC 'SocC' (declared: 'SocA', 'SocB')");
  // A runnable of SocB's client on a SocA resource (its resources would span two SoCs).
  CHECK(errorOf(twoSoc("", "[SocA.CPU1, LOG_MUTEX]")) ==
        "g.yaml:31: runnable 'Planner.Plan' uses resource 'SocA.CPU1' of SoC 'SocA', but its client 'Planner' runs "
        "on SoC 'SocB' (a runnable's resources are on its client's SoC)");
  CHECK(errorOf(twoSoc("", "[CPU0, SocB.LOG_MUTEX]", "[CPU0, SocB.LOG_MUTEX]")) ==
        "g.yaml:25: runnable 'Sensor.Fuse' uses resource 'SocB.LOG_MUTEX' of SoC 'SocB', but its client 'Sensor' runs "
        "on SoC 'SocA' (a runnable's resources are on its client's SoC)");
  CHECK(errorOf(twoSoc("", "[SocX.CPU0]")) ==
        "g.yaml:31: runnable 'Planner.Plan' uses resource 'SocX.CPU0' of unknown SoC 'SocX'");
  // A type with no instance on the client's SoC (MUTEX is on SocB only).
  CHECK(errorOf(twoSoc("", "[CPU0]", "[CPU, MUTEX]")) ==
        "g.yaml:25: runnable 'Sensor.Fuse' requests type 'MUTEX', but no resource of that type is in hyperepoch "
        "'Main' on its client's SoC 'SocA' or local to its client");
  // A client without SOC in a multi-SoC graph; SOC in a graph without the SOC list.
  std::string noSoc = twoSoc();
  noSoc.replace(noSoc.find("        SOC: SocB\n"), 18, "");
  CHECK(errorOf(noSoc) == "g.yaml:26: client 'Planner' has no SOC (every client of a multi-SoC graph names its SoC)");
  CHECK(errorOf("Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  Hyperepochs:\n    - H:\n        Epochs:\n"
                "          - E: {Period: 10ms}\n  Clients:\n    - C:\n        SOC: SocA\n") ==
        "g.yaml:10: client 'C' names SoC 'SocA', but the graph declares no SOC list");
  std::string dup = twoSoc();
  dup.replace(dup.find("    - SocB:"), 11, "    - SocA:");
  CHECK(errorOf(dup) == "g.yaml:9: duplicate SoC 'SocA'");
  // A client-local resource named like a global of its SoC (`LOG_MUTEX` would name both).
  std::string clash = twoSoc();
  clash.replace(clash.find("        SOC: SocB\n"), 18, "        SOC: SocB\n        Resources: {LOCK: [LOG_MUTEX]}\n");
  CHECK(errorOf(clash) == "g.yaml:28: client 'Planner' resource 'LOG_MUTEX' has the name of a global resource");
}

TEST_CASE("a dependency across SoCs adds the cross-SoC latency before its successor", "[multisoc]") {
  const Schedule none = compiled(twoSoc(), 0);
  CHECK(none.instances[instanceOf(none, "Planner.Plan")].startNs ==
        none.instances[instanceOf(none, "Sensor.Capture")].endNs);
  const Schedule s = compiled(twoSoc(), 200 * kUs);
  const InstanceInfo& capture = s.instances[instanceOf(s, "Sensor.Capture")];
  const InstanceInfo& plan = s.instances[instanceOf(s, "Planner.Plan")];
  const InstanceInfo& fuse = s.instances[instanceOf(s, "Sensor.Fuse")];
  CHECK(plan.startNs == capture.endNs + 200 * kUs);
  CHECK(fuse.startNs == plan.endNs + 200 * kUs);
  CHECK(s.crossSocLatencyNs == 200 * kUs);
  CHECK(verifySchedule(s, {}).ok());

  // The file: format 2 with the SoCs, read back the same; the verifier holds the latency.
  const std::string text = writeSchedule(s);
  CHECK(text.rfind("tactus-schedule 2\n", 0) == 0);
  CHECK(text.find("\nsoc id=1 name=SocB\n") != std::string::npos);
  auto back = readSchedule(text, "two.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  CHECK(back->clients[1].soc == 1);
  CHECK(back->resources[3].soc == 1);
  Schedule early = *back;
  early.instances[instanceOf(early, "Planner.Plan")].startNs -= 1;
  early.instances[instanceOf(early, "Planner.Plan")].endNs -= 1;
  VerifyReport r = verifySchedule(early, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors.at(0).find("plus the cross-SoC latency 200us") != std::string::npos);
  // An instance on a resource of another SoC than its client's.
  Schedule wrong = *back;
  wrong.resources[0].soc = 1;
  r = verifySchedule(wrong, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors.at(0) ==
        "runnable 'Sensor.Capture' frame 0 holds resource 'SocA.CPU0' of another SoC than its client's");
}

TEST_CASE("the report lists the cross-SoC edges and their transfer time on the critical path", "[multisoc]") {
  auto g = parseGraph(twoSoc(), "g.yaml");
  REQUIRE(g.has_value());
  g->crossSocLatencyNs = 200 * kUs;
  auto s = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(s.has_value());
  const CompileReport report = buildReport(*g, *s, nullptr);
  REQUIRE(report.hyperepochs.size() == 1);
  const HyperepochReport& h = report.hyperepochs[0];
  CHECK(h.crossSocEdges == std::vector<std::string>{"Sensor.Capture -> Planner.Plan (SocA -> SocB)",
                                                    "Planner.Plan -> Sensor.Fuse (SocB -> SocA)"});
  // 500us + 200us + 1ms + 200us + 300us: both transfers lie on the critical path.
  CHECK(h.criticalPathNs == 2200 * kUs);
  CHECK(h.crossSocCriticalNs == 400 * kUs);
  CHECK(h.lowerBoundNs == 2200 * kUs);
  CHECK(reportText(report).find("cross-SoC edges   2 (transfers 400us of the critical path, 18.2%)") !=
        std::string::npos);
}

TEST_CASE("a schedule of one machine is still written as format 1 and carries no SoC", "[multisoc]") {
  const std::string one =
      "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  Hyperepochs:\n    - H:\n        Epochs:\n"
      "          - E: {Period: 10ms}\n  Clients:\n    - C:\n        Epochs:\n          - H.E:\n"
      "              Runnables:\n                - A: {WCET: 1ms, Resources: [CPU0]}\n";
  const Schedule s = compiled(one, 200 * kUs);
  CHECK(s.socs.empty());
  CHECK(s.crossSocLatencyNs == 0);
  const std::string text = writeSchedule(s);
  CHECK(text.rfind("tactus-schedule 1\n", 0) == 0);
  CHECK(text.find("soc") == std::string::npos);
  // A SoC field in a schedule without SoCs is refused.
  Schedule bad = s;
  bad.clients[0].soc = 0;
  CHECK_FALSE(verifySchedule(bad, {}).ok());
}

TEST_CASE("a CrossSocLatency entry gives its SoC pair a transfer time of its own, which moves the placement",
          "[multisoc]") {
  // SocA -> SocB: 50us of its own; SocB -> SocA: the default of --cross-soc-latency (200us).
  const std::string yaml = withLatencies(twoSoc(), "    - {From: SocA, To: SocB, Latency: 50us}\n");
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE(g.has_value());
  REQUIRE(g->socLatencies.size() == 1);
  CHECK(g->socLatencies[0].from == 0);
  CHECK(g->socLatencies[0].to == 1);
  CHECK(g->socLatencies[0].latencyNs == 50 * kUs);
  const Schedule s = compiled(yaml, 200 * kUs);
  const InstanceInfo& capture = s.instances[instanceOf(s, "Sensor.Capture")];
  const InstanceInfo& plan = s.instances[instanceOf(s, "Planner.Plan")];
  const InstanceInfo& fuse = s.instances[instanceOf(s, "Sensor.Fuse")];
  CHECK(plan.startNs == capture.endNs + 50 * kUs);  // 150us earlier than with the default alone
  CHECK(fuse.startNs == plan.endNs + 200 * kUs);
  CHECK(verifySchedule(s, {}).ok());
  // A pair of its own above the default: later than the default would place it.
  const Schedule slow = compiled(withLatencies(twoSoc(), "    - {From: SocB, To: SocA, Latency: 1ms}\n"), 200 * kUs);
  CHECK(slow.instances[instanceOf(slow, "Planner.Plan")].startNs ==
        slow.instances[instanceOf(slow, "Sensor.Capture")].endNs + 200 * kUs);
  CHECK(slow.instances[instanceOf(slow, "Sensor.Fuse")].startNs ==
        slow.instances[instanceOf(slow, "Planner.Plan")].endNs + 1000 * kUs);

  // The report's critical path takes each pair's own transfer time: 500 + 50 + 1000 + 200 + 300 us.
  auto graph = parseGraph(yaml, "g.yaml");
  REQUIRE(graph.has_value());
  graph->crossSocLatencyNs = 200 * kUs;
  const CompileReport report = buildReport(*graph, s, nullptr);
  REQUIRE(report.hyperepochs.size() == 1);
  CHECK(report.hyperepochs[0].criticalPathNs == 2050 * kUs);
  CHECK(report.hyperepochs[0].crossSocCriticalNs == 250 * kUs);

  // The file: one soc_latency record, read back the same.
  const std::string text = writeSchedule(s);
  CHECK(text.find("cross_soc_latency_ns=200000\nsoc id=0 name=SocA\nsoc id=1 name=SocB\n"
                  "soc_latency from=0 to=1 latency_ns=50000\nclient id=0 ") != std::string::npos);
  auto back = readSchedule(text, "two.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  CHECK(back->socLatencies.size() == 1);
  CHECK(verifySchedule(*back, {}).ok());

  // The verifier holds the pair's latency: Plan 1 ns too early for SocA -> SocB's 50us is refused,
  // though the default (200us) is not what it checks there.
  Schedule early = *back;
  early.instances[instanceOf(early, "Planner.Plan")].startNs -= 1;
  early.instances[instanceOf(early, "Planner.Plan")].endNs -= 1;
  VerifyReport r = verifySchedule(early, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors.at(0) ==
        "runnable 'Planner.Plan' frame 0 starts at 549.999us before its dependency runnable 'Sensor.Capture' frame 0 "
        "ends at 500us plus the cross-SoC latency 50us from SoC 'SocA' to SoC 'SocB'");
  // The schedule compiled with the default alone, checked against a pair latency above it.
  Schedule tight = compiled(twoSoc(), 200 * kUs);
  tight.socLatencies = {{1, 0, 300 * kUs}};
  r = verifySchedule(tight, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors.at(0).find("plus the cross-SoC latency 300us from SoC 'SocB' to SoC 'SocA'") != std::string::npos);
  // Pair latencies the verifier refuses in a schedule built in code.
  for (const auto& [pairs, message] : std::vector<std::pair<std::vector<SocLatency>, std::string>>{
           {{{0, 2, 0}}, "the latency from SoC 'SocA' to SoC 2 names a SoC that does not exist"},
           {{{1, 1, 0}}, "the latency from SoC 'SocB' to SoC 'SocB' joins a SoC to itself"},
           {{{1, 0, 0}, {0, 1, 0}},
            "the latency from SoC 'SocA' to SoC 'SocB' is out of order or given twice (ascending by from, then to, "
            "each pair once)"},
           {{{0, 1, -5}}, "the latency from SoC 0 to SoC 1: its transfer time is -5 ns, outside 0..1000s"}}) {
    Schedule bad = *back;
    bad.socLatencies = pairs;
    r = verifySchedule(bad, {});
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors.at(0) == message);
  }
}

TEST_CASE("CrossSocLatency entries are refused with located messages", "[multisoc]") {
  auto entry = [](const std::string& e) { return errorOf(withLatencies(twoSoc(), "    - " + e + "\n")); };
  CHECK(entry("{From: SocA, To: SocC, Latency: 50us}") ==
        "g.yaml:15: CrossSocLatency To names unknown SoC 'SocC' (declared: 'SocA', 'SocB')");
  CHECK(entry("{From: SocX, To: SocB, Latency: 50us}") ==
        "g.yaml:15: CrossSocLatency From names unknown SoC 'SocX' (declared: 'SocA', 'SocB')");
  CHECK(entry("{From: SocA, To: SocB, Latency: 50}") ==
        "g.yaml:15: the CrossSocLatency from SoC 'SocA' to SoC 'SocB': bad duration '50': missing unit (ns, us, ms "
        "or s)");
  const std::string negative = entry("{From: SocA, To: SocB, Latency: -5us}");
  CHECK(negative.rfind("g.yaml:15: the CrossSocLatency from SoC 'SocA' to SoC 'SocB': ", 0) == 0);
  CHECK(entry("{From: SocA, To: SocA, Latency: 50us}") ==
        "g.yaml:15: CrossSocLatency from SoC 'SocA' to SoC 'SocA': a dependency within one SoC has no transfer time");
  CHECK(entry("{From: SocA, Latency: 50us}") ==
        "g.yaml:15: a CrossSocLatency entry has no To (write {From: SocA, To: SocB, Latency: 150us})");
  CHECK(entry("{From: SocA, To: SocB, Latency: 50us, Via: eth0}") ==
        "g.yaml:15: unknown key 'Via' in a CrossSocLatency entry (allowed: From, To, Latency)");
  CHECK(errorOf(withLatencies(twoSoc(),
                              "    - {From: SocA, To: SocB, Latency: 50us}\n"
                              "    - {From: SocB, To: SocA, Latency: 50us}\n"
                              "    - {From: SocA, To: SocB, Latency: 80us}\n")) ==
        "g.yaml:17: CrossSocLatency from SoC 'SocA' to SoC 'SocB' is given twice (first at line 15)");
  CHECK(errorOf(withLatencies(twoSoc(), "    From: SocA\n")) == "g.yaml:14: CrossSocLatency must be a list, not a map");
  // A graph of one machine has no SoC pairs.
  CHECK(
      errorOf("Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  CrossSocLatency: []\n  Hyperepochs:\n"
              "    - H:\n        Epochs:\n          - E: {Period: 10ms}\n  Clients:\n    - C:\n        Epochs: []\n") ==
      "g.yaml:4: graph 'G' gives a CrossSocLatency, but declares no SOC list");
}
