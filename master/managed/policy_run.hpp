// The managed run's switching policy (tactus-master --policy FILE; policy_run.cpp), acting on the
// run core (run/run_core.hpp) alone; the managed activation owns it and asks it once per
// monitor-loop round while no switch is in flight.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "managed/policy_file.hpp"
#include "managed/switch_job.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"

namespace tactus::master {

class PolicyRun {
 public:
  explicit PolicyRun(RunCore& core) : core_(core) {}

  /// Reads the policy file (none without --policy); every switch a rule can make must be a
  /// rollover the schedules allow (bad input otherwise).
  Result<void> load();
  /// Whether a policy was read.
  bool active() const { return policy_.has_value(); }
  /// Rule `k` (Request::rule) of the policy read.
  const PolicyRule& rule(int k) const { return policy_->rules[static_cast<std::size_t>(k)]; }
  /// A client `mode` uses whose death a rule excused ("" when none); any thread.
  std::string deadClientOf(const Mode& mode) const;
  /// The monitor loop, with a schedule's end: a client's death that a rule covers is excused
  /// (nothing returned) and its switch queued; any other end is returned unchanged.
  std::optional<RunEnd> excuseDeadClient(Mode& mode, const RunEnd& end);
  /// The switch a rule asks for now, if any (the switch job idle; `managerPending`: a manager's
  /// request waits, which goes first).
  std::optional<Request> request(bool managerPending);
  /// A rule's decision, for the event log (kPolicyDecision).
  void log(const Request& r, const Answer& answer, std::int64_t doneNs);

 private:
  RunCore& core_;
  std::optional<Policy> policy_;
  mutable std::mutex deadLock_;        // guards deadClients_ (the monitor loop writes, the switch thread reads)
  std::set<std::string> deadClients_;  // clients whose death a policy rule excused
  std::vector<Request> fallbacks_;     // policy switches after a client's death, waiting for the switch job
};

}  // namespace tactus::master
