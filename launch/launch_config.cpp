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

std::vector<std::string> stringList(const YAML::Node& node, const std::string& what, bool nonEmpty) {
  if (!node.IsSequence()) failAt(node, what + " must be a list of strings, e.g. [-e, \"100\"]");
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
  checkKeys(node, "a client", {"name", "command", "env"});
  if (!node["name"]) failAt(node, "a client needs a name (keys: name, command, env)");
  if (!node["command"])
    failAt(node, "a client needs a command, e.g. [build/samples/tactus-sample-two-client, Sensing]");
  ClientSpec c;
  c.name = scalar(node["name"], "a client's name");
  if (!validName(c.name) || c.name == "master")
    failAt(node["name"], "client name '" + c.name + "' must be letters, digits, '_' or '.' and not 'master'");
  if (!names.insert(c.name).second) failAt(node["name"], "a second client named '" + c.name + "'");
  c.command = stringList(node["command"], "command", true);
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
  return c;
}

StartOrder readOrder(const YAML::Node& node) {
  const std::string s = scalar(node, "order");
  if (s == "master-first") return StartOrder::kMasterFirst;
  if (s == "clients-first") return StartOrder::kClientsFirst;
  if (s == "random") return StartOrder::kRandom;
  failAt(node, "unknown order '" + s + "' (known: master-first, clients-first, random)");
}

LaunchConfig readRoot(const YAML::Node& root, const std::string& dir) {
  checkKeys(root, "the launch file", {"schedule", "graph", "instance", "master", "order", "clients"});
  LaunchConfig cfg;
  cfg.dir = dir;
  if (root["schedule"] && root["graph"]) failAt(root["graph"], "give either schedule or graph, not both");
  if (root["schedule"]) cfg.schedule = underDir(dir, scalar(root["schedule"], "schedule"));
  if (root["graph"]) cfg.graph = underDir(dir, scalar(root["graph"], "graph"));
  if (cfg.schedule.empty() && cfg.graph.empty())
    failAt(root, "the launch file needs `schedule: FILE.tsched` or `graph: FILE.yaml`");
  if (root["instance"]) {
    cfg.instance = scalar(root["instance"], "instance");
    if (!validName(cfg.instance))
      failAt(root["instance"], "instance '" + cfg.instance + "' must be letters, digits, '_' or '.'");
  }
  if (root["master"]) cfg.masterArgs = stringList(root["master"], "master", false);
  if (root["order"]) cfg.order = readOrder(root["order"]);
  if (!root["clients"]) failAt(root, "the launch file needs `clients:` (a list of {name, command, env})");
  const YAML::Node clients = root["clients"];
  if (!clients.IsSequence() || clients.size() == 0)
    failAt(clients, "clients must be a non-empty list of {name, command, env}");
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

const char* startOrderName(StartOrder order) {
  switch (order) {
    case StartOrder::kMasterFirst: return "master-first";
    case StartOrder::kClientsFirst: return "clients-first";
    case StartOrder::kRandom: return "random";
  }
  return "?";
}

}  // namespace tactus::launch
