// Building a Graph from a YTree: the sections (resources, hyperepochs, epochs, clients, runnables).
#include "graph/builder.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "duration.hpp"
#include "graph/graph_rules.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {
ResourceKind kindOfType(std::string_view type) {
  for (ResourceKind k : {ResourceKind::kCpu, ResourceKind::kGpu, ResourceKind::kCudaStream, ResourceKind::kDla,
                         ResourceKind::kVpu, ResourceKind::kDlaHandle, ResourceKind::kPvaStream})
    if (type == typeKeyOf(k)) return k;
  return ResourceKind::kMutex;
}

bool isBuiltInType(std::string_view type) { return kindOfType(type) != ResourceKind::kMutex; }

Graph Builder::build() {
  if (t_.root == kNone) die(ErrorCode::kParse, 1, "empty graph (expected a map with Version and the graph id)");
  buildTop(t_.root);
  resolveRunnables();
  buildGroups();
  check(redirectToGroups(g_));
  check(checkCycles(g_, ""));
  check(orderStreams(g_));
  check(checkCycles(g_, " (through the order of a shared CUDA stream)"));
  finishHyperepochs(g_);
  if (channelsNode_ != kNone) buildChannels(channelsNode_);
  if (chainsNode_ != kNone) buildChains(chainsNode_);
  return std::move(g_);
}

void Builder::countRunnable(u32 nameNode, EpochId e, ClientId client) {
  auto who = [&] { return "runnable " + quoted(g_.clients[client].name + "." + std::string(t_.text(nameNode))); };
  if (g_.runnables.size() >= limits::kMaxRunnables)
    die(ErrorCode::kValidation, line(nameNode),
        who() + ": more than " + std::to_string(limits::kMaxRunnables) + " runnables in the graph");
  // Instances (runnable x frame) are counted as runnables are read, before the scheduler
  // allocates anything for them: at most 2^16 frames are added per runnable, far from a wrap.
  const HyperepochId h = g_.epochs[e].hyperepoch;
  if (instances_.size() < g_.hyperepochs.size()) instances_.resize(g_.hyperepochs.size(), 0);
  instances_[h] += g_.epochs[e].frames;
  instancesTotal_ += g_.epochs[e].frames;
  if (instances_[h] > limits::kMaxInstancesPerHyperepoch)
    die(ErrorCode::kValidation, line(nameNode),
        who() + ": hyperepoch " + quoted(g_.hyperepochs[h].name) + " has more than " +
            std::to_string(limits::kMaxInstancesPerHyperepoch) + " instances (runnables x frames of their epochs)");
  if (instancesTotal_ > limits::kMaxInstancesTotal)
    die(ErrorCode::kValidation, line(nameNode),
        who() + ": the graph has more than " + std::to_string(limits::kMaxInstancesTotal) +
            " instances (runnables x frames of their epochs)");
}

void Builder::check(const Result<void>& rule) const {
  if (!rule) throw Failure{rule.error()};
}

