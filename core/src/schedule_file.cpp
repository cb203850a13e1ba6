// Writing and reading the schedule file format (see schedule_file.hpp for the layout).
// (Above 600 lines: the writer and the reader of one format side by side, so a field added to one
// is seen beside the other.)
#include "tactus/core/schedule_file.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <utility>

#include "tactus/core/file_io.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus {
namespace {

constexpr std::string_view kMagic = "tactus-schedule";

const char* kindName(ResourceKind kind) {
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

const char* kindName(RunnableKind kind) {
  switch (kind) {
    case RunnableKind::kCpu: return "cpu";
    case RunnableKind::kSubmitter: return "submitter";
    case RunnableKind::kSubmittee: return "submittee";
    case RunnableKind::kAliasGroup: return "alias_group";
  }
  return "?";
}

// --- writing -------------------------------------------------------------------------------

class Writer {
 public:
  /// `head`: the text before the first record. `sink`: where the text goes in pieces of about
  /// kPiece bytes as it is made (none: take() returns it whole).
  explicit Writer(std::string head, std::function<void(std::string_view)> sink = {})
      : out_(std::move(head)), sink_(std::move(sink)) {}

  Writer& rec(const char* kind) {
    if (sink_ && out_.size() >= kPiece) {
      sink_(out_);
      out_.clear();
    }
    if (!first_) out_ += '\n';
    first_ = false;
    out_ += kind;
    return *this;
  }
  Writer& f(const char* key, std::string_view v) {
    out_ += ' ';
    out_ += key;
    out_ += '=';
    out_ += v;
    return *this;
  }
  // Numbers go straight into the text (no std::to_string temporaries: a large schedule has
  // millions of them).
  Writer& u(const char* key, std::uint64_t v) {
    field(key);
    number(v);
    return *this;
  }
  Writer& i(const char* key, std::int64_t v) {
    field(key);
    number(v);
    return *this;
  }
  template <StrongId Id>
  Writer& u(const char* key, Id v) {
    return u(key, index(v));
  }
  Writer& opt(const char* key, std::uint32_t v) { return v == kNone ? f(key, "-") : u(key, v); }
  template <StrongId Id>
  Writer& opt(const char* key, Id v) {
    return opt(key, index(v));
  }
  Writer& dur(const char* key, std::int64_t v) { return v == kNoDuration ? f(key, "-") : i(key, v); }
  Writer& list(const char* key, const std::vector<std::uint32_t>& v) {
    field(key);
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k) out_ += ',';
      if (v[k] == kNone) out_ += '-';
      else number(v[k]);
    }
    return *this;
  }
  template <StrongId Id>
  Writer& list(const char* key, const std::vector<Id>& v) {
    field(key);
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k) out_ += ',';
      const std::uint32_t n = index(v[k]);
      if (n == kNone) out_ += '-';
      else number(n);
    }
    return *this;
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

// The oldest format version that holds everything the schedule has.
std::uint32_t formatVersion(const Schedule& s) {
  const bool gpu = std::any_of(s.runnables.begin(), s.runnables.end(),
                               [](const RunnableInfo& r) { return r.kind == RunnableKind::kSubmitter; });
  // DLA and VPU engines and their queues: kinds a version-4 reader does not know.
  const bool engines = std::any_of(s.resources.begin(), s.resources.end(), [](const ResourceInfo& r) {
    return (isEngine(r.kind) || isEngineQueue(r.kind)) && r.kind != ResourceKind::kGpu &&
           r.kind != ResourceKind::kCudaStream;
  });
  const bool channels = !s.channels.empty() || !s.chains.empty();
  return channels                 ? kScheduleFormatVersionChannels
         : engines                ? kScheduleFormatVersionEngines
         : gpu                    ? kScheduleFormatVersionGpu
         : s.socs.empty()         ? kScheduleFormatVersionOneSoc
         : s.socLatencies.empty() ? kScheduleFormatVersionMultiSoc
                                  : kScheduleFormatVersionSocLatency;
}

