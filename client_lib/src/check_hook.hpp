// The hook of check mode (tactus-check): libtactus finds the preloaded check library's C ABI
// (tactus/core/violation.hpp) once and, when it is there, opens a check window around every
// runnable a worker runs and pushes the violations it reports into the worker's ring. Without
// tactus-check the worker pays one predictable branch on a null pointer per runnable.
#pragma once

#include <cstdint>

#include "tactus/core/shm_layout.hpp"
#include "tactus/core/violation.hpp"

namespace tactus::client {

/// The check library's entry points.
struct CheckHooks {
  TactusCheckBeginFn begin;  ///< before a runnable
  TactusCheckEndFn end;      ///< after it: its violation records
};

/// The check library's hooks, or nullptr when no check library is preloaded (looked up once).
const CheckHooks* checkHooks();

/// Ends the check window of the runnable that just returned and pushes its violation records
/// into the worker's ring (after the runnable's kRun record).
void endCheck(const CheckHooks& hooks, shm::WorkerSlot& slot, EventRecord* ring, std::uint32_t capacity);

}  // namespace tactus::client
