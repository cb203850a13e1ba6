// The schedule verifier: structure first, then the timing invariants of a static schedule.
// (Above 600 lines: one Verifier whose passes share its tables, the instance of every runnable and
// frame and the sorted resource lists; split, those tables would travel between files.)
#include "tactus/core/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "tactus/core/channels.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus {
namespace {

constexpr std::size_t kMaxErrors = 50;
// Resource lists up to this length are checked by scanning them (an instance holds one hardware
// resource, perhaps a stream and a few mutexes); longer ones through a sorted copy.
constexpr std::size_t kFewResources = 8;

class Verifier {
 public:
  Verifier(const Schedule& s, const VerifyOptions& o) : s_(s), opt_(o) {}

  VerifyReport run() {
    if (withinLimits() && structure() && instanceCounts()) {
      instancesStructure();
      uniqueNames();
      if (report_.ok()) socPlacement();
      if (report_.ok()) timelines();
      if (report_.ok()) streamOrder();
      if (report_.ok()) timing();
      if (report_.ok()) acyclic();
      // Channels and chains: the mapping stored is the one the plan gives (channels.hpp).
      if (report_.ok())
        for (std::string& e : channelErrors(s_)) error(std::move(e));
    }
    return std::move(report_);
  }

 private:
  // The names the runtime finds things by, each once: clients, hyperepochs, a client's runnables,
  // and a client's resources (or the graph's own: client none).
  void uniqueNames() {
    std::set<std::string_view> clients, hyperepochs;
    std::set<std::pair<std::uint32_t, std::string_view>> runnables, resources;
    for (const ClientInfo& c : s_.clients)
      if (!clients.insert(c.name).second) error("client " + quoted(c.name) + " is listed twice");
    for (const HyperepochInfo& h : s_.hyperepochs)
      if (!hyperepochs.insert(h.name).second) error("hyperepoch " + quoted(h.name) + " is listed twice");
    for (RunnableId r : s_.runnables.ids())
      if (!runnables.emplace(index(s_.runnables[r].client), s_.runnables[r].name).second)
        error("runnable " + quoted(qualifiedName(s_, r)) + " is listed twice");
    for (const ResourceInfo& r : s_.resources) {
      if (resources.emplace(index(r.client), r.name).second) continue;
      error("resource " + quoted(r.name) + " is listed twice" +
            (r.client != kNone ? " for client " + quoted(s_.clients[r.client].name) : std::string()));
    }
  }

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
  bool withinLimits() {
    auto count = [&](std::size_t n, std::uint32_t limit, const char* what) {
      if (n > limit)
        error("the schedule has " + std::to_string(n) + " " + what + ", above the limit of " + std::to_string(limit));
    };
    count(s_.clients.size(), limits::kMaxClients, "clients");
    count(s_.resources.size(), limits::kMaxResources, "resources");
    count(s_.hyperepochs.size(), limits::kMaxHyperepochs, "hyperepochs");
    count(s_.epochs.size(), limits::kMaxEpochs, "epochs");
    count(s_.runnables.size(), limits::kMaxRunnables, "runnables");
    count(s_.instances.size(), limits::kMaxInstancesTotal, "runnable instances");
    count(s_.timelines.size(), limits::kMaxResources, "timelines");
    count(s_.socs.size(), limits::kMaxSocs, "SoCs");
    count(s_.socLatencies.size(), limits::kMaxSocs * (limits::kMaxSocs - 1), "SoC pair latencies");
    if (!report_.ok()) return false;
    // Messages are built only for a value out of range: a valid schedule of millions of
    // instances must not pay for millions of strings. `what` is a callable giving the subject.
    auto name = [&](const std::string& n, auto what) {
      if (n.size() > limits::kMaxNameBytes)
        error(what() + " has a name of " + std::to_string(n.size()) + " bytes, above the limit of " +
              std::to_string(limits::kMaxNameBytes));
    };
    auto time = [&](std::int64_t v, auto what, const char* field, bool optional) {
      if (optional && v == kNoDuration) return;
      if (v < 0 || v > limits::kMaxDurationNs)
        error(what() + ": its " + field + " is " + std::to_string(v) + " ns, outside 0.." +
              humanDuration(limits::kMaxDurationNs));
    };
    name(s_.name, [] { return std::string("the schedule"); });
    time(
        s_.crossSocLatencyNs, [] { return std::string("the schedule"); }, "cross-SoC latency", false);
    for (const SocLatency& l : s_.socLatencies)
      time(
          l.latencyNs,
          [&] { return "the latency from SoC " + std::to_string(l.from) + " to SoC " + std::to_string(l.to); },
          "transfer time", false);
    for (std::size_t k = 0; k < s_.socs.size(); ++k) name(s_.socs[k].name, [&] { return "SoC " + std::to_string(k); });
    for (std::size_t c = 0; c < s_.clients.size(); ++c)
      name(s_.clients[c].name, [&] { return "client " + std::to_string(c); });
    for (std::size_t r = 0; r < s_.resources.size(); ++r)
      name(s_.resources[r].name, [&] { return "resource " + std::to_string(r); });
    for (const HyperepochInfo& h : s_.hyperepochs) {
      auto what = [&] { return "hyperepoch " + quoted(h.name); };
      name(h.name, what);
      time(h.periodNs, what, "period", false);
      time(h.monitorNs, what, "Monitor budget", true);
    }
    std::uint64_t frames = 0;
    for (const EpochInfo& e : s_.epochs) {
      auto what = [&] { return "epoch " + quoted(e.name); };
      name(e.name, what);
      time(e.periodNs, what, "period", false);
      if (e.frames > limits::kMaxFramesPerEpoch)
        error(what() + " has " + std::to_string(e.frames) + " frames, above the limit of " +
              std::to_string(limits::kMaxFramesPerEpoch) + " per epoch");
      frames += e.frames;
    }
    if (frames > limits::kMaxFramesTotal)
      error("the epochs have " + std::to_string(frames) + " frames in all, above the limit of " +
            std::to_string(limits::kMaxFramesTotal));
    for (RunnableId n : s_.runnables.ids()) {
      const RunnableInfo& r = s_.runnables[n];
      auto what = [&] { return run(n); };
      name(r.name, what);
      time(r.wcetNs, what, "WCET", false);
      time(r.startTimeNs, what, "StartTime", false);
      time(r.deadlineNs, what, "Deadline", true);
      time(r.endMonitorThresholdNs, what, "EndMonitorThreshold", true);
      if (r.dependencies.size() > limits::kMaxDependenciesPerRunnable)
        error(what() + " has " + std::to_string(r.dependencies.size()) + " dependencies, above the limit of " +
              std::to_string(limits::kMaxDependenciesPerRunnable));
      if (full()) return false;
    }
    for (std::size_t i = 0; i < s_.instances.size() && !full(); ++i) {
      const InstanceInfo& in = s_.instances[i];
      auto what = [&] { return "instance " + std::to_string(i); };
      time(in.startNs, what, "start", false);
      time(in.endNs, what, "end", false);
      if (in.dependencies.size() > limits::kMaxDependenciesPerRunnable)
        error("instance " + std::to_string(i) + " has " + std::to_string(in.dependencies.size()) +
              " dependencies, above the limit of " + std::to_string(limits::kMaxDependenciesPerRunnable));
    }
    return report_.ok();
  }

