// Small queries on the schedule model used in messages and by every module.
#include "tactus/core/schedule.hpp"

namespace tactus {

std::string qualifiedName(const Schedule& schedule, RunnableId runnable) {
  if (!schedule.runnables.contains(runnable)) return "#" + std::to_string(index(runnable));
  const RunnableInfo& r = schedule.runnables[runnable];
  std::string client =
      schedule.clients.contains(r.client) ? schedule.clients[r.client].name : "#" + std::to_string(index(r.client));
  return client + "." + r.name;
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

HyperepochId instanceHyperepoch(const Schedule& schedule, InstanceId instance) {
  if (!schedule.instances.contains(instance)) return kNone;
  const RunnableId runnable = schedule.instances[instance].runnable;
  if (!schedule.runnables.contains(runnable)) return kNone;
  const EpochId epoch = schedule.runnables[runnable].epoch;
  if (!schedule.epochs.contains(epoch)) return kNone;
  return schedule.epochs[epoch].hyperepoch;
}

}  // namespace tactus
