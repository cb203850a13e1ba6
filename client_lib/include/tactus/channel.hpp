// Channels (a tactus extension of STM): data handed from one writer runnable to its reader
// runnables through buffers in the run's shared memory, each reader run seeing the writer run the
// schedule names (the compiler's mapping, the same in every iteration), with no copy, lock or
// system call on the way.
//
//   // after tactus::init:
//   static const tactus::Channel track = tactus::Channel::find("Track").value();
//   tactus::registerRunnable("Detect", [] {            // the writer
//     Track* t = track.writeAs<Track>().value();        // this run's buffer, to fill
//     ...
//   });
//   tactus::registerRunnable("Plan", [] {               // a reader
//     tactus::Version<Track> v = track.readAs<Track>().value();
//     if (v.status == tactus::VersionStatus::kOk) use(*v.data);
//   });
//
// The writer's buffer is its own until its run ends; a reader's view is read-only and valid until
// its run ends. The ring holds as many buffers as the plan needs so that no writer run ever fills a
// buffer a reader run is still planned to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "tactus/core/result.hpp"

namespace tactus {

/// What a reader run's version of a channel holds.
enum class VersionStatus : std::uint8_t {
  kOk,            ///< the version the schedule names; `data` points at it
  kNoVersionYet,  ///< the schedule's writer run for it comes before the run's first iteration
  kNotWritten,    ///< that writer run did not write it: it was skipped (after an overrun) or ended
                  ///< without taking its buffer; `data` is null, never an older version
};

/// Lower-case name of a status (`ok`, `no-version-yet`, `not-written`).
const char* versionStatusName(VersionStatus status);

/// A reader run's version of a channel.
template <typename T>
struct Version {
  const T* data = nullptr;  ///< the version, read-only until the run ends; null unless kOk
  std::size_t size = 0;     ///< bytes of the channel's buffers (its Size in this schedule)
  VersionStatus status = VersionStatus::kNotWritten;
  std::uint64_t writerIteration = 0;  ///< the hyperepoch iteration of the writer run the schedule names
  std::uint32_t writerInstance = 0;   ///< that writer run's instance (the schedule's InstanceId)
  std::int64_t writtenNs = 0;         ///< CLOCK_MONOTONIC ns at which it took its buffer (kOk only)
  /// CLOCK_MONOTONIC ns of the frame release of the oldest source data the version derives from
  /// (through the channels its writer run read before or after taking the buffer; kOk only).
  std::int64_t sourceNs = 0;
};

/// A channel of the schedule, found by name once; its calls are for runnables of the channel.
class Channel {
 public:
  /// The channel `name` of the running schedule (of any of the schedules under a manager), after
  /// init. Errors: kInvalidState (not initialized), kNotFound (naming the closest channel).
  static Result<Channel> find(const std::string& name);

  /// Inside the writer's run: its buffer for this run (the channel's Size bytes), to fill before
  /// the run ends. Taking it makes it the run's version; taking it again in the run returns the
  /// same buffer. Errors: kInvalidState (outside a runnable), kBadParameter (this runnable does
  /// not write the channel).
  Result<std::span<std::byte>> write() const;
  /// Inside a reader's run: the version the schedule names for this run. Errors: kInvalidState
  /// (outside a runnable), kBadParameter (this runnable does not read the channel).
  Result<Version<std::byte>> read() const;

  /// write() as a T (trivially copyable, no larger than the channel's Size: else kBadParameter).
  /// A refused writeAs takes no buffer: unless the run took it before, its version stays not
  /// written, so its readers never see a buffer nobody filled.
  template <typename T>
  Result<T*> writeAs() const {
    static_assert(std::is_trivially_copyable_v<T>, "a channel carries trivially copyable types");
    auto buffer = take(sizeof(T), alignof(T));
    if (!buffer) return buffer.error();
    return reinterpret_cast<T*>(buffer->data());
  }
  /// read() as a T (same rules as writeAs).
  template <typename T>
  Result<Version<T>> readAs() const {
    static_assert(std::is_trivially_copyable_v<T>, "a channel carries trivially copyable types");
    auto v = read();
    if (!v) return v.error();
    if (auto fits = fitsType(sizeof(T), alignof(T), v->size); !fits) return fits.error();
    return Version<T>{reinterpret_cast<const T*>(v->data),
                      v->size,
                      v->status,
                      v->writerIteration,
                      v->writerInstance,
                      v->writtenNs,
                      v->sourceNs};
  }

  /// The channel's name.
  const std::string& name() const { return name_; }

 private:
  Channel(std::uint32_t id, std::string name) : id_(id), name_(std::move(name)) {}
  // kBadParameter unless a T of `size` bytes and alignment `align` fits a buffer of `bytes`.
  Result<void> fitsType(std::size_t size, std::size_t align, std::size_t bytes) const;
  // write() for a T of `size` bytes and alignment `align`: checks that it fits before taking.
  Result<std::span<std::byte>> take(std::size_t size, std::size_t align) const;
  std::uint32_t id_ = 0;  ///< its index among the channel names of every schedule of the client
  std::string name_;
};

}  // namespace tactus
