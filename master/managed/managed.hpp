// The managed activation (run/activation.hpp) and what it shares with the follower activation
// (managed.cpp, follower.cpp). The managed activation owns the manager's side of the run: the
// manager channel (ManagerPort) and the switch job (SwitchJob) that answers its requests and the
// policy's decisions (PolicyRun), the switching (Switching) acting on the job it is handed. Each
// acts on the run through the core's interface (run/run_core.hpp) alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "managed/manager_port.hpp"
#include "managed/policy_run.hpp"
#include "managed/switch_job.hpp"
#include "managed/switching.hpp"
#include "run/activation.hpp"
#include "run/mode.hpp"
#include "run/run_core.hpp"

namespace tactus::master {

/// Whether every hyperepoch of `mode` has stopped (under a manager each stops on its own).
bool everyHyperepochStopped(const Mode& mode);
/// The end's message when another SoC's master asked the primary to stop.
extern const char* const kPeerStopMessage;

class ManagedActivation final : public Activation {
 public:
  explicit ManagedActivation(RunCore& core);

  Result<void> check() override;
  std::uint64_t stopAt() const override { return 0; }  // every hyperepoch waits for a start
  void startRun() override;
  bool stopped(const Mode& mode) const override { return everyHyperepochStopped(mode); }
  void exitRequested(Mode& mode, ClientId c) override;
  std::optional<RunEnd> exitProgress() override;
  std::optional<RunEnd> watch() override { return port_.watchManager(); }
  std::optional<RunEnd> excuse(Mode& mode, const RunEnd& end) override { return policy_.excuseDeadClient(mode, end); }
  std::optional<RunEnd> round() override;
  void answerFirst() override { takeRequest(); }
  std::int64_t waitSliceNs() const override;
  bool switchesSchedules() const override { return true; }
  Result<void> prepare() override;
  std::string published() override;
  void stopForSignal(Mode* running, bool first) override;
  std::string peerStopMessage(const std::string& /*message*/) const override { return kPeerStopMessage; }
  bool signalStopRequested() const override { return false; }
  std::optional<shm::StopReason> primaryStopReason() const override { return std::nullopt; }  // the primary
  std::optional<const Mode*> switchInFlight() const override;
  std::string switchBlocker(ClientId& client, std::string& name) const override;
  void closing(const RunEnd& end) override;
  void ended() override;
  void closed() override;

  /// The switch job (tests: its state).
  const SwitchJob& job() const { return job_; }

 private:
  // manager_requests.cpp: the requests and their answers.
  Answer handle(SwitchJob& job, const Request& r);
  bool publishAnswer();
  void takeRequest();
  void evaluatePolicy();
  // replay_switches.cpp: a managed replay makes the recorded switches (--replay).
  std::optional<RunEnd> replaySwitches();
  bool refusedInReplay(const Request& r);
  std::optional<RunEnd> stopForExit();

  RunCore& core_;
  Switching switching_;  // before job_: the job's thread uses it, and ends first
  PolicyRun policy_;
  ManagerPort port_;  // before job_: the job's thread ends first
  SwitchJob job_;
  std::uint32_t pendingSeq_ = 0;      // the request last handed to the job (or answered at once)
  Mode* signalStopped_ = nullptr;     // the schedule a signal stopped
  std::optional<RunEnd> clientExit_;  // a client's exit request: the end, once the running schedule stopped
  Mode* exitStopped_ = nullptr;       // the schedule that request stopped
  std::size_t replayStep_ = 0;        // the next recorded switch to make (a managed replay's)
  std::string replayFailure_;         // a recorded switch that failed, in words
};

}  // namespace tactus::master
