// tactus-master's logic as a library: command line (master_args.cpp), segment set-up, waiting for clients, frame
// release, failure detection, event log draining. main.cpp only calls parseMasterArguments and
// runMaster.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "tactus/core/command_line.hpp"
#include "tactus/core/result.hpp"

namespace tactus::master {

/// The master's command line.
struct MasterOptions {
  std::string schedulePath;                ///< -s: the schedule file (with several: the first)
  std::vector<std::string> schedulePaths;  ///< -s a,b,c: every schedule file (several only with -N)
  std::string managerName;                 ///< -N: the schedule manager's name; empty = no manager
  std::int64_t scheduleCount = -1;         ///< -i: must equal the number of -s files; -1 = not given
  std::string policyPath;                  ///< --policy: the switching policy file (needs -N); empty = none
  std::uint64_t iterations = 0;            ///< -e: hyperepoch iterations to run; 0 = until stopped
  std::string logPath;                     ///< -l: event log path; empty = no log
  std::int64_t timeoutUs = 5'000'000;      ///< -t: wait for clients, in us; -1 = forever
  bool freeRunning = false;                ///< -m: after an overrun start the next iteration at once
  std::string instance = "default";        ///< -D: instance name
  int core = -1;                           ///< -c: pin the master's threads to this core; -1 = not pinned
  int priority = 0;                        ///< -P: SCHED_FIFO priority of the release threads; 0 = normal
  bool noPinning = false;                  ///< -C: clients do not pin their workers
  bool lockMemory = false;                 ///< -M: mlockall
  bool allowUnregistered = false;          ///< --allow-unregistered-runnables
  bool failOnOverrun = false;              ///< --fail-on-overrun: exit 1 when a run, frame or period overran
  std::string soc;                         ///< -x: this master's SoC of a multi-SoC schedule
  std::string primarySoc;                  ///< --primary: the SoC that releases frames (default: the first)
  std::int64_t ddsDomain = 0;              ///< --dds-domain: the DDS domain id of the multi-SoC link
  std::int64_t startSyncS = 600;           ///< -a: multi-SoC: wait this long for every SoC's master, in s; -1 forever
  std::int64_t socTimeoutUs = 5'000'000;   ///< -o: multi-SoC: a master silent this long is gone, in us
  std::int64_t switchLeadUs = 20'000;  ///< --switch-lead-us: multi-SoC under -N: a start's or rollover's lead, in us
  std::string recordDir;               ///< --record: the recording folder; empty = not recorded
  bool recordOverwrite = false;        ///< --record-overwrite
  bool recordRequired = false;         ///< --record-required: a loss fails the run
  std::string replayDir;               ///< --replay: the recording replayed; empty = no replay
  double replayRate = 1.0;             ///< --replay-rate: times real time; 0 = as fast as the work allows
  std::vector<std::string> replaySources;  ///< --replay-sources: Client.Runnable names; empty = the default
  bool verbose = false;                    ///< -v
  bool showVersion = false;                ///< -V
  bool showHelp = false;                   ///< --help
};

/// Exit codes of tactus-master.
enum ExitCode : int {
  kExitOk = 0,         ///< the run ended by frame limit, exit request or signal
  kExitRunFailed = 1,  ///< a client died, did not come, or refused
  kExitBadInput = 2,   ///< bad command line or schedule, or the instance is busy
};

/// Parses the arguments after the program name (master_args.cpp): STM's short flags and a long
/// name for each (`-s`/`--schedule`, `-e`/`--epochs`, ...), `--opt=value`. Errors (kParse) name
/// the option as written.
Result<MasterOptions> parseMasterArguments(const std::vector<std::string>& args);

/// The options tactus-master accepts (for tests and the generated man page).
std::span<const OptionSpec> masterOptionSpecs();

/// The usage text for --help.
std::string masterUsage();

/// Applies -P (SCHED_FIFO priority), -c (core) and -M (mlockall) to the master process, before
/// its threads start (they inherit them); kExitOk, or kExitBadInput with the reason on `err`.
int setUpMasterProcess(const MasterOptions& options, std::ostream& err);

/// Loads, verifies and runs the schedules (run.hpp: the one run of every kind). Messages go to
/// `err` (and progress to `out` with -v). Returns the exit code.
int runMaster(const MasterOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tactus::master