  // Instances the runnables need (frames of their epoch), per hyperepoch and in all, within the
  // limits: checked on the runnables before the per-frame table is sized by them.
  bool instanceCounts() {
    IdVector<HyperepochId, std::uint64_t> perHyperepoch(s_.hyperepochs.size(), 0);
    std::uint64_t total = 0;
    for (RunnableId n : s_.runnables.ids()) {
      if (!scheduled(n)) continue;
      const EpochInfo& e = s_.epochs[s_.runnables[n].epoch];
      perHyperepoch[e.hyperepoch] += e.frames;
      total += e.frames;
    }
    for (std::size_t h = 0; h < s_.hyperepochs.size(); ++h)
      if (perHyperepoch[h] > limits::kMaxInstancesPerHyperepoch)
        error("hyperepoch " + quoted(s_.hyperepochs[h].name) + " needs " + std::to_string(perHyperepoch[h]) +
              " runnable instances (runnables x frames), above the limit of " +
              std::to_string(limits::kMaxInstancesPerHyperepoch));
    if (total > limits::kMaxInstancesTotal)
      error("the schedule needs " + std::to_string(total) +
            " runnable instances (runnables x frames), above the limit of " +
            std::to_string(limits::kMaxInstancesTotal));
    return report_.ok();
  }

  // Indices, kinds and cross references of the graph-level records.
  bool structure() {
    if (s_.name.empty()) error("schedule has no name");
    if (s_.hyperepochs.empty()) error("schedule has no hyperepoch");
    for (std::size_t c = 0; c < s_.clients.size(); ++c)
      if (s_.clients[c].name.empty()) error("client " + std::to_string(c) + " has no name");
    resourceStructure();
    socStructure();
    epochStructure();
    if (!report_.ok()) return false;
    runnableStructure();
    return report_.ok();
  }

  // Each resource's client and hyperepoch, a CPU's core, an engine queue's engine and each
  // engine's stream limit.
  void resourceStructure() {
    IdVector<ResourceId, std::uint32_t> streamsPerDevice(s_.resources.size(), 0);
    for (const ResourceInfo& ri : s_.resources) {
      std::string what = "resource " + quoted(ri.name);
      if (ri.client != kNone && !s_.clients.contains(ri.client))
        error(what + " names client " + std::to_string(index(ri.client)) + " which does not exist");
      if (ri.hyperepoch != kNone && !s_.hyperepochs.contains(ri.hyperepoch))
        error(what + " names hyperepoch " + std::to_string(index(ri.hyperepoch)) + " which does not exist");
      if (ri.kind == ResourceKind::kCpu && ri.core == kNone) error(what + " is a CPU without a core number");
      if (isEngineQueue(ri.kind)) {
        const char* queue = queueWord(ri.kind);
        const ResourceKind engine = engineOfQueue(ri.kind);
        if (ri.client == kNone) error(what + " is a " + queue + " that belongs to no client");
        if (!s_.resources.contains(ri.device) || s_.resources[ri.device].kind != engine)
          error(what + " is a " + queue + " that does not map to a " + typeKeyOf(engine));
        else ++streamsPerDevice[ri.device];
      }
    }
    for (ResourceId r : s_.resources.ids()) {
      const ResourceInfo& ri = s_.resources[r];
      if (isEngine(ri.kind) && ri.streamLimit != kNone && streamsPerDevice[r] > ri.streamLimit)
        error("resource " + quoted(ri.name) + " has " + std::to_string(streamsPerDevice[r]) +
              " streams mapped to it, above its limit of " + std::to_string(ri.streamLimit));
    }
  }

