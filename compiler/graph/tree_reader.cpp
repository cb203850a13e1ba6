// Typed reading of a YTree.
#include "graph/tree_reader.hpp"

#include <algorithm>
#include <vector>

#include "duration.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/suggest.hpp"

namespace tactus::compiler::parse {

void TreeReader::die(ErrorCode code, u32 line, const std::string& what) const {
  throw Failure{fail(code, origin_ + ":" + std::to_string(line) + ": " + what)};
}

const char* TreeReader::kindName(NodeKind k) {
  switch (k) {
    case NodeKind::kNull: return "nothing";
    case NodeKind::kScalar: return "a scalar";
    case NodeKind::kSeq: return "a list";
    case NodeKind::kMap: return "a map";
  }
  return "?";
}
void TreeReader::expect(u32 node, NodeKind want, const std::string& what) const {
  if (kind(node) != want)
    die(ErrorCode::kParse, line(node), what + " must be " + kindName(want) + ", not " + kindName(kind(node)));
}
std::string_view TreeReader::scalar(u32 node, const std::string& what) const {
  expect(node, NodeKind::kScalar, what);
  return t_.text(node);
}

std::pair<u32, u32> TreeReader::singleEntry(u32 item, const std::string& what) const {
  if (kind(item) != NodeKind::kMap || t_.size(item) != 2)
    die(ErrorCode::kParse, line(item), what + " must be written `- Name: ...` (a map with one key)");
  u32 key = t_.kid(item, 0);
  scalar(key, "the name of " + what);
  return {key, t_.kid(item, 1)};
}
void TreeReader::unknownKey(std::string_view key, u32 keyNode, const std::string& where, const KeyTable& table,
                            bool multiSoc) const {
  if (key == "SOC")
    die(ErrorCode::kParse, line(keyNode),
        "key 'SOC' does not belong in " + where +
            " (the multi-SoC form: a SOC list under the graph id, and `SOC: <name>` under each client)");
  // A close one of the allowed keys is likely what was meant (`Dependecies`, `wcet`).
  std::vector<std::string_view> names;
  std::string allowed;
  for (const KeySpec& k : table.keys) {
    if (k.key.starts_with('<') || (k.multiSocOnly && !multiSoc)) continue;
    names.push_back(k.key);
    allowed += (allowed.empty() ? "" : ", ") + std::string(k.key);
  }
  const std::string_view guess = closestName(key, names);
  die(ErrorCode::kParse, line(keyNode),
      "unknown key " + quoted(key) + " in " + where + " (" +
          (guess.empty() ? std::string() : "did you mean " + quoted(guess) + "? ") + "allowed: " + allowed + ")");
}

void TreeReader::notRead(std::string_view key, u32 keyNode, const std::string& where) const {
  die(ErrorCode::kInternal, line(keyNode),
      "key " + quoted(key) + " in " + where + " is in the format's key table (graph/keys.hpp) but not read");
}

void TreeReader::checkName(std::string_view name, u32 node, const char* what, bool dotAllowed) const {
  if (name.empty()) die(ErrorCode::kValidation, line(node), std::string("empty ") + what + " name");
  if (name.size() > limits::kMaxNameBytes)
    die(ErrorCode::kValidation, line(node),
        std::string(what) + " name " + quoted(name) + " is " + std::to_string(name.size()) + " bytes long (at most " +
            std::to_string(limits::kMaxNameBytes) + ")");
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == ',' || c == '=' || c == '#')
      die(ErrorCode::kValidation, line(node),
          std::string(what) + " name " + quoted(name) + " contains white space, a control character, ',', '=' or '#'");
    if (c == '.' && !dotAllowed)
      die(ErrorCode::kValidation, line(node),
          std::string(what) + " name " + quoted(name) + " contains '.', which separates qualified names");
  }
}

std::int64_t TreeReader::duration(u32 node, const std::string& what, bool zeroOk, bool bareZeroOk) const {
  std::string_view text = scalar(node, what);
  if (!bareZeroOk && isBareZero(text))
    die(ErrorCode::kParse, line(node), what + " " + quoted(text) + " needs a unit (ns, us, ms or s)");
  auto d = parseDuration(text);
  if (!d) die(ErrorCode::kParse, line(node), what + ": " + d.error().message);
  if (!zeroOk && *d == 0) die(ErrorCode::kValidation, line(node), what + " must be greater than 0");
  return *d;
}
std::uint64_t TreeReader::integer(u32 node, const std::string& what, std::uint64_t lo, std::uint64_t hi) const {
  std::string_view text = scalar(node, what);
  std::uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char c : text) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    if (v > (UINT64_MAX - 9) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok) {
    bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) die(ErrorCode::kParse, line(node), what + " is " + quoted(text) + ", not a whole number");
    die(ErrorCode::kValidation, line(node),
        what + " is " + quoted(text) + ", out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  if (v < lo || v > hi)
    die(ErrorCode::kValidation, line(node),
        what + " is " + quoted(text) + ", out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

std::vector<Ref> TreeReader::refList(u32 node, const std::string& what) const {
  expect(node, NodeKind::kSeq, what);
  std::vector<Ref> out;
  out.reserve(t_.size(node));
  for (std::size_t i = 0; i < t_.size(node); ++i) {
    u32 item = t_.kid(node, i);
    out.push_back(Ref{scalar(item, "an entry of " + what), line(item)});
  }
  return out;
}

}  // namespace tactus::compiler::parse
