// DLA and VPU (PVA) engines (issue 26): a DLA handle and a PVA stream are engine queues with a CUDA
// stream's rules. The submitter holds its CPU and the queue while it submits; the work runs on the
// queue's engine after it, FIFO per queue, and the cores go on meanwhile. A submitter of DLA work
// holds a DLA_HANDLE (of VPU work a PVA_STREAM), and the schedule file records the new kinds in
// format version 5 only.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "graph_parser.hpp"
#include "scheduler_test_support.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::compiler;
using namespace tactus::compiler::test;

namespace {

// One client `C` with two submitters on the same queue `Q` (SubA before SubB, by dependency) and a
// CPU runnable after SubB:
//   SubA (1 ms, CPU0 + Q) --submits--> WorkA (4 ms, on the engine)
//   SubB (1 ms, CPU0 + Q) --submits--> WorkB (2 ms, on the engine), SubB after SubA
//   Busy (3 ms, CPU0) after SubB
// `engine` is DLA or VPU, `queue` DLA_HANDLE or PVA_STREAM; WorkA requests the type, WorkB the
// instance, SubA the queue's type, SubB its name.
std::string engineGraph(const std::string& engine, const std::string& queue) {
  return "Version: 3.0.0\n"
         "g:\n"
         "  Identifier: 1\n"
         "  Resources:\n"
         "    CPU: [CPU0]\n"
         "    " +
         engine + ": [" + engine + "0]\n" +
         "  Hyperepochs:\n"
         "    - H:\n"
         "        Epochs:\n"
         "          - E: {Period: 100ms}\n"
         "  Clients:\n"
         "    - C:\n"
         "        Resources:\n"
         "          " +
         queue + ":\n" + "            - Q: " + engine + "0\n" +
         "        Epochs:\n"
         "          - H.E:\n"
         "              Runnables:\n"
         "                - SubA: {WCET: 1ms, Resources: [CPU0, " +
         queue + "], Submits: C.WorkA}\n" + "                - WorkA: {WCET: 4ms, Resources: [" + engine + "]}\n" +
         "                - SubB: {WCET: 1ms, Resources: [CPU0, Q], Submits: C.WorkB, Dependencies: [C.SubA]}\n"
         "                - WorkB: {WCET: 2ms, Resources: [" +
         engine + "0]}\n" + "                - Busy: {WCET: 3ms, Resources: [CPU0], Dependencies: [C.SubB]}\n";
}

Graph parsed(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  if (!g) FAIL("parse failed: " << g.error().message);
  return std::move(g).value();
}

std::string parseError(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE_FALSE(g.has_value());
  return g.error().message;
}

const InstanceInfo& instanceNamed(const Schedule& s, const std::string& name) {
  for (const InstanceInfo& i : s.instances)
    if (s.runnables[i.runnable].name == name) return i;
  FAIL("no instance of " << name);
  return s.instances[InstanceId{0}];
}

// The planned times of engineGraph(engine, queue), by the list scheduler and by the search.
void checkEnginePlan(const std::string& engine, const std::string& queue, ResourceKind engineKind,
                     ResourceKind queueKind) {
  const Graph g = parsed(engineGraph(engine, queue));
  for (std::uint64_t steps : {std::uint64_t{0}, std::uint64_t{2000}}) {
    INFO(engine << " with " << steps << " search steps");
    ScheduleOptions opt;
    opt.searchSteps = steps;
    const Schedule s = scheduleOk(g, opt);
    const InstanceInfo& subA = instanceNamed(s, "SubA");
    const InstanceInfo& subB = instanceNamed(s, "SubB");
    const InstanceInfo& workA = instanceNamed(s, "WorkA");
    const InstanceInfo& workB = instanceNamed(s, "WorkB");
    const InstanceInfo& busy = instanceNamed(s, "Busy");
    CHECK(s.runnables[subA.runnable].kind == RunnableKind::kSubmitter);
    CHECK(s.runnables[workA.runnable].kind == RunnableKind::kSubmittee);
    // The submitters hold CPU0 and the queue; the work holds its engine only.
    REQUIRE(subA.resources.size() == 2);
    CHECK(s.resources[subA.resources[1]].kind == queueKind);
    CHECK(s.resources[subA.resources[1]].name == "Q");
    CHECK(subB.resources == subA.resources);
    REQUIRE(workA.resources.size() == 1);
    CHECK(s.resources[workA.resources[0]].kind == engineKind);
    CHECK(s.resources[workA.resources[0]].name == engine + "0");
    CHECK(workB.resources == workA.resources);
    // SubA 0-1, WorkA 1-5 (after its submitter), SubB 1-2 into the busy queue, Busy 2-5 on CPU0
    // while the engine works, WorkB 5-7 (FIFO: after WorkA). 7 ms = SubA + the engine's work.
    CHECK((subA.startNs == 0 && subA.endNs == 1 * kMs));
    CHECK((workA.startNs == 1 * kMs && workA.endNs == 5 * kMs));
    CHECK((subB.startNs == 1 * kMs && subB.endNs == 2 * kMs));
    CHECK((busy.startNs == 2 * kMs && busy.endNs == 5 * kMs));
    CHECK((workB.startNs == 5 * kMs && workB.endNs == 7 * kMs));
    CHECK(busy.startNs < workA.endNs);  // CPU work overlaps the engine's
    CHECK(lengthOf(s) == 7 * kMs);
  }
}

}  // namespace

