// A Graph built in code the way the parser fills it, for the compiler's unit tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph.hpp"

namespace tactus::compiler::test {

// Builds a checked Graph the way the parser fills it (hardware request first, candidates
// resolved, submitter listed in its submittee's dependencies).
struct GraphBuilder {
  Graph g;

  GraphBuilder() {
    g.version = "3.0.0";
    g.name = "Test";
    g.identifier = 7;
    g.clients.push_back({"Client0"});
  }

  std::uint32_t resource(const std::string& name, const std::string& type, ResourceKind kind) {
    ResourceInfo r;
    r.name = name;
    r.type = type;
    r.kind = kind;
    if (kind == ResourceKind::kCpu) r.core = static_cast<std::uint32_t>(std::stoul(name.substr(3)));
    g.resources.push_back(r);
    return static_cast<std::uint32_t>(g.resources.size() - 1);
  }
  std::vector<std::uint32_t> cpus(int n) {
    std::vector<std::uint32_t> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out.push_back(resource("CPU" + std::to_string(i), "CPU", ResourceKind::kCpu));
    return out;
  }
  std::uint32_t stream(const std::string& name, std::uint32_t device) {
    const std::uint32_t s = resource(name, "CUDA_STREAM", ResourceKind::kCudaStream);
    g.resources[s].device = device;
    g.resources[s].client = 0;
    return s;
  }
  std::uint32_t hyperepoch(const std::string& name, std::int64_t periodNs) {
    HyperepochInfo h;
    h.name = name;
    h.periodNs = periodNs;
    for (std::uint32_t r = 0; r < g.resources.size(); ++r) {
      if (g.resources[r].hyperepoch == kNone) {
        g.resources[r].hyperepoch = static_cast<std::uint32_t>(g.hyperepochs.size());
        h.resources.push_back(r);
      }
    }
    g.hyperepochs.push_back(h);
    return static_cast<std::uint32_t>(g.hyperepochs.size() - 1);
  }
  std::uint32_t epoch(const std::string& name, std::uint32_t h, std::int64_t periodNs, std::uint32_t frames = 1) {
    g.epochs.push_back({name, h, periodNs, frames});
    const auto e = static_cast<std::uint32_t>(g.epochs.size() - 1);
    g.hyperepochs[h].epochs.push_back(e);
    return e;
  }
  // A request of a type: every resource of that type is a candidate.
  ResourceRequest type(const std::string& t) {
    ResourceRequest q;
    q.text = t;
    q.isType = true;
    for (std::uint32_t r = 0; r < g.resources.size(); ++r) {
      if (g.resources[r].type == t) {
        q.candidates.push_back(r);
        q.kind = g.resources[r].kind;
      }
    }
    return q;
  }
  ResourceRequest instance(std::uint32_t r) {
    ResourceRequest q;
    q.text = g.resources[r].name;
    q.kind = g.resources[r].kind;
    q.candidates = {r};
    return q;
  }
  std::uint32_t runnable(const std::string& name, std::uint32_t epoch, std::int64_t wcetNs,
                         std::vector<ResourceRequest> requests, std::vector<std::uint32_t> deps = {}) {
    GraphRunnable r;
    r.name = name;
    r.epoch = epoch;
    r.wcetNs = wcetNs;
    r.resources = std::move(requests);
    std::sort(deps.begin(), deps.end());
    r.dependencies = std::move(deps);
    g.runnables.push_back(r);
    return static_cast<std::uint32_t>(g.runnables.size() - 1);
  }
  GraphRunnable& operator[](std::uint32_t r) { return g.runnables[r]; }
};

}  // namespace tactus::compiler::test
