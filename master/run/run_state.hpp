// What the run's own files (run.cpp, run_load.cpp, run_end.cpp) share and nothing else includes:
// the signal state the async-signal handler writes, and the monitor loop's time constants.
#pragma once

#include <atomic>
#include <cstdint>

namespace tactus::master::run_detail {

/// SIGTERM or SIGINT as the handler saw it (0: none); only lock-free atomics and a futex wake.
extern std::atomic<int> gSignal;
/// The word the handler wakes the monitor loop on (schedule 0's attention word), or null.
extern std::atomic<std::atomic<std::uint32_t>*> gAttention;
/// The SIGTERM and SIGINT handler.
void onStopSignal(int sig);

constexpr std::int64_t kSliceNs = 2'000'000;       // the monitor loop's longest sleep (a manager's requests)
constexpr std::int64_t kWaitSliceNs = 10'000'000;  // ... while the clients come, without a manager
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;
constexpr std::int64_t kSwitcherEndWaitNs = 2'000'000'000;  // how long an ending run waits for a request's answer

}  // namespace tactus::master::run_detail