TEST_CASE("DLA work runs on its handle's DLA, FIFO per DLA_HANDLE, beside CPU work", "[compiler][engines]") {
  checkEnginePlan("DLA", "DLA_HANDLE", ResourceKind::kDla, ResourceKind::kDlaHandle);
}

TEST_CASE("VPU work runs on its PVA stream's VPU, FIFO per PVA_STREAM, beside CPU work", "[compiler][engines]") {
  checkEnginePlan("VPU", "PVA_STREAM", ResourceKind::kVpu, ResourceKind::kPvaStream);
}

TEST_CASE("submissions in either order keep the handle's FIFO order on the DLA", "[compiler][engines]") {
  // Without SubB's dependency on SubA the scheduler picks the order; the work follows it.
  std::string yaml = engineGraph("DLA", "DLA_HANDLE");
  const std::string dep = ", Dependencies: [C.SubA]}";
  yaml.replace(yaml.find(dep), dep.size(), "}");
  const Schedule s = scheduleOk(parsed(yaml));
  const InstanceInfo& subA = instanceNamed(s, "SubA");
  const InstanceInfo& subB = instanceNamed(s, "SubB");
  const InstanceInfo& workA = instanceNamed(s, "WorkA");
  const InstanceInfo& workB = instanceNamed(s, "WorkB");
  CHECK((subA.startNs < subB.startNs) == (workA.startNs < workB.startNs));
  CHECK((workA.endNs <= workB.startNs || workB.endNs <= workA.startNs));
}

TEST_CASE("the verifier rejects a plan that runs DLA work against its handle's submission order",
          "[compiler][engines]") {
  Schedule s = scheduleOk(parsed(engineGraph("DLA", "DLA_HANDLE")));
  REQUIRE(verifySchedule(s).ok());
  // Run WorkB (submitted second) 2-4 ms and WorkA 4-8 ms: dependencies still hold, the DLA's
  // timeline does not overlap, but WorkB overtakes the work queued before it on the handle.
  InstanceId a = kNone, b = kNone;
  for (InstanceId i : s.instances.ids()) {
    if (s.runnables[s.instances[i].runnable].name == "WorkA") a = i;
    if (s.runnables[s.instances[i].runnable].name == "WorkB") b = i;
  }
  REQUIRE((a != kNone && b != kNone));
  s.instances[b].startNs = 2 * kMs;
  s.instances[b].endNs = 4 * kMs;
  s.instances[a].startNs = 4 * kMs;
  s.instances[a].endNs = 8 * kMs;
  for (TimelineInfo& t : s.timelines)
    if (s.resources[t.resource].kind == ResourceKind::kDla) t.instances = {b, a};
  const VerifyReport v = verifySchedule(s);
  REQUIRE_FALSE(v.ok());
  std::string all;
  for (const std::string& e : v.errors) all += e + "\n";
  INFO(all);
  CHECK_THAT(all, Catch::Contains("on resource 'Q'") && Catch::Contains("submission order") &&
                      Catch::Contains("C.WorkB") && Catch::Contains("C.WorkA"));
}

TEST_CASE("a submitter of DLA work must hold a DLA_HANDLE, not a CUDA stream", "[compiler][engines]") {
  const std::string graph =
      "Version: 3.0.0\n"
      "g:\n"
      "  Identifier: 1\n"
      "  Resources: {CPU: [CPU0], GPU: [GPU0], DLA: [DLA0]}\n"
      "  Hyperepochs:\n"
      "    - H:\n"
      "        Epochs:\n"
      "          - E: {Period: 100ms}\n"
      "  Clients:\n"
      "    - C:\n"
      "        Resources: {CUDA_STREAM: [{S0: GPU0}], DLA_HANDLE: [{H0: DLA0}]}\n"
      "        Epochs:\n"
      "          - H.E:\n"
      "              Runnables:\n"
      "                - Sub: {WCET: 1ms, Resources: [CPU0, S0], Submits: C.Work}\n"
      "                - Work: {WCET: 1ms, Resources: [DLA0]}\n";
  const std::string message = parseError(graph);
  CHECK_THAT(message, Catch::StartsWith("g.yaml:15:"));
  CHECK_THAT(message, Catch::Contains("'C.Sub'") && Catch::Contains("'C.Work'") && Catch::Contains("'S0'") &&
                          Catch::Contains("CUDA_STREAM") && Catch::Contains("DLA_HANDLE") &&
                          Catch::Contains("runs on a DLA"));
  // A DLA handle maps to a DLA, not to a GPU.
  std::string wrongDevice = graph;
  wrongDevice.replace(wrongDevice.find("{H0: DLA0}"), 10, "{H0: GPU0}");
  CHECK_THAT(parseError(wrongDevice),
             Catch::Contains("DLA handle 'H0' maps to 'GPU0', which is not a declared DLA") && Catch::Contains("DLA0"));
  // A DLA handle is client-local.
  std::string global = graph;
  global.replace(global.find("DLA: [DLA0]}"), 12, "DLA: [DLA0], DLA_HANDLE: [X]}");
  CHECK_THAT(parseError(global), Catch::Contains("DLA_HANDLE resources are client-local"));
  // The graph with a DLA handle compiles.
  std::string fixed = graph;
  fixed.replace(fixed.find("[CPU0, S0]"), 10, "[CPU0, H0]");
  const Schedule s = scheduleOk(parsed(fixed));
  CHECK(s.resources[instanceNamed(s, "Work").resources[0]].name == "DLA0");
}

