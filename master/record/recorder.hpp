// The recorder (docs/design/recording.md): a copier thread polls, every millisecond, the `done`
// word of every channel writer's InstanceSlot; when a writer run has ended it copies the version
// that run left in its buffer, checking the buffer's stamp before and after the copy (a copy torn
// by a later writer run is dropped and counted), and queues it; a writer thread behind a bounded
// queue (64 MiB) appends it to the recording file. Neither thread touches the workers' path: the
// copier only reads shared memory. What cannot be recorded (queue full, torn, overwritten, write
// failed) is counted, written as a lost record and said at the end.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "roles/log_drain.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/record/writer.hpp"

namespace tactus::master::record {

/// A schedule the recorder watches: its segment and its schedule (both outlive the recorder).
struct RecordedMode {
  const shm::SegmentView* view = nullptr;
  const Schedule* schedule = nullptr;
  std::uint64_t contentHash = 0;
};

/// Counts by tactus::record::LossReason (index = reason).
struct LossCounts {
  std::atomic<std::uint64_t> byReason[5] = {};
  std::uint64_t total() const;
};

/// A multi-SoC run's clock against the primary's, now (SocRun::offsetRecord's estimate; atNs is
/// the caller's `nowNs`), or nothing while there is no estimate yet.
using ClockSource = std::function<std::optional<tactus::record::ClockOffsetRecord>(std::int64_t nowNs)>;
/// A replay's (--replay A --record B): the ideal time a release record holds, given the live one:
/// the recorded run's, which the logical clock handed out (so a replay of B hands out A's again).
using IdealOf = std::function<std::int64_t(const tactus::record::ReleaseRecord& live)>;

class Recorder {
 public:
  /// Bytes the queue may hold before a version is dropped (counted as lost).
  static constexpr std::uint64_t kQueueBytes = 64ULL << 20;
  /// kQueueBytes, or TACTUS_RECORD_QUEUE_BYTES (a test knob: 1 makes every version a loss, the way
  /// a disk that cannot keep up does).
  static std::uint64_t queueBytes();

  /// Starts the copier, before the run's first release (its writer runs are copied from there on;
  /// a follower SoC runs its first iteration as soon as its release threads start), and queues
  /// what it copies until write() gives it the file. `pollUs`: the copier's period. `clock` (a
  /// multi-SoC run's, else empty): the writer thread records the estimate first, then whenever it
  /// changed (looked at every 100 ms), and at the end.
  Recorder(std::vector<RecordedMode> modes, std::int64_t pollUs, ClockSource clock = {}, IdealOf ideal = {});
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();

  /// Takes the open writer (its run and schedule records written) and starts the writer thread.
  void write(tactus::record::Writer writer);

  /// Copies what is left, stops both threads, writes the losses and the end record and closes the
  /// file (without write(): only stops the copier). Returns the write error, if any.
  Result<void> finish(int exitCode, std::int64_t endNs);

  /// Copies, on the caller's thread, every writer run that has ended and was not copied yet (a
  /// recorded run's release threads, before each release: roles/releaser.hpp's ReleaseGate).
  void catchUp();
  /// The release threads' call before each release (roles/releaser.hpp's ReleaseGate): nothing
  /// (a load per channel writer) while the copier keeps up; else catchUp, so that no writer run
  /// the release starts reuses a buffer whose version was not copied (a copier starved of CPU
  /// would otherwise lose it, overwritten).
  void catchUpIfBehind();

  /// The tap to set on mode k's drain (it outlives the recorder's use; ignores records after finish).
  EventTap* tap(std::size_t k) { return &taps_.at(k); }

  std::uint64_t versions() const { return versions_.load(); }
  std::uint64_t lost() const { return losses_.total(); }
  /// "12 queue full, 1 torn copy" (empty without losses).
  std::string lossText() const;
  /// The first loss: "overwritten before copied, channel 'Mid', iteration 12" (empty without).
  std::string firstLoss() const;

 private:
  struct Writer {
    std::uint32_t mode = 0;
    const ChannelWrite* write = nullptr;
    std::uint64_t seen = 0;  // iterations of the writer run seen done (64-bit, from the wrapping word)
  };
  struct Item {
    tactus::record::ChunkType type = tactus::record::ChunkType::kVersion;
    tactus::record::VersionRecord rec{};  ///< a version's; or a release's or switch's bytes
    std::size_t fixedBytes = sizeof(tactus::record::VersionRecord);
    std::vector<std::byte> data;
  };
  /// One schedule's tap on its drain: releases and schedule switches.
  class Tap : public EventTap {
   public:
    Tap(Recorder& recorder, std::uint32_t identifier) : recorder_(recorder), identifier_(identifier) {}
    void see(const EventRecord* records, std::size_t count) override;

   private:
    Recorder& recorder_;
    std::uint32_t identifier_;
  };
  void queueEvent(tactus::record::ChunkType type, const void* fixed, std::size_t bytes);

  void copyLoop();
  void pollOnce();
  void copyVersion(const Writer& w, std::uint64_t h);
  void lose(tactus::record::LossReason reason, std::uint32_t mode, std::uint32_t channel, std::uint64_t iteration);
  std::uint32_t modeOf(std::uint32_t scheduleId) const;
  void writeLoop();
  void writeLosses();
  void writeClock(std::int64_t nowNs, bool force);

  std::mutex copyLock_;  // pollOnce: the copier's and catchUp's callers
  tactus::record::Writer file_;
  std::vector<RecordedMode> modes_;
  std::vector<std::vector<shm::ChannelRing>> rings_;  // per mode
  std::vector<Writer> writers_;
  std::vector<std::atomic<std::uint32_t>> copied_;  // per writer: its seen's low word, for catchUpIfBehind
  std::int64_t pollUs_;

  std::mutex lock_;
  std::condition_variable ready_;
  std::deque<Item> queue_;
  std::uint64_t queuedBytes_ = 0;
  const std::uint64_t queueLimit_ = queueBytes();
  bool copierDone_ = false;

  LossCounts losses_;
  std::uint64_t lossesWritten_[5] = {};
  std::atomic<std::uint64_t> firstLostIteration_{0};
  mutable std::mutex firstLossLock_;
  std::string firstLoss_;  // under firstLossLock_
  std::atomic<std::uint64_t> versions_{0};
  std::atomic<bool> stop_{false};
  Error writeError_;
  bool writeFailed_ = false;
  bool writing_ = false;  // write() gave the file
  ClockSource clock_;
  IdealOf ideal_;
  std::int64_t clockLookedNs_ = 0;                                 // the writer thread's: when it last looked
  std::optional<tactus::record::ClockOffsetRecord> clockWritten_;  // ... and the estimate it last wrote
  std::deque<Tap> taps_;                                           // per mode
  bool finished_ = false;  // under lock_: a tap's record after finish is dropped
  std::thread copier_;
  std::thread writer_;
};

}  // namespace tactus::master::record
