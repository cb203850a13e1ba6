// The machinery of the schedule file's schema (schedule_file_schema.hpp): the text writer and
// line reader, the field encodings (how one value is written and read), and the descriptors of a
// field and of a record kind that the writer and the reader both walk. Internal to core.
//
//   Field{key, member, encoding, since, check}      one `key=value` of a record
//   RecordKind{kind, table, room, numbered, since, fields...}
//        |                                  |
//   writeFields: encoding.write(value)   readFields: encoding.parse(text) -> member, then check
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"

namespace tactus::schedule_file {

// --- text ----------------------------------------------------------------------------------

/// The file's number of an index: an id's or a plain number's.
template <class T>
constexpr std::uint32_t plain(T v) {
  if constexpr (StrongId<T>) return index(v);
  else return v;
}

/// Makes the file's text, record by record, field by field.
class Writer {
 public:
  /// `head`: the text before the first record. `sink`: where the text goes in pieces of about
  /// kPiece bytes as it is made (none: take() returns it whole).
  explicit Writer(std::string head, std::function<void(std::string_view)> sink = {})
      : out_(std::move(head)), sink_(std::move(sink)) {}

  /// Starts a record of `kind` on a line of its own.
  void rec(const char* kind) {
    if (sink_ && out_.size() >= kPiece) {
      sink_(out_);
      out_.clear();
    }
    if (!first_) out_ += '\n';
    first_ = false;
    out_ += kind;
  }
  /// A field of text.
  void f(const char* key, std::string_view v) {
    field(key);
    out_ += v;
  }
  /// A number. Numbers go straight into the text (no std::to_string temporaries: a large
  /// schedule has millions of them).
  void u(const char* key, std::uint64_t v) {
    field(key);
    number(v);
  }
  void i(const char* key, std::int64_t v) {
    field(key);
    number(v);
  }
  /// An index list, `-` for kNone.
  template <class T>
  void list(const char* key, const std::vector<T>& v) {
    field(key);
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k) out_ += ',';
      if (v[k] == kNone) out_ += '-';
      else number(plain(v[k]));
    }
  }
  /// Ends the text: the rest goes to the sink (returning nothing), or the whole text is returned.
  std::string take() {
    out_ += '\n';
    if (sink_) {
      sink_(out_);
      out_.clear();
    }
    return std::move(out_);
  }

 private:
  void field(const char* key) {
    out_ += ' ';
    out_ += key;
    out_ += '=';
  }
  template <typename T>
  void number(T v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    out_.append(digits, end);
  }

  static constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::string out_;
  std::function<void(std::string_view)> sink_;
  bool first_ = true;
};

/// Hands out the text's lines and makes located messages (`origin:line: what`).
class Reader {
 public:
  Reader(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  Error err(const std::string& what) const {
    return fail(ErrorCode::kParse, origin_ + ":" + std::to_string(line_) + ": " + what);
  }
  const std::string& origin() const { return origin_; }

  /// Next line without its newline; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    lineStart_ = pos_;
    pos_ = end + 1;
    ++line_;
    return true;
  }
  std::size_t lineStart() const { return lineStart_; }
  bool atEnd() const { return pos_ >= text_.size(); }

 private:
  std::string_view text_;
  std::string origin_;
  std::size_t pos_ = 0;
  std::size_t lineStart_ = 0;
  std::uint64_t line_ = 0;  // a file of 8 GB may hold more lines than an int counts
};

/// One record: its kind and its fields in order.
struct Record {
  std::string_view kind;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  std::size_t used = 0;
};

/// Splits a line into `rec`; false when a field is not `key=value`.
inline bool splitRecord(std::string_view line, Record& rec) {
  rec.fields.clear();
  rec.used = 0;
  std::size_t sp = line.find(' ');
  rec.kind = line.substr(0, sp);
  while (sp != std::string_view::npos) {
    std::size_t start = sp + 1;
    sp = line.find(' ', start);
    std::string_view tok = line.substr(start, sp == std::string_view::npos ? sp : sp - start);
    std::size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    rec.fields.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
  }
  return true;
}

