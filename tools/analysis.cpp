// Reading event logs tolerantly and computing tactus-report's statistics.
#include "analysis.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>

#include <sys/stat.h>

#include "chains.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/text.hpp"

namespace tactus::report {
namespace {

// Validates the header of a log; the records follow at headerSize.
Result<void> checkHeader(const EventLogHeader& h, const std::string& origin) {
  if (std::memcmp(h.magic, kEventLogMagic, sizeof kEventLogMagic) != 0)
    return fail(ErrorCode::kParse, origin + ": not a tactus event log (bad magic)");
  if (!readsEventLogVersion(h.version))
    return fail(ErrorCode::kIncompatible, origin + ": event log version " + std::to_string(h.version) +
                                              ", this build reads versions " + std::to_string(kEventLogOldestVersion) +
                                              " to " + std::to_string(kEventLogVersion));
  if (h.headerSize != sizeof(EventLogHeader) || h.recordSize != eventRecordSize(h.version))
    return fail(ErrorCode::kParse,
                origin + ": corrupt header (header size " + std::to_string(h.headerSize) + ", record size " +
                    std::to_string(h.recordSize) + ", expected " + std::to_string(sizeof(EventLogHeader)) + " and " +
                    std::to_string(eventRecordSize(h.version)) + " for version " + std::to_string(h.version) + ")");
  return {};
}

Error tooShort(const std::string& origin, std::size_t bytes) {
  return fail(ErrorCode::kParse, origin + ": too short for an event log header (" + std::to_string(bytes) +
                                     " bytes, need " + std::to_string(sizeof(EventLogHeader)) + ")");
}

std::string truncationWarning(const std::string& origin, std::size_t tail, std::size_t recordSize,
                              std::size_t complete) {
  return origin + ": the log ends inside a record (" + std::to_string(tail) + " of " + std::to_string(recordSize) +
         " bytes); reporting the " + std::to_string(complete) + " complete records";
}

}  // namespace

Result<LogFile> parseLog(const std::string& bytes, const std::string& origin) {
  LogFile log;
  log.path = origin;
  if (bytes.size() < sizeof(EventLogHeader)) return tooShort(origin, bytes.size());
  std::memcpy(&log.header, bytes.data(), sizeof log.header);
  auto ok = checkHeader(log.header, origin);
  if (!ok) return ok.error();
  const std::size_t body = bytes.size() - sizeof(EventLogHeader);
  const std::size_t recordSize = log.header.recordSize;
  const std::size_t n = body / recordSize;
  log.records.resize(n);
  if (n) {
    decodeEventRecords(reinterpret_cast<const unsigned char*>(bytes.data()) + sizeof(EventLogHeader), n,
                       log.header.recordSize, log.records.data());
  }
  if (body % recordSize) log.warnings.push_back(truncationWarning(origin, body % recordSize, recordSize, n));
  return log;
}

Result<LogFile> readLogFile(const std::string& path) {
  const auto close = [](std::FILE* file) { std::fclose(file); };
  const std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "rb"), close);
  std::FILE* f = file.get();
  if (!f) return fail(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
  // A pipe or a device has no size to read up to (/dev/zero would never end).
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    return fail(ErrorCode::kIo, path + ": not a regular file");
  LogFile log;
  log.path = path;
  const std::size_t got = std::fread(&log.header, 1, sizeof log.header, f);
  if (got != sizeof log.header) return tooShort(path, got);
  if (auto ok = checkHeader(log.header, path); !ok) return ok.error();
  // Read the body straight into the record vector: one allocation, no copy.
  long size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = std::ftell(f);
  if (size < static_cast<long>(sizeof(EventLogHeader)) || std::fseek(f, sizeof(EventLogHeader), SEEK_SET) != 0)
    return fail(ErrorCode::kIo, path + ": cannot seek in the log");
  const std::size_t body = static_cast<std::size_t>(size) - sizeof(EventLogHeader);
  const std::size_t recordSize = log.header.recordSize;
  const std::size_t n = body / recordSize;
  std::vector<unsigned char> older;  // the records of an older version, decoded below
  try {
    log.records.resize(n);
    if (recordSize != sizeof(EventRecord)) older.resize(n * recordSize);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kIo, path + ": too large to read (" + std::to_string(n) + " records)");
  }
  std::size_t read = 0;
  if (n != 0 && older.empty()) {
    read = std::fread(log.records.data(), sizeof(EventRecord), n, f);
  } else if (n != 0) {
    read = std::fread(older.data(), recordSize, n, f);
    decodeEventRecords(older.data(), read, log.header.recordSize, log.records.data());
  }
  if (std::ferror(f) != 0) return fail(ErrorCode::kIo, path + ": read error");
  if (read < n) {
    log.records.resize(read);
    log.warnings.push_back(path + ": the file shrank while being read; reporting the " + std::to_string(read) +
                           " complete records");
  } else if (body % recordSize) {
    log.warnings.push_back(truncationWarning(path, body % recordSize, recordSize, n));
  }
  return log;
}

