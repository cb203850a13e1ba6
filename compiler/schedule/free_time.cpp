// The earliest common start on several resources' free time.
#include "schedule/free_time.hpp"

namespace tactus::compiler::schedule {

std::int64_t commonFit(const std::vector<FreeTime>& free, const std::vector<std::uint32_t>& set, std::int64_t t,
                       std::int64_t w, std::int64_t* lastGapStart) {
  // Round robin over the set until every resource in a row accepts s. fit() is idempotent (a
  // resource accepts the start it returned), so counting the one that moved s as accepting it
  // ends the same sequence of starts without the last pass of repeated look-ups.
  std::int64_t s = t;
  const std::size_t n = set.size();
  for (std::size_t i = 0, accepted = 0; accepted < n; i = (i + 1 == n ? 0 : i + 1)) {
    // The last resource's latest look-up was at the final start (or returned it): its gap.
    const std::int64_t s2 = free[set[i]].fit(s, w, i + 1 == n ? lastGapStart : nullptr);
    accepted = s2 == s ? accepted + 1 : 1;
    s = s2;
  }
  return s;
}

}  // namespace tactus::compiler::schedule
