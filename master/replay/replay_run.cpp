#include "replay/replay_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include "deploy/deploy_env.hpp"
#include "master.hpp"
#include "record/run_recording.hpp"
#include "run/run.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/replay_layout.hpp"
#include "tactus/core/text.hpp"

namespace tactus::master::replay {

using tactus::record::RecordingFile;

namespace {

// This master's SoC (-x) in `s`: its index in the SoC list, kNone for a single-SoC schedule (its
// clients' SoC too).
std::uint32_t ownSoc(const MasterOptions& o, const Schedule& s) {
  for (std::uint32_t k = 0; k < s.socs.size(); ++k)
    if (s.socs[k].name == o.soc) return k;
  return kNone;
}

// The recording's file of this master's SoC (soc0.trec for a single-SoC run).
Result<RecordingFile> readOwnFile(const MasterOptions& o, const Schedule& first) {
  auto files = tactus::record::readRecordingDir(o.replayDir);
  if (!files) return fail(files.error().code, "--replay " + o.replayDir + ": " + files.error().message);
  const std::uint32_t soc = first.socs.empty() ? 0 : ownSoc(o, first);
  if (soc >= files->size())
    return fail(ErrorCode::kBadParameter, "--replay " + o.replayDir + ": it holds no recording of SoC " +
                                              std::to_string(soc) + " (" + tactus::record::recordingFileName(soc) +
                                              ")");
  return std::move((*files)[soc]);
}

bool releaseOrder(const tactus::record::ReleaseRecord& a, const tactus::record::ReleaseRecord& b) {
  return std::tie(a.scheduleId, a.epoch, a.iteration, a.frame) < std::tie(b.scheduleId, b.epoch, b.iteration, b.frame);
}

std::string runnableName(const Schedule& s, RunnableId r) {
  return s.clients[s.runnables[r].client].name + "." + s.runnables[r].name;
}

}  // namespace

ReplayRun::~ReplayRun() {
  if (!segmentName_.empty()) ipc::removeSegment(segmentName_);
}

Result<void> ReplayRun::loaded(std::vector<std::unique_ptr<Mode>>& modes) {
  auto file = readOwnFile(o_, modes.front()->schedule);
  if (!file) return file.error();
  file_ = std::move(*file);
  if (auto ok = checkManaged(); !ok) return ok;
  if (auto ok = checkSchedules(modes); !ok) return ok;
  if (auto ok = chooseSources(modes); !ok) return ok;
  // The recording's iterations: every one released, less the last of a recording cut short (its
  // versions may be cut with it).
  std::uint64_t released = 0;
  for (const tactus::record::ReleaseRecord& r : file_.releases) released = std::max(released, r.iteration + 1);
  recordedIterations_ = file_.end || released == 0 ? released : released - 1;
  if (recordedIterations_ == 0)
    return fail(ErrorCode::kBadParameter,
                "--replay " + o_.replayDir + ": " + file_.path + " holds no complete iteration to replay");
  if (!file_.losses.empty()) {
    std::uint64_t lost = 0;
    for (const auto& l : file_.losses) lost += l.count;
    warning_ = "tactus-master: warning: --replay " + file_.path + " lost " + std::to_string(lost) +
               " versions when it was recorded: a source's lost version is not replayed\n";
  }
  if (auto ok = readSwitches(modes); !ok) return ok;
  scaleReleases(modes);
  releases_ = file_.releases;
  std::sort(releases_.begin(), releases_.end(), releaseOrder);
  return {};
}

std::int64_t ReplayRun::recordedIdealNs(const tactus::record::ReleaseRecord& live) const {
  const auto at = std::lower_bound(releases_.begin(), releases_.end(), live, releaseOrder);
  return at != releases_.end() && !releaseOrder(live, *at) ? at->idealNs : live.idealNs;
}

// A recording of a managed run (it holds switch records) replays under -N only, and one of a
// run without a manager only without -N.
Result<void> ReplayRun::checkManaged() const {
  const std::string where = "--replay " + file_.path + ": ";
  if (o_.managerName.empty() && !file_.switches.empty())
    return fail(ErrorCode::kBadParameter, where + "it recorded a run under a schedule manager (" +
                                              std::to_string(file_.switches.size()) +
                                              " switch records): replay it with -N");
  if (!o_.managerName.empty() && file_.switches.empty())
    return fail(ErrorCode::kBadParameter,
                where + "it recorded a run without a schedule manager (no switch records): replay it without -N");
  return {};
}

// Under -N the replay makes the recorded switches itself, each at its recorded iteration
// (switch_script.hpp).
Result<void> ReplayRun::readSwitches(const std::vector<std::unique_ptr<Mode>>& modes) {
  const std::string where = "--replay " + file_.path + ": ";
  if (o_.managerName.empty()) return {};
  if (!o_.policyPath.empty())
    return fail(ErrorCode::kBadParameter,
                "--policy cannot be combined with --replay: the replay makes the recorded switches");
  for (const auto& m : modes) {
    std::size_t running = 0;
    for (HyperepochId he : m->schedule.hyperepochs.ids()) running += m->plan.hyperepochs[he].instances.empty() ? 0 : 1;
    if (running > 1)
      return fail(ErrorCode::kBadParameter,
                  where + "schedule " + std::to_string(m->schedule.identifier) + " runs " + std::to_string(running) +
                      " hyperepochs here: a managed replay makes the recorded switches of schedules of one "
                      "hyperepoch only (a switch record does not name its hyperepoch)");
  }
  std::map<std::uint32_t, std::uint64_t> released;
  for (const tactus::record::ReleaseRecord& r : file_.releases)
    released[r.scheduleId] = std::max(released[r.scheduleId], r.iteration + 1);
  if (!file_.end)  // cut short: its last iteration may be cut with it
    for (auto& [id, n] : released) n = n > 0 ? n - 1 : 0;
  auto script = SwitchScript::read(file_, released);
  if (!script) return script.error();
  script_ = std::move(*script);
  return {};
}

// The recording's schedules against the run's, in order: the same identifiers, content hashes and
// channel layouts (the words of scheduleDifference).
Result<void> ReplayRun::checkSchedules(const std::vector<std::unique_ptr<Mode>>& modes) const {
  const std::string where = "--replay " + file_.path + ": ";
  if (file_.schedules.size() != modes.size())
    return fail(ErrorCode::kBadParameter, where + "it recorded " + std::to_string(file_.schedules.size()) +
                                              " schedules, this run loads " + std::to_string(modes.size()));
  for (std::size_t k = 0; k < modes.size(); ++k) {
    std::string text;
    const auto ours = record::scheduleRecord(modes[k]->schedule, modes[k]->contentHash, text);
    const auto& theirs = file_.schedules[k].rec;
    const std::string which = where + "schedule " + std::to_string(k) + " (" + quoted(file_.schedules[k].name) +
                              " recorded, " + quoted(modes[k]->schedule.name) + " here): ";
    std::string difference;
    if (theirs.identifier != ours.identifier)
      difference = "identifier " + std::to_string(theirs.identifier) + " against " + std::to_string(ours.identifier);
    else if (theirs.contentHash != ours.contentHash)
      difference = "content hash " + hashToHex(theirs.contentHash) + " against " + hashToHex(ours.contentHash);
    else if (theirs.channelCount != ours.channelCount)
      difference = std::to_string(theirs.channelCount) + " channels against " + std::to_string(ours.channelCount);
    else if (theirs.channelLayoutHash != ours.channelLayoutHash)
      difference = "channel layout hash " + hashToHex(theirs.channelLayoutHash) + " against " +
                   hashToHex(ours.channelLayoutHash);
    else if (theirs.instanceCount != ours.instanceCount)
      difference = std::to_string(theirs.instanceCount) + " instances against " + std::to_string(ours.instanceCount);
    if (!difference.empty())
      return fail(ErrorCode::kBadParameter, which + difference + ": a recording replays only on its own schedule");
  }
  return {};
}

// The sources: --replay-sources, or every runnable that writes a channel and reads none; their
// instances, and the recorded versions of those instances, sorted as the segment holds them.
Result<void> ReplayRun::chooseSources(const std::vector<std::unique_ptr<Mode>>& modes) {
  std::set<std::string> unused(o_.replaySources.begin(), o_.replaySources.end());
  for (const auto& m : modes) {
    const Schedule& s = m->schedule;
    IdVector<RunnableId, char> writes(s.runnables.size(), 0), reads(s.runnables.size(), 0);
    for (const ChannelInfo& c : s.channels) {
      writes[c.writer] = 1;
      for (RunnableId r : c.readers) reads[r] = 1;
    }
    for (RunnableId r : s.runnables.ids()) {
      const std::string name = runnableName(s, r);
      const bool named = unused.erase(name) > 0 || std::count(o_.replaySources.begin(), o_.replaySources.end(), name);
      if (named && !writes[r])
        return fail(ErrorCode::kBadParameter, "--replay-sources: " + quoted(name) + " of schedule " + quoted(s.name) +
                                                  " writes no channel: only a channel writer can be replayed");
      const bool source = o_.replaySources.empty() ? writes[r] && !reads[r] : named;
      // A multi-SoC run: another SoC's sources are its master's to replay (from its own file).
      if (!source || s.clients[s.runnables[r].client].soc != ownSoc(o_, s)) continue;
      for (InstanceId i : s.instances.ids())
        if (s.instances[i].runnable == r) sources_.emplace_back(s.identifier, index(i));
    }
  }
  if (!unused.empty())
    return fail(ErrorCode::kBadParameter, "--replay-sources: " + quoted(*unused.begin()) +
                                              " names no runnable of the run's schedules (Client.Runnable)");
  if (sources_.empty())
    return fail(ErrorCode::kBadParameter, "--replay " + o_.replayDir +
                                              ": no runnable to replay (none writes a channel and reads none; "
                                              "name them with --replay-sources)");
  std::sort(sources_.begin(), sources_.end());
  for (const auto& v : file_.versions) {
    const std::pair<std::uint32_t, std::uint32_t> key{v.rec.scheduleId, v.rec.writerInstance};
    if (!std::binary_search(sources_.begin(), sources_.end(), key) || v.rec.iteration == 0) continue;
    versions_.push_back({key.first, key.second, v.rec.channel, v.rec.iteration - 1, &v});
  }
  const auto order = [](const SourceVersion& a, const SourceVersion& b) {
    return std::tie(a.scheduleId, a.instance, a.channel, a.iteration) <
           std::tie(b.scheduleId, b.instance, b.channel, b.iteration);
  };
  std::stable_sort(versions_.begin(), versions_.end(), order);
  // A version recorded twice (never by the recorder) is replayed once: the client wants a strict order.
  versions_.erase(std::unique(versions_.begin(), versions_.end(),
                              [&](const SourceVersion& a, const SourceVersion& b) { return !order(a, b); }),
                  versions_.end());
  return {};
}

// --replay-rate R: the master's release plan runs R times faster (the clients' copy of the
// schedule is the published text, unchanged); 0: every frame at the iteration's start, each gated
// on the previous frame of its epoch, and each iteration once the previous ended (freeRunning).
void ReplayRun::scaleReleases(std::vector<std::unique_ptr<Mode>>& modes) const {
  const double rate = o_.replayRate;
  if (rate == 1.0) return;
  const auto scaled = [rate](std::int64_t ns) -> std::int64_t {
    return rate == 0 ? 0 : static_cast<std::int64_t>(std::llround(static_cast<double>(ns) / rate));
  };
  for (auto& m : modes) {
    for (HyperepochPlan& he : m->plan.hyperepochs)
      for (ReleasePoint& p : he.releases) p.offsetNs = scaled(p.offsetNs);
    for (HyperepochInfo& he : m->schedule.hyperepochs) he.periodNs = std::max<std::int64_t>(1, scaled(he.periodNs));
  }
}

std::uint32_t ReplayRun::segmentFlags() const {
  return shm::kFlagReplay | (o_.replayRate != 1.0 ? shm::kFlagUnplannedReleases : 0u);
}

std::uint64_t ReplayRun::iterations(std::uint64_t given) const {
  return given == 0 ? recordedIterations_ : std::min(given, recordedIterations_);
}

bool ReplayRun::freeRunning() const { return o_.replayRate == 0; }

Result<void> ReplayRun::created(std::vector<std::unique_ptr<Mode>>&, const std::string& instance) {
  const std::vector<std::byte> bytes = replaySegmentBytes(sources_, versions_, file_);
  const std::string name = shm::replayInstanceName(instance);
  ipc::removeSegment(name);  // a dead master's: this master holds the instance's segments now
  auto segment = ipc::Segment::create(name, bytes.size());
  if (!segment) return fail(segment.error().code, "--replay: " + segment.error().message);
  segmentName_ = name;
  if (auto ok = shareSegmentWithGroup(name); !ok) return ok;
  std::memcpy(segment->bytes().data(), bytes.data(), bytes.size());
  segment_ = std::move(*segment);
  return {};
}

void ReplayRun::started(std::vector<std::unique_ptr<Mode>>&, std::int64_t, std::ostream& err) { err << warning_; }

const SwitchScript* ReplayRun::switchScript() const { return script_ ? &*script_ : nullptr; }

int ReplayRun::finished(int code, std::ostream& out, std::ostream&) {
  out << "tactus-master: replayed " << versions_.size() << " source versions of " << sources_.size()
      << " source instances from " << file_.path << " (" << recordedIterations_ << " iterations recorded";
  if (script_) out << ", " << script_->steps().size() << " recorded switches";
  out << ")\n";
  return code;
}

std::vector<std::byte> replaySegmentBytes(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sources,
                                          const std::vector<SourceVersion>& versions, const RecordingFile& file) {
  const auto align = [](std::uint64_t n) { return (n + 63) & ~std::uint64_t{63}; };
  shm::ReplayHeader h{};
  h.magic = shm::kReplayMagic;
  h.layoutVersion = shm::kReplayLayoutVersion;
  h.headerSize = sizeof h;
  h.sourceCount = static_cast<std::uint32_t>(sources.size());
  h.entryCount = static_cast<std::uint32_t>(versions.size());
  h.sourceOffset = align(sizeof h);
  h.entryOffset = align(h.sourceOffset + sources.size() * sizeof(shm::ReplaySource));
  // The recorded releases (the logical clock's values, tactus::logicalNowNs), in the client's
  // lookup order, each frame once.
  std::vector<shm::ReplayRelease> releases;
  for (const tactus::record::ReleaseRecord& r : file.releases)
    releases.push_back({r.iteration & 0xFFFFFFFFu, r.idealNs, r.scheduleId, r.epoch, r.frame, 0});
  const auto key = [](const shm::ReplayRelease& r) { return std::tie(r.scheduleId, r.epoch, r.iteration, r.frame); };
  std::stable_sort(releases.begin(), releases.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  releases.erase(
      std::unique(releases.begin(), releases.end(), [&](const auto& a, const auto& b) { return key(a) == key(b); }),
      releases.end());
  h.releaseCount = static_cast<std::uint32_t>(releases.size());
  h.releaseOffset = align(h.entryOffset + versions.size() * sizeof(shm::ReplayEntry));
  h.dataOffset = align(h.releaseOffset + releases.size() * sizeof(shm::ReplayRelease));
  for (const SourceVersion& v : versions) h.dataSize += align(v.version->rec.dataSize);
  h.totalSize = h.dataOffset + std::max<std::uint64_t>(h.dataSize, 64);
  std::vector<std::byte> out(h.totalSize);
  std::memcpy(out.data(), &h, sizeof h);
  if (!releases.empty())
    std::memcpy(out.data() + h.releaseOffset, releases.data(), releases.size() * sizeof(shm::ReplayRelease));
  std::uint64_t data = h.dataOffset;
  std::size_t at = 0;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    shm::ReplaySource s{sources[k].first, sources[k].second, static_cast<std::uint32_t>(at), 0};
    for (; at < versions.size() && versions[at].scheduleId == s.scheduleId && versions[at].instance == s.instance;
         ++at) {
      const SourceVersion& v = versions[at];
      shm::ReplayEntry e{};
      e.iteration = v.iteration;
      e.writtenNs = v.version->rec.writtenNs;
      e.sourceNs = v.version->rec.sourceNs;
      e.dataOffset = data;
      e.channel = v.channel;
      e.size = v.version->rec.dataSize;
      const std::string_view bytes = file.data(*v.version);
      std::memcpy(out.data() + data, bytes.data(), bytes.size());
      data += align(bytes.size());
      std::memcpy(out.data() + h.entryOffset + at * sizeof e, &e, sizeof e);
      ++s.entryCount;
    }
    std::memcpy(out.data() + h.sourceOffset + k * sizeof s, &s, sizeof s);
  }
  return out;
}

}  // namespace tactus::master::replay
