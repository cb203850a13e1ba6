// What the run core (run.hpp) offers the activation plugged into it (activation.hpp), and nothing
// more: the options and the output streams, the loaded schedules, the multi-SoC link, the run's
// start and end as the core keeps them, the records for the event log. The activations and what
// they own (the managed room's switching and policy) act on the run through this interface alone:
// none of them sees the core's members, and each can be driven in one process by a stand-in core
// (tests/master/activation_test.cpp). Run implements it (privately) and hands it to its
// activation when it makes one (makeActivation).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roles/run_control.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/shm_layout.hpp"

namespace tactus::master {

struct Mode;
struct MasterOptions;
namespace replay {
class SwitchScript;
}
struct SocRunOptions;
class SocRun;

class RunCore {
 public:
  virtual ~RunCore() = default;

  // What the run was given.
  virtual const MasterOptions& options() const = 0;
  virtual std::ostream& out() = 0;
  virtual std::ostream& err() = 0;
  /// The loaded schedules, schedule 0 (the instance's segment) first; their roles exist once the
  /// segments are created (the activation acts on them, the core owns them).
  virtual const std::vector<std::unique_ptr<Mode>>& modes() const = 0;
  /// A multi-SoC run's options for this SoC (the activation may mark them managed); null on one machine.
  virtual SocRunOptions* socOptions() = 0;
  /// A multi-SoC run: schedule 0's link (Mode::soc); null on one machine.
  virtual SocRun* soc() const = 0;
  /// The frame limit: -e as the hooks lowered it (0: none).
  virtual std::uint64_t iterations() const = 0;

  // The run's course, as the core keeps it.
  /// The run starts: frame 0 (or the wait for the first start) at `ns`, in the event log too.
  virtual void setRunStart(std::int64_t ns) = 0;
  /// The monitor loop wakes in `mode`'s idle windows (roles/idle_windows.hpp) from now on.
  virtual void wakeInIdleWindows(const Mode& mode) = 0;
  /// Every client entered and the run started (the monitor loop's view).
  virtual bool runStarted() const = 0;
  /// The same, for another thread (the switch job's).
  virtual bool clientsEntered() const = 0;
  /// The end is published (any thread).
  virtual bool runEnded() const = 0;
  /// Why the run ended ("" while it runs): ": " and the end's message, for a request it cut short.
  virtual std::string endedBecause() const = 0;
  /// Empties every schedule's rings and the recorded switch events into the log; an end when the
  /// log cannot take them.
  virtual std::optional<RunEnd> drainAll() = 0;
  /// The reason of the primary SoC's last stop as any schedule's link carried it; none without a
  /// link or before a stop arrived.
  virtual std::optional<shm::StopReason> linkStopReason() const = 0;
  /// The schedule whose Mode::running is set, or null.
  virtual Mode* runningMode() const = 0;
  /// The loaded schedules as messages list them: "7 (a.yaml), 8 (b.yaml)".
  virtual std::string loadedList() const = 0;
  /// A record for the event log from any thread (a switch's start and stop, a policy decision);
  /// the monitor loop drains it with the rings.
  virtual void record(const EventRecord& r) = 0;
  /// A managed replay's recorded switches (a run hook's, run_hook.hpp), or null.
  virtual const replay::SwitchScript* switchScript() const = 0;
};

}  // namespace tactus::master
