// A seeded synthetic compute graph for the speed benchmarks, rendered as STM YAML or as a Graph.
//
//   8 CPUs, 2 GPUs; one hyperepoch "Main" with epochs Fast (4 frames), Mid (2), Slow (1);
//   8 clients, each with a CUDA stream on GPU0 and one on GPU1; runnables in layers per epoch,
//   each depending on 1..3 runnables of the layer before; every 16th runnable submits GPU work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph.hpp"

namespace tactus::bench {

/// One runnable of the synthetic graph.
struct GenRunnable {
  std::string name;
  std::uint32_t client = 0;
  std::uint32_t epoch = 0;  ///< 0 Fast, 1 Mid, 2 Slow
  std::int64_t wcetNs = 0;
  bool submitter = false;
  bool submittee = false;
  std::uint32_t submits = kNone;  ///< index of its submittee
  std::vector<std::uint32_t> deps;
};

/// The synthetic graph: runnables plus the period that fits them.
struct GenModel {
  std::vector<GenRunnable> runnables;
  std::int64_t hyperPeriodNs = 0;
  static constexpr int kCpus = 8;
  static constexpr int kGpus = 2;
  static constexpr int kClients = 8;
  static constexpr std::uint32_t kFrames[3] = {4, 2, 1};
  static constexpr const char* kEpochs[3] = {"Fast", "Mid", "Slow"};
};

/// Makes a graph with about `count` runnables (submittees included). Same seed, same graph.
inline GenModel generateModel(std::uint32_t count, std::uint32_t seed) {
  GenModel m;
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const std::uint32_t width = 48;  // runnables per layer
  std::int64_t cpuWorkNs = 0;      // per hyperepoch, all frames
  std::int64_t gpuWorkNs = 0;
  std::int64_t chainNs[3] = {0, 0, 0};
  for (std::uint32_t e = 0; e < 3; ++e) {
    const std::uint32_t mine = count / 3 + (e < count % 3 ? 1 : 0);
    std::vector<std::uint32_t> prevLayer, layer;
    std::int64_t layerMax = 0;
    std::uint32_t made = 0;
    while (made < mine) {
      const auto i = static_cast<std::uint32_t>(m.runnables.size());
      GenRunnable r;
      r.name = "R" + std::to_string(i);
      r.client = static_cast<std::uint32_t>(rng() % GenModel::kClients);
      r.epoch = e;
      r.wcetNs = uniform(10, 400) * 1000;
      if (!prevLayer.empty()) {
        const int k = static_cast<int>(1 + rng() % 3);
        for (int j = 0; j < k; ++j) r.deps.push_back(prevLayer[rng() % prevLayer.size()]);
        std::sort(r.deps.begin(), r.deps.end());
        r.deps.erase(std::unique(r.deps.begin(), r.deps.end()), r.deps.end());
      }
      const bool submits = made + 1 < mine && i % 16 == 5;
      r.submitter = submits;
      cpuWorkNs += r.wcetNs * GenModel::kFrames[e];
      layerMax = std::max(layerMax, r.wcetNs);
      m.runnables.push_back(r);
      layer.push_back(i);
      ++made;
      if (submits) {
        GenRunnable g;
        g.name = r.name + "Gpu";
        g.client = r.client;
        g.epoch = e;
        g.wcetNs = uniform(50, 800) * 1000;
        g.submittee = true;
        g.deps = {i};
        m.runnables[i].submits = static_cast<std::uint32_t>(m.runnables.size());
        gpuWorkNs += g.wcetNs * GenModel::kFrames[e];
        layerMax = std::max(layerMax, r.wcetNs + g.wcetNs);
        layer.push_back(static_cast<std::uint32_t>(m.runnables.size()));
        m.runnables.push_back(g);
        ++made;
      }
      if (layer.size() >= width || made >= mine) {
        chainNs[e] += layerMax;
        layerMax = 0;
        prevLayer.swap(layer);
        layer.clear();
      }
    }
  }
  // Period: room for three times the average load, and every epoch's chain in its frame.
  std::int64_t period =
      std::max<std::int64_t>(3 * std::max(cpuWorkNs / GenModel::kCpus, gpuWorkNs / GenModel::kGpus), 100000000);
  for (std::uint32_t e = 0; e < 3; ++e) period = std::max(period, 3 * chainNs[e] * GenModel::kFrames[e]);
  const std::int64_t step = 4000000;  // a multiple of 4 ms, so each epoch period is whole
  m.hyperPeriodNs = (period + step - 1) / step * step;
  return m;
}

/// The epoch period of epoch e (0 Fast, 1 Mid, 2 Slow).
inline std::int64_t epochPeriodNs(const GenModel& m, std::uint32_t e) { return m.hyperPeriodNs / GenModel::kFrames[e]; }

/// The model as an STM-format YAML graph.
inline std::string modelYaml(const GenModel& m) {
  std::string y;
  y.reserve(m.runnables.size() * 120 + 4096);
  y += "Version: 3.0.0\nBench:\n  Identifier: 1\n  Resources:\n    CPU: [";
  for (int c = 0; c < GenModel::kCpus; ++c) y += (c ? ", CPU" : "CPU") + std::to_string(c);
  y += "]\n    GPU: [GPU0, GPU1]\n  Hyperepochs:\n    - Main:\n        Period: " +
       std::to_string(m.hyperPeriodNs / 1000) + "us\n        Epochs:\n";
  for (std::uint32_t e = 0; e < 3; ++e) {
    y += "          - " + std::string(GenModel::kEpochs[e]) +
         ": {Period: " + std::to_string(epochPeriodNs(m, e) / 1000) +
         "us, Frames: " + std::to_string(GenModel::kFrames[e]) + "}\n";
  }
  y += "  Clients:\n";
  for (std::uint32_t c = 0; c < GenModel::kClients; ++c) {
    const std::string cn = "Client" + std::to_string(c);
    y += "    - " + cn + ":\n        Resources:\n          CUDA_STREAM:\n";
    for (int g = 0; g < GenModel::kGpus; ++g) {
      y += "            - " + cn + "Stream" + std::to_string(g) + ": GPU" + std::to_string(g) + "\n";
    }
    y += "        Epochs:\n";
    for (std::uint32_t e = 0; e < 3; ++e) {
      bool any = false;
      for (const GenRunnable& r : m.runnables) {
        if (r.client != c || r.epoch != e) continue;
        if (!any) {
          y += "          - Main." + std::string(GenModel::kEpochs[e]) + ":\n              Runnables:\n";
          any = true;
        }
        y += "                - " + r.name + ": {WCET: " + std::to_string(r.wcetNs / 1000) + "us, Resources: ";
        y += r.submittee ? "[GPU]" : (r.submitter ? "[CPU, CUDA_STREAM]" : "[CPU]");
        std::string deps;
        for (std::uint32_t d : r.deps) {
          if (r.submittee) continue;  // the submitter is implicit
          deps += (deps.empty() ? "" : ", ") + ("Client" + std::to_string(m.runnables[d].client)) + "." +
                  m.runnables[d].name;
        }
        if (!deps.empty()) y += ", Dependencies: [" + deps + "]";
        if (r.submitter) y += ", Submits: " + cn + "." + m.runnables[r.submits].name;
        y += "}\n";
      }
    }
  }
  return y;
}

/// The model as a checked Graph, filled the way the parser fills it.
inline compiler::Graph modelGraph(const GenModel& m) {
  using namespace compiler;
  Graph g;
  g.version = "3.0.0";
  g.name = "Bench";
  g.identifier = 1;
  // The model numbers clients, epochs and runnables from 0 in Graph order: ids at this edge.
  const HyperepochId main{0};
  auto nextResource = [&] { return ResourceId{static_cast<std::uint32_t>(g.resources.size())}; };
  std::vector<ResourceId> cpus, gpus;
  for (int c = 0; c < GenModel::kCpus; ++c) {
    cpus.push_back(nextResource());
    g.resources.push_back({"CPU" + std::to_string(c), "CPU", ResourceKind::kCpu, kNone, main,
                           static_cast<std::uint32_t>(c), kNone, kNone});
  }
  for (int d = 0; d < GenModel::kGpus; ++d) {
    gpus.push_back(nextResource());
    g.resources.push_back({"GPU" + std::to_string(d), "GPU", ResourceKind::kGpu, kNone, main, kNone, kNone, kNone});
  }
  std::vector<std::vector<ResourceId>> streams(GenModel::kClients);
  for (std::uint32_t c = 0; c < GenModel::kClients; ++c) {
    g.clients.push_back({"Client" + std::to_string(c)});
    for (int d = 0; d < GenModel::kGpus; ++d) {
      streams[c].push_back(nextResource());
      g.resources.push_back({"Client" + std::to_string(c) + "Stream" + std::to_string(d), "CUDA_STREAM",
                             ResourceKind::kCudaStream, ClientId{c}, main, kNone, gpus[static_cast<std::size_t>(d)],
                             kNone});
    }
  }
  HyperepochInfo h;
  h.name = "Main";
  h.periodNs = m.hyperPeriodNs;
  for (ResourceId r : g.resources.ids()) h.resources.push_back(r);
  for (std::uint32_t e = 0; e < 3; ++e) {
    h.epochs.push_back(EpochId{e});
    g.epochs.push_back({GenModel::kEpochs[e], main, epochPeriodNs(m, e), GenModel::kFrames[e]});
  }
  g.hyperepochs.push_back(h);
  for (std::uint32_t i = 0; i < m.runnables.size(); ++i) {
    const GenRunnable& r = m.runnables[i];
    GraphRunnable gr;
    gr.name = r.name;
    gr.client = ClientId{r.client};
    gr.epoch = EpochId{r.epoch};
    gr.wcetNs = r.wcetNs;
    for (std::uint32_t d : r.deps) gr.dependencies.push_back(RunnableId{d});
    if (r.submittee) {
      gr.kind = RunnableKind::kSubmittee;
      gr.submittedBy = RunnableId{r.deps[0]};
      gr.resources.push_back({"GPU", ResourceKind::kGpu, gpus, true});
    } else {
      gr.kind = r.submitter ? RunnableKind::kSubmitter : RunnableKind::kCpu;
      gr.resources.push_back({"CPU", ResourceKind::kCpu, cpus, true});
      if (r.submitter) {
        gr.submits = RunnableId{r.submits};
        gr.resources.push_back({"CUDA_STREAM", ResourceKind::kCudaStream, streams[r.client], true});
      }
    }
    g.runnables.push_back(std::move(gr));
  }
  return g;
}

}  // namespace tactus::bench
