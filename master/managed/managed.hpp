// What the managed and the follower activations (managed.cpp, follower.cpp) share.
#pragma once

#include "run/run.hpp"

namespace tactus::master {

/// Whether every hyperepoch of `mode` has stopped (under a manager each stops on its own).
bool everyHyperepochStopped(const Mode& mode);

}  // namespace tactus::master