void Builder::buildTop(u32 root) {
  u32 graphKey = kNone, graphValue = kNone, versionNode = kNone, socNode = kNone, socKey = kNone;
  u32 latencyNode = kNone, latencyKey = kNone;
  forEachEntry(root, "the top level", [&](std::string_view key, u32 k, u32 v) {
    if (key == "Version") {
      versionNode = v;
    } else if (key == "SOC") {
      socNode = v;
      socKey = k;
    } else if (key == "CrossSocLatency") {
      latencyNode = v;
      latencyKey = k;
    } else if (graphKey != kNone) {
      // Two candidates for the graph id: one of them may be a misspelt top-level key.
      std::vector<std::string_view> topKeys;
      for (const KeySpec& top : kTopTable.keys)
        if (!top.key.starts_with('<')) topKeys.push_back(top.key);
      std::string hint;
      for (u32 node : {graphKey, k}) {
        const std::string_view guess = closestName(t_.text(node), topKeys);
        if (!guess.empty()) hint = " (did you mean " + quoted(guess) + " for " + quoted(t_.text(node)) + "?)";
      }
      die(ErrorCode::kParse, line(k),
          "unexpected top-level key " + quoted(key) + ": a graph file holds Version and one graph id (already " +
              quoted(t_.text(graphKey)) + ")" + hint);
    } else {
      graphKey = k;
      graphValue = v;
    }
  });
  if (versionNode == kNone) die(ErrorCode::kValidation, line(root), "missing 'Version' (2.0.0 or 3.0.0)");
  std::string_view version = scalar(versionNode, "Version");
  if (version != "2.0.0" && version != "3.0.0")
    die(ErrorCode::kValidation, line(versionNode), "unknown Version " + quoted(version) + " (known: 2.0.0, 3.0.0)");
  g_.version = std::string(version);
  if (graphKey == kNone) die(ErrorCode::kValidation, line(root), "missing the graph id (the key next to Version)");
  std::string_view name = t_.text(graphKey);
  checkName(name, graphKey, "graph", false);
  g_.name = std::string(name);

  u32 resources = kNone, hyperepochs = kNone, clients = kNone;
  std::string where = "graph " + quoted(name);
  forEachKey(graphValue, where, kGraphTable, [&](std::string_view key, u32 k, u32 v) {
    if (key == "Identifier") {
      g_.identifier = static_cast<std::uint16_t>(integer(v, "Identifier", 0, 65535));
    } else if (key == "Resources") {
      resources = v;
    } else if (key == "Hyperepochs") {
      hyperepochs = v;
    } else if (key == "Clients") {
      clients = v;
    } else if (key == "SOC") {
      if (socNode != kNone)
        die(ErrorCode::kValidation, line(k),
            "SOC is given twice (at the top level and under graph " + quoted(name) + ")");
      socNode = v;
      socKey = k;
    } else if (key == "Channels") {
      channelsNode_ = v;
    } else if (key == "Chains") {
      chainsNode_ = v;
    } else if (key == "CrossSocLatency") {
      if (latencyNode != kNone)
        die(ErrorCode::kValidation, line(k),
            "CrossSocLatency is given twice (at the top level and under graph " + quoted(name) + ")");
      latencyNode = v;
      latencyKey = k;
    } else {
      notRead(key, k, where);
    }
  });
  if (socNode != kNone && resources != kNone)
    die(ErrorCode::kValidation, line(socKey),
        "graph " + quoted(name) + " has both Resources and SOC: a multi-SoC graph declares its resources per SoC");
  if (socNode != kNone) buildSocs(socNode);
  if (latencyNode != kNone) {
    if (socNode == kNone)
      die(ErrorCode::kValidation, line(latencyKey),
          "graph " + quoted(name) + " gives a CrossSocLatency, but declares no SOC list");
    buildSocLatencies(latencyNode);
  }
  if (resources != kNone) buildGlobalResources(resources);
  if (hyperepochs == kNone)
    die(ErrorCode::kValidation, line(graphKey), "graph " + quoted(name) + " has no Hyperepochs");
  buildHyperepochs(hyperepochs);
  if (clients == kNone) die(ErrorCode::kValidation, line(graphKey), "graph " + quoted(name) + " has no Clients");
  buildClients(clients);
  checkTypeNameClashes();
  check(checkStreamLimits(g_, resourceLine_));
}

ResourceId Builder::addResource(std::string_view name, std::string_view type, u32 nameNode, ClientId client) {
  if (g_.resources.size() >= limits::kMaxResources)
    die(ErrorCode::kValidation, line(nameNode),
        "resource " + quoted(name) + ": more than " + std::to_string(limits::kMaxResources) + " resources");
  ResourceInfo r;
  r.name = std::string(name);
  r.type = std::string(type);
  r.kind = kindOfType(type);
  r.client = client;
  if (r.kind == ResourceKind::kCpu) {
    std::string_view digits = name.substr(std::min<std::size_t>(3, name.size()));
    bool ok = name.substr(0, 3) == "CPU" && !digits.empty() && digits.size() <= 5 &&
              std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!ok)
      die(ErrorCode::kValidation, line(nameNode),
          "CPU resource " + quoted(name) + " must be named CPU<n> (n = the core it runs on)");
    r.core = static_cast<u32>(std::stoul(std::string(digits)));
  }
  const ResourceId id{static_cast<u32>(g_.resources.size())};
  g_.resources.push_back(std::move(r));
  resourceLine_.push_back(line(nameNode));
  return id;
}

