#include "record/run_recording.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <system_error>

#include "master.hpp"
#include "run/run.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/record/format.hpp"

namespace tactus::master::record {

namespace fs = std::filesystem;
using namespace tactus::record;

namespace {

std::int64_t clockNs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The channels' names, each ended by '\n', and a hash of their layout (id, name, size, depth).
std::string channelNames(const Schedule& s, std::uint64_t& layoutHash) {
  std::string names;
  layoutHash = kHashSeed;
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    const ChannelInfo& ch = s.channels[c];
    names += ch.name + "\n";
    layoutHash = hashBytes(layoutHash, std::to_string(c) + " " + ch.name + " " + std::to_string(ch.sizeBytes) + " " +
                                           std::to_string(ch.depth) + ";");
  }
  return names;
}

std::int64_t pollUs() {
  const char* knob = std::getenv("TACTUS_RECORD_POLL_US");  // a test knob: the copier's period
  const long us = knob != nullptr ? std::strtol(knob, nullptr, 10) : 1000;
  return us > 0 ? us : 1000;
}

// A multi-SoC run's clock records (nothing for one SoC): a follower's estimate of the primary's
// clock (the primary's minus its own, the opposite sign of the event log's kClockOffset, and its
// bound; -1: the one-way fallback, no bound known), once there is one; the primary's own file says
// it is the primary by a record that names itself, offset 0 within 0. The SocRun outlives the
// recorder (Run's modes_ outlive its hooks_); offsetRecord reads the estimate under its lock.
ClockSource clockSource(const SocRun* soc) {
  if (soc == nullptr) return {};
  return [soc](std::int64_t nowNs) -> std::optional<ClockOffsetRecord> {
    const EventRecord r = soc->offsetRecord();
    if (soc->follower() && r.iteration == 0) return std::nullopt;  // no release sample nor answer yet
    return ClockOffsetRecord{-r.startNs, r.endNs, nowNs, r.instance, 0};
  };
}

}  // namespace

ScheduleRecord scheduleRecord(const Schedule& schedule, std::uint64_t contentHash, std::string& text) {
  std::uint64_t layout = 0;
  text = schedule.name + channelNames(schedule, layout);
  return ScheduleRecord{contentHash,
                        schedule.identifier,
                        static_cast<std::uint32_t>(schedule.channels.size()),
                        static_cast<std::uint32_t>(schedule.instances.size()),
                        static_cast<std::uint32_t>(schedule.name.size()),
                        layout,
                        static_cast<std::uint32_t>(text.size() - schedule.name.size()),
                        0};
}

RunRecording::RunRecording(const MasterOptions& options) : o_(options) {}
RunRecording::~RunRecording() = default;

Result<void> RunRecording::loaded(std::vector<std::unique_ptr<Mode>>& modes) {
  const MasterOptions& o = o_;
  const Schedule& first = modes.front()->schedule;
  dir_ = o.recordDir;
  required_ = o.recordRequired;
  replay_ = !o.replayDir.empty();
  for (std::uint32_t k = 0; k < first.socs.size(); ++k)
    if (first.socs[k].name == o.soc) soc_ = k;
  path_ = (fs::path(dir_) / recordingFileName(soc_)).lexically_normal().string();
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    return fail(ErrorCode::kBadParameter, "--record " + dir_ + ": not a folder");
  // The SoCs of one multi-SoC run share the folder: each refuses only its own file there.
  const bool taken = o.soc.empty() ? fs::is_directory(dir_, ec) && !fs::is_empty(dir_, ec) : fs::exists(path_, ec);
  if (taken && !o.recordOverwrite)
    return fail(ErrorCode::kAlreadyExists,
                "--record " + dir_ +
                    (o.soc.empty() ? ": the folder exists and is not empty" : ": " + path_ + " exists") +
                    " (--record-overwrite replaces the recording)");
  if (taken) fs::remove(path_, ec);
  fs::create_directories(dir_, ec);
  if (ec) return fail(ErrorCode::kIo, "--record " + dir_ + ": " + ec.message());
  return {};
}

