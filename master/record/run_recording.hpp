// The master's side of --record (docs/guide/record-replay.md): checks the folder before the run
// (refused when it exists and is not empty, unless --record-overwrite), writes the run and schedule
// records when the run starts, runs the Recorder, and at the end writes the end record and says
// what was recorded and lost (--record-required: a loss makes the run fail, exit 1, named).
// Kept apart from run.cpp, which calls prepare, start and finish.
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "record/recorder.hpp"
#include "tactus/core/result.hpp"

namespace tactus::master {
struct MasterOptions;
}

namespace tactus::master::record {

class RunRecording {
 public:
  RunRecording();
  ~RunRecording();
  RunRecording(const RunRecording&) = delete;
  RunRecording& operator=(const RunRecording&) = delete;

  /// Before any client: checks and makes the folder (nothing without --record); `first` is the
  /// run's first schedule (its SoC list names this master's file).
  Result<void> prepare(const MasterOptions& options, const Schedule& first);
  /// A schedule of the run (before start); returns the tap for its drain (nullptr without --record).
  EventTap* add(const shm::SegmentView& view, const Schedule& schedule, std::uint64_t contentHash);
  /// Opens soc<k>.trec, writes the run and schedule records and starts the recorder; an error is
  /// said on `err` and the run goes on unrecorded (with --record-required it fails at its end).
  void start(std::int64_t runStartNs, std::ostream& err);
  /// Ends the recording; returns the run's exit code (kExitRunFailed after a loss with
  /// --record-required, or a write failure), saying what was recorded on `out` and losses on `err`.
  int finish(int code, std::ostream& out, std::ostream& err);
  /// Whether a loss was seen so far (for --record-required).
  bool lost() const { return recorder_ && recorder_->lost() > 0; }

 private:
  std::string dir_;
  bool required_ = false;
  std::uint32_t soc_ = 0;
  std::vector<RecordedMode> modes_;
  std::unique_ptr<Recorder> recorder_;
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
};

}  // namespace tactus::master::record
