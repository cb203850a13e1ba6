// The master's releaser: one thread per hyperepoch that releases its frames on CLOCK_MONOTONIC,
// gates each release on the previous frame of the epoch, handles overruns (skip or run free) and
// stops at an iteration boundary. It records what it waits for, so the monitor can name a client
// that makes no progress.
//
//   iteration h:  |rel f0 ......... rel f1 ......... rel f2 ....... | next period start
//                 ^ sleepUntil(iterStart + offset), gate: previous frame of the epoch done,
//                   publish EpochSlot::released, wake sleepers
//   at each period boundary: stop requested? iteration h complete? (overrun: skip or run free)
// The loop's phases and the decisions between them are release_phases.hpp's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "roles/iteration_sync.hpp"
#include "roles/log_drain.hpp"
#include "roles/release_phases.hpp"
#include "roles/run_control.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {

/// An instance a release thread has been waiting on (for the stuck-client check).
struct Stall {
  HyperepochId hyperepoch{};  ///< the release thread's hyperepoch
  InstanceId instance{};      ///< the instance not done yet
  std::uint32_t target = 0;   ///< the `done` value it waits for (iteration + 1, wrapping)
  std::int64_t sinceNs = 0;   ///< CLOCK_MONOTONIC ns when the wait for it began
};

/// How a hyperepoch's iterations went since its last start (read by the master's policy).
struct IterationHealth {
  std::uint64_t iterations = 0;   ///< iterations judged since the start (each at its next period boundary)
  std::uint64_t lateHistory = 0;  ///< bit k: the k-th latest judged iteration overran (a late frame or end)
  std::uint64_t cleanStreak = 0;  ///< judged iterations since the latest that overran (or since the start)
};

/// What the release threads call before each release, when every run that the release waits for
/// has ended: the recorder (--record) copies there what those runs wrote if its copier fell
/// behind, so that no run the release starts reuses a channel buffer the copier has not read.
class ReleaseGate {
 public:
  virtual ~ReleaseGate() = default;
  virtual void beforeRelease() = 0;
};

/// Runs the release threads of one run.
class Releaser {
 public:
  /// `view` has its geometry; everything outlives the releaser. `freeRunning`: -m. `pinToPlan`:
  /// each release thread runs on the core of its hyperepoch's first planned CPU runnable (the
  /// core whose worker waits for that release anyway), not on whichever core is free, which on a
  /// machine the plan fills is another worker's (false with -c, -C, or TACTUS_RELEASE_PIN=0).
  Releaser(const shm::SegmentView& view, const Schedule& schedule, const RunPlan& plan, bool freeRunning,
           RunControl& control, bool pinToPlan = false);
  Releaser(const Releaser&) = delete;
  Releaser& operator=(const Releaser&) = delete;
  /// Joins the threads (after abort() on the control, if they are still running).
  ~Releaser();

  /// Starts one thread per hyperepoch that has instances; frame 0 is released at `runStartNs`.
  void start(std::int64_t runStartNs);
  /// A multi-SoC run (before start): the primary's release threads report each iteration's start
  /// and their stop to `sync`; the others' follow the starts it hands them (releaser_follow.cpp).
  void setSync(IterationSync* sync) { sync_ = sync; }
  /// A recorded run (before start): every release calls `gate` first.
  void setReleaseGate(ReleaseGate* gate) { gate_ = gate; }
  /// Whether every release thread has ended.
  bool finished() const { return finished_.load() >= threads_.size(); }
  /// Waits for the release threads to end.
  void join();
  /// The event rings the release threads write (one per hyperepoch), for the log drain.
  IdVector<HyperepochId, MasterEventRing>& eventRings() { return rings_; }
  /// The longest current wait of a release thread for an instance, if any thread waits.
  std::optional<Stall> longestStall() const;
  /// The most iterations any hyperepoch completed.
  std::uint64_t iterationsCompleted() const;

  // --- Schedule switching (a master with -N): each hyperepoch starts and stops on its own. ---

