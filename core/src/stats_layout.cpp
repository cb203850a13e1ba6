// The statistics block (see stats_layout.hpp): its size, initialization, validation and the
// reader's copy under the sequence lock.
#include "tactus/core/stats_layout.hpp"

#include <algorithm>
#include <new>
#include <thread>
#include <type_traits>

namespace tactus::shm {

static_assert(std::is_standard_layout_v<StatsHeader> && std::is_standard_layout_v<RunnableStats> &&
              std::is_standard_layout_v<HyperepochStats> && std::is_standard_layout_v<SwitchEntry> &&
              std::is_standard_layout_v<ChainStats> && std::is_standard_layout_v<ChannelStats>);

namespace {
std::uint64_t alignLine(std::uint64_t value) { return (value + 63) / 64 * 64; }
constexpr auto kRelaxed = std::memory_order_relaxed;

// Bytes up to the chain table: the header, the per runnable and per hyperepoch entries and the
// switch ring, on a whole cache line.
std::uint64_t tablesAt(std::uint32_t runnables, std::uint32_t hyperepochs) {
  return alignLine(sizeof(StatsHeader) + std::uint64_t{runnables} * sizeof(RunnableStats) +
                   std::uint64_t{hyperepochs} * sizeof(HyperepochStats) +
                   std::uint64_t{kStatsSwitchCapacity} * sizeof(SwitchEntry));
}
}  // namespace

std::uint64_t statsBlockSize(std::uint32_t runnables, std::uint32_t hyperepochs) {
  return tablesAt(runnables, hyperepochs) + std::uint64_t{kStatsChainCapacity} * sizeof(ChainStats) +
         std::uint64_t{kStatsChannelCapacity} * sizeof(ChannelStats);
}

std::uint64_t StatsView::tablesOffset() const { return tablesAt(header().runnableCount, header().hyperepochCount); }

void StatsView::initialize(std::uint32_t runnables, std::uint32_t hyperepochs, std::uint32_t chains,
                           std::uint32_t channels) const {
  auto* h = new (bytes_.data()) StatsHeader{};
  h->version = kStatsVersion;
  h->runnableCount = runnables;
  h->hyperepochCount = hyperepochs;
  h->switchCapacity = kStatsSwitchCapacity;
  h->blockSize = statsBlockSize(runnables, hyperepochs);
  h->chainCapacity = kStatsChainCapacity;
  h->chainCount = std::min(chains, kStatsChainCapacity);
  h->channelCapacity = kStatsChannelCapacity;
  h->channelCount = std::min(channels, kStatsChannelCapacity);
  for (std::uint32_t r = 0; r < runnables; ++r) new (&runnable(r)) RunnableStats{};
  for (std::uint32_t e = 0; e < hyperepochs; ++e) new (&hyperepoch(e)) HyperepochStats{};
  for (std::uint32_t k = 0; k < kStatsSwitchCapacity; ++k) new (&switchEntry(k)) SwitchEntry{};
  for (std::uint32_t c = 0; c < kStatsChainCapacity; ++c) new (&chain(c)) ChainStats{};
  for (std::uint32_t c = 0; c < kStatsChannelCapacity; ++c) new (&channel(c)) ChannelStats{};
  h->magic.store(kStatsMagic, std::memory_order_release);
}

Result<void> StatsView::validate() const {
  if (bytes_.size() < sizeof(StatsHeader)) {
    return fail(ErrorCode::kIncompatible,
                "statistics block too small for its header (" + std::to_string(bytes_.size()) + " bytes)");
  }
  const StatsHeader& h = header();
  if (h.magic.load(std::memory_order_acquire) != kStatsMagic) {
    return fail(ErrorCode::kIncompatible,
                "no statistics block (bad magic): the master is not a tactus master "
                "of this layout, or it is still starting");
  }
  if (h.version != kStatsVersion) {
    return fail(ErrorCode::kIncompatible, "statistics block has version " + std::to_string(h.version) +
                                              ", this build reads version " + std::to_string(kStatsVersion) +
                                              ": use the tactus-top (or tactus-manager) of the master's build");
  }
  if (h.switchCapacity != kStatsSwitchCapacity || h.chainCapacity != kStatsChainCapacity ||
      h.channelCapacity != kStatsChannelCapacity || h.chainCount > kStatsChainCapacity ||
      h.channelCount > kStatsChannelCapacity || h.blockSize != statsBlockSize(h.runnableCount, h.hyperepochCount) ||
      h.blockSize > bytes_.size()) {
    return fail(ErrorCode::kIncompatible, "statistics block sizes do not match its counts (block of " +
                                              std::to_string(h.blockSize) + " bytes in an area of " +
                                              std::to_string(bytes_.size()) + ")");
  }
  return {};
}

void StatsView::beginWrite() const {
  StatsHeader& h = header();
  // Odd: a write in progress. An acquire read-modify-write keeps the block's stores after it.
  h.seq.fetch_add(1, std::memory_order_acquire);
}

void StatsView::endWrite(std::int64_t nowNs) const {
  StatsHeader& h = header();
  h.batches.store(h.batches.load(kRelaxed) + 1, std::memory_order_release);
  h.updateNs.store(nowNs, std::memory_order_release);
  h.seq.store(h.seq.load(kRelaxed) + 1, std::memory_order_release);
}

namespace {

// Loads acquire: the sequence read after them cannot move before them (no fence needed).
constexpr auto kRead = std::memory_order_acquire;

StatsSnapshot::Measure copyMeasure(const ChainMeasure& in) {
  return {in.count.load(kRead),  in.overPlanned.load(kRead), in.overRequired.load(kRead), in.unmatched.load(kRead),
          in.lastNs.load(kRead), in.lastEndNs.load(kRead),   in.maxNs.load(kRead),        in.lastIteration.load(kRead)};
}

// The chain and channel tables' used entries.
void copyTables(const StatsView& view, StatsSnapshot& s) {
  const StatsHeader& h = view.header();
  s.chains.assign(h.chainCount, {});
  for (std::uint32_t c = 0; c < h.chainCount; ++c)
    s.chains[c] = {copyMeasure(view.chain(c).reaction), copyMeasure(view.chain(c).age)};
  s.channels.assign(h.channelCount, {});
  for (std::uint32_t c = 0; c < h.channelCount; ++c) {
    const ChannelStats& in = view.channel(c);
    s.channels[c] = {in.writes.load(kRead), in.notWritten.load(kRead), in.unseen.load(kRead),
                     in.lastIteration.load(kRead)};
  }
}

// One copy of the block, consistent or not (readStats checks the sequence around it).
void copyBlock(const StatsView& view, std::uint32_t runnables, std::uint32_t hyperepochs, StatsSnapshot& s) {
  const StatsHeader& h = view.header();
  s.batches = h.batches.load(kRead);
  s.updateNs = h.updateNs.load(kRead);
  s.switches = h.switches.load(kRead);
  s.runnables.assign(runnables, {});
  for (std::uint32_t r = 0; r < runnables; ++r) {
    const RunnableStats& in = view.runnable(r);
    StatsSnapshot::Runnable& out = s.runnables[r];
    out.count = in.count.load(kRead);
    out.overruns = in.overruns.load(kRead);
    out.lastNs = in.lastNs.load(kRead);
    out.maxNs = in.maxNs.load(kRead);
    out.totalNs = in.totalNs.load(kRead);
    out.lastIteration = in.lastIteration.load(kRead);
    std::int64_t recent[kStatsRecent];
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(out.count, kStatsRecent));
    for (std::uint32_t k = 0; k < n; ++k) recent[k] = in.recentNs[k].load(kRead);
    if (n > 0) {
      std::nth_element(recent, recent + n / 2, recent + n);
      out.medianNs = recent[n / 2];
    }
  }
  s.hyperepochs.assign(hyperepochs, {});
  for (std::uint32_t e = 0; e < hyperepochs; ++e) {
    const HyperepochStats& in = view.hyperepoch(e);
    StatsSnapshot::Hyperepoch& out = s.hyperepochs[e];
    out.releases = in.releases.load(kRead);
    out.lastIteration = in.lastIteration.load(kRead);
    out.lastJitterNs = in.lastJitterNs.load(kRead);
    out.maxJitterNs = in.maxJitterNs.load(kRead);
    out.totalJitterNs = in.totalJitterNs.load(kRead);
    out.skippedPeriods = in.skippedPeriods.load(kRead);
    out.lateIterations = in.lateIterations.load(kRead);
    out.lateFrames = in.lateFrames.load(kRead);
  }
  s.switchHistory.clear();
  const std::uint64_t kept = std::min<std::uint64_t>(s.switches, kStatsSwitchCapacity);
  for (std::uint64_t k = s.switches - kept; k < s.switches; ++k) {
    const SwitchEntry& in = view.switchEntry(static_cast<std::uint32_t>(k % kStatsSwitchCapacity));
    s.switchHistory.push_back({in.kind.load(kRead), in.schedule.load(kRead), in.other.load(kRead),
                               in.hyperepoch.load(kRead), in.iteration.load(kRead), in.timeNs.load(kRead)});
  }
  copyTables(view, s);
}

}  // namespace

Result<StatsSnapshot> readStats(const StatsView& view, int tries) {
  if (auto ok = view.validate(); !ok) return ok.error();
  const StatsHeader& h = view.header();
  StatsSnapshot s;
  for (int attempt = 0; attempt < tries; ++attempt) {
    const std::uint64_t before = h.seq.load(std::memory_order_acquire);
    if (before % 2 == 0) {
      copyBlock(view, h.runnableCount, h.hyperepochCount, s);
      if (h.seq.load(kRelaxed) == before) return s;
    }
    std::this_thread::yield();
  }
  return fail(ErrorCode::kTimeout, "the statistics block changed during each of " + std::to_string(tries) +
                                       " reads (is the master's drain thread spinning?)");
}

}  // namespace tactus::shm