Result<void> checkLogMatches(const LogFile& log, const Schedule& schedule, const std::string& scheduleOrigin) {
  const std::uint64_t hash = scheduleContentHash(schedule);
  if (log.header.scheduleContentHash != hash)
    return fail(ErrorCode::kValidation, log.path + ": the log was written for another schedule (content hash " +
                                            hashToHex(log.header.scheduleContentHash) + ", identifier " +
                                            std::to_string(log.header.scheduleIdentifier) + "), but " + scheduleOrigin +
                                            " has content hash " + hashToHex(hash) + " (identifier " +
                                            std::to_string(schedule.identifier) +
                                            "); give the schedule file the master ran");
  return {};
}

std::int64_t percentileOfSorted(const std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  std::size_t idx = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(idx, sorted.size() - 1)];
}

Quantiles summarize(std::vector<std::int64_t>& values) {
  Quantiles q;
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  q.count = values.size();
  q.minNs = values.front();
  q.maxNs = values.back();
  q.medianNs = percentileOfSorted(values, 50);
  q.p99Ns = percentileOfSorted(values, 99);
  long double sum = 0;
  for (std::int64_t v : values) sum += v;
  q.meanNs = static_cast<double>(sum / values.size());
  return q;
}
namespace {

// Times further than this from zero are not CLOCK_MONOTONIC readings (which count from boot);
// keeping every trusted time within it, plus limits::kMaxLogSpanNs around the run's start,
// leaves every difference and sum the analysis forms far inside int64.
constexpr std::int64_t kMaxPlausibleNs = std::numeric_limits<std::int64_t>::max() / 4;

bool plausible(std::int64_t t) { return t >= -kMaxPlausibleNs && t <= kMaxPlausibleNs; }

// Adds without overflow, saturating at the int64 range (a sum of up to 2^33 durations).
std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return sum;
}

// The run's start that record times are judged against: the header's, or else the first
// plausible record time (0 for a log without one).
std::int64_t findOrigin(const LogFile& log) {
  if (log.header.runStartNs != 0 && plausible(log.header.runStartNs)) return log.header.runStartNs;
  for (const EventRecord& r : log.records) {
    const auto kind = static_cast<EventKind>(r.kind);
    if ((kind == EventKind::kRun || kind == EventKind::kRelease) && plausible(r.startNs)) return r.startNs;
  }
  return 0;
}

// A per-(epoch frame, iteration) table of times: dense while the iterations seen times the
// frames stays within what the records can fill, a hash table beyond (a log of three records
// must not make the report allocate gigabytes for a schedule of many frames).
class SlotTable {
 public:
  SlotTable(std::size_t rows, std::uint32_t frames, std::int64_t empty, std::size_t& denseBudget)
      : frames_(frames), empty_(empty) {
    const std::uint64_t cells = static_cast<std::uint64_t>(rows) * frames;
    if (cells <= denseBudget) {
      dense_.assign(static_cast<std::size_t>(cells), empty);
      denseBudget -= static_cast<std::size_t>(cells);
      isDense_ = true;
    }
  }
  std::int64_t get(std::size_t row, std::uint32_t frame) const {
    if (isDense_) return dense_[row * frames_ + frame];
    auto it = sparse_.find(key(row, frame));
    return it == sparse_.end() ? empty_ : it->second;
  }
  std::int64_t& at(std::size_t row, std::uint32_t frame) {
    if (isDense_) return dense_[row * frames_ + frame];
    return sparse_.try_emplace(key(row, frame), empty_).first->second;
  }
  // Calls f(row, frame, value) for every cell that is not empty.
  template <typename F>
  void forEach(F f) const {
    if (isDense_) {
      for (std::size_t k = 0; k < dense_.size(); ++k)
        if (dense_[k] != empty_) f(k / frames_, static_cast<std::uint32_t>(k % frames_), dense_[k]);
    } else {
      for (const auto& [k, v] : sparse_)
        f(static_cast<std::size_t>(k / frames_), static_cast<std::uint32_t>(k % frames_), v);
    }
  }

