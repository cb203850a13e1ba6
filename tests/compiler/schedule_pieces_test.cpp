// Unit tests of the scheduler's pieces on their own (compiler/schedule/): free time, the problem
// model, the list scheduler, the bounds, branch and bound on tiny problems, and fusion.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <limits>
#include <new>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "graph_builder.hpp"
#include "id_list.hpp"
#include "schedule/bounds.hpp"
#include "schedule/branch_and_bound.hpp"
#include "schedule/free_time.hpp"
#include "schedule/fusion.hpp"
#include "schedule/list_scheduler.hpp"
#include "schedule/problem.hpp"
#include "schedule/search_problem.hpp"
#include "schedule/workers.hpp"
#include "scheduler_test_support.hpp"

using namespace tactus;
using namespace tactus::compiler;
using namespace tactus::compiler::schedule;
using tactus::compiler::test::GraphBuilder;
using tactus::test::ids;

namespace {

constexpr std::int64_t kMs = 1000000;

// The problem of hyperepoch 0 of a graph (the model must outlive it).
Problem problemOf(const GraphModel& model) {
  IdVector<RunnableId, std::uint32_t> localOf(model.graph->runnables.size(), kNone);
  auto pb = buildProblem(model, HyperepochId{0}, localOf);
  if (!pb) FAIL(pb.error().message);
  for (std::uint32_t l : localOf) CHECK(l == kNone);  // left as it was given
  return std::move(pb).value();
}

// Independent runnables of the given WCETs (ms) on `cpus` identical CPUs, one frame.
GraphBuilder independent(int cpus, const std::vector<std::int64_t>& wcetMs) {
  GraphBuilder b;
  b.cpus(cpus);
  const auto h = b.hyperepoch("H", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  for (std::size_t i = 0; i < wcetMs.size(); ++i)
    b.runnable("R" + std::to_string(i), e, wcetMs[i] * kMs, {b.type("CPU")});
  return b;
}

}  // namespace

TEST_CASE("FreeTime: fit finds the earliest gap, reserve splits it, zero-length points split gaps", "[schedule]") {
  FreeTime f;
  CHECK(f.fit(0, 10) == 0);
  f.reserve(0, 10);
  CHECK(f.fit(0, 5) == 10);
  f.reserve(20, 10);  // busy [0,10) and [20,30): gap [10,20)
  std::int64_t gapStart = -1;
  CHECK(f.fit(0, 10, &gapStart) == 10);
  CHECK(gapStart == 10);
  CHECK(f.fit(0, 11) == 30);  // does not fit the gap
  CHECK(f.fit(12, 8) == 12);  // inside the gap
  CHECK(f.fit(12, 9) == 30);
  // A zero-length instance at 15 splits the gap: nothing may straddle it.
  f.reserve(15, 0);
  CHECK(f.fit(10, 10) == 30);
  CHECK(f.fit(10, 5) == 10);
  CHECK(f.fit(15, 5) == 15);
}

TEST_CASE("commonFit: the earliest start free on every resource of a set", "[schedule]") {
  std::vector<FreeTime> free(2);
  free[0].reserve(0, 10);
  free[1].reserve(10, 10);
  CHECK(commonFit(free, {0}, 0, 5) == 10);
  CHECK(commonFit(free, {1}, 0, 5) == 0);
  CHECK(commonFit(free, {0, 1}, 0, 5) == 20);
  CHECK(commonFit(free, {}, 7, 5) == 7);
}

TEST_CASE("buildProblem unrolls frames frame-major and computeLevels finds ALAP starts", "[schedule]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("H", 20 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs, 2);
  const auto a = b.runnable("A", e, 2 * kMs, {b.type("CPU")});
  b.runnable("B", e, 3 * kMs, {b.type("CPU")}, {a});
  const GraphModel model = modelGraph(b.g);
  const Problem pb = problemOf(model);
  REQUIRE(pb.nodes.size() == 4);
  CHECK(pb.nodes[0].runnable == RunnableId{0});
  CHECK(pb.nodes[1].runnable == RunnableId{1});
  CHECK(pb.nodes[2].frame == 1);
  CHECK(pb.nodes[2].frameNs == 10 * kMs);
  CHECK(pb.nodes[3].boundaryNs == 20 * kMs);
  CHECK(pb.nodeOf(1, 1) == 3);
  CHECK(pb.latestStart[1] == 7 * kMs);  // B ends by the period
  CHECK(pb.latestStart[0] == 5 * kMs);  // A ends by B's latest start
  CHECK(pb.topLevel[1] == 2 * kMs);
  CHECK(touchedResources(pb, b.g.hyperepochs[0]) == std::vector<std::uint32_t>{0});
}

TEST_CASE("computeLevels refuses a dependency cycle", "[schedule]") {
  GraphBuilder b;
  b.cpus(1);
  const auto h = b.hyperepoch("H", 10 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs);
  const auto a = b.runnable("A", e, kMs, {b.type("CPU")});
  const auto c = b.runnable("C", e, kMs, {b.type("CPU")}, {a});
  b[a].dependencies = {c};
  const GraphModel model = modelGraph(b.g);
  IdVector<RunnableId, std::uint32_t> localOf(2, kNone);
  auto pb = buildProblem(model, HyperepochId{0}, localOf);
  REQUIRE_FALSE(pb.has_value());
  CHECK(pb.error().message == "hyperepoch 'H': the dependency graph has a cycle");
}

TEST_CASE("checkGraph refuses durations whose sums could overflow", "[schedule]") {
  GraphBuilder b = independent(2, {1, 2});
  CHECK(checkGraph(b.g).has_value());
  b[RunnableId{0}].wcetNs = std::numeric_limits<std::int64_t>::max() / 2;
  auto r = checkGraph(b.g);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kBadParameter);
  CHECK_THAT(r.error().message, Catch::Contains("too large to schedule"));
}

