// The compiled static schedule: everything the master and the clients need to run a graph.
//
// A Schedule is what tactus-compile writes and tactus-master reads; the master never reads YAML.
// All times are nanoseconds relative to the start of the hyperepoch iteration.
//
//   hyperepoch "Perception", period 100 ms
//   CPU1  |ReadCam f0|PreProc f0|      |ReadCam f1|PreProc f1| ...
//   GPU0  |          |          |PreGpu f0|       |          |PreGpu f1| ...
//         0                              33.33 ms
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tactus/core/ids.hpp"

namespace tactus {

// Cross references are strong ids (ids.hpp) into the Schedule's IdVectors (the file stores them
// as plain uint32); kNone marks an absent one.
/// Marks an absent optional duration (no deadline, no monitor budget).
inline constexpr std::int64_t kNoDuration = -1;

/// What a resource is. An engine (GPU, DLA, VPU) runs submittees; an engine queue (CUDA stream,
/// DLA handle, PVA stream) is client-local, maps to an engine of its own kind (`device`) and
/// serialises the submissions to it (FIFO). The values are appended, never renumbered.
enum class ResourceKind : std::uint8_t {
  kCpu,         ///< a CPU core; a worker thread pinned to `core`
  kGpu,         ///< a GPU device; runs submittees
  kCudaStream,  ///< a client-local CUDA stream mapped to a GPU (`device`)
  kMutex,       ///< a scheduling mutex: global, or client-local when `client` is set
  kDla,         ///< a DLA (deep learning accelerator) engine; runs submittees
  kVpu,         ///< a VPU (PVA, programmable vision accelerator) engine; runs submittees
  kDlaHandle,   ///< a client-local DLA handle mapped to a DLA (`device`)
  kPvaStream,   ///< a client-local PVA stream mapped to a VPU (`device`)
};

/// Whether `kind` is an engine that runs submittees (GPU, DLA, VPU).
constexpr bool isEngine(ResourceKind kind) {
  return kind == ResourceKind::kGpu || kind == ResourceKind::kDla || kind == ResourceKind::kVpu;
}
/// Whether `kind` is a client's engine queue (CUDA stream, DLA handle, PVA stream).
constexpr bool isEngineQueue(ResourceKind kind) {
  return kind == ResourceKind::kCudaStream || kind == ResourceKind::kDlaHandle || kind == ResourceKind::kPvaStream;
}
/// Whether `kind` is an engine queue of the non-CUDA engines (a DLA handle, a PVA stream).
constexpr bool isDlaOrPvaQueue(ResourceKind kind) {
  return kind == ResourceKind::kDlaHandle || kind == ResourceKind::kPvaStream;
}
/// Whether `kind` is hardware: a CPU core or an engine (a runnable holds exactly one, first).
constexpr bool isHardware(ResourceKind kind) { return kind == ResourceKind::kCpu || isEngine(kind); }
/// The engine kind an engine queue kind maps to (kGpu for kCudaStream, ...); `kind` itself otherwise.
constexpr ResourceKind engineOfQueue(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kCudaStream: return ResourceKind::kGpu;
    case ResourceKind::kDlaHandle: return ResourceKind::kDla;
    case ResourceKind::kPvaStream: return ResourceKind::kVpu;
    default: return kind;
  }
}
/// The engine queue kind of an engine kind (kCudaStream for kGpu, ...); `kind` itself otherwise.
constexpr ResourceKind queueOfEngine(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kGpu: return ResourceKind::kCudaStream;
    case ResourceKind::kDla: return ResourceKind::kDlaHandle;
    case ResourceKind::kVpu: return ResourceKind::kPvaStream;
    default: return kind;
  }
}
/// The words for an engine queue kind in messages: `CUDA stream`, `DLA handle`, `PVA stream`.
constexpr const char* queueWord(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kDlaHandle: return "DLA handle";
    case ResourceKind::kPvaStream: return "PVA stream";
    default: return "CUDA stream";
  }
}
/// The graph's type key of a built-in kind: `CPU`, `GPU`, `CUDA_STREAM`, `DLA`, `VPU`,
/// `DLA_HANDLE`, `PVA_STREAM` (`MUTEX` for kMutex, whose graph types are the user's own).
constexpr const char* typeKeyOf(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kCpu: return "CPU";
    case ResourceKind::kGpu: return "GPU";
    case ResourceKind::kCudaStream: return "CUDA_STREAM";
    case ResourceKind::kMutex: return "MUTEX";
    case ResourceKind::kDla: return "DLA";
    case ResourceKind::kVpu: return "VPU";
    case ResourceKind::kDlaHandle: return "DLA_HANDLE";
    case ResourceKind::kPvaStream: return "PVA_STREAM";
  }
  return "?";
}

