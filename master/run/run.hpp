// The master's one run: 1..N schedules (several only under a schedule manager, -N) on one SoC of
// 1..K (a multi-SoC schedule: one master per SoC, -x). The core: run/run.cpp (the monitor loop),
// run/run_load.cpp (loading and publishing), run/run_end.cpp (the end), soc/soc_run.cpp (a
// multi-SoC run's part of one SoC). Its activation (run/activation.hpp) acts on it through
// run/run_core.hpp alone: run/immediate.cpp; managed/managed.cpp with managed/manager_requests.cpp
// (the manager's channel and requests), managed/schedule_switch.cpp (Switching: starting, stopping
// and rolling over hyperepochs) and managed/policy_run.cpp (PolicyRun: --policy);
// managed/follower.cpp.
//
// Every role exists once per schedule and applies in every kind of run:
//   SegmentOwner   creates, publishes, watches for damage and removes a schedule's segment
//   ClientMonitor  validates and watches every client (dead, refused, exit requests)
//   StallWatch     names a client that makes no progress within its budget (stuck), and the one a
//                  stop's grace waited for
//   Releaser       one thread per hyperepoch releases frames on CLOCK_MONOTONIC
//   LogDrain       empties the clients' and the release threads' event rings into the one log
// and once per run: the monitor loop (clients coming, failures, signals with their grace, exit
// requests, systemd's readiness and watchdog), the end (published in every segment, every segment
// and the manager channel removed) and the event log.
//
// What differs between kinds of run is plugged into that one run:
// - Activation: without a manager the one schedule starts at once when its clients have entered
//   (and, multi-SoC, every SoC's master is ready) and the run ends at its frame limit or a stop
//   request; with a manager (-N) nothing runs until the manager or the policy starts a schedule,
//   and a stop request stops the running schedule at its iteration boundary.
// - Iteration sync (multi-SoC): each schedule's SocRun (its own link) is its releaser's
//   IterationSync; the primary's iterations lead, the other SoCs' follow; the peers are watched in
//   the monitor loop. Under a manager the manager and the policy talk to the primary alone; a
//   follower has no channel and activates, follows and parks each hyperepoch as the primary's
//   switches arrive (Switching::followSwitches, schedule_switch.cpp).
//
// Schedule switching (-N)
// - One segment per schedule, each a complete single-schedule layout (shm_layout.hpp): schedule 0
//   at the instance's name, schedule k at scheduleInstanceName(instance, k); the header's
//   scheduleCount/scheduleIndex say which. Every role of the one-schedule master works on a
//   schedule's segment unchanged (SegmentOwner, ClientMonitor, LogDrain, Releaser), one set per
//   schedule. Identifiers must be unique over the files (refused naming both files).
// - Clients attach every segment; a client claims its slot in each schedule that names it (the
//   union of its registrations); a client in none is refused. Every client's workers of every
//   schedule exist from enterScheduler on, sleeping on their hyperepoch's SwitchSlot::activation
//   while that hyperepoch is stopped. Nothing runs until the manager starts a schedule; with the
//   clients still coming, a start waits for them (the -t timeout still ends the run).
// - The manager talks through the ManagerChannel segment (managerInstanceName): it writes op and
//   arguments, bumps requestSeq; the master's monitor loop (2 ms, or at once through the primary's
//   attention word) hands the request to the switch job (managed/switch_job.hpp: its own thread,
//   named states) and publishes resultSeq = requestSeq with a code and a message (futex wake), so
//   every call is synchronous. A bad request gets an error
//   and a line on the master's stderr; it never touches the running schedule. A claimed manager
//   whose process dies ends the run, named; one that detaches (tactus-manager) does not.
// - Iterations continue over activations (iteration numbers of a hyperepoch never restart), so
//   the segment's release and completion sequences only grow and no slot is ever reset.
// - Complete-swap stop: every hyperepoch's release thread stops at its next iteration boundary
//   (its current iteration finishes) and the call returns when all have stopped.
// - Rollover (start B, stop A): hyperepochs correspond when they share hardware resources, and
//   must do so one to one (else refused: the partitions differ). Per pair, independently: A's
//   hyperepoch finishes its iteration, the master waits until B's workers left their previous
//   activation, activates B's hyperepoch as a rollover (the first worker of every client in it
//   runs the switch callbacks and acknowledges), and releases B's first frame at once.
// - The event log: every record carries its schedule's identifier (EventRecord::schedule, header
//   scheduleCount = N); every start and stop is a kScheduleStart / kScheduleStop record per
//   hyperepoch, a rollover being a stop of A and a start of B naming each other.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "master.hpp"
#include "roles/idle_windows.hpp"
#include "run/activation.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"
#include "run/run_hook.hpp"
#include "soc/soc_run.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/notes.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {

/// The master's run (see the top of this file): the core, which knows nothing of the kinds of run,
/// and the activation plugged into it, which acts on it through RunCore (run_core.hpp) alone.
class Run final : private RunCore {
 public:
  /// `o` outlives the run; `out` and `err` take the master's lines.
  Run(const MasterOptions& o, std::ostream& out, std::ostream& err);
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  /// Stops what still runs and removes the manager channel.
  ~Run() override;
  /// Loads, publishes and runs until the manager, a signal or a fault ends the run; the exit code.
  int execute();