TEST_CASE("the schedule file records DLA and VPU kinds in format version 5 only", "[compiler][engines]") {
  const Schedule s = scheduleOk(parsed(engineGraph("DLA", "DLA_HANDLE")));
  const std::string text = writeSchedule(s);
  CHECK_THAT(text, Catch::StartsWith("tactus-schedule 5\n"));
  CHECK_THAT(text, Catch::Contains("kind=dla ") && Catch::Contains("kind=dla_handle "));
  auto back = readSchedule(text, "s.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  const Schedule v = scheduleOk(parsed(engineGraph("VPU", "PVA_STREAM")));
  const std::string vtext = writeSchedule(v);
  CHECK_THAT(vtext, Catch::StartsWith("tactus-schedule 5\n"));
  CHECK_THAT(vtext, Catch::Contains("kind=vpu ") && Catch::Contains("kind=pva_stream "));
  // A file that claims an older version is refused at the record of the new kind.
  std::string old = text;
  old.replace(0, 17, "tactus-schedule 4");
  auto refused = readSchedule(old, "old.tsched");
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message, Catch::Contains("old.tsched:") && Catch::Contains("'dla'") &&
                                          Catch::Contains("format version 4") && Catch::Contains("version 5"));
  // A GPU graph keeps version 4.
  std::string gpu = engineGraph("GPU", "CUDA_STREAM");
  CHECK_THAT(writeSchedule(scheduleOk(parsed(gpu))), Catch::StartsWith("tactus-schedule 4\n"));
}

TEST_CASE("the first schedule submits first the queue's work that can start first", "[compiler][engines]") {
  // tests/engine_queue's dla_cross graph: Detect waits for Capture (3 ms on CPU1), Segment for
  // nothing but its submitter, both on one DLA handle (FIFO). Submitting Detect first (the more
  // urgent by latest start) queues Segment behind it: 8.5 ms. Submitting Segment first runs it
  // while Capture runs: 8 ms, the critical path Capture -> Detect -> Warp -> Post, without a search.
  const Graph g = parsed(
      "Version: 3.0.0\n"
      "g:\n"
      "  Resources: {CPU: [CPU0, CPU1], DLA: [DLA0], VPU: [VPU0]}\n"
      "  Hyperepochs:\n"
      "    - Main:\n"
      "        Epochs: [{Frame: {Period: 20ms}}]\n"
      "  Clients:\n"
      "    - Camera:\n"
      "        Epochs: [{Main.Frame: {Runnables: [{Capture: {WCET: 3ms, Resources: [CPU1]}}]}}]\n"
      "    - Vision:\n"
      "        Resources: {DLA_HANDLE: [{H: DLA0}], PVA_STREAM: [{P: VPU0}]}\n"
      "        Epochs:\n"
      "          - Main.Frame:\n"
      "              Runnables:\n"
      "                - SubmitDetect: {WCET: 300us, Resources: [CPU0, H], Submits: Vision.Detect}\n"
      "                - Detect: {WCET: 3ms, Resources: [DLA], Dependencies: [Camera.Capture]}\n"
      "                - SubmitSegment: {WCET: 300us, Resources: [CPU0, H], Submits: Vision.Segment}\n"
      "                - Segment: {WCET: 2ms, Resources: [DLA]}\n"
      "                - SubmitWarp: {WCET: 300us, Resources: [CPU0, P], Submits: Vision.Warp}\n"
      "                - Warp: {WCET: 1500us, Resources: [VPU0], Dependencies: [Vision.Detect]}\n"
      "                - Post:\n"
      "                    WCET: 500us\n"
      "                    Resources: [CPU0]\n"
      "                    Dependencies: [Vision.Detect, Vision.Segment, Vision.Warp]\n");
  const Schedule s = scheduleOk(g);
  CHECK(lengthOf(s) == 8 * kMs);
  const InstanceInfo& segment = instanceNamed(s, "Segment");
  const InstanceInfo& detect = instanceNamed(s, "Detect");
  CHECK(segment.endNs <= detect.startNs);
  CHECK((detect.startNs == 3 * kMs && detect.endNs == 6 * kMs));
}
