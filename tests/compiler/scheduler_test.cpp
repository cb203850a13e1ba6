// Tests of the scheduler and the compile report on graphs built in code.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph.hpp"
#include "graph_builder.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "scheduler_test_support.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using namespace tactus::compiler;
using namespace tactus::compiler::test;

TEST_CASE("the scheduler honours dependencies and StartTime", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto a = b.runnable("A", e, 3 * kMs, {b.type("CPU")});
  const auto c = b.runnable("B", e, 2 * kMs, {b.type("CPU")}, {a});
  b[c].startTimeNs = 5 * kMs;
  const auto d = b.runnable("C", e, 1 * kMs, {b.type("CPU")});
  b[d].startTimeNs = 7 * kMs;
  const Schedule s = scheduleOk(b.g);
  REQUIRE(s.instances.size() == 3);
  const auto* ia = instancesOf(s, a)[0];
  const auto* ib = instancesOf(s, c)[0];
  const auto* ic = instancesOf(s, d)[0];
  CHECK(ia->startNs == 0);
  CHECK(ib->startNs == 5 * kMs);
  CHECK(ib->startNs >= ia->endNs);
  CHECK(ic->startNs == 7 * kMs);
  CHECK(ib->endNs - ib->startNs == 2 * kMs);
  REQUIRE(ib->dependencies.size() == 1);
  CHECK(s.instances[ib->dependencies[0]].runnable == a);
  CHECK(s.runnables.size() == 3);
  CHECK(s.name == "Test");
  CHECK(s.identifier == 7);
}

TEST_CASE("type requests spread over the cores", "[scheduler]") {
  GraphBuilder b;
  b.cpus(4);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  for (int i = 0; i < 4; ++i) b.runnable("R" + std::to_string(i), e, 10 * kMs, {b.type("CPU")});
  const Schedule s = scheduleOk(b.g);
  std::vector<ResourceId> used;
  for (const auto& i : s.instances) {
    CHECK(i.startNs == 0);
    used.push_back(i.resources[0]);
  }
  std::sort(used.begin(), used.end());
  CHECK(std::unique(used.begin(), used.end()) == used.end());
  CHECK(lengthOf(s) == 10 * kMs);
  CHECK(s.timelines.size() == 4);
}

TEST_CASE("a submittee runs on its submitter's stream's device, after it, and holds no stream", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto gpu0 = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto gpu1 = b.resource("GPU1", "GPU", ResourceKind::kGpu);
  b.stream("STREAM0", gpu0);
  b.stream("STREAM1", gpu1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  std::vector<RunnableId> submitters, submittees;
  for (int i = 0; i < 2; ++i) {
    const auto sub = b.runnable("Sub" + std::to_string(i), e, 2 * kMs, {b.type("CPU"), b.type("CUDA_STREAM")});
    const auto gpu = b.runnable("Gpu" + std::to_string(i), e, 5 * kMs, {b.type("GPU")}, {sub});
    b[sub].kind = RunnableKind::kSubmitter;
    b[sub].submits = gpu;
    b[gpu].kind = RunnableKind::kSubmittee;
    b[gpu].submittedBy = sub;
    submitters.push_back(sub);
    submittees.push_back(gpu);
  }
  const Schedule s = scheduleOk(b.g);
  std::vector<ResourceId> streams;
  for (int i = 0; i < 2; ++i) {
    const auto* si = instancesOf(s, submitters[i])[0];
    const auto* gi = instancesOf(s, submittees[i])[0];
    REQUIRE(si->resources.size() == 2);
    const ResourceId stream = si->resources[1];
    CHECK(s.resources[stream].kind == ResourceKind::kCudaStream);
    REQUIRE(gi->resources.size() == 1);  // the stream serialises the submitters only
    CHECK(gi->resources[0] == s.resources[stream].device);
    CHECK(gi->startNs >= si->endNs);
    streams.push_back(stream);
  }
  // Both streams are free at 0, so the two pairs run side by side on different devices.
  CHECK(streams[0] != streams[1]);
  CHECK(lengthOf(s) == 7 * kMs);
}

TEST_CASE("a mutex serialises runnables on different cores", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto mutex = b.resource("MEM_BW_MUTEX", "MUTEX", ResourceKind::kMutex);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto x = b.runnable("X", e, 4 * kMs, {b.type("CPU"), b.instance(mutex)});
  const auto y = b.runnable("Y", e, 4 * kMs, {b.type("CPU"), b.instance(mutex)});
  const auto z = b.runnable("Z", e, 4 * kMs, {b.type("CPU")});
  const Schedule s = scheduleOk(b.g);
  const auto* ix = instancesOf(s, x)[0];
  const auto* iy = instancesOf(s, y)[0];
  CHECK((ix->endNs <= iy->startNs || iy->endNs <= ix->startNs));
  CHECK(ix->resources[1] == mutex);
  // Z needs no mutex and runs beside the first mutex holder.
  CHECK(instancesOf(s, z)[0]->startNs == 0);
  CHECK(lengthOf(s) == 8 * kMs);
}

TEST_CASE("multi-rate epochs are unrolled into frames with their releases", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 30 * kMs);
  const auto fast = b.epoch("Fast", h, 10 * kMs, 3);
  const auto slow = b.epoch("Slow", h, 30 * kMs, 1);
  const auto f = b.runnable("F", fast, 2 * kMs, {b.type("CPU")});
  const auto f2 = b.runnable("F2", fast, 1 * kMs, {b.type("CPU")}, {f});
  const auto sl = b.runnable("S", slow, 6 * kMs, {b.type("CPU")});
  const Schedule s = scheduleOk(b.g);
  const auto fi = instancesOf(s, f);
  const auto f2i = instancesOf(s, f2);
  REQUIRE(fi.size() == 3);
  REQUIRE(f2i.size() == 3);
  REQUIRE(instancesOf(s, sl).size() == 1);
  for (std::uint32_t k = 0; k < 3; ++k) {
    CHECK(fi[k]->frame == k);
    CHECK(fi[k]->startNs >= std::int64_t{k} * 10 * kMs);
    CHECK(f2i[k]->endNs <= (std::int64_t{k} + 1) * 10 * kMs);
    REQUIRE(f2i[k]->dependencies.size() == 1);
    CHECK(&s.instances[f2i[k]->dependencies[0]] == fi[k]);
  }
  CHECK(lengthOf(s) <= 30 * kMs);
}

