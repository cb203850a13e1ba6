// The chain and channel watch (see chain_watch.hpp).
#include "roles/chain_watch.hpp"

#include <algorithm>

namespace tactus::master {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
// Stores release, as the statistics publisher's (the block's sequence lock without fences).
constexpr auto kStore = std::memory_order_release;
constexpr std::uint32_t kWindow = shm::kChainWindow;

template <typename T, typename V>
void add(std::atomic<T>& field, V value) {
  field.store(field.load(kRelaxed) + static_cast<T>(value), kStore);
}

std::uint64_t tagOf(std::int64_t iteration) { return static_cast<std::uint64_t>(iteration) + 1; }
std::size_t rowOf(std::int64_t iteration) { return static_cast<std::size_t>(iteration) % kWindow; }
}  // namespace

ChainWatch::ChainWatch(const Schedule& schedule, const shm::SegmentView& view)
    : schedule_(schedule), view_(view), block_(view.stats()), channelArea_(view.channelArea()) {
  const std::size_t instances = schedule.instances.size();
  endSlot_.assign(instances, -1);
  startsChain_.assign(instances, 0);
  endsChain_.assign(instances, 0);
  releaseSlot_.assign(schedule.epochs.size(), -1);
  latestOf_.assign(schedule.hyperepochs.size(), -1);
  const std::uint32_t chains = block_.header().chainCount;
  for (std::uint32_t k = 0; k < chains && k < schedule.chains.size(); ++k) {
    auto map = ChainMap::make(schedule, schedule.chains[k]);
    if (!map) break;  // a verified schedule's chains all resolve; the rest are not measured
    const HyperepochId h = schedule.epochs[schedule.runnables[schedule.chains[k].runnables.front()].epoch].hyperepoch;
    Chain c{std::move(*map), static_cast<std::uint32_t>(schedule.chains[k].runnables.size() - 1), h, {}};
    path_.reserve(std::max<std::size_t>(path_.capacity(), schedule.chains[k].runnables.size()));
    std::size_t runs = 0;
    for (const std::uint32_t position : {0u, c.lastPosition}) {
      for (const InstanceId i : c.map.runs(position)) {
        (position == 0 ? startsChain_ : endsChain_)[index(i)] = 1;
        if (endSlot_[index(i)] < 0) {
          endSlot_[index(i)] = static_cast<std::int32_t>(ends_.size() / kWindow);
          ends_.resize(ends_.size() + kWindow);
        }
        ++runs;
      }
    }
    for (const InstanceId i : c.map.runs(0)) {
      const EpochId e = schedule.runnables[schedule.instances[i].runnable].epoch;
      if (releaseSlot_[index(e)] >= 0) continue;
      releaseSlot_[index(e)] = static_cast<std::int32_t>(releases_.size() / kWindow);
      releases_.resize(releases_.size() + std::size_t{schedule.epochs[e].frames} * kWindow);
    }
    // At most a reaction per source run and an age per last run of each iteration in the window
    // wait at once (twice that for slack): allocated here, never on the drain's path.
    c.pending.reserve(2 * runs * kWindow);
    chains_.push_back(std::move(c));
  }
  rings_ = shm::channelRings(schedule, nullptr);
  writesBegin_.assign(instances + 1, 0);
  for (const ChannelWrite& w : schedule.channelWrites)
    if (schedule.instances.contains(w.instance)) ++writesBegin_[index(w.instance) + 1];
  for (std::size_t i = 0; i < instances; ++i) writesBegin_[i + 1] += writesBegin_[i];
  writesOf_.assign(writesBegin_.back(), 0);
  std::vector<std::uint32_t> at(writesBegin_.begin(), writesBegin_.end() - 1);
  for (std::uint32_t k = 0; k < schedule.channelWrites.size(); ++k) {
    const InstanceId i = schedule.channelWrites[k].instance;
    if (schedule.instances.contains(i)) writesOf_[at[index(i)]++] = k;
  }
}

const ChainWatch::Seen* ChainWatch::end(ChainRun run) const {
  if (run.iteration < 0 || !schedule_.instances.contains(run.instance)) return nullptr;
  const std::int32_t slot = endSlot_[index(run.instance)];
  if (slot < 0) return nullptr;
  const Seen& seen = ends_[std::size_t(slot) * kWindow + rowOf(run.iteration)];
  return seen.tag == tagOf(run.iteration) ? &seen : nullptr;
}

