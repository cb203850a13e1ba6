// Iterated list scheduling with perturbed priorities, in rounds independent of -j.
#include "schedule/perturbed_search.hpp"

#include <algorithm>
#include <atomic>
#include <utility>

#include "schedule/bounds.hpp"
#include "schedule/free_time.hpp"
#include "schedule/list_scheduler.hpp"
#include "schedule/workers.hpp"

namespace tactus::compiler::schedule {

std::uint64_t splitMix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Improvement for hyperepochs too large for the tree: iterated list scheduling with perturbed
// priorities (latest start plus noise, or the best schedule's start order plus noise), in
// rounds of a fixed number of runs merged in run order, so a step budget is -j independent.
SearchResult perturbedLists(const Problem& pb, const SProblem& sp, const Attempt& first,
                            const std::vector<std::uint32_t>& touched, const SearchLimits& lim) {
  SearchResult res;
  res.lowerBoundNs = rootLowerBound(sp, first.lengthNs);
  Attempt best = first;
  Score bestScore = scoreOf(first, sp.periodNs);
  std::int64_t meanWcet = 1;
  {
    std::int64_t sum = 0;
    for (std::int64_t v : sp.p) sum += v;
    if (sp.n > 0) meanWcet = std::max<std::int64_t>(1, sum / static_cast<std::int64_t>(sp.n));
  }
  const std::uint64_t runSteps = std::max<std::size_t>(1, sp.n);
  constexpr std::uint64_t kRunsPerRound = 8;
  std::uint64_t runIndex = 0;
  while (true) {
    if (bestScore.clean() && bestScore.lengthNs <= res.lowerBoundNs) {
      res.exhausted = true;
      break;
    }
    if (lim.timed && Clock::now() >= lim.deadline) break;
    std::uint64_t runs = kRunsPerRound;
    if (lim.steps > 0) {
      if (res.steps >= lim.steps) break;
      runs = std::min<std::uint64_t>(runs, (lim.steps - res.steps + runSteps - 1) / runSteps);
    }
    std::vector<Attempt> out(runs);
    std::vector<char> ran(runs, 0);
    std::atomic<std::size_t> nextIdx{0};
    const Attempt& ref = best;
    auto work = [&] {
      std::vector<FreeTime> free(pb.graph->resources.size());
      std::vector<std::int64_t> keys(sp.n);
      for (std::size_t k = nextIdx++; k < runs; k = nextIdx++) {
        if (lim.timed && Clock::now() >= lim.deadline) break;
        const std::uint64_t it = runIndex + k;
        std::uint64_t rng = splitMix(it + 1);
        const std::int64_t amp = meanWcet << ((it / 2) % 4);
        for (std::uint32_t i = 0; i < sp.n; ++i) {
          rng = splitMix(rng);
          const std::int64_t noise = static_cast<std::int64_t>(rng % static_cast<std::uint64_t>(amp));
          keys[i] = ((it & 1) != 0 ? ref.placements[i].startNs : sp.key[i]) + noise;
        }
        for (std::uint32_t r : touched) free[r].clear();
        Rule rule;
        rule.keyOverride = &keys;
        out[k] = listSchedule(pb, rule, free);
        ran[k] = 1;
      }
    };
    const int threads = std::min<int>(lim.workers, static_cast<int>(runs));
    runWorkers(threads, work);
    for (std::uint64_t k = 0; k < runs; ++k) {
      if (!ran[k]) continue;
      res.steps += runSteps;
      if (out[k].abandoned) continue;  // stuck: no order of the streams' submissions
      const Score s = scoreOf(out[k], sp.periodNs);
      if (s < bestScore) {
        bestScore = s;
        best = std::move(out[k]);
        res.improved = true;
        res.secondsToBest = std::chrono::duration<double>(Clock::now() - lim.started).count();
      }
    }
    runIndex += runs;
    if (lim.onRound) lim.onRound(bestScore.lengthNs, res.lowerBoundNs, res.steps);  // progress
  }
  if (res.improved) res.attempt = std::move(best);
  return res;
}

}  // namespace tactus::compiler::schedule
