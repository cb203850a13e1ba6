// Parsing of STM duration strings (`10us`, `33.33ms`, `1.00 us`) into exact nanoseconds.
#pragma once

#include <cstdint>
#include <string_view>

#include "tactus/core/limits.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler {

/// Largest duration accepted, in nanoseconds (limits::kMaxDurationNs, 1,000 s); larger values
/// are an error.
inline constexpr std::int64_t kMaxDurationNs = limits::kMaxDurationNs;

/// Parses a duration: a non-negative decimal number, optional blanks, and a unit `ns` `us` `ms`
/// or `s`. A bare `0` is accepted (callers decide where it is allowed; see isBareZero). The
/// arithmetic is exact: `33.33ms` is 33330000 ns; a value that is not a whole number of
/// nanoseconds, negative, without unit, above kMaxDurationNs or with junk around it is an
/// ErrorCode::kParse error whose message quotes the text.
Result<std::int64_t> parseDuration(std::string_view text);

/// True when the text is a bare `0` (no unit), which only some fields accept.
bool isBareZero(std::string_view text);

}  // namespace tactus::compiler
