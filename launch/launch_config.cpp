#include "launch_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <set>

#include "tactus/core/file_io.hpp"

namespace tactus::launch {
namespace {

constexpr std::uint64_t kMaxFileBytes = 1U << 20U;

// A mistake at a node: thrown inside this file only, turned into an Error by readLaunchFile.
struct Located {
  int line = 0;
  std::string what;
};

[[noreturn]] void failAt(const YAML::Node& node, std::string what) {
  throw Located{std::max(node.Mark().line, 0) + 1, std::move(what)};
}

std::string joined(std::initializer_list<const char*> keys) {
  std::string out;
  for (const char* k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

// A map whose keys are all known.
void checkKeys(const YAML::Node& node, const char* what, std::initializer_list<const char*> known) {
  if (!node.IsMap()) failAt(node, std::string(what) + " must be a map with keys " + joined(known));
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) == known.end())
      failAt(kv.first, "unknown key '" + key + "' in " + what + " (known: " + joined(known) + ")");
  }
}

std::string scalar(const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar() || node.Scalar().empty()) failAt(node, what + " must be a non-empty string");
  return node.Scalar();
}

std::vector<std::string> stringList(const YAML::Node& node, const std::string& what, bool nonEmpty,
                                    const char* example) {
  if (!node.IsSequence()) failAt(node, what + " must be a list of strings, e.g. " + example);
  if (nonEmpty && node.size() == 0) failAt(node, what + " must not be empty");
  std::vector<std::string> out;
  for (const auto& item : node) {
    if (!item.IsScalar()) failAt(item, what + " must be a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

// A path relative to the file's folder made absolute; a bare program name stays for PATH.
std::string underDir(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(dir) / path).lexically_normal().string();
}

// Client names become prefixes and systemd unit names: letters, digits, '_' and '.'.
bool validName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
  });
}

ClientSpec readClient(const YAML::Node& node, const std::string& dir, std::set<std::string>& names) {
  checkKeys(node, "a client", {"name", "command", "env", "on_exit"});
  if (!node["name"]) failAt(node, "a client needs a name (keys: name, command, env, on_exit)");
  if (!node["command"])
    failAt(node, "a client needs a command, e.g. [build/samples/tactus-sample-two-client, Sensing]");
  ClientSpec c;
  c.name = scalar(node["name"], "a client's name");
  if (!validName(c.name) || c.name == "master" || c.name == "manager")
    failAt(node["name"],
           "client name '" + c.name + "' must be letters, digits, '_' or '.' and not 'master' or 'manager'");
  if (!names.insert(c.name).second) failAt(node["name"], "a second client named '" + c.name + "'");
  c.command = stringList(node["command"], "command", true, "[build/samples/tactus-sample-two-client, Sensing]");
  if (c.command[0].find('/') != std::string::npos) c.command[0] = underDir(dir, c.command[0]);
  if (const YAML::Node env = node["env"]) {
    if (!env.IsMap()) failAt(env, "env must be a map of variable names to values, e.g. {FOO: bar}");
    for (const auto& kv : env) {
      const std::string key = kv.first.Scalar();
      if (key.empty() || key.find('=') != std::string::npos) failAt(kv.first, "bad variable name '" + key + "'");
      if (key == "TACTUS_INSTANCE") failAt(kv.first, "TACTUS_INSTANCE is set by tactus-launch (use `instance:`)");
      c.env.emplace_back(key, scalar(kv.second, "the value of " + key));
    }
  }
  if (const YAML::Node onExit = node["on_exit"]) {
    const std::string s = scalar(onExit, "on_exit");
    if (s == "stop") {
      c.onExit = OnExit::kStop;
    } else if (s == "ignore") {
      c.onExit = OnExit::kIgnore;
    } else {
      failAt(onExit, "unknown on_exit '" + s + "' (known: stop, ignore)");
    }
  }
  return c;
}

StartOrder readOrder(const YAML::Node& node) {
  const std::string s = scalar(node, "order");
  if (s == "master-first") return StartOrder::kMasterFirst;
  if (s == "clients-first") return StartOrder::kClientsFirst;
  if (s == "random") return StartOrder::kRandom;
  failAt(node, "unknown order '" + s + "' (known: master-first, clients-first, random)");
}

// `schedule:`/`schedules:` and `graph:`/`graphs:`: the files the master loads, in that order.
void readSchedules(const YAML::Node& root, LaunchConfig& cfg) {
  const auto one = [&](const char* single, const char* list, const char* example, std::vector<std::string>& out) {
    if (root[single] && root[list])
      failAt(root[list], std::string("give either ") + single + " or " + list + ", not both");
    if (root[single]) out.push_back(underDir(cfg.dir, scalar(root[single], single)));
    if (root[list]) {
      for (const std::string& f : stringList(root[list], list, true, example)) {
        if (f.empty()) failAt(root[list], std::string(list) + " holds an empty file name");
        out.push_back(underDir(cfg.dir, f));
      }
    }
  };
  one("schedule", "schedules", "[full.tsched, light.tsched]", cfg.schedules);
  one("graph", "graphs", "[full.yaml, light.yaml]", cfg.graphs);
  if (cfg.schedules.empty() && cfg.graphs.empty())
    failAt(root,
           "the launch file needs `schedule: FILE.tsched` or `graph: FILE.yaml` (or `schedules:`/`graphs:`, lists)");
  for (const std::string& f : cfg.schedules) {
    if (f.find(',') != std::string::npos)
      failAt(root[root["schedules"] ? "schedules" : "schedule"],
             "schedule file '" + f + "' has a ',' (the master's -s separates files with it)");
  }
}