void Builder::buildSocs(u32 list) {
  expect(list, NodeKind::kSeq, "SOC");
  if (t_.size(list) == 0) die(ErrorCode::kValidation, line(list), "SOC is empty (list the SoCs with their Resources)");
  if (t_.size(list) > limits::kMaxSocs)
    die(ErrorCode::kValidation, line(list),
        std::to_string(t_.size(list)) + " SoCs (at most " + std::to_string(limits::kMaxSocs) + ")");
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a SoC");
    std::string_view name = t_.text(key);
    checkName(name, key, "SoC", false);
    const u32 soc = static_cast<u32>(g_.socs.size());
    if (!socByName_.emplace(name, soc).second) die(ErrorCode::kValidation, line(key), "duplicate SoC " + quoted(name));
    g_.socs.push_back(SocInfo{std::string(name)});
    g_.socLines.push_back(static_cast<int>(line(key)));
    const std::string where = "SoC " + quoted(name);
    u32 resources = kNone;
    forEachKey(value, where, kSocTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Resources") resources = v;
      else notRead(k, kn, where);
    });
    if (resources == kNone) die(ErrorCode::kValidation, line(key), where + " has no Resources");
    buildGlobalResources(resources, soc);
  }
}

void Builder::buildSocLatencies(u32 list) {
  expect(list, NodeKind::kSeq, "CrossSocLatency");
  std::map<std::pair<u32, u32>, u32> lineOf;  // (from, to) -> the line of its entry
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    const u32 item = t_.kid(list, i);
    const std::string what = "a CrossSocLatency entry";
    u32 fromNode = kNone, toNode = kNone, latencyNode = kNone;
    forEachKey(item, what, kLatencyTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "From") fromNode = v;
      else if (k == "To") toNode = v;
      else if (k == "Latency") latencyNode = v;
      else notRead(k, kn, what);
    });
    for (auto [node, key] : {std::pair{fromNode, "From"}, std::pair{toNode, "To"}, std::pair{latencyNode, "Latency"}})
      if (node == kNone)
        die(ErrorCode::kValidation, line(item),
            what + " has no " + key + " (write {From: SocA, To: SocB, Latency: 150us})");
    auto socOf = [&](u32 node, const char* key) {
      std::string_view soc = scalar(node, std::string("the ") + key + " of " + what);
      auto it = socByName_.find(soc);
      if (it == socByName_.end()) {
        std::vector<std::string_view> socs;
        for (const SocInfo& s : g_.socs) socs.push_back(s.name);
        die(ErrorCode::kValidation, line(node),
            "CrossSocLatency " + std::string(key) + " names unknown SoC " + quoted(soc) +
                didYouMean(soc, socs, "declared:"));
      }
      return it->second;
    };
    const u32 from = socOf(fromNode, "From");
    const u32 to = socOf(toNode, "To");
    const std::string pair = "from SoC " + quoted(g_.socs[from].name) + " to SoC " + quoted(g_.socs[to].name);
    if (from == to)
      die(ErrorCode::kValidation, line(toNode),
          "CrossSocLatency " + pair + ": a dependency within one SoC has no transfer time");
    const auto [at, added] = lineOf.emplace(std::pair{from, to}, line(item));
    if (!added)
      die(ErrorCode::kValidation, line(item),
          "CrossSocLatency " + pair + " is given twice (first at line " + std::to_string(at->second) + ")");
    g_.socLatencies.push_back(SocLatency{from, to, duration(latencyNode, "the CrossSocLatency " + pair, true, true)});
  }
  std::sort(g_.socLatencies.begin(), g_.socLatencies.end(), [](const SocLatency& a, const SocLatency& b) {
    return std::pair{a.from, a.to} < std::pair{b.from, b.to};
  });
}

ResourceId Builder::findGlobal(std::string_view name, u32 soc) const {
  auto it = globalByName_.find(name);
  if (it != globalByName_.end()) return it->second;
  if (soc == kNone) return kNone;
  it = globalByName_.find(g_.socs[soc].name + "." + std::string(name));
  return it == globalByName_.end() ? kNone : it->second;
}