  // Hyperepochs and their resources and epochs; each epoch listed by its own hyperepoch once,
  // its frames within its hyperepoch's period.
  void epochStructure() {
    IdVector<EpochId, HyperepochId> epochOwner(s_.epochs.size(), kNone);
    for (HyperepochId h : s_.hyperepochs.ids()) {
      const HyperepochInfo& hi = s_.hyperepochs[h];
      std::string what = "hyperepoch " + quoted(hi.name);
      if (hi.periodNs <= 0) error(what + " has no positive period");
      for (std::size_t k = 0; k < hi.resources.size(); ++k) {
        const ResourceId r = hi.resources[k];
        if (!s_.resources.contains(r)) {
          error(what + " lists resource " + std::to_string(index(r)) + " which does not exist");
          continue;
        }
        if (k && hi.resources[k - 1] >= r) error(what + " lists its resources out of order or twice");
        if (s_.resources[r].hyperepoch != h) error(what + " lists " + res(r) + " which belongs to another hyperepoch");
      }
      for (EpochId e : hi.epochs) {
        if (!s_.epochs.contains(e)) {
          error(what + " lists epoch " + std::to_string(index(e)) + " which does not exist");
          continue;
        }
        if (epochOwner[e] != kNone) error("epoch " + quoted(s_.epochs[e].name) + " is listed by two hyperepochs");
        epochOwner[e] = h;
      }
    }
    for (EpochId e : s_.epochs.ids()) {
      const EpochInfo& ei = s_.epochs[e];
      std::string what = "epoch " + quoted(ei.name);
      if (!s_.hyperepochs.contains(ei.hyperepoch)) {
        error(what + " names hyperepoch " + std::to_string(index(ei.hyperepoch)) + " which does not exist");
        continue;
      }
      if (epochOwner[e] != ei.hyperepoch)
        error(what + " is not listed by its hyperepoch " + quoted(s_.hyperepochs[ei.hyperepoch].name));
      if (ei.periodNs <= 0) error(what + " has no positive period");
      if (ei.frames == 0) error(what + " has no frames");
      else if (static_cast<__int128>(ei.periodNs) * ei.frames > s_.hyperepochs[ei.hyperepoch].periodNs)
        error(what + ": " + std::to_string(ei.frames) + " frames of " + humanDuration(ei.periodNs) +
              " do not fit its hyperepoch's period " + humanDuration(s_.hyperepochs[ei.hyperepoch].periodNs));
    }
  }

  // Each runnable's client, epoch, WCET, priority, dependencies and kind.
  void runnableStructure() {
    // listedBy[m] = the round-robin group whose steps list member m and which m names (a lookup
    // instead of a search of the group's steps per member).
    IdVector<RunnableId, RunnableId> listedBy(s_.runnables.size(), kNone);
    for (RunnableId g : s_.runnables.ids()) {
      if (s_.runnables[g].kind != RunnableKind::kAliasGroup) continue;
      for (RunnableId m : s_.runnables[g].steps)
        if (s_.runnables.contains(m) && s_.runnables[m].aliasGroup == g) listedBy[m] = g;
    }
    for (RunnableId n : s_.runnables.ids()) {
      if (full()) break;
      const RunnableInfo& r = s_.runnables[n];
      if (!s_.clients.contains(r.client)) {
        error("runnable " + std::to_string(index(n)) + " names client " + std::to_string(index(r.client)) +
              " which does not exist");
        continue;
      }
      std::string what = run(n);
      if (!s_.epochs.contains(r.epoch)) {
        error(what + " names epoch " + std::to_string(index(r.epoch)) + " which does not exist");
        continue;
      }
      if (r.wcetNs < 0) error(what + " has a negative WCET");
      if (r.priority < 1 || r.priority > 10)
        error(what + " has priority " + std::to_string(r.priority) + " outside 1..10");
      runnableDependencies(n, what);
      runnableKind(n, what);
      if (r.aliasGroup != kNone) {
        if (!s_.runnables.contains(r.aliasGroup) || s_.runnables[r.aliasGroup].kind != RunnableKind::kAliasGroup ||
            listedBy[n] != r.aliasGroup)
          error(what + " names a round-robin group that does not list it");
      }
    }
  }

  // A runnable's dependencies: existing runnables of its epoch (groups, not their members),
  // sorted and distinct, not itself. `what` names it.
  void runnableDependencies(RunnableId n, const std::string& what) {
    const RunnableInfo& r = s_.runnables[n];
    for (std::size_t k = 0; k < r.dependencies.size(); ++k) {
      const RunnableId d = r.dependencies[k];
      if (!s_.runnables.contains(d)) {
        error(what + " depends on runnable " + std::to_string(index(d)) + " which does not exist");
        continue;
      }
      if (d == n) error(what + " depends on itself");
      if (k && r.dependencies[k - 1] >= d) error(what + " lists its dependencies out of order or twice");
      if (s_.runnables[d].epoch != r.epoch) error(what + " depends on " + run(d) + " of another epoch");
      if (s_.runnables[d].aliasGroup != kNone)
        error(what + " depends on round-robin member " + run(d) + " instead of its group");
    }
  }

