// Lists of strong ids written as numbers, for tests that build or compare schedules and graphs:
// `ids<RunnableId>({0, 2})` is the std::vector<RunnableId> of runnables 0 and 2.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tactus/core/ids.hpp"

namespace tactus::test {

/// The ids with these numbers, in order (kNone as a number stays kNone).
template <StrongId Id>
std::vector<Id> ids(std::initializer_list<std::uint32_t> numbers) {
  std::vector<Id> out;
  out.reserve(numbers.size());
  for (std::uint32_t n : numbers) out.push_back(Id{n});
  return out;
}

}  // namespace tactus::test
