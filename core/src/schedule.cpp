// Small queries on the schedule model used in messages and by every module.
#include "tactus/core/schedule.hpp"

#include <algorithm>
#include <utility>

namespace tactus {

std::string qualifiedName(const Schedule& schedule, RunnableId runnable) {
  if (!schedule.runnables.contains(runnable)) return "#" + std::to_string(index(runnable));
  const RunnableInfo& r = schedule.runnables[runnable];
  std::string client =
      schedule.clients.contains(r.client) ? schedule.clients[r.client].name : "#" + std::to_string(index(r.client));
  return client + "." + r.name;
}

std::uint32_t runnableSoc(const Schedule& schedule, RunnableId runnable) {
  if (!schedule.runnables.contains(runnable)) return kNone;
  const ClientId c = schedule.runnables[runnable].client;
  return schedule.clients.contains(c) ? schedule.clients[c].soc : std::uint32_t{kNone};
}

bool crossesSocs(const Schedule& schedule, RunnableId from, RunnableId to) {
  const std::uint32_t a = runnableSoc(schedule, from);
  const std::uint32_t b = runnableSoc(schedule, to);
  return a != kNone && b != kNone && a != b;
}

std::int64_t socLatencyNs(const Schedule& schedule, std::uint32_t from, std::uint32_t to) {
  if (from == kNone || to == kNone || from == to) return 0;
  // Sorted by (from, to): a binary search, as the verifier asks once per dependency.
  auto it = std::lower_bound(schedule.socLatencies.begin(), schedule.socLatencies.end(), std::pair{from, to},
                             [](const SocLatency& l, const std::pair<std::uint32_t, std::uint32_t>& key) {
                               return std::pair{l.from, l.to} < key;
                             });
  if (it != schedule.socLatencies.end() && it->from == from && it->to == to) return it->latencyNs;
  return schedule.crossSocLatencyNs;
}

std::int64_t dependencyLatencyNs(const Schedule& schedule, RunnableId from, RunnableId to) {
  return socLatencyNs(schedule, runnableSoc(schedule, from), runnableSoc(schedule, to));
}

IdVector<RunnableId, std::vector<InstanceId>> instancesByRunnableFrame(const Schedule& schedule) {
  IdVector<RunnableId, std::vector<InstanceId>> table(schedule.runnables.size());
  for (InstanceId i : schedule.instances.ids()) {
    const InstanceInfo& in = schedule.instances[i];
    auto& frames = table[in.runnable];
    if (frames.size() <= in.frame) frames.resize(in.frame + 1, kNone);
    frames[in.frame] = i;
  }
  return table;
}

InstanceId instanceAt(const IdVector<RunnableId, std::vector<InstanceId>>& table, RunnableId runnable,
                      std::uint32_t frame) {
  return table.contains(runnable) && frame < table[runnable].size() ? table[runnable][frame] : kNone;
}

ClientId clientIndex(const Schedule& schedule, std::string_view name) {
  for (const ClientId c : schedule.clients.ids()) {
    if (schedule.clients[c].name == name) return c;
  }
  return kNone;
}

HyperepochId instanceHyperepoch(const Schedule& schedule, InstanceId instance) {
  if (!schedule.instances.contains(instance)) return kNone;
  const RunnableId runnable = schedule.instances[instance].runnable;
  if (!schedule.runnables.contains(runnable)) return kNone;
  const EpochId epoch = schedule.runnables[runnable].epoch;
  if (!schedule.epochs.contains(epoch)) return kNone;
  return schedule.epochs[epoch].hyperepoch;
}

}  // namespace tactus
