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
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using namespace tactus::compiler;
using tactus::compiler::test::GraphBuilder;

namespace {

constexpr std::int64_t kMs = 1000000;

Schedule scheduleOk(const Graph& g, const ScheduleOptions& opt = {}) {
  auto s = scheduleGraph(g, opt);
  if (!s) FAIL("scheduleGraph failed: " << s.error().message);
  const VerifyReport v = verifySchedule(*s, VerifyOptions{opt.allowOverlength});
  for (const auto& e : v.errors) UNSCOPED_INFO(e);
  CHECK(v.ok());
  return std::move(s).value();
}

std::vector<const InstanceInfo*> instancesOf(const Schedule& s, std::uint32_t runnable) {
  std::vector<const InstanceInfo*> out;
  for (const auto& i : s.instances) {
    if (i.runnable == runnable) out.push_back(&i);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->frame < b->frame; });
  return out;
}

std::int64_t lengthOf(const Schedule& s) {
  std::int64_t l = 0;
  for (const auto& i : s.instances) l = std::max(l, i.endNs);
  return l;
}

// A random graph on `cpus` CPUs with a mutex, zero WCETs, and submitter/submittee pairs on two
// GPUs, for determinism and validity checks (small enough that every priority rule runs).
GraphBuilder randomGraph(int runnables, int cpus, unsigned seed) {
  GraphBuilder b;
  b.cpus(cpus);
  const std::uint32_t mutex = b.resource("LOCK", "MUTEX", ResourceKind::kMutex);
  const auto gpu0 = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto gpu1 = b.resource("GPU1", "GPU", ResourceKind::kGpu);
  b.stream("STREAM0", gpu0);
  b.stream("STREAM1", gpu1);
  const std::uint32_t h = b.hyperepoch("Main", 1000 * kMs);
  const std::uint32_t e = b.epoch("E", h, 500 * kMs, 2);
  std::mt19937 rng(seed);
  for (int i = 0; i < runnables; ++i) {
    std::vector<ResourceRequest> req{b.type("CPU")};
    if (rng() % 10 == 0) req.push_back(b.instance(mutex));
    const bool submits = i + 1 < runnables && rng() % 8 == 0;
    if (submits) req.push_back(b.type("CUDA_STREAM"));
    std::vector<std::uint32_t> deps;
    for (int k = 0; k < 2 && i > 0; ++k) {
      std::uint32_t d = static_cast<std::uint32_t>(rng() % static_cast<unsigned>(i));
      if (b[d].kind == RunnableKind::kSubmitter) d = b[d].submits;  // wait for the GPU work
      if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
    }
    const std::uint32_t r =
        b.runnable("R" + std::to_string(i), e, static_cast<std::int64_t>(rng() % 1000) * 1000, req, deps);
    b[r].priority = 1 + rng() % 10;
    if (submits) {
      const std::uint32_t gpu = b.runnable("R" + std::to_string(i) + "Gpu", e,
                                           static_cast<std::int64_t>(rng() % 1000) * 1000, {b.type("GPU")}, {r});
      b[r].kind = RunnableKind::kSubmitter;
      b[r].submits = gpu;
      b[gpu].kind = RunnableKind::kSubmittee;
      b[gpu].submittedBy = r;
      ++i;
    }
  }
  return b;
}

}  // namespace

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
  std::vector<std::uint32_t> used;
  for (const auto& i : s.instances) {
    CHECK(i.startNs == 0);
    used.push_back(i.resources[0]);
  }
  std::sort(used.begin(), used.end());
  CHECK(std::unique(used.begin(), used.end()) == used.end());
  CHECK(lengthOf(s) == 10 * kMs);
  CHECK(s.timelines.size() == 4);
}