const ChainWatch::Seen* ChainWatch::release(ChainRun run) const {
  if (run.iteration < 0 || !schedule_.instances.contains(run.instance)) return nullptr;
  const InstanceInfo& in = schedule_.instances[run.instance];
  const std::int32_t slot = releaseSlot_[index(schedule_.runnables[in.runnable].epoch)];
  if (slot < 0) return nullptr;
  const Seen& seen = releases_[(std::size_t(slot) + in.frame) * kWindow + rowOf(run.iteration)];
  return seen.tag == tagOf(run.iteration) ? &seen : nullptr;
}

void ChainWatch::enqueue(Chain& c, const Pending& p) {
  if (c.pending.size() < c.pending.capacity()) {
    c.pending.push_back(p);
    return;
  }
  // Never reached with the reserve above; should it be, the occurrence is said given up.
  shm::ChainStats& s = block_.chain(static_cast<std::uint32_t>(&c - chains_.data()));
  add((p.reaction ? s.reaction : s.age).unmatched, 1);
}

void ChainWatch::seeChannelWrite(const EventRecord& r, InstanceId instance) {
  // Where the writer run's version lies (client_lib/src/channels.cpp): buffer
  // (slot + iteration * writes) mod depth of the channel's ring, with the whole iteration: the
  // record holds its low 32 bits, widened by the hyperepoch's completed count (within a few
  // iterations of it), so a run past 2^32 iterations (50 days of 1 ms periods) looks in its buffer.
  const InstanceInfo& in = schedule_.instances[instance];
  const HyperepochId he = schedule_.epochs[schedule_.runnables[in.runnable].epoch].hyperepoch;
  const std::uint64_t near = view_.hyperepoch(he).completed.load(kRelaxed);
  std::uint64_t iteration = (near & ~std::uint64_t{0xffffffff}) | r.iteration;
  if (iteration > near + (std::uint64_t{1} << 31) && iteration >= (std::uint64_t{1} << 32)) {
    iteration -= std::uint64_t{1} << 32;
  } else if (iteration + (std::uint64_t{1} << 31) < near) {
    iteration += std::uint64_t{1} << 32;
  }
  for (std::uint32_t k = writesBegin_[index(instance)]; k < writesBegin_[index(instance) + 1]; ++k) {
    const ChannelWrite& w = schedule_.channelWrites[writesOf_[k]];
    if (w.channel >= block_.header().channelCount || w.channel >= rings_.size()) continue;
    const shm::ChannelRing& ring = rings_[w.channel];
    if (ring.depth == 0) continue;
    const std::uint64_t buffer = (w.slot + iteration * ring.writes) % ring.depth;
    const std::uint64_t at = ring.offset + buffer * ring.stride;
    if (at + sizeof(shm::ChannelVersion) > channelArea_.size()) continue;
    const auto* v = reinterpret_cast<const shm::ChannelVersion*>(channelArea_.data() + at);
    const std::uint64_t stamped = v->iteration.load(std::memory_order_acquire);
    const std::uint32_t writer = v->writerInstance.load(kRelaxed);
    // The stamp's iteration against the run's, in the low 32 bits the record holds: earlier (or
    // none) is a run that took no buffer; later, a writer run after it took the buffer first.
    const auto ahead = static_cast<std::int32_t>(static_cast<std::uint32_t>(stamped - 1) - r.iteration);
    shm::ChannelStats& s = block_.channel(w.channel);
    if (stamped != 0 && ahead == 0 && writer == index(instance)) {
      add(s.writes, 1);
    } else if (stamped == 0 || ahead < 0) {
      add(s.notWritten, 1);
    } else {
      add(s.unseen, 1);
    }
    s.lastIteration.store(r.iteration, kStore);
  }
}

