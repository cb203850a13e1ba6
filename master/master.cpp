// tactus-master's logic: load and verify the schedule, publish it in shared memory, wait for the
// clients, release frames on CLOCK_MONOTONIC, watch for dead clients, drain the event rings.
//
// Threads: the main thread runs the monitor loop (clients, exit requests, signals, log draining,
// every 2 ms or when a client bumps the attention word); one release thread per hyperepoch runs
// that hyperepoch's time base:
//
//   iteration h:  |rel f0 ......... rel f1 ......... rel f2 ....... | next period start
//                 ^ sleepUntil(iterStart + offset), gate: previous frame of the epoch done,
//                   publish EpochSlot::released, wake sleepers
//   at each period boundary: stop requested? iteration h complete? (overrun: skip or run free)
#include "master.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include "tactus/core/event_log.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

using shm::ClientState;
using shm::SegmentState;
using shm::StopReason;

Result<MasterOptions> parseMasterArguments(const std::vector<std::string>& args) {
  MasterOptions o;
  auto needValue = [&](std::size_t& i) -> Result<std::string> {
    if (i + 1 >= args.size()) return fail(ErrorCode::kParse, "option '" + args[i] + "' needs a value");
    return args[++i];
  };
  auto toInt = [](const std::string& opt, const std::string& text) -> Result<long long> {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
      return v;
    } catch (...) {
      return fail(ErrorCode::kParse, "option '" + opt + "' expects an integer, got '" + text + "'");
    }
  };
  std::set<std::string> seen;  // value options: a second one is a mistake, not an override
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool takesValue = a == "-s" || a == "-l" || a == "-D" || a == "-e" || a == "-t" || a == "-c" || a == "-P";
    if (takesValue && a != "-s" && !seen.insert(a).second)
      return fail(ErrorCode::kParse, "option '" + a + "' given twice");
    if (a == "-s" || a == "-l" || a == "-D") {
      auto v = needValue(i);
      if (!v) return v.error();
      if (a == "-s" && !o.schedulePath.empty()) {
        return fail(ErrorCode::kParse, "-s given twice ('" + o.schedulePath + "', then '" + *v +
                                           "'): one schedule file per master is supported; run one master per "
                                           "schedule, each with its own instance (-D)");
      }
      (a == "-s" ? o.schedulePath : a == "-l" ? o.logPath : o.instance) = *v;
    } else if (a == "-e" || a == "-t" || a == "-c" || a == "-P") {
      auto v = needValue(i);
      if (!v) return v.error();
      auto n = toInt(a, *v);
      if (!n) return n.error();
      if (a == "-e") {
        if (*n < 0) return fail(ErrorCode::kParse, "-e expects a count >= 0, got '" + *v + "'");
        o.iterations = static_cast<std::uint64_t>(*n);
      } else if (a == "-t") {
        if (*n < -1) return fail(ErrorCode::kParse, "-t expects microseconds >= 0 or -1 (forever)");
        o.timeoutUs = *n;
      } else if (a == "-c") {
        if (*n < 0 || *n > 4095) return fail(ErrorCode::kParse, "-c expects a core number, got '" + *v + "'");
        o.core = static_cast<int>(*n);
      } else {
        if (*n < 0 || *n > 99) return fail(ErrorCode::kParse, "-P expects a priority 1..99, got '" + *v + "'");
        o.priority = static_cast<int>(*n);
      }
    } else if (a == "-m") {
      o.freeRunning = true;
    } else if (a == "-C") {
      o.noPinning = true;
    } else if (a == "-M") {
      o.lockMemory = true;
    } else if (a == "--allow-unregistered-runnables") {
      o.allowUnregistered = true;
    } else if (a == "-v") {
      o.verbose = true;
    } else if (a == "-V" || a == "--version") {
      o.showVersion = true;
    } else if (a == "-h" || a == "--help") {
      o.showHelp = true;
    } else {
      return fail(ErrorCode::kParse, "unknown argument '" + a + "'");
    }
  }
  if (!o.showHelp && !o.showVersion && o.schedulePath.empty()) {
    return fail(ErrorCode::kParse, "missing -s <schedule file>");
  }
  if (auto ok = ipc::validateInstanceName(o.instance); !ok) return ok.error();
  return o;
}