// The machine the schedule runs on: SoCs (`multi`: the fields of version 2), clients and
// resources.
void writeMachine(const Schedule& s, bool multi, Writer& body) {
  if (multi) {
    for (std::size_t k = 0; k < s.socs.size(); ++k) body.rec("soc").u("id", k).f("name", s.socs[k].name);
    for (const SocLatency& l : s.socLatencies)
      body.rec("soc_latency").u("from", l.from).u("to", l.to).i("latency_ns", l.latencyNs);
  }
  for (std::size_t k = 0; k < s.clients.size(); ++k) {
    body.rec("client").u("id", k).f("name", s.clients[k].name);
    if (multi) body.opt("soc", s.clients[k].soc);
  }
  for (std::size_t k = 0; k < s.resources.size(); ++k) {
    const ResourceInfo& r = s.resources[k];
    body.rec("resource")
        .u("id", k)
        .f("name", r.name)
        .f("type", r.type)
        .f("kind", kindName(r.kind))
        .opt("client", r.client)
        .opt("hyperepoch", r.hyperepoch)
        .opt("core", r.core)
        .opt("device", r.device)
        .opt("stream_limit", r.streamLimit);
    if (multi) body.opt("soc", r.soc);
  }
}

// Hyperepochs, epochs and runnables.
void writeWork(const Schedule& s, Writer& body) {
  for (std::size_t k = 0; k < s.hyperepochs.size(); ++k) {
    const HyperepochInfo& h = s.hyperepochs[k];
    body.rec("hyperepoch")
        .u("id", k)
        .f("name", h.name)
        .i("period_ns", h.periodNs)
        .dur("monitor_ns", h.monitorNs)
        .list("resources", h.resources)
        .list("epochs", h.epochs);
  }
  for (std::size_t k = 0; k < s.epochs.size(); ++k) {
    const EpochInfo& e = s.epochs[k];
    body.rec("epoch")
        .u("id", k)
        .f("name", e.name)
        .u("hyperepoch", e.hyperepoch)
        .i("period_ns", e.periodNs)
        .u("frames", e.frames);
  }
  for (std::size_t k = 0; k < s.runnables.size(); ++k) {
    const RunnableInfo& r = s.runnables[k];
    body.rec("runnable")
        .u("id", k)
        .f("name", r.name)
        .u("client", r.client)
        .u("epoch", r.epoch)
        .f("kind", kindName(r.kind))
        .i("wcet_ns", r.wcetNs)
        .i("start_ns", r.startTimeNs)
        .dur("deadline_ns", r.deadlineNs)
        .dur("end_monitor_ns", r.endMonitorThresholdNs)
        .u("priority", r.priority)
        .list("deps", r.dependencies)
        .opt("submits", r.submits)
        .opt("submitted_by", r.submittedBy)
        .opt("alias_group", r.aliasGroup)
        .list("steps", r.steps);
  }
}

// The plan: instances and timelines.
void writePlan(const Schedule& s, Writer& body) {
  for (std::size_t k = 0; k < s.instances.size(); ++k) {
    const InstanceInfo& in = s.instances[k];
    body.rec("instance")
        .u("id", k)
        .u("runnable", in.runnable)
        .u("frame", in.frame)
        .i("start_ns", in.startNs)
        .i("end_ns", in.endNs)
        .list("resources", in.resources)
        .list("deps", in.dependencies);
  }
  for (const TimelineInfo& t : s.timelines)
    body.rec("timeline").u("resource", t.resource).list("instances", t.instances);
}

