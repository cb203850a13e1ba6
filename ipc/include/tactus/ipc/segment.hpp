// Shared-memory segments: one named POSIX shared-memory object per tactus instance, mapped
// read-write. Boost.Interprocess does the work; its types stay inside segment.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::ipc {

/// The default instance name (STM's discriminator) when none is given.
inline constexpr const char* kDefaultInstance = "default";

/// Checks an instance name: 1..64 characters of [A-Za-z0-9_.-], not starting with '.'.
Result<void> validateInstanceName(const std::string& instance);

/// An instance a process works on and where its name came from: `given` (from `givenSource`), else
/// $TACTUS_INSTANCE, else kDefaultInstance (from `defaultSource`). The client, the manager and
/// tactus-top choose alike.
struct ChosenInstance {
  std::string name;
  std::string source;
};
ChosenInstance chooseInstance(const std::string& given, const std::string& givenSource = "",
                              const std::string& defaultSource = "");

/// The shared-memory object name of an instance: `tactus_<instance>`. The one place that names
/// segments; the object appears as /dev/shm/tactus_<instance>.
std::string segmentName(const std::string& instance);

/// The file system path where the segment of an instance shows (for messages and tests).
std::string segmentPath(const std::string& instance);

/// A mapped shared-memory segment. Movable, not copyable; unmaps on destruction (the name stays
/// until removeSegment).
class Segment {
 public:
  /// Creates the segment exclusively (fails with kAlreadyExists if the name exists), mode 0600,
  /// sized `size` bytes and zero-filled, and maps it.
  static Result<Segment> create(const std::string& instance, std::size_t size);

  /// Opens and maps an existing segment (kNotFound when there is none).
  static Result<Segment> open(const std::string& instance);

  /// Opens and maps an existing segment read-only: an observer (tactus-top, tactus-manager status
  /// on a plain run) that cannot write into the run even by mistake. kNotFound when there is none.
  static Result<Segment> openReadOnly(const std::string& instance);

  Segment();
  Segment(Segment&&) noexcept;
  Segment& operator=(Segment&&) noexcept;
  ~Segment();

  /// The mapped bytes (empty for a default-constructed Segment).
  std::span<std::byte> bytes() const;

  /// Removes the instance's name only if it still names this very segment (same device and
  /// inode as the open object), so that a newer master's fresh segment is never removed. True
  /// when the name was removed. Used by a client that saw its master die.
  bool removeNameIfStillOurs(const std::string& instance) const;

  /// Checks that the segment is still whole: its object is at least as large as the mapping
  /// (fstat) and, with `checkName`, the instance's name still refers to it (same device and inode).
  /// "" when it is, else what happened, in words ("truncated to 4096 of 81920 bytes"). A guarded
  /// mapping that took a SIGBUS is damaged even where the object has grown back since: "truncated
  /// (<who>'s mapping took a SIGBUS)". The fault is read before the size, so a truncation that
  /// lands between the two is named by its size, never missed.
  std::string damage(const std::string& instance, bool checkName, const std::string& who = "this process") const;

  /// Takes an advisory write lock on byte `offset` of the segment's object for as long as this
  /// Segment lives: an open-file-description lock, so that another open and close of the same
  /// object in this process leaves it alone, and a process that dies drops it. 0, or the errno
  /// (EAGAIN: another open of the object holds it). Proves a claim to readers who cannot read the
  /// claimant's memory maps (lockHeldElsewhere).
  int holdLock(std::size_t offset) const;

  /// Whether another open of the object holds the lock on byte `offset` (holdLock); false also
  /// when the kernel cannot say.
  bool lockHeldElsewhere(std::size_t offset) const;

  /// Makes a SIGBUS on this mapping (its object truncated under it) an orderly event: the faulting
  /// page is replaced by a private zero page and busFault() turns true, instead of the process
  /// dying. Every segment a master or client maps can be guarded at once (2 * kMaxSchedules + 8
  /// mappings per process); the guard ends with the Segment.
  void guardAgainstTruncation() const;
  /// Whether this guarded mapping took a SIGBUS (its object was truncated under it).
  bool busFault() const noexcept;

 private:
  struct Impl;
  static Result<Segment> openMapped(const std::string& instance, bool readOnly);
  std::unique_ptr<Impl> impl_;
};

/// What is at the instance's name when it is not a segment this user can use: type, owner and
/// mode of the file (lstat), and what to do about it; "" when nothing is there.
std::string describeForeignFile(const std::string& instance);

/// Removes the segment's name (mappings stay valid). True when a name was removed.
bool removeSegment(const std::string& instance);

/// Removes the segment's name; the error carries the system's reason (errno) and what to do.
Result<void> unlinkSegment(const std::string& instance);

/// Whether anything (a segment, or a foreign file or link) is at this instance's name.
bool segmentExists(const std::string& instance);

/// Removes what dead masters left of the group `instance` belongs to: its schedules' segments
/// (`<base>`, `<base>.schedule<k>`) and its run's manager channel (`<run>.manager`), so that a
/// master killed at any instant (even while it created them) leaves nothing once anyone looks.
/// A member goes when it names a master that is gone and no master holds its owner lock, or names
/// none, no master holds its lock and it is over a second old (a master fills its header within
/// milliseconds).
/// Returns each removed member's path and why it went.
std::vector<std::string> removeDeadMastersGroup(const std::string& instance);

}  // namespace tactus::ipc