TEST_CASE("the list scheduler runs independent work side by side and chains in order", "[schedule]") {
  GraphBuilder b = independent(2, {4, 4, 2});
  b.runnable("After", EpochId{0}, kMs, {b.type("CPU")}, ids<RunnableId>({0, 1}));
  const GraphModel model = modelGraph(b.g);
  const Problem pb = problemOf(model);
  std::vector<FreeTime> free(b.g.resources.size());
  const Attempt a = listSchedule(pb, Rule{0, false}, free);
  REQUIRE(a.placements.size() == 4);
  CHECK(a.placements[0].startNs == 0);
  CHECK(a.placements[1].startNs == 0);
  CHECK(a.placements[0].resources != a.placements[1].resources);
  CHECK(a.placements[3].startNs == 4 * kMs);  // after both of its predecessors
  CHECK(a.lengthNs == 6 * kMs);
  CHECK(a.boundaryMisses == 0);
  // The time-driven rule places the same way here.
  std::vector<FreeTime> free2(b.g.resources.size());
  CHECK(listSchedule(pb, Rule{0, true}, free2).lengthNs == 6 * kMs);
}

TEST_CASE("the list scheduler never breaks a stream's order: stuck rather than forced; the scheduler finds one",
          "[schedule][gpu]") {
  // Stream X: Sub1 goes first (its successor Long is urgent), but its work W1 waits for W2, the
  // work of Sub2 on the same stream: queued behind W1, W2 would never run, so after Sub1 the rule
  // is stuck (it once forced Sub2 past the stream's order). Submitting Sub2 first works, which the
  // parser's orderStreams states and, without it, the scheduler's search finds. Stream Y, after
  // that: Sub3 and Sub4 keep Y's order (the second placed only after the first one's work).
  GraphBuilder b;
  const auto cpus = b.cpus(1);
  const auto gpu = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto x = b.stream("X", gpu);
  const auto y = b.stream("Y", gpu);
  const auto h = b.hyperepoch("H", 100 * kMs);
  const auto e = b.epoch("E", h, 100 * kMs);
  const auto sub1 = b.runnable("Sub1", e, kMs, {b.instance(cpus[0]), b.instance(x)});
  const auto sub2 = b.runnable("Sub2", e, kMs, {b.instance(cpus[0]), b.instance(x)});
  const auto w2 = b.runnable("W2", e, kMs, {b.instance(gpu)}, {sub2});
  const auto w1 = b.runnable("W1", e, kMs, {b.instance(gpu)}, {sub1, w2});
  b.runnable("Long", e, 50 * kMs, {b.instance(cpus[0])}, {sub1});
  const auto sub3 = b.runnable("Sub3", e, kMs, {b.instance(cpus[0]), b.instance(y)}, {w1});
  const auto w3 = b.runnable("W3", e, kMs, {b.instance(gpu)}, {sub3});
  const auto sub4 = b.runnable("Sub4", e, kMs, {b.instance(cpus[0]), b.instance(y)}, {w1});
  const auto w4 = b.runnable("W4", e, kMs, {b.instance(gpu)}, {sub4});
  for (auto [s, w] : {std::pair{sub1, w1}, std::pair{sub2, w2}, std::pair{sub3, w3}, std::pair{sub4, w4}}) {
    b[s].kind = RunnableKind::kSubmitter;
    b[s].submits = w;
    b[w].kind = RunnableKind::kSubmittee;
    b[w].submittedBy = s;
  }
  const GraphModel model = modelGraph(b.g);
  const Problem pb = problemOf(model);
  auto node = [&](RunnableId r) {
    for (std::uint32_t n = 0; n < pb.nodes.size(); ++n)
      if (pb.nodes[n].runnable == r) return n;
    FAIL("no node for a runnable");
    return 0u;
  };
  for (const bool timed : {false, true}) {
    CAPTURE(timed);
    std::vector<FreeTime> free(b.g.resources.size());
    const Attempt a = listSchedule(pb, Rule{0, timed}, free);
    REQUIRE(a.stuck);
    CHECK(a.abandoned);
    CHECK(a.stuckAt == node(sub2));
  }
  // Verified: with every rule stuck, the search from no schedule at all finds Sub2 first.
  const Schedule s = tactus::compiler::test::scheduleOk(b.g);
  auto one = [&](RunnableId r) { return *tactus::compiler::test::instancesOf(s, r).at(0); };
  CHECK(one(sub2).endNs <= one(sub1).startNs);
  CHECK(one(w2).endNs <= one(w1).startNs);
  // On Y, the work of whichever submitter comes second runs after the first one's work.
  const bool threeFirst = one(sub3).startNs < one(sub4).startNs;
  CHECK((threeFirst ? one(w3) : one(w4)).endNs <= (threeFirst ? one(w4) : one(w3)).startNs);
}

