// The client's side of a replay (replay_feed.hpp).
#include "replay_feed.hpp"

#include <algorithm>
#include <cstring>

#include "runtime.hpp"
#include "tactus/core/text.hpp"

namespace tactus::client {
namespace {

Error bad(const std::string& instance, const std::string& what) {
  return fail(ErrorCode::kIncompatible, "the replay segment of instance " + quoted(instance) + " " + what);
}

bool fits(std::uint64_t offset, std::uint64_t count, std::uint64_t size, std::uint64_t total) {
  return offset <= total && (size == 0 || count <= (total - offset) / size);
}

// Checks source `s`'s entries: each in the segment, of a channel the instance writes, of the
// channel's buffer size, in (channel, iteration) order.
Result<void> checkEntries(const std::string& instance, const ReplaySourceFeed& f, std::uint64_t total) {
  const ScheduleChannels& sc = *f.channels;
  for (std::uint32_t k = 0; k < f.count; ++k) {
    const shm::ReplayEntry& e = f.entries[k];
    const std::string which = "entry " + std::to_string(k) + " of instance " + std::to_string(f.instance);
    if (e.channel >= sc.rings.size() || sc.use(f.instance, e.channel, true) == nullptr)
      return bad(instance, "names a channel its instance does not write (" + which + ")");
    if (e.size != sc.rings[e.channel].size || !fits(e.dataOffset, 1, e.size, total))
      return bad(instance, "has a version out of its bounds (" + which + ")");
    if (k > 0) {
      const shm::ReplayEntry& p = f.entries[k - 1];
      if (p.channel > e.channel || (p.channel == e.channel && p.iteration >= e.iteration))
        return bad(instance, "is out of order (" + which + ")");
    }
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<ReplayFeed>> attachReplay(const std::string& instance, const ChannelDirectory& directory) {
  const std::string name = shm::replayInstanceName(instance);
  auto segment = ipc::Segment::openReadOnly(name);
  if (!segment) return fail(segment.error().code, "a replay runs, but " + segment.error().message);
  auto feed = std::make_unique<ReplayFeed>();
  feed->segment = std::move(*segment);
  const std::span<std::byte> bytes = feed->segment.bytes();
  const std::uint64_t total = bytes.size();
  if (total < sizeof(shm::ReplayHeader)) return bad(instance, "is too small");
  shm::ReplayHeader h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != shm::kReplayMagic || h.layoutVersion != shm::kReplayLayoutVersion ||
      h.headerSize != sizeof(shm::ReplayHeader) || h.totalSize != total)
    return bad(instance, "is of another layout (version " + std::to_string(h.layoutVersion) + ", this client's " +
                             std::to_string(shm::kReplayLayoutVersion) + ")");
  if (!fits(h.sourceOffset, h.sourceCount, sizeof(shm::ReplaySource), total) ||
      !fits(h.entryOffset, h.entryCount, sizeof(shm::ReplayEntry), total) || h.sourceOffset % 8 != 0 ||
      h.entryOffset % 8 != 0)
    return bad(instance, "has its tables out of its bounds");
  const auto* sources = reinterpret_cast<const shm::ReplaySource*>(bytes.data() + h.sourceOffset);
  const auto* entries = reinterpret_cast<const shm::ReplayEntry*>(bytes.data() + h.entryOffset);
  feed->sources.reserve(h.sourceCount);
  for (std::uint32_t k = 0; k < h.sourceCount; ++k) {
    const shm::ReplaySource s = sources[k];
    const ScheduleChannels* sc = directory.schedule(static_cast<std::uint16_t>(s.scheduleId));
    if (sc == nullptr) continue;  // a schedule this client does not attach
    if (s.instance + 1 >= sc->useBegin.size() || s.firstEntry > h.entryCount ||
        s.entryCount > h.entryCount - s.firstEntry)
      return bad(instance, "names a source out of range (source " + std::to_string(k) + ")");
    ReplaySourceFeed f{sc, s.instance, entries + s.firstEntry, s.entryCount, bytes.data()};
    if (auto ok = checkEntries(instance, f, total); !ok) return ok.error();
    feed->sources.push_back(f);
  }
  return feed;
}

void replayStep(void* userdata) {
  const auto& f = *static_cast<const ReplaySourceFeed*>(userdata);
  const RuntimeInfo& info = *tCurrentInfo;
  const std::uint64_t h = info.hyperepochIteration;
  const ScheduleChannels& sc = *f.channels;
  const shm::ReplayEntry* end = f.entries + f.count;
  for (std::uint32_t k = sc.useBegin[f.instance]; k < sc.useBegin[f.instance + 1]; ++k) {
    const ChannelUse& use = sc.uses[k];
    if (!use.write) continue;
    const auto* e =
        std::lower_bound(f.entries, end, std::pair{use.channel, h}, [](const shm::ReplayEntry& a, auto key) {
          return a.channel < key.first || (a.channel == key.first && a.iteration < key.second);
        });
    if (e == end || e->channel != use.channel || e->iteration != h) continue;  // the recorded run wrote none
    const shm::ChannelRing& ring = sc.rings[use.channel];
    shm::ChannelVersion* v = sc.version(use.channel, (use.slot + h * ring.writes) % ring.depth);
    // Stamped first, as Channel::take does: a copier (--record) that sees the stamp change drops its copy.
    v->writerInstance.store(f.instance, std::memory_order_relaxed);
    v->writtenNs.store(e->writtenNs, std::memory_order_relaxed);
    v->sourceNs.store(e->sourceNs, std::memory_order_relaxed);
    v->iteration.store(h + 1, std::memory_order_release);
    std::memcpy(reinterpret_cast<std::byte*>(v + 1), f.base + e->dataOffset, e->size);
  }
}

}  // namespace tactus::client