  // A runnable's kind and the links it implies: submitter and submittee in pairs, a round-robin
  // group's steps its members. `what` names it.
  void runnableKind(RunnableId n, const std::string& what) {
    const RunnableInfo& r = s_.runnables[n];
    switch (r.kind) {
      case RunnableKind::kSubmitter:
        if (!s_.runnables.contains(r.submits) || s_.runnables[r.submits].kind != RunnableKind::kSubmittee ||
            s_.runnables[r.submits].submittedBy != n)
          error(what + " is a submitter without a matching submittee");
        break;
      case RunnableKind::kSubmittee:
        if (!s_.runnables.contains(r.submittedBy) || s_.runnables[r.submittedBy].kind != RunnableKind::kSubmitter ||
            s_.runnables[r.submittedBy].submits != n)
          error(what + " is a submittee without a matching submitter");
        else if (!std::binary_search(r.dependencies.begin(), r.dependencies.end(), r.submittedBy))
          error(what + " does not depend on its submitter " + run(r.submittedBy));
        break;
      case RunnableKind::kAliasGroup:
        if (r.steps.empty()) error(what + " is a round-robin group without steps");
        for (RunnableId m : r.steps) {
          if (full()) break;
          if (m == kNone) continue;
          if (!s_.runnables.contains(m)) {
            error(what + " has step runnable " + std::to_string(index(m)) + " which does not exist");
            continue;
          }
          const RunnableInfo& mi = s_.runnables[m];
          if (mi.aliasGroup != n || mi.client != r.client || mi.epoch != r.epoch)
            error(what + " has step " + run(m) + " which is not its member");
          if (mi.wcetNs > r.wcetNs) error(what + " has a WCET below that of its member " + run(m));
        }
        break;
      case RunnableKind::kCpu: break;
    }
    if (r.kind != RunnableKind::kSubmitter && r.submits != kNone) error(what + " submits but is not a submitter");
    if (r.kind != RunnableKind::kSubmittee && r.submittedBy != kNone)
      error(what + " is submitted but is not a submittee");
  }

  // Multi-SoC: every client and global resource on a declared SoC, a client's own resources
  // and a stream's GPU on its SoC; in a schedule of one machine, no SoC anywhere.
  void socStructure() {
    const std::size_t nS = s_.socs.size();
    for (std::size_t k = 0; k < nS; ++k) {
      if (s_.socs[k].name.empty()) error("SoC " + std::to_string(k) + " has no name");
      for (std::size_t j = 0; j < k; ++j)
        if (s_.socs[j].name == s_.socs[k].name) error("SoC " + quoted(s_.socs[k].name) + " is listed twice");
    }
    auto socName = [&](std::uint32_t k) { return k < nS ? quoted(s_.socs[k].name) : std::to_string(k); };
    if (nS == 0 && !s_.socLatencies.empty()) error("a schedule without SoCs gives latencies between SoCs");
    for (std::size_t k = 0; nS != 0 && k < s_.socLatencies.size(); ++k) {
      const SocLatency& l = s_.socLatencies[k];
      const std::string what = "the latency from SoC " + socName(l.from) + " to SoC " + socName(l.to);
      if (l.from >= nS || l.to >= nS) error(what + " names a SoC that does not exist");
      else if (l.from == l.to) error(what + " joins a SoC to itself");
      else if (k > 0 && std::pair{s_.socLatencies[k - 1].from, s_.socLatencies[k - 1].to} >= std::pair{l.from, l.to})
        error(what + " is out of order or given twice (ascending by from, then to, each pair once)");
    }
    for (ClientId c : s_.clients.ids()) {
      const std::uint32_t soc = s_.clients[c].soc;
      const std::string what = "client " + quoted(s_.clients[c].name);
      if (nS == 0 && soc != kNone) error(what + " names SoC " + std::to_string(soc) + " in a schedule without SoCs");
      if (nS != 0 && soc == kNone) error(what + " runs on no SoC in a multi-SoC schedule");
      if (nS != 0 && soc != kNone && soc >= nS)
        error(what + " names SoC " + std::to_string(soc) + " which does not exist");
    }
    for (const ResourceInfo& ri : s_.resources) {
      const std::string what = "resource " + quoted(ri.name);
      if (nS == 0) {
        if (ri.soc != kNone) error(what + " names SoC " + std::to_string(ri.soc) + " in a schedule without SoCs");
        continue;
      }
      if (ri.soc == kNone || ri.soc >= nS) {
        error(what + " is on no declared SoC in a multi-SoC schedule");
        continue;
      }
      if (s_.clients.contains(ri.client) && s_.clients[ri.client].soc != ri.soc)
        error(what + " of client " + quoted(s_.clients[ri.client].name) + " is on SoC " + socName(ri.soc) +
              ", not on its client's SoC " + socName(s_.clients[ri.client].soc));
      if (isEngineQueue(ri.kind) && s_.resources.contains(ri.device) && s_.resources[ri.device].soc != ri.soc)
        error(what + " maps to " + typeKeyOf(engineOfQueue(ri.kind)) + " " + quoted(s_.resources[ri.device].name) +
              " of another SoC");
    }
  }

