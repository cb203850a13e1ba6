// Reads and checks a switching policy file (see policy_file.hpp); the master's only yaml-cpp user.
#include "managed/policy_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus::master {

namespace {

// A check that failed: the message already carries file and line.
struct Bad {
  Error error;
};

class Reader {
 public:
  Reader(const std::string& path, const std::vector<const Schedule*>& schedules) : path_(path), schedules_(schedules) {}

  Policy read(const YAML::Node& root) {
    Policy policy;
    policy.path = path_;
    if (!root.IsMap()) bad(root, "the policy must be a mapping with 'Rules'");
    for (const auto& entry : root) {
      if (entry.first.as<std::string>() != "Rules")
        bad(entry.first, "unknown key " + quoted(entry.first.as<std::string>()) + " (expected 'Rules')");
    }
    const YAML::Node rules = root["Rules"];
    if (!rules || !rules.IsSequence() || rules.size() == 0) bad(root, "'Rules' must be a non-empty list of rules");
    if (rules.size() > limits::kMaxPolicyRules) {
      bad(rules, "too many rules (" + std::to_string(rules.size()) + ", at most " +
                     std::to_string(limits::kMaxPolicyRules) + ")");
    }
    std::set<std::string> names;
    for (const YAML::Node& node : rules) {
      PolicyRule rule = readRule(node);
      if (!names.insert(rule.name).second) bad(node, "a second rule named " + quoted(rule.name));
      policy.rules.push_back(std::move(rule));
    }
    return policy;
  }

 private:
  [[noreturn]] void bad(const YAML::Node& at, const std::string& what) const {
    const int line = at.Mark().line < 0 ? 1 : at.Mark().line + 1;
    throw Bad{fail(ErrorCode::kValidation, path_ + ":" + std::to_string(line) + ": " + what)};
  }

  std::string text(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) bad(node, quoted(key) + " must be a scalar");
    std::string value = node.Scalar();
    if (value.empty() || value.size() > limits::kMaxNameBytes) bad(node, quoted(key) + " must be a non-empty name");
    return value;
  }

  std::uint64_t number(const YAML::Node& node, const std::string& key, std::uint64_t low, std::uint64_t high) const {
    if (!node.IsScalar()) bad(node, quoted(key) + " must be a number");
    const std::string& s = node.Scalar();
    std::uint64_t value = 0;
    bool ok =
        !s.empty() && s.size() <= 19 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (ok) value = std::stoull(s);
    if (!ok || value < low || value > high) {
      bad(node, quoted(key) + " must be a whole number from " + std::to_string(low) + " to " + std::to_string(high) +
                    ", not " + quoted(s));
    }
    return value;
  }

  const Schedule* scheduleAt(const YAML::Node& node, const std::string& key) const {
    const auto id = static_cast<std::uint16_t>(number(node, key, 0, 0xffff));
    for (const Schedule* s : schedules_) {
      if (s->identifier == id) return s;
    }
    std::string loaded;
    for (const Schedule* s : schedules_) loaded += (loaded.empty() ? "" : ", ") + std::to_string(s->identifier);
    bad(node, "no loaded schedule has identifier " + std::to_string(id) + " (loaded: " + loaded + ")");
  }

  static bool usesClient(const Schedule& s, const std::string& client) { return clientIndex(s, client) != kNone; }

