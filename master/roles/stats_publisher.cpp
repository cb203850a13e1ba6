// The statistics publisher (see stats_publisher.hpp).
#include "roles/stats_publisher.hpp"

#include <algorithm>

#include "tactus_trace.hpp"

namespace tactus::master {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
// Stores release: a reader that sees one also sees the write's odd sequence before it (the seqlock
// without fences, which ThreadSanitizer does not support).
constexpr auto kStore = std::memory_order_release;

// The writer's own read-modify-write of a field only it writes (readers load it relaxed).
template <typename T, typename V>
void add(std::atomic<T>& field, V value) {
  field.store(field.load(kRelaxed) + static_cast<T>(value), kStore);
}
template <typename T>
void raise(std::atomic<T>& field, T value) {
  if (value > field.load(kRelaxed)) field.store(value, kStore);
}
}  // namespace

void StatsPublisher::seeRun(const EventRecord& r) const {
  // aux: the runnable that ran (a round-robin member; kNone for an empty step).
  if (!schedule_.runnables.contains(RunnableId{r.aux}) || r.aux >= block_.header().runnableCount) return;
  const RunnableInfo& info = schedule_.runnables[RunnableId{r.aux}];
  shm::RunnableStats& s = block_.runnable(r.aux);
  const std::int64_t took = std::max<std::int64_t>(0, r.endNs - r.startNs);
  const std::uint64_t count = s.count.load(kRelaxed);
  s.recentNs[count % shm::kStatsRecent].store(took, kStore);
  s.lastNs.store(took, kStore);
  s.lastIteration.store(r.iteration, kStore);
  raise(s.maxNs, took);
  add(s.totalNs, took);
  if (info.wcetNs > 0 && took > overrunLimitNs(info)) add(s.overruns, 1);
  s.count.store(count + 1, kStore);
}

void StatsPublisher::seeRelease(const EventRecord& r) const {
  // instance: the epoch; startNs the ideal release, endNs the actual one.
  if (!schedule_.epochs.contains(EpochId{r.instance})) return;
  const std::uint32_t he = index(schedule_.epochs[EpochId{r.instance}].hyperepoch);
  if (he >= block_.header().hyperepochCount) return;
  shm::HyperepochStats& s = block_.hyperepoch(he);
  const std::int64_t jitter = r.endNs - r.startNs;
  add(s.releases, 1);
  s.lastIteration.store(r.iteration, kStore);
  s.lastJitterNs.store(jitter, kStore);
  raise(s.maxJitterNs, jitter);
  add(s.totalJitterNs, jitter);
}

void StatsPublisher::seeSwitch(const EventRecord& r) const {
  shm::StatsHeader& h = block_.header();
  const std::uint64_t k = h.switches.load(kRelaxed);
  shm::SwitchEntry& e = block_.switchEntry(static_cast<std::uint32_t>(k % shm::kStatsSwitchCapacity));
  e.kind.store(r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart) ? 1 : 2, kStore);
  e.schedule.store(r.schedule, kStore);
  e.other.store(r.aux, kStore);
  e.hyperepoch.store(r.instance, kStore);
  e.iteration.store(r.iteration, kStore);
  e.timeNs.store(r.startNs, kStore);
  h.switches.store(k + 1, kStore);
  TACTUS_TRACE(schedule_switch, r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStart), r.schedule, r.instance,
               r.iteration, r.aux, r.startNs, r.endNs);
}

void StatsPublisher::see(const EventRecord* records, std::size_t count, std::int64_t nowNs) {
  if (count == 0) return;
  block_.beginWrite();
  for (std::size_t k = 0; k < count; ++k) {
    const EventRecord& r = records[k];
    chains_.see(r);
    switch (static_cast<EventKind>(r.kind)) {
      case EventKind::kRun: seeRun(r); break;
      case EventKind::kRelease: seeRelease(r); break;
      case EventKind::kOverrun:  // instance: the epoch
        if (schedule_.epochs.contains(EpochId{r.instance})) {
          const std::uint32_t he = index(schedule_.epochs[EpochId{r.instance}].hyperepoch);
          if (he < block_.header().hyperepochCount) add(block_.hyperepoch(he).lateFrames, 1);
        }
        break;
      case EventKind::kSkipped:  // instance: the hyperepoch, aux: the periods skipped
        if (r.instance < block_.header().hyperepochCount && schedule_.hyperepochs.contains(HyperepochId{r.instance})) {
          add(block_.hyperepoch(r.instance).lateIterations, 1);
          add(block_.hyperepoch(r.instance).skippedPeriods, r.aux);
        }
        break;
      case EventKind::kScheduleStart:
      case EventKind::kScheduleStop: seeSwitch(r); break;
      default: break;
    }
  }
  chains_.publish();
  block_.endWrite(nowNs);
}

}  // namespace tactus::master
