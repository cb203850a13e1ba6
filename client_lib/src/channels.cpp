// Channels at run time (tactus/channel.hpp): a writer run takes the buffer of its ring that the
// plan gives it in this iteration and stamps it as its version; a reader run finds the buffer of
// the writer run the schedule names and checks the stamp. Both are index arithmetic on the
// client's own tables and loads and stores in the segment: no copy, lock or system call.
//
//   writer instance with ChannelWrite::slot s, iteration h:  buffer (s + h * writes) mod depth
//   reader of writer run of iteration w (h, or h - 1):       buffer (s + w * writes) mod depth
#include "channels.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <string_view>

#include "runtime.hpp"
#include "tactus/channel.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus_trace.hpp"

namespace tactus {
namespace client {
namespace {

std::atomic<const ChannelDirectory*> gDirectory{nullptr};

// What the run on this thread has done with channels, for the source stamps: the oldest source
// release of the versions it read, and the versions it wrote (whose stamp follows that oldest).
// Reset when a call comes from another run (schedule, instance, iteration) than the last one.
struct RunChannels {
  std::uint16_t schedule = 0;
  std::uint32_t instance = kNone;
  std::uint64_t iteration = 0;
  std::int64_t oldestSourceNs = std::numeric_limits<std::int64_t>::max();
  std::array<shm::ChannelVersion*, 16> written{};
  std::uint32_t writtenCount = 0;
};
thread_local RunChannels tRun;

RunChannels& currentRun(const RuntimeInfo& info) {
  RunChannels& run = tRun;
  if (run.schedule != info.scheduleId || run.instance != info.instance || run.iteration != info.hyperepochIteration) {
    run = RunChannels{};
    run.schedule = info.scheduleId;
    run.instance = info.instance;
    run.iteration = info.hyperepochIteration;
  }
  return run;
}

// The runnables of `s` that write (`write`) or read channel `local`, for a refusal's message.
std::string usersOf(const ScheduleChannels& s, std::uint32_t local, bool write) {
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i + 1 < s.useBegin.size(); ++i)
    for (std::uint32_t k = s.useBegin[i]; k < s.useBegin[i + 1]; ++k)
      if (s.uses[k].channel == local && s.uses[k].write == write) names.push_back(s.runnableOf[i]);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + quoted(n);
  return out.empty() ? "none" : out;
}

// The calling run's schedule tables, the channel's index and ring there and the run's use of it,
// or what is wrong.
struct Found {
  const ScheduleChannels* schedule = nullptr;
  std::uint32_t local = kNone;
  const RuntimeInfo* info = nullptr;
  const ChannelUse* use = nullptr;
  const shm::ChannelRing* ring = nullptr;

