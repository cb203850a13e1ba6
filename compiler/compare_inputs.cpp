// `tactus-compile --compare` (see compare.hpp): what changed in the input between the old
// schedule file and the new graph, and the old schedule's requests for its lower bound.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "compare.hpp"
#include "graph.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {

namespace {

std::string clientName(const IdVector<ClientId, ClientInfo>& clients, ClientId c) {
  return clients.contains(c) ? clients[c].name : std::string();
}

// `Client.Name`, or `Name` for something of no client.
std::string qualify(const std::string& client, const std::string& name) {
  return client.empty() ? name : client + "." + name;
}

std::string resourceName(const IdVector<ClientId, ClientInfo>& clients, const ResourceInfo& r) {
  return qualify(clientName(clients, r.client), r.name);
}

std::string durationOrNone(std::int64_t ns) { return ns == kNoDuration ? std::string("none") : humanDuration(ns); }

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? std::string("none") : out;
}

// The new graph's runnables by qualified name.
std::map<std::string, RunnableId> graphRunnables(const Graph& g) {
  std::map<std::string, RunnableId> out;
  for (RunnableId r : g.runnables.ids())
    out[qualify(clientName(g.clients, g.runnables[r].client), g.runnables[r].name)] = r;
  return out;
}

std::string oldRunnableName(const Schedule& s, RunnableId r) {
  return qualify(clientName(s.clients, s.runnables[r].client), s.runnables[r].name);
}

std::string epochName(const IdVector<HyperepochId, HyperepochInfo>& hs, const IdVector<EpochId, EpochInfo>& es,
                      EpochId e) {
  if (!es.contains(e)) return "none";
  return (hs.contains(es[e].hyperepoch) ? hs[es[e].hyperepoch].name + "." : std::string()) + es[e].name;
}

// The resources an old runnable held (its first instance's) and the new one's pinned requests,
// by name; empty (not compared) where the new one requests a type or is not a CPU runnable,
// whose resources the compiler picks.
bool pinnedResources(const Graph& g, const GraphRunnable& n, const Schedule& s, RunnableId o, std::uint32_t first,
                     std::vector<std::string>& oldNames, std::vector<std::string>& newNames) {
  if (n.kind != RunnableKind::kCpu || s.runnables[o].kind != RunnableKind::kCpu) return false;
  for (const ResourceRequest& q : n.resources) {
    if (q.isType || q.candidates.size() != 1 || !g.resources.contains(q.candidates[0])) return false;
    newNames.push_back(resourceName(g.clients, g.resources[q.candidates[0]]));
  }
  if (first >= s.instances.size()) return false;
  for (ResourceId r : s.instances[first].resources)
    if (s.resources.contains(r)) oldNames.push_back(resourceName(s.clients, s.resources[r]));
  std::sort(oldNames.begin(), oldNames.end());
  std::sort(newNames.begin(), newNames.end());
  return true;
}

// The changes of one runnable in both.
void runnableChanges(const Graph& g, RunnableId n, const Schedule& s, RunnableId o, std::uint32_t first,
                     const std::string& name, std::vector<InputChange>& out) {
  const GraphRunnable& nr = g.runnables[n];
  const RunnableInfo& orr = s.runnables[o];
  auto add = [&](const char* change, const std::string& from, const std::string& to) {
    if (from != to) out.push_back({"runnable", name, change, from, to});
  };
  add("WCET", humanDuration(orr.wcetNs), humanDuration(nr.wcetNs));
  add("start time", humanDuration(orr.startTimeNs), humanDuration(nr.startTimeNs));
  add("deadline", durationOrNone(orr.deadlineNs), durationOrNone(nr.deadlineNs));
  add("epoch", epochName(s.hyperepochs, s.epochs, orr.epoch), epochName(g.hyperepochs, g.epochs, nr.epoch));
  std::vector<std::string> oldDeps, newDeps;
  for (RunnableId d : orr.dependencies)
    if (s.runnables.contains(d)) oldDeps.push_back(oldRunnableName(s, d));
  for (RunnableId d : nr.dependencies)
    if (g.runnables.contains(d))
      newDeps.push_back(qualify(clientName(g.clients, g.runnables[d].client), g.runnables[d].name));
  std::sort(oldDeps.begin(), oldDeps.end());
  std::sort(newDeps.begin(), newDeps.end());
  add("dependencies", joined(oldDeps), joined(newDeps));
  std::vector<std::string> oldRes, newRes;
  if (pinnedResources(g, nr, s, o, first, oldRes, newRes)) add("resources", joined(oldRes), joined(newRes));
}

