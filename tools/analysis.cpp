// Reading event logs tolerantly and computing tactus-report's statistics.
#include "analysis.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "tactus/core/hash.hpp"
#include "tactus/core/schedule_file.hpp"

namespace tactus::report {
namespace {

// Validates the header of a log; the records follow at headerSize.
Result<void> checkHeader(const EventLogHeader& h, const std::string& origin) {
  if (std::memcmp(h.magic, kEventLogMagic, sizeof kEventLogMagic) != 0)
    return fail(ErrorCode::kParse, origin + ": not a tactus event log (bad magic)");
  if (h.version != kEventLogVersion)
    return fail(ErrorCode::kIncompatible, origin + ": event log version " + std::to_string(h.version) +
                                              ", this build reads version " + std::to_string(kEventLogVersion));
  if (h.headerSize != sizeof(EventLogHeader) || h.recordSize != sizeof(EventRecord))
    return fail(ErrorCode::kParse, origin + ": corrupt header (header size " + std::to_string(h.headerSize) +
                                       ", record size " + std::to_string(h.recordSize) + ", expected " +
                                       std::to_string(sizeof(EventLogHeader)) + " and " +
                                       std::to_string(sizeof(EventRecord)) + ")");
  return {};
}

std::string truncationWarning(const std::string& origin, std::size_t tail, std::size_t complete) {
  return origin + ": the log ends inside a record (" + std::to_string(tail) + " of " +
         std::to_string(sizeof(EventRecord)) + " bytes); reporting the " + std::to_string(complete) +
         " complete records";
}

}  // namespace

Result<LogFile> parseLog(const std::string& bytes, const std::string& origin) {
  LogFile log;
  log.path = origin;
  if (bytes.size() < sizeof(EventLogHeader))
    return fail(ErrorCode::kParse, origin + ": too short for an event log header (" + std::to_string(bytes.size()) +
                                       " bytes, need " + std::to_string(sizeof(EventLogHeader)) + ")");
  std::memcpy(&log.header, bytes.data(), sizeof log.header);
  auto ok = checkHeader(log.header, origin);
  if (!ok) return ok.error();
  const std::size_t body = bytes.size() - sizeof(EventLogHeader);
  const std::size_t n = body / sizeof(EventRecord);
  log.records.resize(n);
  if (n) std::memcpy(log.records.data(), bytes.data() + sizeof(EventLogHeader), n * sizeof(EventRecord));
  if (body % sizeof(EventRecord)) log.warnings.push_back(truncationWarning(origin, body % sizeof(EventRecord), n));
  return log;
}

Result<LogFile> readLogFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
  LogFile log;
  log.path = path;
  std::size_t got = std::fread(&log.header, 1, sizeof log.header, f);
  if (got != sizeof log.header) {
    std::fclose(f);
    return fail(ErrorCode::kParse, path + ": too short for an event log header (" + std::to_string(got) +
                                       " bytes, need " + std::to_string(sizeof(EventLogHeader)) + ")");
  }
  auto ok = checkHeader(log.header, path);
  if (!ok) {
    std::fclose(f);
    return ok.error();
  }
  // Read the body straight into the record vector: one allocation, no copy.
  long size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = std::ftell(f);
  if (size < 0 || std::fseek(f, sizeof(EventLogHeader), SEEK_SET) != 0) {
    std::fclose(f);
    return fail(ErrorCode::kIo, path + ": cannot seek in the log");
  }
  const std::size_t body = static_cast<std::size_t>(size) - sizeof(EventLogHeader);
  const std::size_t n = body / sizeof(EventRecord);
  try {
    log.records.resize(n);
  } catch (const std::bad_alloc&) {
    std::fclose(f);
    return fail(ErrorCode::kIo, path + ": too large to read (" + std::to_string(n) + " records)");
  }
  const std::size_t read = n ? std::fread(log.records.data(), sizeof(EventRecord), n, f) : 0;
  const bool error = std::ferror(f) != 0;
  std::fclose(f);
  if (error) return fail(ErrorCode::kIo, path + ": read error");
  if (read < n) {
    log.records.resize(read);
    log.warnings.push_back(path + ": the file shrank while being read; reporting the " + std::to_string(read) +
                           " complete records");
  } else if (body % sizeof(EventRecord)) {
    log.warnings.push_back(truncationWarning(path, body % sizeof(EventRecord), n));
  }
  return log;
}