std::string masterUsage() {
  return "usage: tactus-master -s schedule.tsched [options]\n"
         "  -s FILE    compiled schedule file (from tactus-compile)\n"
         "  -e N       run N hyperepoch iterations, then stop (default: until stopped)\n"
         "  -l FILE    write the event log (start/end of every runnable, releases, overruns)\n"
         "  -t US      wait at most US microseconds for the clients (default 5000000; -1 forever)\n"
         "  -m         free-running after an overrun (default: skip to the next period boundary)\n"
         "  -D NAME    instance name (default 'default'); shared memory /dev/shm/tactus_NAME\n"
         "  -c CORE    pin the master's threads to CORE\n"
         "  -P PRIO    run the release threads with SCHED_FIFO priority PRIO\n"
         "  -C         do not pin client worker threads to their cores\n"
         "  -M         lock the master's memory (mlockall)\n"
         "  --allow-unregistered-runnables  run even if a client did not register a scheduled runnable\n"
         "  -v         verbose\n"
         "  -V         print the version\n"
         "  --help     this text\n"
         "exit status: 0 ended by frame limit, exit request or signal; 1 the run failed (a client\n"
         "died, did not come or refused); 2 bad arguments, bad schedule, or the instance is busy\n";
}

namespace {

// Signal state shared with the async-signal handler: only lock-free atomics and a futex wake.
std::atomic<int> gSignal{0};
std::atomic<std::atomic<std::uint32_t>*> gAttention{nullptr};

void onStopSignal(int sig) {
  gSignal.store(sig, std::memory_order_relaxed);
  if (auto* word = gAttention.load(std::memory_order_relaxed)) {
    ipc::signalWord(*word);
  }
}

// The release threads sleep with clock_nanosleep(TIMER_ABSTIME) to this long before a release,
// then spin to it. TACTUS_RELEASE_SPIN_NS overrides it (the frame-release benchmark matches its
// bare loop to it).
std::int64_t releaseSpinNs() {
  static const std::int64_t spin = ipc::envDurationNs("TACTUS_RELEASE_SPIN_NS", 50'000);
  return spin;
}
constexpr std::int64_t kMonitorSliceNs = 2'000'000;
constexpr std::int64_t kStartLeadNs = 2'000'000;  // first release this long after all clients entered
constexpr std::int64_t kClientExitWaitNs = 1'000'000'000;

class Run {
 public:
  Run(const MasterOptions& o, std::ostream& out, std::ostream& err) : o_(o), out_(out), err_(err) {}
  ~Run() { cleanup(); }

  int execute();

 private:
  Result<void> load();
  Result<ipc::Segment> createSegment(std::size_t size);
  int waitForClients();
  int runFrames();
  void releaseLoop(std::uint32_t he);
  bool waitInstances(const std::vector<std::uint32_t>& instances, std::uint64_t iteration);
  bool instancesDone(const std::vector<std::uint32_t>& instances, std::uint64_t iteration) const;
  void drainRings();
  bool checkClients(bool beforeRun);
  void requestStop(StopReason reason, std::uint32_t client);
  void publishEnd(SegmentState state, StopReason reason, std::uint32_t client, const std::string& message);
  void masterEvent(const EventRecord& record);
  void waitForClientsToLeave();
  void cleanup();
  std::string clientName(std::uint32_t c) const { return c < schedule_.clients.size() ? schedule_.clients[c].name : "?"; }

  const MasterOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  std::string text_;
  Schedule schedule_;
  RunPlan plan_;
  ipc::Segment segment_;
  shm::SegmentView view_;
  bool segmentOwned_ = false;
  EventLogWriter log_;
  std::vector<ipc::ProcessWatch> watches_;
  std::vector<std::uint64_t> droppedSeen_;
  std::uint64_t droppedTotal_ = 0;
  std::uint64_t recordsDrained_ = 0;
  std::int64_t runStartNs_ = 0;

  std::atomic<bool> aborted_{false};
  std::atomic<bool> stopRequested_{false};
  std::atomic<std::uint32_t> stopReason_{static_cast<std::uint32_t>(StopReason::kNone)};
  std::atomic<std::uint32_t> stopClient_{kNone};
  std::atomic<std::uint32_t> finishedHyperepochs_{0};
  std::mutex eventsMutex_;
  std::vector<EventRecord> masterEvents_;
  std::uint64_t contentHash_ = 0;  // of the loaded file, checked by readSchedule
};

Result<void> Run::load() {
  auto text = readRegularFile(o_.schedulePath, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  text_ = std::move(*text);
  auto schedule = readSchedule(text_, o_.schedulePath, &contentHash_);
  if (!schedule) return schedule.error();
  schedule_ = std::move(*schedule);
  VerifyReport report = verifySchedule(schedule_);
  if (!report.ok()) {
    std::string message = o_.schedulePath + ": the schedule fails verification:";
    for (const std::string& e : report.errors) message += "\n  " + e;
    return fail(ErrorCode::kVerification, message);
  }
  if (o_.verbose) {
    for (const std::string& w : report.warnings) err_ << "tactus-master: warning: " << w << "\n";
  }
  auto plan = makeRunPlan(schedule_);
  if (!plan) return fail(plan.error().code, o_.schedulePath + ": " + plan.error().message);
  plan_ = std::move(*plan);
  if (schedule_.clients.empty()) return fail(ErrorCode::kValidation, o_.schedulePath + ": the schedule has no clients");
  return {};
}

Result<ipc::Segment> Run::createSegment(std::size_t size) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto created = ipc::Segment::create(o_.instance, size);
    if (created) return created;
    if (created.error().code != ErrorCode::kAlreadyExists) return created.error();
    // Someone's segment is there: a live master (refuse) or a stale one (replace).
    std::uint32_t pid = 0;
    std::uint64_t startTime = 0;
    for (int wait = 0; wait < 20 && pid == 0; ++wait) {  // a master may be creating it right now
      auto existing = ipc::Segment::open(o_.instance);
      if (existing) {
        shm::SegmentView v(existing->bytes());
        if (v.hasHeader()) {
          pid = v.header().masterPid.load(std::memory_order_acquire);
          startTime = v.header().masterStartTime;
        }
      } else if (existing.error().code == ErrorCode::kNotFound && !ipc::segmentExists(o_.instance)) {
        break;  // it went away: try again
      }
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!ipc::segmentExists(o_.instance)) continue;
    if (pid != 0 && ipc::processAlive(static_cast<pid_t>(pid), startTime)) {
      return fail(ErrorCode::kAlreadyExists, "instance '" + o_.instance + "' already has a running master (pid " +
                                                 std::to_string(pid) + "); stop it first or pick another instance with -D");
    }
    err_ << "tactus-master: replacing stale segment " << ipc::segmentPath(o_.instance)
         << (pid != 0 ? " left by master pid " + std::to_string(pid) + ", which is gone" : " that no master owns")
         << "\n";
    ipc::removeSegment(o_.instance);
  }
  return fail(ErrorCode::kIo, ipc::segmentPath(o_.instance) + ": cannot create the segment (it keeps reappearing)");
}

void Run::publishEnd(SegmentState state, StopReason reason, std::uint32_t client, const std::string& message) {
  shm::SegmentHeader& h = view_.header();
  view_.setMessage(message);
  h.stopClient.store(client, std::memory_order_relaxed);
  h.stopReason.store(static_cast<std::uint32_t>(reason), std::memory_order_relaxed);
  h.state.store(static_cast<std::uint32_t>(state), std::memory_order_seq_cst);
  ipc::futexWake(h.state);
  // Wake every sleeper so it sees the new state now rather than after its sleep slice.
  for (std::uint32_t e = 0; e < h.epochCount; ++e) {
    if (view_.epoch(e).waiters.load() != 0) ipc::futexWake(view_.epoch(e).released);
  }
  for (std::uint32_t i = 0; i < h.instanceCount; ++i) {
    if (view_.instance(i).waiters.load() != 0) ipc::futexWake(view_.instance(i).done);
    if (view_.gpu(i).waiters.load() != 0) ipc::futexWake(view_.gpu(i).submitted);  // GPU successors waiting for a submission
  }
}

void Run::masterEvent(const EventRecord& record) {
  std::lock_guard<std::mutex> lock(eventsMutex_);
  masterEvents_.push_back(record);
}

void Run::drainRings() {
  const shm::SegmentHeader& h = view_.header();
  const std::uint32_t capacity = h.ringCapacity;
  std::vector<EventRecord> batch;
  for (std::uint32_t w = 0; w < h.workerCount; ++w) {
    shm::WorkerSlot& slot = view_.worker(w);
    const std::uint64_t head = slot.head.load(std::memory_order_acquire);
    std::uint64_t tail = slot.tail.load(std::memory_order_relaxed);
    if (head - tail > capacity) tail = head - capacity;  // a client wrote nonsense: never read out of range
    const EventRecord* ring = view_.ring(w);
    batch.clear();
    for (std::uint64_t k = tail; k < head; ++k) {
      EventRecord r = ring[k & (capacity - 1)];
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || r.instance >= schedule_.instances.size()) continue;
      batch.push_back(r);
    }
    slot.tail.store(head, std::memory_order_release);
    recordsDrained_ += batch.size();
    if (log_.isOpen()) log_.append(batch.data(), batch.size());
    const std::uint64_t dropped = slot.dropped.load(std::memory_order_relaxed);
    if (dropped > droppedSeen_[w]) {
      const std::uint64_t lost = dropped - droppedSeen_[w];
      droppedSeen_[w] = dropped;
      droppedTotal_ += lost;
      const std::int64_t now = ipc::monotonicNs();
      EventRecord r{static_cast<std::uint16_t>(EventKind::kDropped), 0, plan_.workers[w].client,
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(lost, 0xffffffffu)), w, now, now};
      if (log_.isOpen()) log_.append(&r, 1);
    }
  }
  std::vector<EventRecord> own;
  {
    std::lock_guard<std::mutex> lock(eventsMutex_);
    own.swap(masterEvents_);
  }
  if (log_.isOpen()) log_.append(own.data(), own.size());
}

