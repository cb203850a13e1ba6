// Tests of the schedule verifier: a valid schedule passes; every corruption it knows is caught.
#include <catch2/catch.hpp>

#include <functional>

#include "id_list.hpp"
#include "sample_schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using tactus::test::ids;

using namespace tactus;

namespace {

constexpr std::int64_t kMs = 1000000;

// Applies a corruption to the sample and returns the verifier's joined messages.
std::string errorsAfter(const std::function<void(Schedule&)>& corrupt) {
  Schedule s = test::sampleSchedule();
  corrupt(s);
  VerifyReport report = verifySchedule(s);
  std::string all;
  for (const std::string& e : report.errors) all += e + "\n";
  return all;
}

}  // namespace

TEST_CASE("verify accepts the valid sample schedule", "[verify]") {
  VerifyReport report = verifySchedule(test::sampleSchedule());
  std::string first = report.errors.empty() ? std::string() : report.errors.front();
  INFO(first);
  CHECK(report.ok());
  CHECK(report.warnings.empty());
  CHECK(verifyScheduleResult(test::sampleSchedule()).has_value());
}

TEST_CASE("verify catches each broken invariant", "[verify]") {
  struct Case {
    const char* name;
    std::function<void(Schedule&)> corrupt;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"overlap on a resource",
       [](Schedule& s) {
         s.instances[3].startNs = kMs / 2;
         s.instances[3].endNs = kMs / 2 + kMs;
         s.timelines[1].instances = ids<InstanceId>({3, 1, 6, 8});
       },
       "overlaps or precedes"},
      {"timeline out of order",
       [](Schedule& s) {
         s.timelines[0].instances = ids<InstanceId>({4, 0, 5, 9});
       },
       "overlaps or precedes"},
      {"start before a dependency ends",
       [](Schedule& s) {
         s.instances[4].startNs = 2 * kMs + 500000;
         s.instances[4].endNs = 3 * kMs + 500000;
       },
       "before its dependency runnable 'Client1.G' frame 0"},
      {"start before StartTime", [](Schedule& s) { s.runnables[0].startTimeNs = kMs / 2; },
       "before its release + StartTime"},
      {"start before frame release",
       [](Schedule& s) {
         s.instances[8].startNs = 4 * kMs;
         s.instances[8].endNs = 5 * kMs;
         s.timelines[1].instances = ids<InstanceId>({1, 3, 8, 6});
       },
       "before its release"},
      {"epoch boundary crossed",
       [](Schedule& s) {
         s.instances[9].startNs = 9 * kMs + 500000;
         s.instances[9].endNs = 10 * kMs + 500000;
       },
       "after epoch 'E' releases its next frame"},
      {"schedule longer than the period",
       [](Schedule& s) {
         s.hyperepochs[0].periodNs = 8500000;
         s.epochs[0].periodNs = 4250000;
       },
       "exceeds its period"},
      {"wrong duration", [](Schedule& s) { s.instances[0].endNs = 2 * kMs; }, "but its WCET is"},
      {"missing dependency edge", [](Schedule& s) { s.instances[1].dependencies.clear(); },
       "other instances than its runnable's dependencies"},
      {"dependency from another frame", [](Schedule& s) { s.instances[6].dependencies = ids<InstanceId>({0}); },
       "other instances than its runnable's dependencies"},
      {"instance missing",
       [](Schedule& s) {
         s.instances.pop_back();
         s.timelines[0].instances.pop_back();
         s.timelines[3].instances.pop_back();
       },
       "frame 1 is not scheduled"},
      {"instance twice", [](Schedule& s) { s.instances[5].frame = 0; }, "is scheduled twice"},
      {"frame beyond the epoch", [](Schedule& s) { s.instances[5].frame = 2; }, "its epoch has only 2 frames"},
      {"timeline missing an instance", [](Schedule& s) { s.timelines[2].instances = ids<InstanceId>({2}); },
       "lists 1 instances but 2 hold it"},
      {"timeline lists a stranger",
       [](Schedule& s) {
         s.timelines[2].instances = ids<InstanceId>({2, 6});
       },
       "which does not hold it"},
      {"resource without timeline", [](Schedule& s) { s.timelines.pop_back(); }, "is held but has no timeline"},
      {"resource index out of range", [](Schedule& s) { s.instances[0].resources = ids<ResourceId>({99}); },
       "resource 99 which does not exist"},
      {"runnable index out of range", [](Schedule& s) { s.instances[0].runnable = RunnableId{99}; },
       "runnable 99 which does not exist"},
      {"dependency index out of range", [](Schedule& s) { s.runnables[0].dependencies = ids<RunnableId>({42}); },
       "runnable 42 which does not exist"},
      {"cpu runnable on a gpu", [](Schedule& s) { s.instances[0].resources = ids<ResourceId>({2}); },
       "needs a CPU first"},
      {"two hardware resources",
       [](Schedule& s) {
         s.instances[0].resources = ids<ResourceId>({0, 1});
       },
       "second hardware resource"},
      {"another client's local resource",
       [](Schedule& s) {
         s.instances[0].resources = ids<ResourceId>({0, 4});
       },
       "local to client 'Client1'"},
      {"submittee on the wrong device",
       [](Schedule& s) {
         s.resources.push_back({"GPU1", "GPU", ResourceKind::kGpu, kNone, HyperepochId{0}, kNone, kNone, kNone});
         s.hyperepochs[0].resources.push_back(ResourceId{5});
         s.instances[2].resources[0] = ResourceId{5};
         s.timelines[2].instances = ids<InstanceId>({7});
         s.timelines.push_back({ResourceId{5}, ids<InstanceId>({2})});
       },
       "but its submitter's resource 'STREAM0' maps to resource 'GPU0'"},
      {"DLA handle mapped to a GPU", [](Schedule& s) { s.resources[4].kind = ResourceKind::kDlaHandle; },
       "is a DLA handle that does not map to a DLA"},
      {"PVA stream whose VPU is a DLA",
       [](Schedule& s) {
         s.resources[2].kind = ResourceKind::kDla;
         s.resources[4].kind = ResourceKind::kPvaStream;
       },
       "is a PVA stream that does not map to a VPU"},
      {"submittee holding another stream than its submitter's",
       [](Schedule& s) {
         s.resources.push_back({"STREAM1", "CUDA_STREAM", ResourceKind::kCudaStream, ClientId{1}, HyperepochId{0},
                                kNone, ResourceId{2}, kNone});
         s.hyperepochs[0].resources.push_back(ResourceId{5});
         s.instances[2].resources = ids<ResourceId>({2, 5});
         s.timelines[4].instances = ids<InstanceId>({1, 6, 7});
         s.timelines.push_back({ResourceId{5}, ids<InstanceId>({2})});
       },
       "holds resource 'STREAM1', not its submitter's resource 'STREAM0'"},
      {"unpaired submitter", [](Schedule& s) { s.runnables[2].submittedBy = kNone; }, "without a matching submittee"},
      {"submittee not depending on submitter", [](Schedule& s) { s.runnables[2].dependencies.clear(); },
       "does not depend on its submitter"},
      {"alias member scheduled alone", [](Schedule& s) { s.instances[3].runnable = RunnableId{5}; },
       "round-robin member but is scheduled on its own"},
      {"alias group without its member", [](Schedule& s) { s.runnables[4].steps = {kNone}; },
       "names a round-robin group that does not list it"},
      {"dependency on an alias member", [](Schedule& s) { s.runnables[0].dependencies = ids<RunnableId>({5}); },
       "depends on round-robin member"},
      {"dependency across epochs",
       [](Schedule& s) {
         s.epochs.push_back({"F", HyperepochId{0}, 10 * kMs, 1});
         s.hyperepochs[0].epochs.push_back(EpochId{1});
         s.runnables.push_back(s.runnables[0]);
         s.runnables.back().name = "X";
         s.runnables.back().epoch = EpochId{1};
         s.runnables.back().dependencies = ids<RunnableId>({0});
       },
       "of another epoch"},
      {"two clients of one name", [](Schedule& s) { s.clients.push_back(s.clients[0]); },
       "client 'Client0' is listed twice"},
      {"two runnables of one name in a client", [](Schedule& s) { s.runnables[3].name = s.runnables[0].name; },
       "runnable 'Client0.A' is listed twice"},
      {"two resources of one name", [](Schedule& s) { s.resources[1].name = s.resources[0].name; },
       "resource 'CPU0' is listed twice"},
      {"priority out of range", [](Schedule& s) { s.runnables[0].priority = 11; }, "outside 1..10"},
      {"stream limit exceeded", [](Schedule& s) { s.resources[2].streamLimit = 0; }, "above its limit of 0"},
      {"stream mapped to a cpu", [](Schedule& s) { s.resources[4].device = ResourceId{0}; }, "does not map to a GPU"},
      {"frames that do not fit the period", [](Schedule& s) { s.epochs[0].frames = 3; },
       "do not fit its hyperepoch's period"},
      {"epoch not listed by its hyperepoch", [](Schedule& s) { s.hyperepochs[0].epochs.clear(); },
       "is not listed by its hyperepoch"},
      {"resource of another hyperepoch",
       [](Schedule& s) {
         s.hyperepochs.push_back({"H2", 10 * kMs, kNoDuration, {}, {}});
         s.resources[3].hyperepoch = HyperepochId{1};
         s.hyperepochs[0].resources = ids<ResourceId>({0, 1, 2, 4});
         s.hyperepochs[1].resources = ids<ResourceId>({3});
       },
       "holds resource 'MUTEX0' of another hyperepoch"},
      {"cycle through zero-length instances",
       [](Schedule& s) {
         // R (no deps) placed before A on CPU0 at time 0 with zero length, and A made to depend on... a
         // timeline order that contradicts a dependency: C waits for G, put C before G's submitter B on CPU1.
         s.runnables[3].wcetNs = 0;
         s.runnables[1].wcetNs = 0;
         s.runnables[0].wcetNs = 0;
         s.runnables[2].wcetNs = 0;
         for (auto& in : s.instances) {
           in.startNs = 5 * kMs * in.frame;
           in.endNs = in.startNs + (in.runnable == RunnableId{4} ? kMs : 0);
         }
         s.instances[4].resources = ids<ResourceId>({1, 3});  // C on CPU1, before B, though C depends (via G) on B
         s.timelines[0].instances = ids<InstanceId>({0, 5, 9});
         s.timelines[1].instances = ids<InstanceId>({4, 1, 3, 6, 8});
       },
       "form a cycle"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string errors = errorsAfter(c.corrupt);
    CHECK_THAT(errors, Catch::Contains(c.expect));
  }
}