/// What a runnable is.
enum class RunnableKind : std::uint8_t {
  kCpu,         ///< a CPU function
  kSubmitter,   ///< a CPU function that enqueues its submittee on an engine queue (CUDA stream, ...)
  kSubmittee,   ///< engine work (GPU, DLA, VPU) enqueued by its submitter; not registered by clients
  kAliasGroup,  ///< a round-robin slot: frame k runs steps[k mod steps.size()]
};

/// A SoC (or host) of a multi-SoC schedule: one master runs each SoC's clients.
struct SocInfo {
  std::string name;  ///< as in the graph's `SOC` list (`SocA`)
};

/// A client process of the schedule.
struct ClientInfo {
  std::string name;           ///< the name the process passes at init
  std::uint32_t soc = kNone;  ///< SocId index of a multi-SoC schedule, else kNone
};

/// A timeline on which at most one runnable instance runs at a time.
struct ResourceInfo {
  std::string name;  ///< as in the graph (`CPU1`, `GPU0`, `CUDA_STREAM0`, `MEM_BW_MUTEX`)
  std::string type;  ///< the graph's type key (`CPU`, `GPU`, `CUDA_STREAM`, `MUTEX`, ...)
  ResourceKind kind = ResourceKind::kCpu;
  ClientId client = kNone;            ///< owning client for client-local resources, else kNone
  HyperepochId hyperepoch = kNone;    ///< the hyperepoch owning it; kNone when no runnable uses it
  std::uint32_t core = kNone;         ///< kCpu: the core number n of `CPU<n>`
  ResourceId device = kNone;          ///< an engine queue: the engine it maps to (a kCudaStream's kGpu, ...)
  std::uint32_t streamLimit = kNone;  ///< an engine: most client queues that may map to it (kNone = any)
  std::uint32_t soc = kNone;          ///< SocId index of a multi-SoC schedule, else kNone
};

/// A hyperepoch: a set of resources running its epochs on its own time base.
struct HyperepochInfo {
  std::string name;
  std::int64_t periodNs = 0;             ///< length of one hyperepoch iteration
  std::int64_t monitorNs = kNoDuration;  ///< the graph's `Monitor` budget, if given
  std::vector<ResourceId> resources;     ///< ascending
  std::vector<EpochId> epochs;           ///< ascending
};

/// An epoch: a periodic sub-graph, released `frames` times per hyperepoch iteration.
struct EpochInfo {
  std::string name;
  HyperepochId hyperepoch{};  ///< owning hyperepoch
  std::int64_t periodNs = 0;  ///< frame k is released at k * periodNs
  std::uint32_t frames = 1;   ///< frames per hyperepoch iteration
};

/// A runnable of the graph (not yet unrolled into frames).
struct RunnableInfo {
  std::string name;   ///< client-local name (`ReadCamera`); for kAliasGroup the group name
  ClientId client{};  ///< its client
  EpochId epoch{};    ///< its epoch
  RunnableKind kind = RunnableKind::kCpu;
  std::int64_t wcetNs = 0;                           ///< worst-case execution time used for scheduling
  std::int64_t startTimeNs = 0;                      ///< earliest start, from its frame's release
  std::int64_t deadlineNs = kNoDuration;             ///< finish-by, from its frame's release
  std::int64_t endMonitorThresholdNs = kNoDuration;  ///< the graph's `EndMonitorThreshold`, if given
  std::uint32_t priority = 10;                       ///< 1 highest .. 10 lowest
  std::vector<RunnableId> dependencies;              ///< runnables it waits for, same epoch, ascending
  RunnableId submits = kNone;                        ///< kSubmitter: its submittee
  RunnableId submittedBy = kNone;                    ///< kSubmittee: its submitter
  RunnableId aliasGroup = kNone;                     ///< a round-robin member: its kAliasGroup runnable
  std::vector<RunnableId> steps;                     ///< kAliasGroup: member per step, kNone = empty step
};

