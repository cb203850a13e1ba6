// Typed reading of a YTree: scalars, maps without duplicate keys, `- Name: value` items,
// names, durations and whole numbers, each refused with `origin:line: ...` (thrown as Failure).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/keys.hpp"
#include "graph/yaml_tree.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {

/// A reference `Client.Name` as written, with its line.
struct Ref {
  std::string_view text;
  u32 line = 0;
};

/// Reads typed values out of a tree; every refusal throws Failure with `origin:line: what`.
class TreeReader {
 public:
  TreeReader(const YTree& tree, const std::string& origin) : t_(tree), origin_(origin) {}

  /// Throws Failure(code, `origin:line: what`).
  [[noreturn]] void die(ErrorCode code, u32 line, const std::string& what) const;
  /// The line of a node.
  u32 line(u32 node) const { return t_.nodes[node].line; }
  /// The kind of a node.
  NodeKind kind(u32 node) const { return t_.nodes[node].kind; }
  /// `a scalar`, `a list`, ... for messages.
  static const char* kindName(NodeKind k);
  /// Refuses a node of another kind (kParse).
  void expect(u32 node, NodeKind want, const std::string& what) const;
  /// The text of a scalar node (kParse when it is not one).
  std::string_view scalar(u32 node, const std::string& what) const;

  /// Visits the entries of a map, refusing non-scalar and duplicate keys.
  template <typename F>
  void forEachEntry(u32 map, const std::string& what, F&& f) const {
    expect(map, NodeKind::kMap, what);
    std::size_t count = t_.size(map) / 2;
    std::unordered_set<std::string_view> seen;
    if (count > 16) seen.reserve(count * 2);
    for (std::size_t i = 0; i < count; ++i) {
      u32 key = t_.kid(map, 2 * i);
      u32 value = t_.kid(map, 2 * i + 1);
      std::string_view name = scalar(key, "a key in " + what);
      bool dup = false;
      if (count > 16) {
        dup = !seen.insert(name).second;
      } else {
        for (std::size_t j = 0; j < i; ++j)
          if (t_.text(t_.kid(map, 2 * j)) == name) dup = true;
      }
      if (dup) die(ErrorCode::kParse, line(key), "duplicate key " + quoted(name) + " in " + what);
      f(name, key, value);
    }
  }

  /// A list item of the form `- Name: value`; returns the key and value nodes.
  std::pair<u32, u32> singleEntry(u32 item, const std::string& what) const;
  /// Visits the entries of a map whose keys `table` lists; refuses any other key with unknownKey
  /// (`multiSoc`: as there). `f` reads every key of the table and calls notRead for none.
  template <typename F>
  void forEachKey(u32 map, const std::string& where, const KeyTable& table, F&& f, bool multiSoc = true) const {
    forEachEntry(map, where, [&](std::string_view name, u32 key, u32 value) {
      if (!table.has(name)) unknownKey(name, key, where, table, multiSoc);
      f(name, key, value);
    });
  }
  /// Refuses an unknown key, naming the closest allowed one and those allowed (the table's keys;
  /// those only of multi-SoC graphs when `multiSoc`).
  [[noreturn]] void unknownKey(std::string_view key, u32 keyNode, const std::string& where, const KeyTable& table,
                               bool multiSoc = true) const;
  /// A key of the table that the reader does not read: a reader out of step with keys.hpp (kInternal).
  [[noreturn]] void notRead(std::string_view key, u32 keyNode, const std::string& where) const;
  /// Names appear in the schedule file, which separates fields with blanks, `,`, `=` and `#`:
  /// refuses those, control characters, '.' unless allowed, and names longer than
  /// limits::kMaxNameBytes (kValidation).
  void checkName(std::string_view name, u32 node, const char* what, bool dotAllowed) const;
  /// A duration (`10ms`); `zeroOk`: 0 allowed; `bareZeroOk`: `0` without unit allowed. At most
  /// limits::kMaxDurationNs.
  std::int64_t duration(u32 node, const std::string& what, bool zeroOk, bool bareZeroOk) const;
  /// A whole number in [lo, hi].
  std::uint64_t integer(u32 node, const std::string& what, std::uint64_t lo, std::uint64_t hi) const;
  /// A list of scalar references.
  std::vector<Ref> refList(u32 node, const std::string& what) const;

 protected:
  const YTree& t_;
  const std::string& origin_;
};

}  // namespace tactus::compiler::parse
