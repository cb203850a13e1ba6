// One SoC's part of a multi-SoC run (one tactus-master per SoC, joined by soc_link over Cyclone
// DDS): the start barrier across SoCs, the primary's iteration starts that the other masters
// follow (IterationSync), the runnable ends that cross SoCs (exported by their SoC's master,
// mirrored into the waiting SoC's completion words), and the watch over the other masters.
//
//   SoC A (primary)                                    SoC B
//   worker ends X ->done[X] -> exporter --DDS end-->  (DDS listener) done[X] -> worker waiting for X
//   release thread: start h --DDS release------------> (DDS listener) -> follower release thread
//   monitor loop: peers' states and liveliness <------DDS state-------> monitor loop
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "roles/iteration_sync.hpp"
#include "roles/run_control.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::soc_link {
class Link;
struct RemoteEnd;
struct RemoteRelease;
struct ClockAnswer;
}  // namespace tactus::soc_link

namespace tactus::master {

/// Where one SoC's master stands in a multi-SoC run.
struct SocRunOptions {
  std::uint32_t soc = 0;                      ///< this master's SoC (-x), index into Schedule::socs
  std::uint32_t primary = 0;                  ///< the primary SoC (--primary, else the first)
  std::uint32_t domain = 0;                   ///< DDS domain id (--dds-domain)
  std::int64_t livelinessNs = 5'000'000'000;  ///< a master silent this long is gone (-o)
  bool managed = false;  ///< under a schedule manager (-N): hyperepochs start and stop at the primary's switches
};

/// Restricts the master's run plan to SoC `soc`: each hyperepoch's instances and each frame's
/// instances keep only those this SoC runs, so the release threads wait for this SoC's work alone
/// (another SoC's ends arrive only where a runnable here waits for them).
void restrictPlanToSoc(RunPlan& plan, const Schedule& schedule, std::uint32_t soc);

/// One SoC's part of a multi-SoC run. Not copyable.
class SocRun final : public IterationSync {
 public:
  /// `view` (with its geometry), `schedule`, `plan` (the full plan, not restricted) and `control`
  /// outlive it.
  SocRun(const Schedule& schedule, const RunPlan& plan, const shm::SegmentView& view, RunControl& control,
         const SocRunOptions& options);
  ~SocRun() override;
  SocRun(const SocRun&) = delete;
  SocRun& operator=(const SocRun&) = delete;

  /// Joins the DDS domain (soc_link); the error says what failed.
  Result<void> open();

  /// Before the run, once this SoC's clients have all entered: announces this master ready
  /// (again every 100 ms) and says whether every other SoC's master is ready and the link matched
  /// with each both ways (then the run may start).
  bool peersReady();
  /// The end of a start that did not complete within `timeoutS` seconds (-a), naming the SoCs
  /// whose masters are missing.
  RunEnd startTimeoutEnd(std::int64_t timeoutS);

  /// The monitor loop's check of the other masters: one that vanished (no liveliness within -o)
  /// or ended the run with a failure ends this SoC's run too, naming that SoC. A follower's
  /// request to stop (a signal) makes the primary stop every SoC at the next iteration boundary.
  std::optional<RunEnd> checkPeers();

  /// Starts the link threads (ends out, and on a follower the releases in; ends come in on the
  /// link's own receiving thread from open() on) and announces this master running.
  void start();
  /// Asks the primary to stop the run at the next iteration boundary (a follower's signal).
  void requestStop();
  /// Ends the run's link work: waits (at most 1 s) until every end of the completed iterations is
  /// published when the run ended well, stops the threads, and announces how the run ended. On the
  /// primary, a run that ended well (for `reason`) stops the followers' hyperepochs whose release
  /// thread left without its stop (the end came while it waited for an iteration: a frozen client),
  /// so every SoC learns the reason, not only that this master ended.
  void finish(bool ok, const std::string& message, shm::StopReason reason = shm::StopReason::kFrameLimit);
  /// A follower: why the primary stopped the run (its stop samples carry it), once one came.
  std::optional<shm::StopReason> primaryStopReason() const;
  /// The primary: another SoC's master asked to stop the run (its signal, or a client's exit request there).
  bool peerAskedStop() const { return peerAskedStop_.load(std::memory_order_acquire); }

