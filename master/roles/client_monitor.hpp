// The master's client monitor: watches every client of the schedule through its slot and its
// process, keeping its own copy of what it validated when the client attached (pid, start time),
// so a slot written over later is reported as damage, never trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "roles/run_control.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/process.hpp"

namespace tactus::master {

/// Watches the clients of one run.
class ClientMonitor {
 public:
  /// `view` has its geometry; `schedule` outlives the monitor.
  ClientMonitor(const shm::SegmentView& view, const Schedule& schedule);

  /// Looks at every client once: a newly registered pid is validated and watched, a client that
  /// refused, detached early (`beforeRun`), died (also before it finished attaching) or whose
  /// slot holds values out of range ends the run. The end, or nothing while all is well.
  std::optional<RunEnd> check(bool beforeRun);

  /// Whether every client is in the scheduler (state kEntered).
  bool allEntered() const;

  /// The end for clients that did not come or enter within `timeoutUs`.
  RunEnd timeoutEnd(std::int64_t timeoutUs) const;

  /// The first client that asked to exit the scheduler, or kNone.
  ClientId exitRequester() const;
  /// The end an exit request of client c gives, in words: named with its signal when
  /// libtactus's handler made it (SIGINT or SIGTERM in the client).
  std::string exitText(ClientId c) const;

  /// Whether every client that attached has detached or exited (the master may remove the segment).
  bool allGone(ClientId except = kNone) const;

  /// The client's name from the schedule ("?" for an index out of range).
  std::string name(ClientId c) const;
  /// Stops watching client `c` (it died and a switching policy lets the run go on without it).
  void excuse(ClientId c) {
    if (records_.contains(c)) records_[c].excused = true;
  }
  /// Client `c` runs on another SoC of a multi-SoC schedule: never watched, waited for or named here.
  void setRemote(ClientId c) {
    if (records_.contains(c)) records_[c].excused = records_[c].remote = true;
  }
  /// Whether client `c` runs on another SoC (setRemote).
  bool remote(ClientId c) const { return records_.contains(c) && records_[c].remote; }
  /// What a process naming itself client `c` said of why it cannot take part (a note,
  /// ipc/notes.hpp): added to the end given when `c` does not come, or dies before the run.
  void note(ClientId c, const std::string& text) {
    if (records_.contains(c)) records_[c].note = text;
  }
  /// The pid the monitor validated for the client (0 before it registered).
  std::uint32_t pid(ClientId c) const { return records_.contains(c) ? records_[c].pid : 0; }

 private:
  struct Record {
    std::uint32_t pid = 0;  // validated when first seen; never re-read from the slot
    ipc::ProcessWatch watch;
    bool startTimeRead = false;  // the slot's startTime, published with the client's state, was checked
    bool excused = false;        // excuse(): never checked again
    bool remote = false;         // setRemote(): another SoC's client
    std::string note;            // note(): what the client said of why it cannot take part
  };
  /// " (NOTE)" when client `c` sent a note, else "".
  std::string said(ClientId c) const;
  const shm::SegmentView& view_;
  const Schedule& schedule_;
  IdVector<ClientId, Record> records_;  // per client
};

}  // namespace tactus::master