/// Reads the fields of one record in their fixed order, checking each value's syntax and range.
class Fields {
 public:
  Fields(Record& rec, Reader& reader) : rec_(rec), reader_(reader) {}

  Error err(const std::string& what) const { return reader_.err(what); }

  Result<std::string_view> raw(const char* key) {
    if (rec_.used >= rec_.fields.size())
      return reader_.err(std::string(rec_.kind) + " record lacks field '" + key + "'");
    auto [k, v] = rec_.fields[rec_.used++];
    if (k != key)
      return reader_.err(std::string(rec_.kind) + " record has field " + quoted(k) + " where '" + key + "' belongs");
    return v;
  }
  template <typename T>
  Result<T> number(const char* key, std::string_view v) {
    T out{};
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
      return reader_.err(std::string("field '") + key + "' is not a valid number: " + quoted(v, 40));
    return out;
  }
  /// An index: a number below kNone.
  Result<std::uint32_t> index(const char* key, std::string_view v) {
    auto n = number<std::uint32_t>(key, v);
    if (n && *n == kNone) return reader_.err(std::string("field '") + key + "' is out of range");
    return n;
  }
  // Every signed number of the format is a time in ns: 0..limits::kMaxDurationNs, so sums of
  // them never overflow.
  Result<std::int64_t> time(const char* key, std::string_view v) {
    auto n = number<std::int64_t>(key, v);
    if (n && *n < 0) return reader_.err(std::string("field '") + key + "' is negative");
    if (n && *n > limits::kMaxDurationNs)
      return reader_.err(std::string("field '") + key + "' is " + std::to_string(*n) +
                         " ns, above the longest duration allowed (" + humanDuration(limits::kMaxDurationNs) + ")");
    return n;
  }
  Result<void> done() {
    if (rec_.used != rec_.fields.size())
      return reader_.err(std::string(rec_.kind) + " record has unexpected field " +
                         quoted(rec_.fields[rec_.used].first));
    return {};
  }
  Result<void> id(std::size_t expected) {
    auto v = raw("id");
    if (!v) return v.error();
    auto n = index("id", *v);
    if (!n) return n.error();
    if (*n != expected)
      return reader_.err(std::string(rec_.kind) + " id " + std::to_string(*n) + " out of sequence (expected " +
                         std::to_string(expected) + ")");
    return {};
  }

 private:
  Record& rec_;
  Reader& reader_;
};

/// Where the reader stands in the records: the file's format version, the section reached (the
/// position of a record kind in the schema) and the frames declared so far.
struct ParseState {
  Reader& reader;
  Schedule& s;
  std::uint32_t version = 0;
  std::size_t section = 0;
  std::uint64_t framesTotal = 0;

  Result<void> order(std::string_view kind, std::size_t want) {
    if (want < section) return reader.err("'" + std::string(kind) + "' record out of order");
    section = want;
    return {};
  }
  // Counts are checked as records arrive, so the message names the first record too many.
  Result<void> room(std::size_t have, std::uint32_t limit, const char* what) const {
    if (have >= limit)
      return reader.err("more than " + std::to_string(limit) + " " + what + " (the limit per schedule)");
    return {};
  }
};

// --- encodings: how one value is written and read ---------------------------------------------

inline const char* kindName(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kCpu: return "cpu";
    case ResourceKind::kGpu: return "gpu";
    case ResourceKind::kCudaStream: return "cuda_stream";
    case ResourceKind::kMutex: return "mutex";
    case ResourceKind::kDla: return "dla";
    case ResourceKind::kVpu: return "vpu";
    case ResourceKind::kDlaHandle: return "dla_handle";
    case ResourceKind::kPvaStream: return "pva_stream";
  }
  return "?";
}

