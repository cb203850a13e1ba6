// How a run is activated: the part of the monitor loop that differs between kinds of run, plugged
// into the one Run (run.hpp) as a strategy chosen once the schedules are loaded (makeActivation).
//   immediate (run/immediate.cpp)    one schedule that starts when its clients have entered and
//                                    ends at its frame limit or a stop (also a SoC that follows
//                                    its primary without a manager: the link does the following)
//   managed   (managed/managed.cpp)  nothing runs until the manager or the policy starts a
//                                    schedule; the manager's requests, the policy, switching
//   follower  (managed/follower.cpp) a SoC under a manager that follows its primary's switches
// The strategies act on the run through the core's interface (run_core.hpp) alone, never on Run's
// members; the core asks them only here, and no file of the core asks which kind of run it is
// (run/run*.cpp test no mode). Each is driven in one process against the real Run
// (tests/master/run_core_test.cpp) and against a stand-in core (tests/master/activation_test.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "roles/client_monitor.hpp"
#include "tactus/core/ids.hpp"
#include "tactus/core/result.hpp"

namespace tactus::master {

class RunCore;
struct Mode;

class Activation {
 public:
  virtual ~Activation() = default;
  /// The schedules are loaded: what the activation needs of the options and files (the policy's;
  /// bad input otherwise).
  virtual Result<void> check() = 0;
  /// Where each hyperepoch's releases stop (its segment's stopAt) when a schedule is published.
  virtual std::uint64_t stopAt() const = 0;
  /// Every client (and, multi-SoC, every SoC's master) is there: the run starts.
  virtual void startRun() = 0;
  /// Whether every hyperepoch of `mode` has stopped (its release threads left their loops).
  virtual bool stopped(const Mode& mode) const = 0;
  /// Client `c` of `mode` asked the run to end.
  virtual void exitRequested(Mode& mode, ClientId c) = 0;
  /// After the exit requests of a round: the end they lead to, once it has come.
  virtual std::optional<RunEnd> exitProgress() = 0;
  /// The monitor loop's watch of what the activation owns (the manager): an end, or nothing.
  virtual std::optional<RunEnd> watch() = 0;
  /// A schedule's end the monitor loop found (`mode`'s): returned to end the run, or excused
  /// (none: a policy goes on without a dead client).
  virtual std::optional<RunEnd> excuse(Mode& /*mode*/, const RunEnd& end) { return end; }
  /// The activation's own step of a monitor-loop round: an end, or nothing.
  virtual std::optional<RunEnd> round() = 0;
  /// First thing in each round, before the loop's checks (each a few system calls): what someone
  /// waits on (the manager's answers and requests), so that the checks do not lie on its way.
  virtual void answerFirst() {}
  /// The monitor loop's sleep while the clients come.
  virtual std::int64_t waitSliceNs() const = 0;
  /// Whether the run switches between schedules: its records, segments and messages then name
  /// each schedule (even a run of one).
  virtual bool switchesSchedules() const = 0;
  /// After the segments are created, before the event log opens (the manager channel).
  virtual Result<void> prepare() = 0;
  /// The segments are published: what the run now waits for, besides the clients' entering.
  virtual std::string published() = 0;
  /// A signal stops the run (`first`: its first round; `running`: the running schedule, null in a
  /// switch); not asked on a follower SoC that the primary's signal stops.
  virtual void stopForSignal(Mode* running, bool first) = 0;
  /// The run's message when another SoC's master asked this one to stop (`message` otherwise).
  virtual std::string peerStopMessage(const std::string& message) const = 0;
  /// Whether the run's own release threads were asked to stop for a signal.
  virtual bool signalStopRequested() const = 0;
  /// A follower SoC: the reason of the primary's last stop, once its link carried one; none on the
  /// primary or a single machine.
  virtual std::optional<shm::StopReason> primaryStopReason() const = 0;
  /// A schedule switch in flight (it owns the schedules' state until it answers): the schedule it
  /// waits on, null when none yet; nothing when no switch is in flight.
  virtual std::optional<const Mode*> switchInFlight() const = 0;
  /// A stop's grace ran out in a switch that no release thread holds up: what the switch waits for
  /// ("; client 'C' did not ... within 500ms", `client` and `name` set to the client it names).
  virtual std::string switchBlocker(ClientId& client, std::string& name) const = 0;
  /// The run ends with `end`, before it is published.
  virtual void closing(const RunEnd& end) = 0;
  /// The end is published in every segment.
  virtual void ended() = 0;
  /// The run's threads end: a request still unanswered is answered (its waits saw the end).
  virtual void closed() = 0;
};

/// Immediate: one schedule, started once its clients have entered.
std::unique_ptr<Activation> makeImmediateActivation(RunCore& core);
/// Managed: the manager's requests and the policy (the primary SoC's master, or the only one).
std::unique_ptr<Activation> makeManagedActivation(RunCore& core);
/// Follower: a SoC under a manager following its primary's switches.
std::unique_ptr<Activation> makeFollowerActivation(RunCore& core);
/// The activation of the run `core`, by its options and its SoC (managed/managed.cpp).
std::unique_ptr<Activation> makeActivation(RunCore& core);

}  // namespace tactus::master