// Watches attached clients; returns false (after aborting the run) when one died or refused.
bool Run::checkClients(bool beforeRun) {
  const char* phase = beforeRun ? "before the run started" : "during the run";
  for (std::uint32_t c = 0; c < schedule_.clients.size(); ++c) {
    shm::ClientSlot& slot = view_.client(c);
    const std::uint32_t pid = slot.pid.load(std::memory_order_acquire);
    if (pid != 0 && watches_[c].pid() != static_cast<pid_t>(pid)) {
      watches_[c] = ipc::ProcessWatch(static_cast<pid_t>(pid), slot.startTime.load(std::memory_order_relaxed));
    }
    const auto state = static_cast<ClientState>(slot.state.load(std::memory_order_acquire));
    if (state == ClientState::kRefused) {
      const std::uint32_t r = slot.missingRunnable.load(std::memory_order_relaxed);
      const std::string what = r < schedule_.runnables.size()
                                   ? "scheduled runnable '" + qualifiedName(schedule_, r) + "' was not registered"
                                   : "it could not enter the scheduler";
      publishEnd(SegmentState::kAborted, StopReason::kError, c,
                 "client '" + clientName(c) + "' refused to run: " + what +
                     " (start the master with --allow-unregistered-runnables to run without it)");
      return false;
    }
    if (state == ClientState::kExited && beforeRun) {
      publishEnd(SegmentState::kAborted, StopReason::kError, c,
                 "client '" + clientName(c) + "' detached before the run started");
      return false;
    }
    if (watches_[c].pid() != 0 && watches_[c].exited() && state != ClientState::kExited) {
      publishEnd(SegmentState::kAborted, StopReason::kPeerDied, c,
                 "client '" + clientName(c) + "' (pid " + std::to_string(pid) + ") died " + phase);
      return false;
    }
  }
  return true;
}

