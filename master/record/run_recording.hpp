// The master's side of --record (docs/guide/record-replay.md): checks the folder before the run
// (refused when it exists and is not empty, unless --record-overwrite), writes the run and schedule
// records when the run starts, runs the Recorder, and at the end writes the end record and says
// what was recorded and lost (--record-required: a loss makes the run fail, exit 1, named).
// A RunHook (run/run_hook.hpp): the run core calls it at load, start and end.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "record/recorder.hpp"
#include "roles/releaser.hpp"
#include "run/run_hook.hpp"
#include "tactus/core/result.hpp"

namespace tactus::master {
struct MasterOptions;
}

namespace tactus::master::record {

/// The schedule record of `schedule` (whose text hashes to `contentHash`), and in `text` the bytes
/// that follow it in the recording (the name, the channels' names); the replay compares it.
tactus::record::ScheduleRecord scheduleRecord(const Schedule& schedule, std::uint64_t contentHash, std::string& text);

class RunRecording : public RunHook, private ReleaseGate {
 public:
  explicit RunRecording(const MasterOptions& options);
  ~RunRecording() override;
  RunRecording(const RunRecording&) = delete;
  RunRecording& operator=(const RunRecording&) = delete;

  /// Before any client: checks and makes the folder; the first schedule's SoC list names this
  /// master's file.
  Result<void> loaded(std::vector<std::unique_ptr<Mode>>& modes) override;
  Result<void> created(std::vector<std::unique_ptr<Mode>>&, const std::string&) override { return {}; }
  /// Before the first release: sets every schedule's drain tap and starts the recorder's copier.
  void starting(std::vector<std::unique_ptr<Mode>>& modes) override;
  /// Opens soc<k>.trec, writes the run and schedule records and starts the recorder's writer; an
  /// error is said on `err` and the run goes on unrecorded (with --record-required the run ends at once: endNow).
  void started(std::vector<std::unique_ptr<Mode>>& modes, std::int64_t runStartNs, std::ostream& err) override;
  /// Ends the recording; returns the run's exit code (kExitRunFailed after a loss with
  /// --record-required, or a write failure), saying what was recorded on `out` and losses on `err`.
  int finished(int code, std::ostream& out, std::ostream& err) override;
  /// --record-required: the end the first loss (or a recording that could not start) asks for.
  std::string endNow() override;
  /// Every release waits until the copier has copied every ended writer run (at once while it
  /// keeps up; a copier starved of CPU is caught up on the release thread).
  ReleaseGate* releaseGate() override { return this; }
  /// A replay's recording (--replay A --record B): its release records hold A's ideal times.
  void setIdealOf(IdealOf ideal) { idealOf_ = std::move(ideal); }
  /// Whether a loss was seen so far (for --record-required).
  bool lost() const { return recorder_ && recorder_->lost() > 0; }

 private:
  EventTap* add(const shm::SegmentView& view, const Schedule& schedule, std::uint64_t contentHash);
  void beforeRelease() override;

  const MasterOptions& o_;
  std::string dir_;
  bool required_ = false;
  bool replay_ = false;  // the run replays a recording: the file header says so
  std::uint32_t soc_ = 0;
  std::vector<RecordedMode> modes_;
  std::unique_ptr<Recorder> recorder_;
  IdealOf idealOf_;
  std::atomic<Recorder*> live_{nullptr};  // recorder_ while it runs, for the release threads
  /// Mode k's drain tap: forwards to the recorder once it runs.
  class ForwardTap : public EventTap {
   public:
    ForwardTap(RunRecording& owner, std::size_t mode) : owner_(owner), mode_(mode) {}
    void see(const EventRecord* records, std::size_t count) override {
      if (owner_.recorder_) owner_.recorder_->tap(mode_)->see(records, count);
    }

   private:
    RunRecording& owner_;
    std::size_t mode_;
  };
  std::deque<ForwardTap> taps_;
  std::string path_;
  bool startFailed_ = false;
  std::string startError_;
  bool endAsked_ = false;  // endNow asked for the end once
};

}  // namespace tactus::master::record
