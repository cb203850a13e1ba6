// A small hand-made schedule that is valid: two clients, CPU, GPU, a stream, a mutex,
// a submitter/submittee pair and a round-robin group, two frames per hyperepoch.
//
//   hyperepoch H (10 ms), epoch E (5 ms, 2 frames); per frame f (release r = 5f ms):
//   CPU0   |A 0-1|        |C 3-4|            A: c0, cpu        C: c0, deps G, holds MUTEX
//   CPU1   |      |B 1-2|  |R 2-3|           B: c1, submitter (deps A) on STREAM
//   GPU0   |            |G 2-3|              G: c1, submittee of B
//   STREAM |      |B|G|                      R: c1, round robin [R1, None]
#pragma once

#include <initializer_list>

#include "id_list.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::test {

inline Schedule sampleSchedule() {
  constexpr std::int64_t kMs = 1000000;
  Schedule s;
  s.name = "Sample";
  s.identifier = 7;
  s.sourceHash = 0x1234;
  s.clients = {{"Client0"}, {"Client1"}};
  const HyperepochId h{0};
  s.resources = {
      {"CPU0", "CPU", ResourceKind::kCpu, kNone, h, 0, kNone, kNone},
      {"CPU1", "CPU", ResourceKind::kCpu, kNone, h, 1, kNone, kNone},
      {"GPU0", "GPU", ResourceKind::kGpu, kNone, h, kNone, kNone, 4},
      {"MUTEX0", "MUTEX", ResourceKind::kMutex, kNone, h, kNone, kNone, kNone},
      {"STREAM0", "CUDA_STREAM", ResourceKind::kCudaStream, ClientId{1}, h, kNone, ResourceId{2}, kNone},
  };
  auto res = [](std::initializer_list<std::uint32_t> numbers) { return ids<ResourceId>(numbers); };
  auto inst = [](std::initializer_list<std::uint32_t> numbers) { return ids<InstanceId>(numbers); };
  s.hyperepochs = {{"H", 10 * kMs, kNoDuration, res({0, 1, 2, 3, 4}), {EpochId{0}}}};
  s.epochs = {{"E", h, 5 * kMs, 2}};
  auto runnable = [&](std::string name, std::uint32_t client, RunnableKind kind, std::int64_t wcet,
                      std::initializer_list<std::uint32_t> deps) {
    RunnableInfo r;
    r.name = std::move(name);
    r.client = ClientId{client};
    r.epoch = EpochId{0};
    r.kind = kind;
    r.wcetNs = wcet;
    for (std::uint32_t d : deps) r.dependencies.push_back(RunnableId{d});
    return r;
  };
  s.runnables = {
      runnable("A", 0, RunnableKind::kCpu, kMs, {}),         // 0
      runnable("B", 1, RunnableKind::kSubmitter, kMs, {0}),  // 1
      runnable("G", 1, RunnableKind::kSubmittee, kMs, {1}),  // 2
      runnable("C", 0, RunnableKind::kCpu, kMs, {2}),        // 3
      runnable("R", 1, RunnableKind::kAliasGroup, kMs, {}),  // 4
      runnable("R1", 1, RunnableKind::kCpu, kMs, {}),        // 5
  };
  s.runnables[1].submits = RunnableId{2};
  s.runnables[2].submittedBy = RunnableId{1};
  s.runnables[3].deadlineNs = 4 * kMs + 500000;
  s.runnables[4].steps = {RunnableId{5}, kNone};
  s.runnables[5].aliasGroup = RunnableId{4};
  // Instances for frames 0 and 1.
  for (std::uint32_t f = 0; f < 2; ++f) {
    std::int64_t r = 5 * kMs * f;
    std::uint32_t base = static_cast<std::uint32_t>(s.instances.size());
    s.instances.push_back({RunnableId{0}, f, r, r + kMs, res({0}), {}});
    s.instances.push_back({RunnableId{1}, f, r + kMs, r + 2 * kMs, res({1, 4}), inst({base})});
    s.instances.push_back({RunnableId{2}, f, r + 2 * kMs, r + 3 * kMs, res({2, 4}), inst({base + 1})});
    s.instances.push_back({RunnableId{4}, f, r + 2 * kMs, r + 3 * kMs, res({1}), {}});
    s.instances.push_back({RunnableId{3}, f, r + 3 * kMs, r + 4 * kMs, res({0, 3}), inst({base + 2})});
  }
  s.timelines = {
      {ResourceId{0}, inst({0, 4, 5, 9})}, {ResourceId{1}, inst({1, 3, 6, 8})}, {ResourceId{2}, inst({2, 7})},
      {ResourceId{3}, inst({4, 9})},       {ResourceId{4}, inst({1, 2, 6, 7})},
  };
  return s;
}

}  // namespace tactus::test