 private:
  std::uint64_t key(std::size_t row, std::uint32_t frame) const {
    return static_cast<std::uint64_t>(row) * frames_ + frame;
  }
  std::uint32_t frames_;
  std::int64_t empty_;
  bool isDense_ = false;
  std::vector<std::int64_t> dense_;
  std::unordered_map<std::uint64_t, std::int64_t> sparse_;
};

}  // namespace

bool timeValid(const Analysis& a, std::int64_t t) {
  return t >= a.originNs - limits::kMaxLogSpanNs && t <= a.originNs + limits::kMaxLogSpanNs;
}

bool iterationValid(const Schedule& s, HyperepochId hyperepoch, std::uint64_t iteration) {
  if (!s.hyperepochs.contains(hyperepoch)) return false;
  const std::int64_t period = s.hyperepochs[hyperepoch].periodNs;
  return period > 0 && iteration <= static_cast<std::uint64_t>(limits::kMaxLogSpanNs / period);
}

bool validRun(const Schedule& s, const Analysis& a, const EventRecord& r) {
  const InstanceId instance{r.instance};
  const RunnableId ran{r.aux};
  if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || !s.instances.contains(instance) ||
      !a.instanceHyperepoch.contains(instance) || r.endNs < r.startNs || (ran != kNone && !s.runnables.contains(ran)))
    return false;
  if (!timeValid(a, r.startNs) || !timeValid(a, r.endNs)) return false;
  const HyperepochId h = a.instanceHyperepoch[instance];
  return a.lastIteration.contains(h) && r.iteration <= a.lastIteration[h];
}

bool validRelease(const Schedule& s, const Analysis& a, const EventRecord& r) {
  const EpochId e{r.instance};
  if (r.kind != static_cast<std::uint16_t>(EventKind::kRelease) || !s.epochs.contains(e) ||
      r.aux >= s.epochs[e].frames || !timeValid(a, r.startNs) || !timeValid(a, r.endNs))
    return false;
  const HyperepochId h = s.epochs[e].hyperepoch;
  return a.lastIteration.contains(h) && r.iteration <= a.lastIteration[h];
}

std::size_t iterationIndex(const Analysis& a, HyperepochId hyperepoch, std::uint64_t iteration) {
  if (!a.iterations.contains(hyperepoch)) return kNoIteration;
  const std::vector<std::uint64_t>& seen = a.iterations[hyperepoch];
  // A run without gaps numbers its iterations 0, 1, 2, ...: then the number is the position.
  if (iteration < seen.size() && seen[static_cast<std::size_t>(iteration)] == iteration)
    return static_cast<std::size_t>(iteration);
  auto it = std::lower_bound(seen.begin(), seen.end(), iteration);
  if (it == seen.end() || *it != iteration) return kNoIteration;
  return static_cast<std::size_t>(it - seen.begin());
}

std::string epochName(const Schedule& schedule, EpochId epoch) {
  return schedule.hyperepochs[schedule.epochs[epoch].hyperepoch].name + "." + schedule.epochs[epoch].name;
}

std::int64_t iterationStartNs(const Schedule& schedule, const LogFile& log, const Analysis& analysis,
                              HyperepochId hyperepoch, std::uint64_t iteration) {
  (void)log;
  const std::size_t k = iterationIndex(analysis, hyperepoch, iteration);
  if (k != kNoIteration && analysis.iterationStart[hyperepoch][k] != 0) return analysis.iterationStart[hyperepoch][k];
  // Estimated from the run's start; an iteration too far from it is pinned at the start.
  if (!iterationValid(schedule, hyperepoch, iteration)) return analysis.runStartNs;
  return analysis.runStartNs + static_cast<std::int64_t>(iteration) * schedule.hyperepochs[hyperepoch].periodNs;
}

