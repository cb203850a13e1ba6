// Small queries on the schedule model used in messages and by every module.
#include "tactus/core/schedule.hpp"

namespace tactus {

std::string qualifiedName(const Schedule& schedule, std::uint32_t runnable) {
  if (runnable >= schedule.runnables.size()) return "#" + std::to_string(runnable);
  const RunnableInfo& r = schedule.runnables[runnable];
  std::string client =
      r.client < schedule.clients.size() ? schedule.clients[r.client].name : "#" + std::to_string(r.client);
  return client + "." + r.name;
}

std::uint32_t runnableSoc(const Schedule& schedule, std::uint32_t runnable) {
  if (runnable >= schedule.runnables.size()) return kNone;
  const std::uint32_t c = schedule.runnables[runnable].client;
  return c < schedule.clients.size() ? schedule.clients[c].soc : kNone;
}

bool crossesSocs(const Schedule& schedule, std::uint32_t from, std::uint32_t to) {
  const std::uint32_t a = runnableSoc(schedule, from);
  const std::uint32_t b = runnableSoc(schedule, to);
  return a != kNone && b != kNone && a != b;
}

std::vector<std::vector<std::uint32_t>> instancesByRunnableFrame(const Schedule& schedule) {
  std::vector<std::vector<std::uint32_t>> table(schedule.runnables.size());
  for (std::uint32_t i = 0; i < schedule.instances.size(); ++i) {
    const InstanceInfo& in = schedule.instances[i];
    auto& frames = table[in.runnable];
    if (frames.size() <= in.frame) frames.resize(in.frame + 1, kNone);
    frames[in.frame] = i;
  }
  return table;
}

std::uint32_t instanceHyperepoch(const Schedule& schedule, std::uint32_t instance) {
  if (instance >= schedule.instances.size()) return kNone;
  std::uint32_t runnable = schedule.instances[instance].runnable;
  if (runnable >= schedule.runnables.size()) return kNone;
  std::uint32_t epoch = schedule.runnables[runnable].epoch;
  if (epoch >= schedule.epochs.size()) return kNone;
  return schedule.epochs[epoch].hyperepoch;
}

}  // namespace tactus
