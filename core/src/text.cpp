// JSON string literals and quoting for messages.
#include "tactus/core/text.hpp"

namespace tactus {
namespace {
constexpr char kHex[] = "0123456789abcdef";
}  // namespace

void jsonString(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string jsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  jsonString(out, s);
  return out;
}

std::string quoted(std::string_view text, std::size_t maxBytes) {
  std::string out = "'";
  std::size_t n = 0;
  for (char c : text) {
    if (++n > maxBytes) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string humanDuration(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t a = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const char* unit = "ns";
  std::uint64_t scale = 1;
  if (a >= 1000000000ULL) {
    unit = "s";
    scale = 1000000000ULL;
  } else if (a >= 1000000ULL) {
    unit = "ms";
    scale = 1000000ULL;
  } else if (a >= 1000ULL) {
    unit = "us";
    scale = 1000ULL;
  }
  std::string text = std::to_string(a / scale);
  std::uint64_t rest = a % scale;
  if (rest != 0) {
    // Up to three decimals, trailing zeros dropped: 120.5ms, 33.33ms.
    std::string frac;
    std::uint64_t div = scale;
    for (int i = 0; i < 3 && rest != 0; ++i) {
      div /= 10;
      if (div == 0) break;
      frac += static_cast<char>('0' + rest / div);
      rest %= div;
    }
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    if (!frac.empty()) text += "." + frac;
  }
  return (negative ? "-" : "") + text + unit;
}

std::size_t firstNulLine(std::string_view text) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < nul; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace tactus