namespace {

// The passes of analyze() over one log and the tables they share.
struct AnalysisPass {
  const Schedule& s;
  const LogFile& log;
  Analysis a;
  // 64-bit frame offsets: the verifier bounds the sum, and a sum must never wrap.
  IdVector<EpochId, std::size_t> frameBase;
  IdVector<InstanceId, EpochId> instEpoch;
  // Ideal release and last end per (epoch, iteration seen, frame); 0 / INT64_MIN = no record.
  IdVector<EpochId, SlotTable> release, frameEnd;
  std::vector<std::vector<std::int64_t>> releaseJitter;
  std::int64_t base = std::numeric_limits<std::int64_t>::max();
  // The first invalid record's number (from 0, in file order), for the warning.
  std::size_t firstInvalid;
  IdVector<RunnableId, std::vector<std::int64_t>> jitter;
  IdVector<HyperepochId, std::vector<std::int64_t>> iterEnd;
  IdVector<ResourceId, long double> resourceBusy, resourceSpin;

  AnalysisPass(const Schedule& schedule, const LogFile& events)
      : s(schedule), log(events), firstInvalid(log.records.size()) {}

  void invalid(std::size_t k) {
    ++a.invalidRecords;
    firstInvalid = std::min(firstInvalid, k);
  }

  // A kRelease record names an epoch (instance) and a frame (aux).
  bool validRelease(const EventRecord& r) const { return report::validRelease(s, a, r); }

  void setUp() {
    const std::size_t nInst = s.instances.size(), nEp = s.epochs.size(), nHyp = s.hyperepochs.size();
    a.runnables.resize(s.runnables.size());
    a.resources.resize(s.resources.size());
    a.clients.resize(s.clients.size());
    a.hyperepochs.resize(nHyp);
    a.iterations.resize(nHyp);
    a.iterationStart.resize(nHyp);
    a.warnings = log.warnings;
    a.originNs = findOrigin(log);
    a.runStartNs = log.header.runStartNs != 0 && log.header.runStartNs == a.originNs ? a.originNs : 0;
    if (log.header.runStartNs != 0 && a.runStartNs == 0)
      a.warnings.push_back("the log header's run start " + std::to_string(log.header.runStartNs) +
                           " ns is not a plausible CLOCK_MONOTONIC time; ignored");
    // How the master ran, where it differs from the plan (event log version 4).
    if ((log.header.runFlags & kRunUnpinned) != 0)
      a.warnings.push_back(
          "the master ran with -C: no worker was pinned to its planned core, so the plan's core "
          "assignment did not hold (runnables the plan runs in parallel may have shared a core)");
    if ((log.header.runFlags & kRunFreeRunning) != 0)
      a.warnings.push_back(
          "the master ran with -m: a late iteration started at once instead of at the next "
          "period boundary (no period skipped; later releases moved)");
    if ((log.header.runFlags & kRunAllowUnregistered) != 0)
      a.warnings.push_back(
          "the master ran with --allow-unregistered-runnables: a runnable no client registered "
          "ran as an empty step");
    frameBase.assign(nEp + 1, 0);
    for (std::size_t e = 0; e < nEp; ++e) frameBase[e + 1] = frameBase[e] + s.epochs[e].frames;
    a.frames.resize(frameBase[nEp]);
    for (EpochId e : s.epochs.ids())
      for (std::uint32_t f = 0; f < s.epochs[e].frames; ++f) {
        a.frames[frameBase[e] + f].epoch = e;
        a.frames[frameBase[e] + f].frame = f;
      }
    instEpoch.assign(nInst, EpochId{0});
    a.instanceHyperepoch.assign(nInst, HyperepochId{0});
    for (InstanceId i : s.instances.ids()) {
      const RunnableId r = s.instances[i].runnable;
      instEpoch[i] = s.runnables.contains(r) ? s.runnables[r].epoch : EpochId{0};
      a.instanceHyperepoch[i] = s.epochs.contains(instEpoch[i]) ? s.epochs[instEpoch[i]].hyperepoch : HyperepochId{0};
    }
    a.lastIteration.assign(nHyp, 0);
    for (HyperepochId h : s.hyperepochs.ids())
      if (s.hyperepochs[h].periodNs > 0)
        a.lastIteration[h] = static_cast<std::uint64_t>(limits::kMaxLogSpanNs / s.hyperepochs[h].periodNs);
  }

