// The managed run's switching policy (tactus-master --policy FILE, rules in policy_file.hpp): the
// rules checked against the schedules' partitions at start, evaluated by the monitor loop while
// no request is in flight (ManagedActivation::evaluatePolicy), a dead client's rule that lets the
// run go on, and the decisions' log records (kPolicyDecision).
//
// - Overruns and clean iterations come from the releaser's per-hyperepoch IterationHealth (reset
//   whenever the hyperepoch starts), so a rule watches the current activation only: a schedule
//   rolled back to starts with a clean slate. The manager's requests go first.
// - A client's death that a ClientDies rule names does not end the run: every schedule that uses
//   the client stops releasing at once (its iteration cannot finish) and is refused from then on;
//   if one of them was running, the rule rolls over to its fallback schedule.
#include <algorithm>
#include <bitset>
#include <ostream>

#include "managed/policy_run.hpp"
#include "managed/switching.hpp"
#include "master.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"

namespace tactus::master {

using shm::ManagerOp;
using shm::ManagerResult;

Result<void> PolicyRun::load() {
  if (core_.options().policyPath.empty()) return {};
  std::vector<const Schedule*> schedules;
  for (const auto& m : core_.modes()) schedules.push_back(&m->schedule);
  auto policy = readPolicyFile(core_.options().policyPath, schedules);
  if (!policy) return policy.error();
  // Every switch a rule can make must be a rollover the schedules allow.
  for (const PolicyRule& rule : policy->rules) {
    Mode* to = modeByIdentifier(core_, rule.target);
    std::vector<Mode*> froms;
    for (const auto& m : core_.modes()) {
      const bool watched = rule.trigger == PolicyTrigger::kClientDies ? clientIndex(m->schedule, rule.client) != kNone
                                                                      : m->schedule.identifier == rule.schedule;
      if (watched && m.get() != to) froms.push_back(m.get());
    }
    for (Mode* from : froms) {
      std::vector<std::pair<HyperepochId, HyperepochId>> pairs;
      if (std::string problem = partitionProblem(*from, *to, pairs); !problem.empty()) {
        return fail(ErrorCode::kValidation, core_.options().policyPath + ":" + std::to_string(rule.line) + ": rule " +
                                                quoted(rule.name) + ": cannot roll over from schedule " +
                                                std::to_string(from->schedule.identifier) + " to schedule " +
                                                std::to_string(rule.target) + ": " + problem);
      }
    }
  }
  policy_ = std::move(*policy);
  return {};
}

std::string PolicyRun::deadClientOf(const Mode& mode) const {
  std::lock_guard<std::mutex> lock(deadLock_);
  for (const std::string& name : deadClients_) {
    if (clientIndex(mode.schedule, name) != kNone) return name;
  }
  return "";
}

// Called by the monitor loop with a schedule's end: a client's death that a rule covers is
// excused (nothing returned) and its switch queued; any other end is returned unchanged.
std::optional<RunEnd> PolicyRun::excuseDeadClient(Mode& mode, const RunEnd& end) {
  if (!policy_ || end.reason != shm::StopReason::kPeerDied || end.client == kNone || !core_.clientsEntered())
    return end;
  const std::string name = mode.monitor->name(end.client);
  int rule = -1;
  for (std::size_t k = 0; k < policy_->rules.size() && rule < 0; ++k) {
    const PolicyRule& r = policy_->rules[k];
    if (r.trigger == PolicyTrigger::kClientDies && r.client == name) rule = static_cast<int>(k);
  }
  if (rule < 0) return end;
  {
    std::lock_guard<std::mutex> lock(deadLock_);
    deadClients_.insert(name);
  }
  for (const auto& m : core_.modes()) {
    const ClientId c = clientIndex(m->schedule, name);
    if (c == kNone) continue;
    m->monitor->excuse(c);
    m->control.abort();  // its iterations wait for the dead client: the release threads leave now
  }
  const PolicyRule& r = policy_->rules[static_cast<std::size_t>(rule)];
  core_.err() << "tactus-master: schedule " << mode.schedule.identifier << ": " << end.message << "; policy rule "
              << quoted(r.name) << " goes on without it (fallback schedule " << r.target << ")\n";
  Request fallback;
  fallback.op = ManagerOp::kRollover;
  fallback.arg0 = r.target;
  fallback.arg1 = kNoSchedule;  // the running schedule, once the switch job is free
  fallback.takenNs = ipc::monotonicNs();
  fallback.rule = rule;
  fallback.ruleSchedule = mode.schedule.identifier;
  fallback.ruleDetail = index(end.client);
  fallbacks_.push_back(fallback);
  return std::nullopt;
}

// The switch at most one rule asks for now (the switch job is idle); a fallback after a client's
// death first, then, while the manager has nothing pending, the rules of the running schedule.
std::optional<Request> PolicyRun::request(bool managerPending) {
  Mode* running = core_.runningMode();
  if (!fallbacks_.empty()) {
    Request r = fallbacks_.front();
    fallbacks_.erase(fallbacks_.begin());
    if (running != nullptr && !deadClientOf(*running).empty()) {
      r.arg1 = running->schedule.identifier;
      return r;
    }
    // Nothing that used the client ran: the run just goes on.
    log(r, Answer{ManagerResult::kBadState, ""}, ipc::monotonicNs());
    core_.out() << "tactus-master: policy rule " << quoted(policy_->rules[static_cast<std::size_t>(r.rule)].name)
                << ": no running schedule used the client" << std::endl;
    return std::nullopt;
  }
  if (running == nullptr || managerPending) return std::nullopt;
  for (std::size_t k = 0; k < policy_->rules.size(); ++k) {
    const PolicyRule& rule = policy_->rules[k];
    if (rule.trigger == PolicyTrigger::kClientDies || rule.schedule != running->schedule.identifier) continue;
    if (!deadClientOf(*modeByIdentifier(core_, rule.target)).empty()) continue;
    bool fire = false;
    if (rule.trigger == PolicyTrigger::kOverruns) {
      const IterationHealth h = running->releaser->health(rule.hyperepoch);
      const std::uint64_t n = std::min<std::uint64_t>(rule.window, h.iterations);
      const std::uint64_t mask = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
      fire = std::bitset<64>(h.lateHistory & mask).count() >= rule.overruns;
    } else {
      fire = true;
      for (const HyperepochId he : running->schedule.hyperepochs.ids()) {
        if (running->plan.hyperepochs[he].instances.empty()) continue;
        if (running->releaser->health(he).cleanStreak < rule.cleanIterations) fire = false;
      }
    }
    if (!fire) continue;
    Request r;
    r.op = ManagerOp::kRollover;
    r.arg0 = rule.target;
    r.arg1 = running->schedule.identifier;
    r.takenNs = ipc::monotonicNs();
    r.rule = static_cast<int>(k);
    r.ruleSchedule = running->schedule.identifier;
    r.ruleDetail = rule.trigger == PolicyTrigger::kOverruns ? index(rule.hyperepoch) : 0;
    return r;
  }
  return std::nullopt;
}

void PolicyRun::log(const Request& r, const Answer& answer, std::int64_t doneNs) {
  const PolicyRule& rule = policy_->rules[static_cast<std::size_t>(r.rule)];
  EventRecord rec{static_cast<std::uint16_t>(EventKind::kPolicyDecision),
                  static_cast<std::uint16_t>(rule.trigger),
                  static_cast<std::uint32_t>(r.rule),
                  r.ruleDetail,
                  answer.code == ManagerResult::kOk ? r.arg0 : kNoSchedule,
                  r.takenNs,
                  doneNs};
  rec.schedule = r.ruleSchedule;
  core_.record(rec);
}

}  // namespace tactus::master
