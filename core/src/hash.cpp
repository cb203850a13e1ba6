// FNV-1a 64-bit hashing and its hex form.
#include "tactus/core/hash.hpp"

namespace tactus {

std::uint64_t hashBytes(std::uint64_t hash, std::string_view bytes) {
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= kPrime;
  }
  return hash;
}

std::string hashToHex(std::uint64_t hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[hash & 0xF];
    hash >>= 4;
  }
  return out;
}

bool hashFromHex(std::string_view text, std::uint64_t& out) {
  if (text.size() != 16) return false;
  std::uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else return false;
    value = (value << 4) | static_cast<std::uint64_t>(digit);
  }
  out = value;
  return true;
}

}  // namespace tactus
