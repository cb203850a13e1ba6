// The schedule file's schema: every record kind and its fields, declared once. The writer and the
// reader of schedule_file.cpp both walk these tables, so a field added here is written and read
// (and refused when malformed) without a second copy. Layout and versions: schedule_file.hpp.
//
// A field: field(key, &Info::member, encoding), then .from(version) when a later format version
// brought it (older files neither have nor get it) and .checkedBy(fn) for a rule beyond its
// encoding, checked as soon as it is read. An absent value (kNone, kNoDuration) is written `-`
// by the encodings that allow one (kOptional, kDuration, ListEncoding{.., true});
// every field of a record's version is present in the file, in the order given here.
// A record kind: records(keyword, &Schedule::table, Room{limit, "what"}, fields...), then
// .withIds() when records start with `id=N`, .from(version, brought) when a later version
// brought it, .checkedBy(fn) for a rule over the whole record. The order of kRecordKinds is the
// order of the records in the file.
#pragma once

#include <string>
#include <tuple>
#include <utility>

#include "schedule_file_fields.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"

namespace tactus::schedule_file {

inline constexpr NameEncoding kName{};
inline constexpr IndexEncoding kIndex{};
inline constexpr TimeEncoding kTime{};
/// An index or `-` (kNone).
inline constexpr OrAbsentEncoding<IndexEncoding, NoneValue> kOptional{{}, kNone};
/// A time or `-` (kNoDuration).
inline constexpr OrAbsentEncoding<TimeEncoding, std::int64_t> kDuration{{}, kNoDuration};
inline constexpr CountEncoding kCount{};
inline constexpr FlagEncoding kFlag{};
inline constexpr HashEncoding kHash{};

/// DLA and VPU engines and their queues: kinds a version-4 reader does not know.
constexpr bool needsEnginesVersion(ResourceKind kind) {
  return (isEngine(kind) || isEngineQueue(kind)) && kind != ResourceKind::kGpu && kind != ResourceKind::kCudaStream;
}

// --- rules beyond the encodings ----------------------------------------------------------------

inline Result<void> checkResourceKind(const ResourceInfo& r, ParseState& st) {
  if (st.version < kScheduleFormatVersionEngines && needsEnginesVersion(r.kind))
    return st.reader.err("resource kind " + quoted(kindName(r.kind), 40) + " in a file of format version " +
                         std::to_string(st.version) + " (DLA and VPU engines need version " +
                         std::to_string(kScheduleFormatVersionEngines) + ")");
  return {};
}

inline Result<void> checkFrames(const EpochInfo& e, ParseState& st) {
  if (e.frames > limits::kMaxFramesPerEpoch)
    return st.reader.err("epoch " + quoted(e.name) + " has " + std::to_string(e.frames) +
                         " frames, above the limit of " + std::to_string(limits::kMaxFramesPerEpoch) + " per epoch");
  st.framesTotal += e.frames;
  if (st.framesTotal > limits::kMaxFramesTotal)
    return st.reader.err("the epochs have more than " + std::to_string(limits::kMaxFramesTotal) +
                         " frames in all (the limit per schedule)");
  return {};
}

inline Result<void> checkChannelSize(const ChannelInfo& c, ParseState& st) {
  if (c.sizeBytes == 0 || c.sizeBytes > limits::kMaxChannelBytes)
    return st.reader.err("channel " + quoted(c.name) + " has size " + std::to_string(c.sizeBytes) + ", outside 1.." +
                         std::to_string(limits::kMaxChannelBytes) + " bytes");
  return {};
}

// A contract with the verifier and the master: both SoCs declared above, two different
// ones, each pair once and in (from, to) order, a time in range.
inline Result<void> checkSocLatency(const SocLatency& l, ParseState& st) {
  const Schedule& s = st.s;
  for (const std::uint32_t soc : {l.from, l.to})
    if (soc >= s.socs.size())
      return st.reader.err("soc_latency names SoC " + std::to_string(soc) + ", but the schedule has " +
                           std::to_string(s.socs.size()) + " SoCs");
  if (l.from == l.to)
    return st.reader.err("soc_latency from SoC " + quoted(s.socs[l.from].name) +
                         " to itself (a dependency within one SoC has no transfer time)");
  if (!s.socLatencies.empty()) {
    const SocLatency& prev = s.socLatencies.back();
    if (prev.from == l.from && prev.to == l.to)
      return st.reader.err("soc_latency from SoC " + quoted(s.socs[l.from].name) + " to SoC " +
                           quoted(s.socs[l.to].name) + " is given twice");
    if (std::pair{prev.from, prev.to} > std::pair{l.from, l.to})
      return st.reader.err("soc_latency record out of order (sorted by from, then to)");
  }
  return {};
}

// --- the records -----------------------------------------------------------------------------

/// The second line of every file.
inline constexpr auto kScheduleRecord =
    single("schedule", field("name", &Schedule::name, kName), field("identifier", &Schedule::identifier, kIndex),
           field("source_hash", &Schedule::sourceHash, kHash),
           field("cross_soc_latency_ns", &Schedule::crossSocLatencyNs, kTime).from(kScheduleFormatVersionMultiSoc));

// The fields of each record kind after `id=` (where it has one), in file order.

inline constexpr auto kSocFields = std::tuple{
    field("name", &SocInfo::name, kName),
};

inline constexpr auto kSocLatencyFields = std::tuple{
    field("from", &SocLatency::from, kIndex),
    field("to", &SocLatency::to, kIndex),
    field("latency_ns", &SocLatency::latencyNs, kTime),
};

inline constexpr auto kClientFields = std::tuple{
    field("name", &ClientInfo::name, kName),
    field("soc", &ClientInfo::soc, kOptional).from(kScheduleFormatVersionMultiSoc),
};

inline constexpr auto kResourceFields = std::tuple{
    field("name", &ResourceInfo::name, kName),
    field("type", &ResourceInfo::type, kName),
    field("kind", &ResourceInfo::kind, KindEncoding<ResourceKind>{"resource kind"}).checkedBy(checkResourceKind),
    field("client", &ResourceInfo::client, kOptional),
    field("hyperepoch", &ResourceInfo::hyperepoch, kOptional),
    field("core", &ResourceInfo::core, kOptional),
    field("device", &ResourceInfo::device, kOptional),
    field("stream_limit", &ResourceInfo::streamLimit, kOptional),
    field("soc", &ResourceInfo::soc, kOptional).from(kScheduleFormatVersionMultiSoc),
};

inline constexpr auto kHyperepochFields = std::tuple{
    field("name", &HyperepochInfo::name, kName),
    field("period_ns", &HyperepochInfo::periodNs, kTime),
    field("monitor_ns", &HyperepochInfo::monitorNs, kDuration),
    field("resources", &HyperepochInfo::resources, ListEncoding{limits::kMaxResources}),
    field("epochs", &HyperepochInfo::epochs, ListEncoding{limits::kMaxEpochs}),
};

inline constexpr auto kEpochFields = std::tuple{
    field("name", &EpochInfo::name, kName),
    field("hyperepoch", &EpochInfo::hyperepoch, kIndex),
    field("period_ns", &EpochInfo::periodNs, kTime),
    field("frames", &EpochInfo::frames, kIndex).checkedBy(checkFrames),
};

inline constexpr auto kRunnableFields = std::tuple{
    field("name", &RunnableInfo::name, kName),
    field("client", &RunnableInfo::client, kIndex),
    field("epoch", &RunnableInfo::epoch, kIndex),
    field("kind", &RunnableInfo::kind, KindEncoding<RunnableKind>{"runnable kind"}),
    field("wcet_ns", &RunnableInfo::wcetNs, kTime),
    field("start_ns", &RunnableInfo::startTimeNs, kTime),
    field("deadline_ns", &RunnableInfo::deadlineNs, kDuration),
    field("end_monitor_ns", &RunnableInfo::endMonitorThresholdNs, kDuration),
    field("priority", &RunnableInfo::priority, kIndex),
    field("deps", &RunnableInfo::dependencies, ListEncoding{limits::kMaxDependenciesPerRunnable}),
    field("submits", &RunnableInfo::submits, kOptional),
    field("submitted_by", &RunnableInfo::submittedBy, kOptional),
    field("alias_group", &RunnableInfo::aliasGroup, kOptional),
    field("steps", &RunnableInfo::steps, ListEncoding{limits::kMaxRunnables, true}),
};

inline constexpr auto kInstanceFields = std::tuple{
    field("runnable", &InstanceInfo::runnable, kIndex),
    field("frame", &InstanceInfo::frame, kIndex),
    field("start_ns", &InstanceInfo::startNs, kTime),
    field("end_ns", &InstanceInfo::endNs, kTime),
    field("resources", &InstanceInfo::resources, ListEncoding{limits::kMaxResources}),
    field("deps", &InstanceInfo::dependencies, ListEncoding{limits::kMaxDependenciesPerRunnable}),
};

inline constexpr auto kTimelineFields = std::tuple{
    field("resource", &TimelineInfo::resource, kIndex),
    field("instances", &TimelineInfo::instances, ListEncoding{limits::kMaxInstancesTotal}),
};

// Version 6: channels, their writer and reader runs, chains (tactus extension). Index ranges and
// consistency with the plan are the verifier's (channelErrors).

inline constexpr auto kChannelFields = std::tuple{
    field("name", &ChannelInfo::name, kName),
    field("size", &ChannelInfo::sizeBytes, kCount).checkedBy(checkChannelSize),
    field("writer", &ChannelInfo::writer, kIndex),
    field("readers", &ChannelInfo::readers, ListEncoding{limits::kMaxRunnables}),
    field("writes", &ChannelInfo::writes, kIndex),
    field("depth", &ChannelInfo::depth, kIndex),
};

inline constexpr auto kChannelWriteFields = std::tuple{
    field("channel", &ChannelWrite::channel, kIndex),
    field("instance", &ChannelWrite::instance, kIndex),
    field("slot", &ChannelWrite::slot, kIndex),
    field("waits", &ChannelWrite::waits, ListEncoding{limits::kMaxInstancesTotal}),
};

inline constexpr auto kChannelReadFields = std::tuple{
    field("channel", &ChannelRead::channel, kIndex), field("instance", &ChannelRead::instance, kIndex),
    field("writer", &ChannelRead::writer, kIndex),   field("previous", &ChannelRead::previousIteration, kFlag),
    field("slot", &ChannelRead::slot, kIndex),
};

inline constexpr auto kChainFields = std::tuple{
    field("name", &ChainInfo::name, kName),
    field("runnables", &ChainInfo::runnables, ListEncoding{limits::kMaxRunnables}),
    field("max_reaction_ns", &ChainInfo::maxReactionNs, kDuration),
    field("max_age_ns", &ChainInfo::maxAgeNs, kDuration),
    field("hop_allowance_ns", &ChainInfo::hopAllowanceNs, kTime),
    field("reaction_ns", &ChainInfo::reactionNs, kTime),
    field("age_ns", &ChainInfo::ageNs, kTime),
};

/// What version 6 brought, named when an older file holds one of its records.
inline constexpr const char* kChannelsBrought = "channels and chains";

/// Every record kind after the `schedule` record, in file order: its keyword, the table it fills,
/// that table's room, its fields, and whether it has ids, since which version, what rule it keeps.
inline constexpr auto kRecordKinds = std::tuple{
    records("soc", &Schedule::socs, Room{limits::kMaxSocs, "SoCs"}, kSocFields)
        .withIds()
        .from(kScheduleFormatVersionMultiSoc),
    records("soc_latency", &Schedule::socLatencies, Room{}, kSocLatencyFields)
        .from(kScheduleFormatVersionSocLatency)
        .checkedBy(checkSocLatency),
    records("client", &Schedule::clients, Room{limits::kMaxClients, "clients"}, kClientFields).withIds(),
    records("resource", &Schedule::resources, Room{limits::kMaxResources, "resources"}, kResourceFields).withIds(),
    records("hyperepoch", &Schedule::hyperepochs, Room{limits::kMaxHyperepochs, "hyperepochs"}, kHyperepochFields)
        .withIds(),
    records("epoch", &Schedule::epochs, Room{limits::kMaxEpochs, "epochs"}, kEpochFields).withIds(),
    records("runnable", &Schedule::runnables, Room{limits::kMaxRunnables, "runnables"}, kRunnableFields).withIds(),
    records("instance", &Schedule::instances, Room{limits::kMaxInstancesTotal, "runnable instances"}, kInstanceFields)
        .withIds(),
    records("timeline", &Schedule::timelines, Room{limits::kMaxResources, "timelines"}, kTimelineFields),
    records("channel", &Schedule::channels, Room{limits::kMaxChannels, "channels"}, kChannelFields)
        .withIds()
        .from(kScheduleFormatVersionChannels, kChannelsBrought),
    records("channel_write", &Schedule::channelWrites, Room{limits::kMaxInstancesTotal, "channel writer runs"},
            kChannelWriteFields)
        .from(kScheduleFormatVersionChannels, kChannelsBrought),
    records("channel_read", &Schedule::channelReads, Room{limits::kMaxInstancesTotal, "channel reader runs"},
            kChannelReadFields)
        .from(kScheduleFormatVersionChannels, kChannelsBrought),
    records("chain", &Schedule::chains, Room{limits::kMaxChains, "chains"}, kChainFields)
        .withIds()
        .from(kScheduleFormatVersionChannels, kChannelsBrought),
};

}  // namespace tactus::schedule_file