TEST_CASE("verify reports a missed deadline as a warning, not an error", "[verify]") {
  Schedule s = test::sampleSchedule();
  s.runnables[3].deadlineNs = 3 * kMs;
  VerifyReport report = verifySchedule(s);
  CHECK(report.ok());
  REQUIRE(report.warnings.size() == 2);
  CHECK_THAT(report.warnings[0], Catch::Contains("runnable 'Client0.C' frame 0 misses its deadline"));
}

TEST_CASE("verify accepts an overlong schedule only when told to", "[verify]") {
  Schedule s = test::sampleSchedule();
  s.instances[9].startNs = 9 * kMs + 200000;
  s.instances[9].endNs = 10 * kMs + 200000;
  s.epochs[0].periodNs = 5 * kMs;
  s.runnables[3].deadlineNs = kNoDuration;
  // frame 1 of E now crosses both its epoch boundary and the hyperepoch period.
  CHECK_FALSE(verifySchedule(s).ok());
  auto result = verifyScheduleResult(s);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == ErrorCode::kVerification);
  CHECK_THAT(result.error().message, Catch::Contains("hyperepoch 'H': schedule length"));
}

TEST_CASE("with allowOverlength the last frame may cross the period, earlier frames may not", "[verify]") {
  Schedule s = test::sampleSchedule();
  s.hyperepochs[0].periodNs = 8500000;
  s.epochs[0].periodNs = 4250000;  // frame 1 now ends at 9 ms, past the 8.5 ms period
  VerifyOptions lenient;
  lenient.allowOverlength = true;
  VerifyReport report = verifySchedule(s, lenient);
  CHECK(report.ok());
  CHECK_FALSE(report.warnings.empty());
  CHECK_FALSE(verifySchedule(s).ok());
  // Frame 0 crossing its boundary into frame 1 stays an error (C frame 0 moved past 4.25 ms).
  s.instances[4].startNs = 4 * kMs;
  s.instances[4].endNs = 5 * kMs;
  VerifyReport strict = verifySchedule(s, lenient);
  std::string all;
  for (const std::string& e : strict.errors) all += e + "\n";
  CHECK_THAT(all, Catch::Contains("runnable 'Client0.C' frame 0 ends at 5ms, after epoch 'E' releases its next frame"));
}