  // Multi-SoC: an instance holds resources of its own client's SoC only.
  void socPlacement() {
    if (s_.socs.empty()) return;
    for (InstanceId i : s_.instances.ids()) {
      if (full()) break;
      const InstanceInfo& in = s_.instances[i];
      const std::uint32_t soc = runnableSoc(s_, in.runnable);
      for (ResourceId r : in.resources)
        if (s_.resources.contains(r) && s_.resources[r].soc != soc)
          error(inst(i) + " holds " + res(r) + " of another SoC than its client's");
    }
  }

  bool scheduled(RunnableId n) const { return s_.runnables[n].aliasGroup == kNone; }

  // Whether instance i holds resource r: a scan of a short list, a search of the sorted copy of
  // a long one (a scan per timeline entry would be quadratic in a hostile list's length).
  bool holds(InstanceId i, ResourceId r) const {
    const std::vector<ResourceId>& list = s_.instances[i].resources;
    if (list.size() <= kFewResources) return std::find(list.begin(), list.end(), r) != list.end();
    return std::binary_search(sortedResources_[i].begin(), sortedResources_[i].end(), r);
  }

  // Every scheduled runnable has one instance per frame; instance fields are consistent.
  void instancesStructure() {
    const std::size_t nN = s_.runnables.size(), nI = s_.instances.size();
    slot_.assign(nN, {});
    for (RunnableId n : s_.runnables.ids())
      if (scheduled(n)) slot_[n].assign(s_.epochs[s_.runnables[n].epoch].frames, kNone);
    sortedResources_.resize(nI);
    for (InstanceId i : s_.instances.ids()) {
      if (full()) break;
      const InstanceInfo& in = s_.instances[i];
      if (!s_.runnables.contains(in.runnable)) {
        error("instance " + std::to_string(index(i)) + " names runnable " + std::to_string(index(in.runnable)) +
              " which does not exist");
        continue;
      }
      const RunnableInfo& r = s_.runnables[in.runnable];
      if (!scheduled(in.runnable)) {
        error(run(in.runnable) + " is a round-robin member but is scheduled on its own");
        continue;
      }
      if (in.frame >= slot_[in.runnable].size()) {
        error(inst(i) + ": its epoch has only " + std::to_string(slot_[in.runnable].size()) + " frames");
        continue;
      }
      if (slot_[in.runnable][in.frame] != kNone) {
        error(inst(i) + " is scheduled twice");
        continue;
      }
      slot_[in.runnable][in.frame] = i;
      if (in.startNs < 0) error(inst(i) + " starts before its hyperepoch");
      if (in.endNs - in.startNs != r.wcetNs)
        error(inst(i) + " lasts " + humanDuration(in.endNs - in.startNs) + " but its WCET is " +
              humanDuration(r.wcetNs));
      if (in.resources.empty()) {
        error(inst(i) + " holds no resource");
        continue;
      }
      bool rangeOk = true;
      if (in.resources.size() <= kFewResources) {
        for (std::size_t k = 1; k < in.resources.size(); ++k)
          for (std::size_t j = 0; j < k; ++j)
            if (in.resources[j] == in.resources[k] && s_.resources.contains(in.resources[k]))
              error(inst(i) + " holds " + res(in.resources[k]) + " twice");
      } else {
        // A long list: a sorted copy finds duplicates here and membership in timelines().
        std::vector<ResourceId>& sorted = sortedResources_[i];
        sorted = in.resources;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 1; k < sorted.size(); ++k)
          if (sorted[k] == sorted[k - 1] && s_.resources.contains(sorted[k]) && (k == 1 || sorted[k - 2] != sorted[k]))
            error(inst(i) + " holds " + res(sorted[k]) + " twice");
      }
      for (std::size_t k = 0; k < in.resources.size() && !full(); ++k) {
        const ResourceId x = in.resources[k];
        if (!s_.resources.contains(x)) {
          error(inst(i) + " holds resource " + std::to_string(index(x)) + " which does not exist");
          rangeOk = false;
          continue;
        }
        const ResourceInfo& ri = s_.resources[x];
        if (ri.hyperepoch != s_.epochs[r.epoch].hyperepoch)
          error(inst(i) + " holds " + res(x) + " of another hyperepoch");
        if (ri.client != kNone && ri.client != r.client)
          error(inst(i) + " holds " + res(x) + " which is local to client " + quoted(s_.clients[ri.client].name));
        if (k > 0 && isHardware(ri.kind)) error(inst(i) + " holds a second hardware resource " + res(x));
      }
      if (!rangeOk) continue;
      ResourceKind hw = s_.resources[in.resources[0]].kind;
      const bool submittee = r.kind == RunnableKind::kSubmittee;
      if (submittee ? !isEngine(hw) : hw != ResourceKind::kCpu)
        error(inst(i) + " runs on " + res(in.resources[0]) + " but needs a " + (submittee ? "GPU, DLA or VPU" : "CPU") +
              " first");
    }
    if (!report_.ok()) return;
    for (RunnableId n : s_.runnables.ids())
      for (std::size_t f = 0; f < slot_[n].size() && !full(); ++f)
        if (slot_[n][f] == kNone) error(run(n) + " frame " + std::to_string(f) + " is not scheduled");
    if (!report_.ok()) return;
    std::vector<InstanceId> want;  // scratch, sized once for the most dependencies
    for (InstanceId i : s_.instances.ids()) {
      if (full()) break;
      const InstanceInfo& in = s_.instances[i];
      const RunnableInfo& r = s_.runnables[in.runnable];
      want.clear();
      for (RunnableId d : r.dependencies) want.push_back(slot_[d][in.frame]);
      std::sort(want.begin(), want.end());
      if (in.dependencies != want)
        error(inst(i) + " waits for other instances than its runnable's dependencies in the same frame");
      if (r.kind == RunnableKind::kSubmittee) {
        const InstanceInfo& sub = s_.instances[slot_[r.submittedBy][in.frame]];
        ResourceId stream = kNone;
        for (ResourceId x : sub.resources)
          if (isEngineQueue(s_.resources[x].kind)) stream = x;
        if (stream == kNone) {
          error(inst(i) + ": its submitter holds no CUDA stream, DLA handle or PVA stream");
        } else {
          // The stream serialises the submitters only; work that holds a stream holds its own
          // (a stricter plan: the stream then waits for the work too).
          for (ResourceId x : in.resources)
            if (isEngineQueue(s_.resources[x].kind) && x != stream)
              error(inst(i) + " holds " + res(x) + ", not its submitter's " + res(stream));
          if (in.resources[0] != s_.resources[stream].device)
            error(inst(i) + " runs on " + res(in.resources[0]) + " but its submitter's " + res(stream) + " maps to " +
                  res(s_.resources[stream].device));
        }
      }
    }
  }

