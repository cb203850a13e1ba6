// What the managed and the follower activations (managed.cpp, follower.cpp) share.
#pragma once

#include "run/run.hpp"

namespace tactus::master {

/// Whether every hyperepoch of `mode` has stopped (under a manager each stops on its own).
bool everyHyperepochStopped(const Mode& mode);
/// The end's message when another SoC's master asked the primary to stop.
extern const char* const kPeerStopMessage;

}  // namespace tactus::master
