// Geometry, initialization and validation of the shared-memory segment layout.
#include "tactus/core/shm_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>

#include "tactus/core/limits.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::shm {

static_assert(std::is_standard_layout_v<SegmentHeader> && std::is_standard_layout_v<EpochSlot> &&
              std::is_standard_layout_v<InstanceSlot> && std::is_standard_layout_v<ClientSlot> &&
              std::is_standard_layout_v<WorkerSlot> && std::is_standard_layout_v<HyperepochSlot> &&
              std::is_standard_layout_v<GpuSlot>);

namespace {

std::uint64_t alignUp(std::uint64_t value) { return (value + kCacheLine - 1) / kCacheLine * kCacheLine; }

// Bounds on the header's counts, so that computeLayout's sums stay far inside 64 bits whatever a
// damaged header says: at most 2^28 workers x 2^24 records x 32 bytes = 2^57 bytes of rings.
constexpr std::uint64_t kMaxWorkers = std::uint64_t{limits::kMaxClients} * limits::kMaxResources;
constexpr std::uint32_t kMaxRingCapacity = 1u << 24;
constexpr std::uint64_t kMaxTextBytes = 1ULL << 40;
constexpr std::uint64_t kMaxChannelBytes = 1ULL << 40;

// The first count out of range, "" when all are in range.
std::string countOutOfRange(const LayoutCounts& c) {
  if (c.hyperepochs > limits::kMaxHyperepochs) return "hyperepochCount";
  if (c.epochs > limits::kMaxEpochs) return "epochCount";
  if (c.instances > limits::kMaxInstancesTotal) return "instanceCount";
  if (c.clients > limits::kMaxClients) return "clientCount";
  if (c.workers > kMaxWorkers) return "workerCount";
  if (c.ringCapacity == 0 || c.ringCapacity > kMaxRingCapacity || (c.ringCapacity & (c.ringCapacity - 1)) != 0) {
    return "ringCapacity";
  }
  if (c.scheduleTextSize > kMaxTextBytes) return "scheduleTextSize";
  if (c.runnables > limits::kMaxRunnables) return "runnableCount";
  if (c.channelBytes > kMaxChannelBytes || c.channelBytes % kCacheLine != 0) return "channelBytes";
  return "";
}

}  // namespace

LayoutOffsets computeLayout(const LayoutCounts& c) {
  LayoutOffsets o;
  std::uint64_t at = sizeof(SegmentHeader);
  o.hyperepoch = at;
  at = alignUp(at + std::uint64_t{c.hyperepochs} * sizeof(HyperepochSlot));
  o.epoch = at;
  at = alignUp(at + std::uint64_t{c.epochs} * sizeof(EpochSlot));
  o.instance = at;
  at = alignUp(at + std::uint64_t{c.instances} * sizeof(InstanceSlot));
  o.client = at;
  at = alignUp(at + std::uint64_t{c.clients} * sizeof(ClientSlot));
  o.worker = at;
  at = alignUp(at + std::uint64_t{c.workers} * sizeof(WorkerSlot));
  o.ring = at;
  at = alignUp(at + std::uint64_t{c.workers} * c.ringCapacity * sizeof(EventRecord));
  o.gpu = at;
  at = alignUp(at + std::uint64_t{c.instances} * sizeof(GpuSlot));
  o.text = at;
  at = alignUp(at + c.scheduleTextSize);
  o.switching = at;
  at = alignUp(at + std::uint64_t{c.hyperepochs} * sizeof(SwitchSlot));
  o.stats = at;
  at = alignUp(at + statsBlockSize(c.runnables, c.hyperepochs));
  o.channels = at;
  at += c.channelBytes;
  o.total = at;
  return o;
}

LayoutCounts layoutCounts(const Schedule& schedule, const RunPlan& plan, std::size_t textSize) {
  LayoutCounts counts;
  counts.hyperepochs = static_cast<std::uint32_t>(schedule.hyperepochs.size());
  counts.epochs = static_cast<std::uint32_t>(schedule.epochs.size());
  counts.instances = static_cast<std::uint32_t>(schedule.instances.size());
  counts.clients = static_cast<std::uint32_t>(schedule.clients.size());
  counts.workers = static_cast<std::uint32_t>(plan.workers.size());
  counts.scheduleTextSize = textSize;
  counts.runnables = static_cast<std::uint32_t>(schedule.runnables.size());
  (void)channelRings(schedule, &counts.channelBytes);
  counts.chains = static_cast<std::uint32_t>(schedule.chains.size());
  counts.channels = static_cast<std::uint32_t>(schedule.channels.size());
  return counts;
}

