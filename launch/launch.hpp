// tactus-launch: runs a master and its clients from one launch file (launch_config.hpp), with
// their output prefixed, a clean stop on SIGINT/SIGTERM and a summary, or writes systemd units
// for the same application (--units DIR).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launch_config.hpp"

namespace tactus::launch {

/// What the command line adds to the file.
struct LaunchOptions {
  std::string binDir;                 ///< --bin: where the tactus tools are (':'-separated); empty: found
  std::string unitsDir;               ///< --units: write units there instead of running
  std::optional<std::uint64_t> seed;  ///< --seed: the random order's seed
  bool color = false;                 ///< coloured prefixes (stdout a terminal, no --no-color)
  double graceS = 2.0;                ///< after the master's SIGTERM, before the clients' one
  double killS = 10.0;                ///< after the stop began, SIGKILL to what is left
};

/// A started process, for the summary.
struct ProcessEnd {
  std::string name;
  bool started = false;
  int exitCode = -1;  ///< its exit status, or -1
  int signal = 0;     ///< the signal that ended it, or 0
  double seconds = 0;
};

/// tactus-master, tactus-compile and tactus-manager: --bin, beside this program (an install), in
/// the build tree (../master, ../compiler, ../tools), else the name for PATH.
std::string findTool(const std::string& binDir, const std::string& name);

/// A program resolved against PATH (absolute); unchanged when it has a '/' or is not found.
std::string onPath(const std::string& program);

/// Compiles the graph into `out` with tactus-compile; false (and why on stderr) when it fails.
bool compileGraph(const std::string& compiler, const std::string& graph, const std::string& out);

/// Runs the application; returns tactus-launch's exit status (0: every process exited 0; else the
/// master's failure, else the first failure; a process ended by a signal counts 128 + signal).
/// `schedules`: the master's schedule files (absolute), compiled graphs included.
int runApplication(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts);

/// The master's command line: -s (comma-separated), -D, -N and --policy under a manager, then the
/// file's `master:` options.
std::vector<std::string> masterCommand(const LaunchConfig& cfg, const std::vector<std::string>& schedules,
                                       const LaunchOptions& opts);

/// Writes the target, the master's unit, one unit per client and (with `start:`) the manager's
/// to opts.unitsDir, after the warnings about options that end a deployed run; the exit status.
int writeUnits(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts);

/// The whole command (args without the program name); the exit status.
int launchMain(const std::vector<std::string>& args);

}  // namespace tactus::launch
