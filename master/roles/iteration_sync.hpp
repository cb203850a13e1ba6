// The release threads' hook for a multi-SoC run (soc_run.hpp implements it): the primary SoC's
// master tells the others when each hyperepoch iteration starts, or that the run stops; the other
// masters' release threads follow those starts instead of their own clock's period boundaries.
#pragma once

#include <cstdint>
#include <optional>

#include "tactus/core/ids.hpp"

namespace tactus::master {

/// How the release threads of one SoC's master keep in step with the other SoCs.
class IterationSync {
 public:
  virtual ~IterationSync() = default;
  /// Whether this master follows another's iterations (then the releaser calls awaitStart and
  /// never decides a start or a stop itself), else it leads them (started, stopped).
  virtual bool follower() const = 0;
  /// Leader: iteration `iteration` of hyperepoch `he` starts at `startNs` (CLOCK_MONOTONIC), called
  /// before its first frame is released.
  virtual void started(HyperepochId he, std::uint64_t iteration, std::int64_t startNs) = 0;
  /// Leader: hyperepoch `he` stops before iteration `iteration` (no frame of it is released).
  virtual void stopped(HyperepochId he, std::uint64_t iteration) = 0;
  /// Follower: waits until the leader started `iteration` of `he`; its start on this host's clock,
  /// or nothing when the run stops before it (or was aborted meanwhile).
  virtual std::optional<std::int64_t> awaitStart(HyperepochId he, std::uint64_t iteration) = 0;
};

}  // namespace tactus::master
