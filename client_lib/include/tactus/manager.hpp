// libtactus's schedule-manager API: the one process that starts, stops and rolls over the
// schedules of a master started with several schedules and `-N name`. Every call is synchronous:
// it returns once the master has done what it asked (stop: every hyperepoch stopped; rollover:
// every hyperepoch switched), or with the master's error; a refused request leaves the run as it was.
//
//   tactus::manager::init("mgr", {.instance = "demo"});   // blocks until the master publishes
//   tactus::manager::startSchedule(101);
//   tactus::manager::rollOverSchedule(102, 101);          // start 102, stop 101, per hyperepoch
//   tactus::manager::exitRun();                           // every client returns; the master exits 0
//
// One manager per process; the manager dying while attached ends the run (named); shutdown()
// detaches without ending it (what tactus-manager does after each command).
#pragma once

#include <cstdint>
#include <string>

#include "tactus/core/result.hpp"

namespace tactus::manager {

/// Options for init.
struct ManagerOptions {
  /// The master's instance (-D); empty: $TACTUS_INSTANCE, else "default" (as tactus::init).
  std::string instance;
  /// How long init waits for a master, in milliseconds; < 0 waits forever.
  std::int64_t timeoutMs = -1;
  /// A command that makes its requests and detaches (tactus-manager): killed, even mid-request, it
  /// does not end the run (the master drops its claim and goes on). False: a manager that stays
  /// attached, whose death while it holds the claim ends the run, naming it.
  bool oneShot = false;
};

/// What status() reports.
struct Status {
  bool running = false;             ///< a schedule runs
  std::uint16_t schedule = 0;       ///< its identifier (when running)
  std::uint64_t iterations = 0;     ///< iterations it completed (most over its hyperepochs)
  std::uint64_t overruns = 0;       ///< periods it skipped after overruns
  std::uint32_t scheduleCount = 0;  ///< schedules the master loaded
};

/// Attaches as the schedule manager `name` (must equal the master's -N; an empty name takes the
/// master's). Waiting longer than a second for the master, it says so on standard error once per
/// reason: the instance, where its name came from and how to set it, and the instances that have
/// a manager channel now. Errors: kNotFound (the master expects another name), kAlreadyExists
/// (another live manager is attached), kTimeout, kIncompatible, kBadParameter (a bad instance
/// name, naming where it came from), kInvalidState (already initialized).
Result<void> init(const std::string& name, const ManagerOptions& options = {});

/// Starts schedule `id`: its first frames are released about 2 ms later. Errors:
/// kNotFound (no such identifier), kInvalidState (one runs already).
Result<void> startSchedule(std::uint16_t id);

/// Stops schedule `id` (complete swap): every hyperepoch finishes its current iteration and starts
/// no other; returns once all stopped. Errors: kNotFound, kInvalidState (it is not running).
Result<void> stopSchedule(std::uint16_t id);

/// Rolls over from `stopId` to `startId`: each hyperepoch of `stopId` finishes its iteration, the
/// clients' switch callbacks run, and the corresponding hyperepoch of `startId` starts at once.
/// Errors: kNotFound, kInvalidState (stopId not running), kValidation (the schedules partition
/// resources differently; the run goes on).
Result<void> rollOverSchedule(std::uint16_t startId, std::uint16_t stopId);

/// Ends the run: the running schedule stops at its iteration boundary, every client returns
/// from enterScheduler with exit-requested, the master exits 0. Detaches.
Result<void> exitRun();

/// The master's status words.
Result<Status> status();

/// Detaches without ending the run; init may be called again.
void shutdown();

}  // namespace tactus::manager