// The records of version 6: channels, their writer and reader runs, chains (tactus extension).
void writeChannels(const Schedule& s, Writer& body) {
  for (std::size_t k = 0; k < s.channels.size(); ++k) {
    const ChannelInfo& c = s.channels[k];
    body.rec("channel")
        .u("id", k)
        .f("name", c.name)
        .u("size", c.sizeBytes)
        .u("writer", c.writer)
        .list("readers", c.readers)
        .u("writes", c.writes)
        .u("depth", c.depth);
  }
  for (const ChannelWrite& w : s.channelWrites)
    body.rec("channel_write")
        .u("channel", w.channel)
        .u("instance", w.instance)
        .u("slot", w.slot)
        .list("waits", w.waits);
  for (const ChannelRead& r : s.channelReads)
    body.rec("channel_read")
        .u("channel", r.channel)
        .u("instance", r.instance)
        .u("writer", r.writer)
        .u("previous", r.previousIteration ? 1 : 0)
        .u("slot", r.slot);
  for (std::size_t k = 0; k < s.chains.size(); ++k) {
    const ChainInfo& c = s.chains[k];
    body.rec("chain")
        .u("id", k)
        .f("name", c.name)
        .list("runnables", c.runnables)
        .dur("max_reaction_ns", c.maxReactionNs)
        .dur("max_age_ns", c.maxAgeNs)
        .i("hop_allowance_ns", c.hopAllowanceNs)
        .i("reaction_ns", c.reactionNs)
        .i("age_ns", c.ageNs);
  }
}

/// The file's text up to its content_hash line: returned whole, or (with a sink) given to the
/// sink in pieces, so that a large schedule is never held twice (nor once) as text.
std::string writeBody(const Schedule& s, std::function<void(std::string_view)> sink = {}) {
  const std::uint32_t version = formatVersion(s);
  const bool multi = version >= kScheduleFormatVersionMultiSoc;  // the fields of version 2
  Writer body(std::string(kMagic) + " " + std::to_string(version) + "\n", std::move(sink));
  body.rec("schedule").f("name", s.name).u("identifier", s.identifier).f("source_hash", hashToHex(s.sourceHash));
  if (multi) body.i("cross_soc_latency_ns", s.crossSocLatencyNs);
  writeMachine(s, multi, body);
  writeWork(s, body);
  writePlan(s, body);
  if (!s.channels.empty() || !s.chains.empty()) writeChannels(s, body);
  return body.take();
}

// --- reading -------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  Error err(const std::string& what) const {
    return fail(ErrorCode::kParse, origin_ + ":" + std::to_string(line_) + ": " + what);
  }

  // Next line without its newline; false at the end of the text.
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

// One record: its kind and its fields in order.
struct Record {
  std::string_view kind;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  std::size_t used = 0;
};