inline const char* kindName(RunnableKind kind) {
  switch (kind) {
    case RunnableKind::kCpu: return "cpu";
    case RunnableKind::kSubmitter: return "submitter";
    case RunnableKind::kSubmittee: return "submittee";
    case RunnableKind::kAliasGroup: return "alias_group";
  }
  return "?";
}

/// The kind named `name` (kindName's inverse), of the kinds listed; false when none is.
template <class E, std::size_t N>
bool kindFromName(std::string_view name, const E (&kinds)[N], E& out) {
  for (E k : kinds)
    if (name == kindName(k)) {
      out = k;
      return true;
    }
  return false;
}

inline bool kindFromName(std::string_view name, ResourceKind& out) {
  constexpr ResourceKind kAll[] = {ResourceKind::kCpu,       ResourceKind::kGpu,      ResourceKind::kCudaStream,
                                   ResourceKind::kMutex,     ResourceKind::kDla,      ResourceKind::kVpu,
                                   ResourceKind::kDlaHandle, ResourceKind::kPvaStream};
  return kindFromName(name, kAll, out);
}

inline bool kindFromName(std::string_view name, RunnableKind& out) {
  constexpr RunnableKind kAll[] = {RunnableKind::kCpu, RunnableKind::kSubmitter, RunnableKind::kSubmittee,
                                   RunnableKind::kAliasGroup};
  return kindFromName(name, kAll, out);
}

// Each encoding writes a value (`write(writer, key, value)`) and parses the text of a field whose
// key has been checked (`parse(fields, key, text, out)`).

/// A name: as is; read non-empty, at most kMaxNameBytes, without blanks, `,`, `=` or `#`.
struct NameEncoding {
  void write(Writer& w, const char* key, const std::string& v) const { w.f(key, v); }
  Result<void> parse(Fields& f, const char* key, std::string_view text, std::string& out) const {
    if (text.empty()) return f.err(std::string("empty ") + key);
    if (text.size() > limits::kMaxNameBytes)
      return f.err(std::string("field '") + key + "' is " + std::to_string(text.size()) +
                   " bytes long, above the limit of " + std::to_string(limits::kMaxNameBytes));
    for (unsigned char c : text)
      if (c < 0x21 || c == 0x7f || c == ',' || c == '=' || c == '#')
        return f.err(std::string("field '") + key + "' holds a character names may not have");
    out.assign(text);
    return {};
  }
};

/// An index (a plain number or an id; a narrower number checked against its range).
struct IndexEncoding {
  template <class T>
  void write(Writer& w, const char* key, T v) const {
    w.u(key, plain(v));
  }
  template <class T>
  Result<void> parse(Fields& f, const char* key, std::string_view text, T& out) const {
    auto n = f.index(key, text);
    if (!n) return n.error();
    if constexpr (sizeof(T) < sizeof(std::uint32_t)) {
      constexpr std::uint32_t kMax = std::numeric_limits<T>::max();
      if (*n > kMax) return f.err(std::string(key) + " " + std::to_string(*n) + " is above " + std::to_string(kMax));
    }
    out = static_cast<T>(*n);
    return {};
  }
};

/// A time in ns, 0..limits::kMaxDurationNs.
struct TimeEncoding {
  void write(Writer& w, const char* key, std::int64_t v) const { w.i(key, v); }
  Result<void> parse(Fields& f, const char* key, std::string_view text, std::int64_t& out) const {
    auto n = f.time(key, text);
    if (!n) return n.error();
    out = *n;
    return {};
  }
};

/// `inner`'s value, or `-` for the absent value `absent` (kNone, kNoDuration).
template <class Inner, class Absent>
struct OrAbsentEncoding {
  Inner inner;
  Absent absent;

  template <class T>
  void write(Writer& w, const char* key, const T& v) const {
    if (v == absent) w.f(key, "-");
    else inner.write(w, key, v);
  }
  template <class T>
  Result<void> parse(Fields& f, const char* key, std::string_view text, T& out) const {
    if (text != "-") return inner.parse(f, key, text, out);
    out = absent;
    return {};
  }
};

