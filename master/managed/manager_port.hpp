// The managed activation's end of the manager channel (shm::ManagerChannel, its segment at
// managerInstanceName): made and guarded by this master, read for the manager's requests, written
// with their answers and the run's status words, and the manager that claims it watched.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "managed/switch_job.hpp"
#include "roles/run_control.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {

class ManagerPort {
 public:
  /// `instance`: the run's -D; `managerName`: -N; `err` takes the master's warnings.
  ManagerPort(std::string instance, std::string managerName, std::ostream& err);
  ManagerPort(const ManagerPort&) = delete;
  ManagerPort& operator=(const ManagerPort&) = delete;
  /// Removes the channel this master made.
  ~ManagerPort();
  /// Makes the channel for the schedules `identifiers` (a stale one replaced, a live master's refused).
  Result<void> create(const std::vector<std::uint32_t>& identifiers);
  /// Opens it to the manager (1) or says the run ended (2), waking every waiter.
  void setOpen(std::uint32_t open);
  /// The damage to the channel (truncated, removed, replaced, a field only the master writes
  /// written over) as the run's end; none while it is whole.
  std::optional<RunEnd> damage() const;
  /// The claimed manager's death as the run's end (a one-shot command's only drops its claim); a
  /// claim no manager made is cleared, said once.
  std::optional<RunEnd> watchManager();
  /// A request newer than the last answered and than `pendingSeq`, if any.
  std::optional<Request> next(std::uint32_t pendingSeq) const;
  /// Whether a request waits for its answer.
  bool requestPending() const;
  /// The answer to request `seq`, with the schedule now running (kNoSchedule: none).
  void publish(std::uint32_t seq, const Answer& answer, std::uint32_t running);
  /// The running schedule (kNoSchedule: none), its iterations and overruns (status words).
  void status(std::uint32_t running, std::uint64_t iterations, std::uint64_t overruns);
  /// The last request answered.
  std::uint32_t resultSeq() const;
  bool made() const { return channel_ != nullptr; }

 private:
  std::string instance_;
  std::string managerName_;
  std::ostream& err_;
  std::vector<std::uint32_t> identifiers_;
  ipc::Segment segment_;
  shm::ManagerChannel* channel_ = nullptr;
  bool owned_ = false;
  std::uint64_t startTime_ = 0;  // the masterStartTime this master wrote into the channel
  std::uint32_t pid_ = 0;        // the masterPid it wrote (asked once: each round compares it)
  ipc::ProcessWatch managerWatch_;
  std::uint32_t managerPid_ = 0;
  bool managerCommand_ = false;  // the claim is a one-shot command's (shm::ManagerKind::kCommand)
};

}  // namespace tactus::master
