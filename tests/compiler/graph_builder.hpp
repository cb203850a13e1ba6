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

  ResourceId resource(const std::string& name, const std::string& type, ResourceKind kind) {
    ResourceInfo r;
    r.name = name;
    r.type = type;
    r.kind = kind;
    if (kind == ResourceKind::kCpu) r.core = static_cast<std::uint32_t>(std::stoul(name.substr(3)));
    g.resources.push_back(r);
    return ResourceId{static_cast<std::uint32_t>(g.resources.size() - 1)};
  }
  std::vector<ResourceId> cpus(int n) {
    std::vector<ResourceId> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out.push_back(resource("CPU" + std::to_string(i), "CPU", ResourceKind::kCpu));
    return out;
  }
  ResourceId stream(const std::string& name, ResourceId device) {
    return queue(name, device, "CUDA_STREAM", ResourceKind::kCudaStream);
  }
  // An engine queue of Client0 (CUDA_STREAM, DLA_HANDLE, PVA_STREAM) mapped to `device`.
  ResourceId queue(const std::string& name, ResourceId device, const std::string& type, ResourceKind kind) {
    const ResourceId s = resource(name, type, kind);
    g.resources[s].device = device;
    g.resources[s].client = ClientId{0};
    return s;
  }
  HyperepochId hyperepoch(const std::string& name, std::int64_t periodNs) {
    const HyperepochId id{static_cast<std::uint32_t>(g.hyperepochs.size())};
    HyperepochInfo h;
    h.name = name;
    h.periodNs = periodNs;
    for (ResourceId r : g.resources.ids()) {
      if (g.resources[r].hyperepoch == kNone) {
        g.resources[r].hyperepoch = id;
        h.resources.push_back(r);
      }
    }
    g.hyperepochs.push_back(h);
    return id;
  }
  EpochId epoch(const std::string& name, HyperepochId h, std::int64_t periodNs, std::uint32_t frames = 1) {
    const EpochId e{static_cast<std::uint32_t>(g.epochs.size())};
    g.epochs.push_back({name, h, periodNs, frames});
    g.hyperepochs[h].epochs.push_back(e);
    return e;
  }
  // A request of a type: every resource of that type is a candidate.
  ResourceRequest type(const std::string& t) {
    ResourceRequest q;
    q.text = t;
    q.isType = true;
    for (ResourceId r : g.resources.ids()) {
      if (g.resources[r].type == t) {
        q.candidates.push_back(r);
        q.kind = g.resources[r].kind;
      }
    }
    return q;
  }
  ResourceRequest instance(ResourceId r) {
    ResourceRequest q;
    q.text = g.resources[r].name;
    q.kind = g.resources[r].kind;
    q.candidates = {r};
    return q;
  }
  RunnableId runnable(const std::string& name, EpochId epoch, std::int64_t wcetNs,
                      std::vector<ResourceRequest> requests, std::vector<RunnableId> deps = {}) {
    GraphRunnable r;
    r.name = name;
    r.epoch = epoch;
    r.wcetNs = wcetNs;
    r.resources = std::move(requests);
    std::sort(deps.begin(), deps.end());
    r.dependencies = std::move(deps);
    g.runnables.push_back(r);
    return RunnableId{static_cast<std::uint32_t>(g.runnables.size() - 1)};
  }
  GraphRunnable& operator[](RunnableId r) { return g.runnables[r]; }
};

}  // namespace tactus::compiler::test
