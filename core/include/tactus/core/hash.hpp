// A stable 64-bit content hash (FNV-1a) for schedule files and their source graphs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tactus {

/// FNV-1a 64-bit offset basis: the hash of no bytes.
inline constexpr std::uint64_t kHashSeed = 14695981039346656037ULL;

/// Continues a hash over more bytes: hashBytes(hashBytes(kHashSeed, a), b) == hash of a+b.
std::uint64_t hashBytes(std::uint64_t hash, std::string_view bytes);

/// The hash as 16 lower-case hex digits.
std::string hashToHex(std::uint64_t hash);

/// Parses 16 hex digits; false when the text is not exactly that.
bool hashFromHex(std::string_view text, std::uint64_t& out);

}  // namespace tactus