std::vector<ChannelRing> channelRings(const Schedule& schedule, std::uint64_t* totalBytes) {
  std::vector<ChannelRing> rings;
  rings.reserve(schedule.channels.size());
  std::uint64_t at = 0;
  for (const ChannelInfo& c : schedule.channels) {
    ChannelRing r;
    r.offset = at;
    r.size = c.sizeBytes;
    r.stride = sizeof(ChannelVersion) + alignUp(c.sizeBytes);
    r.depth = c.depth;
    r.writes = c.writes;
    at += r.stride * r.depth;
    rings.push_back(r);
  }
  if (totalBytes != nullptr) *totalBytes = at;
  return rings;
}

Result<void> SegmentView::initialize(const LayoutCounts& counts) {
  if (const std::string field = countOutOfRange(counts); !field.empty()) {
    return fail(ErrorCode::kInternal, "segment " + field + " is out of range");
  }
  const LayoutOffsets o = computeLayout(counts);
  if (bytes_.size() < o.total) {
    return fail(ErrorCode::kInternal, "segment of " + std::to_string(bytes_.size()) + " bytes is smaller than the " +
                                          std::to_string(o.total) + " bytes the layout needs");
  }
  if (reinterpret_cast<std::uintptr_t>(bytes_.data()) % kCacheLine != 0) {
    return fail(ErrorCode::kInternal, "segment is not cache-line aligned");
  }
  auto* h = new (bytes_.data()) SegmentHeader{};
  h->layoutVersion = kLayoutVersion;
  h->headerSize = sizeof(SegmentHeader);
  h->totalSize = o.total;
  h->ringCapacity = counts.ringCapacity;
  h->hyperepochOffset = o.hyperepoch;
  h->epochOffset = o.epoch;
  h->instanceOffset = o.instance;
  h->clientOffset = o.client;
  h->workerOffset = o.worker;
  h->ringOffset = o.ring;
  h->gpuOffset = o.gpu;
  h->scheduleTextOffset = o.text;
  h->scheduleTextSize = counts.scheduleTextSize;
  h->switchOffset = o.switching;
  h->statsOffset = o.stats;
  h->runnableCount = counts.runnables;
  h->channelOffset = o.channels;
  h->channelBytes = counts.channelBytes;
  h->scheduleCount = 1;
  h->hyperepochCount = counts.hyperepochs;
  h->epochCount = counts.epochs;
  h->instanceCount = counts.instances;
  h->clientCount = counts.clients;
  h->workerCount = counts.workers;
  h->stopClient.store(0xffffffffu, std::memory_order_relaxed);
  counts_ = counts;
  offsets_ = o;
  geometryTaken_ = true;
  for (HyperepochId h : IdRange<HyperepochId>(counts.hyperepochs)) new (&hyperepoch(h)) HyperepochSlot{};
  for (EpochId e : IdRange<EpochId>(counts.epochs)) new (&epoch(e)) EpochSlot{};
  for (InstanceId i : IdRange<InstanceId>(counts.instances)) new (&instance(i)) InstanceSlot{};
  for (ClientId c : IdRange<ClientId>(counts.clients)) new (&client(c)) ClientSlot{};
  for (std::uint32_t w = 0; w < counts.workers; ++w) new (&worker(w)) WorkerSlot{};
  for (InstanceId i : IdRange<InstanceId>(counts.instances)) new (&gpu(i)) GpuSlot{};
  for (HyperepochId h : IdRange<HyperepochId>(counts.hyperepochs)) new (&switching(h)) SwitchSlot{};
  stats().initialize(counts.runnables, counts.hyperepochs, counts.chains, counts.channels);
  std::memset(channelArea().data(), 0, channelArea().size());  // no version in any buffer
  // The magic last: a reader that loads it (acquire) sees a complete header (state says when the
  // rest is).
  h->magic.store(kMagic, std::memory_order_release);
  return {};
}