void Builder::buildGlobalResources(u32 map, u32 soc) {
  const std::string where = soc == kNone ? "the global Resources" : "the Resources of SoC " + quoted(g_.socs[soc].name);
  forEachEntry(map, where, [&](std::string_view type, u32 typeNode, u32 list) {
    checkName(type, typeNode, "resource type", false);
    if (isEngineQueue(kindOfType(type)))
      die(ErrorCode::kValidation, line(typeNode),
          std::string(type) + " resources are client-local: declare them under a client's Resources");
    expect(list, NodeKind::kSeq, "resource type " + quoted(type));
    globalTypes_.insert(type);
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      u32 item = t_.kid(list, i);
      u32 nameNode = item, valueNode = kNone;
      if (kind(item) == NodeKind::kMap) std::tie(nameNode, valueNode) = singleEntry(item, "a resource");
      std::string_view local = scalar(nameNode, "a resource name");
      checkName(local, nameNode, "resource", false);
      // The SOC form names a SoC's resources `Soc.Name`.
      std::string_view name = local;
      if (soc != kNone) name = qualifiedNames_.emplace_back(g_.socs[soc].name + "." + std::string(local));
      if (!globalByName_.emplace(name, ResourceId{static_cast<u32>(g_.resources.size())}).second)
        die(ErrorCode::kValidation, line(nameNode), "duplicate resource " + quoted(name));
      ResourceId r = addResource(local, type, nameNode, kNone);
      g_.resources[r].name = std::string(name);
      g_.resources[r].soc = soc;
      if (valueNode != kNone) {
        if (!isEngine(kindOfType(type)))
          die(ErrorCode::kParse, line(nameNode),
              "resource " + quoted(name) + " of type " + quoted(type) +
                  " takes no value (only GPUs, DLAs and VPUs take a stream limit)");
        g_.resources[r].streamLimit =
            static_cast<u32>(integer(valueNode, "stream limit of " + quoted(name), 0, 1000000));
      }
    }
  });
}

void Builder::buildClientResources(u32 map, ClientId client) {
  std::string where = "the Resources of client " + quoted(g_.clients[client].name);
  auto& locals = localByName_[client];
  forEachEntry(map, where, [&](std::string_view type, u32 typeNode, u32 list) {
    checkName(type, typeNode, "resource type", false);
    ResourceKind k = kindOfType(type);
    if (isHardware(k))
      die(ErrorCode::kValidation, line(typeNode),
          "hardware resources (" + std::string(type) + ") are global: declare them under the graph's Resources");
    expect(list, NodeKind::kSeq, "resource type " + quoted(type));
    localTypes_[client].insert(type);
    for (std::size_t i = 0; i < t_.size(list); ++i) {
      u32 item = t_.kid(list, i);
      u32 nameNode = item, valueNode = kNone;
      if (kind(item) == NodeKind::kMap) std::tie(nameNode, valueNode) = singleEntry(item, "a resource");
      std::string_view name = scalar(nameNode, "a resource name");
      checkName(name, nameNode, "resource", false);
      // (SOC form: also a global of the client's SoC, which `name` alone would name as well)
      if (globalByName_.count(name) != 0 || findGlobal(name, g_.clients[client].soc) != kNone)
        die(ErrorCode::kValidation, line(nameNode),
            "client " + quoted(g_.clients[client].name) + " resource " + quoted(name) +
                " has the name of a global resource");
      if (!locals.emplace(name, ResourceId{static_cast<u32>(g_.resources.size())}).second)
        die(ErrorCode::kValidation, line(nameNode),
            "duplicate resource " + quoted(name) + " in client " + quoted(g_.clients[client].name));
      ResourceId r = addResource(name, type, nameNode, client);
      g_.resources[r].soc = g_.clients[client].soc;
      if (isEngineQueue(k)) {
        // A CUDA stream maps to a GPU, a DLA handle to a DLA, a PVA stream to a VPU.
        const ResourceKind engine = engineOfQueue(k);
        const char* queue = queueWord(k);
        const char* engineType = typeKeyOf(engine);
        if (valueNode == kNone)
          die(ErrorCode::kValidation, line(nameNode),
              std::string(queue) + " " + quoted(name) + " must name its " + engineType + " (`- " + std::string(name) +
                  ": " + engineType + "0`)");
        std::string_view gpu =
            scalar(valueNode, std::string("the ") + engineType + " of " + queue + " " + quoted(name));
        const u32 soc = g_.clients[client].soc;
        const ResourceId device = findGlobal(gpu, soc);
        if (device == kNone || g_.resources[device].kind != engine)
          die(ErrorCode::kValidation, line(valueNode),
              std::string(queue) + " " + quoted(name) + " maps to " + quoted(gpu) + ", which is not a declared " +
                  engineType + gpuHint(gpu, soc, engine));
        if (g_.resources[device].soc != soc)
          die(ErrorCode::kValidation, line(valueNode),
              std::string(queue) + " " + quoted(name) + " of client " + quoted(g_.clients[client].name) + " maps to " +
                  engineType + " " + quoted(gpu) + " of SoC " + quoted(g_.socs[g_.resources[device].soc].name) +
                  ", but the client runs on SoC " + quoted(g_.socs[soc].name));
        g_.resources[r].device = device;
      } else if (valueNode != kNone) {
        die(ErrorCode::kParse, line(nameNode),
            "resource " + quoted(name) + " of type " + quoted(type) + " takes no value");
      }
    }
  });
}

