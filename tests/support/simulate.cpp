// Synthetic schedules and simulated event logs for tests and benchmarks.
#include "simulate.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"

namespace tactus::report {

Schedule makeSyntheticSchedule(const SyntheticShape& shape) {
  const std::uint32_t n = std::max<std::uint32_t>(1, shape.runnables), cpus = std::max<std::uint32_t>(1, shape.cpus),
                      nc = std::max<std::uint32_t>(1, shape.clients), frames = std::max<std::uint32_t>(1, shape.frames);
  Schedule s;
  s.name = "Synthetic";
  s.identifier = 7;
  for (std::uint32_t c = 0; c < nc; ++c) s.clients.push_back({"Client" + std::to_string(c)});
  for (std::uint32_t k = 0; k < cpus; ++k) {
    ResourceInfo r;
    r.name = "CPU" + std::to_string(k);
    r.type = "CPU";
    r.kind = ResourceKind::kCpu;
    r.hyperepoch = HyperepochId{0};
    r.core = k;
    s.resources.push_back(r);
  }
  // Layers twice as wide as the core count; each runnable waits for one or two of the layer above.
  const std::uint32_t width = 2 * cpus;
  IdVector<RunnableId, std::int64_t> endOf(n, 0), startOf(n, 0);
  std::vector<std::int64_t> cpuFree(cpus, 0);
  for (std::uint32_t r = 0; r < n; ++r) {
    RunnableInfo ri;
    ri.name = "Run" + std::to_string(r);
    ri.client = ClientId{r % nc};
    ri.epoch = EpochId{0};
    ri.wcetNs = 10'000 + static_cast<std::int64_t>((r * 7919u) % 90) * 1'000;
    if (r >= width) {
      ri.dependencies.push_back(RunnableId{r - width});
      if ((r + 1) % width != 0 && r - width + 1 < r) ri.dependencies.push_back(RunnableId{r - width + 1});
    }
    std::int64_t start = cpuFree[r % cpus];
    for (RunnableId d : ri.dependencies) start = std::max(start, endOf[d]);
    startOf[r] = start;
    endOf[r] = start + ri.wcetNs;
    cpuFree[r % cpus] = endOf[r];
    s.runnables.push_back(std::move(ri));
  }
  const std::int64_t length = *std::max_element(endOf.begin(), endOf.end());
  const std::int64_t period = ((length * 5 / 4) / 1'000'000 + 1) * 1'000'000;  // whole ms, 25% slack
  s.epochs.push_back({"Main", HyperepochId{0}, period, frames});
  HyperepochInfo h;
  h.name = "Sim";
  h.periodNs = period * frames;
  for (std::uint32_t k = 0; k < cpus; ++k) h.resources.push_back(ResourceId{k});
  h.epochs.push_back(EpochId{0});
  s.hyperepochs.push_back(h);

  // Instances sorted by (start, creation order); dependencies remapped to sorted ids.
  struct Raw {
    std::uint32_t runnable, frame;
    std::int64_t start;
  };
  std::vector<Raw> raw;
  for (std::uint32_t f = 0; f < frames; ++f)
    for (std::uint32_t r = 0; r < n; ++r) raw.push_back({r, f, startOf[r] + f * period});
  std::vector<std::uint32_t> order(raw.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return raw[a].start < raw[b].start; });
  std::vector<InstanceId> idOf(raw.size());
  for (std::uint32_t k = 0; k < order.size(); ++k) idOf[order[k]] = InstanceId{k};
  s.timelines.resize(cpus);
  for (std::uint32_t k = 0; k < cpus; ++k) s.timelines[k].resource = ResourceId{k};
  for (std::uint32_t k = 0; k < order.size(); ++k) {
    const Raw& x = raw[order[k]];
    InstanceInfo inst;
    inst.runnable = RunnableId{x.runnable};
    inst.frame = x.frame;
    inst.startNs = x.start;
    inst.endNs = x.start + s.runnables[inst.runnable].wcetNs;
    inst.resources.push_back(ResourceId{x.runnable % cpus});
    for (RunnableId d : s.runnables[inst.runnable].dependencies)
      inst.dependencies.push_back(idOf[x.frame * n + index(d)]);
    std::sort(inst.dependencies.begin(), inst.dependencies.end());
    s.timelines[x.runnable % cpus].instances.push_back(InstanceId{k});
    s.instances.push_back(std::move(inst));
  }
  return s;
}

