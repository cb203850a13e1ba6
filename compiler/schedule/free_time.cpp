// The earliest common start on several resources' free time.
#include "schedule/free_time.hpp"

namespace tactus::compiler::schedule {

std::int64_t commonFit(const std::vector<FreeTime>& free, const std::vector<std::uint32_t>& set, std::int64_t t,
                       std::int64_t w) {
  std::int64_t s = t;
  bool moved = true;
  while (moved) {
    moved = false;
    for (std::uint32_t r : set) {
      const std::int64_t s2 = free[r].fit(s, w);
      if (s2 != s) {
        s = s2;
        moved = true;
      }
    }
  }
  return s;
}

}  // namespace tactus::compiler::schedule