bool SegmentView::hasHeader() const {
  if (bytes_.size() < sizeof(SegmentHeader)) return false;
  return header().magic.load(std::memory_order_acquire) == kMagic;
}

Result<void> SegmentView::validate() {
  geometryTaken_ = false;
  if (bytes_.size() < sizeof(SegmentHeader)) {
    return fail(ErrorCode::kIncompatible, "segment too small for a tactus header");
  }
  const SegmentHeader& h = header();
  if (h.magic.load(std::memory_order_acquire) != kMagic) {
    return fail(ErrorCode::kIncompatible, "segment is not a tactus segment (bad magic)");
  }
  if (h.layoutVersion != kLayoutVersion) {
    return fail(ErrorCode::kIncompatible, "segment has layout version " + std::to_string(h.layoutVersion) +
                                              ", this build uses version " + std::to_string(kLayoutVersion) +
                                              " (master and client from different builds?)");
  }
  if (h.headerSize != sizeof(SegmentHeader)) return fail(ErrorCode::kIncompatible, "segment header size differs");
  LayoutCounts counts;
  counts.hyperepochs = h.hyperepochCount;
  counts.epochs = h.epochCount;
  counts.instances = h.instanceCount;
  counts.clients = h.clientCount;
  counts.workers = h.workerCount;
  counts.ringCapacity = h.ringCapacity;
  counts.scheduleTextSize = h.scheduleTextSize;
  counts.runnables = h.runnableCount;
  counts.channelBytes = h.channelBytes;
  if (const std::string field = countOutOfRange(counts); !field.empty()) {
    return fail(ErrorCode::kIncompatible,
                "segment header field '" + field + "' is out of range (" +
                    (field == "ringCapacity" ? "not a power of two up to 2^24" : "above the limit") + ")");
  }
  const LayoutOffsets o = computeLayout(counts);
  if (o.hyperepoch != h.hyperepochOffset || o.epoch != h.epochOffset || o.instance != h.instanceOffset ||
      o.client != h.clientOffset || o.worker != h.workerOffset || o.ring != h.ringOffset || o.gpu != h.gpuOffset ||
      o.text != h.scheduleTextOffset || o.switching != h.switchOffset || o.stats != h.statsOffset ||
      o.channels != h.channelOffset || o.total != h.totalSize) {
    return fail(ErrorCode::kIncompatible, "segment geometry does not match its counts");
  }
  if (o.total > bytes_.size()) {
    return fail(ErrorCode::kIncompatible,
                "segment is " + std::to_string(bytes_.size()) + " bytes, header says " + std::to_string(o.total));
  }
  counts_ = counts;
  offsets_ = o;
  geometryTaken_ = true;
  return {};
}

std::string SegmentView::changedHeaderField() const {
  if (!geometryTaken_ || bytes_.size() < sizeof(SegmentHeader)) return "";
  const SegmentHeader& h = header();
  if (h.magic.load(std::memory_order_relaxed) != kMagic) return "magic";
  if (h.layoutVersion != kLayoutVersion) return "layoutVersion";
  if (h.headerSize != sizeof(SegmentHeader)) return "headerSize";
  if (h.totalSize != offsets_.total) return "totalSize";
  if (h.ringCapacity != counts_.ringCapacity) return "ringCapacity";
  if (h.hyperepochOffset != offsets_.hyperepoch) return "hyperepochOffset";
  if (h.epochOffset != offsets_.epoch) return "epochOffset";
  if (h.instanceOffset != offsets_.instance) return "instanceOffset";
  if (h.clientOffset != offsets_.client) return "clientOffset";
  if (h.workerOffset != offsets_.worker) return "workerOffset";
  if (h.ringOffset != offsets_.ring) return "ringOffset";
  if (h.channelOffset != offsets_.channels) return "channelOffset";
  if (h.channelBytes != counts_.channelBytes) return "channelBytes";
  if (h.gpuOffset != offsets_.gpu) return "gpuOffset";
  if (h.scheduleTextOffset != offsets_.text) return "scheduleTextOffset";
  if (h.scheduleTextSize != counts_.scheduleTextSize) return "scheduleTextSize";
  if (h.switchOffset != offsets_.switching) return "switchOffset";
  if (h.statsOffset != offsets_.stats) return "statsOffset";
  if (h.runnableCount != counts_.runnables) return "runnableCount";
  if (h.hyperepochCount != counts_.hyperepochs) return "hyperepochCount";
  if (h.epochCount != counts_.epochs) return "epochCount";
  if (h.instanceCount != counts_.instances) return "instanceCount";
  if (h.clientCount != counts_.clients) return "clientCount";
  if (h.workerCount != counts_.workers) return "workerCount";
  return "";
}