 private:
  // RunCore: what the activation may ask and do (run_core.hpp; run.cpp).
  const MasterOptions& options() const override { return o_; }
  std::ostream& out() override { return out_; }
  std::ostream& err() override { return err_; }
  const std::vector<std::unique_ptr<Mode>>& modes() const override { return modes_; }
  SocRunOptions* socOptions() override { return socOptions_ ? &*socOptions_ : nullptr; }
  SocRun* soc() const override { return soc_; }
  std::uint64_t iterations() const override { return iterations_; }
  void setRunStart(std::int64_t ns) override;
  void wakeInIdleWindows(const Mode& mode) override;
  bool runStarted() const override { return runStarted_; }
  bool clientsEntered() const override { return clientsEntered_.load(); }
  bool runEnded() const override { return runEnded_.load(); }
  std::string endedBecause() const override;
  std::optional<RunEnd> drainAll() override;
  /// The reason of the primary SoC's last stop as any schedule's link carried it (the running
  /// schedule's, under a manager); none without a link or before a stop arrived. Only a follower
  /// SoC's activation asks it (Activation::primaryStopReason).
  std::optional<shm::StopReason> linkStopReason() const override;
  Mode* runningMode() const override;
  std::string loadedList() const override;
  void record(const EventRecord& r) override;
  const replay::SwitchScript* switchScript() const override;

  // run.cpp: watching; run_load.cpp: loading and publishing; run_end.cpp: the end.
  Result<void> load();
  Result<std::unique_ptr<Mode>> loadMode(const std::string& path);
  Result<void> checkSoc(Mode& mode);
  void countWorkers(Mode& mode);
  int publishAll();
  Result<void> publishMode(std::uint32_t k, std::uint32_t flags);
  std::optional<RunEnd> superviseUntilEnd();
  std::optional<RunEnd> awaitClients(std::int64_t deadline, std::int64_t socDeadline);
  std::optional<RunEnd> handleExitRequests();
  std::int64_t sleepNs() const;
  bool stoppingBySignal() const;
  bool followsPrimarySignal() const;
  int closeRun(const std::optional<RunEnd>& end);
  void waitForClientsToLeave();
  void reportTotals(const std::string& message);
  int judgeOverruns(int code);
  std::optional<RunEnd> watch(bool beforeRun);
  void takeNotes();
  std::optional<RunEnd> stopBySignal();
  std::string graceBlocker(Mode* running, ClientId& client);
  Mode* findMode(const Mode* mode);
  bool stopped(const Mode& mode) const { return activation_->stopped(mode); }
  bool allEntered() const;
  int finish(const RunEnd& end);
  int badInput(const Error& error);  // says it on stderr; kExitBadInput
  void endEverywhere(const RunEnd& end);
  std::string clientNamed(const RunEnd& end) const;

  const MasterOptions& o_;
  std::unique_ptr<Activation> activation_;  // how the run starts, ends and switches (activation.hpp)
  std::ostream& out_;
  std::ostream& err_;
  std::vector<std::unique_ptr<Mode>> modes_;
  /// --replay, --record (run_hook.hpp); after modes_: they end before their segments.
  std::vector<std::unique_ptr<RunHook>> hooks_;
  std::uint64_t iterations_ = 0;  // the frame limit: -e, as the hooks lowered it (0: none)
  EventLogWriter log_;
  std::string instance_;                                // schedule 0's segment: -D, or its SoC's (socInstanceName)
  std::optional<SocRunOptions> socOptions_;             // a multi-SoC run's
  SocRun* soc_ = nullptr;                               // a multi-SoC run: schedule 0's link (Mode::soc)
  std::optional<IdleWindows> windows_;                  // without a manager: when the monitor loop wakes during the run
  std::int64_t runStartNs_ = 0;                         // the run's start (setRunStart)
  std::string leftBehind_;                              // the client a stop's grace left behind (named in the end)
  std::optional<ipc::NoteBox> notes_;                   // what clients that cannot take part say (ipc/notes.hpp)
  std::set<std::string> notesSeen_;                     // each note (sender and text) is said once
  std::map<std::uint32_t, std::size_t> notesBySender_;  // notes said, by the sender's pid
  std::string strangers_;                               // notes of clients no schedule has, for the timeout's end
  std::atomic<bool> runEnded_{false};
  mutable std::mutex endLock_;  // guards endMessage_ (the monitor loop writes, the switch thread reads)
  std::string endMessage_;      // why the run ended, for a request it cut short
  std::atomic<bool> clientsEntered_{false};
  bool runStarted_ = false;
  std::int64_t signalAtNs_ = 0;  // the monitor loop's: when it first saw SIGTERM or SIGINT
  std::mutex switchLock_;        // guards switchEvents_ (the activation's threads push, the monitor loop drains)
  std::vector<EventRecord> switchEvents_;
};

}  // namespace tactus::master
