// A schedule's segment in a heap buffer (see heap_segment.hpp).
#include "heap_segment.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <utility>

namespace tactus::test {

HeapSegment::HeapSegment(Schedule s, shm::SegmentState state, std::uint64_t stopAt, std::int64_t runStartNs)
    : schedule(std::move(s)) {
  auto p = makeRunPlan(schedule);
  if (!p) throw std::invalid_argument("HeapSegment: no run plan: " + p.error().message);
  plan = std::move(*p);
  const shm::LayoutCounts counts = shm::layoutCounts(schedule, plan, 0);
  const std::uint64_t size = shm::computeLayout(counts).total;
  constexpr std::uint64_t kPage = 4096;
  bytes_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, (size + kPage - 1) / kPage * kPage)));
  if (bytes_ == nullptr) throw std::bad_alloc();
  view = shm::SegmentView(std::span<std::byte>(bytes_.get(), size));
  if (auto ok = view.initialize(counts); !ok) throw std::invalid_argument("HeapSegment: " + ok.error().message);
  for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(stopAt);
  shm::SegmentHeader& header = view.header();
  if (static_cast<std::uint32_t>(state) >= static_cast<std::uint32_t>(shm::SegmentState::kRunning))
    header.runStartNs.store(runStartNs);
  header.state.store(static_cast<std::uint32_t>(state), std::memory_order_seq_cst);
}

void HeapSegment::releaseAndStopAt(std::uint64_t iterations) {
  const EpochInfo& e = schedule.epochs[EpochId{0}];
  view.epoch(EpochId{0}).released.store(static_cast<std::uint32_t>(iterations * std::max(1u, e.frames)));
  view.hyperepoch(HyperepochId{0}).stopAt.store(iterations);
}

ClientId HeapSegment::client(const std::string& name) const {
  for (ClientId c : schedule.clients.ids())
    if (schedule.clients[c].name == name) return c;
  throw std::invalid_argument("HeapSegment: no client " + name);
}

std::uint32_t HeapSegment::worker(const std::string& clientName, const std::string& resource) const {
  const ClientId c = client(clientName);
  for (std::uint32_t w = 0; w < plan.workers.size(); ++w)
    if (plan.workers[w].client == c && schedule.resources[plan.workers[w].resource].name == resource) return w;
  throw std::invalid_argument("HeapSegment: no worker of " + clientName + " on " + resource);
}

RunnableId HeapSegment::runnable(const std::string& qualified) const {
  for (RunnableId r : schedule.runnables.ids())
    if (qualifiedName(schedule, r) == qualified) return r;
  throw std::invalid_argument("HeapSegment: no runnable " + qualified);
}

InstanceId HeapSegment::instance(const std::string& qualified, std::uint32_t frame) const {
  const RunnableId r = runnable(qualified);
  for (InstanceId i : schedule.instances.ids())
    if (schedule.instances[i].runnable == r && schedule.instances[i].frame == frame) return i;
  throw std::invalid_argument("HeapSegment: no instance of " + qualified + " in frame " + std::to_string(frame));
}

std::vector<EventRecord> HeapSegment::records(std::uint32_t w) const {
  std::vector<EventRecord> out;
  const std::uint64_t head = view.worker(w).head.load();
  for (std::uint64_t k = 0; k < head; ++k) out.push_back(view.ring(w)[k & (view.ringCapacity() - 1)]);
  return out;
}

}  // namespace tactus::test