bool splitRecord(std::string_view line, Record& rec) {
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

// Reads the fields of one record in their fixed order.
class Fields {
 public:
  Fields(Record& rec, Reader& reader) : rec_(rec), reader_(reader) {}

  Result<std::string_view> raw(const char* key) {
    if (rec_.used >= rec_.fields.size())
      return reader_.err(std::string(rec_.kind) + " record lacks field '" + key + "'");
    auto [k, v] = rec_.fields[rec_.used++];
    if (k != key)
      return reader_.err(std::string(rec_.kind) + " record has field " + quoted(k) + " where '" + key + "' belongs");
    return v;
  }
  Result<std::string> name(const char* key) {
    auto v = raw(key);
    if (!v) return v.error();
    if (v->empty()) return reader_.err(std::string("empty ") + key);
    if (v->size() > limits::kMaxNameBytes)
      return reader_.err(std::string("field '") + key + "' is " + std::to_string(v->size()) +
                         " bytes long, above the limit of " + std::to_string(limits::kMaxNameBytes));
    for (unsigned char c : *v)
      if (c < 0x21 || c == 0x7f || c == ',' || c == '=' || c == '#')
        return reader_.err(std::string("field '") + key + "' holds a character names may not have");
    return std::string(*v);
  }
  template <typename T>
  Result<T> number(const char* key, std::string_view v) {
    T out{};
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
      return reader_.err(std::string("field '") + key + "' is not a valid number: " + quoted(v, 40));
    return out;
  }
  Result<std::uint32_t> u32(const char* key) {
    auto v = raw(key);
    if (!v) return v.error();
    auto n = number<std::uint32_t>(key, *v);
    if (n && *n == kNone) return reader_.err(std::string("field '") + key + "' is out of range");
    return n;
  }
  Result<std::uint32_t> opt(const char* key) {
    auto v = raw(key);
    if (!v) return v.error();
    if (*v == "-") return std::uint32_t{kNone};
    auto n = number<std::uint32_t>(key, *v);
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
  Result<std::int64_t> i64(const char* key) {
    auto v = raw(key);
    if (!v) return v.error();
    return time(key, *v);
  }
  Result<std::int64_t> dur(const char* key) {
    auto v = raw(key);
    if (!v) return v.error();
    if (*v == "-") return kNoDuration;
    return time(key, *v);
  }
  // A comma-separated index list of at most `maxItems` items.
  Result<std::vector<std::uint32_t>> list(const char* key, std::uint32_t maxItems, bool allowNone = false) {
    auto v = raw(key);
    if (!v) return v.error();
    std::vector<std::uint32_t> out;
    std::string_view rest = *v;
    while (!rest.empty()) {
      if (out.size() == maxItems)
        return reader_.err(std::string("field '") + key + "' lists more than " + std::to_string(maxItems) + " items");
      std::size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      if (allowNone && item == "-") {
        out.push_back(kNone);
      } else {
        auto n = number<std::uint32_t>(key, item);
        if (!n) return n.error();
        if (*n == kNone) return reader_.err(std::string("field '") + key + "' is out of range");
        out.push_back(*n);
      }
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
      if (rest.empty()) return reader_.err(std::string("field '") + key + "' ends with ','");
    }
    return out;
  }
  Result<void> done() {
    if (rec_.used != rec_.fields.size())
      return reader_.err(std::string(rec_.kind) + " record has unexpected field " +
                         quoted(rec_.fields[rec_.used].first));
    return {};
  }
  Result<void> id(std::size_t expected) {
    auto n = u32("id");
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

template <typename E>
bool kindFromName(std::string_view name, E& out);

template <>
bool kindFromName(std::string_view name, ResourceKind& out) {
  for (ResourceKind k : {ResourceKind::kCpu, ResourceKind::kGpu, ResourceKind::kCudaStream, ResourceKind::kMutex,
                         ResourceKind::kDla, ResourceKind::kVpu, ResourceKind::kDlaHandle, ResourceKind::kPvaStream})
    if (name == kindName(k)) {
      out = k;
      return true;
    }
  return false;
}

template <>
bool kindFromName(std::string_view name, RunnableKind& out) {
  for (RunnableKind k :
       {RunnableKind::kCpu, RunnableKind::kSubmitter, RunnableKind::kSubmittee, RunnableKind::kAliasGroup})
    if (name == kindName(k)) {
      out = k;
      return true;
    }
  return false;
}

// A field read from the file into its destination: as is, or a number into a strong id (the
// file stores ids as plain numbers).
template <class T>
void assignField(T& dst, T&& value) {
  dst = std::forward<T>(value);
}
template <StrongId Id>
void assignField(Id& dst, std::uint32_t&& value) {
  dst = Id{value};
}
template <StrongId Id>
void assignField(std::vector<Id>& dst, std::vector<std::uint32_t>&& values) {
  dst.clear();
  dst.reserve(values.size());
  for (std::uint32_t v : values) dst.push_back(Id{v});
}

// Shorthand for reading one field into a destination, returning the error on failure.
#define TACTUS_READ(dst, expr)                 \
  do {                                         \
    auto tactus_r_ = (expr);                   \
    if (!tactus_r_) return tactus_r_.error();  \
    assignField((dst), std::move(*tactus_r_)); \
  } while (0)
#define TACTUS_CHECK(expr)                    \
  do {                                        \
    auto tactus_r_ = (expr);                  \
    if (!tactus_r_) return tactus_r_.error(); \
  } while (0)

// Record kinds in the order they must appear.
enum class Section {
  kSoc,
  kSocLatency,
  kClient,
  kResource,
  kHyperepoch,
  kEpoch,
  kRunnable,
  kInstance,
  kTimeline,
  kChannel,
  kChannelWrite,
  kChannelRead,
  kChain
};

// The records of version 6: channels, their writer and reader runs, chains (tactus extension).
// Index ranges and consistency with the plan are the verifier's (channelErrors).
template <typename Order>
Result<void> readChannelRecord(Record& rec, Fields& f, Reader& reader, Schedule& s, Order& order) {
  auto room = [&](std::size_t have, std::uint32_t limit, const char* what) -> Result<void> {
    if (have >= limit)
      return reader.err("more than " + std::to_string(limit) + " " + what + " (the limit per schedule)");
    return {};
  };
  if (rec.kind == "channel") {
    TACTUS_CHECK(order(Section::kChannel));
    TACTUS_CHECK(room(s.channels.size(), limits::kMaxChannels, "channels"));
    TACTUS_CHECK(f.id(s.channels.size()));
    ChannelInfo c;
    TACTUS_READ(c.name, f.name("name"));
    auto size = f.raw("size");
    if (!size) return size.error();
    auto bytes = f.number<std::uint64_t>("size", *size);
    if (!bytes) return bytes.error();
    if (*bytes == 0 || *bytes > limits::kMaxChannelBytes)
      return reader.err("channel " + quoted(c.name) + " has size " + std::to_string(*bytes) + ", outside 1.." +
                        std::to_string(limits::kMaxChannelBytes) + " bytes");
    c.sizeBytes = *bytes;
    TACTUS_READ(c.writer, f.u32("writer"));
    TACTUS_READ(c.readers, f.list("readers", limits::kMaxRunnables));
    TACTUS_READ(c.writes, f.u32("writes"));
    TACTUS_READ(c.depth, f.u32("depth"));
    TACTUS_CHECK(f.done());
    s.channels.push_back(std::move(c));
  } else if (rec.kind == "channel_write") {
    TACTUS_CHECK(order(Section::kChannelWrite));
    TACTUS_CHECK(room(s.channelWrites.size(), limits::kMaxInstancesTotal, "channel writer runs"));
    ChannelWrite w;
    TACTUS_READ(w.channel, f.u32("channel"));
    TACTUS_READ(w.instance, f.u32("instance"));
    TACTUS_READ(w.slot, f.u32("slot"));
    TACTUS_READ(w.waits, f.list("waits", limits::kMaxInstancesTotal));
    TACTUS_CHECK(f.done());
    s.channelWrites.push_back(std::move(w));
  } else if (rec.kind == "channel_read") {
    TACTUS_CHECK(order(Section::kChannelRead));
    TACTUS_CHECK(room(s.channelReads.size(), limits::kMaxInstancesTotal, "channel reader runs"));
    ChannelRead r;
    TACTUS_READ(r.channel, f.u32("channel"));
    TACTUS_READ(r.instance, f.u32("instance"));
    TACTUS_READ(r.writer, f.u32("writer"));
    std::uint32_t previous = 0;
    TACTUS_READ(previous, f.u32("previous"));
    if (previous > 1) return reader.err("field 'previous' is " + std::to_string(previous) + " (0 or 1)");
    r.previousIteration = previous == 1;
    TACTUS_READ(r.slot, f.u32("slot"));
    TACTUS_CHECK(f.done());
    s.channelReads.push_back(r);
  } else {
    TACTUS_CHECK(order(Section::kChain));
    TACTUS_CHECK(room(s.chains.size(), limits::kMaxChains, "chains"));
    TACTUS_CHECK(f.id(s.chains.size()));
    ChainInfo c;
    TACTUS_READ(c.name, f.name("name"));
    TACTUS_READ(c.runnables, f.list("runnables", limits::kMaxRunnables));
    TACTUS_READ(c.maxReactionNs, f.dur("max_reaction_ns"));
    TACTUS_READ(c.maxAgeNs, f.dur("max_age_ns"));
    TACTUS_READ(c.hopAllowanceNs, f.i64("hop_allowance_ns"));
    TACTUS_READ(c.reactionNs, f.i64("reaction_ns"));
    TACTUS_READ(c.ageNs, f.i64("age_ns"));
    TACTUS_CHECK(f.done());
    s.chains.push_back(std::move(c));
  }
  return {};
}

// Where the reader stands in the records: the file's format version, the section reached and
// the frames declared so far.
struct ParseState {
  Reader& reader;
  Schedule& s;
  std::uint32_t version = 0;
  bool multi = false;  // the fields of version 2
  Section section = Section::kSoc;
  std::uint64_t framesTotal = 0;

  Result<void> order(std::string_view kind, Section want) {
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

Result<void> readSoc(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kSoc));
  TACTUS_CHECK(st.room(s.socs.size(), limits::kMaxSocs, "SoCs"));
  TACTUS_CHECK(f.id(s.socs.size()));
  SocInfo soc;
  TACTUS_READ(soc.name, f.name("name"));
  TACTUS_CHECK(f.done());
  s.socs.push_back(std::move(soc));
  return {};
}

// A contract with the verifier and the master: both SoCs declared above, two different
// ones, each pair once and in (from, to) order, a time in range.
Result<void> readSocLatency(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  Reader& reader = st.reader;
  TACTUS_CHECK(st.order(rec.kind, Section::kSocLatency));
  SocLatency l;
  TACTUS_READ(l.from, f.u32("from"));
  TACTUS_READ(l.to, f.u32("to"));
  TACTUS_READ(l.latencyNs, f.i64("latency_ns"));
  TACTUS_CHECK(f.done());
  for (const std::uint32_t soc : {l.from, l.to})
    if (soc >= s.socs.size())
      return reader.err("soc_latency names SoC " + std::to_string(soc) + ", but the schedule has " +
                        std::to_string(s.socs.size()) + " SoCs");
  if (l.from == l.to)
    return reader.err("soc_latency from SoC " + quoted(s.socs[l.from].name) +
                      " to itself (a dependency within one SoC has no transfer time)");
  if (!s.socLatencies.empty()) {
    const SocLatency& prev = s.socLatencies.back();
    if (prev.from == l.from && prev.to == l.to)
      return reader.err("soc_latency from SoC " + quoted(s.socs[l.from].name) + " to SoC " + quoted(s.socs[l.to].name) +
                        " is given twice");
    if (std::pair{prev.from, prev.to} > std::pair{l.from, l.to})
      return reader.err("soc_latency record out of order (sorted by from, then to)");
  }
  s.socLatencies.push_back(l);
  return {};
}

Result<void> readClient(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kClient));
  TACTUS_CHECK(st.room(s.clients.size(), limits::kMaxClients, "clients"));
  TACTUS_CHECK(f.id(s.clients.size()));
  ClientInfo c;
  TACTUS_READ(c.name, f.name("name"));
  if (st.multi) TACTUS_READ(c.soc, f.opt("soc"));
  TACTUS_CHECK(f.done());
  s.clients.push_back(std::move(c));
  return {};
}

Result<void> readResource(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  Reader& reader = st.reader;
  TACTUS_CHECK(st.order(rec.kind, Section::kResource));
  TACTUS_CHECK(st.room(s.resources.size(), limits::kMaxResources, "resources"));
  TACTUS_CHECK(f.id(s.resources.size()));
  ResourceInfo r;
  TACTUS_READ(r.name, f.name("name"));
  TACTUS_READ(r.type, f.name("type"));
  std::string_view kind;
  TACTUS_READ(kind, f.raw("kind"));
  if (!kindFromName(kind, r.kind)) return reader.err("unknown resource kind " + quoted(kind, 40));
  if (st.version < kScheduleFormatVersionEngines && (isEngine(r.kind) || isEngineQueue(r.kind)) &&
      r.kind != ResourceKind::kGpu && r.kind != ResourceKind::kCudaStream)
    return reader.err("resource kind " + quoted(kind, 40) + " in a file of format version " +
                      std::to_string(st.version) + " (DLA and VPU engines need version " +
                      std::to_string(kScheduleFormatVersionEngines) + ")");
  TACTUS_READ(r.client, f.opt("client"));
  TACTUS_READ(r.hyperepoch, f.opt("hyperepoch"));
  TACTUS_READ(r.core, f.opt("core"));
  TACTUS_READ(r.device, f.opt("device"));
  TACTUS_READ(r.streamLimit, f.opt("stream_limit"));
  if (st.multi) TACTUS_READ(r.soc, f.opt("soc"));
  TACTUS_CHECK(f.done());
  s.resources.push_back(std::move(r));
  return {};
}

Result<void> readHyperepoch(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kHyperepoch));
  TACTUS_CHECK(st.room(s.hyperepochs.size(), limits::kMaxHyperepochs, "hyperepochs"));
  TACTUS_CHECK(f.id(s.hyperepochs.size()));
  HyperepochInfo h;
  TACTUS_READ(h.name, f.name("name"));
  TACTUS_READ(h.periodNs, f.i64("period_ns"));
  TACTUS_READ(h.monitorNs, f.dur("monitor_ns"));
  TACTUS_READ(h.resources, f.list("resources", limits::kMaxResources));
  TACTUS_READ(h.epochs, f.list("epochs", limits::kMaxEpochs));
  TACTUS_CHECK(f.done());
  s.hyperepochs.push_back(std::move(h));
  return {};
}