// `manager:`, `policy:` and `start:`: managed mode, on with several schedules or `manager:`.
void readManaged(const YAML::Node& root, LaunchConfig& cfg) {
  const std::size_t count = cfg.schedules.size() + cfg.graphs.size();
  if (root["manager"]) {
    cfg.manager = scalar(root["manager"], "manager");
    if (!validName(cfg.manager))
      failAt(root["manager"], "manager '" + cfg.manager + "' must be letters, digits, '_' or '.'");
  } else if (count > 1) {
    cfg.manager = kDefaultManager;
  }
  const char* needs = " needs a schedule manager: several schedules, or `manager: NAME` (the master's -N)";
  if (root["policy"]) {
    if (cfg.manager.empty()) failAt(root["policy"], std::string("policy") + needs);
    cfg.policy = underDir(cfg.dir, scalar(root["policy"], "policy"));
  }
  if (root["start"]) {
    if (cfg.manager.empty()) failAt(root["start"], std::string("start") + needs);
    const std::string s = scalar(root["start"], "start");
    if (s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos || std::stoul(s) > 65535)
      failAt(root["start"], "start '" + s + "' must be a schedule identifier 0..65535 (the graph's Identifier:)");
    cfg.start = static_cast<int>(std::stoul(s));
  }
  if (!cfg.manager.empty() && root["master"] && hasEpochsOption(cfg.masterArgs))
    failAt(root["master"],
           "-e cannot be combined with a schedule manager: the manager ends the run "
           "(tactus-manager -D INSTANCE exit)");
}

LaunchConfig readRoot(const YAML::Node& root, const std::string& dir) {
  checkKeys(root, "the launch file",
            {"schedule", "schedules", "graph", "graphs", "instance", "master", "manager", "policy", "start", "order",
             "clients"});
  LaunchConfig cfg;
  cfg.dir = dir;
  readSchedules(root, cfg);
  if (root["instance"]) {
    cfg.instance = scalar(root["instance"], "instance");
    if (!validName(cfg.instance))
      failAt(root["instance"], "instance '" + cfg.instance + "' must be letters, digits, '_' or '.'");
  }
  if (root["master"]) cfg.masterArgs = stringList(root["master"], "master", false, "[-l, run.tlog]");
  readManaged(root, cfg);
  if (root["order"]) cfg.order = readOrder(root["order"]);
  if (!root["clients"]) failAt(root, "the launch file needs `clients:` (a list of {name, command, env, on_exit})");
  const YAML::Node clients = root["clients"];
  if (!clients.IsSequence() || clients.size() == 0)
    failAt(clients, "clients must be a non-empty list of {name, command, env, on_exit}");
  std::set<std::string> names;
  for (const auto& c : clients) cfg.clients.push_back(readClient(c, dir, names));
  return cfg;
}

}  // namespace

Result<LaunchConfig> readLaunchFile(const std::string& path) {
  Result<std::string> text = readRegularFile(path, "launch file", kMaxFileBytes);
  if (!text) return text.error();
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  const std::string dir = abs.parent_path().lexically_normal().string();
  try {
    const YAML::Node root = YAML::Load(*text);
    LaunchConfig cfg = readRoot(root, dir);
    cfg.file = path;
    return cfg;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const Located& e) {
    return fail(ErrorCode::kParse, path + ":" + std::to_string(e.line) + ": " + e.what);
  }
}

std::string logOption(const std::vector<std::string>& masterArgs) {
  std::string log;
  for (std::size_t i = 0; i < masterArgs.size(); ++i) {
    const std::string& a = masterArgs[i];
    if ((a == "-l" || a == "--log") && i + 1 < masterArgs.size()) {
      log = masterArgs[++i];
    } else if (a.rfind("--log=", 0) == 0) {
      log = a.substr(6);
    } else if (a.size() > 2 && a.rfind("-l", 0) == 0) {
      log = a.substr(2);
    }
  }
  return log;
}

bool hasEpochsOption(const std::vector<std::string>& masterArgs) {
  return std::any_of(masterArgs.begin(), masterArgs.end(), [](const std::string& a) {
    return a == "--epochs" || a.rfind("--epochs=", 0) == 0 || a.rfind("-e", 0) == 0;
  });
}

const char* startOrderName(StartOrder order) {
  switch (order) {
    case StartOrder::kMasterFirst: return "master-first";
    case StartOrder::kClientsFirst: return "clients-first";
    case StartOrder::kRandom: return "random";
  }
  return "?";
}

}  // namespace tactus::launch
