// The managed run's switching (schedule_switch.cpp), acting on the run core (run/run_core.hpp)
// alone: activating a hyperepoch (after its workers left the previous activation and, in a
// rollover, ran their switch callbacks), stopping one at its iteration boundary, the manager's
// start, stop and rollover built on them (on the managed activation's switch job), and, on a
// follower SoC, the same activations made as the primary's switches arrive (followSwitches).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "managed/manager_port.hpp"
#include "managed/switch_job.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"

namespace tactus::master {

/// A plain start releases its first frame this long after the request (workers wake meanwhile).
constexpr std::int64_t kStartLeadNs = 500'000;

/// Pairs the hyperepochs of `from` and `to` that share hardware (kNone: none); "" when every
/// hyperepoch shares with at most one of the other schedule's, both ways, else why not.
std::string partitionProblem(const Mode& from, const Mode& to,
                             std::vector<std::pair<HyperepochId, HyperepochId>>& pairs);
/// The loaded schedule with identifier `id`, or null.
Mode* modeByIdentifier(const RunCore& core, std::uint32_t id);
/// The running schedule's identifier, kNoSchedule for none.
std::uint32_t runningIdentifier(const RunCore& core);

class Switching {
 public:
  explicit Switching(RunCore& core) : core_(core) {}

  /// Every client has entered: the run starts and waits for the first start (the manager's, or on
  /// a follower SoC the primary's).
  void startAwaitingSwitches();
  // On the switch job's thread (`job`: told each state it enters; null for the end's own stop).
  Answer start(SwitchJob& job, const Request& r, Mode& mode);
  Answer stop(SwitchJob* job, const Request& r, Mode& mode, std::uint32_t to);
  Answer rollover(SwitchJob& job, const Request& r, Mode& from, Mode& to);
  /// Asks every hyperepoch of `mode` that runs something on this SoC to stop at its boundary.
  void askBoundaryStop(Mode& mode);
  /// A follower SoC under a manager, each round of the monitor loop: the primary's switches
  /// followed; the end once the primary ended its run and nothing here follows it any more.
  std::optional<RunEnd> followSwitches();

 private:
  bool followStart(Mode& mode, HyperepochId he);
  void followLaunch(Mode& mode, HyperepochId he);
  void followStopped(Mode& mode, HyperepochId he);
  bool sharedHardwareBusy(const Mode& mode, HyperepochId he, std::int64_t startNs,
                          std::pair<Mode*, HyperepochId>& partner);
  bool switchPair(SwitchJob& job, const Request& r, Mode& from, Mode& to, std::size_t k);
  std::uint32_t armActivation(Mode& mode, HyperepochId he, std::uint32_t from);
  void wakeActivated(const Mode& mode, HyperepochId he);
  std::optional<std::uint32_t> armWhenLeft(SwitchJob* job, Mode& mode, HyperepochId he, std::uint32_t from);
  std::vector<std::uint8_t> activate(SwitchJob* job, Mode& mode, const std::vector<HyperepochId>& hes,
                                     std::int64_t startNs, std::uint32_t from, const Request& r);
  void stopHyperepoch(SwitchJob* job, Mode& mode, HyperepochId he, std::uint32_t to, const Request& r);
  void wakeStoppedWorkers(const Mode& mode, HyperepochId he);
  bool waitWord(const Mode& mode, std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                std::uint32_t target);
  void logSwitch(EventKind kind, const Mode& mode, HyperepochId he, std::uint64_t iteration, std::uint32_t other,
                 std::int64_t startNs, std::int64_t endNs);

  RunCore& core_;
};

}  // namespace tactus::master