  PolicyRule readRule(const YAML::Node& node) {
    if (!node.IsMap()) bad(node, "a rule must be a mapping with 'Name', 'When' and 'RollOver'");
    PolicyRule rule;
    rule.line = node.Mark().line + 1;
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      if (key != "Name" && key != "When" && key != "RollOver") {
        bad(entry.first, "unknown key " + quoted(key) + " in a rule (expected 'Name', 'When', 'RollOver')");
      }
    }
    if (!node["Name"]) bad(node, "the rule has no 'Name'");
    rule.name = text(node["Name"], "Name");
    const std::string what = "rule " + quoted(rule.name) + ": ";
    const YAML::Node when = node["When"];
    if (!when || !when.IsMap()) bad(node, what + "'When' must be a mapping");
    if (!node["RollOver"]) bad(node, what + "no 'RollOver' schedule");
    const Schedule* target = scheduleAt(node["RollOver"], "RollOver");
    rule.target = target->identifier;
    std::set<std::string> keys;
    for (const auto& entry : when) {
      const std::string key = entry.first.as<std::string>();
      static const std::set<std::string> known{"Schedule", "Hyperepoch",      "Overruns",
                                               "Of",       "CleanIterations", "ClientDies"};
      if (known.count(key) == 0) bad(entry.first, what + "unknown condition " + quoted(key));
      keys.insert(key);
    }
    const bool overruns = keys.count("Overruns") != 0;
    const bool clean = keys.count("CleanIterations") != 0;
    const bool dies = keys.count("ClientDies") != 0;
    if (overruns + clean + dies != 1) {
      bad(when, what +
                    "'When' needs exactly one of 'Overruns' (with 'Of', 'Hyperepoch', 'Schedule'), "
                    "'CleanIterations' (with 'Schedule') or 'ClientDies'");
    }
    if (dies) {
      for (const char* k : {"Schedule", "Hyperepoch", "Of"}) {
        if (keys.count(k) != 0) bad(when[k], what + quoted(std::string(k)) + " does not go with 'ClientDies'");
      }
      rule.trigger = PolicyTrigger::kClientDies;
      rule.client = text(when["ClientDies"], "ClientDies");
      if (std::none_of(schedules_.begin(), schedules_.end(),
                       [&](const Schedule* s) { return usesClient(*s, rule.client); }))
        bad(when["ClientDies"], what + "no loaded schedule has a client " + quoted(rule.client));
      if (usesClient(*target, rule.client)) {
        bad(node["RollOver"], what + "schedule " + std::to_string(target->identifier) + " uses client " +
                                  quoted(rule.client) + " too: the fallback must not");
      }
      return rule;
    }
    if (!when["Schedule"]) bad(when, what + "no 'Schedule' to watch");
    const Schedule* watched = scheduleAt(when["Schedule"], "Schedule");
    rule.schedule = watched->identifier;
    if (watched == target)
      bad(node["RollOver"], what + "rolls schedule " + std::to_string(rule.target) + " over to itself");
    if (clean) {
      for (const char* k : {"Hyperepoch", "Of"}) {
        if (keys.count(k) != 0) bad(when[k], what + quoted(std::string(k)) + " does not go with 'CleanIterations'");
      }
      rule.trigger = PolicyTrigger::kCleanIterations;
      rule.cleanIterations = number(when["CleanIterations"], "CleanIterations", 1, limits::kMaxCleanIterations);
      return rule;
    }
    rule.trigger = PolicyTrigger::kOverruns;
    if (!when["Of"]) bad(when, what + "'Overruns' needs 'Of' (the last N iterations)");
    if (!when["Hyperepoch"]) bad(when, what + "'Overruns' needs 'Hyperepoch'");
    rule.window = static_cast<std::uint32_t>(number(when["Of"], "Of", 1, limits::kMaxOverrunWindow));
    rule.overruns = static_cast<std::uint32_t>(number(when["Overruns"], "Overruns", 1, rule.window));
    const std::string he = text(when["Hyperepoch"], "Hyperepoch");
    bool found = false;
    for (const HyperepochId k : watched->hyperepochs.ids()) {
      if (watched->hyperepochs[k].name == he) {
        rule.hyperepoch = k;
        found = true;
      }
    }
    if (!found) {
      bad(when["Hyperepoch"],
          what + "schedule " + std::to_string(watched->identifier) + " has no hyperepoch " + quoted(he));
    }
    return rule;
  }

  const std::string& path_;
  const std::vector<const Schedule*>& schedules_;
};

}  // namespace

Result<Policy> readPolicyFile(const std::string& path, const std::vector<const Schedule*>& schedules) {
  auto content = readRegularFile(path, "policy file", limits::kMaxPolicyFileBytes);
  if (!content) return content.error();
  try {
    const YAML::Node root = YAML::Load(*content);
    return Reader(path, schedules).read(root);
  } catch (const Bad& b) {
    return b.error;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, path + ":" + std::to_string(e.mark.line < 0 ? 1 : e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace tactus::master
