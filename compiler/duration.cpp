// Exact parsing of duration strings into nanoseconds (no floating point anywhere).
#include "duration.hpp"

#include <string>
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

bool isBlank(char c) { return c == ' ' || c == '\t'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && isBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && isBlank(text.back())) text.remove_suffix(1);
  return text;
}

Error bad(std::string_view text, const std::string& why) {
  return fail(ErrorCode::kParse, "bad duration " + quoted(text, 40) + ": " + why);
}

}  // namespace

bool isBareZero(std::string_view text) { return trim(text) == "0"; }

Result<std::int64_t> parseDuration(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return bad(text, "empty (write a number and a unit: ns, us, ms or s)");
  if (s.front() == '-') return bad(text, "negative durations are not allowed");
  if (s == "0") return std::int64_t{0};

  // number: digits [ '.' digits ]
  std::size_t i = 0;
  __int128 whole = 0;
  std::size_t wholeDigits = 0;
  std::size_t significant = 0;  // digits after leading zeros; beyond 19 the value is too large
  while (i < s.size() && isDigit(s[i])) {
    if (significant > 0 || s[i] != '0') ++significant;
    if (significant <= 19) whole = whole * 10 + (s[i] - '0');
    ++wholeDigits;
    ++i;
  }
  if (wholeDigits == 0) return bad(text, "expected a number followed by a unit (ns, us, ms, s)");
  std::string_view fraction;
  if (i < s.size() && s[i] == '.') {
    std::size_t start = ++i;
    while (i < s.size() && isDigit(s[i])) ++i;
    fraction = s.substr(start, i - start);
    if (fraction.empty()) return bad(text, "expected digits after the decimal point");
  }
  while (i < s.size() && isBlank(s[i])) ++i;
  std::string_view unit = s.substr(i);
  std::int64_t scale = 0;
  int scaleDigits = 0;
  if (unit == "ns") {
    scale = 1;
    scaleDigits = 0;
  } else if (unit == "us") {
    scale = 1000;
    scaleDigits = 3;
  } else if (unit == "ms") {
    scale = 1000000;
    scaleDigits = 6;
  } else if (unit == "s") {
    scale = 1000000000;
    scaleDigits = 9;
  } else if (unit.empty()) {
    return bad(text, "missing unit (ns, us, ms or s)");
  } else {
    return bad(text, "unknown unit (use ns, us, ms or s)");
  }

  // Trailing zeros of the fraction add nothing; what remains must fit in whole nanoseconds.
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (static_cast<int>(fraction.size()) > scaleDigits) return bad(text, "finer than one nanosecond");
  __int128 total = whole * scale;
  __int128 fracValue = 0;
  for (char c : fraction) fracValue = fracValue * 10 + (c - '0');
  for (int k = static_cast<int>(fraction.size()); k < scaleDigits; ++k) fracValue *= 10;
  total += fracValue;
  if (significant > 19 || total > kMaxDurationNs)
    return bad(text, "too large (at most " + humanDuration(kMaxDurationNs) + ")");
  return static_cast<std::int64_t>(total);
}

}  // namespace tactus::compiler
