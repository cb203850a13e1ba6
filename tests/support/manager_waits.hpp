// Waits on a run through tactus-manager's status, for the tests that link libtactus (the support
// library itself does not). Counts, not time windows: a slow machine waits longer instead of
// failing, up to `timeoutMs`.
#pragma once

#include <cstdint>

#include "runtime_harness.hpp"
#include "tactus/manager.hpp"

namespace tactus::test {

// Until the running schedule has completed `more` iterations beyond those at the call.
inline bool awaitIterations(std::uint64_t more, int timeoutMs) {
  const auto first = manager::status();
  return first && waitUntil(
                      [&] {
                        const auto now = manager::status();
                        return now && now->iterations >= first->iterations + more;
                      },
                      timeoutMs);
}

// Until the running schedule is `id`.
inline bool awaitRunning(std::uint16_t id, int timeoutMs) {
  return waitUntil(
      [&] {
        const auto s = manager::status();
        return s && s->running && s->schedule == id;
      },
      timeoutMs);
}

}  // namespace tactus::test