  /// The buffer that the use's writer instance fills in hyperepoch iteration `writerIteration`.
  shm::ChannelVersion* version(std::uint64_t writerIteration) const {
    return schedule->version(local, (use->slot + writerIteration * ring->writes) % ring->depth);
  }
};

Result<Found> locate(std::uint32_t id, const std::string& name, bool write) {
  const char* call = write ? "write" : "read";
  Found f;
  f.info = tCurrentInfo;
  if (f.info == nullptr)
    return fail(ErrorCode::kInvalidState, std::string("Channel::") + call + " of channel " + quoted(name) +
                                              " is only available inside a runnable");
  const ChannelDirectory* directory = gDirectory.load(std::memory_order_acquire);
  if (directory == nullptr) return fail(ErrorCode::kInvalidState, "the client is not initialized");
  f.schedule = directory->schedule(f.info->scheduleId);
  if (f.schedule == nullptr || id >= f.schedule->localOf.size() || f.schedule->localOf[id] == kNone)
    return fail(ErrorCode::kBadParameter, "channel " + quoted(name) + " is not in the running schedule" +
                                              (f.schedule ? " " + quoted(f.schedule->scheduleName) : std::string()));
  f.local = f.schedule->localOf[id];
  f.use = f.schedule->use(f.info->instance, f.local, write);
  if (f.use == nullptr)
    return fail(ErrorCode::kBadParameter, "runnable " + quoted(f.schedule->runnableOf[f.info->instance]) +
                                              " does not " + call + " channel " + quoted(name) +
                                              (write ? " (its writer is " : " (its readers are ") +
                                              usersOf(*f.schedule, f.local, write) + ")");
  f.ring = &f.schedule->rings[f.local];
  return f;
}

// The tables of one schedule in its segment: its rings checked against the segment's channel area.
Result<ScheduleChannels> scheduleTables(const Runtime& rt, const std::vector<std::string>& allNames) {
  std::uint64_t bytes = 0;
  ScheduleChannels t = channelTables(rt.schedule, allNames, &bytes);
  t.view = &rt.view;
  const std::span<std::byte> area = rt.view.channelArea();
  if (area.size() != bytes)
    return fail(ErrorCode::kIncompatible, "the segment's channel area is " + std::to_string(area.size()) +
                                              " bytes, schedule " + quoted(rt.schedule.name) + "'s channels need " +
                                              std::to_string(bytes) + " (segment damaged?)");
  t.area = area.data();
  return t;
}

}  // namespace

ScheduleChannels channelTables(const Schedule& s, const std::vector<std::string>& allNames, std::uint64_t* areaBytes) {
  ScheduleChannels t;
  t.scheduleId = s.identifier;
  t.scheduleName = s.name;
  t.rings = shm::channelRings(s, areaBytes);
  t.localOf.assign(allNames.size(), kNone);
  for (std::uint32_t c = 0; c < s.channels.size(); ++c) {
    const auto at = std::lower_bound(allNames.begin(), allNames.end(), s.channels[c].name);
    t.localOf[static_cast<std::size_t>(at - allNames.begin())] = c;
  }
  const auto instances = static_cast<std::uint32_t>(s.instances.size());
  std::vector<std::vector<ChannelUse>> by(instances);
  for (const ChannelWrite& w : s.channelWrites) by[index(w.instance)].push_back({w.channel, w.slot, 0, true, false});
  for (const ChannelRead& r : s.channelReads)
    by[index(r.instance)].push_back({r.channel, r.slot, index(r.writer), false, r.previousIteration});
  t.useBegin.push_back(0);
  for (InstanceId i : s.instances.ids()) {
    const RunnableInfo& runnable = s.runnables[s.instances[i].runnable];
    t.epochOf.push_back(index(runnable.epoch));
    t.runnableOf.push_back(s.clients[runnable.client].name + "." + runnable.name);
    t.uses.insert(t.uses.end(), by[index(i)].begin(), by[index(i)].end());
    t.useBegin.push_back(static_cast<std::uint32_t>(t.uses.size()));
  }
  return t;
}

Result<std::unique_ptr<ChannelDirectory>> buildChannelDirectory(const std::vector<Runtime*>& modes) {
  auto directory = std::make_unique<ChannelDirectory>();
  for (const Runtime* rt : modes)
    for (const ChannelInfo& c : rt->schedule.channels) directory->names.push_back(c.name);
  std::sort(directory->names.begin(), directory->names.end());
  directory->names.erase(std::unique(directory->names.begin(), directory->names.end()), directory->names.end());
  for (const Runtime* rt : modes) {
    auto tables = scheduleTables(*rt, directory->names);
    if (!tables) return tables.error();
    directory->schedules.push_back(std::move(*tables));
  }
  return directory;
}

void publishChannelDirectory(const ChannelDirectory* directory) {
  gDirectory.store(directory, std::memory_order_release);
}

}  // namespace client

const char* versionStatusName(VersionStatus status) {
  switch (status) {
    case VersionStatus::kOk: return "ok";
    case VersionStatus::kNoVersionYet: return "no-version-yet";
    case VersionStatus::kNotWritten: return "not-written";
  }
  return "unknown";
}

Result<Channel> Channel::find(const std::string& name) {
  const client::ChannelDirectory* directory = client::gDirectory.load(std::memory_order_acquire);
  if (directory == nullptr)
    return fail(ErrorCode::kInvalidState, "Channel::find(" + quoted(name) + "): the client is not initialized");
  const auto at = std::lower_bound(directory->names.begin(), directory->names.end(), name);
  if (at == directory->names.end() || *at != name) {
    std::vector<std::string_view> names(directory->names.begin(), directory->names.end());
    return fail(ErrorCode::kNotFound,
                "the schedule has no channel " + quoted(name) +
                    (names.empty() ? std::string(" (it declares no Channels)") : didYouMean(name, names, "declared:")));
  }
  return Channel(static_cast<std::uint32_t>(at - directory->names.begin()), name);
}

