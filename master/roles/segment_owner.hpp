// The master's segment owner: creates the instance's segment (replacing a stale one, refusing a
// live master's, explaining a foreign file it cannot remove), fills and publishes it, publishes
// the end of the run, watches the segment for damage and removes it at the end.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "roles/run_control.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {

/// Owns one instance's segment for the life of a run.
class SegmentOwner {
 public:
  /// `err` receives notes on replaced stale segments.
  SegmentOwner(std::string instance, std::ostream& err) : instance_(std::move(instance)), err_(err) {}
  SegmentOwner(const SegmentOwner&) = delete;
  SegmentOwner& operator=(const SegmentOwner&) = delete;
  /// Removes the segment's name if it still names this segment.
  ~SegmentOwner() { remove(); }

  /// Creates and maps the segment for `counts`, writes its header and slots (state kCreating)
  /// and this process's identity, and guards the mapping against truncation. kAlreadyExists when
  /// a live master owns the instance; kIo with the system's reason for a file it cannot replace.
  Result<void> create(const shm::LayoutCounts& counts);

  /// The segment's view (its geometry is the master's private copy).
  const shm::SegmentView& view() const { return view_; }

  /// Writes what clients read once at attach (flags, the schedule's identity and text), keeping
  /// a private copy to check the header against (state kCreating).
  void describe(std::uint32_t flags, std::uint64_t contentHash, std::uint16_t identifier, std::string_view text);

  /// Several schedules (-N): writes this segment's scheduleCount and scheduleIndex (state
  /// kCreating), kept to check the header against.
  void describeSchedules(std::uint32_t count, std::uint32_t index);

  /// Moves the state to kPublished (clients may attach) and wakes the sleepers.
  void publish();

  /// Moves the state to kRunning with frame 0 at `runStartNs` and wakes the sleepers.
  void startRun(std::int64_t runStartNs);

  /// Publishes the end of the run: removes the name first (see remove()), then message, reason,
  /// client and the state; wakes every sleeper.
  void publishEnd(const RunEnd& end);
  /// Says in the header that this master is stopping (a signal asked it to), before its run ends:
  /// a new master for the instance then waits for it instead of refusing the instance as taken.
  void markStopping(shm::StopReason reason);

  /// Checks the segment for damage: truncated (fstat, or a SIGBUS on the mapping), replaced or
  /// removed at its name, or a header field only the master writes (identity, geometry, state)
  /// holding another value than the master wrote. The end to publish, or nothing when whole.
  std::optional<RunEnd> checkDamage() const;

  /// Removes the name if it still refers to this segment (never a newer master's or a foreign
  /// file put there meanwhile). Idempotent.
  void remove();

 private:
  Result<ipc::Segment> createNamed(std::size_t size);

  std::string instance_;
  std::ostream& err_;
  ipc::Segment segment_;
  shm::SegmentView view_;
  bool owned_ = false;
  // What the master wrote into the header, to compare with what it holds.
  std::uint32_t pid_ = 0;
  std::uint64_t startTime_ = 0;
  std::uint32_t flags_ = 0;
  std::uint64_t contentHash_ = 0;
  std::uint16_t identifier_ = 0;
  std::uint32_t scheduleCount_ = 1;
  std::uint32_t scheduleIndex_ = 0;
  shm::SegmentState state_ = shm::SegmentState::kCreating;
};

}  // namespace tactus::master