Result<void> readEpoch(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  Reader& reader = st.reader;
  TACTUS_CHECK(st.order(rec.kind, Section::kEpoch));
  TACTUS_CHECK(st.room(s.epochs.size(), limits::kMaxEpochs, "epochs"));
  TACTUS_CHECK(f.id(s.epochs.size()));
  EpochInfo e;
  TACTUS_READ(e.name, f.name("name"));
  TACTUS_READ(e.hyperepoch, f.u32("hyperepoch"));
  TACTUS_READ(e.periodNs, f.i64("period_ns"));
  TACTUS_READ(e.frames, f.u32("frames"));
  if (e.frames > limits::kMaxFramesPerEpoch)
    return reader.err("epoch " + quoted(e.name) + " has " + std::to_string(e.frames) + " frames, above the limit of " +
                      std::to_string(limits::kMaxFramesPerEpoch) + " per epoch");
  st.framesTotal += e.frames;
  if (st.framesTotal > limits::kMaxFramesTotal)
    return reader.err("the epochs have more than " + std::to_string(limits::kMaxFramesTotal) +
                      " frames in all (the limit per schedule)");
  TACTUS_CHECK(f.done());
  s.epochs.push_back(std::move(e));
  return {};
}

Result<void> readRunnable(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kRunnable));
  TACTUS_CHECK(st.room(s.runnables.size(), limits::kMaxRunnables, "runnables"));
  TACTUS_CHECK(f.id(s.runnables.size()));
  RunnableInfo r;
  TACTUS_READ(r.name, f.name("name"));
  TACTUS_READ(r.client, f.u32("client"));
  TACTUS_READ(r.epoch, f.u32("epoch"));
  std::string_view kind;
  TACTUS_READ(kind, f.raw("kind"));
  if (!kindFromName(kind, r.kind)) return st.reader.err("unknown runnable kind " + quoted(kind, 40));
  TACTUS_READ(r.wcetNs, f.i64("wcet_ns"));
  TACTUS_READ(r.startTimeNs, f.i64("start_ns"));
  TACTUS_READ(r.deadlineNs, f.dur("deadline_ns"));
  TACTUS_READ(r.endMonitorThresholdNs, f.dur("end_monitor_ns"));
  TACTUS_READ(r.priority, f.u32("priority"));
  TACTUS_READ(r.dependencies, f.list("deps", limits::kMaxDependenciesPerRunnable));
  TACTUS_READ(r.submits, f.opt("submits"));
  TACTUS_READ(r.submittedBy, f.opt("submitted_by"));
  TACTUS_READ(r.aliasGroup, f.opt("alias_group"));
  TACTUS_READ(r.steps, f.list("steps", limits::kMaxRunnables, true));
  TACTUS_CHECK(f.done());
  s.runnables.push_back(std::move(r));
  return {};
}