  // Pass 1: the iterations seen per hyperepoch (every table below is sized by them, so by the
  // records, never by an iteration number a record claims). Records of one iteration come in
  // runs, so a repeat of the last number is skipped before the sort.
  void findIterations() {
    for (const EventRecord& r : log.records) {
      HyperepochId h = kNone;
      if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && validRun(s, a, r))
        h = a.instanceHyperepoch[InstanceId{r.instance}];
      else if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && validRelease(r))
        h = s.epochs[EpochId{r.instance}].hyperepoch;
      if (h == kNone) continue;
      std::vector<std::uint64_t>& seen = a.iterations[h];
      if (seen.empty() || seen.back() != r.iteration) seen.push_back(r.iteration);
    }
    for (HyperepochId h : s.hyperepochs.ids()) {
      std::vector<std::uint64_t>& seen = a.iterations[h];
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      a.iterationStart[h].assign(seen.size(), 0);
    }
    std::size_t denseBudget = 4 * log.records.size() + 65536;
    release.reserve(s.epochs.size());
    frameEnd.reserve(s.epochs.size());
    for (EpochId e : s.epochs.ids()) {
      const std::size_t rows = a.iterations[s.epochs[e].hyperepoch].size();
      release.emplace_back(rows, s.epochs[e].frames, 0, denseBudget);
      frameEnd.emplace_back(rows, s.epochs[e].frames, std::numeric_limits<std::int64_t>::min(), denseBudget);
    }
    releaseJitter.resize(a.frames.size());
  }

  // Pass 2: every record but the runs (releases, skips, overruns, losses).
  void readEvents() {
    for (std::size_t k = 0; k < log.records.size(); ++k) {
      const EventRecord& r = log.records[k];
      switch (static_cast<EventKind>(r.kind)) {
        case EventKind::kRun: ++a.runRecords; break;
        case EventKind::kRelease: readRelease(r, k); break;
        case EventKind::kSkipped: {  // instance: the hyperepoch, aux: periods skipped
          const HyperepochId h{r.instance};
          if (!s.hyperepochs.contains(h) || !timeValid(a, r.startNs) || !timeValid(a, r.endNs)) {
            invalid(k);
            break;
          }
          ++a.skippedRecords;
          ++a.hyperepochs[h].skipEvents;
          a.hyperepochs[h].skippedPeriods += r.aux;
          break;
        }
        case EventKind::kOverrun: {  // instance: the epoch, aux: the frame
          const EpochId e{r.instance};
          if (!s.epochs.contains(e) || r.aux >= s.epochs[e].frames || !timeValid(a, r.startNs) ||
              !timeValid(a, r.endNs)) {
            invalid(k);
            break;
          }
          ++a.overrunRecords;
          ++a.frames[frameBase[e] + r.aux].overruns;
          ++a.hyperepochs[s.epochs[e].hyperepoch].overrunRecords;
          break;
        }
        case EventKind::kDropped: {  // instance: the client, iteration: records lost
          const ClientId c{r.instance};
          ++a.droppedRecords;
          a.lostRecords += r.iteration;
          if (a.clients.contains(c)) a.clients[c].droppedRecords += r.iteration;
          break;
        }
        // tactus-check's (read by violations.cpp) and a multi-SoC log's clock (applied by log_merge.cpp).
        case EventKind::kViolation:
        case EventKind::kViolationSite:
        case EventKind::kClockOffset: break;
        default: invalid(k);
      }
    }
  }

  void readRelease(const EventRecord& r, std::size_t k) {
    if (!validRelease(r)) return invalid(k);
    ++a.releaseRecords;
    const EpochId e{r.instance};
    const EpochInfo& ep = s.epochs[e];
    const std::size_t row = iterationIndex(a, ep.hyperepoch, r.iteration);
    release[e].at(row, r.aux) = r.startNs;
    FrameStats& fs = a.frames[frameBase[e] + r.aux];
    ++fs.releases;
    releaseJitter[frameBase[e] + r.aux].push_back(r.endNs - r.startNs);
    // The iteration starts at the ideal release of its frame 0 less the frame's offset.
    std::int64_t& start = a.iterationStart[ep.hyperepoch][row];
    const std::int64_t candidate = r.startNs - static_cast<std::int64_t>(r.aux) * ep.periodNs;
    if (start == 0 || candidate < start) start = candidate;
    base = std::min(base, r.startNs);
  }

  // Iterations without a release record: their start estimated from the header (or the runs).
  void estimateStarts() {
    std::uint64_t estimated = 0;
    for (HyperepochId h : s.hyperepochs.ids())
      for (std::size_t k = 0; k < a.iterationStart[h].size(); ++k)
        if (a.iterationStart[h][k] == 0 && a.runStartNs != 0) {
          a.iterationStart[h][k] = iterationStartNs(s, log, a, h, a.iterations[h][k]);
          ++estimated;
        }
    if (estimated)
      a.warnings.push_back(std::to_string(estimated) +
                           " hyperepoch iterations have no release record; their start is estimated from the "
                           "run start and the period");
  }

  // Pass 3: the runs.
  void readRuns() {
    jitter.resize(s.runnables.size());
    iterEnd.resize(s.hyperepochs.size());
    for (HyperepochId h : s.hyperepochs.ids())
      iterEnd[h].assign(a.iterations[h].size(), std::numeric_limits<std::int64_t>::min());
    resourceBusy.assign(s.resources.size(), 0);
    resourceSpin.assign(s.resources.size(), 0);
    for (std::size_t k = 0; k < log.records.size(); ++k) {
      const EventRecord& r = log.records[k];
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
      if (!validRun(s, a, r)) {
        invalid(k);
        continue;
      }
      base = std::min(base, r.startNs);
      if (r.aux == kNone) {
        ++a.emptyRuns;
        continue;
      }
      readRun(r);
    }
    a.baseNs = base == std::numeric_limits<std::int64_t>::max() ? 0 : base;
  }

  void readRun(const EventRecord& r) {
    const InstanceId instance{r.instance};
    const InstanceInfo& inst = s.instances[instance];
    const HyperepochId h = a.instanceHyperepoch[instance];
    const EpochId e = instEpoch[instance];
    const std::size_t row = iterationIndex(a, h, r.iteration);
    const RunnableId ranId{r.aux};
    const RunnableInfo& ran = s.runnables[ranId];
    RunnableStats& rs = a.runnables[ranId];
    const std::int64_t duration = r.endNs - r.startNs;
    std::int64_t iterStart = a.iterationStart[h][row];
    if (iterStart == 0) iterStart = r.startNs - inst.startNs;  // no release, no header: assume on time
    const bool frameOk = inst.frame < s.epochs[e].frames;
    std::int64_t rel = frameOk ? release[e].get(row, inst.frame) : 0;
    if (rel == 0) rel = iterStart + static_cast<std::int64_t>(inst.frame) * s.epochs[e].periodNs;
    const std::int64_t sinceRelease = r.endNs - rel;

    rs.durations.push_back(duration);
    jitter[ranId].push_back(r.startNs - (iterStart + inst.startNs));
    ClientStats& cs = a.clients[a.clients.contains(ran.client) ? ran.client : ClientId{0}];
    ++cs.runs;
    cs.busyNs = saturatingAdd(cs.busyNs, duration);
    if (duration > ran.wcetNs) {
      ++rs.overrunsWcet;
      ++cs.overrunsWcet;
      rs.worstOverrunNs = std::max(rs.worstOverrunNs, duration - ran.wcetNs);
    }
    // The master's overrun rule (overrunLimitNs): a run beyond WCET + EndMonitorThreshold.
    if (ran.endMonitorThresholdNs != kNoDuration && duration > overrunLimitNs(ran)) {
      ++rs.endMonitorViolations;
      ++cs.endMonitorViolations;
    }
    if (ran.deadlineNs != kNoDuration && sinceRelease > ran.deadlineNs) {
      ++rs.deadlineMisses;
      ++cs.deadlineMisses;
      if (frameOk) ++a.frames[frameBase[e] + inst.frame].deadlineMisses;
    }
    if (frameOk) {
      std::int64_t& end = frameEnd[e].at(row, inst.frame);
      end = std::max(end, r.endNs);
    }
    iterEnd[h][row] = std::max(iterEnd[h][row], r.endNs);
    for (ResourceId res : inst.resources)
      if (resourceBusy.contains(res)) {
        resourceBusy[res] += duration;
        ++a.resources[res].runs;
      }
    if (!inst.resources.empty() && resourceSpin.contains(inst.resources[0]))
      resourceSpin[inst.resources[0]] += static_cast<long double>(r.detail) * kSpinUnitNs;
  }

  // The quantiles and totals of every table.
  void summarizeTables() {
    for (RunnableId r : s.runnables.ids()) {
      a.runnables[r].duration = summarize(a.runnables[r].durations);
      a.runnables[r].startJitter = summarize(jitter[r]);
      jitter[r] = {};
    }
    for (EpochId e : s.epochs.ids()) {
      const EpochInfo& ep = s.epochs[e];
      std::vector<std::vector<std::int64_t>> spans(ep.frames);
      frameEnd[e].forEach([&](std::size_t row, std::uint32_t f, std::int64_t end) {
        std::int64_t rel = release[e].get(row, f);
        if (rel == 0) rel = a.iterationStart[ep.hyperepoch][row] + static_cast<std::int64_t>(f) * ep.periodNs;
        spans[f].push_back(end - rel);
      });
      for (std::uint32_t f = 0; f < ep.frames; ++f) {
        a.frames[frameBase[e] + f].span = summarize(spans[f]);
        a.frames[frameBase[e] + f].releaseJitter = summarize(releaseJitter[frameBase[e] + f]);
      }
    }
    for (HyperepochId h : s.hyperepochs.ids()) {
      std::vector<std::int64_t> spans;
      HyperepochStats& hs = a.hyperepochs[h];
      for (std::size_t k = 0; k < a.iterations[h].size(); ++k) {
        ++hs.iterations;
        if (iterEnd[h][k] == std::numeric_limits<std::int64_t>::min() || a.iterationStart[h][k] == 0) continue;
        const std::int64_t span = iterEnd[h][k] - a.iterationStart[h][k];
        spans.push_back(span);
        if (s.hyperepochs[h].monitorNs != kNoDuration && span > s.hyperepochs[h].monitorNs) ++hs.monitorViolations;
      }
      hs.span = summarize(spans);
    }
    for (ResourceId res : s.resources.ids()) {
      ResourceStats& rs = a.resources[res];
      const HyperepochId h = s.resources[res].hyperepoch;
      if (s.hyperepochs.contains(h)) {
        rs.periodNs = s.hyperepochs[h].periodNs;
        const std::uint64_t its = a.hyperepochs[h].iterations;
        rs.measuredBusyNs = its ? static_cast<double>(resourceBusy[res] / its) : 0.0;
        rs.spinNs = its ? static_cast<double>(resourceSpin[res] / its) : 0.0;
      }
    }
    for (const InstanceInfo& inst : s.instances)
      for (ResourceId res : inst.resources)
        if (a.resources.contains(res)) a.resources[res].plannedBusyNs += inst.endNs - inst.startNs;
  }

  void warn() {
    if (a.invalidRecords)
      a.warnings.push_back(std::to_string(a.invalidRecords) +
                           " records have an unknown kind, an index outside the schedule or a time further than " +
                           humanDuration(limits::kMaxLogSpanNs) +
                           " from the run's start, and were ignored (a corrupt log, or one from another schedule); "
                           "the first is record " +
                           std::to_string(firstInvalid) + " (at byte " +
                           std::to_string(sizeof(EventLogHeader) + firstInvalid * sizeof(EventRecord)) + ")");
    if (a.lostRecords)
      a.warnings.push_back("the runtime lost " + std::to_string(a.lostRecords) +
                           " records (client rings full); statistics are of the records kept");
  }
};

}  // namespace

Analysis analyze(const Schedule& s, const LogFile& log) {
  AnalysisPass pass(s, log);
  pass.setUp();
  pass.findIterations();
  pass.readEvents();
  pass.estimateStarts();
  pass.readRuns();
  pass.summarizeTables();
  pass.warn();
  pass.a.chains = measureChains(s, log, pass.a);
  return std::move(pass.a);
}

}  // namespace tactus::report