TEST_CASE("bounds: gcd, rounding, topological order, heads and tails", "[schedule]") {
  CHECK(gcd64(0, 6) == 6);
  CHECK(gcd64(12, 18) == 6);
  CHECK(roundUp(7, 3) == 9);
  CHECK(roundUp(9, 3) == 9);
  CHECK(roundUp(7, 1) == 7);
  CHECK(roundUp(0, 5) == 0);
  // 0 -> 1 -> 3, 0 -> 2 -> 3
  const std::vector<std::vector<std::uint32_t>> succs{{1, 2}, {3}, {3}, {}};
  const std::vector<std::vector<std::uint32_t>> preds{{}, {0}, {0}, {1, 2}};
  const auto order = topologicalOrder(succs, {0, 1, 1, 2});
  CHECK(order == std::vector<std::uint32_t>{0, 1, 2, 3});
  const std::vector<std::int64_t> p{1, 5, 2, 1}, release{0, 0, 3, 0};
  CHECK(longestHeads(order, preds, release, p) == std::vector<std::int64_t>{0, 1, 3, 6});
  CHECK(longestTails(order, succs, p) == std::vector<std::int64_t>{6, 1, 1, 0});
  // A cycle leaves its nodes out of the order.
  CHECK(topologicalOrder({{1}, {0}, {}}, {1, 1, 0}) == std::vector<std::uint32_t>{2});
}

TEST_CASE("WaterLevel: t + ceil(work / m) on free resources, higher behind busy ones", "[schedule]") {
  WaterLevel w;
  std::vector<std::int64_t> avail(3, 0);
  w.reset(avail);
  w.lowerTo(10);
  CHECK(w.level(10, 7) == 10 + 3);  // ceil(7 / 3)
  w.lowerTo(0);
  CHECK(w.level(0, 7) == 3);
  CHECK(w.level(0, 0) == 0);
  // Resources free from 0, 10 and 100: 20 units of work from t = 0 fill the first two to 15.
  std::vector<std::int64_t> busy{100, 0, 10};
  w.reset(busy);
  w.lowerTo(0);
  CHECK(w.level(0, 20) == 15);
  CHECK(w.level(0, 200) == 104);  // all three: (200 + 110) / 3 rounded up
}

TEST_CASE("energyFits: a window too small or an overloaded interval is infeasible", "[schedule]") {
  std::vector<std::int64_t> t1, t2;
  // Two jobs of 5 in [0, 10) fit one resource; three do not.
  CHECK(energyFits({{0, 10, 5}, {0, 10, 5}}, 1, t1, t2));
  CHECK_FALSE(energyFits({{0, 10, 5}, {0, 10, 5}, {0, 10, 5}}, 1, t1, t2));
  CHECK(energyFits({{0, 10, 5}, {0, 10, 5}, {0, 10, 5}}, 2, t1, t2));
  CHECK_FALSE(energyFits({{0, 4, 5}}, 1, t1, t2));
  // A capacity beyond int64 saturates instead of wrapping (UBSan would report the multiply).
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  CHECK(energyFits({{0, big, 1}, {0, big, 1}}, 4, t1, t2));
}