/// One scheduled run of a runnable in one frame of its epoch.
struct InstanceInfo {
  RunnableId runnable{};                 ///< the runnable it runs
  std::uint32_t frame = 0;               ///< frame of its epoch within the hyperepoch iteration
  std::int64_t startNs = 0;              ///< planned start from the hyperepoch iteration's start
  std::int64_t endNs = 0;                ///< planned end = start + WCET
  std::vector<ResourceId> resources;     ///< the resources it holds, hardware first
  std::vector<InstanceId> dependencies;  ///< instances it waits for (graph edges), ascending
};

/// Per resource: the instances that hold it, in execution order.
struct TimelineInfo {
  ResourceId resource{};              ///< the resource
  std::vector<InstanceId> instances;  ///< in the order they run
};

/// A transfer time given for the dependencies from one SoC to another (the graph's
/// `CrossSocLatency`); a pair of SoCs not given takes Schedule::crossSocLatencyNs.
struct SocLatency {
  std::uint32_t from = 0;      ///< the predecessor's SoC (index into Schedule::socs)
  std::uint32_t to = 0;        ///< the successor's SoC, another than `from`
  std::int64_t latencyNs = 0;  ///< the time after the predecessor's end before the successor may start
};

/// A channel (tactus extension): a named buffer of `sizeBytes` that one runnable writes and
/// others read, held as a ring of `depth` buffers (versions). The compiler decides from the plan
/// which writer run every reader run sees (ChannelRead) and which buffer every writer run fills
/// (ChannelWrite); see channels.hpp.
struct ChannelInfo {
  std::string name;                 ///< as in the graph's `Channels` list
  std::uint64_t sizeBytes = 0;      ///< bytes of one buffer (> 0)
  RunnableId writer{};              ///< the one runnable that writes it
  std::vector<RunnableId> readers;  ///< the runnables that read it, ascending, not the writer
  std::uint32_t writes = 1;         ///< writer runs per hyperepoch iteration (its epoch's frames)
  std::uint32_t depth = 1;          ///< buffers in the ring: versions live at once, at most
};

/// A writer run of a channel: the buffer it fills and the reader runs it waits for first (those
/// of the same iteration still reading the version that buffer holds). In iteration h the run
/// fills buffer (slot + h * writes) mod depth, which is `slot` when depth divides writes.
struct ChannelWrite {
  std::uint32_t channel = 0;      ///< index into Schedule::channels
  InstanceId instance{};          ///< the writer's instance (one per frame)
  std::uint32_t slot = 0;         ///< its buffer in iteration 0
  std::vector<InstanceId> waits;  ///< reader instances of the same iteration it starts after, ascending
};

/// A reader run of a channel: the writer run whose version it reads. A reader before any write
/// in the plan reads the writer run of the previous iteration (`previousIteration`): in the
/// first iteration it has no version yet. In iteration h it reads buffer
/// (slot + (h - previousIteration) * writes) mod depth.
struct ChannelRead {
  std::uint32_t channel = 0;       ///< index into Schedule::channels
  InstanceId instance{};           ///< the reader's instance
  InstanceId writer{};             ///< the writer instance whose version it reads
  bool previousIteration = false;  ///< that writer run is of iteration h - 1 (none in iteration 0)
  std::uint32_t slot = 0;          ///< the writer instance's slot (ChannelWrite::slot)
};

/// A cause-effect chain (tactus extension): a path of runnables, each linked to the next by a
/// dependency (or submission) or a channel, with its bounds computed from the plan.
struct ChainInfo {
  std::string name;                          ///< as in the graph's `Chains` list
  std::vector<RunnableId> runnables;         ///< source first, in path order (2 or more)
  std::int64_t maxReactionNs = kNoDuration;  ///< the graph's `MaxReaction`, if given
  std::int64_t maxAgeNs = kNoDuration;       ///< the graph's `MaxAge`, if given
  std::int64_t hopAllowanceNs = 0;           ///< allowance per runnable for the runtime's hand-off
  std::int64_t reactionNs = 0;               ///< the planned worst reaction, allowance included
  std::int64_t ageNs = 0;                    ///< the planned worst data age, allowance included
};