namespace {

// One client C on CPU0 whose submitters S1 and S2 share stream S: S2 depends on S1, so S1 submits
// first and S runs W1 before W2, yet W1 depends on W2. `lengthNs` is every runnable's WCET; the
// plan runs them in that order, back to back.
//
//   S:    S1 -> W1 -> S2 -> W2      (submission order)
//   deps: S1 -> S2, W2 -> W1        (W1 waits for work queued behind it)
Schedule gpuWaitCycle(std::int64_t lengthNs) {
  Schedule s;
  s.name = "Cycle";
  s.identifier = 9;
  s.clients = {{"C"}};
  const HyperepochId h{0};
  s.resources = {
      {"CPU0", "CPU", ResourceKind::kCpu, kNone, h, 0, kNone, kNone},
      {"GPU0", "GPU", ResourceKind::kGpu, kNone, h, kNone, kNone, 4},
      {"S", "CUDA_STREAM", ResourceKind::kCudaStream, ClientId{0}, h, kNone, ResourceId{1}, kNone},
  };
  s.hyperepochs = {{"H", 10 * kMs, kNoDuration, ids<ResourceId>({0, 1, 2}), {EpochId{0}}}};
  s.epochs = {{"E", h, 10 * kMs, 1}};
  auto runnable = [&](std::string name, RunnableKind kind, std::initializer_list<std::uint32_t> deps) {
    RunnableInfo r;
    r.name = std::move(name);
    r.client = ClientId{0};
    r.epoch = EpochId{0};
    r.kind = kind;
    r.wcetNs = lengthNs;
    r.dependencies = ids<RunnableId>(deps);
    return r;
  };
  s.runnables = {
      runnable("S1", RunnableKind::kSubmitter, {}),      // 0
      runnable("W1", RunnableKind::kSubmittee, {0, 3}),  // 1
      runnable("S2", RunnableKind::kSubmitter, {0}),     // 2
      runnable("W2", RunnableKind::kSubmittee, {2}),     // 3
  };
  s.runnables[0].submits = RunnableId{1};
  s.runnables[1].submittedBy = RunnableId{0};
  s.runnables[2].submits = RunnableId{3};
  s.runnables[3].submittedBy = RunnableId{2};
  const std::initializer_list<std::uint32_t> hardware = {0, 1, 0, 1};  // CPU0 or GPU0
  for (std::uint32_t r = 0; r < 4; ++r) {
    std::vector<InstanceId> deps;
    for (RunnableId d : s.runnables[RunnableId{r}].dependencies) deps.push_back(InstanceId{index(d)});
    s.instances.push_back(
        {RunnableId{r}, 0, r * lengthNs, (r + 1) * lengthNs, ids<ResourceId>({hardware.begin()[r], 2}), deps});
  }
  s.timelines = {{ResourceId{0}, ids<InstanceId>({0, 2})},
                 {ResourceId{1}, ids<InstanceId>({1, 3})},
                 {ResourceId{2}, ids<InstanceId>({0, 1, 2, 3})}};
  return s;
}

}  // namespace