  // --- Under a schedule manager (SocRunOptions::managed): the primary's switches, followed. ---

  /// The primary: the run ends (a peer that leaves from now on is ending with it).
  void ending() { stopSent_.store(true, std::memory_order_release); }
  /// The primary, before a rollover stops hyperepoch `he`: its stop sample says it was a switch,
  /// so a follower runs its clients' switch callbacks when the next schedule starts there.
  void markSwitch(HyperepochId he) { follow_[index(he)].switchStop.store(true, std::memory_order_release); }
  /// A follower: when (the primary's clock) the primary started iteration `iteration` of `he`,
  /// once its start arrived (an activation that begins there); nothing before.
  std::optional<std::int64_t> startedSince(HyperepochId he, std::uint64_t iteration) const;
  /// A follower: the iteration of the primary's earliest stop of `he` not consumed yet (the stop of
  /// the activation followed now, or of one not followed yet), if one came.
  std::optional<std::uint64_t> pendingStop(HyperepochId he) const;
  /// A follower: consumes that stop (its activation has ended here); whether it was a rollover's
  /// (markSwitch). Stops queue, one per activation, so a follower behind by whole activations
  /// still stops each where the primary did.
  bool consumeStop(HyperepochId he);
  /// A follower: whether a release loop follows `he` now (else a start sample wakes `attention`,
  /// the monitor loop's word, which activates the hyperepoch).
  void setFollowing(HyperepochId he, bool following, std::atomic<std::uint32_t>* attention);
  /// A follower: the primary's end in words once its master announced that its run ended well.
  std::optional<std::string> primaryEnded() const;
  /// The name of SoC `soc` of the schedule, quoted.
  std::string socName(std::uint32_t soc) const;
  /// The primary SoC's index.
  std::uint32_t primary() const { return o_.primary; }
  /// The kClockOffset record of this SoC's log (event_log.hpp): the primary's marks it the
  /// primary; a follower's carries its offset estimate.
  EventRecord offsetRecord() const;
  /// A follower during the run: the kClockOffset record of its estimate when the estimate changed
  /// since the one last recorded, at most once a second (nothing else, and nothing on the
  /// primary): the log keeps the estimate's history; a reader merging logs takes the last.
  std::optional<EventRecord> offsetUpdate(std::int64_t nowNs);
  /// The clock-offset estimate in words, for the master's log (a follower's; "" on the primary):
  /// two-way with its bound once the primary answered, else the one-way minimum of receive - send.
  std::string offsetText() const;

  // IterationSync
  bool follower() const override { return o_.soc != o_.primary; }
  void started(HyperepochId he, std::uint64_t iteration, std::int64_t startNs) override;
  void stopped(HyperepochId he, std::uint64_t iteration) override;
  std::optional<std::int64_t> awaitStart(HyperepochId he, std::uint64_t iteration) override;

 private:
  static constexpr std::uint32_t kStartRing = 64;  // starts kept per hyperepoch (as the DDS history)
  static constexpr std::uint32_t kStopRing = 16;   // stops kept per hyperepoch (activations a follower may lag)
  // A follower's view of the primary's starts of one hyperepoch (written by receiveRelease, on
  // Cyclone's receiving thread).
  struct Follow {
    std::atomic<std::uint64_t> received{0};           // iterations whose start arrived (latest + 1)
    std::atomic<std::int64_t> startNs[kStartRing]{};  // by iteration % kStartRing, the primary's clock
    std::atomic<std::uint32_t> word{0};               // futex word: bumped on every update
    std::atomic<std::uint32_t> sleeping{0};           // follow loops asleep on `word` (0: no wake-up needed)
    std::atomic<bool> switchStop{false};              // the primary: its next stop is a rollover's (markSwitch)
    // A follower's queue of the primary's stops (written on Cyclone's receiving thread; consumed by
    // the monitor loop under a manager, never without one): one per activation, in order.
    std::atomic<std::uint64_t> stopIteration[kStopRing]{};  // by stop count % kStopRing
    std::atomic<bool> stopForSwitch[kStopRing]{};           // ... whether it was a rollover's
    std::atomic<std::uint64_t> stopsIn{0};                  // stops received
    std::atomic<std::uint64_t> stopsOut{0};                 // stops consumed
    std::atomic<bool> parked{true};                         // managed: no release loop follows it now
    std::int64_t lastStartNs = 0;                           // the follow loop's own: the start it last returned
    std::uint64_t lastIteration = 0;                        // ... and its iteration
  };
  void exportLoop(HyperepochId he);
  /// When iteration `h` of exported instance `i` is expected to end (CLOCK_MONOTONIC): a WCET after
  /// its start once it started, else by the plan from its epoch's latest release; -1: unknown.
  std::int64_t expectedEndNs(InstanceId i, std::uint64_t h, std::int64_t nowNs) const;
  void mirrorEnd(const soc_link::RemoteEnd& e);
  void receiveRelease(const soc_link::RemoteRelease& r);
  // The clock (a follower's): questions to the primary, its answers into the estimate.
  void askClock();
  void receiveClock(const soc_link::ClockAnswer& a);
  std::int64_t offsetEstimateNs() const;
  std::optional<RunEnd> clockBoundEnd() const;

