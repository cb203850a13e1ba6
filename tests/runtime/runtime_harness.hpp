// Helpers for the runtime tests: small schedules built in code, processes started with fork/exec
// and waited for with a time limit, unique instance names, event log checks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus::test {

/// A runnable for makeSchedule.
struct RunnableSpec {
  std::string client;                    ///< client name
  std::string name;                      ///< client-local name
  std::string cpu;                       ///< hardware resource (`CPU0`)
  std::int64_t wcetNs = 10'000;
  std::vector<std::string> dependencies; ///< qualified names `Client.Runnable`
  std::int64_t startTimeNs = 0;
  std::vector<std::string> extraResources;  ///< scheduling mutexes
};

/// Builds a one-hyperepoch, one-epoch schedule: `frames` frames per period, instances placed as
/// soon as possible in the given order (a tiny list scheduler: enough for valid test schedules).
Schedule makeSchedule(const std::vector<RunnableSpec>& runnables, std::int64_t periodNs, std::uint32_t frames = 1,
                      std::uint16_t identifier = 7);

/// A unique instance name for one test (`t<pid>_<tag>_<n>`).
std::string uniqueInstance(const std::string& tag);

/// A scratch directory for one test, removed by the caller when it likes.
std::string scratchDir(const std::string& tag);

/// The path of a built program (`master/tactus-master`) from TACTUS_BUILD_ROOT.
std::string buildPath(const std::string& relative);

/// Starts a program with stdout and stderr going to `outputPath`.
pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath);

/// Ends (SIGKILL) and reaps every process spawn() started that is still running. Test fixtures
/// call it from their destructors, so a failed REQUIRE leaves no master or client behind.
void endSpawnedProcesses();

/// Waits for a process at most `timeoutMs`; returns its exit code, or 128 + signal; on time-out
/// kills it (SIGKILL) and returns -1.
int waitFor(pid_t pid, int timeoutMs);

/// Reads a whole file ("" if missing).
std::string readFile(const std::string& path);

/// Whether the instance's segment is still in /dev/shm.
bool segmentPresent(const std::string& instance);

/// Waits until the instance's segment is in `state` (a shm::SegmentState), read from its file
/// (true), or the time is up (false). Tests wait for it instead of sleeping a guessed time.
bool waitForSegmentState(const std::string& instance, std::uint32_t state, int timeoutMs);

/// Waits until client `client` (ClientId) of the instance's segment is in `state` (a
/// shm::ClientState) (true), or the time is up (false).
bool waitForClientState(const std::string& instance, std::uint32_t client, std::uint32_t state, int timeoutMs);

/// Waits until a path exists (true) or the time is up (false).
bool waitForPath(const std::string& path, int timeoutMs);

/// Checks an event log against the schedule for iterations [0, iterations): every instance ran
/// exactly once per iteration, on every resource in timeline order without overlap (including
/// across iterations), after its dependencies, and not before its frame's release + StartTime.
/// Returns "" when all holds, else the first problem.
std::string checkLog(const Schedule& schedule, const EventLog& log, std::uint64_t iterations);

}  // namespace tactus::test
