// What a run does besides running, plugged into the one Run (run.hpp) the way its activation is:
// a hook is told when the schedules are loaded, when their segments exist, when the run starts
// and when it ends, and may refuse the run before any client attaches. The hooks (makeRunHooks,
// master/record/hooks.cpp), in the order the core calls them:
//   replay     (master/replay/)  --replay DIR: reads and checks the recording, feeds the sources
//   recording  (master/record/)  --record DIR: records every channel version, release and switch
// The core calls them only here; what each does is its own room's.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::master {

struct Mode;
struct MasterOptions;
class ReleaseGate;
namespace replay {
class SwitchScript;
}

class RunHook {
 public:
  virtual ~RunHook() = default;
  /// The schedules are loaded and verified, no segment exists: the hook checks what it needs (an
  /// error refuses the run, exit 2) and may adapt the master's own copy of each schedule's plan
  /// (the published schedule text does not change).
  virtual Result<void> loaded(std::vector<std::unique_ptr<Mode>>& modes) = 0;
  /// Flags (shm::HeaderFlags and the like) every schedule segment's header carries for this hook.
  virtual std::uint32_t segmentFlags() const { return 0; }
  /// The frame limit, given the one so far (-e; 0: none): a hook may lower it.
  virtual std::uint64_t iterations(std::uint64_t given) const { return given; }
  /// Whether the release threads must start an iteration as soon as the previous ended (-m's way).
  virtual bool freeRunning() const { return false; }
  /// What the release threads wait for before each release (roles/releaser.hpp), or null: the
  /// recording's copier, so that no release outruns it.
  virtual ReleaseGate* releaseGate() { return nullptr; }
  /// Every schedule's segment exists with its roles and is not published yet; `instance` is
  /// schedule 0's segment name (an error refuses the run, exit 2).
  virtual Result<void> created(std::vector<std::unique_ptr<Mode>>& modes, const std::string& instance) = 0;
  /// A managed replay (-N --replay): the recorded switches the run makes itself, or null.
  virtual const replay::SwitchScript* switchScript() const { return nullptr; }
  /// Asked every round of the monitor loop once the run started: the message of an end the hook
  /// asks for now (the run fails with it, exit 1), or "" (--record-required after a loss).
  virtual std::string endNow() { return {}; }
  /// Every client entered; no release thread runs yet (what must see the run's first frame starts here).
  virtual void starting(std::vector<std::unique_ptr<Mode>>& modes) { (void)modes; }
  /// Every client entered: frame 0 is released at `runStartNs`.
  virtual void started(std::vector<std::unique_ptr<Mode>>& modes, std::int64_t runStartNs, std::ostream& err) = 0;
  /// The run ended with `code` (its clients gone, its records drained): the code it ends with.
  virtual int finished(int code, std::ostream& out, std::ostream& err) = 0;
};

/// The hooks of a run with options `o` (none without --record and --replay), in calling order.
std::vector<std::unique_ptr<RunHook>> makeRunHooks(const MasterOptions& o);

}  // namespace tactus::master
