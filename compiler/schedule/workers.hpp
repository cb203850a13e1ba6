// Running one piece of search work on several threads, with an exception in any of them
// (std::bad_alloc above all) carried back to the caller instead of ending the process.
#pragma once

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tactus::compiler::schedule {

/// Runs `work` once on each of `threads` threads (on the calling thread when threads <= 1) and
/// waits for all; then rethrows the first exception any of them threw.
template <typename F>
void runWorkers(int threads, F&& work) {
  if (threads <= 1) {
    work();
    return;
  }
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(guarded);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tactus::compiler::schedule