TEST_CASE("a round-robin group is scheduled once per frame and its members not at all", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 40 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs, 4);
  const auto m1 = b.runnable("M1", e, 2 * kMs, {b.type("CPU")});
  const auto m2 = b.runnable("M2", e, 3 * kMs, {b.type("CPU")});
  const auto grp = b.runnable("Group", e, 3 * kMs, {b.type("CPU")});
  b[grp].kind = RunnableKind::kAliasGroup;
  b[grp].steps = {m1, m2};
  b[m1].aliasGroup = grp;
  b[m2].aliasGroup = grp;
  const auto after = b.runnable("After", e, 1 * kMs, {b.type("CPU")}, {grp});
  const Schedule s = scheduleOk(b.g);
  CHECK(instancesOf(s, m1).empty());
  CHECK(instancesOf(s, m2).empty());
  const auto gi = instancesOf(s, grp);
  REQUIRE(gi.size() == 4);
  for (const auto* i : gi) CHECK(i->endNs - i->startNs == 3 * kMs);
  CHECK(instancesOf(s, after).size() == 4);
  CHECK(s.runnables[grp].steps == std::vector<RunnableId>{m1, m2});
}

TEST_CASE("a schedule longer than its hyperepoch is infeasible unless allowed", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Perception", 100 * kMs);
  const auto e = b.epoch("Camera", h, 100 * kMs);
  const auto a = b.runnable("A", e, 50 * kMs, {b.type("CPU")});
  const auto c = b.runnable("B", e, 50 * kMs, {b.type("CPU")}, {a});
  b.runnable("C", e, 20 * kMs + kMs / 2, {b.type("CPU")}, {c});
  auto r = scheduleGraph(b.g, {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kInfeasible);
  CHECK(r.error().message == "hyperepoch 'Perception': schedule length 120.5ms exceeds its period 100ms");

  ScheduleOptions allow;
  allow.allowOverlength = true;
  auto ok = scheduleGraph(b.g, allow);
  REQUIRE(ok.has_value());
  CHECK(lengthOf(*ok) == 120 * kMs + kMs / 2);
}

TEST_CASE("a frame that runs into its epoch's next frame is an error naming epoch and frame", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("Fast", h, 10 * kMs, 2);
  b.runnable("A", e, 12 * kMs, {b.type("CPU")});
  auto r = scheduleGraph(b.g, {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kInfeasible);
  CHECK(r.error().message.find("epoch 'Main.Fast' frame 0") != std::string::npos);
  CHECK(r.error().message.find("12ms") != std::string::npos);
  CHECK(r.error().message.find("10ms") != std::string::npos);
}

TEST_CASE("the scheduler is deterministic", "[scheduler]") {
  const GraphBuilder b = randomGraph(300, 4, 42);
  const Schedule s1 = scheduleOk(b.g);
  const Schedule s2 = scheduleOk(b.g);
  REQUIRE(s1.instances.size() == 2 * b.g.runnables.size());
  REQUIRE(s1.instances.size() == s2.instances.size());
  for (std::size_t i = 0; i < s1.instances.size(); ++i) {
    CHECK(s1.instances[i].runnable == s2.instances[i].runnable);
    CHECK(s1.instances[i].frame == s2.instances[i].frame);
    CHECK(s1.instances[i].startNs == s2.instances[i].startNs);
    CHECK(s1.instances[i].resources == s2.instances[i].resources);
    CHECK(s1.instances[i].dependencies == s2.instances[i].dependencies);
  }
  REQUIRE(s1.timelines.size() == s2.timelines.size());
  for (std::size_t t = 0; t < s1.timelines.size(); ++t) CHECK(s1.timelines[t].instances == s2.timelines[t].instances);
  // Instances sorted by start within the hyperepoch.
  for (std::size_t i = 1; i < s1.instances.size(); ++i) CHECK(s1.instances[i - 1].startNs <= s1.instances[i].startNs);
}

TEST_CASE("a fork-join graph gets the list scheduler's exactly computable length", "[scheduler]") {
  //   A(2) -> B(3), C(3), D(3) -> E(1) on 2 CPUs:
  //   CPU0 |A |B  |D  |E|
  //   CPU1    |C  |         = 2 + 3 + 3 + 1 = 9 ms (also the optimum)
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto a = b.runnable("A", e, 2 * kMs, {b.type("CPU")});
  std::vector<RunnableId> mid;
  for (const char* n : {"B", "C", "D"}) mid.push_back(b.runnable(n, e, 3 * kMs, {b.type("CPU")}, {a}));
  const auto end = b.runnable("E", e, 1 * kMs, {b.type("CPU")}, mid);
  const Schedule s = scheduleOk(b.g);
  CHECK(lengthOf(s) == 9 * kMs);
  CHECK(instancesOf(s, end)[0]->startNs == 8 * kMs);

  const CompileReport rep = buildReport(b.g, s);
  REQUIRE(rep.hyperepochs.size() == 1);
  const HyperepochReport& hr = rep.hyperepochs[0];
  CHECK(hr.scheduleLengthNs == 9 * kMs);
  CHECK(hr.criticalPathNs == 6 * kMs);
  // Work after t = 2ms is 10ms on 2 CPUs, plus no tail: 2 + 5 = 7ms.
  CHECK(hr.lowerBoundNs == 7 * kMs);
  CHECK_FALSE(hr.provenOptimal);
  CHECK(hr.instances == 5);
  CHECK(hr.runnables == 5);
  REQUIRE(hr.resources.size() == 2);
  CHECK(hr.resources[0].loadNs + hr.resources[1].loadNs == 12 * kMs);
}

TEST_CASE("the report proves optimality when the length meets the bound", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  for (int i = 0; i < 4; ++i) b.runnable("R" + std::to_string(i), e, 10 * kMs, {b.type("CPU")});
  const Schedule s = scheduleOk(b.g);
  const CompileReport rep = buildReport(b.g, s);
  const HyperepochReport& hr = rep.hyperepochs[0];
  CHECK(hr.scheduleLengthNs == 20 * kMs);
  CHECK(hr.lowerBoundNs == 20 * kMs);
  CHECK(hr.provenOptimal);
  for (const auto& r : hr.resources) {
    CHECK(r.loadNs == 20 * kMs);
    CHECK(r.idleGaps == 0);
    CHECK(r.utilisation == Approx(1.0));
    CHECK(r.periodUtilisation == Approx(0.2));
  }
}

TEST_CASE("a deadline raises a runnable's priority and misses are reported", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto big = b.runnable("Big", e, 10 * kMs, {b.type("CPU")});
  const auto urgent = b.runnable("Urgent", e, 2 * kMs, {b.type("CPU")});
  b[urgent].deadlineNs = 3 * kMs;
  const auto late = b.runnable("Late", e, 2 * kMs, {b.type("CPU")});
  b[late].deadlineNs = 1 * kMs;
  const Schedule s = scheduleOk(b.g);
  CHECK(instancesOf(s, urgent)[0]->endNs <= 3 * kMs + 2 * kMs);
  CHECK(instancesOf(s, big)[0]->startNs >= 4 * kMs);
  const CompileReport rep = buildReport(b.g, s);
  std::vector<std::string> missed;
  for (const auto& m : rep.hyperepochs[0].deadlinesMissed) missed.push_back(m.runnable);
  CHECK(std::find(missed.begin(), missed.end(), "Client0.Late") != missed.end());
  CHECK(std::find(missed.begin(), missed.end(), "Client0.Big") == missed.end());
}

TEST_CASE("zero-WCET instances are placed and verify", "[scheduler]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto z0 = b.runnable("Z0", e, 0, {b.type("CPU")});
  const auto a = b.runnable("A", e, 5 * kMs, {b.type("CPU")}, {z0});
  const auto z1 = b.runnable("Z1", e, 0, {b.type("CPU")}, {a});
  const auto z2 = b.runnable("Z2", e, 0, {b.type("CPU")}, {z1});
  b.runnable("B", e, 5 * kMs, {b.type("CPU")}, {z2});
  b.runnable("C", e, 3 * kMs, {b.type("CPU")});
  const Schedule s = scheduleOk(b.g);
  CHECK(instancesOf(s, z2)[0]->startNs >= instancesOf(s, a)[0]->endNs);
  CHECK(lengthOf(s) == 13 * kMs);
}

TEST_CASE("the report renders text and escaped JSON", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("Quote\"Hyper", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto a = b.runnable("A", e, 3 * kMs, {b.type("CPU")});
  b.runnable("B", e, 2 * kMs, {b.type("CPU")}, {a});
  const Schedule s = scheduleOk(b.g);
  CompileReport rep = buildReport(b.g, s);
  rep.compileTimeMs = 1.5;
  const std::string json = reportJson(rep);
  CHECK(json.find("\"name\": \"Quote\\\"Hyper\"") != std::string::npos);
  CHECK(json.find("\"schedule_length_ns\": 5000000") != std::string::npos);
  CHECK(json.find("\"compile_time_ms\": 1.500") != std::string::npos);
  CHECK(json.find("\"proven_optimal\": true") != std::string::npos);
  const std::string text = reportText(rep);
  CHECK(text.find("schedule length   5ms") != std::string::npos);
  CHECK(text.find("CPU0") != std::string::npos);
  CHECK(humanDuration(120500000) == "120.5ms");
  CHECK(humanDuration(33330000) == "33.33ms");
  CHECK(humanDuration(0) == "0ns");
  CHECK(humanDuration(1500) == "1.5us");
}

TEST_CASE("random graphs with a mutex, zero WCETs and GPU work schedule and verify", "[scheduler]") {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const GraphBuilder b = randomGraph(200, 1 + static_cast<int>(seed % 4), seed);
    const Schedule s = scheduleOk(b.g);
    CHECK(s.instances.size() == 2 * b.g.runnables.size());
    const CompileReport rep = buildReport(b.g, s);
    CHECK(rep.hyperepochs[0].scheduleLengthNs >= rep.hyperepochs[0].lowerBoundNs);
  }
}

TEST_CASE("work on a shared stream keeps its submission order; the verifier refuses a plan that breaks it",
          "[scheduler][gpu]") {
  // Sub1 and Sub2 share stream S on CPU0; W1 waits for Pre (10 ms on CPU1), W2 for nothing. A plan
  // that submits Sub1 then Sub2 but runs W2 before W1 breaks the stream's FIFO order.
  GraphBuilder b;
  const auto cpus = b.cpus(2);
  const auto gpu = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto st = b.stream("S", gpu);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto pre = b.runnable("Pre", e, 10 * kMs, {b.instance(cpus[1])});
  const auto sub1 = b.runnable("Sub1", e, kMs, {b.instance(cpus[0]), b.instance(st)});
  const auto w1 = b.runnable("W1", e, 5 * kMs, {b.instance(gpu)}, {pre, sub1});
  const auto sub2 = b.runnable("Sub2", e, kMs, {b.instance(cpus[0]), b.instance(st)});
  const auto w2 = b.runnable("W2", e, 5 * kMs, {b.instance(gpu)}, {sub2});
  for (auto [s, w] : {std::pair{sub1, w1}, std::pair{sub2, w2}}) {
    b[s].kind = RunnableKind::kSubmitter;
    b[s].submits = w;
    b[w].kind = RunnableKind::kSubmittee;
    b[w].submittedBy = s;
  }
  Schedule s = scheduleOk(b.g);
  // On S, each submitter is followed by its own work before the next submission.
  const TimelineInfo* line = nullptr;
  for (const auto& t : s.timelines)
    if (t.resource == st) line = &t;
  REQUIRE(line != nullptr);
  // S holds the submitters only; their work runs on the GPU in their order.
  REQUIRE(line->instances.size() == 2);
  const InstanceInfo& firstSub = s.instances[line->instances[0]];
  const InstanceInfo& secondSub = s.instances[line->instances[1]];
  CHECK(s.runnables[firstSub.runnable].kind == RunnableKind::kSubmitter);
  CHECK(s.runnables[secondSub.runnable].kind == RunnableKind::kSubmitter);
  const InstanceInfo* firstWork = instancesOf(s, s.runnables[firstSub.runnable].submits)[0];
  const InstanceInfo* secondWork = instancesOf(s, s.runnables[secondSub.runnable].submits)[0];
  CHECK(firstWork->endNs <= secondWork->startNs);

  // The plan an unaware scheduler makes: Sub1, Sub2 back to back, W2 first on the GPU.
  InstanceId id[5] = {};
  for (InstanceId i : s.instances.ids()) {
    const RunnableId r = s.instances[i].runnable;
    id[r == pre ? 0 : r == sub1 ? 1 : r == w1 ? 2 : r == sub2 ? 3 : 4] = i;
  }
  auto at = [&](InstanceId i, std::int64_t from, std::int64_t to) {
    s.instances[i].startNs = from * kMs;
    s.instances[i].endNs = to * kMs;
  };
  at(id[0], 0, 10);
  at(id[1], 0, 1);
  at(id[3], 1, 2);
  at(id[4], 2, 7);
  at(id[2], 10, 15);
  for (auto& t : s.timelines) {
    if (t.resource == cpus[0]) t.instances = {id[1], id[3]};
    if (t.resource == gpu) t.instances = {id[4], id[2]};
    if (t.resource == st) t.instances = {id[1], id[3]};
  }
  const VerifyReport v = verifySchedule(s);
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0] ==
        "on resource 'S', runnable 'Client0.W2' frame 0 runs before runnable 'Client0.W1' frame 0, the work of "
        "runnable 'Client0.Sub1' frame 0, which is submitted first (a stream runs its work in submission order)");
}