void SegmentView::writeScheduleText(std::string_view text) const {
  std::memcpy(bytes_.data() + offsets_.text, text.data(), std::min<std::size_t>(text.size(), counts_.scheduleTextSize));
}

namespace {

// Where `text` stops being printable UTF-8 (a control byte, a malformed or overlong sequence, a
// surrogate), or text.size() when it is whole.
std::size_t firstBadUtf8(std::string_view text) {
  std::size_t k = 0;
  while (k < text.size()) {
    const auto lead = static_cast<unsigned char>(text[k]);
    if (lead < 0x80) {
      if (lead < 0x20 || lead == 0x7f) return k;
      ++k;
      continue;
    }
    const std::size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                               : lead >= 0xe0 && lead <= 0xef ? 3
                               : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                              : 0;
    if (length == 0 || k + length > text.size()) return k;
    const auto second = static_cast<unsigned char>(text[k + 1]);
    if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) || (lead == 0xf0 && second < 0x90) ||
        (lead == 0xf4 && second > 0x8f))
      return k;
    for (std::size_t j = 1; j < length; ++j) {
      if ((static_cast<unsigned char>(text[k + j]) & 0xc0) != 0x80) return k;
    }
    k += length;
  }
  return k;
}

}  // namespace

void SegmentView::setMessage(std::string_view text) const {
  // A reader takes the message only as printable UTF-8 (endFault): a byte that is not (a control
  // byte, a client's note in another encoding) is written as '?', and the cut falls at a character's start.
  std::string clean(text);
  for (std::size_t k = firstBadUtf8(clean); k < clean.size(); k = firstBadUtf8(clean)) clean[k] = '?';
  std::size_t n = std::min(clean.size(), kMessageSize - 1);
  while (n < clean.size() && n > 0 && (static_cast<unsigned char>(clean[n]) & 0xc0) == 0x80) --n;
  std::memcpy(header().message, clean.data(), n);
  header().message[n] = '\0';
}

std::string SegmentView::message() const {
  const char* m = header().message;
  std::string text(m, strnlen(m, kMessageSize));
  // Others can write the segment: bytes that are not printable ASCII (the master writes none) are
  // shown as '?', so a damaged header cannot move a terminal's cursor or forge a line.
  for (char& c : text) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return text;
}

std::string SegmentView::endFault() const {
  const SegmentHeader& h = header();
  const auto holds = [](const char* field, std::uint64_t value, const std::string& range) {
    return "header field '" + std::string(field) + "' holds " + std::to_string(value) + ", out of range (" + range +
           ")";
  };
  if (const std::uint32_t state = h.state.load(); state > static_cast<std::uint32_t>(SegmentState::kAborted))
    return holds("state", state, "0..4");
  if (const std::uint32_t reason = h.stopReason.load(); reason > static_cast<std::uint32_t>(StopReason::kDamaged))
    return holds("stopReason", reason, "0..8");
  const std::uint32_t client = h.stopClient.load();
  if (client != 0xffffffffu && (!geometryTaken_ || client >= counts_.clients))
    return holds("stopClient", client, "a client of " + std::to_string(counts_.clients) + ", or none");
  const std::size_t length = strnlen(h.message, kMessageSize);
  if (length == kMessageSize)
    return "header field 'message' is not NUL-terminated within its " + std::to_string(kMessageSize) + " bytes";
  if (const std::size_t bad = firstBadUtf8({h.message, length}); bad < length) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(h.message[bad])));
    return "header field 'message' holds byte " + std::string(byte) + " at offset " + std::to_string(bad) +
           ", not printable UTF-8";
  }
  return "";
}

}  // namespace tactus::shm
