// Writing and reading the schedule file format (see schedule_file.hpp for the layout). Both walk
// the one schema of the records and their fields (schedule_file_schema.hpp).
#include "tactus/core/schedule_file.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <tuple>
#include <utility>

#include "schedule_file_fields.hpp"
#include "schedule_file_schema.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/text.hpp"

namespace tactus {
namespace {

using schedule_file::Fields;
using schedule_file::kRecordKinds;
using schedule_file::kScheduleRecord;
using schedule_file::ParseState;
using schedule_file::Reader;
using schedule_file::Record;
using schedule_file::Writer;

constexpr std::string_view kMagic = "tactus-schedule";

// --- writing -------------------------------------------------------------------------------

// The oldest format version that holds everything the schedule has.
std::uint32_t formatVersion(const Schedule& s) {
  const bool gpu = std::any_of(s.runnables.begin(), s.runnables.end(),
                               [](const RunnableInfo& r) { return r.kind == RunnableKind::kSubmitter; });
  const bool engines = std::any_of(s.resources.begin(), s.resources.end(),
                                   [](const ResourceInfo& r) { return schedule_file::needsEnginesVersion(r.kind); });
  const bool channels = !s.channels.empty() || !s.chains.empty();
  return channels                 ? kScheduleFormatVersionChannels
         : engines                ? kScheduleFormatVersionEngines
         : gpu                    ? kScheduleFormatVersionGpu
         : s.socs.empty()         ? kScheduleFormatVersionOneSoc
         : s.socLatencies.empty() ? kScheduleFormatVersionMultiSoc
                                  : kScheduleFormatVersionSocLatency;
}

// The records of one kind, one per element of its table (none before the version that has them).
template <class Kind>
void writeRecords(Writer& body, std::uint32_t version, const Schedule& s, const Kind& kind) {
  if (version < kind.since) return;
  const auto& table = s.*kind.table;
  for (std::size_t k = 0; k < table.size(); ++k) {
    body.rec(kind.kind);
    if (kind.numbered) body.u("id", k);
    schedule_file::writeFields(body, version, table[k], kind.fields);
  }
}

/// The file's text up to its content_hash line: returned whole, or (with a sink) given to the
/// sink in pieces, so that a large schedule is never held twice (nor once) as text.
std::string writeBody(const Schedule& s, std::function<void(std::string_view)> sink = {}) {
  const std::uint32_t version = formatVersion(s);
  Writer body(std::string(kMagic) + " " + std::to_string(version) + "\n", std::move(sink));
  body.rec(kScheduleRecord.kind);
  schedule_file::writeFields(body, version, s, kScheduleRecord.fields);
  std::apply([&](const auto&... kind) { (writeRecords(body, version, s, kind), ...); }, kRecordKinds);
  return body.take();
}

// --- reading -------------------------------------------------------------------------------

#define TACTUS_CHECK(expr)                    \
  do {                                        \
    auto tactus_r_ = (expr);                  \
    if (!tactus_r_) return tactus_r_.error(); \
  } while (0)

// A record of `kind`, the kind at position `section` of the schema, into its table.
template <class Kind>
Result<void> readRecordOf(const Kind& kind, std::size_t section, Record& rec, Fields& f, ParseState& st) {
  if (st.version < kind.since) {
    if (kind.newIn == nullptr) return st.reader.err("unknown record " + quoted(rec.kind, 40));
    return fail(ErrorCode::kIncompatible, st.reader.origin() + ": '" + std::string(rec.kind) +
                                              "' record in a file of format version " + std::to_string(st.version) +
                                              " (" + kind.newIn + " need version " + std::to_string(kind.since) +
                                              "); recompile the graph");
  }
  TACTUS_CHECK(st.order(rec.kind, section));
  auto& table = st.s.*kind.table;
  if (kind.room.limit != 0) TACTUS_CHECK(st.room(table.size(), kind.room.limit, kind.room.what));
  if (kind.numbered) TACTUS_CHECK(f.id(table.size()));
  typename Kind::Rec value;
  TACTUS_CHECK(schedule_file::readFields(f, st, value, kind.fields));
  TACTUS_CHECK(f.done());
  if (kind.check != nullptr) TACTUS_CHECK(kind.check(value, st));
  table.push_back(std::move(value));
  return {};
}

// One record after the 'schedule' record, by its kind (kRecordKinds from position I on).
template <std::size_t I = 0>
Result<void> readRecord(Record& rec, Fields& f, ParseState& st) {
  if constexpr (I == std::tuple_size_v<decltype(schedule_file::kRecordKinds)>) {
    return st.reader.err("unknown record " + quoted(rec.kind, 40));
  } else {
    const auto& kind = std::get<I>(kRecordKinds);
    if (rec.kind == kind.kind) return readRecordOf(kind, I, rec, f, st);
    return readRecord<I + 1>(rec, f, st);
  }
}

// The first line: the magic and a format version this build reads.
Result<std::uint32_t> readFormatVersion(Reader& reader, const std::string& origin) {
  std::string_view line;
  if (!reader.next(line) || line.substr(0, kMagic.size()) != kMagic)
    return reader.err("not a tactus schedule file (it does not start with '" + std::string(kMagic) + "')");
  std::string_view ver = line.substr(std::min(line.size(), kMagic.size() + 1));
  if (line.size() <= kMagic.size() || line[kMagic.size()] != ' ')
    return reader.err("missing format version after '" + std::string(kMagic) + "'");
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(ver.data(), ver.data() + ver.size(), v);
  if (ec != std::errc() || p != ver.data() + ver.size()) return reader.err("bad format version " + quoted(ver, 20));
  if (v < kScheduleFormatVersionOneSoc || v > kScheduleFormatVersion)
    return fail(ErrorCode::kIncompatible, origin + ": schedule file format version " + std::to_string(v) +
                                              " is not supported (this build reads versions " +
                                              std::to_string(kScheduleFormatVersionOneSoc) + " to " +
                                              std::to_string(kScheduleFormatVersion) + "); recompile the graph");
  return v;
}

// The second line: the 'schedule' record.
Result<void> readScheduleRecord(ParseState& st) {
  std::string_view line;
  Record rec;
  if (!st.reader.next(line) || !schedule_file::splitRecord(line, rec) || rec.kind != kScheduleRecord.kind)
    return st.reader.err("expected the 'schedule' record");
  Fields f(rec, st.reader);
  TACTUS_CHECK(schedule_file::readFields(f, st, st.s, kScheduleRecord.fields));
  TACTUS_CHECK(f.done());
  return {};
}

// The content_hash line (`line`, the reader on it): the hash it states, which must be that of
// the text before it, and nothing after it.
Result<std::uint64_t> readContentHash(std::string_view line, std::string_view text, Reader& reader,
                                      const std::string& origin) {
  std::uint64_t stated = 0;
  if (!hashFromHex(line.substr(13), stated)) return reader.err("content_hash is not 16 hex digits");
  std::uint64_t actual = hashBytes(kHashSeed, text.substr(0, reader.lineStart()));
  if (stated != actual)
    return fail(ErrorCode::kVerification, origin + ": content hash mismatch (file says " + hashToHex(stated) +
                                              ", content is " + hashToHex(actual) +
                                              "): the file was changed or damaged after it was written");
  if (!reader.atEnd()) {
    std::string_view extra;
    reader.next(extra);
    if (!extra.empty() || !reader.atEnd()) return reader.err("text after the content_hash line");
  }
  return stated;
}

// GPU work in a file older than kScheduleFormatVersionGpu: planned the old way, refused.
Result<void> checkGpuFormat(const Schedule& s, std::uint32_t version, const std::string& origin) {
  if (version < kScheduleFormatVersionGpu)
    for (const RunnableInfo& r : s.runnables)
      if (r.kind == RunnableKind::kSubmitter)
        return fail(ErrorCode::kIncompatible,
                    origin + ": schedule file format version " + std::to_string(version) +
                        " plans GPU work the old way (each submittee held its CUDA stream for its whole run; "
                        "this build reads GPU work from version " +
                        std::to_string(kScheduleFormatVersionGpu) + " on); recompile the graph");
  return {};
}

Result<Schedule> parse(std::string_view text, const std::string& origin, std::uint64_t* contentHash) {
  Reader reader(text, origin);
  auto version = readFormatVersion(reader, origin);
  if (!version) return version.error();
  Schedule s;
  ParseState st{reader, s, *version};
  TACTUS_CHECK(readScheduleRecord(st));
  std::string_view line;
  Record rec;
  bool sawHash = false;
  while (reader.next(line)) {
    if (line.substr(0, 13) == "content_hash ") {
      auto stated = readContentHash(line, text, reader, origin);
      if (!stated) return stated.error();
      sawHash = true;
      if (contentHash != nullptr) *contentHash = *stated;
      break;
    }
    if (!schedule_file::splitRecord(line, rec))
      return reader.err("malformed record (fields are key=value separated by one space)");
    Fields f(rec, reader);
    TACTUS_CHECK(readRecord(rec, f, st));
  }
  if (!sawHash) return reader.err("missing content_hash line: the file is truncated");
  TACTUS_CHECK(checkGpuFormat(s, *version, origin));
  return s;
}

#undef TACTUS_CHECK

}  // namespace

namespace {

// The whole file text; `hash` receives its content hash.
std::string writeWithHash(const Schedule& schedule, std::uint64_t& hash) {
  std::string text = writeBody(schedule);
  hash = hashBytes(kHashSeed, text);
  // Appended in place: a copy of the body would hold the file twice at the compiler's peak.
  text.append("content_hash ").append(hashToHex(hash)).append("\n");
  return text;
}

}  // namespace

std::string writeSchedule(const Schedule& schedule) {
  std::uint64_t hash = 0;
  return writeWithHash(schedule, hash);
}

std::uint64_t scheduleContentHash(const Schedule& schedule) { return hashBytes(kHashSeed, writeBody(schedule)); }

Result<Schedule> readSchedule(std::string_view text, const std::string& origin, std::uint64_t* contentHash) {
  try {
    return parse(text, origin, contentHash);
  } catch (const std::bad_alloc&) {
    // Every table the reader fills grows with the file's bytes: a machine short of memory.
    return fail(ErrorCode::kParse,
                origin + ": out of memory reading the schedule (" + std::to_string(text.size()) + " bytes)");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kParse, origin + ": cannot read schedule: " + e.what());
  }
}

Result<Schedule> loadScheduleFile(const std::string& path) {
  auto text = readRegularFile(path, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  return readSchedule(*text, path);
}

Result<std::uint64_t> saveScheduleFile(const Schedule& schedule, const std::string& path) {
  // Streamed: the text of a schedule of 100,000 instances is tens of MB, the compiler's peak.
  std::uint64_t hash = kHashSeed;
  auto written = writeFileAtomically(
      path,
      [&](std::ostream& out) {
        writeBody(schedule, [&](std::string_view piece) {
          hash = hashBytes(hash, piece);
          out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
        });
        out << "content_hash " << hashToHex(hash) << "\n";
        return true;
      },
      "schedule file");
  if (!written) return written.error();
  return hash;
}

}  // namespace tactus
