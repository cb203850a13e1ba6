// The compute graph as read from YAML: the compiler's input model, after checking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/schedule.hpp"

namespace tactus::compiler {

/// Where something was written: file and 1-based line.
struct SourceLoc {
  std::string file;
  int line = 0;
};

/// A resource request of a runnable: an instance name or a type, resolved to candidates.
struct ResourceRequest {
  std::string text;  ///< as written (`CPU`, `CPU1`, `CUDA_STREAM`)
  ResourceKind kind = ResourceKind::kCpu;
  std::vector<ResourceId> candidates;  ///< the resources it may be given; one for an instance
  bool isType = false;                 ///< written as a type, the compiler picks the instance
};

/// A runnable of the graph. Round-robin groups appear as runnables of kind kAliasGroup.
struct GraphRunnable {
  std::string name;  ///< client-local name
  ClientId client{};
  EpochId epoch{};
  RunnableKind kind = RunnableKind::kCpu;
  std::int64_t wcetNs = 0;
  std::int64_t startTimeNs = 0;
  std::int64_t deadlineNs = kNoDuration;
  std::int64_t endMonitorThresholdNs = kNoDuration;
  std::uint32_t priority = 10;
  /// hardware request first, then software ones. A submittee's stream is not listed: it takes
  /// the stream chosen for its submitter.
  std::vector<ResourceRequest> resources;
  std::vector<RunnableId> dependencies;  ///< ascending, no duplicates
  RunnableId submits = kNone;
  RunnableId submittedBy = kNone;
  RunnableId aliasGroup = kNone;  ///< member of this kAliasGroup runnable
  std::vector<RunnableId> steps;  ///< kAliasGroup: members per step, kNone = `None`
  SourceLoc loc;
};

/// A channel of the graph (tactus extension): one writer, its readers, the size of a buffer.
struct GraphChannel {
  std::string name;
  std::uint64_t sizeBytes = 0;
  RunnableId writer{};
  std::vector<RunnableId> readers;  ///< ascending, no duplicates
  SourceLoc loc;
};

/// A cause-effect chain of the graph (tactus extension) and its requirements.
struct GraphChain {
  std::string name;
  std::vector<RunnableId> runnables;  ///< source first
  std::int64_t maxReactionNs = kNoDuration;
  std::int64_t maxAgeNs = kNoDuration;
  SourceLoc loc;
};

/// A checked graph: resources, hyperepochs, epochs and clients as in the schedule model, plus
/// runnables with their requests still open. Dependencies on round-robin members are already
/// redirected to their group, and members are not scheduled on their own.
struct Graph {
  std::string version;  ///< `2.0.0` or `3.0.0`
  std::string name;     ///< graph ID
  std::uint16_t identifier = 0;
  std::uint64_t sourceHash = 0;  ///< hash of the YAML bytes and of the WCET side file, if any
  std::string sourceFile;
  IdVector<ClientId, ClientInfo> clients;
  IdVector<ResourceId, ResourceInfo> resources;
  IdVector<HyperepochId, HyperepochInfo> hyperepochs;
  IdVector<EpochId, EpochInfo> epochs;
  IdVector<RunnableId, GraphRunnable> runnables;
  /// Where each hyperepoch and epoch was written (line in sourceFile; empty for a graph built in
  /// code), for messages about them.
  IdVector<HyperepochId, int> hyperepochLines;
  IdVector<EpochId, int> epochLines;
  /// Multi-SoC graphs (the `SOC` form): the SoCs in graph order (empty for one machine); clients
  /// and global resources carry their SoC. The transfer time a dependency between runnables of
  /// two SoCs adds before its successor may start: the graph's `CrossSocLatency` entry for the
  /// pair (socLatencies, ascending by (from, to)), else `--cross-soc-latency` (crossSocLatencyNs).
  std::vector<SocInfo> socs;
  std::int64_t crossSocLatencyNs = 0;
  std::vector<SocLatency> socLatencies;
  std::vector<int> socLines;
  /// Channels and chains (tactus extension), in graph order; links are checked by the builder,
  /// the versions and bounds computed on the schedule (compiler/channel_analysis.cpp).
  std::vector<GraphChannel> channels;
  std::vector<GraphChain> chains;
};

}  // namespace tactus::compiler