int Run::waitForClients() {
  const std::int64_t start = ipc::monotonicNs();
  const std::int64_t deadline =
      o_.timeoutUs < 0 ? std::numeric_limits<std::int64_t>::max() : start + o_.timeoutUs * 1000;
  std::atomic<std::uint32_t>& attention = view_.header().attention;
  for (;;) {
    const std::uint32_t seen = attention.load(std::memory_order_acquire);
    if (gSignal.load() != 0) {
      publishEnd(SegmentState::kFinished, StopReason::kSignal, kNone, "the master was stopped by a signal before the run started");
      return kExitOk;
    }
    if (!checkClients(true)) return kExitRunFailed;
    bool all = true;
    for (std::uint32_t c = 0; c < schedule_.clients.size(); ++c) {
      if (view_.client(c).state.load(std::memory_order_acquire) != static_cast<std::uint32_t>(ClientState::kEntered)) all = false;
    }
    if (all) return -1;  // go on
    if (ipc::monotonicNs() >= deadline) {
      std::string message;
      std::uint32_t first = kNone;
      for (std::uint32_t c = 0; c < schedule_.clients.size(); ++c) {
        const auto state = static_cast<ClientState>(view_.client(c).state.load());
        if (state == ClientState::kEntered) continue;
        if (first == kNone) first = c;
        if (!message.empty()) message += "; ";
        message += state == ClientState::kAbsent ? "client '" + clientName(c) + "' did not come"
                                                 : "client '" + clientName(c) + "' attached but did not enter the scheduler";
      }
      message += " within " + std::to_string(o_.timeoutUs / 1000) + " ms (-t " + std::to_string(o_.timeoutUs) + ")";
      publishEnd(SegmentState::kAborted, StopReason::kTimeout, first, message);
      return kExitRunFailed;
    }
    ipc::futexWait(attention, seen, 10'000'000);
  }
}

