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

std::size_t firstNulLine(std::string_view text) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < nul; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace tactus