  /// Starts hyperepoch `he`'s release loop alone: its first iteration is `firstIteration`
  /// (iterations continue over activations, so the shared sequences keep growing), released at
  /// `startNs`. The hyperepoch's release thread is started once and parked between activations,
  /// so a start only wakes it; the previous activation must have ended (joinHyperepoch).
  void startHyperepoch(HyperepochId he, std::int64_t startNs, std::uint64_t firstIteration);
  /// startHyperepoch at once (a rollover): the first iteration's releases at offset 0 are
  /// published on the caller's thread before the release thread is woken, so the first frame
  /// does not wait for that wake-up; returns the release time.
  std::int64_t startHyperepochNow(HyperepochId he, std::uint64_t firstIteration);
  /// startHyperepochNow of several hyperepochs (each with its first iteration) at one release
  /// time: every first release is published before any release thread is woken, so no wake-up
  /// (a thread that takes this thread's core) delays a later hyperepoch's first frame.
  std::int64_t startHyperepochsNow(const std::vector<std::pair<HyperepochId, std::uint64_t>>& starts);
  /// Starts hyperepoch `he`'s parked release thread if it has none yet, so the first start of a
  /// switch does not create it (a rollover calls it on the starting schedule first).
  void prepareHyperepoch(HyperepochId he);
  /// Asks hyperepoch `he` to stop at its next iteration boundary (its current frame finishes).
  void requestHyperepochStop(HyperepochId he);
  /// Stops hyperepoch `he` on the caller's thread when its release thread sleeps between two
  /// iterations and every instance of the latest one has finished: nothing is left to wait for,
  /// so a rollover goes on at once instead of waking the release thread (a wake-up costs tens to
  /// hundreds of us on a loaded machine). Returns the stop iteration (its stopAt; no frame of it
  /// was released), or nothing when the loop is busy, elsewhere, or has work left in flight; then
  /// requestHyperepochStop stops it as before. After a stop here the caller still calls
  /// requestHyperepochStop(he), which ends the loop's sleep.
  std::optional<std::uint64_t> stopBetweenIterations(HyperepochId he);
  /// Like requestHyperepochStop, and runs `then` once `he`'s release loop has ended: on its
  /// release thread, so a rollover's next hyperepoch starts without a hand-off to another thread
  /// in between; on the caller's thread, at once, when `he` has no loop running.
  void requestHyperepochStop(HyperepochId he, std::function<void()> then);
  /// Whether hyperepoch `he`'s release thread has ended (true when it never started).
  bool hyperepochFinished(HyperepochId he) const;
  /// Waits (asleep) for hyperepoch `he`'s release loop to end; its thread stays parked for the next start.
  void joinHyperepoch(HyperepochId he);
  /// When hyperepoch `he`'s last activation ended: the latest end of a runnable of its last
  /// iteration, or when its release loop left after an abort (0 before any).
  std::int64_t hyperepochEndNs(HyperepochId he) const {
    return tracks_[index(he)].endNs.load(std::memory_order_acquire);
  }
  /// How hyperepoch `he`'s iterations went since its last startHyperepoch.
  IterationHealth health(HyperepochId he) const;