std::string Builder::gpuHint(std::string_view wrong, u32 soc, ResourceKind engine) const {
  std::vector<std::string_view> gpus;
  for (const ResourceInfo& r : g_.resources)
    if (r.kind == engine && r.soc == soc) gpus.push_back(r.name);
  const std::string type = typeKeyOf(engine);
  if (gpus.empty()) return " (the graph declares no " + type + ")";
  return didYouMean(wrong, gpus, "declared " + type + "s:");
}

void Builder::checkTypeNameClashes() const {
  auto clash = [&](ResourceId r, std::string_view type) {
    die(ErrorCode::kValidation, resourceLine_[r],
        "resource " + quoted(g_.resources[r].name) + " has the name of resource type " + quoted(type));
  };
  for (ResourceId r : g_.resources.ids()) {
    const std::string& name = g_.resources[r].name;
    if (isBuiltInType(name) || globalTypes_.count(name) != 0) clash(r, name);
    if (g_.resources[r].client != kNone) {
      auto it = localTypes_.find(g_.resources[r].client);
      if (it != localTypes_.end() && it->second.count(name) != 0) clash(r, name);
    } else {
      for (const auto& [client, types] : localTypes_)
        if (types.count(name) != 0) clash(r, name);
    }
  }
}

void Builder::buildHyperepochs(u32 list) {
  expect(list, NodeKind::kSeq, "Hyperepochs");
  if (t_.size(list) == 0) die(ErrorCode::kValidation, line(list), "Hyperepochs is empty");
  if (t_.size(list) > limits::kMaxHyperepochs)
    die(ErrorCode::kValidation, line(list),
        std::to_string(t_.size(list)) + " hyperepochs (at most " + std::to_string(limits::kMaxHyperepochs) + ")");
  std::unordered_map<std::string_view, HyperepochId> names;
  IdVector<HyperepochId, u32> resourceLists;
  IdVector<HyperepochId, u32> nameNodes;
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a hyperepoch");
    std::string_view name = t_.text(key);
    checkName(name, key, "hyperepoch", false);
    const HyperepochId h{static_cast<u32>(g_.hyperepochs.size())};
    if (!names.emplace(name, h).second) die(ErrorCode::kValidation, line(key), "duplicate hyperepoch " + quoted(name));
    HyperepochInfo info;
    info.name = std::string(name);
    g_.hyperepochs.push_back(info);
    g_.hyperepochLines.push_back(static_cast<int>(line(key)));
    std::string where = "hyperepoch " + quoted(name);
    u32 period = kNone, resources = kNone, epochs = kNone;
    forEachKey(value, where, kHyperepochTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Period") period = v;
      else if (k == "Resources") resources = v;
      else if (k == "Epochs") epochs = v;
      else if (k == "Monitor") g_.hyperepochs[h].monitorNs = duration(v, "Monitor of " + where, true, false);
      else notRead(k, kn, where);
    });
    if (epochs == kNone) die(ErrorCode::kValidation, line(key), where + " has no Epochs");
    buildEpochs(epochs, h);
    u32 epochCount = static_cast<u32>(g_.epochs.size()) - hyperFirstEpoch_[h];
    if (period != kNone) {
      g_.hyperepochs[h].periodNs = duration(period, "Period of " + where, false, false);
    } else if (epochCount == 1) {
      const EpochInfo& e = g_.epochs.back();
      __int128 p = static_cast<__int128>(e.periodNs) * e.frames;
      if (p > kMaxDurationNs) die(ErrorCode::kValidation, line(key), where + ": period too large");
      g_.hyperepochs[h].periodNs = static_cast<std::int64_t>(p);
    } else {
      die(ErrorCode::kValidation, line(key), where + " has several epochs and needs a Period");
    }
    for (u32 e = hyperFirstEpoch_[h]; e < g_.epochs.size(); ++e) {
      __int128 p = static_cast<__int128>(g_.epochs[e].periodNs) * g_.epochs[e].frames;
      if (p > g_.hyperepochs[h].periodNs)
        die(ErrorCode::kValidation, epochLine_[e],
            "epoch " + quoted(std::string(name) + "." + g_.epochs[e].name) + " period x frames (" +
                std::to_string(static_cast<std::int64_t>(p)) + " ns) exceeds the hyperepoch period (" +
                std::to_string(g_.hyperepochs[h].periodNs) + " ns)");
    }
    resourceLists.push_back(resources);
    nameNodes.push_back(key);
  }
  hyperByName_ = std::move(names);
  // resource partition
  std::size_t n = g_.hyperepochs.size();
  for (HyperepochId h : g_.hyperepochs.ids()) {
    u32 res = resourceLists[h];
    if (res == kNone) {
      if (n > 1)
        die(ErrorCode::kValidation, line(nameNodes[h]),
            "hyperepoch " + quoted(g_.hyperepochs[h].name) +
                " lists no Resources (needed when there are several hyperepochs)");
      for (ResourceInfo& r : g_.resources) r.hyperepoch = h;
      continue;
    }
    expect(res, NodeKind::kSeq, "the Resources of hyperepoch " + quoted(g_.hyperepochs[h].name));
    for (std::size_t i = 0; i < t_.size(res); ++i) {
      u32 item = t_.kid(res, i);
      std::string_view rn = scalar(item, "a resource of hyperepoch " + quoted(g_.hyperepochs[h].name));
      auto it = globalByName_.find(rn);
      if (it == globalByName_.end()) {
        std::vector<std::string_view> declared;
        for (const ResourceInfo& ri : g_.resources)
          if (ri.client == kNone) declared.push_back(ri.name);
        const std::string_view guess = closestName(rn, declared);
        die(ErrorCode::kValidation, line(item),
            "hyperepoch " + quoted(g_.hyperepochs[h].name) + " lists unknown resource " + quoted(rn) + " (" +
                (guess.empty() ? std::string() : "did you mean " + quoted(guess) + "? ") +
                "name global resource instances" +
                (declared.empty() ? std::string(": none is declared") : "; declared: " + nameList(declared)) + ")");
      }
      ResourceInfo& r = g_.resources[it->second];
      if (r.hyperepoch == h)
        die(ErrorCode::kValidation, line(item),
            "hyperepoch " + quoted(g_.hyperepochs[h].name) + " lists resource " + quoted(rn) + " twice");
      if (r.hyperepoch != kNone)
        die(ErrorCode::kValidation, line(item),
            "resource " + quoted(rn) + " is in hyperepochs " + quoted(g_.hyperepochs[r.hyperepoch].name) + " and " +
                quoted(g_.hyperepochs[h].name) + " (hyperepoch resources must be disjoint)");
      r.hyperepoch = h;
    }
  }
}

