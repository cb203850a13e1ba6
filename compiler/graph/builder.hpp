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

/// CPUs and GPUs (a runnable holds exactly one).
bool isHardware(ResourceKind kind);

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
  u32 epoch = 0;
  u32 client = kNone;  ///< set when written under a client's epoch entry
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
  u32 addResource(std::string_view name, std::string_view type, u32 nameNode, u32 client);
  /// The global resources of the graph, or of SoC `soc` (the SOC form: named `Soc.Name`).
  void buildGlobalResources(u32 map, u32 soc = kNone);
  /// The SOC form: the SoCs and their resources.
  void buildSocs(u32 list);
  /// The client's SoC from its `SOC` key (written at valueNode; kNone when absent).
  void setClientSoc(u32 c, u32 valueNode, u32 clientNode);
  /// A global resource by its name as written (SOC form: `Soc.Name`, or `Name` of the client's
  /// own SoC when `soc` is given); kNone when there is none.
  u32 findGlobal(std::string_view name, u32 soc) const;
  /// `<client>.<Soc>.<Name>`: a client-local resource written with its client and SoC; refuses
  /// another client's or another SoC's. Returns the text's local part or an empty view when the
  /// text is not of that form.
  std::string_view stripClientSoc(std::string_view text, u32 client, u32 atLine, const std::string& who) const;
  void buildClientResources(u32 map, u32 client);
  void checkTypeNameClashes() const;
  void buildHyperepochs(u32 list);
  void buildEpochs(u32 list, u32 h);
  void buildClients(u32 list);
  void buildClientEpochs(u32 list, u32 c);
  void buildRunnables(u32 list, u32 c, u32 e);
  /// Counts a runnable of epoch e (of `client`, its name at nameNode) against the
  /// limits on runnables and instances (limits.hpp), before it is added.
  void countRunnable(u32 nameNode, u32 e, u32 client);

  // resolve.cpp: names to indices, submissions, dependencies, round-robin groups
  u32 resolveRef(const Ref& ref, const std::string& context) const;
  /// Marks client-local resource `res` as used from hyperepoch h by runnable r (written at
  /// atLine); refuses one already used from another hyperepoch.
  void useLocal(ResourceId res, HyperepochId h, RunnableId r, u32 atLine);
  void resolveRequests(u32 r);
  void resolveRunnables();
  std::string epochName(u32 e) const;
  void collectGroups(u32 list, u32 e, u32 c);
  void buildGroups();

  Graph g_;
  std::vector<u32> resourceLine_;
  std::vector<u32> epochLine_;
  std::vector<u32> hyperFirstEpoch_;
  std::unordered_map<std::string_view, u32> globalByName_;
  std::unordered_map<std::string_view, u32> socByName_;
  std::deque<std::string> qualifiedNames_;  ///< owns the `Soc.Name` keys of globalByName_
  std::unordered_set<std::string_view> globalTypes_;
  std::unordered_map<u32, std::unordered_set<std::string_view>> localTypes_;
  std::unordered_map<u32, std::unordered_map<std::string_view, u32>> localByName_;
  std::unordered_map<std::string_view, u32> hyperByName_;
  std::unordered_map<std::string, u32> epochByName_;
  std::unordered_map<std::string_view, u32> clientByName_;
  std::vector<std::unordered_map<std::string_view, u32>> runnableByName_;
  std::vector<RawRunnable> raw_;
  std::unordered_map<std::string_view, std::vector<u32>> byType_;
  std::vector<RawGroup> rawGroups_;
  std::vector<std::uint64_t> instances_;  ///< per hyperepoch: runnables x frames so far
  std::uint64_t instancesTotal_ = 0;
};

}  // namespace tactus::compiler::parse