  // Each timeline lists exactly the instances holding its resource, without overlap, in order.
  void timelines() {
    const std::size_t nR = s_.resources.size();
    IdVector<ResourceId, std::size_t> holders(nR, 0);
    for (const InstanceInfo& in : s_.instances)
      for (ResourceId x : in.resources) ++holders[x];
    IdVector<ResourceId, char> seenRes(nR, 0);
    IdVector<InstanceId, ResourceId> onLine(s_.instances.size(), kNone);
    for (const TimelineInfo& t : s_.timelines) {
      if (full()) return;
      if (!s_.resources.contains(t.resource)) {
        error("timeline for resource " + std::to_string(index(t.resource)) + " which does not exist");
        continue;
      }
      if (seenRes[t.resource]) {
        error("two timelines for " + res(t.resource));
        continue;
      }
      seenRes[t.resource] = 1;
      if (t.instances.size() != holders[t.resource])
        error("timeline of " + res(t.resource) + " lists " + std::to_string(t.instances.size()) + " instances but " +
              std::to_string(holders[t.resource]) + " hold it");
      for (std::size_t k = 0; k < t.instances.size() && !full(); ++k) {
        const InstanceId i = t.instances[k];
        if (!s_.instances.contains(i)) {
          error("timeline of " + res(t.resource) + " lists instance " + std::to_string(index(i)) +
                " which does not exist");
          continue;
        }
        const InstanceInfo& in = s_.instances[i];
        if (!holds(i, t.resource)) {
          error("timeline of " + res(t.resource) + " lists " + inst(i) + " which does not hold it");
          continue;
        }
        if (onLine[i] == t.resource) {
          error("timeline of " + res(t.resource) + " lists " + inst(i) + " twice");
          continue;
        }
        onLine[i] = t.resource;
        if (k > 0 && s_.instances.contains(t.instances[k - 1])) {
          const InstanceInfo& prev = s_.instances[t.instances[k - 1]];
          if (prev.endNs > in.startNs)
            error("on " + res(t.resource) + ", " + inst(i) + " (" + humanDuration(in.startNs) + ".." +
                  humanDuration(in.endNs) + ") overlaps or precedes " + inst(t.instances[k - 1]) + " (" +
                  humanDuration(prev.startNs) + ".." + humanDuration(prev.endNs) + ")");
        }
      }
    }
    for (ResourceId r : s_.resources.ids())
      if (holders[r] && !seenRes[r]) error(res(r) + " is held but has no timeline");
  }