EventTap* RunRecording::add(const shm::SegmentView& view, const Schedule& schedule, std::uint64_t contentHash) {
  modes_.push_back({&view, &schedule, contentHash});
  return &taps_.emplace_back(*this, modes_.size() - 1);
}

// The copier runs from before the first release: the recording starts at the run's first writer
// runs however late the monitor loop gets to started() (a follower SoC's release threads run its
// first iteration at once, as the primary's already started).
void RunRecording::starting(std::vector<std::unique_ptr<Mode>>& modes) {
  for (auto& m : modes) m->drain->setEventTap(add(m->owner->view(), m->schedule, m->contentHash));
  if (modes_.empty()) return;
  recorder_ = std::make_unique<Recorder>(modes_, pollUs(), clockSource(modes.front()->soc.get()), idealOf_);
  live_.store(recorder_.get(), std::memory_order_release);
}

void RunRecording::started(std::vector<std::unique_ptr<Mode>>&, std::int64_t runStartNs, std::ostream& err) {
  if (!recorder_) return;
  const Schedule& first = *modes_.front().schedule;
  auto writer = Writer::create(path_, makeFileHeader(modes_.front().contentHash, soc_, replay_ ? kFlagReplay : 0));
  Result<void> ok;
  if (writer) {
    const RunRecord run{runStartNs, clockNs(CLOCK_REALTIME), static_cast<std::uint32_t>(::getpid()),
                        static_cast<std::uint32_t>(first.socs.size()), 0};
    ok = writer->append(ChunkType::kRun, run);
    for (const RecordedMode& m : modes_) {
      if (!ok) break;
      std::string text;
      const ScheduleRecord s = scheduleRecord(*m.schedule, m.contentHash, text);
      ok = writer->append(ChunkType::kSchedule, s, text.data(), text.size());
    }
  } else {
    ok = writer.error();
  }
  if (!ok) {
    err << "tactus-master: --record: " << ok.error().message << (required_ ? "" : "; the run goes on unrecorded")
        << "\n";
    startFailed_ = true;
    startError_ = ok.error().message;
    live_.store(nullptr, std::memory_order_release);
    // A release thread may be in catchUp: it holds the recorder's copy lock, which
    // finish's join of the copier does not wait for. Stopped, it is kept until the run ends.
    (void)recorder_->finish(0, 0);
    return;
  }
  recorder_->write(std::move(*writer));
}

std::string RunRecording::endNow() {
  if (!required_ || endAsked_) return {};
  std::string why;
  if (startFailed_) {
    why = "the recording could not start (" + startError_ + ")";
  } else if (recorder_ && recorder_->lost() > 0) {
    const std::string first = recorder_->firstLoss();
    why = "the recording lost a version (" + (first.empty() ? recorder_->lossText() : first) + ")";
  }
  if (why.empty()) return {};
  endAsked_ = true;
  return "--record-required: " + why + ": the run ends";
}

void RunRecording::beforeRelease() {
  if (Recorder* r = live_.load(std::memory_order_acquire); r != nullptr) r->catchUpIfBehind();
}

int RunRecording::finished(int code, std::ostream& out, std::ostream& err) {
  if (startFailed_ && required_ && code == kExitOk) return kExitRunFailed;
  if (!recorder_ || startFailed_) return code;
  live_.store(nullptr, std::memory_order_release);  // the release threads have ended
  auto ok = recorder_->finish(code, clockNs(CLOCK_MONOTONIC));
  const std::uint64_t lost = recorder_->lost();
  if (!ok) {
    err << "tactus-master: recording " << path_ << ": " << ok.error().message << "\n";
    return code == kExitOk ? kExitRunFailed : code;
  }
  if (lost > 0) {
    err << "tactus-master: recording " << path_ << " LOST " << lost << " versions (" << recorder_->lossText()
        << "); recorded " << recorder_->versions() << "\n";
    if (required_ && code == kExitOk) {
      err << "tactus-master: --record-required: the run fails because its recording is incomplete\n";
      return kExitRunFailed;
    }
    return code;
  }
  out << "tactus-master: recorded " << recorder_->versions() << " channel versions to " << path_ << "\n";
  return code;
}

}  // namespace tactus::master::record
