// The schedule verifier's one class, shared by its two files: verify_structure.cpp checks the
// records, their bounds, names and cross references (and builds the per-frame instance table);
// verify.cpp the timing invariants of a static schedule on top of them, and the public entry points.
// Private to core/src.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"

namespace tactus::verify_detail {

constexpr std::size_t kMaxErrors = 50;
// Resource lists up to this length are checked by scanning them (an instance holds one hardware
// resource, perhaps a stream and a few mutexes); longer ones through a sorted copy.
constexpr std::size_t kFewResources = 8;

class Verifier {
 public:
  Verifier(const Schedule& s, const VerifyOptions& o) : s_(s), opt_(o) {}

  VerifyReport run();

 private:
  // The names the runtime finds things by, each once: clients, hyperepochs, a client's runnables,
  // and a client's resources (or the graph's own: client none).
  void uniqueNames();

  void error(std::string msg) {
    if (report_.errors.size() < kMaxErrors) report_.errors.push_back(std::move(msg));
    else if (report_.errors.size() == kMaxErrors) report_.errors.push_back("(more errors not shown)");
  }
  void warning(std::string msg) { report_.warnings.push_back(std::move(msg)); }
  // Once the error list is full, later checks stop: a hostile schedule must not cost more time
  // than a valid one of its size.
  bool full() const { return report_.errors.size() > kMaxErrors; }

  std::string res(ResourceId r) const { return "resource " + quoted(s_.resources[r].name); }
  std::string run(RunnableId r) const { return "runnable " + quoted(qualifiedName(s_, r)); }
  std::string inst(InstanceId i) const {
    const InstanceInfo& in = s_.instances[i];
    return "runnable " + quoted(qualifiedName(s_, in.runnable)) + " frame " + std::to_string(in.frame);
  }

  // The shared bounds (limits.hpp) on counts, names and times, checked before any table is sized
  // by a count from the schedule and before any time takes part in a sum.
  bool withinLimits();

  // Instances the runnables need (frames of their epoch), per hyperepoch and in all, within the
  // limits: checked on the runnables before the per-frame table is sized by them.
  bool instanceCounts();

  // Indices, kinds and cross references of the graph-level records.
  bool structure();

  // Each resource's client and hyperepoch, a CPU's core, an engine queue's engine and each
  // engine's stream limit.
  void resourceStructure();

  // Hyperepochs and their resources and epochs; each epoch listed by its own hyperepoch once,
  // its frames within its hyperepoch's period.
  void epochStructure();

  // Each runnable's client, epoch, WCET, priority, dependencies and kind.
  void runnableStructure();

  // A runnable's dependencies: existing runnables of its epoch (groups, not their members),
  // sorted and distinct, not itself. `what` names it.
  void runnableDependencies(RunnableId n, const std::string& what);

  // A runnable's kind and the links it implies: submitter and submittee in pairs, a round-robin
  // group's steps its members. `what` names it.
  void runnableKind(RunnableId n, const std::string& what);

  // Multi-SoC: every client and global resource on a declared SoC, a client's own resources
  // and a stream's GPU on its SoC; in a schedule of one machine, no SoC anywhere.
  void socStructure();

  // Multi-SoC: an instance holds resources of its own client's SoC only.
  void socPlacement();

  bool scheduled(RunnableId n) const { return s_.runnables[n].aliasGroup == kNone; }

  bool holds(InstanceId i, ResourceId r) const {
    const std::vector<ResourceId>& list = s_.instances[i].resources;
    if (list.size() <= kFewResources) return std::find(list.begin(), list.end(), r) != list.end();
    return std::binary_search(sortedResources_[i].begin(), sortedResources_[i].end(), r);
  }

  // Every scheduled runnable has one instance per frame; instance fields are consistent.
  void instancesStructure();

  // Each timeline lists exactly the instances holding its resource, without overlap, in order.
  void timelines();

  // A CUDA stream (DLA handle, PVA stream) runs its work in submission order: the work of the submitters on a stream's
  // timeline runs in that order on the stream's device. Otherwise the runtime, which enqueues in
  // submitter order, would queue work behind what the plan runs after it (a GPU wait on it could
  // never end). The submitters hold the stream while they submit; the work does not need to.
  void streamOrder();

  // Releases, StartTime, dependencies, epoch boundaries, period, deadlines.
  void timing();

  // The runtime waits along dependencies and timeline order: together they must not form a cycle
  // (possible only with zero-length instances at the same time, or with cyclic dependencies; on a
  // CUDA stream, its submission order plus a dependency is a GPU wait cycle). The message names
  // the instances of one cycle and what orders each after the one before.
  void acyclic();

  const Schedule& s_;
  VerifyOptions opt_;
  VerifyReport report_;
  IdVector<RunnableId, std::vector<InstanceId>> slot_;             // [runnable][frame] -> instance
  IdVector<InstanceId, std::vector<ResourceId>> sortedResources_;  // [instance] -> its resources, ascending
};

}  // namespace tactus::verify_detail
