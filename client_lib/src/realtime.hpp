// Real-time worker threads: the scheduling policy and priority of a client's workers and locked
// memory, chosen from InitOptions or the environment, checked at init (a refusal names the limit
// and the systemd setting that lifts it) and applied by each worker thread as it starts.
#pragma once

#include <string>

#include "tactus/client.hpp"
#include "tactus/core/result.hpp"

namespace tactus::client {

/// What init chose for the worker threads.
struct RealtimePolicy {
  bool setPolicy = false;  ///< false: the workers keep the process's policy
  int policy = 0;          ///< SCHED_OTHER, SCHED_FIFO or SCHED_RR
  int priority = 0;        ///< 1..99 for SCHED_FIFO and SCHED_RR, 0 for SCHED_OTHER
  bool lockMemory = false;
  std::string source;  ///< where the policy came from, for messages
};

/// Chooses into `out` the workers' policy (options, else TACTUS_WORKER_POLICY) and memory locking (options
/// or TACTUS_LOCK_MEMORY=1), checks that this process may use the policy (a probe on the calling
/// thread, undone at once), and locks memory when asked. Errors name the client, the setting and
/// its source: kBadParameter for a malformed value or a policy the limits forbid (naming
/// RLIMIT_RTPRIO / RLIMIT_MEMLOCK and LimitRTPRIO= / LimitMEMLOCK=).
Result<void> setUpRealtime(const std::string& clientName, const InitOptions& options, RealtimePolicy& out);

/// Applies the policy to the calling worker thread; called once as each worker starts. A failure
/// (the limits changed since init) is printed once per process; the thread keeps running.
void applyWorkerRealtime(const RealtimePolicy& policy) noexcept;

}  // namespace tactus::client
