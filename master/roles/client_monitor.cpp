// The master's client monitor (see client_monitor.hpp).
#include "roles/client_monitor.hpp"

#include <signal.h>

#include "tactus/core/text.hpp"

namespace tactus::master {

using shm::ClientState;

namespace {

// Linux's largest pid (PID_MAX_LIMIT on 64-bit): anything above it is no process id.
constexpr std::uint32_t kMaxPid = 1u << 22;

// The DLA_HANDLE or PVA_STREAM that submitter `r` holds, or null.
const ResourceInfo* engineQueueOfSubmitter(const Schedule& s, RunnableId r) {
  for (const InstanceInfo& inst : s.instances) {
    if (inst.runnable != r) continue;
    for (const ResourceId res : inst.resources) {
      const ResourceKind k = s.resources[res].kind;
      if (isDlaOrPvaQueue(k)) return &s.resources[res];
    }
  }
  return nullptr;
}

// A client's refusal (ClientSlot::refusal and refusalDetail) in words, with what to do about it.
std::string refusalText(const Schedule& s, shm::Refusal refusal, std::uint32_t detail) {
  const bool named = s.runnables.contains(RunnableId{detail});
  switch (refusal) {
    case shm::Refusal::kUnregistered:
      if (!named) break;
      return "scheduled runnable " + quoted(qualifiedName(s, RunnableId{detail})) +
             " was not registered (start the master with --allow-unregistered-runnables to run without it)";
    case shm::Refusal::kGpuEngine: {
      // A submitter on a DLA_HANDLE or PVA_STREAM: the client's queue engine refused (most often
      // an engine queue that was not registered).
      const ResourceInfo* queue = named ? engineQueueOfSubmitter(s, RunnableId{detail}) : nullptr;
      if (queue != nullptr) {
        return "its engine queues could not start for submitter " + quoted(qualifiedName(s, RunnableId{detail})) +
               " on " + (queue->kind == ResourceKind::kDlaHandle ? "DLA_HANDLE " : "PVA_STREAM ") +
               quoted(queue->name) +
               " (is it registered with tactus::registerEngineQueue or tactusRegisterEngineQueue? the client's output "
               "says why)";
      }
      return "its GPU engine could not start" +
             (named ? " for CUDA submitter " + quoted(qualifiedName(s, RunnableId{detail})) : std::string()) +
             " (the client's output says why)";
    }
    case shm::Refusal::kCore: {
      std::string resource = "core " + std::to_string(detail);
      for (const ResourceInfo& r : s.resources) {
        if (r.kind == ResourceKind::kCpu && r.core == detail) {
          resource = r.name;
          break;
        }
      }
      return "its worker for " + resource + " would be pinned to core " + std::to_string(detail) +
             ", which that process cannot be pinned to (not online, or outside its cpuset): compile the graph for "
             "this machine's cores, or start the master with -C to run without pinning";
    }
  }
  return "it could not enter the scheduler";
}

}  // namespace

ClientMonitor::ClientMonitor(const shm::SegmentView& view, const Schedule& schedule)
    : view_(view), schedule_(schedule), records_(schedule.clients.size()) {}

std::string ClientMonitor::name(ClientId c) const {
  return schedule_.clients.contains(c) ? schedule_.clients[c].name : "?";
}

std::string ClientMonitor::said(ClientId c) const {
  return records_[c].note.empty() ? std::string() : " (" + records_[c].note + ")";
}

std::optional<RunEnd> ClientMonitor::check(bool beforeRun) {
  const char* phase = beforeRun ? "before the run started" : "during the run";
  for (ClientId c : records_.ids()) {
    shm::ClientSlot& slot = view_.client(c);
    Record& record = records_[c];
    if (record.excused) continue;
    // The state first: a client claims its pid before it writes its state, so a state seen here
    // comes with the pid claimed before it.
    const std::uint32_t rawState = slot.state.load(std::memory_order_acquire);
    const std::uint32_t pid = slot.pid.load(std::memory_order_acquire);
    auto damaged = [&](const std::string& field, std::uint64_t value) {
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kDamaged, c,
                    "segment damaged: client " + quoted(name(c)) +
                        (record.pid != 0 ? " (pid " + std::to_string(record.pid) + ")" : std::string()) + ": field '" +
                        field + "' holds " + std::to_string(value) + ", out of range"};
    };
    // The client writes its start time after it claimed the pid and publishes both with its
    // state: before the state says so the slot may still hold what was there (zero, or words
    // written over), which must not make a live client look like another process.
    const bool published = rawState != static_cast<std::uint32_t>(ClientState::kAbsent);
    if (record.pid == 0 && pid != 0) {
      if (pid > kMaxPid) return damaged("pid", pid);
      // A client that claimed its slot and died before it finished attaching: the watch opens on
      // a gone (or zombie) process and reports the death at once.
      record.pid = pid;
      record.startTimeRead = published;
      record.watch =
          ipc::ProcessWatch(static_cast<pid_t>(pid), published ? slot.startTime.load(std::memory_order_relaxed) : 0);
    } else if (record.pid != 0 && pid != record.pid) {
      return damaged("pid", pid);  // a pid never changes after attach: someone wrote the slot over
    } else if (record.pid != 0 && published && !record.startTimeRead) {
      // First seen while attaching: the start time it then wrote is the live process's own.
      record.startTimeRead = true;
      const std::uint64_t written = slot.startTime.load(std::memory_order_relaxed);
      const std::uint64_t actual = ipc::processStartTime(static_cast<pid_t>(record.pid));
      if (actual != 0 && written != actual) return damaged("startTime", written);
    }
    if (rawState > static_cast<std::uint32_t>(ClientState::kExited)) return damaged("state", rawState);
    const auto state = static_cast<ClientState>(rawState);
    if (state != ClientState::kAbsent && record.pid == 0) return damaged("pid", 0);
    if (state == ClientState::kRefused) {
      const std::uint32_t refusal = slot.refusal.load(std::memory_order_relaxed);
      if (refusal > shm::kMaxRefusal) return damaged("refusal", refusal);
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, c,
                    "client " + quoted(name(c)) + " refused to run: " +
                        refusalText(schedule_, static_cast<shm::Refusal>(refusal),
                                    slot.refusalDetail.load(std::memory_order_relaxed))};
    }
    if (state == ClientState::kExited && beforeRun) {
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, c,
                    "client " + quoted(name(c)) + " detached before the run started" + said(c)};
    }
    if (state == ClientState::kExited) {
      // A client leaves the scheduler only after the master published the end, unless it cannot go
      // on (no thread for a worker: it says why in a note); else it was told to by words written
      // over (its slot, stopAt, the state).
      if (!record.note.empty()) {
        return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kError, c,
                      "client " + quoted(name(c)) + " (pid " + std::to_string(record.pid) +
                          ") left the scheduler while the run went on: " + record.note};
      }
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kDamaged, c,
                    "client " + quoted(name(c)) + " (pid " + std::to_string(record.pid) +
                        ") left the scheduler while the run went on (the segment was written over?)"};
    }
    if (record.pid != 0 && record.watch.exited() && state != ClientState::kExited) {
      const char* when = state == ClientState::kAbsent ? "while attaching, " : "";
      return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kPeerDied, c,
                    "client " + quoted(name(c)) + " (pid " + std::to_string(record.pid) + ") died " + when + phase +
                        (beforeRun ? said(c) : std::string())};
    }
  }
  return std::nullopt;
}