/// A compiled schedule for one graph.
struct Schedule {
  std::string name;              ///< the graph ID
  std::uint16_t identifier = 0;  ///< the schedule identifier (0..65535)
  std::uint64_t sourceHash = 0;  ///< hash of the graph (and WCET side file) it was compiled from
  IdVector<ClientId, ClientInfo> clients;
  IdVector<ResourceId, ResourceInfo> resources;
  IdVector<HyperepochId, HyperepochInfo> hyperepochs;
  IdVector<EpochId, EpochInfo> epochs;
  IdVector<RunnableId, RunnableInfo> runnables;
  IdVector<InstanceId, InstanceInfo> instances;  ///< grouped by hyperepoch, then sorted by (start, id)
  std::vector<TimelineInfo> timelines;           ///< one per resource that any instance holds, by resource
  /// Multi-SoC schedules: the SoCs (empty for a schedule of one machine), and the transfer time
  /// a dependency between runnables of two SoCs adds before its successor may start: the one
  /// given for its pair of SoCs (ascending by (from, to), each pair at most once), else the default.
  std::vector<SocInfo> socs;
  std::int64_t crossSocLatencyNs = 0;
  std::vector<SocLatency> socLatencies;
  /// Channels and chains (tactus extension; empty for an STM graph): the channels, every writer
  /// run's buffer and waits (by channel, then instance), every reader run's version (by channel,
  /// then instance) and the chains with their planned bounds.
  std::vector<ChannelInfo> channels;
  std::vector<ChannelWrite> channelWrites;
  std::vector<ChannelRead> channelReads;
  std::vector<ChainInfo> chains;
};

/// The SoC of a runnable (its client's), kNone in a schedule of one machine.
std::uint32_t runnableSoc(const Schedule& schedule, RunnableId runnable);

/// Whether the dependency `from` -> `to` (runnable indices) crosses SoCs.
bool crossesSocs(const Schedule& schedule, RunnableId from, RunnableId to);

/// The transfer time of a dependency from SoC `from` to SoC `to`: 0 within one SoC (or where
/// either is kNone), the pair's entry of `socLatencies` if any, else `crossSocLatencyNs`.
std::int64_t socLatencyNs(const Schedule& schedule, std::uint32_t from, std::uint32_t to);

/// The transfer time of the dependency `from` -> `to` (runnable indices): socLatencyNs of their SoCs.
std::int64_t dependencyLatencyNs(const Schedule& schedule, RunnableId from, RunnableId to);

/// The longest run of `r` that is no overrun: its WCET plus its EndMonitorThreshold (0 when not
/// given). The master's overrun watch and tactus-report's --fail-on-overrun judge by it.
inline std::int64_t overrunLimitNs(const RunnableInfo& r) {
  return r.wcetNs + (r.endMonitorThresholdNs == kNoDuration ? 0 : r.endMonitorThresholdNs);
}

/// Name used in messages: `Client0.ReadCamera`.
std::string qualifiedName(const Schedule& schedule, RunnableId runnable);

/// For each runnable, its instance per frame ([runnable][frame], kNone where it has none), built
/// in one pass; for lookups that would otherwise scan all instances. Assumes indices in range
/// (a verified schedule).
IdVector<RunnableId, std::vector<InstanceId>> instancesByRunnableFrame(const Schedule& schedule);

/// That table's instance of `runnable` at `frame` (kNone where it has none or either is out of range).
InstanceId instanceAt(const IdVector<RunnableId, std::vector<InstanceId>>& table, RunnableId runnable,
                      std::uint32_t frame);

/// The client named `name` (kNone: the schedule has none).
ClientId clientIndex(const Schedule& schedule, std::string_view name);

/// The hyperepoch an instance belongs to.
HyperepochId instanceHyperepoch(const Schedule& schedule, InstanceId instance);

}  // namespace tactus
