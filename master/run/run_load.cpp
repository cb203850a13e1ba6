// tactus-master's run (run.hpp): loading and verifying the schedules (and, multi-SoC, this SoC's
// part of them), creating and publishing their segments with each schedule's roles.
#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>
#include "deploy/deploy_env.hpp"
#include "deploy/notify.hpp"
#include "run/run.hpp"
#include "run/run_state.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/wait.hpp"
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;
using namespace run_detail;

Result<std::unique_ptr<Mode>> Run::loadMode(const std::string& path) {
  auto mode = std::make_unique<Mode>();
  mode->path = path;
  auto text = readRegularFile(path, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  mode->text = std::move(*text);
  auto schedule = readSchedule(mode->text, path, &mode->contentHash);
  if (!schedule) return schedule.error();
  mode->schedule = std::move(*schedule);
  VerifyReport report = verifySchedule(mode->schedule);
  if (!report.ok()) {
    std::string message = path + ": the schedule fails verification:";
    for (const std::string& e : report.errors) message += "\n  " + e;
    return fail(ErrorCode::kVerification, message);
  }
  if (o_.verbose) {
    for (const std::string& w : report.warnings) err_ << "tactus-master: warning: " << w << "\n";
  }
  auto plan = makeRunPlan(mode->schedule);
  if (!plan) return fail(plan.error().code, path + ": " + plan.error().message);
  mode->plan = std::move(*plan);
  if (mode->schedule.clients.empty()) return fail(ErrorCode::kValidation, path + ": the schedule has no clients");
  // What schedule switching needs to know of each hyperepoch.
  const Schedule& s = mode->schedule;
  const auto hyperepochs = static_cast<std::uint32_t>(s.hyperepochs.size());
  mode->nextIteration.assign(hyperepochs, 0);
  mode->activations.assign(hyperepochs, 0);
  mode->acksExpected.assign(hyperepochs, 0);
  mode->workersIn.assign(hyperepochs, 0);
  mode->clientsWith.assign(hyperepochs, {});
  mode->hardware.assign(hyperepochs, {});
  mode->follow.assign(hyperepochs, FollowStep::kParked);
  mode->followFrom.assign(hyperepochs, kNoSchedule);
  mode->switchedAway.assign(hyperepochs, 0);
  for (HyperepochId he : s.hyperepochs.ids()) {
    for (const ResourceId r : s.hyperepochs[he].resources) {
      const ResourceInfo& res = s.resources[r];
      if (isHardware(res.kind)) mode->hardware[he].insert(res.name);  // CPUs and engines
    }
  }
  return mode;
}

Result<void> Run::load() {
  for (const std::string& path : o_.schedulePaths) {
    auto mode = loadMode(path);
    if (!mode) return mode.error();
    for (const auto& other : modes_) {
      if (other->schedule.identifier == (*mode)->schedule.identifier) {
        // Whole paths (a path cut at quoted's default 60 bytes named neither file in a deep directory).
        return fail(ErrorCode::kValidation,
                    "schedules " + quoted(other->path, 4096) + " and " + quoted(path, 4096) +
                        " have the same identifier " + std::to_string((*mode)->schedule.identifier) +
                        "; every schedule of a manager needs its own (the graph's Identifier:, 0..65535)");
      }
    }
    if (auto ok = checkSoc(**mode); !ok) return ok.error();
    countWorkers(**mode);
    modes_.push_back(std::move(*mode));
  }
  // --replay, --record (run_hook.hpp): each checks what it needs before any segment exists.
  hooks_ = makeRunHooks(o_);
  iterations_ = o_.iterations;
  for (auto& hook : hooks_) {
    if (auto ok = hook->loaded(modes_); !ok) return ok;
    iterations_ = hook->iterations(iterations_);
  }
  return {};
}

// What switching waits for in each hyperepoch: the workers and clients of the plan that attach to
// this master's segment (a multi-SoC schedule's other SoCs' clients count in their own SoC's).
void Run::countWorkers(Mode& mode) {
  const Schedule& s = mode.schedule;
  IdVector<HyperepochId, std::set<ClientId>> clients(s.hyperepochs.size());
  for (const WorkerPlan& w : mode.plan.workers) {
    if (socOptions_ && s.clients[w.client].soc != socOptions_->soc) continue;
    ++mode.workersIn[w.hyperepoch];
    clients[w.hyperepoch].insert(w.client);
  }
  for (HyperepochId he : s.hyperepochs.ids()) mode.clientsWith[he].assign(clients[he].begin(), clients[he].end());
}

// -x, --primary against the schedule's SoCs; for a multi-SoC schedule, this SoC's segment name
// and the plan restricted to this SoC.
Result<void> Run::checkSoc(Mode& mode) {
  const std::string& path = mode.path;
  const Schedule& s = mode.schedule;
  if (s.socs.empty()) {
    if (!o_.soc.empty() || !o_.primarySoc.empty())
      return fail(ErrorCode::kValidation, path + ": " + (o_.soc.empty() ? "--primary " : "-x ") +
                                              quoted(o_.soc.empty() ? o_.primarySoc : o_.soc) +
                                              " given, but schedule " + quoted(s.name) +
                                              " has no SoCs (it runs on one machine)");
    return {};
  }
  std::string names;
  for (const SocInfo& soc : s.socs) names += (names.empty() ? "" : ", ") + quoted(soc.name);
  // Under a manager every schedule runs on the same SoCs: the primary's switches are every SoC's.
  if (!modes_.empty()) {
    const Schedule& first = modes_.front()->schedule;
    const bool same = first.socs.size() == s.socs.size() &&
                      std::equal(s.socs.begin(), s.socs.end(), first.socs.begin(),
                                 [](const SocInfo& a, const SocInfo& b) { return a.name == b.name; });
    if (!same)
      return fail(ErrorCode::kValidation, path + ": schedule " + quoted(s.name) + " runs on SoCs " + names +
                                              ", schedule " + quoted(first.name) +
                                              " on others: every schedule of a manager needs the same SoCs");
  }
  const std::string what = "schedule " + quoted(s.name) + " is a multi-SoC schedule (SoCs " + names + ")";
  if (o_.soc.empty())
    return fail(ErrorCode::kValidation, path + ": " + what + ": start one master per SoC with -x SOC");
  for (const std::string* given : {&o_.soc, &o_.primarySoc}) {
    if (given->empty()) continue;
    const bool known =
        std::any_of(s.socs.begin(), s.socs.end(), [&](const SocInfo& soc) { return soc.name == *given; });
    if (!known) {
      std::string msg = path + ": " + (given == &o_.soc ? "-x " : "--primary ") + quoted(*given);
      msg += " names no SoC of schedule " + quoted(s.name);
      msg += " (its SoCs: " + names + ")";
      return fail(ErrorCode::kValidation, msg);
    }
  }
  if (!soc_link::available()) return fail(ErrorCode::kValidation, path + ": " + what + ": " + soc_link::missingText());
  SocRunOptions so;
  for (std::uint32_t k = 0; k < s.socs.size(); ++k) {
    if (s.socs[k].name == o_.soc) so.soc = k;
    if (s.socs[k].name == o_.primarySoc) so.primary = k;
  }
  so.domain = static_cast<std::uint32_t>(o_.ddsDomain);
  so.livelinessNs = o_.socTimeoutUs * 1000;
  // Under a manager, its activation sets so.managed (Activation::check).
  const bool hasClients =
      std::any_of(s.clients.begin(), s.clients.end(), [&](const ClientInfo& c) { return c.soc == so.soc; });
  if (!hasClients) return fail(ErrorCode::kValidation, path + ": SoC " + quoted(o_.soc) + " has no clients");
  instance_ = shm::socInstanceName(o_.instance, so.soc);
  const auto last = static_cast<std::uint32_t>(o_.schedulePaths.size() - 1);
  if (auto ok = ipc::validateInstanceName(shm::scheduleInstanceName(instance_, last)); !ok)
    return fail(ErrorCode::kValidation,
                "-D " + quoted(o_.instance) + " is too long for SoC segment names (" + ok.error().message + ")");
  // This master's release threads wait for its own SoC's instances only.
  restrictPlanToSoc(mode.plan, s, so.soc);
  socOptions_ = so;
  if (so.soc != so.primary && o_.iterations != 0) {
    err_ << "tactus-master: warning: -e " << o_.iterations << " is ignored on SoC " << quoted(o_.soc)
         << ": the -e of the primary SoC " << quoted(s.socs[so.primary].name)
         << " decides the last iteration of every SoC\n";
  }
  return {};
}

// Creates and describes schedule k's segment with its roles (monitor, drain, releaser, stall watch).
Result<void> Run::publishMode(std::uint32_t k, std::uint32_t flags) {
  Mode& m = *modes_[k];
  const shm::LayoutCounts counts = shm::layoutCounts(m.schedule, m.plan, m.text.size());
  const std::string segmentName = shm::scheduleInstanceName(instance_, k);
  m.owner = std::make_unique<SegmentOwner>(segmentName, err_);
  if (auto ok = m.owner->create(counts); !ok) return ok;
  if (auto ok = shareSegmentWithGroup(segmentName); !ok) return ok;  // deploy_env.cpp: TACTUS_SEGMENT_GROUP
  const shm::SegmentView& view = m.owner->view();
  if (activation_->switchesSchedules()) m.owner->describeSchedules(static_cast<std::uint32_t>(modes_.size()), k);
  m.owner->describe(flags, m.contentHash, m.schedule.identifier, m.text);
  // Under a manager every hyperepoch waits for a start; without one it runs to -e. A follower
  // SoC's workers stop where the primary's stop sample says (SocRun, followLoop), never at its own
  // -e: a smaller one would stop this SoC's clients while the other SoCs wait for them.
  const std::uint64_t limit = activation_->stopAt();
  for (HyperepochId he : IdRange<HyperepochId>(counts.hyperepochs)) view.hyperepoch(he).stopAt.store(limit);
  m.monitor = std::make_unique<ClientMonitor>(view, m.schedule);
  m.drain = std::make_unique<LogDrain>(view, m.schedule, m.plan, log_);
  m.overruns = std::make_unique<OverrunWatch>(m.schedule, err_);
  m.drain->setOverrunWatch(m.overruns.get());
  // A multi-SoC run leaves its release threads unpinned: with two SoCs' masters on one machine
  // (the tests, the benchmark) pinning measured slower for the cross-SoC hand-off.
  const bool pinReleases = o_.core < 0 && !o_.noPinning && !socOptions_;
  const bool freeRunning =
      o_.freeRunning || std::any_of(hooks_.begin(), hooks_.end(), [](const auto& h) { return h->freeRunning(); });
  m.releaser = std::make_unique<Releaser>(view, m.schedule, m.plan, freeRunning, m.control, pinReleases);
  for (auto& hook : hooks_)  // --record: no release outruns the copier (run_hook.hpp)
    if (ReleaseGate* gate = hook->releaseGate(); gate != nullptr) m.releaser->setReleaseGate(gate);
  m.stalls = std::make_unique<StallWatch>(m.schedule, m.plan, view, *m.releaser, *m.monitor, o_.timeoutUs);
  if (socOptions_) {  // a multi-SoC run: soc_run.hpp
    for (ClientId c : m.schedule.clients.ids())
      if (m.schedule.clients[c].soc != socOptions_->soc) m.monitor->setRemote(c);
    m.soc = std::make_unique<SocRun>(m.schedule, m.plan, view, m.control, *socOptions_);
    if (auto ok = m.soc->open(); !ok) return ok;
    m.releaser->setSync(m.soc.get());
    if (k == 0) soc_ = m.soc.get();
  }
  return {};
}

// Sets up the process (signals, -P, -c, -M), creates every schedule's segment with its roles,
// the manager channel and the event log, then publishes them (the primary last); the exit code
// (kExitOk to go on).
int Run::publishAll() {
  // Handlers go in before a segment exists: a signal between creating and cleaning up a segment
  // must reach our handler (which ends the run cleanly), not kill us and leave it behind.
  gSignal.store(0);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  // -P, -c, -M (the release threads inherit them).
  if (const int code = setUpMasterProcess(o_, err_); code != kExitOk) return code;
  std::uint32_t flags = (o_.allowUnregistered ? shm::kFlagAllowUnregistered : 0u) |
                        (o_.noPinning ? shm::kFlagNoPinning : 0u) | (o_.freeRunning ? shm::kFlagFreeRunning : 0u);
  if (activation_->switchesSchedules()) flags |= shm::kFlagManaged;
  for (const auto& hook : hooks_) flags |= hook->segmentFlags();
  // A master killed at any instant (even while it created them) leaves nothing behind: what dead
  // masters left of this instance's group goes first, all of it, not only the names this run uses.
  for (const std::string& removed : ipc::removeDeadMastersGroup(instance_))
    err_ << "tactus-master: removed stale segment " << removed << ", left by a master that died\n";
  for (std::uint32_t k = 0; k < modes_.size(); ++k) {
    if (auto ok = publishMode(k, flags); !ok) return badInput(ok.error());
  }
  for (auto& hook : hooks_) {
    if (auto ok = hook->created(modes_, instance_); !ok) return badInput(ok.error());
  }
  if (auto ok = activation_->prepare(); !ok) return badInput(ok.error());
  // deploy_env.cpp: the earlier runs' logs kept (TACTUS_LOG_KEEP), then this run's opened.
  if (auto ok = openEventLog(log_, o_.logPath, modes_.front()->schedule.identifier, modes_.front()->contentHash); !ok)
    return badInput(ok.error());
  if (activation_->switchesSchedules() && log_.isOpen())
    log_.setScheduleCount(static_cast<std::uint16_t>(modes_.size()));
  // How this run differs from the plan, for whoever reads the log (tactus-report says it).
  log_.setRunFlags((o_.noPinning ? kRunUnpinned : 0u) | (o_.freeRunning ? kRunFreeRunning : 0u) |
                   (o_.allowUnregistered ? kRunAllowUnregistered : 0u));
  // Clients that cannot take part say why through a note (best effort: a second master of the
  // instance, refused above already, or a name held by another process leaves it out).
  if (auto box = ipc::NoteBox::open(instance_); box) {
    notes_ = std::move(*box);
  } else if (o_.verbose) {
    err_ << "tactus-master: warning: " << box.error().message << "\n";
  }
  gAttention.store(&modes_.front()->owner->view().header().attention);
  for (std::size_t k = modes_.size(); k-- > 0;) modes_[k]->owner->publish();  // the primary last
  std::string what = "schedule " + modes_.front()->schedule.name;
  if (activation_->switchesSchedules()) what = "schedules " + loadedList();
  const std::string waiting = activation_->published();
  // notify.cpp: systemd's Type=notify; a tactus-manager@ unit ordered After= the master starts now.
  notifyReady("published " + what + " on instance " + instance_ + "; waiting for " + waiting, err_);
  if (o_.verbose) {
    std::size_t instances = 0, clients = 0;
    for (const auto& m : modes_) {
      instances += m->schedule.instances.size();
      clients = std::max(clients, m->schedule.clients.size());
    }
    out_ << "tactus-master: published "
         << (activation_->switchesSchedules() ? what : "schedule " + quoted(modes_.front()->schedule.name)) << " ("
         << instances << " instances, " << clients << " clients) at " << ipc::segmentPath(instance_) << "; waiting for "
         << waiting << "\n";
  }
  return kExitOk;
}

}  // namespace tactus::master