  // A CUDA stream (DLA handle, PVA stream) runs its work in submission order: the work of the submitters on a stream's
  // timeline runs in that order on the stream's device. Otherwise the runtime, which enqueues in
  // submitter order, would queue work behind what the plan runs after it (a GPU wait on it could
  // never end). The submitters hold the stream while they submit; the work does not need to.
  void streamOrder() {
    // Position of every instance on each device timeline.
    IdVector<InstanceId, std::uint32_t> onDevice(s_.instances.size(), kNone);
    for (const TimelineInfo& t : s_.timelines) {
      if (!isEngine(s_.resources[t.resource].kind)) continue;
      for (std::size_t k = 0; k < t.instances.size(); ++k) onDevice[t.instances[k]] = static_cast<std::uint32_t>(k);
    }
    for (const TimelineInfo& t : s_.timelines) {
      if (full()) return;
      if (!isEngineQueue(s_.resources[t.resource].kind)) continue;
      InstanceId previous = kNone;  // the work of the last submitter so far, in timeline order
      for (InstanceId i : t.instances) {
        const InstanceInfo& in = s_.instances[i];
        const RunnableInfo& r = s_.runnables[in.runnable];
        if (r.kind != RunnableKind::kSubmitter || !s_.runnables.contains(r.submits)) continue;
        if (in.frame >= slot_[r.submits].size()) continue;
        const InstanceId work = slot_[r.submits][in.frame];
        if (work == kNone || onDevice[work] == kNone) continue;
        if (previous != kNone && s_.instances[work].resources[0] == s_.instances[previous].resources[0] &&
            onDevice[work] < onDevice[previous]) {
          const InstanceId first =
              slot_[s_.runnables[s_.instances[previous].runnable].submittedBy][s_.instances[previous].frame];
          error("on " + res(t.resource) + ", " + inst(work) + " runs before " + inst(previous) + ", the work of " +
                inst(first) + ", which is submitted first (a stream runs its work in submission order)");
          break;
        }
        previous = work;
      }
    }
  }

  // Releases, StartTime, dependencies, epoch boundaries, period, deadlines.
  void timing() {
    IdVector<HyperepochId, std::int64_t> length(s_.hyperepochs.size(), 0);
    // Every time was checked against limits::kMaxDurationNs and frames against
    // kMaxFramesPerEpoch, so release + StartTime or Deadline stays far inside int64.
    for (InstanceId i : s_.instances.ids()) {
      if (full()) break;
      const InstanceInfo& in = s_.instances[i];
      const RunnableInfo& r = s_.runnables[in.runnable];
      const EpochInfo& e = s_.epochs[r.epoch];
      std::int64_t release = e.periodNs * in.frame;
      // Named only where a message needs it (a large schedule has 100,000s of instances).
      auto what = [&] { return inst(i); };
      if (in.startNs < release + r.startTimeNs)
        error(what() + " starts at " + humanDuration(in.startNs) + ", before its release + StartTime " +
              humanDuration(release + r.startTimeNs));
      for (InstanceId d : in.dependencies) {
        // A dependency across SoCs adds the transfer time of its pair of SoCs.
        const bool cross = !s_.socs.empty() && crossesSocs(s_, s_.instances[d].runnable, in.runnable);
        const std::int64_t lag = cross ? dependencyLatencyNs(s_, s_.instances[d].runnable, in.runnable) : 0;
        const std::int64_t ready = s_.instances[d].endNs + lag;
        if (in.startNs < ready) {
          std::string message = what() + " starts at " + humanDuration(in.startNs) + " before its dependency " +
                                inst(d) + " ends at " + humanDuration(s_.instances[d].endNs);
          if (cross) {
            message += " plus the cross-SoC latency " + humanDuration(lag) + " from SoC " +
                       quoted(s_.socs[runnableSoc(s_, s_.instances[d].runnable)].name) + " to SoC " +
                       quoted(s_.socs[runnableSoc(s_, in.runnable)].name);
          }
          error(message);
        }
      }
      if (in.endNs > release + e.periodNs) {
        // The last frame's boundary is the next hyperepoch iteration: crossing it is overlength.
        std::string msg = what() + " ends at " + humanDuration(in.endNs) + ", after epoch " + quoted(e.name) +
                          " releases its next frame at " + humanDuration(release + e.periodNs);
        if (opt_.allowOverlength && in.frame + 1 == e.frames) warning(msg);
        else error(msg);
      }
      if (r.deadlineNs != kNoDuration && in.endNs > release + r.deadlineNs)
        warning(what() + " misses its deadline: ends at " + humanDuration(in.endNs - release) +
                " after its release, deadline " + humanDuration(r.deadlineNs));
      length[e.hyperepoch] = std::max(length[e.hyperepoch], in.endNs);
    }
    for (HyperepochId h : s_.hyperepochs.ids()) {
      const HyperepochInfo& hi = s_.hyperepochs[h];
      if (length[h] > hi.periodNs) {
        std::string msg = "hyperepoch " + quoted(hi.name) + ": schedule length " + humanDuration(length[h]) +
                          " exceeds its period " + humanDuration(hi.periodNs);
        if (opt_.allowOverlength) warning(msg);
        else error(msg);
      }
    }
  }