/// A comma-separated list of at most `maxItems` indices; `-` items (kNone) when `allowNone`.
struct ListEncoding {
  std::uint32_t maxItems;
  bool allowNone = false;

  template <class T>
  void write(Writer& w, const char* key, const std::vector<T>& v) const {
    w.list(key, v);
  }
  template <class T>
  Result<void> parse(Fields& f, const char* key, std::string_view text, std::vector<T>& out) const {
    out.clear();
    std::string_view rest = text;
    while (!rest.empty()) {
      if (out.size() == maxItems)
        return f.err(std::string("field '") + key + "' lists more than " + std::to_string(maxItems) + " items");
      std::size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      if (allowNone && item == "-") {
        out.push_back(kNone);
      } else {
        auto n = f.index(key, item);
        if (!n) return n.error();
        out.push_back(T{*n});
      }
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
      if (rest.empty()) return f.err(std::string("field '") + key + "' ends with ','");
    }
    return {};
  }
};

/// A 64-bit count (bytes).
struct CountEncoding {
  void write(Writer& w, const char* key, std::uint64_t v) const { w.u(key, v); }
  Result<void> parse(Fields& f, const char* key, std::string_view text, std::uint64_t& out) const {
    auto n = f.number<std::uint64_t>(key, text);
    if (!n) return n.error();
    out = *n;
    return {};
  }
};

/// A flag: 0 or 1.
struct FlagEncoding {
  void write(Writer& w, const char* key, bool v) const { w.u(key, v ? 1 : 0); }
  Result<void> parse(Fields& f, const char* key, std::string_view text, bool& out) const {
    auto n = f.index(key, text);
    if (!n) return n.error();
    if (*n > 1) return f.err(std::string("field '") + key + "' is " + std::to_string(*n) + " (0 or 1)");
    out = *n == 1;
    return {};
  }
};

/// A hash: 16 hex digits.
struct HashEncoding {
  void write(Writer& w, const char* key, std::uint64_t v) const { w.f(key, hashToHex(v)); }
  Result<void> parse(Fields& f, const char* key, std::string_view text, std::uint64_t& out) const {
    if (!hashFromHex(text, out)) return f.err(std::string(key) + " is not 16 hex digits");
    return {};
  }
};

/// The name of a kind: an enum value `E` by kindName and kindFromName; `what` names the enum in
/// messages (`unknown resource kind 'x'`).
template <class E>
struct KindEncoding {
  const char* what;

  void write(Writer& w, const char* key, E v) const { w.f(key, kindName(v)); }
  Result<void> parse(Fields& f, const char* /*key*/, std::string_view text, E& out) const {
    if (!kindFromName(text, out)) return f.err(std::string("unknown ") + what + " " + quoted(text, 40));
    return {};
  }
};

// --- fields and records ----------------------------------------------------------------------

/// A copy of `self` with one member set: the descriptors' builders (`.from(2)`, ...).
template <class D, class M, class V>
constexpr D withMember(const D& self, M D::*member, V value) {
  D out = self;
  out.*member = value;
  return out;
}

/// A check of a record read so far (nullptr: none).
template <class Rec>
using Check = Result<void> (*)(const Rec&, ParseState&);

/// One `key=value` field of a record of type Rec: its key, the member it holds, how it is
/// written and read, the first format version that has it, and a check of the record read so
/// far, run as soon as the field is read (nullptr: none beyond the encoding's).
template <class Rec, class T, class Enc>
struct Field {
  const char* key;
  T Rec::*member;
  Enc encoding;
  std::uint32_t since = kScheduleFormatVersionOneSoc;
  Check<Rec> check = nullptr;

  /// The field from format version `version` on (absent, neither written nor read, before).
  constexpr Field from(std::uint32_t version) const { return withMember(*this, &Field::since, version); }
  /// The field with a check of its value (and of the fields before it).
  constexpr Field checkedBy(Check<Rec> fn) const { return withMember(*this, &Field::check, fn); }
};

