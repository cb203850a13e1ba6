// The compile report: figures of a finished schedule, as text and as JSON.
#include "report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include "schedule/bounds.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

std::string qualified(const Schedule& s, RunnableId r) {
  const RunnableInfo& ri = s.runnables[r];
  if (s.clients.contains(ri.client)) return s.clients[ri.client].name + "." + ri.name;
  return ri.name;
}

// The candidate sets of an instance's requests, from the graph when it matches the schedule;
// otherwise each held resource stands for every resource of its type in the hyperepoch.
std::vector<std::vector<ResourceId>> candidateSets(const Graph& g, const Schedule& s, const InstanceInfo& inst,
                                                   HyperepochId h) {
  std::vector<std::vector<ResourceId>> out;
  if (g.runnables.size() == s.runnables.size() && g.runnables.contains(inst.runnable)) {
    const GraphRunnable* r = &g.runnables[inst.runnable];
    const std::vector<ResourceRequest>* reqs = &r->resources;
    if (r->kind == RunnableKind::kAliasGroup && reqs->empty()) {
      for (RunnableId m : r->steps) {
        if (m != kNone && g.runnables.contains(m) && !g.runnables[m].resources.empty()) {
          reqs = &g.runnables[m].resources;
          break;
        }
      }
    }
    for (const ResourceRequest& q : *reqs) {
      std::vector<ResourceId> set = q.candidates;
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      if (!set.empty()) out.push_back(std::move(set));
    }
    // No requests known (an old schedule's runnable the graph lacks): its resources' types.
    if (!out.empty()) return out;
  }
  for (ResourceId x : inst.resources) {
    if (!s.resources.contains(x)) continue;
    std::vector<ResourceId> set;
    for (ResourceId r : s.resources.ids()) {
      if (s.resources[r].type == s.resources[x].type && (s.resources[r].hyperepoch == h || r == x)) set.push_back(r);
    }
    out.push_back(std::move(set));
  }
  return out;
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pad(const std::string& s, std::size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

// The channels and chains of a schedule (tactus extension) into the report.
void addChannelReport(const Schedule& s, CompileReport& report) {
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    const ChannelInfo& ch = s.channels[c];
    ChannelReport r;
    r.name = ch.name;
    r.sizeBytes = ch.sizeBytes;
    r.depth = ch.depth;
    r.writer = qualifiedName(s, ch.writer);
    r.writes = ch.writes;
    for (const RunnableId reader : ch.readers) r.readers.push_back(qualifiedName(s, reader));
    for (const ChannelRead& read : s.channelReads)
      if (read.channel == c) {
        ++r.readerRuns;
        if (read.previousIteration) ++r.previousIterationReads;
      }
    report.channels.push_back(std::move(r));
  }
  for (const ChainInfo& chain : s.chains) {
    ChainReport r;
    r.name = chain.name;
    for (const RunnableId run : chain.runnables) r.runnables.push_back(qualifiedName(s, run));
    r.reactionNs = chain.reactionNs;
    r.ageNs = chain.ageNs;
    r.allowanceNs = chainAllowanceNs(chain);
    r.maxReactionNs = chain.maxReactionNs;
    r.maxAgeNs = chain.maxAgeNs;
    if (auto bounds = computeChainBounds(s, chain)) {
      for (std::size_t k = 0; k < bounds->links.size(); ++k)
        r.links.push_back(bounds->links[k] == ChainLink::kChannel
                              ? "channel '" + s.channels[bounds->linkChannel[k]].name + "'"
                              : std::string("dependency"));
      r.reactionCostliest = qualifiedName(s, bounds->reactionCostliest);
      r.reactionCostliestNs = bounds->reactionCostliestNs;
      r.ageCostliest = qualifiedName(s, bounds->ageCostliest);
      r.ageCostliestNs = bounds->ageCostliestNs;
    }
    report.chains.push_back(std::move(r));
  }
}

namespace {

// The instance dependency graph of a schedule with each instance's earliest start (critical path
// with releases) and tail (longest chain after its end), in topological order
// (schedule/bounds.hpp). Per runnable, read once in order (instances in time order reach their
// runnables' large records at random): its hyperepoch (kNone for an unknown epoch), its epoch's
// period, StartTime and Deadline.
struct InstanceBounds {
  explicit InstanceBounds(const Schedule& schedule) : s(schedule) {}

  const Schedule& s;
  std::vector<HyperepochId> heOfRunnable;
  std::vector<std::int64_t> periodOf, startTimeOf, deadlineOf;
  std::vector<std::vector<std::uint32_t>> succs, preds;
  std::vector<std::int64_t> release, lengths;
  std::vector<std::uint32_t> order;
  std::vector<std::int64_t> est, tail;
  bool lagged = false;  // multi-SoC with a transfer time between some SoCs

  std::int64_t length(std::uint32_t i) const { return s.instances[i].endNs - s.instances[i].startNs; }
  HyperepochId heOf(const InstanceInfo& inst) const {
    return s.runnables.contains(inst.runnable) ? heOfRunnable[index(inst.runnable)] : HyperepochId{kNone};
  }
  // The release of a valid instance's frame.
  std::int64_t releaseOf(const InstanceInfo& inst) const {
    return static_cast<std::int64_t>(inst.frame) * periodOf[index(inst.runnable)];
  }
  bool valid(const InstanceInfo& inst) const { return heOf(inst) != kNone; }
  std::int64_t lag(std::uint32_t d, std::uint32_t i) const {
    return lagged ? dependencyLatencyNs(s, s.instances[d].runnable, s.instances[i].runnable) : 0;
  }
};

void readRunnables(InstanceBounds& b) {
  const Schedule& s = b.s;
  const std::size_t nr = s.runnables.size();
  b.heOfRunnable.assign(nr, kNone);
  b.periodOf.assign(nr, 0);
  b.startTimeOf.assign(nr, 0);
  b.deadlineOf.assign(nr, kNoDuration);
  for (RunnableId r : s.runnables.ids()) {
    const RunnableInfo& ri = s.runnables[r];
    if (s.epochs.contains(ri.epoch)) {
      b.heOfRunnable[index(r)] = s.epochs[ri.epoch].hyperepoch;
      b.periodOf[index(r)] = s.epochs[ri.epoch].periodNs;
    }
    b.startTimeOf[index(r)] = ri.startTimeNs;
    b.deadlineOf[index(r)] = ri.deadlineNs;
  }
}

// Multi-SoC: a dependency across SoCs adds its SoC pair's transfer time on both sides.
void addTransferTimes(InstanceBounds& b) {
  for (std::uint32_t i : b.order) {
    std::int64_t t = b.release[i];
    for (std::uint32_t d : b.preds[i]) t = std::max(t, b.est[d] + b.lengths[d] + b.lag(d, i));
    b.est[i] = t;
  }
  for (auto it = b.order.rbegin(); it != b.order.rend(); ++it) {
    std::int64_t t = 0;
    for (std::uint32_t x : b.succs[*it]) t = std::max(t, b.lag(*it, x) + b.lengths[x] + b.tail[x]);
    b.tail[*it] = t;
  }
}

InstanceBounds computeInstanceBounds(const Schedule& s) {
  InstanceBounds b(s);
  readRunnables(b);
  const std::size_t ni = s.instances.size();
  b.succs.resize(ni);
  b.preds.resize(ni);
  std::vector<std::uint32_t> indeg(ni, 0);
  b.release.assign(ni, 0);
  b.lengths.assign(ni, 0);
  for (std::uint32_t i = 0; i < ni; ++i) {
    const InstanceInfo& inst = s.instances[i];
    b.lengths[i] = b.length(i);
    for (InstanceId d : inst.dependencies) {
      if (!s.instances.contains(d)) continue;
      b.succs[index(d)].push_back(i);
      ++indeg[i];
      if (b.valid(inst)) b.preds[i].push_back(index(d));  // an invalid instance keeps est 0
    }
    if (b.valid(inst)) b.release[i] = b.releaseOf(inst) + b.startTimeOf[index(inst.runnable)];
  }
  b.order = schedule::topologicalOrder(b.succs, std::move(indeg));
  b.est = schedule::longestHeads(b.order, b.preds, b.release, b.lengths);
  b.tail = schedule::longestTails(b.order, b.succs, b.lengths);
  const bool anyPairLag =
      std::any_of(s.socLatencies.begin(), s.socLatencies.end(), [](const SocLatency& l) { return l.latencyNs > 0; });
  b.lagged = !s.socs.empty() && (s.crossSocLatencyNs > 0 || anyPairLag);
  if (b.lagged) addTransferTimes(b);
  return b;
}

// Per hyperepoch, the gcd of its instances' WCETs, releases and transfer times.
IdVector<HyperepochId, std::int64_t> hyperepochGrains(const InstanceBounds& b) {
  const Schedule& s = b.s;
  IdVector<HyperepochId, std::int64_t> grain(s.hyperepochs.size(), 0);
  for (std::uint32_t i = 0; i < s.instances.size(); ++i) {
    const InstanceInfo& inst = s.instances[i];
    if (!b.valid(inst) || !grain.contains(b.heOf(inst))) continue;
    std::int64_t& gr = grain[b.heOf(inst)];
    gr = schedule::gcd64(gr, b.length(i));
    gr = schedule::gcd64(gr, b.releaseOf(inst) + b.startTimeOf[index(inst.runnable)]);
    if (b.lagged) {
      gr = schedule::gcd64(gr, s.crossSocLatencyNs);
      for (const SocLatency& l : s.socLatencies) gr = schedule::gcd64(gr, l.latencyNs);
    }
  }
  return grain;
}

// What one pass over a hyperepoch's instances gathers besides the report's counts.
struct HyperepochScan {
  // Per resource: its instances' intervals.
  IdVector<ResourceId, std::vector<std::pair<std::int64_t, std::int64_t>>> intervals;
  // Holdings per candidate set: an instance needs one resource out of each of its requests'
  // candidate sets for its whole WCET.
  std::map<std::vector<ResourceId>, std::vector<std::uint32_t>> holdings;
  std::uint32_t critical = kNone;                          // an instance on the critical path
  std::set<std::pair<RunnableId, RunnableId>> crossEdges;  // runnable pairs across SoCs
};

HyperepochScan scanHyperepoch(const Graph& graph, const InstanceBounds& b, HyperepochId h, HyperepochReport& hr) {
  const Schedule& s = b.s;
  HyperepochScan scan;
  scan.intervals = IdVector<ResourceId, std::vector<std::pair<std::int64_t, std::int64_t>>>(s.resources.size());
  IdVector<RunnableId, std::uint8_t> runnableSeen(s.runnables.size(), 0);
  // Where the graph matches the schedule, an instance's candidate sets are its runnable's:
  // looked up once per runnable (its holdings' lists, in request order), not per instance.
  const bool setsByRunnable = graph.runnables.size() == s.runnables.size();
  std::vector<std::vector<std::uint32_t>*> setLists;
  IdVector<RunnableId, std::pair<std::uint32_t, std::uint32_t>> setsOf(setsByRunnable ? s.runnables.size() : 0,
                                                                       {kNone, 0});  // (first, count)
  for (std::uint32_t i = 0; i < s.instances.size(); ++i) {
    const InstanceInfo& inst = s.instances[i];
    if (!b.valid(inst) || b.heOf(inst) != h) continue;
    ++hr.instances;
    if (runnableSeen[inst.runnable] == 0) {
      runnableSeen[inst.runnable] = 1;
      ++hr.runnables;
    }
    hr.scheduleLengthNs = std::max(hr.scheduleLengthNs, inst.endNs);
    if (b.est[i] + b.length(i) + b.tail[i] > hr.criticalPathNs) {
      hr.criticalPathNs = b.est[i] + b.length(i) + b.tail[i];
      scan.critical = i;
    }
    for (InstanceId d : inst.dependencies)
      if (s.instances.contains(d) && !s.socs.empty() && crossesSocs(s, s.instances[d].runnable, inst.runnable))
        scan.crossEdges.emplace(s.instances[d].runnable, inst.runnable);
    for (ResourceId r : inst.resources) {
      if (s.resources.contains(r)) scan.intervals[r].emplace_back(inst.startNs, inst.endNs);
    }
    if (setsByRunnable && graph.runnables.contains(inst.runnable)) {
      auto& [first, count] = setsOf[inst.runnable];
      if (first == kNone) {
        first = static_cast<std::uint32_t>(setLists.size());
        for (auto& set : candidateSets(graph, s, inst, h)) setLists.push_back(&scan.holdings[std::move(set)]);
        count = static_cast<std::uint32_t>(setLists.size()) - first;
      }
      for (std::uint32_t k = 0; k < count; ++k) setLists[first + k]->push_back(i);
    } else {
      for (auto& set : candidateSets(graph, s, inst, h)) scan.holdings[std::move(set)].push_back(i);
    }
    const std::int64_t deadline = b.deadlineOf[index(inst.runnable)];
    if (deadline != kNoDuration && inst.endNs > b.releaseOf(inst) + deadline) {
      hr.deadlinesMissed.push_back({qualified(s, inst.runnable), inst.frame, inst.endNs, b.releaseOf(inst) + deadline});
    }
  }
  return scan;
}

// The transfer time on the critical path: walk it back and forth from `critical`.
std::int64_t criticalTransferNs(const InstanceBounds& b, std::uint32_t critical) {
  std::int64_t total = 0;
  for (std::uint32_t i = critical;;) {  // back: a predecessor whose end (+ lag) gives est
    std::uint32_t next = kNone;
    for (std::uint32_t d : b.preds[i])
      if (b.est[d] + b.lengths[d] + b.lag(d, i) == b.est[i]) next = d;
    if (next == kNone || b.est[i] == b.release[i]) break;
    total += b.lag(next, i);
    i = next;
  }
  for (std::uint32_t i = critical;;) {  // forward: a successor that gives the tail
    std::uint32_t next = kNone;
    for (std::uint32_t x : b.succs[i])
      if (b.tail[i] > 0 && b.lag(i, x) + b.lengths[x] + b.tail[x] == b.tail[i]) next = x;
    if (next == kNone) break;
    total += b.lag(i, next);
    i = next;
  }
  return total;
}

void addCrossSocReport(const InstanceBounds& b, const HyperepochScan& scan, HyperepochReport& hr) {
  const Schedule& s = b.s;
  for (const auto& [from, to] : scan.crossEdges) {
    const auto socOf = [&](RunnableId r) { return s.socs[runnableSoc(s, r)].name; };
    hr.crossSocEdges.push_back(qualified(s, from) + " -> " + qualified(s, to) + " (" + socOf(from) + " -> " +
                               socOf(to) + ")");
  }
  if (b.lagged && scan.critical != kNone) hr.crossSocCriticalNs += criticalTransferNs(b, scan.critical);
}

// One resource's load, idle gaps and utilisation from its instances' intervals (sorted here).
ResourceReport resourceReport(const Schedule& s, ResourceId r, std::int64_t periodNs, std::int64_t scheduleLengthNs,
                              std::vector<std::pair<std::int64_t, std::int64_t>>& iv) {
  std::sort(iv.begin(), iv.end());
  ResourceReport rr;
  rr.name = s.resources[r].name;
  if (s.clients.contains(s.resources[r].client)) rr.client = s.clients[s.resources[r].client].name;
  rr.instances = iv.size();
  std::int64_t cursor = 0;
  for (const auto& [a, b] : iv) {
    rr.loadNs += b - a;
    if (a > cursor) {
      ++rr.idleGaps;
      rr.idleNs += a - cursor;
      rr.largestGapNs = std::max(rr.largestGapNs, a - cursor);
    }
    cursor = std::max(cursor, b);
  }
  if (scheduleLengthNs > cursor) {
    ++rr.idleGaps;
    rr.idleNs += scheduleLengthNs - cursor;
    rr.largestGapNs = std::max(rr.largestGapNs, scheduleLengthNs - cursor);
  }
  if (scheduleLengthNs > 0) {
    rr.utilisation = static_cast<double>(rr.loadNs) / static_cast<double>(scheduleLengthNs);
  }
  if (periodNs > 0) {
    rr.periodUtilisation = static_cast<double>(rr.loadNs) / static_cast<double>(periodNs);
  }
  if (rr.idleNs > 0) {
    rr.fragmentation = 1.0 - static_cast<double>(rr.largestGapNs) / static_cast<double>(rr.idleNs);
  }
  return rr;
}

// Combined bound per candidate set S with m resources: for every release threshold t, the
// work of the holdings confined to S that cannot start before t, at the water level of the
// m resources (all free from 0: t + ceil(work(t) / m)), plus the shortest tail among them,
// maximised over t: the search's load bound at its root (schedule/bounds.hpp). A pinned
// request is a set of one, so this covers each resource's load. Never below `bound`.
std::int64_t holdingsBound(const InstanceBounds& b, const HyperepochScan& scan, std::int64_t bound) {
  // (earliest start, instance), sorted as such: contiguous, where sorting instance numbers by
  // their earliest starts read those at random.
  std::vector<std::pair<std::int64_t, std::uint32_t>> confined;
  std::vector<std::int64_t> avail;
  schedule::WaterLevel water;
  for (const auto& [set, unused] : scan.holdings) {
    (void)unused;
    confined.clear();
    for (const auto& [other, list] : scan.holdings) {
      if (std::includes(set.begin(), set.end(), other.begin(), other.end())) {
        for (std::uint32_t i : list) confined.emplace_back(b.est[i], i);
      }
    }
    std::sort(confined.begin(), confined.end());
    avail.assign(std::max<std::size_t>(set.size(), 1), 0);
    water.reset(avail);
    std::int64_t work = 0;
    std::int64_t minTail = INT64_MAX;
    for (auto it = confined.rbegin(); it != confined.rend(); ++it) {
      const auto [e, i] = *it;
      work += b.lengths[i];
      minTail = std::min(minTail, b.tail[i]);
      water.lowerTo(e);
      bound = std::max(bound, water.level(e, work) + minTail);
    }
  }
  return bound;
}

HyperepochReport hyperepochReport(const Graph& graph, const InstanceBounds& b, HyperepochId h, std::int64_t grain,
                                  const SearchInfo* search) {
  const Schedule& s = b.s;
  const HyperepochInfo& he = s.hyperepochs[h];
  HyperepochReport hr;
  hr.name = he.name;
  hr.periodNs = he.periodNs;
  HyperepochScan scan = scanHyperepoch(graph, b, h, hr);
  if (!s.socs.empty()) addCrossSocReport(b, scan, hr);
  for (ResourceId r : scan.intervals.ids()) {
    if (scan.intervals[r].empty()) continue;
    hr.resources.push_back(resourceReport(s, r, he.periodNs, hr.scheduleLengthNs, scan.intervals[r]));
  }
  std::int64_t bound = holdingsBound(b, scan, hr.criticalPathNs);
  // Every left-shifted schedule starts each instance at a release or at another's end, so
  // the optimum is a multiple of the gcd of the WCETs and releases.
  bound = schedule::roundUp(bound, grain);
  hr.computedLowerBoundNs = bound;
  if (search != nullptr && search->hyperepochs.contains(h)) {
    const HyperepochSearchInfo& si = search->hyperepochs[h];
    bound = std::max(bound, si.lowerBoundNs);
    hr.searchLowerBoundNs = si.searched ? si.lowerBoundNs : 0;
    hr.searched = si.searched;
    hr.firstLengthNs = si.firstLengthNs;
    hr.searchSteps = si.steps;
    hr.secondsToBest = si.secondsToBest;
    hr.clientSwitchesBefore = si.clientSwitchesBefore;
    hr.clientSwitchesAfter = si.clientSwitchesAfter;
  }
  hr.lowerBoundNs = bound;
  hr.provenOptimal = hr.scheduleLengthNs == hr.lowerBoundNs;
  return hr;
}

}  // namespace

CompileReport buildReport(const Graph& graph, const Schedule& schedule, const SearchInfo* search) {
  CompileReport report;
  report.multiSoc = !schedule.socs.empty();
  const InstanceBounds bounds = computeInstanceBounds(schedule);
  const IdVector<HyperepochId, std::int64_t> grain = hyperepochGrains(bounds);
  for (HyperepochId h : schedule.hyperepochs.ids())
    report.hyperepochs.push_back(hyperepochReport(graph, bounds, h, grain[h], search));
  addChannelReport(schedule, report);
  return report;
}

std::string reportText(const CompileReport& report) {
  std::string out;
  for (const HyperepochReport& h : report.hyperepochs) {
    out += "hyperepoch '" + h.name + "'\n";
    auto line = [&](const std::string& key, const std::string& value) { out += "  " + pad(key, 18) + value + "\n"; };
    line("period", humanDuration(h.periodNs));
    line("schedule length",
         humanDuration(h.scheduleLengthNs) +
             (h.periodNs > 0
                  ? " (" + fixed(100.0 * static_cast<double>(h.scheduleLengthNs) / static_cast<double>(h.periodNs), 1) +
                        "% of the period)"
                  : ""));
    line("critical path", humanDuration(h.criticalPathNs));
    line("lower bound", humanDuration(h.lowerBoundNs) + (h.provenOptimal ? " (proven optimal)" : ""));
    if (h.searched) {
      line("search", "first schedule " + humanDuration(h.firstLengthNs) + ", " + std::to_string(h.searchSteps) +
                         " steps, best after " + fixed(h.secondsToBest, 3) + "s");
    }
    line("instances", std::to_string(h.instances) + " of " + std::to_string(h.runnables) + " runnables");
    if (h.clientSwitchesBefore > 0) {
      line("client switches", std::to_string(h.clientSwitchesAfter) + " on the cores" +
                                  (h.clientSwitchesAfter != h.clientSwitchesBefore
                                       ? " (" + std::to_string(h.clientSwitchesBefore) + " before grouping)"
                                       : std::string()));
    }
    if (report.multiSoc) {
      const double share = h.criticalPathNs > 0 ? 100.0 * static_cast<double>(h.crossSocCriticalNs) /
                                                      static_cast<double>(h.criticalPathNs)
                                                : 0.0;
      line("cross-SoC edges", std::to_string(h.crossSocEdges.size()) + " (transfers " +
                                  humanDuration(h.crossSocCriticalNs) + " of the critical path, " + fixed(share, 1) +
                                  "%)");
      for (const std::string& e : h.crossSocEdges) out += "    " + e + "\n";
    }
    if (h.deadlinesMissed.empty()) {
      line("deadlines missed", "none");
    } else {
      line("deadlines missed", std::to_string(h.deadlinesMissed.size()));
      for (const DeadlineMiss& d : h.deadlinesMissed) {
        out += "    " + d.runnable + " frame " + std::to_string(d.frame) + ": ends " + humanDuration(d.endNs) +
               ", deadline " + humanDuration(d.deadlineNs) + "\n";
      }
    }
    std::size_t nameWidth = 8;
    for (const ResourceReport& r : h.resources) nameWidth = std::max(nameWidth, r.name.size() + 2);
    out += "  " + pad("resource", nameWidth) + pad("load", 12, true) + pad("util", 9, true) +
           pad("of period", 11, true) + pad("instances", 11, true) + pad("gaps", 8, true) +
           pad("largest gap", 13, true) + pad("fragmentation", 15, true) + "\n";
    for (const ResourceReport& r : h.resources) {
      out += "  " + pad(r.name, nameWidth) + pad(humanDuration(r.loadNs), 12, true) +
             pad(fixed(100.0 * r.utilisation, 1) + "%", 9, true) +
             pad(fixed(100.0 * r.periodUtilisation, 1) + "%", 11, true) + pad(std::to_string(r.instances), 11, true) +
             pad(std::to_string(r.idleGaps), 8, true) + pad(humanDuration(r.largestGapNs), 13, true) +
             pad(fixed(r.fragmentation, 3), 15, true) + "\n";
    }
  }
  auto count = [](std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  for (const ChannelReport& c : report.channels)
    out += "channel '" + c.name + "'  " + count(c.sizeBytes, "byte", "bytes") + " x " +
           count(c.depth, "buffer", "buffers") + ", writer " + c.writer + " (" + count(c.writes, "run", "runs") +
           " per iteration), " + count(c.readers.size(), "reader", "readers") + " (" +
           count(c.readerRuns, "run", "runs") + ", " + std::to_string(c.previousIterationReads) +
           " of them reading the previous iteration's version)\n";
  for (const ChainReport& c : report.chains) {
    auto bound = [](std::int64_t planned, std::int64_t limit) {
      return humanDuration(planned) + (limit == kNoDuration ? std::string() : " (max " + humanDuration(limit) + ")");
    };
    out += "chain '" + c.name + "'  reaction " + bound(c.reactionNs, c.maxReactionNs) + ", data age " +
           bound(c.ageNs, c.maxAgeNs) + ", allowance " + humanDuration(c.allowanceNs) + " included\n";
    std::string path = "    ";
    for (std::size_t k = 0; k < c.runnables.size(); ++k)
      path += (k ? " -(" + c.links[k - 1] + ")-> " : std::string()) + c.runnables[k];
    out += path + "\n    costliest: " + c.reactionCostliest + " " + humanDuration(c.reactionCostliestNs) +
           " on the worst reaction, " + c.ageCostliest + " " + humanDuration(c.ageCostliestNs) +
           " on the oldest data\n";
  }
  if (!report.chainSearch.empty()) out += report.chainSearch + "\n";
  if (report.compare) out += comparisonText(*report.compare);
  out += "compile time        " + fixed(report.compileTimeMs, 3) + "ms\n";
  return out;
}

std::string reportJson(const CompileReport& report) {
  std::string o = "{\n  \"compile_time_ms\": " + fixed(report.compileTimeMs, 3) + ",\n  \"hyperepochs\": [";
  for (std::size_t i = 0; i < report.hyperepochs.size(); ++i) {
    const HyperepochReport& h = report.hyperepochs[i];
    o += i ? ",\n    {" : "\n    {";
    o += "\n      \"name\": " + jsonString(h.name);
    o += ",\n      \"period_ns\": " + std::to_string(h.periodNs);
    o += ",\n      \"schedule_length_ns\": " + std::to_string(h.scheduleLengthNs);
    o += ",\n      \"critical_path_ns\": " + std::to_string(h.criticalPathNs);
    o += ",\n      \"lower_bound_ns\": " + std::to_string(h.lowerBoundNs);
    o += ",\n      \"proven_optimal\": " + std::string(h.provenOptimal ? "true" : "false");
    if (h.searched) {
      o += ",\n      \"search_lower_bound_ns\": " + std::to_string(h.searchLowerBoundNs);
      o += ",\n      \"first_schedule_length_ns\": " + std::to_string(h.firstLengthNs);
      o += ",\n      \"search_steps\": " + std::to_string(h.searchSteps);
      o += ",\n      \"seconds_to_best\": " + fixed(h.secondsToBest, 6);
    }
    if (h.clientSwitchesBefore > 0) {
      o += ",\n      \"client_switches\": " + std::to_string(h.clientSwitchesAfter);
      o += ",\n      \"client_switches_before_grouping\": " + std::to_string(h.clientSwitchesBefore);
    }
    o += ",\n      \"runnables\": " + std::to_string(h.runnables);
    o += ",\n      \"instances\": " + std::to_string(h.instances);
    if (report.multiSoc) {
      o += ",\n      \"cross_soc_critical_ns\": " + std::to_string(h.crossSocCriticalNs);
      o += ",\n      \"cross_soc_edges\": [";
      for (std::size_t k = 0; k < h.crossSocEdges.size(); ++k) o += (k ? ", " : "") + jsonString(h.crossSocEdges[k]);
      o += "]";
    }
    o += ",\n      \"resources\": [";
    for (std::size_t k = 0; k < h.resources.size(); ++k) {
      const ResourceReport& r = h.resources[k];
      o += k ? ",\n        {" : "\n        {";
      o += "\"name\": " + jsonString(r.name);
      o += ", \"load_ns\": " + std::to_string(r.loadNs);
      o += ", \"utilisation\": " + fixed(r.utilisation, 6);
      o += ", \"period_utilisation\": " + fixed(r.periodUtilisation, 6);
      o += ", \"instances\": " + std::to_string(r.instances);
      o += ", \"idle_gaps\": " + std::to_string(r.idleGaps);
      o += ", \"idle_ns\": " + std::to_string(r.idleNs);
      o += ", \"largest_gap_ns\": " + std::to_string(r.largestGapNs);
      o += ", \"fragmentation\": " + fixed(r.fragmentation, 6) + "}";
    }
    o += h.resources.empty() ? "]" : "\n      ]";
    o += ",\n      \"deadlines_missed\": [";
    for (std::size_t k = 0; k < h.deadlinesMissed.size(); ++k) {
      const DeadlineMiss& d = h.deadlinesMissed[k];
      o += k ? ",\n        {" : "\n        {";
      o += "\"runnable\": " + jsonString(d.runnable) + ", \"frame\": " + std::to_string(d.frame) +
           ", \"end_ns\": " + std::to_string(d.endNs) + ", \"deadline_ns\": " + std::to_string(d.deadlineNs) + "}";
    }
    o += h.deadlinesMissed.empty() ? "]" : "\n      ]";
    o += "\n    }";
  }
  o += report.hyperepochs.empty() ? "]" : "\n  ]";
  // Channels and chains only where the graph has them: an STM graph's report is as before.
  if (!report.channels.empty()) {
    o += ",\n  \"channels\": [";
    for (std::size_t k = 0; k < report.channels.size(); ++k) {
      const ChannelReport& c = report.channels[k];
      o += k ? ",\n    {" : "\n    {";
      o += "\"name\": " + jsonString(c.name) + ", \"size_bytes\": " + std::to_string(c.sizeBytes) +
           ", \"depth\": " + std::to_string(c.depth) + ", \"writer\": " + jsonString(c.writer) +
           ", \"writes_per_iteration\": " + std::to_string(c.writes) + ", \"readers\": [";
      for (std::size_t r = 0; r < c.readers.size(); ++r) o += (r ? ", " : "") + jsonString(c.readers[r]);
      o += "], \"reader_runs\": " + std::to_string(c.readerRuns) +
           ", \"previous_iteration_reads\": " + std::to_string(c.previousIterationReads) + "}";
    }
    o += "\n  ]";
  }
  if (!report.chains.empty()) {
    auto optional = [](std::int64_t v) { return v == kNoDuration ? std::string("null") : std::to_string(v); };
    o += ",\n  \"chains\": [";
    for (std::size_t k = 0; k < report.chains.size(); ++k) {
      const ChainReport& c = report.chains[k];
      o += k ? ",\n    {" : "\n    {";
      o += "\"name\": " + jsonString(c.name) + ", \"runnables\": [";
      for (std::size_t r = 0; r < c.runnables.size(); ++r) o += (r ? ", " : "") + jsonString(c.runnables[r]);
      o += "], \"links\": [";
      for (std::size_t r = 0; r < c.links.size(); ++r) o += (r ? ", " : "") + jsonString(c.links[r]);
      o += "], \"reaction_ns\": " + std::to_string(c.reactionNs) +
           ", \"max_reaction_ns\": " + optional(c.maxReactionNs) + ", \"age_ns\": " + std::to_string(c.ageNs) +
           ", \"max_age_ns\": " + optional(c.maxAgeNs) + ", \"allowance_ns\": " + std::to_string(c.allowanceNs) +
           ", \"reaction_costliest\": " + jsonString(c.reactionCostliest) +
           ", \"reaction_costliest_ns\": " + std::to_string(c.reactionCostliestNs) +
           ", \"age_costliest\": " + jsonString(c.ageCostliest) +
           ", \"age_costliest_ns\": " + std::to_string(c.ageCostliestNs) + "}";
    }
    o += "\n  ]";
    if (!report.chainSearch.empty()) o += ",\n  \"chain_search\": " + jsonString(report.chainSearch);
  }
  if (report.compare) o += ",\n  \"compare\": " + comparisonJson(*report.compare);
  o += "\n}\n";
  return o;
}

}  // namespace tactus::compiler