void Builder::buildEpochs(u32 list, HyperepochId h) {
  const std::string hname = g_.hyperepochs[h].name;
  expect(list, NodeKind::kSeq, "the Epochs of hyperepoch " + quoted(hname));
  if (t_.size(list) == 0) die(ErrorCode::kValidation, line(list), "hyperepoch " + quoted(hname) + " has no epochs");
  if (g_.epochs.size() + t_.size(list) > limits::kMaxEpochs)
    die(ErrorCode::kValidation, line(list),
        "hyperepoch " + quoted(hname) + ": more than " + std::to_string(limits::kMaxEpochs) + " epochs in the graph");
  hyperFirstEpoch_.push_back(static_cast<u32>(g_.epochs.size()));
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "an epoch");
    std::string_view name = t_.text(key);
    checkName(name, key, "epoch", false);
    std::string full = hname + "." + std::string(name);
    const EpochId e{static_cast<u32>(g_.epochs.size())};
    if (!epochByName_.emplace(full, e).second)
      die(ErrorCode::kValidation, line(key), "duplicate epoch " + quoted(full));
    EpochInfo info;
    info.name = std::string(name);
    info.hyperepoch = h;
    bool hasPeriod = false;
    std::string where = "epoch " + quoted(full);
    if (kind(value) != NodeKind::kMap) die(ErrorCode::kParse, line(key), where + " must be a map with a Period");
    forEachKey(value, where, kEpochTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Period") {
        info.periodNs = duration(v, "Period of " + where, false, false);
        hasPeriod = true;
      } else if (k == "Frames") {
        info.frames = static_cast<u32>(integer(v, "Frames of " + where, 1, limits::kMaxFramesPerEpoch));
      } else if (k == "AliasGroups") {
        collectGroups(v, e, kNone);
      } else {
        notRead(k, kn, where);
      }
    });
    if (!hasPeriod) die(ErrorCode::kValidation, line(key), where + " has no Period");
    g_.epochs.push_back(info);
    epochLine_.push_back(line(key));
    g_.epochLines.push_back(static_cast<int>(line(key)));
    g_.hyperepochs[h].epochs.push_back(e);
  }
}

