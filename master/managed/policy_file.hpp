// The switching policy of a master with a schedule manager (tactus-master --policy FILE): rules
// that roll the running schedule over on overload, on a client's death and after clean
// iterations, read from YAML and checked against the loaded schedules.
//
//   Rules:
//     - Name: overload                 # unique; named in the master's output
//       When: {Schedule: 101, Hyperepoch: H0, Overruns: 3, Of: 10}
//       RollOver: 102                  # K of the last N iterations of H0 of 101 overran
//     - Name: recover
//       When: {Schedule: 102, CleanIterations: 200}
//       RollOver: 101                  # every hyperepoch of 102 ran 200 iterations without overrun
//     - Name: camera-lost
//       When: {ClientDies: Camera}
//       RollOver: 103                  # 103 must not use Camera; the run goes on without it
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::master {

/// What makes a rule fire.
enum class PolicyTrigger : std::uint16_t {
  kOverruns = 1,         ///< K of the last N judged iterations of a hyperepoch overran
  kCleanIterations = 2,  ///< every hyperepoch ran M iterations in a row without overrun
  kClientDies = 3,       ///< a client's process died
};

/// One rule of the policy file.
struct PolicyRule {
  std::string name;  ///< Name:
  int line = 0;      ///< 1-based line of the rule in the file
  PolicyTrigger trigger = PolicyTrigger::kOverruns;
  std::uint16_t schedule = 0;         ///< When: Schedule: the running schedule it watches (kOverruns, kCleanIterations)
  HyperepochId hyperepoch{0};         ///< kOverruns: the hyperepoch in `schedule`
  std::uint32_t overruns = 0;         ///< kOverruns: K
  std::uint32_t window = 0;           ///< kOverruns: N (at most limits::kMaxOverrunWindow)
  std::uint64_t cleanIterations = 0;  ///< kCleanIterations: M
  std::string client;                 ///< kClientDies: the client's name
  std::uint16_t target = 0;           ///< RollOver: the schedule to roll over to
};

/// A policy file read and checked.
struct Policy {
  std::string path;
  std::vector<PolicyRule> rules;  ///< in file order (a rule's index is its number in the log)
};

/// Reads the policy file at `path` and checks it against `schedules` (the loaded schedules):
/// unknown schedules, hyperepochs and clients, a target that is the watched schedule or uses the
/// dead client, bad counts. Errors read `path:line: ...`.
Result<Policy> readPolicyFile(const std::string& path, const std::vector<const Schedule*>& schedules);

}  // namespace tactus::master