Result<void> checkLogMatches(const LogFile& log, const Schedule& schedule, const std::string& scheduleOrigin) {
  const std::uint64_t hash = scheduleContentHash(schedule);
  if (log.header.scheduleContentHash != hash)
    return fail(ErrorCode::kValidation,
                log.path + ": the log was written for another schedule (content hash " +
                    hashToHex(log.header.scheduleContentHash) + ", identifier " +
                    std::to_string(log.header.scheduleIdentifier) + "), but " + scheduleOrigin +
                    " has content hash " + hashToHex(hash) + " (identifier " + std::to_string(schedule.identifier) +
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

// The per-iteration tables are indexed by iteration number; a corrupt number must not make them
// huge, so iterations beyond this bound (relative to the record count) are treated as invalid.
std::uint64_t iterationBound(std::size_t records) { return 2 * static_cast<std::uint64_t>(records) + 1024; }

}  // namespace

std::int64_t iterationStartNs(const Schedule& schedule, const LogFile& log, const Analysis& analysis,
                              std::uint32_t hyperepoch, std::uint64_t iteration) {
  if (hyperepoch < analysis.iterationStart.size() && iteration < analysis.iterationStart[hyperepoch].size()) {
    const std::int64_t s = analysis.iterationStart[hyperepoch][iteration];
    if (s != 0) return s;
  }
  const std::int64_t period = hyperepoch < schedule.hyperepochs.size() ? schedule.hyperepochs[hyperepoch].periodNs : 0;
  return log.header.runStartNs + static_cast<std::int64_t>(iteration) * period;
}

Analysis analyze(const Schedule& s, const LogFile& log) {
  Analysis a;
  const std::size_t nRun = s.runnables.size(), nInst = s.instances.size(), nEp = s.epochs.size(),
                    nHyp = s.hyperepochs.size();
  a.runnables.resize(nRun);
  a.resources.resize(s.resources.size());
  a.clients.resize(s.clients.size());
  a.hyperepochs.resize(nHyp);
  a.iterationStart.resize(nHyp);
  a.warnings = log.warnings;

  std::vector<std::uint32_t> frameBase(nEp + 1, 0);
  for (std::size_t e = 0; e < nEp; ++e) frameBase[e + 1] = frameBase[e] + s.epochs[e].frames;
  a.frames.resize(frameBase[nEp]);
  for (std::size_t e = 0; e < nEp; ++e)
    for (std::uint32_t f = 0; f < s.epochs[e].frames; ++f) {
      a.frames[frameBase[e] + f].epoch = static_cast<std::uint32_t>(e);
      a.frames[frameBase[e] + f].frame = f;
    }
  std::vector<std::uint32_t> instHyp(nInst, 0), instEpoch(nInst, 0);
  for (std::size_t i = 0; i < nInst; ++i) {
    const std::uint32_t r = s.instances[i].runnable;
    instEpoch[i] = r < nRun ? s.runnables[r].epoch : 0;
    instHyp[i] = instEpoch[i] < nEp ? s.epochs[instEpoch[i]].hyperepoch : 0;
  }
  const std::uint64_t bound = iterationBound(log.records.size());

  // Pass 1: releases, skips, overruns, drops; sizes of the per-iteration tables.
  std::vector<std::uint64_t> iterCount(nHyp, 0);
  for (const EventRecord& r : log.records) {
    if (r.iteration >= bound) continue;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.instance < nInst)
      iterCount[instHyp[r.instance]] = std::max<std::uint64_t>(iterCount[instHyp[r.instance]], r.iteration + 1ull);
    else if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && r.instance < nEp)
      iterCount[s.epochs[r.instance].hyperepoch] =
          std::max<std::uint64_t>(iterCount[s.epochs[r.instance].hyperepoch], r.iteration + 1ull);
  }
  for (std::size_t h = 0; h < nHyp; ++h) a.iterationStart[h].assign(iterCount[h], 0);
  // Ideal release per (epoch, iteration, frame); 0 = no record.
  std::vector<std::vector<std::int64_t>> release(nEp);
  std::vector<std::vector<std::int64_t>> frameEnd(nEp);
  for (std::size_t e = 0; e < nEp; ++e) {
    release[e].assign(iterCount[s.epochs[e].hyperepoch] * s.epochs[e].frames, 0);
    frameEnd[e].assign(release[e].size(), std::numeric_limits<std::int64_t>::min());
  }
  std::vector<std::vector<std::int64_t>> releaseJitter(a.frames.size());
  std::int64_t base = std::numeric_limits<std::int64_t>::max();

  for (const EventRecord& r : log.records) {
    switch (static_cast<EventKind>(r.kind)) {
      case EventKind::kRun:
        ++a.runRecords;
        break;
      case EventKind::kRelease: {
        if (r.instance >= nEp || r.aux >= s.epochs[r.instance].frames || r.iteration >= bound) {
          ++a.invalidRecords;
          break;
        }
        ++a.releaseRecords;
        const EpochInfo& ep = s.epochs[r.instance];
        const std::size_t slot = static_cast<std::size_t>(r.iteration) * ep.frames + r.aux;
        release[r.instance][slot] = r.startNs;
        FrameStats& fs = a.frames[frameBase[r.instance] + r.aux];
        ++fs.releases;
        releaseJitter[frameBase[r.instance] + r.aux].push_back(r.endNs - r.startNs);
        // The iteration starts at the ideal release of its frame 0 less the frame's offset.
        std::int64_t& start = a.iterationStart[ep.hyperepoch][r.iteration];
        const std::int64_t candidate = r.startNs - static_cast<std::int64_t>(r.aux) * ep.periodNs;
        if (start == 0 || candidate < start) start = candidate;
        base = std::min(base, r.startNs);
        break;
      }
      case EventKind::kSkipped:
        if (r.instance >= nHyp) {
          ++a.invalidRecords;
          break;
        }
        ++a.skippedRecords;
        ++a.hyperepochs[r.instance].skipEvents;
        a.hyperepochs[r.instance].skippedPeriods += r.aux;
        break;
      case EventKind::kOverrun:
        if (r.instance >= nEp || r.aux >= s.epochs[r.instance].frames) {
          ++a.invalidRecords;
          break;
        }
        ++a.overrunRecords;
        ++a.frames[frameBase[r.instance] + r.aux].overruns;
        ++a.hyperepochs[s.epochs[r.instance].hyperepoch].overrunRecords;
        break;
      case EventKind::kDropped:
        ++a.droppedRecords;
        a.lostRecords += r.iteration;
        if (r.instance < a.clients.size()) a.clients[r.instance].droppedRecords += r.iteration;
        break;
      default:
        ++a.invalidRecords;
    }
  }

  // Iterations without a release record: estimate their start from the header (or the runs).
  std::uint64_t estimated = 0;
  for (std::size_t h = 0; h < nHyp; ++h)
    for (std::uint64_t i = 0; i < a.iterationStart[h].size(); ++i)
      if (a.iterationStart[h][i] == 0 && log.header.runStartNs != 0) {
        a.iterationStart[h][i] = log.header.runStartNs + static_cast<std::int64_t>(i) * s.hyperepochs[h].periodNs;
        ++estimated;
      }
  if (estimated)
    a.warnings.push_back(std::to_string(estimated) +
                         " hyperepoch iterations have no release record; their start is estimated from the "
                         "run start and the period");

  // Pass 2: runs.
  std::vector<std::vector<std::int64_t>> jitter(nRun);
  std::vector<std::vector<std::int64_t>> iterEnd(nHyp);
  for (std::size_t h = 0; h < nHyp; ++h) iterEnd[h].assign(iterCount[h], std::numeric_limits<std::int64_t>::min());
  std::vector<long double> resourceBusy(s.resources.size(), 0);
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    if (r.instance >= nInst || r.iteration >= bound || r.endNs < r.startNs ||
        (r.aux != kNone && r.aux >= nRun)) {
      ++a.invalidRecords;
      continue;
    }
    const InstanceInfo& inst = s.instances[r.instance];
    const std::uint32_t h = instHyp[r.instance], e = instEpoch[r.instance];
    base = std::min(base, r.startNs);
    if (r.aux == kNone) {
      ++a.emptyRuns;
      continue;
    }
    const RunnableInfo& ran = s.runnables[r.aux];
    RunnableStats& rs = a.runnables[r.aux];
    const std::int64_t duration = r.endNs - r.startNs;
    std::int64_t iterStart = a.iterationStart[h][r.iteration];
    if (iterStart == 0) iterStart = r.startNs - inst.startNs;  // no release, no header: assume on time
    const std::size_t slot = static_cast<std::size_t>(r.iteration) * s.epochs[e].frames + inst.frame;
    std::int64_t rel = inst.frame < s.epochs[e].frames ? release[e][slot] : 0;
    if (rel == 0) rel = iterStart + static_cast<std::int64_t>(inst.frame) * s.epochs[e].periodNs;
    const std::int64_t sinceRelease = r.endNs - rel;

    rs.durations.push_back(duration);
    jitter[r.aux].push_back(r.startNs - (iterStart + inst.startNs));
    ClientStats& cs = a.clients[ran.client < a.clients.size() ? ran.client : 0];
    ++cs.runs;
    cs.busyNs += duration;
    if (duration > ran.wcetNs) {
      ++rs.overrunsWcet;
      ++cs.overrunsWcet;
      rs.worstOverrunNs = std::max(rs.worstOverrunNs, duration - ran.wcetNs);
    }
    if (ran.endMonitorThresholdNs != kNoDuration && duration > ran.endMonitorThresholdNs) {
      ++rs.endMonitorViolations;
      ++cs.endMonitorViolations;
    }
    if (ran.deadlineNs != kNoDuration && sinceRelease > ran.deadlineNs) {
      ++rs.deadlineMisses;
      ++cs.deadlineMisses;
      if (inst.frame < s.epochs[e].frames) ++a.frames[frameBase[e] + inst.frame].deadlineMisses;
    }
    if (inst.frame < s.epochs[e].frames) frameEnd[e][slot] = std::max(frameEnd[e][slot], r.endNs);
    iterEnd[h][r.iteration] = std::max(iterEnd[h][r.iteration], r.endNs);
    for (std::uint32_t res : inst.resources)
      if (res < resourceBusy.size()) {
        resourceBusy[res] += duration;
        ++a.resources[res].runs;
      }
  }
  a.baseNs = base == std::numeric_limits<std::int64_t>::max() ? 0 : base;

  for (std::size_t r = 0; r < nRun; ++r) {
    a.runnables[r].duration = summarize(a.runnables[r].durations);
    a.runnables[r].startJitter = summarize(jitter[r]);
    jitter[r] = {};
  }
  for (std::size_t e = 0; e < nEp; ++e) {
    const EpochInfo& ep = s.epochs[e];
    std::vector<std::vector<std::int64_t>> spans(ep.frames);
    for (std::size_t slot = 0; slot < frameEnd[e].size(); ++slot) {
      if (frameEnd[e][slot] == std::numeric_limits<std::int64_t>::min()) continue;
      const std::uint64_t it = slot / ep.frames;
      const std::uint32_t f = static_cast<std::uint32_t>(slot % ep.frames);
      std::int64_t rel = release[e][slot];
      if (rel == 0) rel = a.iterationStart[ep.hyperepoch][it] + static_cast<std::int64_t>(f) * ep.periodNs;
      spans[f].push_back(frameEnd[e][slot] - rel);
    }
    for (std::uint32_t f = 0; f < ep.frames; ++f) {
      a.frames[frameBase[e] + f].span = summarize(spans[f]);
      a.frames[frameBase[e] + f].releaseJitter = summarize(releaseJitter[frameBase[e] + f]);
    }
  }
  for (std::size_t h = 0; h < nHyp; ++h) {
    std::vector<std::int64_t> spans;
    HyperepochStats& hs = a.hyperepochs[h];
    for (std::uint64_t i = 0; i < iterCount[h]; ++i) {
      if (iterEnd[h][i] == std::numeric_limits<std::int64_t>::min() && a.iterationStart[h][i] == 0) continue;
      ++hs.iterations;
      if (iterEnd[h][i] == std::numeric_limits<std::int64_t>::min() || a.iterationStart[h][i] == 0) continue;
      const std::int64_t span = iterEnd[h][i] - a.iterationStart[h][i];
      spans.push_back(span);
      if (s.hyperepochs[h].monitorNs != kNoDuration && span > s.hyperepochs[h].monitorNs) ++hs.monitorViolations;
    }
    hs.span = summarize(spans);
  }
  for (std::size_t res = 0; res < s.resources.size(); ++res) {
    ResourceStats& rs = a.resources[res];
    const std::uint32_t h = s.resources[res].hyperepoch;
    if (h < nHyp) {
      rs.periodNs = s.hyperepochs[h].periodNs;
      const std::uint64_t its = a.hyperepochs[h].iterations;
      rs.measuredBusyNs = its ? static_cast<double>(resourceBusy[res] / its) : 0.0;
    }
  }
  for (const InstanceInfo& inst : s.instances)
    for (std::uint32_t res : inst.resources)
      if (res < a.resources.size()) a.resources[res].plannedBusyNs += inst.endNs - inst.startNs;

  if (a.invalidRecords)
    a.warnings.push_back(std::to_string(a.invalidRecords) +
                         " records have an unknown kind or an index outside the schedule and were ignored "
                         "(a corrupt log, or one from another schedule)");
  if (a.lostRecords)
    a.warnings.push_back("the runtime lost " + std::to_string(a.lostRecords) +
                         " records (client rings full); statistics are of the records kept");
  return a;
}

}  // namespace tactus::report