void Builder::buildClients(u32 list) {
  expect(list, NodeKind::kSeq, "Clients");
  if (t_.size(list) > limits::kMaxClients)
    die(ErrorCode::kValidation, line(list),
        std::to_string(t_.size(list)) + " clients (at most " + std::to_string(limits::kMaxClients) + ")");
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a client");
    std::string_view name = t_.text(key);
    checkName(name, key, "client", false);
    const ClientId c{static_cast<u32>(g_.clients.size())};
    if (!clientByName_.emplace(name, c).second)
      die(ErrorCode::kValidation, line(key), "duplicate client " + quoted(name));
    g_.clients.push_back(ClientInfo{std::string(name)});
    runnableByName_.emplace_back();
    std::string where = "client " + quoted(name);
    u32 resources = kNone, epochs = kNone, soc = kNone;
    forEachKey(
        value, where, kClientTable,
        [&](std::string_view k, u32 kn, u32 v) {
          if (k == "Resources") resources = v;
          else if (k == "Epochs") epochs = v;
          else if (k == "SOC") soc = v;
          else notRead(k, kn, where);
        },
        !g_.socs.empty());
    setClientSoc(c, soc, key);
    if (resources != kNone) buildClientResources(resources, c);
    if (epochs != kNone) buildClientEpochs(epochs, c);
  }
}

void Builder::setClientSoc(ClientId c, u32 valueNode, u32 clientNode) {
  const std::string who = "client " + quoted(g_.clients[c].name);
  if (valueNode == kNone) {
    if (!g_.socs.empty())
      die(ErrorCode::kValidation, line(clientNode),
          who + " has no SOC (every client of a multi-SoC graph names its SoC)");
    return;
  }
  std::string_view name = scalar(valueNode, "the SOC of " + who);
  if (g_.socs.empty())
    die(ErrorCode::kValidation, line(valueNode),
        who + " names SoC " + quoted(name) + ", but the graph declares no SOC list");
  auto it = socByName_.find(name);
  if (it == socByName_.end()) {
    std::vector<std::string_view> socs;
    for (const SocInfo& s : g_.socs) socs.push_back(s.name);
    die(ErrorCode::kValidation, line(valueNode),
        who + " names unknown SoC " + quoted(name) + didYouMean(name, socs, "declared:"));
  }
  g_.clients[c].soc = it->second;
}

void Builder::buildClientEpochs(u32 list, ClientId c) {
  const std::string cname = g_.clients[c].name;
  expect(list, NodeKind::kSeq, "the Epochs of client " + quoted(cname));
  std::unordered_set<EpochId> seen;
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "an epoch entry of client " + quoted(cname));
    std::string_view ref = t_.text(key);
    auto it = epochByName_.find(std::string(ref));
    if (it == epochByName_.end()) die(ErrorCode::kValidation, line(key), unknownEpoch(cname, ref));
    EpochId e = it->second;
    if (!seen.insert(e).second)
      die(ErrorCode::kValidation, line(key), "client " + quoted(cname) + " lists epoch " + quoted(ref) + " twice");
    std::string where = "epoch " + quoted(ref) + " of client " + quoted(cname);
    forEachKey(value, where, kClientEpochTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Runnables") buildRunnables(v, c, e);
      else if (k == "AliasGroups") collectGroups(v, e, c);
      else notRead(k, kn, where);
    });
  }
}