template <class Rec, class T, class Enc>
constexpr Field<Rec, T, Enc> field(const char* key, T Rec::*member, Enc encoding) {
  return {key, member, encoding};
}

/// The most records of a kind one schedule holds, and their name in the message (limit 0: no
/// limit of its own).
struct Room {
  std::uint32_t limit = 0;
  const char* what = "";
};

/// A kind of record: its keyword, the Schedule table its records fill (one record per element,
/// in order), the room that table has, whether records start with `id=` (their position), the
/// first format version that has it, what that version brought (for the refusal of an older file
/// that holds it; nullptr: the older reader knew no such record), a check of the whole record
/// (nullptr: none), and its fields in order.
template <class Table, class... F>
struct RecordKind {
  using Rec = typename Table::value_type;

  const char* kind;
  Table Schedule::*table;
  Room room;
  std::tuple<F...> fields;
  bool numbered = false;
  std::uint32_t since = kScheduleFormatVersionOneSoc;
  const char* newIn = nullptr;
  Check<Rec> check = nullptr;

  /// Records that start with `id=N`, N counting up from 0.
  constexpr RecordKind withIds() const { return withMember(*this, &RecordKind::numbered, true); }
  /// Records of format version `version` on; `brought` names what they hold when an older file
  /// holding one is to be refused by its version (nullptr: an unknown record there).
  constexpr RecordKind from(std::uint32_t version, const char* brought = nullptr) const {
    return withMember(withMember(*this, &RecordKind::since, version), &RecordKind::newIn, brought);
  }
  /// Records with a check of the whole record, run after its last field.
  constexpr RecordKind checkedBy(Check<Rec> fn) const { return withMember(*this, &RecordKind::check, fn); }
};

template <class Table, class... F>
constexpr RecordKind<Table, F...> records(const char* kind, Table Schedule::*table, Room room,
                                          const std::tuple<F...>& fields) {
  return {kind, table, room, fields};
}

/// The one record that is no table's element (the `schedule` record, fields of Schedule itself).
template <class... F>
struct SingleRecord {
  const char* kind;
  std::tuple<F...> fields;
};

template <class... F>
constexpr SingleRecord<F...> single(const char* kind, F... fields) {
  return {kind, std::tuple<F...>{fields...}};
}

// --- walking the fields ----------------------------------------------------------------------

/// Writes the fields of `rec` that format version `version` has.
template <class Rec, class... F>
void writeFields(Writer& w, std::uint32_t version, const Rec& rec, const std::tuple<F...>& fields) {
  std::apply(
      [&](const F&... each) {
        ((version >= each.since ? each.encoding.write(w, each.key, rec.*each.member) : void()), ...);
      },
      fields);
}

/// Reads one field into `rec` (nothing when the file's version lacks it), then its check; false
/// with the error in `out` when either fails. (Errors only are assigned: a Result per field
/// would cost a string assignment per field of a file of millions.)
template <class Rec, class T, class Enc>
bool readField(Fields& f, ParseState& st, Rec& rec, const Field<Rec, T, Enc>& field, Result<void>& out) {
  if (st.version < field.since) return true;
  auto text = f.raw(field.key);
  if (!text) {
    out = text.error();
    return false;
  }
  auto parsed = field.encoding.parse(f, field.key, *text, rec.*field.member);
  if (parsed && field.check != nullptr) parsed = field.check(rec, st);
  if (parsed) return true;
  out = std::move(parsed);
  return false;
}

/// Reads the fields into `rec` in order, stopping at the first error.
template <class Rec, class... F>
Result<void> readFields(Fields& f, ParseState& st, Rec& rec, const std::tuple<F...>& fields) {
  Result<void> out;
  std::apply([&](const F&... each) { static_cast<void>((readField(f, st, rec, each, out) && ...)); }, fields);
  return out;
}

}  // namespace tactus::schedule_file
