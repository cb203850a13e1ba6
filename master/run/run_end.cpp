// tactus-master's run (run.hpp): the end of a run: published in every segment, the threads
// stopped, the clients waited for, the last records drained, the segments removed, the totals said.
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

// Why the run ended ("" while it runs): ": " and the end's message, for a request's answer.
std::string Run::endedBecause() const {
  std::lock_guard<std::mutex> lock(endLock_);
  return endMessage_.empty() ? std::string() : ": " + endMessage_;
}

// The name of the client `end` names ("" for none): its id belongs to the schedule whose name for it
// the message quotes.
std::string Run::clientNamed(const RunEnd& end) const {
  for (const auto& m : modes_) {
    if (end.client != kNone && m->schedule.clients.contains(end.client) &&
        end.message.find(quoted(m->schedule.clients[end.client].name)) != std::string::npos) {
      return m->schedule.clients[end.client].name;
    }
  }
  return "";
}

// Publishes the end in every schedule's segment, the client it names translated to each schedule.
void Run::endEverywhere(const RunEnd& end) {
  {
    std::lock_guard<std::mutex> lock(endLock_);
    if (endMessage_.empty()) endMessage_ = end.message;
  }
  if (runEnded_.exchange(true)) return;
  for (auto& m : modes_) m->control.abort();
  const std::string clientName = clientNamed(end);
  for (auto& m : modes_) {
    RunEnd local = end;
    if (modes_.size() > 1) {
      local.client = clientName.empty() ? kNone : clientIndex(m->schedule, clientName);
    }
    m->owner->publishEnd(local);
  }
  activation_->ended();
}

int Run::finish(const RunEnd& end) {
  endEverywhere(end);
  return end.reason == StopReason::kSignal || end.reason == StopReason::kExitRequested ||
                 end.reason == StopReason::kFrameLimit
             ? kExitOk
             : kExitRunFailed;
}

int Run::badInput(const Error& error) {
  err_ << "tactus-master: " << error.message << "\n";
  return kExitBadInput;
}

// Waits (at most kClientExitWaitNs) for the clients to leave, but for one a stop's grace left behind
// or the end named stuck (it is frozen or hangs in a runnable: nothing it does now changes the end).
void Run::waitForClientsToLeave() {
  const std::int64_t leaveBy = ipc::monotonicNs() + kClientExitWaitNs;
  const auto gone = [&](const auto& m) { return m->monitor->allGone(clientIndex(m->schedule, leftBehind_)); };
  while (ipc::monotonicNs() < leaveBy && !std::all_of(modes_.begin(), modes_.end(), gone)) {
    ipc::sleepUntilNs(ipc::monotonicNs() + 2'000'000, 0);
  }
}

// What overran, said at the end (the first of each was said when it came); with
// --fail-on-overrun a run that overran fails. The exit code.
int Run::judgeOverruns(int code) {
  for (const auto& m : modes_) {
    const std::string summary = m->overruns->summary();
    if (summary.empty()) continue;
    err_ << "tactus-master: overruns"
         << (activation_->switchesSchedules() ? " in schedule " + std::to_string(m->schedule.identifier) : "") << ": "
         << summary << "\n";
    if (o_.failOnOverrun && code == kExitOk) {
      err_ << "tactus-master: the run overran (--fail-on-overrun): exit status " << kExitRunFailed << "\n";
      code = kExitRunFailed;
    }
  }
  return code;
}

// The end of a run that went well: why it ended and what it logged and skipped.
void Run::reportTotals(const std::string& message) {
  std::uint64_t skipped = 0, logged = 0, dropped = 0;
  for (const auto& m : modes_) {
    for (HyperepochId he : m->schedule.hyperepochs.ids()) skipped += m->owner->view().hyperepoch(he).skipped.load();
    logged += m->drain->recordsDrained();
    dropped += m->drain->droppedTotal();
  }
  out_ << "tactus-master: " << message << "; " << logged << " events "
       << (log_.isOpen() ? "logged to " + o_.logPath : std::string("(not logged: no -l)")) << ", " << dropped
       << " dropped, " << skipped << " periods skipped ("
       << (activation_->switchesSchedules() ? "schedules " + loadedList()
                                            : "schedule " + quoted(modes_.front()->schedule.name))
       << ", instance " << quoted(instance_) << ")\n";
}

// Ends the run: stops the running schedule where the end asks for it, publishes the end, stops
// the threads, waits for the clients to leave, drains the last records and removes the
// segments; the exit code.
int Run::closeRun(const std::optional<RunEnd>& end) {
  int code = kExitRunFailed;
  if (end) {
    activation_->closing(*end);
    // The clients' outcome says what overran too (they print the end's message).
    RunEnd said = *end;
    for (const auto& m : modes_) {
      if (const std::string brief = m->overruns->summary(true); !brief.empty()) said.message += "; overruns: " + brief;
    }
    code = finish(said);
    // A client the end names stuck (frozen, or hanging in a runnable) does not leave either: it is
    // not waited for (its master lingered a second after naming it).
    if (end->reason == StopReason::kStuck && leftBehind_.empty()) leftBehind_ = clientNamed(*end);
  }
  for (auto& m : modes_) m->control.abort();
  activation_->closed();
  for (auto& m : modes_) m->releaser->join();
  (void)drainAll();
  // The end in full (the segment's copy is cut to its 255 bytes: a timeout's end with the notes of
  // strangers, say), else the segment's.
  std::string message;
  {
    const std::lock_guard<std::mutex> lock(endLock_);
    message = endMessage_;
  }
  if (message.empty()) message = modes_.front()->owner->view().message();
  // A failure, or a stop whose grace left a client behind, is said on stderr.
  if (code != kExitOk || !leftBehind_.empty()) err_ << "tactus-master: " << message << "\n";
  if (code == kExitOk) reportTotals(message);  // a run that went well says so, in one line
  for (auto& m : modes_) {
    if (m->soc) m->soc->finish(code == kExitOk, message, end ? end->reason : StopReason::kError);
  }
  if (soc_) {
    if (log_.isOpen()) {  // the clocks, for tactus-report to merge the SoCs' logs on the primary's
      const EventRecord offset = soc_->offsetRecord();
      log_.append(&offset, 1);
    }
    if (const std::string offset = soc_->offsetText(); !offset.empty()) out_ << "tactus-master: " << offset << "\n";
  }
  notifyStopping(message);
  waitForClientsToLeave();
  // What the workers pushed on their way out: a worker queues its run records until it waits or
  // ends its iteration (client_lib's DeferredLog), so after a run that ended early the last ones
  // come when it leaves.
  (void)drainAll();
  code = judgeOverruns(code);
  for (auto& hook : hooks_) code = hook->finished(code, out_, err_);  // --replay, --record (run_hook.hpp)
  gAttention.store(nullptr);
  for (auto& m : modes_) m->owner->remove();
  if (auto ok = log_.close(); !ok) {
    err_ << "tactus-master: " << ok.error().message << "\n";
    if (code == kExitOk) code = kExitRunFailed;
  }
  return code;
}

}  // namespace tactus::master
