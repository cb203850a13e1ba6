// tactus-launch's application file: the schedule (or graph), the instance, the master's extra
// options, the start order and the clients, read from one small YAML file. yaml-cpp stays inside
// launch_config.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::launch {

/// In which order the processes start.
enum class StartOrder { kMasterFirst, kClientsFirst, kRandom };

/// One client process.
struct ClientSpec {
  std::string name;                                      ///< its prefix and summary name
  std::vector<std::string> command;                      ///< program and arguments (program resolved)
  std::vector<std::pair<std::string, std::string>> env;  ///< extra environment, in file order
};

/// The whole file, paths made absolute against its folder.
struct LaunchConfig {
  std::string file;                     ///< the file as given
  std::string dir;                      ///< its folder, absolute: the processes' working directory
  std::string schedule;                 ///< absolute path of the .tsched, or empty
  std::string graph;                    ///< absolute path of the YAML graph, or empty
  std::string instance;                 ///< empty: a random one
  std::vector<std::string> masterArgs;  ///< extra options for tactus-master
  StartOrder order = StartOrder::kMasterFirst;
  std::vector<ClientSpec> clients;
};

/// Reads the launch file. A mistake (kParse) reads `FILE:LINE: what is wrong`, naming the keys
/// the place knows.
Result<LaunchConfig> readLaunchFile(const std::string& path);

/// `master-first`, `clients-first`, `random`.
const char* startOrderName(StartOrder order);

}  // namespace tactus::launch