void ChainWatch::see(const EventRecord& r) {
  const auto kind = static_cast<EventKind>(r.kind);
  if (kind == EventKind::kRelease) {
    // instance: the epoch, aux: the frame, startNs: the ideal release.
    if (!schedule_.epochs.contains(EpochId{r.instance}) || r.aux >= schedule_.epochs[EpochId{r.instance}].frames)
      return;
    const std::int32_t slot = releaseSlot_[r.instance];
    if (slot >= 0)
      releases_[(std::size_t(slot) + r.aux) * kWindow + rowOf(r.iteration)] = {tagOf(r.iteration), r.startNs};
    return;
  }
  if (kind != EventKind::kRun || !schedule_.instances.contains(InstanceId{r.instance})) return;
  const InstanceId instance{r.instance};
  if (writesBegin_[r.instance] != writesBegin_[r.instance + 1]) seeChannelWrite(r, instance);
  const std::int32_t slot = endSlot_[r.instance];
  if (slot < 0 || r.endNs < r.startNs) return;
  const std::int64_t iteration = r.iteration;
  ends_[std::size_t(slot) * kWindow + rowOf(iteration)] = {tagOf(iteration), r.endNs};
  const RunnableId runnable = schedule_.instances[instance].runnable;
  std::int64_t& latest = latestOf_[index(schedule_.epochs[schedule_.runnables[runnable].epoch].hyperepoch)];
  latest = std::max(latest, iteration);
  for (Chain& c : chains_) {
    const ChainInfo& info = schedule_.chains[static_cast<std::size_t>(&c - chains_.data())];
    if (startsChain_[r.instance] && runnable == info.runnables.front() &&
        c.map.reactionPath({instance, iteration}, path_).has_value())
      enqueue(c, {{instance, iteration}, path_.back(), true});
    if (endsChain_[r.instance] && runnable == info.runnables.back()) {
      c.map.dataPath({instance, iteration}, path_);
      // A source before the first iteration never ran: no occurrence (as tactus-report counts).
      if (path_.front().iteration >= 0) enqueue(c, {path_.front(), {instance, iteration}, false});
    }
  }
}

void ChainWatch::measure(std::uint32_t chain, const Pending& p, std::int64_t ns, std::int64_t endNs) {
  const ChainInfo& info = schedule_.chains[chain];
  shm::ChainMeasure& m = p.reaction ? block_.chain(chain).reaction : block_.chain(chain).age;
  const std::int64_t planned = p.reaction ? info.reactionNs : info.ageNs;
  const std::int64_t required = p.reaction ? info.maxReactionNs : info.maxAgeNs;
  add(m.count, 1);
  if (ns > planned) add(m.overPlanned, 1);
  if (required != kNoDuration && ns > required) add(m.overRequired, 1);
  if (ns > m.maxNs.load(kRelaxed) || m.count.load(kRelaxed) == 1) m.maxNs.store(ns, kStore);
  // The latest: the one that ended last; of several ending together (reactions to several source
  // frames seen by one last run), the newest source's, the shortest.
  const std::int64_t lastEnd = m.lastEndNs.load(kRelaxed);
  if (m.count.load(kRelaxed) == 1 || endNs > lastEnd || (endNs == lastEnd && ns < m.lastNs.load(kRelaxed))) {
    m.lastNs.store(ns, kStore);
    m.lastEndNs.store(endNs, kStore);
    m.lastIteration.store(static_cast<std::uint32_t>(p.last.iteration), kStore);
  }
}

void ChainWatch::publish() {
  for (std::uint32_t k = 0; k < chains_.size(); ++k) {
    Chain& c = chains_[k];
    const std::int64_t latest = latestOf_[index(c.hyperepoch)];
    std::size_t kept = 0;
    for (std::size_t j = 0; j < c.pending.size(); ++j) {
      const Pending& p = c.pending[j];
      const Seen* first = end(p.source);
      const Seen* last = end(p.last);
      const Seen* released = release(p.source);
      if (first != nullptr && last != nullptr && released != nullptr) {
        measure(k, p, last->ns - released->ns, last->ns);
      } else if (latest - std::min(p.source.iteration, p.last.iteration) >= std::int64_t{kWindow} - 1) {
        shm::ChainStats& s = block_.chain(k);
        add((p.reaction ? s.reaction : s.age).unmatched, 1);
      } else {
        c.pending[kept++] = p;
      }
    }
    c.pending.resize(kept);
  }
}

}  // namespace tactus::master