TEST_CASE("branch and bound beats the list schedule on a tiny problem and proves it optimal", "[schedule]") {
  // 3, 3, 2, 2, 2 on two CPUs: longest first gives 3+2+2 = 7; {3, 3} and {2, 2, 2} give 6.
  GraphBuilder b = independent(2, {3, 3, 2, 2, 2});
  const GraphModel model = modelGraph(b.g);
  const Problem pb = problemOf(model);
  std::vector<FreeTime> free(b.g.resources.size());
  const Attempt first = listSchedule(pb, Rule{0, false}, free);
  CHECK(first.lengthNs == 7 * kMs);
  const SProblem sp = buildSearchProblem(pb, b.g.hyperepochs[0].periodNs);
  CHECK(sp.grain == kMs);
  CHECK(rootLowerBound(sp, first.lengthNs) == 6 * kMs);  // 12 ms of work on two CPUs
  SearchLimits lim;
  lim.steps = 10000;
  const SearchResult r = branchAndBound(sp, first, lim);
  REQUIRE(r.improved);
  CHECK(r.attempt.lengthNs == 6 * kMs);
  CHECK(r.exhausted);
  CHECK(r.lowerBoundNs == 6 * kMs);
  CHECK(r.steps > 0);
  // The same with two workers: the same schedule (pieces and rounds do not depend on -j).
  lim.workers = 2;
  const SearchResult r2 = branchAndBound(sp, first, lim);
  REQUIRE(r2.improved);
  for (std::size_t i = 0; i < r.attempt.placements.size(); ++i) {
    CHECK(r.attempt.placements[i].startNs == r2.attempt.placements[i].startNs);
    CHECK(r.attempt.placements[i].resources == r2.attempt.placements[i].resources);
  }
}

TEST_CASE("fusion fuses a chain of short CPU runnables and splits the schedule back", "[schedule]") {
  GraphBuilder b;
  b.cpus(2);
  const auto h = b.hyperepoch("H", 10 * kMs);
  const auto e = b.epoch("E", h, 10 * kMs);
  const auto a = b.runnable("A", e, 100000, {b.type("CPU")});
  const auto m = b.runnable("M", e, 200000, {b.type("CPU")}, {a});
  const auto z = b.runnable("Z", e, 300000, {b.type("CPU")}, {m});
  const auto big = b.runnable("Big", e, 2 * kMs, {b.type("CPU")}, {z});  // above the threshold
  const GraphModel model = modelGraph(b.g);
  const Problem pb = problemOf(model);
  FusedProblem fp = fuseChains(pb, model.wcet, 500000);
  REQUIRE(fp.chains.size() == 1);
  CHECK(fp.chains[0] == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(fp.pb.runnables.size() == 2);  // the chain's head and Big
  CHECK(fp.wcet[a] == 600000);         // the chain's sum
  CHECK(fp.offsetNs[2] == 300000);
  REQUIRE(computeLevels(fp.pb, b.g.hyperepochs[0]).has_value());
  std::vector<FreeTime> free(b.g.resources.size());
  const Attempt fused = listSchedule(fp.pb, Rule{0, false}, free);
  const Attempt split = splitFused(pb, fp, fused);
  REQUIRE(split.placements.size() == 4);
  CHECK(split.placements[0].startNs == 0);
  CHECK(split.placements[1].startNs == 100000);
  CHECK(split.placements[2].startNs == 300000);
  CHECK(split.placements[3].startNs == 600000);
  CHECK(split.placements[0].resources == split.placements[2].resources);  // one core for the chain
  CHECK(split.placements[0].seq < split.placements[1].seq);
  CHECK(split.lengthNs == 2600000);
  (void)big;
  // Nothing below a threshold of 100us: no chain.
  CHECK(fuseChains(pb, model.wcet, 100000).chains.empty());

  ScheduleOptions o;
  o.fusion = Fusion::kOff;
  CHECK_FALSE(fusionApplies(o, 100000));
  o.fusion = Fusion::kOn;
  CHECK(fusionApplies(o, 1));
  o.fusion = Fusion::kAuto;
  CHECK_FALSE(fusionApplies(o, kSearchNodeLimit));
  CHECK(fusionApplies(o, kSearchNodeLimit + 1));
}

TEST_CASE("runWorkers carries an exception of any worker back to the caller", "[schedule]") {
  std::atomic<int> ran{0};
  runWorkers(3, [&] { ++ran; });
  CHECK(ran == 3);
  std::atomic<int> calls{0};
  auto failing = [&] {
    if (calls++ == 1) throw std::bad_alloc();
  };
  CHECK_THROWS_AS(runWorkers(4, failing), std::bad_alloc);  // without it: std::terminate
  CHECK(calls == 4);                                        // the others ran to their end
  CHECK_THROWS_AS(runWorkers(1, [] { throw std::runtime_error("x"); }), std::runtime_error);
}