TEST_CASE("a submittee runs on its submitter's stream and that stream's device, after it", "[scheduler]") {
  GraphBuilder b;
  b.cpus(2);
  const auto gpu0 = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto gpu1 = b.resource("GPU1", "GPU", ResourceKind::kGpu);
  b.stream("STREAM0", gpu0);
  b.stream("STREAM1", gpu1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  std::vector<std::uint32_t> submitters, submittees;
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
  std::vector<std::uint32_t> streams;
  for (int i = 0; i < 2; ++i) {
    const auto* si = instancesOf(s, submitters[i])[0];
    const auto* gi = instancesOf(s, submittees[i])[0];
    REQUIRE(si->resources.size() == 2);
    const std::uint32_t stream = si->resources[1];
    CHECK(s.resources[stream].kind == ResourceKind::kCudaStream);
    REQUIRE(gi->resources.size() == 2);
    CHECK(gi->resources[0] == s.resources[stream].device);
    CHECK(gi->resources[1] == stream);
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
  CHECK(s.runnables[grp].steps == std::vector<std::uint32_t>{m1, m2});
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
  std::vector<std::uint32_t> mid;
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

namespace {

// Compares two schedules field by field (what the schedule file holds of the plan).
void requireSameSchedule(const Schedule& a, const Schedule& b) {
  REQUIRE(a.instances.size() == b.instances.size());
  for (std::size_t i = 0; i < a.instances.size(); ++i) {
    INFO("instance " << i);
    REQUIRE(a.instances[i].runnable == b.instances[i].runnable);
    REQUIRE(a.instances[i].frame == b.instances[i].frame);
    REQUIRE(a.instances[i].startNs == b.instances[i].startNs);
    REQUIRE(a.instances[i].endNs == b.instances[i].endNs);
    REQUIRE(a.instances[i].resources == b.instances[i].resources);
    REQUIRE(a.instances[i].dependencies == b.instances[i].dependencies);
  }
  REQUIRE(a.timelines.size() == b.timelines.size());
  for (std::size_t t = 0; t < a.timelines.size(); ++t) REQUIRE(a.timelines[t].instances == b.timelines[t].instances);
}

std::uint64_t deadlineMisses(const Schedule& s) {
  std::uint64_t misses = 0;
  for (const auto& i : s.instances) {
    const RunnableInfo& r = s.runnables[i.runnable];
    const std::int64_t frame = static_cast<std::int64_t>(i.frame) * s.epochs[r.epoch].periodNs;
    if (r.deadlineNs != kNoDuration && i.endNs > frame + r.deadlineNs) ++misses;
  }
  return misses;
}

// A small random P|prec,r_j|Cmax instance: `tasks` runnables on `cpus` CPUs, some StartTimes.
GraphBuilder smallInstance(int tasks, int cpus, unsigned seed) {
  GraphBuilder b;
  b.cpus(cpus);
  const auto h = b.hyperepoch("Main", 1000 * kMs);
  const auto e = b.epoch("E", h, 1000 * kMs);
  std::mt19937 rng(seed);
  for (int i = 0; i < tasks; ++i) {
    std::vector<std::uint32_t> deps;
    for (int d = 0; d < i; ++d) {
      if (rng() % 4 == 0) deps.push_back(static_cast<std::uint32_t>(d));
    }
    const auto r =
        b.runnable("T" + std::to_string(i), e, static_cast<std::int64_t>(1 + rng() % 9) * kMs, {b.type("CPU")}, deps);
    if (rng() % 4 == 0) b[r].startTimeNs = static_cast<std::int64_t>(rng() % 6) * kMs;
  }
  return b;
}

// The optimum of a small instance by enumeration, independent of the scheduler: every
// left-shifted schedule is, in start order, a sequence of tasks each appended to one CPU at
// max(StartTime, predecessors' ends, the CPU's last end); try every order and every CPU choice.
std::int64_t bruteForceOptimum(const Graph& g, int cpus) {
  const int n = static_cast<int>(g.runnables.size());
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::int64_t best = INT64_MAX;
  std::vector<std::int64_t> end(static_cast<std::size_t>(n));
  std::vector<int> pos(static_cast<std::size_t>(n));
  do {
    for (int k = 0; k < n; ++k) pos[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = k;
    bool topological = true;
    for (int i = 0; i < n && topological; ++i) {
      for (std::uint32_t d : g.runnables[static_cast<std::size_t>(i)].dependencies) {
        if (pos[d] > pos[static_cast<std::size_t>(i)]) topological = false;
      }
    }
    if (!topological) continue;
    std::int64_t assignments = 1;
    for (int k = 0; k < n; ++k) assignments *= cpus;
    for (std::int64_t a = 0; a < assignments; ++a) {
      std::vector<std::int64_t> cpuEnd(static_cast<std::size_t>(cpus), 0);
      std::int64_t code = a;
      std::int64_t length = 0;
      for (int k = 0; k < n; ++k) {
        const int task = order[static_cast<std::size_t>(k)];
        const auto cpu = static_cast<std::size_t>(code % cpus);
        code /= cpus;
        const GraphRunnable& r = g.runnables[static_cast<std::size_t>(task)];
        std::int64_t s = std::max(r.startTimeNs, cpuEnd[cpu]);
        for (std::uint32_t d : r.dependencies) s = std::max(s, end[d]);
        end[static_cast<std::size_t>(task)] = s + r.wcetNs;
        cpuEnd[cpu] = s + r.wcetNs;
        length = std::max(length, s + r.wcetNs);
      }
      best = std::min(best, length);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace

TEST_CASE("a step-budgeted search gives the same schedule for any worker count", "[search]") {
  for (unsigned seed : {3u, 11u}) {
    const GraphBuilder b = randomGraph(60, 3, seed);
    ScheduleOptions opt;
    opt.searchSteps = 20000;
    opt.workers = 1;
    SearchInfo info1;
    auto s1 = scheduleGraph(b.g, opt, &info1);
    REQUIRE(s1.has_value());
    CHECK(info1.hyperepochs.at(0).steps > 0);
    for (int workers : {2, 4}) {
      opt.workers = workers;
      SearchInfo info;
      auto s2 = scheduleGraph(b.g, opt, &info);
      REQUIRE(s2.has_value());
      requireSameSchedule(*s1, *s2);
      CHECK(info.hyperepochs.at(0).steps == info1.hyperepochs.at(0).steps);
    }
  }
}

TEST_CASE("the search result verifies and is never worse than the first schedule", "[search]") {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const GraphBuilder b = randomGraph(40, 2 + static_cast<int>(seed % 3), seed);
    const Schedule first = scheduleOk(b.g);
    ScheduleOptions opt;
    opt.searchSteps = 5000;
    opt.workers = 2;
    const Schedule searched = scheduleOk(b.g, opt);
    INFO("seed " << seed);
    CHECK(deadlineMisses(searched) <= deadlineMisses(first));
    if (deadlineMisses(searched) == deadlineMisses(first)) CHECK(lengthOf(searched) <= lengthOf(first));
  }
  // A wall-clock budget: whatever it finds verifies.
  const GraphBuilder b = randomGraph(80, 3, 99);
  ScheduleOptions opt;
  opt.timeBudgetSeconds = 0.05;
  opt.workers = 2;
  const Schedule s = scheduleOk(b.g, opt);
  CHECK(lengthOf(s) <= lengthOf(scheduleOk(b.g)));
}

TEST_CASE("the search finds and proves the optimum of small instances found by enumeration", "[search]") {
  int improved = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const int cpus = seed % 2 == 0 ? 2 : 3;
    const int tasks = cpus == 2 ? 7 : 6;
    const GraphBuilder b = smallInstance(tasks, cpus, seed);
    const std::int64_t optimum = bruteForceOptimum(b.g, cpus);
    const Schedule first = scheduleOk(b.g);
    ScheduleOptions opt;
    opt.searchSteps = 1000000;
    SearchInfo info;
    auto s = scheduleGraph(b.g, opt, &info);
    REQUIRE(s.has_value());
    REQUIRE(verifySchedule(*s).ok());
    INFO("seed " << seed << ": first " << lengthOf(first) << ", optimum " << optimum);
    CHECK(lengthOf(*s) == optimum);
    const CompileReport rep = buildReport(b.g, *s, &info);
    CHECK(rep.hyperepochs.at(0).lowerBoundNs == optimum);
    CHECK(rep.hyperepochs.at(0).provenOptimal);
    if (lengthOf(first) > optimum) ++improved;
  }
  // Some of these instances are beyond the list scheduler, or the test would prove little.
  CHECK(improved > 0);
}

TEST_CASE("the search keeps a schedule that meets a deadline over a shorter one that misses it", "[search]") {
  // One CPU; A (5ms) any time, B (1ms) from StartTime 3ms with a deadline at 5ms:
  //   meets:  |   |B|A    |      9ms
  //   misses: |A    |B|          6ms, B ends at 6ms
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("Main", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  b.runnable("A", e, 5 * kMs, {b.type("CPU")});
  const auto bb = b.runnable("B", e, 1 * kMs, {b.type("CPU")});
  b[bb].startTimeNs = 3 * kMs;
  b[bb].deadlineNs = 5 * kMs;
  ScheduleOptions opt;
  opt.searchSteps = 100000;
  const Schedule s = scheduleOk(b.g, opt);
  CHECK(deadlineMisses(s) == 0);
  CHECK(lengthOf(s) == 9 * kMs);
  // Without the deadline the search finds the 6ms schedule.
  GraphBuilder free = b;
  free.g.runnables[bb].deadlineNs = kNoDuration;
  CHECK(lengthOf(scheduleOk(free.g, opt)) == 6 * kMs);
}

TEST_CASE("the improvement search of a large hyperepoch is reproducible and never worse", "[search]") {
  const GraphBuilder b = randomGraph(900, 4, 5);  // 2 frames: above the branch and bound's size
  const Schedule first = scheduleOk(b.g);
  ScheduleOptions opt;
  opt.searchSteps = std::uint64_t{16} * 2 * 900;
  opt.workers = 1;
  SearchInfo info;
  auto s1 = scheduleGraph(b.g, opt, &info);
  REQUIRE(s1.has_value());
  REQUIRE(verifySchedule(*s1).ok());
  CHECK(info.hyperepochs.at(0).steps >= std::uint64_t{16} * 2 * 900);
  CHECK(deadlineMisses(*s1) <= deadlineMisses(first));
  if (deadlineMisses(*s1) == deadlineMisses(first)) CHECK(lengthOf(*s1) <= lengthOf(first));
  opt.workers = 3;
  auto s2 = scheduleGraph(b.g, opt);
  REQUIRE(s2.has_value());
  requireSameSchedule(*s1, *s2);
}

namespace {

// Fusion loses the optimum here: A -> B (100us each) and Y (100us, StartTime 100us) share CPU0;
// Y feeds Z (600us on CPU1), B feeds W (500us on CPU2). Z and W are too long to fuse.
//   unfused: CPU0 |A|Y|B|    CPU1 ..|Z 200-800|   CPU2 ...|W 300-800|     800us
//   fused:   CPU0 |A B|Y|    CPU1 ...|Z 300-900|  (or Y first: W ends at 900)  900us
struct FusionCase {
  GraphBuilder b;
  std::uint32_t a = 0, bb = 0, y = 0;
};

FusionCase fusionCase() {
  FusionCase c;
  GraphBuilder& b = c.b;
  const auto cpu = b.cpus(3);
  const auto h = b.hyperepoch("Main", 10 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs);
  constexpr std::int64_t kUs = 1000;
  c.a = b.runnable("A", e, 100 * kUs, {b.instance(cpu[0])});
  c.bb = b.runnable("B", e, 100 * kUs, {b.instance(cpu[0])}, {c.a});
  c.y = b.runnable("Y", e, 100 * kUs, {b.instance(cpu[0])});
  b[c.y].startTimeNs = 100 * kUs;
  b.runnable("Z", e, 600 * kUs, {b.instance(cpu[1])}, {c.y});
  b.runnable("W", e, 500 * kUs, {b.instance(cpu[2])}, {c.bb});
  return c;
}

// A chain of short runnables on a CPU type request, two frames, among other work.
GraphBuilder chainGraph() {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("Main", 20 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs, 2);
  constexpr std::int64_t kUs = 1000;
  const auto head = b.runnable("Head", e, 2 * kMs, {b.type("CPU")});
  const auto c0 = b.runnable("C0", e, 100 * kUs, {b.type("CPU")}, {head});
  const auto c1 = b.runnable("C1", e, 200 * kUs, {b.type("CPU")}, {c0});
  const auto c2 = b.runnable("C2", e, 300 * kUs, {b.type("CPU")}, {c1});
  b.runnable("Other", e, 3 * kMs, {b.type("CPU")});
  b.runnable("Tail", e, 1 * kMs, {b.type("CPU")}, {c2, head});
  return b;
}

}  // namespace

TEST_CASE("fused chains are split back into consecutive instances on one resource", "[fusion]") {
  const GraphBuilder b = chainGraph();
  ScheduleOptions opt;
  opt.fusion = Fusion::kOn;
  opt.fusionThresholdNs = 500000;
  const Schedule fused = scheduleOk(b.g, opt);
  opt.fusion = Fusion::kOff;
  const Schedule plain = scheduleOk(b.g, opt);
  // The same instances: every runnable, every frame, once.
  REQUIRE(fused.instances.size() == plain.instances.size());
  for (std::uint32_t r = 0; r < b.g.runnables.size(); ++r) CHECK(instancesOf(fused, r).size() == 2);
  // C0 -> C1 -> C2 (the chain; Head and Tail are too long or have two predecessors) run back to
  // back on one core, frame by frame, with their own WCETs.
  for (std::uint32_t frame = 0; frame < 2; ++frame) {
    const InstanceInfo& i0 = *instancesOf(fused, 1)[frame];
    const InstanceInfo& i1 = *instancesOf(fused, 2)[frame];
    const InstanceInfo& i2 = *instancesOf(fused, 3)[frame];
    CHECK(i1.startNs == i0.endNs);
    CHECK(i2.startNs == i1.endNs);
    CHECK(i0.endNs - i0.startNs == 100000);
    CHECK(i2.endNs - i2.startNs == 300000);
    CHECK(i0.resources == i1.resources);
    CHECK(i1.resources == i2.resources);
    // The chain's internal dependencies are kept in the schedule file.
    REQUIRE(i1.dependencies.size() == 1);
    CHECK(fused.instances[i1.dependencies[0]].runnable == 1);
  }
}

TEST_CASE("fusion can lose the optimum; -nrf and the default keep the unfused search", "[fusion]") {
  const FusionCase c = fusionCase();
  ScheduleOptions opt;
  opt.searchSteps = 100000;
  opt.fusion = Fusion::kOff;
  const Schedule plain = scheduleOk(c.b.g, opt);
  CHECK(lengthOf(plain) == 800000);
  // The default leaves a hyperepoch this small unfused.
  opt.fusion = Fusion::kAuto;
  const Schedule byDefault = scheduleOk(c.b.g, opt);
  CHECK(lengthOf(byDefault) == 800000);
  // Fused, A and B run back to back: the best schedule is 900us, and the lower bound reported
  // is still the unfused problem's (it does not claim the fused 900us optimal).
  opt.fusion = Fusion::kOn;
  SearchInfo info;
  auto fused = scheduleGraph(c.b.g, opt, &info);
  REQUIRE(fused.has_value());
  REQUIRE(verifySchedule(*fused).ok());
  CHECK(lengthOf(*fused) == 900000);
  const InstanceInfo& ia = *instancesOf(*fused, c.a)[0];
  const InstanceInfo& ib = *instancesOf(*fused, c.bb)[0];
  CHECK(ib.startNs == ia.endNs);
  const CompileReport rep = buildReport(c.b.g, *fused, &info);
  CHECK(rep.hyperepochs.at(0).lowerBoundNs <= 800000);
  CHECK_FALSE(rep.hyperepochs.at(0).provenOptimal);
  // A threshold at or below the WCETs fuses nothing.
  opt.fusionThresholdNs = 100000;
  CHECK(lengthOf(scheduleOk(c.b.g, opt)) == 800000);
}

TEST_CASE("fused schedules are deterministic for any worker count", "[fusion]") {
  GraphBuilder b = randomGraph(120, 3, 17);
  for (auto& r : b.g.runnables) {
    if (r.kind == RunnableKind::kCpu) r.wcetNs = r.wcetNs % 400000;  // mostly short
  }
  ScheduleOptions opt;
  opt.fusion = Fusion::kOn;
  opt.searchSteps = 20000;
  opt.workers = 1;
  const Schedule s1 = scheduleOk(b.g, opt);
  opt.workers = 3;
  const Schedule s2 = scheduleOk(b.g, opt);
  requireSameSchedule(s1, s2);
  opt.workers = 1;
  requireSameSchedule(s1, scheduleOk(b.g, opt));
}