std::vector<EventRecord> simulateRun(const Schedule& s, const SimulationOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<EventRecord> out;
  out.reserve(static_cast<std::size_t>(o.iterations) * (s.instances.size() + s.epochs.size() * 2));
  IdVector<ResourceId, std::int64_t> resourceFree(s.resources.size(), 0);
  IdVector<InstanceId, std::int64_t> endOf(s.instances.size(), 0);
  IdVector<InstanceId, HyperepochId> instHyp(s.instances.size());
  for (InstanceId i : s.instances.ids()) instHyp[i] = instanceHyperepoch(s, i);
  for (HyperepochId h : s.hyperepochs.ids()) {
    const HyperepochInfo& hy = s.hyperepochs[h];
    std::int64_t lastEnd = 0;
    std::uint64_t periods = 0;  // ideal iteration start = runStart + periods * period
    for (std::uint64_t it = 0; it < o.iterations; ++it) {
      std::int64_t iterStart = o.runStartNs + static_cast<std::int64_t>(periods) * hy.periodNs;
      if (lastEnd > iterStart) {
        // Skip mode: the iteration came late; wait for the next period boundary.
        const std::uint64_t skip = static_cast<std::uint64_t>((lastEnd - iterStart) / hy.periodNs) + 1;
        EventRecord sk{static_cast<std::uint16_t>(EventKind::kSkipped),
                       0,
                       index(h),
                       static_cast<std::uint32_t>(it),
                       static_cast<std::uint32_t>(skip),
                       iterStart,
                       iterStart + static_cast<std::int64_t>(skip) * hy.periodNs};
        out.push_back(sk);
        periods += skip;
        iterStart = o.runStartNs + static_cast<std::int64_t>(periods) * hy.periodNs;
      }
      ++periods;
      // Actual release per (epoch, frame) of this iteration.
      IdVector<EpochId, std::vector<std::int64_t>> released(s.epochs.size());
      for (EpochId e : hy.epochs) {
        const EpochInfo& ep = s.epochs[e];
        for (std::uint32_t f = 0; f < ep.frames; ++f) {
          const std::int64_t ideal = iterStart + static_cast<std::int64_t>(f) * ep.periodNs;
          const std::int64_t actual = ideal + static_cast<std::int64_t>(unit(rng) * 20'000);
          released[e].push_back(actual);
          out.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, index(e), static_cast<std::uint32_t>(it),
                         f, ideal, actual});
        }
      }
      for (InstanceId i : s.instances.ids()) {
        if (instHyp[i] != h) continue;
        const InstanceInfo& inst = s.instances[i];
        const RunnableInfo& planned = s.runnables[inst.runnable];
        const std::uint64_t epochFrame = it * s.epochs[planned.epoch].frames + inst.frame;
        const RunnableId ran = runnableForFrame(s, i, epochFrame);
        std::int64_t start = released[planned.epoch][inst.frame] + planned.startTimeNs;
        for (ResourceId res : inst.resources) start = std::max(start, resourceFree[res]);
        for (InstanceId d : inst.dependencies) start = std::max(start, endOf[d]);
        if (planned.submittedBy != kNone)
          for (InstanceId d : s.instances.ids())
            if (s.instances[d].runnable == planned.submittedBy && s.instances[d].frame == inst.frame)
              start = std::max(start, endOf[d]);
        std::int64_t duration = 0;
        if (ran != kNone) {
          const double wcet = static_cast<double>(s.runnables[ran].wcetNs);
          duration = unit(rng) < o.overrunProbability
                         ? static_cast<std::int64_t>(wcet * o.overrunFactor)
                         : static_cast<std::int64_t>(wcet * (o.minFraction + (1 - o.minFraction) * unit(rng)));
        }
        const std::int64_t end = start + duration;
        endOf[i] = end;
        for (ResourceId res : inst.resources) resourceFree[res] = end;
        lastEnd = std::max(lastEnd, end);
        out.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, index(i), static_cast<std::uint32_t>(it),
                       index(ran), start, end});
      }
    }
  }
  return out;
}

Result<void> writeSimulatedLog(const std::string& path, const Schedule& schedule, const SimulationOptions& options) {
  EventLogWriter w;
  auto opened = w.open(path, schedule.identifier, scheduleContentHash(schedule));
  if (!opened) return opened;
  w.setRunStart(options.runStartNs);
  const std::vector<EventRecord> records = simulateRun(schedule, options);
  w.append(records.data(), records.size());
  return w.close();
}

}  // namespace tactus::report
