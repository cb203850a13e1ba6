// Shared-memory segments: one named POSIX shared-memory object per tactus instance, mapped
// read-write. Boost.Interprocess does the work; its types stay inside segment.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tactus/core/result.hpp"

namespace tactus::ipc {

/// The default instance name (STM's discriminator) when none is given.
inline constexpr const char* kDefaultInstance = "default";

/// Checks an instance name: 1..64 characters of [A-Za-z0-9_.-], not starting with '.'.
Result<void> validateInstanceName(const std::string& instance);

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Removes the segment's name (mappings stay valid). True when a name was removed.
bool removeSegment(const std::string& instance);

/// Whether a segment with this instance name exists.
bool segmentExists(const std::string& instance);

}  // namespace tactus::ipc
