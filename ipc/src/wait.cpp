// Spin budget configuration for the waiting strategy.
#include "tactus/ipc/wait.hpp"

#include <cstdlib>

namespace tactus::ipc {

std::int64_t spinBudgetNs() {
  static const std::int64_t budget = [] {
    const char* text = std::getenv("TACTUS_SPIN_NS");
    if (text == nullptr || *text == '\0') return kDefaultSpinNs;
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    return (end != nullptr && *end == '\0' && v >= 0) ? static_cast<std::int64_t>(v) : kDefaultSpinNs;
  }();
  return budget;
}

}  // namespace tactus::ipc