// Names only in one of two lists, as `added` (only in `news`) or `removed` changes.
void addedRemoved(const char* item, const std::vector<std::string>& olds, const std::vector<std::string>& news,
                  std::vector<InputChange>& out) {
  for (const std::string& n : news)
    if (std::find(olds.begin(), olds.end(), n) == olds.end()) out.push_back({item, n, "added", "", ""});
  for (const std::string& o : olds)
    if (std::find(news.begin(), news.end(), o) == news.end()) out.push_back({item, o, "removed", "", ""});
}

}  // namespace

std::vector<InputChange> inputChanges(const Graph& g, const Schedule& s) {
  std::vector<InputChange> out;
  const std::map<std::string, RunnableId> news = graphRunnables(g);
  std::map<std::string, RunnableId> olds;
  for (RunnableId r : s.runnables.ids()) olds[oldRunnableName(s, r)] = r;
  std::vector<std::uint32_t> first(s.runnables.size(), kNone);  // each old runnable's first instance
  for (std::uint32_t i = static_cast<std::uint32_t>(s.instances.size()); i-- > 0;)
    if (s.runnables.contains(s.instances[i].runnable)) first[index(s.instances[i].runnable)] = i;
  for (RunnableId n : g.runnables.ids()) {  // graph order
    const std::string name = qualify(clientName(g.clients, g.runnables[n].client), g.runnables[n].name);
    const auto o = olds.find(name);
    if (o == olds.end()) {
      out.push_back({"runnable", name, "added", "", humanDuration(g.runnables[n].wcetNs)});
    } else {
      runnableChanges(g, n, s, o->second, first[index(o->second)], name, out);
    }
  }
  for (RunnableId o : s.runnables.ids()) {
    const std::string name = oldRunnableName(s, o);
    if (news.find(name) == news.end())
      out.push_back({"runnable", name, "removed", humanDuration(s.runnables[o].wcetNs), ""});
  }
  std::vector<std::string> oldNames, newNames;
  for (const ResourceInfo& r : s.resources) oldNames.push_back(resourceName(s.clients, r));
  for (const ResourceInfo& r : g.resources) newNames.push_back(resourceName(g.clients, r));
  addedRemoved("resource", oldNames, newNames, out);
  oldNames.clear();
  newNames.clear();
  for (const ClientInfo& c : s.clients) oldNames.push_back(c.name);
  for (const ClientInfo& c : g.clients) newNames.push_back(c.name);
  addedRemoved("client", oldNames, newNames, out);
  return out;
}

Graph requestsForOldSchedule(const Graph& g, const Schedule& s) {
  const std::map<std::string, RunnableId> news = graphRunnables(g);
  std::map<std::string, ResourceId> oldResources;
  for (ResourceId r : s.resources.ids()) oldResources[resourceName(s.clients, s.resources[r])] = r;
  Graph out;
  out.runnables.resize(s.runnables.size());
  for (RunnableId o : s.runnables.ids()) {
    GraphRunnable& gr = out.runnables[o];
    gr.name = s.runnables[o].name;
    gr.kind = s.runnables[o].kind;
    gr.steps = s.runnables[o].steps;  // the old schedule's ids, as the members here
    const auto n = news.find(oldRunnableName(s, o));
    if (n == news.end()) continue;
    std::vector<ResourceRequest> requests = g.runnables[n->second].resources;
    bool all = true;
    for (ResourceRequest& q : requests) {
      for (ResourceId& c : q.candidates) {
        const auto at =
            g.resources.contains(c) ? oldResources.find(resourceName(g.clients, g.resources[c])) : oldResources.end();
        if (at == oldResources.end()) {
          all = false;
          break;
        }
        c = at->second;
      }
    }
    if (all) gr.resources = std::move(requests);
  }
  // The requests stand for the old runnable only where each resource its instances held is a
  // candidate (a submittee's stream is its submitter's, in no request of its own).
  for (const InstanceInfo& inst : s.instances) {
    if (!out.runnables.contains(inst.runnable)) continue;
    std::vector<ResourceRequest>& reqs = out.runnables[inst.runnable].resources;
    if (reqs.empty() || s.runnables[inst.runnable].kind == RunnableKind::kSubmittee) continue;
    for (ResourceId r : inst.resources) {
      const bool candidate = std::any_of(reqs.begin(), reqs.end(), [&](const ResourceRequest& q) {
        return std::find(q.candidates.begin(), q.candidates.end(), r) != q.candidates.end();
      });
      if (!candidate) {
        reqs.clear();
        break;
      }
    }
  }
  return out;
}

}  // namespace tactus::compiler