bool ClientMonitor::allEntered() const {
  for (ClientId c : records_.ids()) {
    if (records_[c].remote) continue;
    if (view_.client(c).state.load(std::memory_order_acquire) != static_cast<std::uint32_t>(ClientState::kEntered)) {
      return false;
    }
  }
  return true;
}

RunEnd ClientMonitor::timeoutEnd(std::int64_t timeoutUs) const {
  std::string message;
  ClientId first = kNone;
  for (ClientId c : records_.ids()) {
    const auto state = static_cast<ClientState>(view_.client(c).state.load());
    if (state == ClientState::kEntered || records_[c].remote) continue;
    if (first == kNone) first = c;
    if (!message.empty()) message += "; ";
    message += state == ClientState::kAbsent
                   ? "client " + quoted(name(c)) + " did not come" + said(c)
                   : "client " + quoted(name(c)) + " attached but did not enter the scheduler" + said(c);
  }
  message += " within " + std::to_string(timeoutUs / 1000) + " ms (-t " + std::to_string(timeoutUs) + ")";
  return RunEnd{shm::SegmentState::kAborted, shm::StopReason::kTimeout, first, message};
}

ClientId ClientMonitor::exitRequester() const {
  for (ClientId c : records_.ids()) {
    if (view_.client(c).exitRequested.load(std::memory_order_relaxed) != 0) return c;
  }
  return kNone;
}

std::string ClientMonitor::exitText(ClientId c) const {
  const std::uint32_t signal = view_.client(c).exitSignal.load(std::memory_order_relaxed);
  const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : nullptr;
  if (name == nullptr) return "client " + quoted(this->name(c)) + " requested exit";
  return "client " + quoted(this->name(c)) + " got " + name + " and ended the run for every client (libtactus's " +
         "handler; a second one ends that client at once)";
}

bool ClientMonitor::allGone(ClientId except) const {
  for (ClientId c : records_.ids()) {
    if (c == except) continue;
    const auto state = static_cast<ClientState>(view_.client(c).state.load());
    if (state == ClientState::kAttached || state == ClientState::kEntered) {
      if (records_[c].pid == 0 || !records_[c].watch.exited()) return false;
    }
  }
  return true;
}

}  // namespace tactus::master
