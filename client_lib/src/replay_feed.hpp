// A replay's feed on the client's side (tactus-master --replay, core/replay_layout.hpp): the
// replay segment attached and checked once at init; a replayed source instance's step calls
// replayStep in place of its runnable (step_table.cpp), which puts the source's recorded versions
// into its channel buffers and stamps them as its writer run would. Nothing else of the worker
// changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "channels.hpp"
#include "tactus/core/replay_layout.hpp"
#include "tactus/core/result.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::client {

/// One replayed source instance: its schedule's channel tables and its recorded versions.
struct ReplaySourceFeed {
  const ScheduleChannels* channels = nullptr;
  std::uint32_t instance = 0;
  const shm::ReplayEntry* entries = nullptr;  ///< by channel, then iteration (checked at attach)
  std::uint32_t count = 0;
  const std::byte* base = nullptr;  ///< the segment's start
};

/// The checked tables of a replay segment's bytes (pointers into them).
struct ReplayTables {
  std::vector<ReplaySourceFeed> sources;         ///< of the schedules the directory holds
  const shm::ReplayRelease* releases = nullptr;  ///< by (schedule, epoch, iteration, frame), strictly
  std::uint32_t releaseCount = 0;

  /// The feed of instance `instance` of schedule `scheduleId`, or null (not replayed).
  const ReplaySourceFeed* find(std::uint32_t scheduleId, std::uint32_t instance) const {
    for (const ReplaySourceFeed& s : sources)
      if (s.channels->scheduleId == scheduleId && s.instance == instance) return &s;
    return nullptr;
  }
  /// The recorded release of frame `frame` of epoch `epoch` in hyperepoch iteration `iteration`
  /// (its low 32 bits, as recorded) of schedule `scheduleId`, or null (none recorded).
  const shm::ReplayRelease* release(std::uint32_t scheduleId, std::uint32_t epoch, std::uint64_t iteration,
                                    std::uint32_t frame) const;
};

/// Checks a replay segment's bytes (8-byte aligned, as a mapping is): every offset, size, count,
/// order and reference against `bytes` and `directory` (kIncompatible naming what is wrong and the
/// segment of `instance`). Sources of a schedule `directory` does not hold are skipped. Reads
/// nothing outside `bytes`, whatever they hold (fuzz/replay_segment_fuzz.cpp).
Result<ReplayTables> checkReplaySegment(std::span<const std::byte> bytes, const std::string& instance,
                                        const ChannelDirectory& directory);

struct ReplayFeed : ReplayTables {
  ipc::Segment segment;  ///< the tables point into it: never moved after attach
};

/// Attaches the replay segment of `instance` (schedule 0's segment name) and checks it
/// (checkReplaySegment).
Result<std::unique_ptr<ReplayFeed>> attachReplay(const std::string& instance, const ChannelDirectory& directory);

/// A replayed source's step (a RunnableFunction; userdata: its ReplaySourceFeed).
void replayStep(void* userdata);

}  // namespace tactus::client
