// A schedule switch as an owned state machine (the managed activation's, managed.cpp): one request
// of the manager or of the policy at a time, answered on a switch thread of its own, through named
// states the monitor loop may ask about while it works:
//
//   idle -> requested -> draining -> waiting for clients -> publishing -> done | failed -> (next)
//
//   requested            handed over by the monitor loop, not begun by the switch thread
//   draining             the running schedule's hyperepoch finishes its iteration (a stop, a
//                        rollover's old side): its clients hold the switch until they finish it
//   waiting for clients  the clients are waited for: to enter (a start before they came), to
//                        leave the previous activation, to run their switch callbacks
//   publishing           answered on the switch thread; the monitor loop publishes the answer
//   done, failed         the answer published: what was asked was done, or refused or cut short
//
// A signal or any end that comes during a switch asks the job what it waits for (waitingOn) and
// names the client that holds it; the switch answers as cut short (kRunEnded and the end's cause).
// A rollover's pairs, switched on the old schedule's release threads, report to the job, which
// outlives every release thread (no callback refers to the stack of the request that made it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "roles/run_control.hpp"
#include "tactus/core/ids.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {

struct Mode;

/// The manager's request, taken from the channel by the monitor loop.
struct Request {
  std::uint32_t seq = 0;
  shm::ManagerOp op = shm::ManagerOp::kNone;
  std::uint32_t arg0 = 0;
  std::uint32_t arg1 = 0;
  std::int64_t takenNs = 0;  ///< CLOCK_MONOTONIC ns when the master took it
  int rule = -1;  ///< the policy rule that made it (an index in Policy::rules), -1: the manager's, kReplayRule
  std::uint16_t ruleSchedule = 0;  ///< kPolicyDecision's schedule field
  std::uint32_t ruleDetail = 0;    ///< kPolicyDecision's iteration field (hyperepoch, client)
};

/// Request::rule of a managed replay's recorded switch (managed/replay_switches.cpp).
constexpr int kReplayRule = -2;

/// The master's answer to a request.
struct Answer {
  shm::ManagerResult code = shm::ManagerResult::kOk;
  std::string message;
};

enum class SwitchState : std::uint8_t { kIdle, kRequested, kDraining, kWaitingForClients, kPublishing, kDone, kFailed };

/// The state's name as the master's messages say it ("waiting for clients").
const char* switchStateName(SwitchState state);

/// What a switch in draining or waiting for clients waits on: a schedule's hyperepoch.
struct SwitchWait {
  SwitchState state = SwitchState::kIdle;
  const Mode* mode = nullptr;
  HyperepochId hyperepoch = kNone;
  bool acks = false;  ///< waiting for clients: their switch callbacks' acknowledgements (else their leaving)
};

class SwitchJob {
 public:
  /// `handle` answers a request on the switch thread; `answered` wakes the monitor loop once it has.
  SwitchJob(std::function<Answer(SwitchJob&, const Request&)> handle, std::function<void()> answered);
  SwitchJob(const SwitchJob&) = delete;
  SwitchJob& operator=(const SwitchJob&) = delete;
  /// Ends the switch thread (stop).
  ~SwitchJob();

  // The monitor loop's side.
  /// Hands `r` to the switch thread (started at the first request); no switch may be in flight.
  void launch(const Request& r);
  SwitchState state() const { return state_.load(std::memory_order_acquire); }
  /// Requested, draining or waiting for clients: the switch owns the schedules' state.
  bool inFlight() const;
  /// A switch answered (publishing): its request and answer, the state now done or failed; none otherwise.
  std::optional<std::pair<Request, Answer>> takeAnswer();
  /// The request handed over last and, once answered, its answer (the end publishes one never taken).
  const Request& request() const { return request_; }
  const Answer& answer() const { return answer_; }
  /// Whether the last request's answer has not been taken yet (requested .. publishing).
  bool answerPending() const;
  /// What a draining or waiting switch waits on (state idle and no mode otherwise).
  SwitchWait waitingOn() const;
  /// The end a kExit request asked for, once answered.
  const std::optional<RunEnd>& exitEnd() const { return exitEnd_; }
  /// Ends the switch thread once it has answered what it was handed.
  void stop();

  // The switch thread's side (from within `handle`).
  /// The switch now drains or waits for clients (`acks`: their switch callbacks) of hyperepoch `he`
  /// of `mode` (kNone: of every hyperepoch).
  void enter(SwitchState state, const Mode* mode, HyperepochId he, bool acks = false);
  /// A kExit request: the run ends with `end` once it is answered.
  void endRun(RunEnd end) { exitEnd_ = std::move(end); }
  /// A rollover of `pairs` (old, new hyperepoch) begins: each pair reports once it switched.
  void beginPairs(std::vector<std::pair<HyperepochId, HyperepochId>> pairs);
  const std::vector<std::pair<HyperepochId, HyperepochId>>& pairs() const { return pairs_; }
  /// A pair switched (`ok`), or was cut short; from any thread (a release thread's last act).
  void pairSwitched(bool ok);
  /// Waits until every pair reported; whether each switched.
  bool awaitPairs();

 private:
  void loop();

  std::function<Answer(SwitchJob&, const Request&)> handle_;
  std::function<void()> answered_;
  std::atomic<SwitchState> state_{SwitchState::kIdle};
  mutable std::mutex waitLock_;  // guards wait_ (the switch thread writes, the monitor loop reads)
  SwitchWait wait_;
  std::thread thread_;  // started with the first request and kept, parked on ready_ (about 200 us per rollover)
  std::mutex lock_;     // guards job_ and quit_
  std::condition_variable ready_;
  std::optional<Request> job_;
  bool quit_ = false;
  Request request_;                // the monitor loop writes it before the hand-over, the switch thread reads
  Answer answer_;                  // the switch thread writes it before publishing
  std::optional<RunEnd> exitEnd_;  // the switch thread writes it before publishing
  std::vector<std::pair<HyperepochId, HyperepochId>> pairs_;
  std::atomic<bool> pairsOk_{true};
  std::atomic<std::uint32_t> pairsDone_{0};
  std::atomic<std::uint32_t> pairsWaiters_{0};
};

}  // namespace tactus::master
