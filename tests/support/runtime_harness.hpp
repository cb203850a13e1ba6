// Helpers for the runtime tests: small schedules built in code, child processes started with
// fork/exec by an owner that ends them, waited for with a time limit, unique instance names, event
// log checks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::test {

/// A runnable for makeSchedule.
struct RunnableSpec {
  std::string client;  ///< client name
  std::string name;    ///< client-local name
  std::string cpu;     ///< hardware resource (`CPU0`)
  std::int64_t wcetNs = 10'000;
  std::vector<std::string> dependencies;  ///< qualified names `Client.Runnable`
  std::int64_t startTimeNs = 0;
  std::vector<std::string> extraResources;  ///< scheduling mutexes
};

/// Builds a one-hyperepoch, one-epoch schedule: `frames` frames per period, instances placed as
/// soon as possible in the given order (a tiny list scheduler: enough for valid test schedules).
Schedule makeSchedule(const std::vector<RunnableSpec>& specs, std::int64_t periodNs, std::uint32_t frames = 1,
                      std::uint16_t identifier = 7);

/// How much slower than a plain build this test program runs: TACTUS_TEST_TIME_SCALE (set by
/// meson for sanitizer builds, e.g. 10), else 1. Tests that bound a latency multiply by it.
double timeScale();

/// A unique instance name for one test (`t<pid>_<tag>_<n>`).
std::string uniqueInstance(const std::string& tag);

/// A scratch directory for one test, removed by the caller when it likes.
std::string scratchDir(const std::string& tag);

/// The path of a built program (`master/tactus-master`) from TACTUS_BUILD_ROOT.
std::string buildPath(const std::string& relative);

/// Owner of the child processes a test starts (masters, clients, the compiler). Its destructor
/// kills (SIGKILL) and reaps every child it started that nobody has reaped yet, so a test case left
/// by a failed REQUIRE (an exception) or an early return leaves no master or client running and no
/// zombie behind. Not copyable: each child has exactly one owner.
class ChildProcesses {
 public:
  ChildProcesses() = default;
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  ~ChildProcesses();

  /// Starts a program with stdout and stderr going to `outputPath`; returns its pid, or -1 when
  /// fork failed. A program that cannot be executed exits with 127.
  pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath);

  /// Takes ownership of a child the test forked itself (a process that plays a half-attached
  /// client, or runs as another user), so waitFor and killAll handle it like a spawned one.
  void adopt(pid_t pid);

  /// Kills and reaps the children of this owner not reaped yet; returns how many there were.
  std::size_t killAll();

  /// How many children of this owner have not been reaped yet.
  std::size_t unreaped() const;

 private:
  std::vector<pid_t> pids_;
};

/// One test's run of real processes: a unique instance (uniqueInstance(tag)), its scratch
/// directory with the paths of the schedule file and the event log in it, and the owner of the
/// run's processes. Its destructor ends the processes first (also after a failed REQUIRE), removes
/// the instance's segment where one was left, and the scratch directory unless
/// TACTUS_KEEP_TEST_FILES is set. Tests derive their run fixtures from it.
struct TestRun {
  std::string instance, dir, schedulePath, logPath;
  mutable ChildProcesses children;

  explicit TestRun(const std::string& tag);
  TestRun(const TestRun&) = delete;
  TestRun& operator=(const TestRun&) = delete;
  ~TestRun();

  /// Where the output of `who` (a process the test started) goes: `dir/who.out`.
  std::string out(const std::string& who) const { return dir + "/" + who + ".out"; }
};

/// Starts a program owned by one process-wide ChildProcesses, which ends what is left of its
/// children when the test program exits. Prefer a ChildProcesses of the test case: it ends them
/// when the case ends, failed or not.
pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath);

/// Kills and reaps every child the free spawn() started that is still running (test fixtures that
/// use the free spawn() call it from their destructors).
void endSpawnedProcesses();

/// Hands a child the test forked itself to the process-wide owner of the free spawn().
void adoptChild(pid_t pid);

/// Waits for a child started by a ChildProcesses at most `timeoutMs` and reaps it; returns its
/// exit code, or 128 + signal; on time-out kills it (SIGKILL) and returns -1; -3 for a pid that is
/// not an unreaped child of this process (never reaped twice, never waited for as a stranger).
int waitFor(pid_t pid, int timeoutMs);

/// Reads a whole file ("" if missing).
std::string readFile(const std::string& path);

/// The thread of process `pid` named `name` (its comm), or 0.
pid_t threadNamed(pid_t pid, const std::string& name);

/// Voluntary context switches (sleeps that ended) of thread `tid` of process `pid`; -1 if gone.
long voluntarySwitches(pid_t pid, pid_t tid);

/// Whether the instance's segment is still in /dev/shm.
bool segmentPresent(const std::string& instance);

/// Waits until the instance's segment is in `state` (a shm::SegmentState), read from its file
/// (true), or the time is up (false). Tests wait for it instead of sleeping a guessed time.
bool waitForSegmentState(const std::string& instance, std::uint32_t state, int timeoutMs);

/// Waits until client `client` (ClientId) of the instance's segment is in `state` (a
/// shm::ClientState) (true), or the time is up (false).
bool waitForClientState(const std::string& instance, std::uint32_t client, std::uint32_t state, int timeoutMs);

/// Polls `holds` every 2 ms until it is true (true) or the time is up (false). Tests wait for
/// what they need to see instead of sleeping a guessed time.
bool waitUntil(const std::function<bool()>& holds, int timeoutMs);

/// Waits until a path exists (true) or the time is up (false).
bool waitForPath(const std::string& path, int timeoutMs);

/// Checks an event log against the schedule for iterations [0, iterations): every instance ran
/// exactly once per iteration, on every resource in timeline order without overlap (including
/// across iterations), after its dependencies, and not before its frame's release + StartTime.
/// Returns "" when all holds, else the first problem. On a GPU the logged times of GPU work are
/// its stamps moved onto the host's clock by a measured offset: an order between GPU work and a
/// CPU time (a runnable's end, a release) holds to within `gpuSlackNs` plus `gpuDriftPpm` of the
/// time since the run started (the offset is measured once; the two clocks then drift apart), and
/// the largest amount such an order was off by goes to `crossClockSkewNs` when given.
std::string checkLog(const Schedule& schedule, const EventLog& log, std::uint64_t iterations,
                     std::int64_t gpuSlackNs = 0, std::int64_t* crossClockSkewNs = nullptr,
                     std::int64_t gpuDriftPpm = 0);

}  // namespace tactus::test