 private:
  struct Track {
    std::atomic<std::int64_t> waitSinceNs{0};  // 0: not waiting
    std::atomic<std::uint32_t> waitInstance{0};
    std::atomic<std::uint32_t> waitTarget{0};
    // Schedule switching: this hyperepoch's own stop request, first iteration and start time,
    // whether its thread runs, and when it stopped.
    std::atomic<bool> stop{false};
    std::atomic<bool> running{false};
    bool switchable = false;  // started by startHyperepoch: a stop request cuts the wait for the next period
    std::uint64_t firstIteration = 0;
    std::size_t releasedAtStart = 0;  // the first iteration's release points startHyperepochNow published
    std::int64_t startNs = 0;
    std::atomic<std::int64_t> endNs{0};
    // Where the release loop is: (next iteration << 2) | kPhaseIdle while it sleeps to the next
    // iteration's start, kPhaseBusy otherwise; a requester that stops it between iterations
    // (stopBetweenIterations) swaps idle for kPhaseTaken, and the loop then releases nothing more.
    std::atomic<std::uint64_t> phase{0};
    // IterationHealth, written by the release thread only.
    std::atomic<std::uint64_t> judged{0};
    std::atomic<std::uint64_t> lateHistory{0};
    std::atomic<std::uint64_t> cleanStreak{0};
    // The parked release thread: goWord counts starts, endWord the ends of its loops (futex words).
    std::atomic<std::uint32_t> goWord{0};
    std::atomic<std::uint32_t> endWord{0};
    // What runs on the release thread once its loop has ended (a rollover's switch). thenLock
    // orders it with `running` going false, so it runs exactly once, here or on the requester.
    std::mutex thenLock;
    std::function<void()> then;
  };
  static constexpr std::uint64_t kPhaseBusy = 0;
  static constexpr std::uint64_t kPhaseIdle = 1;
  static constexpr std::uint64_t kPhaseTaken = 2;
  // One run of a hyperepoch's release loop: what its phases (release_phases.hpp) carry from one
  // to the next, on the release thread's stack.
  struct Loop {
    HyperepochId he;
    Track& own;
    shm::HyperepochSlot& slot;
    const HyperepochPlan& plan;
    bool follower;                // a multi-SoC follower's (followLoop), else on the own clock (releaseLoop)
    std::uint64_t limit;          // the frame limit (the slot's stopAt at the start; a follower's: none)
    std::uint64_t first;          // the first iteration
    std::int64_t periodNs;        // the hyperepoch's period
    std::int64_t iterStartNs;     // iteration h's start (h - 1's until h's start is decided)
    std::uint64_t h;              // the iteration
    std::int64_t boundaryNs = 0;  // h's start if h - 1 is done in time (a follower's: the primary's start)
    bool frameLate = false;       // a frame of iteration h (then h - 1, at the boundary) overran
    bool taken = false;           // stopped by stopBetweenIterations: iteration h - 1 ended, all recorded
  };
  void parkedLoop(HyperepochId he);
  void pinThread(HyperepochId he) const;
  void judge(Track& track, bool late);
  void releaseLoop(HyperepochId he);
  void followLoop(HyperepochId he);
  void runLoop(Loop& loop);
  PhaseResult runPhase(Loop& loop, ReleasePhase phase);
  bool stopAtBoundary(Loop& loop);
  PhaseResult startFirst(Loop& loop);
  PhaseResult awaitBoundary(Loop& loop);
  PhaseResult awaitPrimary(Loop& loop);
  PhaseResult closePrevious(Loop& loop);
  PhaseResult overrun(Loop& loop);
  PhaseResult releaseIteration(Loop& loop);
  PhaseResult stopping(Loop& loop);
  PhaseResult drainLast(Loop& loop);
  void leave(Loop& loop);
  void launch(HyperepochId he, std::int64_t startNs, std::uint64_t firstIteration, std::size_t releasedAtStart);
  bool releaseFrames(HyperepochId he, std::uint64_t h, std::int64_t iterStart, std::size_t from, bool& frameLate);
  void publishRelease(HyperepochId he, const ReleasePoint& p, std::uint64_t iteration, std::int64_t idealNs,
                      std::int64_t actualNs);
  std::int64_t sleepUntil(std::int64_t deadlineNs);
  int sleepUntilOrStopped(Track& track, std::int64_t deadlineNs);
  bool instancesDone(const std::vector<InstanceId>& instances, std::uint64_t iteration) const;
  /// A follower, before it awaits the primary's next start: the first of `instances` not done
  /// with `iteration` becomes the track's wait (for the stall watch), if any.
  void showPending(Track& track, const std::vector<InstanceId>& instances, std::uint64_t iteration);
  bool waitInstances(HyperepochId he, const std::vector<InstanceId>& instances, std::uint64_t iteration);
  bool waitIterationByPlan(HyperepochId he, std::uint64_t iteration, std::int64_t iterStart);

  const shm::SegmentView& view_;
  const Schedule& schedule_;
  const RunPlan& plan_;
  const bool freeRunning_;
  RunControl& control_;
  std::int64_t runStartNs_ = 0;
  IdVector<HyperepochId, MasterEventRing> rings_;      // per hyperepoch
  std::unique_ptr<Track[]> tracks_;                    // per hyperepoch (index(he))
  IdVector<HyperepochId, std::uint32_t> releaseCore_;  // per hyperepoch: the core its release thread runs on, or kNone
  std::vector<HyperepochId> active_;                   // hyperepochs with instances
  std::vector<std::thread> threads_;
  IdVector<HyperepochId, std::thread> hyperepochThreads_;  // per hyperepoch, started by startHyperepoch
  std::atomic<std::size_t> finished_{0};
  std::atomic<bool> shutdown_{false};  // join(): the parked threads end
  IterationSync* sync_ = nullptr;      // a multi-SoC run's, else none
  ReleaseGate* gate_ = nullptr;        // a recorded run's, else none
};

}  // namespace tactus::master