Result<void> readInstance(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kInstance));
  TACTUS_CHECK(st.room(s.instances.size(), limits::kMaxInstancesTotal, "runnable instances"));
  TACTUS_CHECK(f.id(s.instances.size()));
  InstanceInfo in;
  TACTUS_READ(in.runnable, f.u32("runnable"));
  TACTUS_READ(in.frame, f.u32("frame"));
  TACTUS_READ(in.startNs, f.i64("start_ns"));
  TACTUS_READ(in.endNs, f.i64("end_ns"));
  TACTUS_READ(in.resources, f.list("resources", limits::kMaxResources));
  TACTUS_READ(in.dependencies, f.list("deps", limits::kMaxDependenciesPerRunnable));
  TACTUS_CHECK(f.done());
  s.instances.push_back(std::move(in));
  return {};
}

Result<void> readTimeline(const Record& rec, Fields& f, ParseState& st) {
  Schedule& s = st.s;
  TACTUS_CHECK(st.order(rec.kind, Section::kTimeline));
  TACTUS_CHECK(st.room(s.timelines.size(), limits::kMaxResources, "timelines"));
  TimelineInfo t;
  TACTUS_READ(t.resource, f.u32("resource"));
  TACTUS_READ(t.instances, f.list("instances", limits::kMaxInstancesTotal));
  TACTUS_CHECK(f.done());
  s.timelines.push_back(std::move(t));
  return {};
}