TEST_CASE("a graph with no order of its stream's submissions is refused naming the submitter", "[scheduler][gpu]") {
  // SubB follows SubA, both on S, and WA waits for WB: WA is queued first and waits for work
  // queued behind it. The parser refuses this pair (orderStreams, a GPU wait cycle); built here
  // without it, the scheduler must find no order and say so, not plan one the stream cannot run.
  GraphBuilder b;
  const auto cpus = b.cpus(1);
  const auto gpu = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto st = b.stream("S", gpu);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto subA = b.runnable("SubA", e, kMs, {b.instance(cpus[0]), b.instance(st)});
  const auto subB = b.runnable("SubB", e, kMs, {b.instance(cpus[0]), b.instance(st)}, {subA});
  const auto wb = b.runnable("WB", e, kMs, {b.instance(gpu)}, {subB});
  const auto wa = b.runnable("WA", e, kMs, {b.instance(gpu)}, {subA, wb});
  for (auto [s, w] : {std::pair{subA, wa}, std::pair{subB, wb}}) {
    b[s].kind = RunnableKind::kSubmitter;
    b[s].submits = w;
    b[w].kind = RunnableKind::kSubmittee;
    b[w].submittedBy = s;
  }
  for (std::uint64_t steps : {std::uint64_t{0}, std::uint64_t{1000}}) {
    INFO(steps << " search steps");
    ScheduleOptions opt;
    opt.searchSteps = steps;
    auto s = scheduleGraph(b.g, opt);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ErrorCode::kInfeasible);
    CHECK(s.error().message ==
          "hyperepoch 'Main': no order of the submissions lets every stream run its work in submission order: "
          "'Client0.SubB' frame 0 would queue its work on 'S' behind work that waits for it (every order was "
          "searched)");
  }
}
