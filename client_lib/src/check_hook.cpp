// The hook of check mode (see check_hook.hpp).
#include "check_hook.hpp"

#include <dlfcn.h>

#include "tactus/ipc/wait.hpp"

namespace tactus::client {

const CheckHooks* checkHooks() {
  static const CheckHooks hooks{reinterpret_cast<TactusCheckBeginFn>(::dlsym(RTLD_DEFAULT, "tactusCheckBegin")),
                                reinterpret_cast<TactusCheckEndFn>(::dlsym(RTLD_DEFAULT, "tactusCheckEnd"))};
  return hooks.begin != nullptr && hooks.end != nullptr ? &hooks : nullptr;
}

void endCheck(const CheckHooks& hooks, shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity) {
  // A run's reports are few (one record per distinct violation, its site the first time only);
  // what does not fit stays pending in the check library for the next run.
  constexpr std::uint32_t kBatch = 64;
  EventRecord batch[kBatch];
  const std::uint32_t n = hooks.end(batch, kBatch);
  for (std::uint32_t k = 0; k < n; ++k) ipc::pushEvent(slot, ring, capacity, batch[k]);
}

}  // namespace tactus::client
