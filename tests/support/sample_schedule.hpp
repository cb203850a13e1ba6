// A small hand-made schedule that is valid: two clients, CPU, GPU, a stream, a mutex,
// a submitter/submittee pair and a round-robin group, two frames per hyperepoch.
//
//   hyperepoch H (10 ms), epoch E (5 ms, 2 frames); per frame f (release r = 5f ms):
//   CPU0   |A 0-1|        |C 3-4|            A: c0, cpu        C: c0, deps G, holds MUTEX
//   CPU1   |      |B 1-2|  |R 2-3|           B: c1, submitter (deps A) on STREAM
//   GPU0   |            |G 2-3|              G: c1, submittee of B
//   STREAM |      |B|G|                      R: c1, round robin [R1, None]
#pragma once

#include "tactus/core/schedule.hpp"

namespace tactus::test {

inline Schedule sampleSchedule() {
  constexpr std::int64_t kMs = 1000000;
  Schedule s;
  s.name = "Sample";
  s.identifier = 7;
  s.sourceHash = 0x1234;
  s.clients = {{"Client0"}, {"Client1"}};
  s.resources = {
      {"CPU0", "CPU", ResourceKind::kCpu, kNone, 0, 0, kNone, kNone},
      {"CPU1", "CPU", ResourceKind::kCpu, kNone, 0, 1, kNone, kNone},
      {"GPU0", "GPU", ResourceKind::kGpu, kNone, 0, kNone, kNone, 4},
      {"MUTEX0", "MUTEX", ResourceKind::kMutex, kNone, 0, kNone, kNone, kNone},
      {"STREAM0", "CUDA_STREAM", ResourceKind::kCudaStream, 1, 0, kNone, 2, kNone},
  };
  s.hyperepochs = {{"H", 10 * kMs, kNoDuration, {0, 1, 2, 3, 4}, {0}}};
  s.epochs = {{"E", 0, 5 * kMs, 2}};
  auto runnable = [&](std::string name, std::uint32_t client, RunnableKind kind, std::int64_t wcet,
                      std::vector<std::uint32_t> deps) {
    RunnableInfo r;
    r.name = std::move(name);
    r.client = client;
    r.epoch = 0;
    r.kind = kind;
    r.wcetNs = wcet;
    r.dependencies = std::move(deps);
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
  s.runnables[1].submits = 2;
  s.runnables[2].submittedBy = 1;
  s.runnables[3].deadlineNs = 4 * kMs + 500000;
  s.runnables[4].steps = {5, kNone};
  s.runnables[5].aliasGroup = 4;
  // Instances for frames 0 and 1.
  for (std::uint32_t f = 0; f < 2; ++f) {
    std::int64_t r = 5 * kMs * f;
    std::uint32_t base = static_cast<std::uint32_t>(s.instances.size());
    s.instances.push_back({0, f, r, r + kMs, {0}, {}});
    s.instances.push_back({1, f, r + kMs, r + 2 * kMs, {1, 4}, {base}});
    s.instances.push_back({2, f, r + 2 * kMs, r + 3 * kMs, {2, 4}, {base + 1}});
    s.instances.push_back({4, f, r + 2 * kMs, r + 3 * kMs, {1}, {}});
    s.instances.push_back({3, f, r + 3 * kMs, r + 4 * kMs, {0, 3}, {base + 2}});
  }
  s.timelines = {
      {0, {0, 4, 5, 9}}, {1, {1, 3, 6, 8}}, {2, {2, 7}}, {3, {4, 9}}, {4, {1, 2, 6, 7}},
  };
  return s;
}

}  // namespace tactus::test
