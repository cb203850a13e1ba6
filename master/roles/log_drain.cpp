// The master's log drain (see log_drain.hpp).
#include "roles/log_drain.hpp"

#include <algorithm>

#include "roles/overrun_watch.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/violation.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

LogDrain::LogDrain(const shm::SegmentView& view, const Schedule& schedule, const RunPlan& plan, EventLogWriter& log)
    : view_(view), schedule_(schedule), plan_(plan), log_(log), stats_(schedule, view) {
  tail_.assign(plan.workers.size(), 0);
  droppedSeen_.assign(plan.workers.size(), 0);
  batch_.reserve(std::max<std::size_t>(view.ringCapacity(), MasterEventRing::kCapacity));
}

bool LogDrain::violationRecordValid(const EventRecord& r, ClientId client) const {
  // tactus-check's records (violation.hpp): indices and codes within the schedule and the tables,
  // the runnable one of the ring's own client; a site record is text, which tactus-report prints
  // escaped.
  if (r.kind == static_cast<std::uint16_t>(EventKind::kViolationSite)) return true;
  return r.kind == static_cast<std::uint16_t>(EventKind::kViolation) &&
         schedule_.instances.contains(InstanceId{r.instance}) && schedule_.runnables.contains(RunnableId{r.aux}) &&
         schedule_.runnables[RunnableId{r.aux}].client == client && violationCodesValid(r);
}

void LogDrain::publishStats(const EventRecord* records, std::size_t count) {
  if (count > 0) stats_.see(records, count, ipc::monotonicNs());
  if (count > 0 && tap_ != nullptr) tap_->see(records, count);
}

std::optional<RunEnd> LogDrain::drain(std::vector<MasterEventRing>& masterRings) {
  const std::uint32_t capacity = view_.ringCapacity();
  const auto workers = static_cast<std::uint32_t>(plan_.workers.size());
  for (std::uint32_t w = 0; w < workers; ++w) {
    shm::WorkerSlot& slot = view_.worker(w);
    const std::uint64_t head = slot.head.load(std::memory_order_acquire);
    const std::uint64_t tail = tail_[w];
    if (head - tail > capacity) {
      // The worker's head is behind the master's tail or more than a ring ahead: the client (or
      // whoever wrote the segment) wrote it over. Never read a record on its word.
      const ClientId c = plan_.workers[w].client;
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kDamaged, c,
                    "segment damaged: client " + quoted(schedule_.clients[c].name) + " worker ring " +
                        std::to_string(w) + ": field 'head' holds " + std::to_string(head) + ", out of range (tail " +
                        std::to_string(tail) + ", capacity " + std::to_string(capacity) + ")"};
    }
    const EventRecord* ring = view_.ring(w);
    batch_.clear();
    for (std::uint64_t k = tail; k < head; ++k) {
      const EventRecord r = ring[k & (capacity - 1)];
      if (r.kind == static_cast<std::uint16_t>(EventKind::kRun)) {
        if (!schedule_.instances.contains(InstanceId{r.instance})) continue;
      } else if (!violationRecordValid(r, plan_.workers[w].client)) {
        continue;
      }
      batch_.push_back(r);
    }
    tail_[w] = head;
    slot.tail.store(head, std::memory_order_release);
    recordsDrained_ += batch_.size();
    if (log_.isOpen()) log_.append(batch_.data(), batch_.size());
    if (overruns_ != nullptr && !batch_.empty()) overruns_->see(batch_.data(), batch_.size(), ipc::monotonicNs());
    publishStats(batch_.data(), batch_.size());
    const std::uint64_t dropped = slot.dropped.load(std::memory_order_relaxed);
    if (dropped > droppedSeen_[w]) {
      const std::uint64_t lost = dropped - droppedSeen_[w];
      droppedSeen_[w] = dropped;
      droppedTotal_ += lost;
      const std::int64_t now = ipc::monotonicNs();
      EventRecord r{static_cast<std::uint16_t>(EventKind::kDropped),
                    0,
                    index(plan_.workers[w].client),
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(lost, 0xffffffffu)),
                    w,
                    now,
                    now};
      if (log_.isOpen()) log_.append(&r, 1);
    }
  }
  std::uint64_t masterDropped = 0;
  for (MasterEventRing& ring : masterRings) {
    batch_.clear();
    ring.popAll(batch_);
    if (log_.isOpen()) log_.append(batch_.data(), batch_.size());
    if (overruns_ != nullptr && !batch_.empty()) overruns_->see(batch_.data(), batch_.size(), ipc::monotonicNs());
    publishStats(batch_.data(), batch_.size());
    masterDropped += ring.dropped();
  }
  // The release threads' rings cannot fill between two drains (a record per release, a drain
  // every 2 ms); should one, its losses count with the clients' in the verbose summary.
  droppedTotal_ += masterDropped - masterDroppedSeen_;
  masterDroppedSeen_ = masterDropped;
  return std::nullopt;
}

}  // namespace tactus::master