bool Run::instancesDone(const std::vector<std::uint32_t>& instances, std::uint64_t iteration) const {
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  for (const std::uint32_t i : instances) {
    if (!shm::sequenceReached(view_.instance(i).done.load(std::memory_order_acquire), target)) return false;
  }
  return true;
}

// Waits until every instance finished `iteration`; false when the run was aborted meanwhile.
bool Run::waitInstances(const std::vector<std::uint32_t>& instances, std::uint64_t iteration) {
  const auto target = static_cast<std::uint32_t>(iteration + 1);
  for (const std::uint32_t i : instances) {
    shm::InstanceSlot& slot = view_.instance(i);
    if (ipc::waitForSequence(slot.done, slot.waiters, target, 0, [&] { return aborted_.load(std::memory_order_relaxed); }) !=
        ipc::WaitOutcome::kReached) {
      return false;
    }
  }
  return true;
}

void Run::requestStop(StopReason reason, std::uint32_t client) {
  std::uint32_t none = static_cast<std::uint32_t>(StopReason::kNone);
  if (stopReason_.compare_exchange_strong(none, static_cast<std::uint32_t>(reason))) {
    stopClient_.store(client);
    stopRequested_.store(true, std::memory_order_release);
  }
}

void Run::releaseLoop(std::uint32_t he) {
  const HyperepochPlan& hp = plan_.hyperepochs[he];
  const std::int64_t period = schedule_.hyperepochs[he].periodNs;
  shm::HyperepochSlot& slot = view_.hyperepoch(he);
  const std::uint64_t limit = slot.stopAt.load();
  std::int64_t iterStart = runStartNs_;
  std::uint64_t h = 0;
  auto stopHere = [&](std::uint64_t iteration) {
    if (iteration >= limit) return true;
    if (stopRequested_.load(std::memory_order_acquire) || aborted_.load()) {
      slot.stopAt.store(iteration, std::memory_order_seq_cst);  // no frame of `iteration` was released
      return true;
    }
    return false;
  };
  for (;; ++h) {
    if (h > 0) {
      if (stopHere(h)) break;
      const std::int64_t nextStart = iterStart + period;
      ipc::sleepUntilNs(nextStart, releaseSpinNs());
      if (aborted_.load()) return;
      if (stopHere(h)) break;
      if (instancesDone(hp.instances, h - 1)) {
        iterStart = nextStart;
      } else {
        // Overrun: iteration h - 1 did not finish within its period.
        if (!waitInstances(hp.instances, h - 1)) return;
        const std::int64_t now = ipc::monotonicNs();
        std::uint64_t skipped = 0;
        if (o_.freeRunning) {
          iterStart = now;
        } else {
          const std::int64_t periods = (now - iterStart + period - 1) / period;  // >= 1 period boundaries passed
          iterStart += periods * period;
          skipped = static_cast<std::uint64_t>(periods - 1);
          slot.skipped.fetch_add(skipped);
        }
        masterEvent({static_cast<std::uint16_t>(EventKind::kSkipped), 0, he, static_cast<std::uint32_t>(h),
                     static_cast<std::uint32_t>(skipped), nextStart, iterStart});
        if (stopHere(h)) break;
      }
      slot.completed.store(h);
    } else if (stopHere(0)) {
      break;
    }
    for (const ReleasePoint& p : hp.releases) {
      const std::int64_t ideal = iterStart + p.offsetNs;
      std::int64_t actual = ipc::sleepUntilNs(ideal, releaseSpinNs());
      if (aborted_.load()) return;
      if (p.frame > 0) {
        const auto& previous = plan_.frameInstances[plan_.epochFrameBase[p.epoch] + p.frame - 1];
        if (!instancesDone(previous, h)) {
          if (!waitInstances(previous, h)) return;
          actual = ipc::monotonicNs();
          masterEvent({static_cast<std::uint16_t>(EventKind::kOverrun), 0, p.epoch, static_cast<std::uint32_t>(h),
                       p.frame - 1, ideal, actual});
        }
      }
      shm::EpochSlot& epoch = view_.epoch(p.epoch);
      const std::uint64_t frames = std::max<std::uint32_t>(1, schedule_.epochs[p.epoch].frames);
      epoch.releaseNs.store(ideal, std::memory_order_relaxed);
      ipc::publishSequence(epoch.released, epoch.waiters, static_cast<std::uint32_t>(h * frames + p.frame + 1));
      masterEvent({static_cast<std::uint16_t>(EventKind::kRelease), 0, p.epoch, static_cast<std::uint32_t>(h), p.frame,
                   ideal, actual});
    }
  }
  // Stopping at iteration h: let iteration h - 1 finish.
  if (h > 0 && !waitInstances(hp.instances, h - 1)) return;
  slot.completed.store(h);
  finishedHyperepochs_.fetch_add(1);
  ipc::signalWord(view_.header().attention);
}

