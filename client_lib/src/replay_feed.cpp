// The client's side of a replay (replay_feed.hpp).
#include "replay_feed.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

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

// Checks the release table: inside the segment, in strict (schedule, epoch, iteration, frame) order.
Result<void> checkReleases(const std::string& instance, const shm::ReplayHeader& h, std::span<const std::byte> bytes,
                           ReplayTables& t) {
  if (!fits(h.releaseOffset, h.releaseCount, sizeof(shm::ReplayRelease), bytes.size()) || h.releaseOffset % 8 != 0)
    return bad(instance, "has its release table out of its bounds");
  t.releases = reinterpret_cast<const shm::ReplayRelease*>(bytes.data() + h.releaseOffset);
  t.releaseCount = h.releaseCount;
  for (std::uint32_t k = 0; k < t.releaseCount; ++k) {
    if (t.releases[k].iteration > 0xFFFFFFFFu)  // recorded as the event log's, in 32 bits
      return bad(instance, "has a release of an iteration beyond 32 bits (release " + std::to_string(k) + ")");
    if (k == 0) continue;
    const shm::ReplayRelease& a = t.releases[k - 1];
    const shm::ReplayRelease& b = t.releases[k];
    if (std::tie(a.scheduleId, a.epoch, a.iteration, a.frame) >= std::tie(b.scheduleId, b.epoch, b.iteration, b.frame))
      return bad(instance, "has its releases out of order (release " + std::to_string(k) + ")");
  }
  return {};
}

}  // namespace

const shm::ReplayRelease* ReplayTables::release(std::uint32_t scheduleId, std::uint32_t epoch, std::uint64_t iteration,
                                                std::uint32_t frame) const {
  const auto key = std::tuple{scheduleId, epoch, iteration & 0xFFFFFFFFu, frame};
  const shm::ReplayRelease* end = releases + releaseCount;
  const shm::ReplayRelease* r = std::lower_bound(releases, end, key, [](const shm::ReplayRelease& a, const auto& k) {
    return std::tie(a.scheduleId, a.epoch, a.iteration, a.frame) < k;
  });
  return r != end && std::tie(r->scheduleId, r->epoch, r->iteration, r->frame) == key ? r : nullptr;
}

Result<ReplayTables> checkReplaySegment(std::span<const std::byte> bytes, const std::string& instance,
                                        const ChannelDirectory& directory) {
  const std::uint64_t total = bytes.size();
  if (total < sizeof(shm::ReplayHeader)) return bad(instance, "is too small");
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 8 != 0) return bad(instance, "is not 8-byte aligned");
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
  ReplayTables t;
  if (auto ok = checkReleases(instance, h, bytes, t); !ok) return ok.error();
  const auto* sources = reinterpret_cast<const shm::ReplaySource*>(bytes.data() + h.sourceOffset);
  const auto* entries = reinterpret_cast<const shm::ReplayEntry*>(bytes.data() + h.entryOffset);
  t.sources.reserve(h.sourceCount);  // at most a sixteenth of the bytes (checked above)
  for (std::uint32_t k = 0; k < h.sourceCount; ++k) {
    const shm::ReplaySource s = sources[k];
    const ScheduleChannels* sc =
        s.scheduleId > 0xFFFF ? nullptr : directory.schedule(static_cast<std::uint16_t>(s.scheduleId));
    if (sc == nullptr) continue;  // a schedule this client does not attach
    if (s.instance + std::uint64_t{1} >= sc->useBegin.size() || s.firstEntry > h.entryCount ||
        s.entryCount > h.entryCount - s.firstEntry)
      return bad(instance, "names a source out of range (source " + std::to_string(k) + ")");
    if (t.find(s.scheduleId, s.instance) != nullptr)
      return bad(instance, "names a source twice (source " + std::to_string(k) + ")");
    ReplaySourceFeed f{sc, s.instance, entries + s.firstEntry, s.entryCount, bytes.data()};
    if (auto ok = checkEntries(instance, f, total); !ok) return ok.error();
    t.sources.push_back(f);
  }
  return t;
}

Result<std::unique_ptr<ReplayFeed>> attachReplay(const std::string& instance, const ChannelDirectory& directory) {
  const std::string name = shm::replayInstanceName(instance);
  auto segment = ipc::Segment::openReadOnly(name);
  if (!segment) return fail(segment.error().code, "a replay runs, but " + segment.error().message);
  auto feed = std::make_unique<ReplayFeed>();
  feed->segment = std::move(*segment);
  auto tables = checkReplaySegment(feed->segment.bytes(), instance, directory);
  if (!tables) return tables.error();
  static_cast<ReplayTables&>(*feed) = std::move(*tables);
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