TEST_CASE("verify refuses a schedule file whose stream order and dependencies form a GPU wait cycle, naming it",
          "[verify][gpu]") {
  // Zero-length runnables all at 0 meet every timing rule: only the cycle is left to refuse.
  auto zero = readSchedule(writeSchedule(gpuWaitCycle(0)), "cycle.tsched");
  REQUIRE(zero.has_value());
  const VerifyReport report = verifySchedule(*zero);
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0] ==
        "dependencies and timeline order form a cycle: runnable 'C.W1' frame 0 -> runnable 'C.S2' frame 0 (after it "
        "on resource 'S') -> runnable 'C.W2' frame 0 (dependency) -> runnable 'C.W1' frame 0 (dependency); the "
        "runtime would wait forever");
  // With lengths no plan meets the timing rules either: W1 runs before W2, which it waits for.
  auto timed = readSchedule(writeSchedule(gpuWaitCycle(kMs)), "cycle.tsched");
  REQUIRE(timed.has_value());
  const VerifyReport late = verifySchedule(*timed);
  REQUIRE_FALSE(late.ok());
  CHECK_THAT(late.errors[0], Catch::Contains("runnable 'C.W1' frame 0 starts at 1ms before its dependency "
                                             "runnable 'C.W2' frame 0 ends at 4ms"));
}
