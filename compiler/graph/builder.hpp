// Building a Graph from a YTree: reading each section (resources, hyperepochs, epochs, clients,
// runnables, alias groups) with its rules, resolving names, then the graph-level rules.
// builder.cpp reads the sections; resolve.cpp resolves requests, submissions, dependencies and
// round-robin groups.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph.hpp"
#include "graph/tree_reader.hpp"
#include "graph/yaml_tree.hpp"

namespace tactus::compiler::parse {

/// The kind that a resource type name denotes (unknown types are mutexes).
ResourceKind kindOfType(std::string_view type);

/// Whether `type` is a built-in type key (CPU, GPU, CUDA_STREAM, DLA, VPU, DLA_HANDLE, PVA_STREAM).
bool isBuiltInType(std::string_view type);

/// What a runnable wrote, kept until every runnable is known.
struct RawRunnable {
  std::vector<Ref> resources;
  std::vector<Ref> dependencies;
  Ref submits;
  bool hasSubmits = false;
};

/// A round-robin group as written.
struct RawGroup {
  u32 nameNode = kNone;
  u32 valueNode = kNone;
  EpochId epoch{};
  ClientId client = kNone;  ///< set when written under a client's epoch entry
};

/// Builds the checked Graph of one tree; a broken rule throws Failure (`origin:line: ...`).
class Builder : public TreeReader {
 public:
  Builder(const YTree& tree, const std::string& origin) : TreeReader(tree, origin) { g_.sourceFile = origin; }

  /// Reads, resolves and checks the whole graph (once).
  Graph build();

 private:
  void check(const Result<void>& rule) const;

  // builder.cpp: the sections
  void buildTop(u32 root);
  ResourceId addResource(std::string_view name, std::string_view type, u32 nameNode, ClientId client);
  /// The global resources of the graph, or of SoC `soc` (the SOC form: named `Soc.Name`).
  void buildGlobalResources(u32 map, u32 soc = kNone);
  /// The SOC form: the SoCs and their resources.
  void buildSocs(u32 list);
  /// The SOC form's `CrossSocLatency` list: a transfer time per (From, To) pair of SoCs.
  void buildSocLatencies(u32 list);
  /// The client's SoC from its `SOC` key (written at valueNode; kNone when absent).
  void setClientSoc(ClientId c, u32 valueNode, u32 clientNode);
  /// A global resource by its name as written (SOC form: `Soc.Name`, or `Name` of the client's
  /// own SoC when `soc` is given); kNone when there is none.
  ResourceId findGlobal(std::string_view name, u32 soc) const;
  /// `<client>.<Soc>.<Name>`: a client-local resource written with its client and SoC; refuses
  /// another client's or another SoC's. Returns the text's local part or an empty view when the
  /// text is not of that form.
  std::string_view stripClientSoc(std::string_view text, ClientId client, u32 atLine, const std::string& who) const;
  void buildClientResources(u32 map, ClientId client);
  void checkTypeNameClashes() const;
  void buildHyperepochs(u32 list);
  void buildEpochs(u32 list, HyperepochId h);
  void buildClients(u32 list);
  void buildClientEpochs(u32 list, ClientId c);
  /// `client 'C' names unknown epoch 'H.Ep' (did you mean 'H.E'? ... declared: 'H.E', ...)`.
  std::string unknownEpoch(const std::string& client, std::string_view ref) const;
  /// For an engine queue mapped to an undeclared engine of kind `engine` (a CUDA stream's GPU, ...):
  /// ` (did you mean ...? declared GPUs: ...)`.
  std::string gpuHint(std::string_view wrong, u32 soc, ResourceKind engine) const;
  void buildRunnables(u32 list, ClientId c, EpochId e);
  /// Counts a runnable of epoch e (of `client`, its name at nameNode) against the
  /// limits on runnables and instances (limits.hpp), before it is added.
  void countRunnable(u32 nameNode, EpochId e, ClientId client);

  // resolve.cpp: names to indices, submissions, dependencies, round-robin groups
  RunnableId resolveRef(const Ref& ref, const std::string& context) const;
  /// For an unknown runnable `Client.Name` of a known client: ` (did you mean '...'? client
  /// 'Client' declares 'A', 'B')`.
  std::string runnableHint(std::string_view ref) const;
  /// Marks client-local resource `res` as used from hyperepoch h by runnable r (written at
  /// atLine); refuses one already used from another hyperepoch.
  void useLocal(ResourceId res, HyperepochId h, RunnableId r, u32 atLine);
  void resolveRequests(RunnableId r);
  /// For an unknown resource of a runnable of `client` in hyperepoch h: ` (did you mean '...'?
  /// hyperepoch 'H' has 'CPU0', 'CPU1'; client 'C' has 'S0'; types: 'CPU', 'CUDA_STREAM')`.
  std::string resourceHint(std::string_view wrong, ClientId client, HyperepochId h) const;
  void resolveRunnables();
  std::string epochName(EpochId e) const;
  void collectGroups(u32 list, EpochId e, ClientId c);
  void buildGroups();

  // channels.cpp: channels and chains (tactus extension), once every runnable is resolved
  void buildChannels(u32 list);
  void buildChains(u32 list);
  /// Refuses a round-robin runnable (group or member) as a channel end or chain place.
  void refuseRoundRobin(RunnableId r, u32 atLine, const std::string& who) const;

  Graph g_;
  u32 channelsNode_ = kNone;  ///< the graph's `Channels` list, read once runnables are resolved
  u32 chainsNode_ = kNone;    ///< the graph's `Chains` list
  IdVector<ResourceId, u32> resourceLine_;
  IdVector<EpochId, u32> epochLine_;
  IdVector<HyperepochId, u32> hyperFirstEpoch_;  ///< position of its first epoch in g_.epochs
  std::unordered_map<std::string_view, ResourceId> globalByName_;
  std::unordered_map<std::string_view, u32> socByName_;
  std::deque<std::string> qualifiedNames_;  ///< owns the `Soc.Name` keys of globalByName_
  std::unordered_set<std::string_view> globalTypes_;
  std::unordered_map<ClientId, std::unordered_set<std::string_view>> localTypes_;
  std::unordered_map<ClientId, std::unordered_map<std::string_view, ResourceId>> localByName_;
  std::unordered_map<std::string_view, HyperepochId> hyperByName_;
  std::unordered_map<std::string, EpochId> epochByName_;
  std::unordered_map<std::string_view, ClientId> clientByName_;
  IdVector<ClientId, std::unordered_map<std::string_view, RunnableId>> runnableByName_;
  IdVector<RunnableId, RawRunnable> raw_;
  std::unordered_map<std::string_view, std::vector<ResourceId>> byType_;
  std::vector<RawGroup> rawGroups_;
  IdVector<HyperepochId, std::uint64_t> instances_;  ///< per hyperepoch: runnables x frames so far
  std::uint64_t instancesTotal_ = 0;
};

}  // namespace tactus::compiler::parse