// One record after the 'schedule' record, by its kind (the records the file's version has).
Result<void> readRecord(Record& rec, Fields& f, ParseState& st, const std::string& origin) {
  if (rec.kind == "soc" && st.multi) return readSoc(rec, f, st);
  if (rec.kind == "soc_latency" && st.version >= kScheduleFormatVersionSocLatency) return readSocLatency(rec, f, st);
  if (rec.kind == "client") return readClient(rec, f, st);
  if (rec.kind == "resource") return readResource(rec, f, st);
  if (rec.kind == "hyperepoch") return readHyperepoch(rec, f, st);
  if (rec.kind == "epoch") return readEpoch(rec, f, st);
  if (rec.kind == "runnable") return readRunnable(rec, f, st);
  if (rec.kind == "instance") return readInstance(rec, f, st);
  if (rec.kind == "timeline") return readTimeline(rec, f, st);
  if (rec.kind == "channel" || rec.kind == "channel_write" || rec.kind == "channel_read" || rec.kind == "chain") {
    if (st.version < kScheduleFormatVersionChannels)
      return fail(ErrorCode::kIncompatible,
                  origin + ": '" + std::string(rec.kind) + "' record in a file of format version " +
                      std::to_string(st.version) + " (channels and chains need version " +
                      std::to_string(kScheduleFormatVersionChannels) + "); recompile the graph");
    auto order = [&](Section want) { return st.order(rec.kind, want); };
    return readChannelRecord(rec, f, st.reader, st.s, order);
  }
  return st.reader.err("unknown record " + quoted(rec.kind, 40));
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
Result<void> readScheduleRecord(Reader& reader, std::uint32_t version, Schedule& s) {
  std::string_view line;
  Record rec;
  if (!reader.next(line) || !splitRecord(line, rec) || rec.kind != "schedule")
    return reader.err("expected the 'schedule' record");
  Fields f(rec, reader);
  TACTUS_READ(s.name, f.name("name"));
  std::uint32_t id = 0;
  TACTUS_READ(id, f.u32("identifier"));
  if (id > 65535) return reader.err("identifier " + std::to_string(id) + " is above 65535");
  s.identifier = static_cast<std::uint16_t>(id);
  std::string_view hex;
  TACTUS_READ(hex, f.raw("source_hash"));
  if (!hashFromHex(hex, s.sourceHash)) return reader.err("source_hash is not 16 hex digits");
  if (version >= 2) TACTUS_READ(s.crossSocLatencyNs, f.i64("cross_soc_latency_ns"));
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
  TACTUS_CHECK(readScheduleRecord(reader, *version, s));
  ParseState st{reader, s, *version, *version >= 2};
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
    if (!splitRecord(line, rec)) return reader.err("malformed record (fields are key=value separated by one space)");
    Fields f(rec, reader);
    TACTUS_CHECK(readRecord(rec, f, st, origin));
  }
  if (!sawHash) return reader.err("missing content_hash line: the file is truncated");
  TACTUS_CHECK(checkGpuFormat(s, *version, origin));
  return s;
}

#undef TACTUS_READ
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
