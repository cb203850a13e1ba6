// Real-time worker threads and locked memory for a client (see realtime.hpp): parsing
// TACTUS_WORKER_POLICY / TACTUS_LOCK_MEMORY, the permission probe at init, and the one call each
// worker makes as it starts.
#include "realtime.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tactus/core/text.hpp"

namespace tactus::client {

namespace {

const char* policyName(int policy) {
  switch (policy) {
    case SCHED_FIFO: return "SCHED_FIFO";
    case SCHED_RR: return "SCHED_RR";
    default: return "SCHED_OTHER";
  }
}

// A limit for messages: "unlimited" or the number with its unit.
std::string limitText(int resource, const char* unit) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return std::to_string(limit.rlim_cur) + unit;
}

// Parses `fifo:PRIO`, `rr:PRIO` or `other` (TACTUS_WORKER_POLICY).
Result<RealtimePolicy> parsePolicy(const std::string& text) {
  RealtimePolicy p;
  p.setPolicy = true;
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  if (name == "other") {
    if (colon != std::string::npos) return fail(ErrorCode::kBadParameter, "'other' takes no priority");
    p.policy = SCHED_OTHER;
    return p;
  }
  if (name == "fifo") {
    p.policy = SCHED_FIFO;
  } else if (name == "rr") {
    p.policy = SCHED_RR;
  } else {
    return fail(ErrorCode::kBadParameter, "the policy must be fifo:PRIO, rr:PRIO or other");
  }
  if (colon == std::string::npos) return fail(ErrorCode::kBadParameter, name + " needs a priority (" + name + ":PRIO)");
  const std::string digits = text.substr(colon + 1);
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return fail(ErrorCode::kBadParameter, "the priority " + quoted(digits) + " is not a number");
  }
  p.priority = value;
  return p;
}

Result<RealtimePolicy> choosePolicy(const InitOptions& options) {
  RealtimePolicy p;
  if (options.workerPolicy != WorkerPolicy::kInherit) {
    p.setPolicy = true;
    p.source = "InitOptions::workerPolicy";
    p.priority = options.workerPriority;
    p.policy = options.workerPolicy == WorkerPolicy::kFifo         ? SCHED_FIFO
               : options.workerPolicy == WorkerPolicy::kRoundRobin ? SCHED_RR
                                                                   : SCHED_OTHER;
    if (p.policy == SCHED_OTHER && p.priority != 0) {
      return fail(ErrorCode::kBadParameter,
                  p.source + ": SCHED_OTHER takes priority 0, not " + std::to_string(p.priority));
    }
  } else if (const char* env = std::getenv("TACTUS_WORKER_POLICY"); env != nullptr && *env != '\0') {
    auto parsed = parsePolicy(env);
    if (!parsed) {
      return fail(ErrorCode::kBadParameter, "TACTUS_WORKER_POLICY=" + quoted(env) + ": " + parsed.error().message);
    }
    p = *parsed;
    p.source = "TACTUS_WORKER_POLICY";
  }
  if (p.setPolicy && p.policy != SCHED_OTHER) {
    const int low = ::sched_get_priority_min(p.policy);
    const int high = ::sched_get_priority_max(p.policy);
    if (p.priority < low || p.priority > high) {
      return fail(ErrorCode::kBadParameter, p.source + ": " + policyName(p.policy) + " priority " +
                                                std::to_string(p.priority) + " is outside " + std::to_string(low) +
                                                ".." + std::to_string(high));
    }
  }
  if (options.lockMemory) {
    p.lockMemory = true;
  } else if (const char* env = std::getenv("TACTUS_LOCK_MEMORY"); env != nullptr && *env != '\0') {
    const std::string value = env;
    if (value != "0" && value != "1") {
      return fail(ErrorCode::kBadParameter, "TACTUS_LOCK_MEMORY=" + quoted(value) + ": must be 0 or 1");
    }
    p.lockMemory = value == "1";
  }
  return p;
}

// Tries the policy on the calling thread and puts the thread's own back: whether the limits let
// this process use it (RLIMIT_RTPRIO, CAP_SYS_NICE, the cgroup's real-time budget).
Result<void> probePolicy(const RealtimePolicy& p) {
  int oldPolicy = 0;
  sched_param oldParam{};
  if (const int rc = ::pthread_getschedparam(::pthread_self(), &oldPolicy, &oldParam); rc != 0) {
    return fail(ErrorCode::kIo, std::string("pthread_getschedparam: ") + std::strerror(rc));
  }
  sched_param param{};
  param.sched_priority = p.priority;
  const int rc = ::pthread_setschedparam(::pthread_self(), p.policy, &param);
  if (rc == 0) {
    ::pthread_setschedparam(::pthread_self(), oldPolicy, &oldParam);  // lowering is always allowed
    return {};
  }
  const std::string what = p.source + ": worker policy " + policyName(p.policy) + " priority " +
                           std::to_string(p.priority) + " is not permitted (" + std::strerror(rc) + ")";
  if (rc == EPERM) {
    return fail(ErrorCode::kBadParameter,
                what + ": RLIMIT_RTPRIO is " + limitText(RLIMIT_RTPRIO, "") +
                    " and the process lacks CAP_SYS_NICE; raise the limit to at least " + std::to_string(p.priority) +
                    " (systemd unit: LimitRTPRIO=" + std::to_string(p.priority) + "; shell: ulimit -r " +
                    std::to_string(p.priority) +
                    "), and where the cgroup has no real-time budget, run it in one that has");
  }
  return fail(ErrorCode::kBadParameter, what);
}

Result<void> lockMemory() {
  if (::mlockall(MCL_CURRENT | MCL_FUTURE) == 0) return {};
  const int err = errno;
  return fail(
      ErrorCode::kBadParameter,
      std::string("locked memory (InitOptions::lockMemory or TACTUS_LOCK_MEMORY=1) is not permitted: mlockall: ") +
          std::strerror(err) + ": RLIMIT_MEMLOCK is " + limitText(RLIMIT_MEMLOCK, " bytes") +
          " and the process lacks CAP_IPC_LOCK; lift the limit (systemd unit: LimitMEMLOCK=infinity; shell: "
          "ulimit -l unlimited)");
}

std::atomic<bool> gApplyFailureSaid{false};

}  // namespace

Result<void> setUpRealtime(const std::string& clientName, const InitOptions& options, RealtimePolicy& out) {
  auto chosen = choosePolicy(options);
  if (!chosen) return fail(chosen.error().code, "client " + quoted(clientName) + ": " + chosen.error().message);
  if (chosen->setPolicy) {
    if (auto ok = probePolicy(*chosen); !ok) {
      return fail(ok.error().code, "client " + quoted(clientName) + ": " + ok.error().message);
    }
  }
  if (chosen->lockMemory) {
    if (auto ok = lockMemory(); !ok) {
      return fail(ok.error().code, "client " + quoted(clientName) + ": " + ok.error().message);
    }
  }
  out = *chosen;
  return {};
}

void applyWorkerRealtime(const RealtimePolicy& policy) noexcept {
  if (!policy.setPolicy) return;
  sched_param param{};
  param.sched_priority = policy.priority;
  const int rc = ::pthread_setschedparam(::pthread_self(), policy.policy, &param);
  if (rc != 0 && !gApplyFailureSaid.exchange(true)) {
    std::fprintf(stderr, "tactus: a worker thread cannot take %s priority %d (%s); it keeps its policy\n",
                 policyName(policy.policy), policy.priority, std::strerror(rc));
  }
}

}  // namespace tactus::client