int Run::runFrames() {
  shm::SegmentHeader& header = view_.header();
  runStartNs_ = ipc::monotonicNs() + kStartLeadNs;
  header.runStartNs.store(runStartNs_);
  log_.setRunStart(runStartNs_);
  header.state.store(static_cast<std::uint32_t>(SegmentState::kRunning), std::memory_order_seq_cst);
  ipc::futexWake(header.state);

  std::vector<std::uint32_t> active;
  for (std::uint32_t he = 0; he < plan_.hyperepochs.size(); ++he) {
    if (!plan_.hyperepochs[he].instances.empty()) active.push_back(he);
  }
  std::vector<std::thread> threads;
  for (const std::uint32_t he : active) threads.emplace_back([this, he] { releaseLoop(he); });

  bool failed = false;
  std::int64_t lastClientCheck = 0;
  while (finishedHyperepochs_.load() < active.size()) {
    const std::uint32_t seen = header.attention.load(std::memory_order_acquire);
    drainRings();
    const std::int64_t now = ipc::monotonicNs();
    if (now - lastClientCheck >= kMonitorSliceNs) {
      lastClientCheck = now;
      if (!checkClients(false)) {
        failed = true;
        break;
      }
    }
    for (std::uint32_t c = 0; c < schedule_.clients.size(); ++c) {
      if (view_.client(c).exitRequested.load(std::memory_order_relaxed) != 0) requestStop(StopReason::kExitRequested, c);
    }
    if (gSignal.load() != 0) requestStop(StopReason::kSignal, kNone);
    if (finishedHyperepochs_.load() >= active.size()) break;
    ipc::futexWait(header.attention, seen, kMonitorSliceNs);
  }
  if (failed) aborted_.store(true);
  for (std::thread& t : threads) t.join();
  drainRings();
  if (failed) return kExitRunFailed;

  const auto reason = stopRequested_.load() ? static_cast<StopReason>(stopReason_.load()) : StopReason::kFrameLimit;
  std::uint64_t iterations = 0;
  for (const std::uint32_t he : active) iterations = std::max<std::uint64_t>(iterations, view_.hyperepoch(he).completed.load());
  std::string message;
  switch (reason) {
    case StopReason::kExitRequested: message = "client '" + clientName(stopClient_.load()) + "' requested exit"; break;
    case StopReason::kSignal: message = "the master was stopped by a signal"; break;
    default: message = "ran " + std::to_string(iterations) + " hyperepoch iterations"; break;
  }
  publishEnd(SegmentState::kFinished, reason, reason == StopReason::kExitRequested ? stopClient_.load() : kNone, message);
  if (o_.verbose) {
    std::uint64_t skippedTotal = 0;
    for (std::uint32_t he = 0; he < schedule_.hyperepochs.size(); ++he) skippedTotal += view_.hyperepoch(he).skipped.load();
    out_ << "tactus-master: " << message << "; " << recordsDrained_ << " events logged, " << droppedTotal_
         << " dropped, " << skippedTotal << " periods skipped\n";
  }
  return kExitOk;
}

