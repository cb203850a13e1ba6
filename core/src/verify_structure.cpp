// The schedule verifier, its first half: the records' bounds (limits.hpp), names, indices, kinds and
// cross references, and the table of every runnable's instance per frame that the timing checks
// (verify.cpp) read.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"
#include "verifier.hpp"

namespace tactus::verify_detail {

// The names the runtime finds things by, each once: clients, hyperepochs, a client's runnables,
// and a client's resources (or the graph's own: client none).
void Verifier::uniqueNames() {
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

// The shared bounds (limits.hpp) on counts, names and times, checked before any table is sized
// by a count from the schedule and before any time takes part in a sum.
bool Verifier::withinLimits() {
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
bool Verifier::instanceCounts() {
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
          " runnable instances (runnables x frames), above the limit of " + std::to_string(limits::kMaxInstancesTotal));
  return report_.ok();
}

// Indices, kinds and cross references of the graph-level records.
bool Verifier::structure() {
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
void Verifier::resourceStructure() {
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
void Verifier::epochStructure() {
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
void Verifier::runnableStructure() {
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
void Verifier::runnableDependencies(RunnableId n, const std::string& what) {
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
void Verifier::runnableKind(RunnableId n, const std::string& what) {
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
void Verifier::socStructure() {
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

// Every scheduled runnable has one instance per frame; instance fields are consistent.
void Verifier::instancesStructure() {
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
      error(inst(i) + " lasts " + humanDuration(in.endNs - in.startNs) + " but its WCET is " + humanDuration(r.wcetNs));
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

}  // namespace tactus::verify_detail
