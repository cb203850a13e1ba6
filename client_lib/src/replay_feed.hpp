// A replay's feed on the client's side (tactus-master --replay, core/replay_layout.hpp): the
// replay segment attached and checked once at init; a replayed source instance's step calls
// replayStep in place of its runnable (step_table.cpp), which puts the source's recorded versions
// into its channel buffers and stamps them as its writer run would. Nothing else of the worker
// changes.
#pragma once

#include <cstdint>
#include <memory>
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

struct ReplayFeed {
  ipc::Segment segment;
  std::vector<ReplaySourceFeed> sources;  ///< never resized after attach: steps point into it

  /// The feed of instance `instance` of schedule `scheduleId`, or null (not replayed).
  const ReplaySourceFeed* find(std::uint32_t scheduleId, std::uint32_t instance) const {
    for (const ReplaySourceFeed& s : sources)
      if (s.channels->scheduleId == scheduleId && s.instance == instance) return &s;
    return nullptr;
  }
};

/// Attaches the replay segment of `instance` (schedule 0's segment name) and checks every offset,
/// size and reference in it against the segment and `directory` (kIncompatible naming what is
/// wrong).
Result<std::unique_ptr<ReplayFeed>> attachReplay(const std::string& instance, const ChannelDirectory& directory);

/// A replayed source's step (a RunnableFunction; userdata: its ReplaySourceFeed).
void replayStep(void* userdata);

}  // namespace tactus::client
