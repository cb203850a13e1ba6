// Helpers shared by the scheduler's end-to-end tests (scheduler_test.cpp, search_test.cpp): schedule
// and verify a graph, look up instances, and build random graphs with mutexes and GPU work.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph.hpp"
#include "graph_builder.hpp"
#include "scheduler.hpp"
#include "tactus/core/verify.hpp"

namespace tactus::compiler::test {

inline constexpr std::int64_t kMs = 1000000;

inline Schedule scheduleOk(const Graph& g, const ScheduleOptions& opt = {}) {
  auto s = scheduleGraph(g, opt);
  if (!s) FAIL("scheduleGraph failed: " << s.error().message);
  const VerifyReport v = verifySchedule(*s, VerifyOptions{opt.allowOverlength});
  for (const auto& e : v.errors) UNSCOPED_INFO(e);
  CHECK(v.ok());
  return std::move(s).value();
}

inline std::vector<const InstanceInfo*> instancesOf(const Schedule& s, RunnableId runnable) {
  std::vector<const InstanceInfo*> out;
  for (const auto& i : s.instances) {
    if (i.runnable == runnable) out.push_back(&i);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->frame < b->frame; });
  return out;
}

inline std::int64_t lengthOf(const Schedule& s) {
  std::int64_t l = 0;
  for (const auto& i : s.instances) l = std::max(l, i.endNs);
  return l;
}

// A random graph on `cpus` CPUs with a mutex, zero WCETs, and submitter/submittee pairs on two
// GPUs, for determinism and validity checks (small enough that every priority rule runs).
inline GraphBuilder randomGraph(int runnables, int cpus, unsigned seed) {
  GraphBuilder b;
  b.cpus(cpus);
  const ResourceId mutex = b.resource("LOCK", "MUTEX", ResourceKind::kMutex);
  const auto gpu0 = b.resource("GPU0", "GPU", ResourceKind::kGpu);
  const auto gpu1 = b.resource("GPU1", "GPU", ResourceKind::kGpu);
  b.stream("STREAM0", gpu0);
  b.stream("STREAM1", gpu1);
  const HyperepochId h = b.hyperepoch("Main", 1000 * kMs);
  const EpochId e = b.epoch("E", h, 500 * kMs, 2);
  std::mt19937 rng(seed);
  for (int i = 0; i < runnables; ++i) {
    std::vector<ResourceRequest> req{b.type("CPU")};
    if (rng() % 10 == 0) req.push_back(b.instance(mutex));
    const bool submits = i + 1 < runnables && rng() % 8 == 0;
    if (submits) req.push_back(b.type("CUDA_STREAM"));
    std::vector<RunnableId> deps;
    for (int k = 0; k < 2 && i > 0; ++k) {
      RunnableId d{static_cast<std::uint32_t>(rng() % static_cast<unsigned>(i))};
      if (b[d].kind == RunnableKind::kSubmitter) d = b[d].submits;  // wait for the GPU work
      if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
    }
    const RunnableId r =
        b.runnable("R" + std::to_string(i), e, static_cast<std::int64_t>(rng() % 1000) * 1000, req, deps);
    b[r].priority = 1 + rng() % 10;
    if (submits) {
      const RunnableId gpu = b.runnable("R" + std::to_string(i) + "Gpu", e,
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

}  // namespace tactus::compiler::test