Result<void> Channel::fitsType(std::size_t size, std::size_t align, std::size_t bytes) const {
  if (size > bytes)
    return fail(ErrorCode::kBadParameter, "a type of " + std::to_string(size) + " bytes does not fit channel " +
                                              quoted(name_) + "'s buffers of " + std::to_string(bytes) +
                                              " bytes (its Size in the graph)");
  if (align > shm::kCacheLine)
    return fail(ErrorCode::kBadParameter, "channel " + quoted(name_) + "'s buffers are aligned to " +
                                              std::to_string(shm::kCacheLine) + " bytes, the type needs " +
                                              std::to_string(align));
  return {};
}

Result<std::span<std::byte>> Channel::write() const { return take(0, 1); }

Result<std::span<std::byte>> Channel::take(std::size_t size, std::size_t align) const {
  auto found = client::locate(id_, name_, true);
  if (!found) return found.error();
  const client::ScheduleChannels& s = *found->schedule;
  const RuntimeInfo& info = *found->info;
  const shm::ChannelRing& ring = *found->ring;
  if (auto fits = fitsType(size, align, ring.size); !fits) return fits.error();  // before taking
  const std::uint64_t h = info.hyperepochIteration;
  shm::ChannelVersion* v = found->version(h);
  auto* data = reinterpret_cast<std::byte*>(v + 1);
  if (v->iteration.load(std::memory_order_relaxed) == h + 1 &&
      v->writerInstance.load(std::memory_order_relaxed) == info.instance)
    return std::span<std::byte>(data, ring.size);  // taken already in this run
  client::RunChannels& run = client::currentRun(info);
  const std::int64_t ownRelease =
      s.view->epoch(EpochId{s.epochOf[info.instance]}).releaseNs.load(std::memory_order_relaxed);
  v->writerInstance.store(info.instance, std::memory_order_relaxed);
  v->writtenNs.store(ipc::monotonicNs(), std::memory_order_relaxed);
  v->sourceNs.store(std::min(run.oldestSourceNs, ownRelease), std::memory_order_relaxed);
  v->iteration.store(h + 1, std::memory_order_release);
  if (run.writtenCount < run.written.size()) run.written[run.writtenCount++] = v;
  TACTUS_TRACE(channel_write, id_, info.instance, h);
  return std::span<std::byte>(data, ring.size);
}

Result<Version<std::byte>> Channel::read() const {
  auto found = client::locate(id_, name_, false);
  if (!found) return found.error();
  const RuntimeInfo& info = *found->info;
  const client::ChannelUse* use = found->use;
  const shm::ChannelRing& ring = *found->ring;
  const std::uint64_t h = info.hyperepochIteration;
  Version<std::byte> out;
  out.size = ring.size;
  out.writerInstance = use->writer;
  if (use->previousIteration && h == 0) {
    out.status = VersionStatus::kNoVersionYet;
    return out;
  }
  const std::uint64_t w = use->previousIteration ? h - 1 : h;
  out.writerIteration = w;
  const shm::ChannelVersion* v = found->version(w);
  if (v->iteration.load(std::memory_order_acquire) != w + 1 ||
      v->writerInstance.load(std::memory_order_relaxed) != use->writer) {
    out.status = VersionStatus::kNotWritten;
    return out;
  }
  out.status = VersionStatus::kOk;
  out.data = reinterpret_cast<const std::byte*>(v + 1);
  out.writtenNs = v->writtenNs.load(std::memory_order_relaxed);
  out.sourceNs = v->sourceNs.load(std::memory_order_relaxed);
  // The versions this run wrote derive from this one too.
  client::RunChannels& run = client::currentRun(info);
  if (out.sourceNs < run.oldestSourceNs) {
    run.oldestSourceNs = out.sourceNs;
    for (std::uint32_t k = 0; k < run.writtenCount; ++k)
      if (run.written[k]->sourceNs.load(std::memory_order_relaxed) > out.sourceNs)
        run.written[k]->sourceNs.store(out.sourceNs, std::memory_order_relaxed);
  }
  return out;
}

}  // namespace tactus