  // The runtime waits along dependencies and timeline order: together they must not form a cycle
  // (possible only with zero-length instances at the same time, or with cyclic dependencies; on a
  // CUDA stream, its submission order plus a dependency is a GPU wait cycle). The message names
  // the instances of one cycle and what orders each after the one before.
  void acyclic() {
    const std::size_t nI = s_.instances.size();
    // An edge into an instance: its predecessor, and the timeline resource that orders them
    // (kNone: a dependency).
    struct Edge {
      InstanceId from;
      ResourceId line;
    };
    // The edges out of each instance in one array (offsets per instance), not a list per
    // instance: a large schedule has 100,000s of instances. Which instances Kahn's pass leaves,
    // and their in-degrees left, do not depend on the order it takes them in.
    IdVector<InstanceId, std::uint32_t> indeg(nI, 0);
    std::vector<std::uint32_t> first(nI + 1, 0);  // edges out of i: out[first[i], first[i + 1])
    for (InstanceId i : s_.instances.ids())
      for (InstanceId d : s_.instances[i].dependencies) {
        ++first[index(d) + 1];
        ++indeg[i];
      }
    for (const TimelineInfo& t : s_.timelines)
      for (std::size_t k = 1; k < t.instances.size(); ++k) {
        ++first[index(t.instances[k - 1]) + 1];
        ++indeg[t.instances[k]];
      }
    for (std::size_t i = 0; i < nI; ++i) first[i + 1] += first[i];
    std::vector<InstanceId> out(first[nI]);
    {
      std::vector<std::uint32_t> at(first.begin(), first.end() - 1);
      for (InstanceId i : s_.instances.ids())
        for (InstanceId d : s_.instances[i].dependencies) out[at[index(d)]++] = i;
      for (const TimelineInfo& t : s_.timelines)
        for (std::size_t k = 1; k < t.instances.size(); ++k) out[at[index(t.instances[k - 1])]++] = t.instances[k];
    }
    std::vector<InstanceId> ready;
    for (InstanceId i : s_.instances.ids())
      if (!indeg[i]) ready.push_back(i);
    std::size_t done = 0;
    while (!ready.empty()) {
      const InstanceId i = ready.back();
      ready.pop_back();
      ++done;
      for (std::uint32_t e = first[index(i)]; e < first[index(i) + 1]; ++e)
        if (--indeg[out[e]] == 0) ready.push_back(out[e]);
    }
    if (done == nI) return;
    // A cycle (rare): the edges into each instance, to walk it back.
    IdVector<InstanceId, std::vector<Edge>> prev(nI);
    for (InstanceId i : s_.instances.ids())
      for (InstanceId d : s_.instances[i].dependencies) prev[i].push_back({d, kNone});
    for (const TimelineInfo& t : s_.timelines)
      for (std::size_t k = 1; k < t.instances.size(); ++k)
        prev[t.instances[k]].push_back({t.instances[k - 1], t.resource});
    // Every instance left has a predecessor left: walking back along those from the first one
    // left must come round to an instance already passed, which closes a cycle.
    InstanceId at = kNone;
    for (InstanceId i : s_.instances.ids())
      if (indeg[i]) {
        at = i;
        break;
      }
    IdVector<InstanceId, std::uint32_t> step(nI, 0);  // 1 + position on the walk; 0: not passed
    std::vector<Edge> walk;                           // walk[k]: the edge into the k-th instance passed
    while (step[at] == 0) {
      step[at] = static_cast<std::uint32_t>(walk.size() + 1);
      const auto e = std::find_if(prev[at].begin(), prev[at].end(), [&](const Edge& p) { return indeg[p.from] != 0; });
      walk.push_back(*e);  // always found: `at` was left, so one of its predecessors was too
      at = e->from;
    }
    // The walk went backwards: from the repeated instance, the edges into walk[k]'s instance
    // lead forwards through the cycle.
    std::vector<InstanceId> cycle;
    std::vector<ResourceId> lines;
    for (std::size_t k = walk.size(); k-- > step[at] - 1;) {
      cycle.push_back(walk[k].from);
      lines.push_back(walk[k].line);
    }
    constexpr std::size_t kShown = 12;
    std::string msg = "dependencies and timeline order form a cycle: " + inst(cycle[0]);
    for (std::size_t k = 0; k < cycle.size() && k < kShown; ++k) {
      const InstanceId to = k + 1 < cycle.size() ? cycle[k + 1] : cycle[0];
      msg += " -> " + inst(to) + (lines[k] == kNone ? " (dependency)" : " (after it on " + res(lines[k]) + ")");
    }
    if (cycle.size() > kShown) msg += " -> ... (" + std::to_string(cycle.size()) + " instances in all)";
    error(msg + "; the runtime would wait forever");
  }

  const Schedule& s_;
  VerifyOptions opt_;
  VerifyReport report_;
  IdVector<RunnableId, std::vector<InstanceId>> slot_;             // [runnable][frame] -> instance
  IdVector<InstanceId, std::vector<ResourceId>> sortedResources_;  // [instance] -> its resources, ascending
};

}  // namespace

VerifyReport verifySchedule(const Schedule& schedule, const VerifyOptions& options) {
  try {
    return Verifier(schedule, options).run();
  } catch (const std::bad_alloc&) {
    // Tables are bounded by the limits and the schedule's own size; a machine short of memory
    // still gets a message, not an exception through every caller.
    VerifyReport report;
    report.errors.push_back("out of memory while verifying the schedule (" + std::to_string(schedule.instances.size()) +
                            " instances)");
    return report;
  }
}

Result<void> verifyScheduleResult(const Schedule& schedule, const VerifyOptions& options) {
  VerifyReport report = verifySchedule(schedule, options);
  if (report.ok()) return {};
  std::string msg = "schedule " + quoted(schedule.name) + " fails verification:";
  std::size_t shown = 0;
  for (const std::string& e : report.errors) {
    if (shown++ == 10) {
      msg += "\n  (" + std::to_string(report.errors.size() - 10) + " more)";
      break;
    }
    msg += "\n  " + e;
  }
  return fail(ErrorCode::kVerification, msg);
}

}  // namespace tactus