std::string Builder::unknownEpoch(const std::string& client, std::string_view ref) const {
  std::vector<std::string> owned;  // `Hyperepoch.Epoch`, in the order declared
  for (const EpochInfo& e : g_.epochs) owned.push_back(g_.hyperepochs[e.hyperepoch].name + "." + e.name);
  std::vector<std::string_view> names(owned.begin(), owned.end());
  std::string_view guess = closestName(ref, names);
  if (guess.empty() && ref.find('.') == std::string_view::npos) {
    // `Camera` for `Perception.Camera`: the epoch without its hyperepoch.
    for (std::size_t i = 0; i < names.size(); ++i)
      if (g_.epochs[EpochId{static_cast<u32>(i)}].name == ref) {
        guess = names[i];
        break;
      }
  }
  return "client " + quoted(client) + " names unknown epoch " + quoted(ref) + " (" +
         (guess.empty() ? std::string() : "did you mean " + quoted(guess) + "? ") +
         "write Hyperepoch.Epoch; declared: " + nameList(names) + ")";
}

void Builder::buildRunnables(u32 list, ClientId c, EpochId e) {
  const std::string& cname = g_.clients[c].name;
  expect(list, NodeKind::kSeq, "the Runnables of client " + quoted(cname));
  auto& byName = runnableByName_[c];
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a runnable");
    std::string_view name = t_.text(key);
    checkName(name, key, "runnable", true);
    const RunnableId r{static_cast<u32>(g_.runnables.size())};
    countRunnable(key, e, c);
    if (!byName.emplace(name, r).second)
      die(ErrorCode::kValidation, line(key), "duplicate runnable " + quoted(cname + "." + std::string(name)));
    GraphRunnable gr;
    gr.name = std::string(name);
    gr.client = c;
    gr.epoch = e;
    gr.loc = SourceLoc{origin_, static_cast<int>(line(key))};
    RawRunnable raw;
    std::string where = "runnable " + quoted(cname + "." + std::string(name));
    if (kind(value) != NodeKind::kMap)
      die(ErrorCode::kParse, line(key), where + " must be a map with WCET and Resources");
    bool hasWcet = false, hasResources = false;
    forEachKey(value, where, kRunnableTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "WCET") {
        gr.wcetNs = duration(v, "WCET of " + where, true, true);
        hasWcet = true;
      } else if (k == "Resources") {
        raw.resources = refList(v, "the Resources of " + where);
        hasResources = true;
      } else if (k == "Dependencies") {
        raw.dependencies = refList(v, "the Dependencies of " + where);
        if (raw.dependencies.size() > limits::kMaxDependenciesPerRunnable)
          die(ErrorCode::kValidation, line(v),
              where + " has " + std::to_string(raw.dependencies.size()) + " dependencies (at most " +
                  std::to_string(limits::kMaxDependenciesPerRunnable) + ")");
      } else if (k == "Submits") {
        raw.submits = Ref{scalar(v, "Submits of " + where), line(v)};
        raw.hasSubmits = true;
      } else if (k == "StartTime") {
        gr.startTimeNs = duration(v, "StartTime of " + where, true, true);
      } else if (k == "Deadline") {
        gr.deadlineNs = duration(v, "Deadline of " + where, false, false);
      } else if (k == "Priority") {
        gr.priority = static_cast<u32>(integer(v, "Priority of " + where, 1, 10));
      } else if (k == "EndMonitorThreshold") {
        gr.endMonitorThresholdNs = duration(v, "EndMonitorThreshold of " + where, true, false);
      } else {
        notRead(k, kn, where);
      }
    });
    if (!hasWcet) die(ErrorCode::kValidation, line(key), where + " has no WCET");
    if (!hasResources) die(ErrorCode::kValidation, line(key), where + " has no Resources");
    g_.runnables.push_back(std::move(gr));
    raw_.push_back(std::move(raw));
  }
}

}  // namespace tactus::compiler::parse
