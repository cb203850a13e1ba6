// Spin budget configuration for the waiting strategy.
#include "tactus/ipc/wait.hpp"

#include <cstdlib>

namespace tactus::ipc {

std::int64_t envDurationNs(const char* name, std::int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return (end != nullptr && *end == '\0' && v >= 0) ? static_cast<std::int64_t>(v) : fallback;
}

std::int64_t spinBudgetNs() {
  static const std::int64_t budget = envDurationNs("TACTUS_SPIN_NS", kDefaultSpinNs);
  return budget;
}

std::int64_t releaseLeadNs() {
  static const std::int64_t lead = envDurationNs("TACTUS_RELEASE_LEAD_NS", kDefaultReleaseLeadNs);
  return lead;
}

std::int64_t planLeadNs() {
  static const std::int64_t lead = envDurationNs("TACTUS_PLAN_LEAD_NS", kDefaultPlanLeadNs);
  return lead;
}

}  // namespace tactus::ipc