  const Schedule& schedule_;
  const RunPlan& plan_;
  const shm::SegmentView& view_;
  RunControl& control_;
  SocRunOptions o_;
  std::unique_ptr<soc_link::Link> link_;
  IdVector<HyperepochId, std::vector<InstanceId>> exported_;          // per hyperepoch: ends other SoCs wait for
  IdVector<RunnableId, std::vector<InstanceId>> byRunnableFrame_;     // [runnable][frame] -> instance
  std::unique_ptr<std::atomic<std::uint64_t>[]> exportedIterations_;  // per hyperepoch: fully published
  std::unique_ptr<Follow[]> follow_;                                  // per hyperepoch
  std::atomic<std::int64_t> offsetNs_{INT64_MAX};                     // min(receive - send) over the primary's releases
  std::atomic<std::uint64_t> offsetSamples_{0};
  // The two-way estimate (a follower's), from the clock exchanges with the primary: of the last
  // kClockWindow answers, the one with the shortest round trip gives the offset (this clock minus
  // the primary's) and its bound (half that round trip). Written on Cyclone's receiving thread.
  static constexpr std::size_t kClockWindow = 16;
  struct ClockSample {
    std::int64_t offsetNs = 0;
    std::int64_t roundTripNs = 0;
  };
  // The estimate as one value: the answers taken, the best offset of the window and its bound.
  struct ClockEstimate {
    std::uint64_t answers = 0;
    std::int64_t offsetNs = 0;
    std::int64_t boundNs = -1;  // -1 before the first answer
  };
  /// The estimate, read whole (offset and bound of the same exchange).
  ClockEstimate clockEstimate() const;
  mutable std::mutex clockLock_;                 // guards clockWindow_ and clockBest_ (the receiving thread's)
  ClockSample clockWindow_[kClockWindow]{};      // by answer count % kClockWindow
  ClockEstimate clockBest_;                      // the best of the window
  std::atomic<std::uint64_t> clockAnswers_{0};   // answers taken
  std::atomic<std::int64_t> twoWayOffsetNs_{0};  // clockBest_'s offset, for the release path (no lock)
  std::uint64_t clockAsked_ = 0;                 // questions asked (the monitor loop's)
  std::int64_t clockAskedNs_ = 0;                // when the last one was
  std::atomic<std::uint32_t> primaryStop_{0};    // a follower: the primary's StopReason from its stop samples
  // The primary, per hyperepoch: the iteration after the last one started, plus one, while no stop
  // followed it (0: stopped, or never started); finish() stops the followers there.
  std::unique_ptr<std::atomic<std::uint64_t>[]> unstopped_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopSent_{false};       // the primary: a release thread published the run's stop
  std::atomic<bool> peerAskedStop_{false};  // the primary: a follower asked to stop the run
  std::atomic<std::atomic<std::uint32_t>*> attention_{nullptr};  // managed follower: the monitor loop's word
  std::vector<std::thread> threads_;
  std::int64_t announcedNs_ = 0;
  std::int64_t offsetRecordedNs_ = 0;  // offsetUpdate's: when it last gave a record
  ClockEstimate offsetRecorded_;       // ... and the estimate it held
  std::int64_t primaryStoppedNs_ = 0;  // a follower: when the primary was seen ending well
  bool stopAsked_ = false;
};

}  // namespace tactus::master
