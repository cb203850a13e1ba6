// Edits of schedule file text for the core tests: a deliberate change, then the content hash
// rewritten so that the edit reaches the checks behind the hash.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "tactus/core/hash.hpp"

namespace tactus::test {

/// Rewrites the content hash of schedule file text to match its (edited) body.
inline std::string rehash(const std::string& text) {
  const auto pos = text.rfind("content_hash ");
  const std::string body = text.substr(0, pos);
  return body + "content_hash " + hashToHex(hashBytes(kHashSeed, body)) + "\n";
}

/// `text` with the first `from` replaced by `to`; the test fails when `from` is absent.
inline std::string replaceOnce(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

}  // namespace tactus::test