void Run::waitForClientsToLeave() {
  const std::int64_t deadline = ipc::monotonicNs() + kClientExitWaitNs;
  while (ipc::monotonicNs() < deadline) {
    bool all = true;
    for (std::uint32_t c = 0; c < schedule_.clients.size(); ++c) {
      const auto state = static_cast<ClientState>(view_.client(c).state.load());
      if (state == ClientState::kAttached || state == ClientState::kEntered) {
        if (watches_[c].pid() == 0 || !watches_[c].exited()) all = false;
      }
    }
    if (all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Run::cleanup() {
  gAttention.store(nullptr);
  if (segmentOwned_) {
    ipc::removeSegment(o_.instance);
    segmentOwned_ = false;
  }
}

int Run::execute() {
  if (auto ok = load(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  if (o_.priority > 0) {
    sched_param param{};
    param.sched_priority = o_.priority;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      err_ << "tactus-master: cannot use SCHED_FIFO priority " << o_.priority << ": " << std::strerror(errno)
           << " (needs CAP_SYS_NICE or an rtprio limit)\n";
      return kExitBadInput;
    }
  }
  if (o_.core >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o_.core, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      err_ << "tactus-master: cannot pin to core " << o_.core << ": " << std::strerror(errno) << "\n";
      return kExitBadInput;
    }
  }
  if (o_.lockMemory && ::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    err_ << "tactus-master: cannot lock memory (-M): " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }

  shm::LayoutCounts counts;
  counts.hyperepochs = static_cast<std::uint32_t>(schedule_.hyperepochs.size());
  counts.epochs = static_cast<std::uint32_t>(schedule_.epochs.size());
  counts.instances = static_cast<std::uint32_t>(schedule_.instances.size());
  counts.clients = static_cast<std::uint32_t>(schedule_.clients.size());
  counts.workers = static_cast<std::uint32_t>(plan_.workers.size());
  counts.scheduleTextSize = text_.size();
  // Handlers go in before the segment exists: a signal between creating and cleaning up the
  // segment must reach our handler (which ends the run cleanly), not kill us and leave it behind.
  gSignal.store(0);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  const shm::LayoutOffsets offsets = shm::computeLayout(counts);
  auto segment = createSegment(offsets.total);
  if (!segment) {
    err_ << "tactus-master: " << segment.error().message << "\n";
    return kExitBadInput;
  }
  segment_ = std::move(*segment);
  segmentOwned_ = true;
  view_ = shm::SegmentView(segment_.bytes());
  if (auto ok = view_.initialize(counts); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    return kExitBadInput;
  }
  shm::SegmentHeader& header = view_.header();
  header.masterPid.store(static_cast<std::uint32_t>(::getpid()), std::memory_order_release);
  header.masterStartTime = ipc::processStartTime(::getpid());
  header.flags = (o_.allowUnregistered ? shm::kFlagAllowUnregistered : 0u) | (o_.noPinning ? shm::kFlagNoPinning : 0u) |
                 (o_.freeRunning ? shm::kFlagFreeRunning : 0u);
  header.scheduleContentHash = contentHash_;
  header.scheduleIdentifier = schedule_.identifier;
  view_.writeScheduleText(text_);
  const std::uint64_t limit = o_.iterations == 0 ? std::numeric_limits<std::uint64_t>::max() : o_.iterations;
  for (std::uint32_t he = 0; he < counts.hyperepochs; ++he) view_.hyperepoch(he).stopAt.store(limit);
  watches_.resize(schedule_.clients.size());
  droppedSeen_.assign(plan_.workers.size(), 0);

  if (!o_.logPath.empty()) {
    if (auto ok = log_.open(o_.logPath, schedule_.identifier, header.scheduleContentHash); !ok) {
      err_ << "tactus-master: " << ok.error().message << "\n";
      return kExitBadInput;
    }
  }

  gAttention.store(&header.attention);

  header.state.store(static_cast<std::uint32_t>(SegmentState::kPublished), std::memory_order_seq_cst);
  ipc::futexWake(header.state);
  if (o_.verbose) {
    out_ << "tactus-master: published schedule '" << schedule_.name << "' (" << schedule_.instances.size()
         << " instances, " << schedule_.clients.size() << " clients) at " << ipc::segmentPath(o_.instance)
         << "; waiting for clients\n";
  }

  int code = waitForClients();
  if (code < 0) code = runFrames();
  if (code != kExitOk) err_ << "tactus-master: " << view_.message() << "\n";
  waitForClientsToLeave();
  cleanup();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

}  // namespace

int runMaster(const MasterOptions& options, std::ostream& out, std::ostream& err) {
  try {
    Run run(options, out, err);
    return run.execute();
  } catch (const std::exception& e) {
    err << "tactus-master: internal error: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace tactus::master
