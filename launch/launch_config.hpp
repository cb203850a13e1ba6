// tactus-launch's application file: the schedules (or graphs), the instance, the master's extra
// options, the schedule manager (managed mode: several schedules, a policy, the schedule to start),
// the start order and the clients, read from one small YAML file. yaml-cpp stays inside
// launch_config.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::launch {

/// In which order the processes start.
enum class StartOrder { kMasterFirst, kClientsFirst, kRandom };

/// What a client's end does to the others (`on_exit:`).
enum class OnExit {
  kStop,    ///< a failure (non-zero exit, a signal) stops the launch: the default
  kIgnore,  ///< the others go on (a `ClientDies` policy rolls over); its failure does not decide the status
};

/// One client process.
struct ClientSpec {
  std::string name;                                      ///< its prefix and summary name
  std::vector<std::string> command;                      ///< program and arguments (program resolved)
  std::vector<std::pair<std::string, std::string>> env;  ///< extra environment, in file order
  OnExit onExit = OnExit::kStop;
};

/// The whole file, paths made absolute against its folder.
struct LaunchConfig {
  std::string file;                     ///< the file as given
  std::string dir;                      ///< its folder, absolute: the processes' working directory
  std::vector<std::string> schedules;   ///< absolute paths of .tsched files (`schedule:`, `schedules:`)
  std::vector<std::string> graphs;      ///< absolute paths of YAML graphs (`graph:`, `graphs:`)
  std::string instance;                 ///< empty: a random one
  std::vector<std::string> masterArgs;  ///< extra options for tactus-master
  std::string manager;                  ///< the master's -N; empty: no schedule manager
  std::string policy;                   ///< absolute path of the master's --policy file, or empty
  int start = -1;                       ///< the schedule identifier started through the manager, or -1
  StartOrder order = StartOrder::kMasterFirst;
  std::vector<ClientSpec> clients;
};

/// Reads the launch file. A mistake (kParse) reads `FILE:LINE: what is wrong`, naming the keys
/// the place knows.
Result<LaunchConfig> readLaunchFile(const std::string& path);

/// The default manager name when several schedules are given without `manager:`.
inline constexpr const char* kDefaultManager = "launch";

/// The master's event log from its options (`-l FILE`, `-lFILE`, `--log FILE`, `--log=FILE`), as
/// written; empty when there is none.
std::string logOption(const std::vector<std::string>& masterArgs);

/// Whether the master's options hold `-e`/`--epochs` (the run ends after N iterations).
bool hasEpochsOption(const std::vector<std::string>& masterArgs);

/// `master-first`, `clients-first`, `random`.
const char* startOrderName(StartOrder order);

}  // namespace tactus::launch
