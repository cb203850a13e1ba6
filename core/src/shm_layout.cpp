// Geometry, initialization and validation of the shared-memory segment layout.
#include "tactus/core/shm_layout.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

namespace tactus::shm {

static_assert(std::is_standard_layout_v<SegmentHeader> && std::is_standard_layout_v<EpochSlot> &&
              std::is_standard_layout_v<InstanceSlot> && std::is_standard_layout_v<ClientSlot> &&
              std::is_standard_layout_v<WorkerSlot> && std::is_standard_layout_v<HyperepochSlot> &&
              std::is_standard_layout_v<GpuSlot>);

namespace {

std::uint64_t alignUp(std::uint64_t value) { return (value + kCacheLine - 1) / kCacheLine * kCacheLine; }

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
  o.total = at;
  return o;
}

Result<void> SegmentView::initialize(const LayoutCounts& counts) {
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
  h->hyperepochCount = counts.hyperepochs;
  h->epochCount = counts.epochs;
  h->instanceCount = counts.instances;
  h->clientCount = counts.clients;
  h->workerCount = counts.workers;
  h->stopClient.store(0xffffffffu, std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < counts.hyperepochs; ++i) new (&hyperepoch(i)) HyperepochSlot{};
  for (std::uint32_t i = 0; i < counts.epochs; ++i) new (&epoch(i)) EpochSlot{};
  for (std::uint32_t i = 0; i < counts.instances; ++i) new (&instance(i)) InstanceSlot{};
  for (std::uint32_t i = 0; i < counts.clients; ++i) new (&client(i)) ClientSlot{};
  for (std::uint32_t i = 0; i < counts.workers; ++i) new (&worker(i)) WorkerSlot{};
  for (std::uint32_t i = 0; i < counts.instances; ++i) new (&gpu(i)) GpuSlot{};
  // The magic last: a reader that sees it sees a complete header (state says when the rest is).
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kMagic;
  return {};
}

bool SegmentView::hasHeader() const {
  if (bytes_.size() < sizeof(SegmentHeader)) return false;
  std::uint64_t magic = 0;
  std::memcpy(&magic, bytes_.data(), sizeof magic);
  return magic == kMagic;
}

Result<void> SegmentView::validate() const {
  if (bytes_.size() < sizeof(SegmentHeader)) {
    return fail(ErrorCode::kIncompatible, "segment too small for a tactus header");
  }
  const SegmentHeader& h = header();
  if (h.magic != kMagic) return fail(ErrorCode::kIncompatible, "segment is not a tactus segment (bad magic)");
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
  if (h.ringCapacity == 0 || (h.ringCapacity & (h.ringCapacity - 1)) != 0) {
    return fail(ErrorCode::kIncompatible, "segment ring capacity is not a power of two");
  }
  const LayoutOffsets o = computeLayout(counts);
  if (o.hyperepoch != h.hyperepochOffset || o.epoch != h.epochOffset || o.instance != h.instanceOffset ||
      o.client != h.clientOffset || o.worker != h.workerOffset || o.ring != h.ringOffset || o.gpu != h.gpuOffset ||
      o.text != h.scheduleTextOffset || o.total != h.totalSize) {
    return fail(ErrorCode::kIncompatible, "segment geometry does not match its counts");
  }
  if (o.total > bytes_.size()) {
    return fail(ErrorCode::kIncompatible, "segment is " + std::to_string(bytes_.size()) + " bytes, header says " +
                                              std::to_string(o.total));
  }
  return {};
}

void SegmentView::writeScheduleText(std::string_view text) const {
  std::memcpy(bytes_.data() + header().scheduleTextOffset, text.data(),
              std::min<std::size_t>(text.size(), header().scheduleTextSize));
}

void SegmentView::setMessage(std::string_view text) const {
  const std::size_t n = std::min(text.size(), kMessageSize - 1);
  std::memcpy(header().message, text.data(), n);
  header().message[n] = '\0';
}

std::string SegmentView::message() const {
  const char* m = header().message;
  return std::string(m, strnlen(m, kMessageSize));
}

}  // namespace tactus::shm
