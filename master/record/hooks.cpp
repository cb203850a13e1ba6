// The run's hooks (run/run_hook.hpp): --replay first (it feeds the sources before anything is
// recorded), then --record.
#include "master.hpp"
#include "record/run_recording.hpp"
#include "replay/replay_run.hpp"
#include "run/run_hook.hpp"

namespace tactus::master {

std::vector<std::unique_ptr<RunHook>> makeRunHooks(const MasterOptions& o) {
  std::vector<std::unique_ptr<RunHook>> hooks;
  if (!o.replayDir.empty()) hooks.push_back(std::make_unique<replay::ReplayRun>(o));
  if (!o.recordDir.empty()) hooks.push_back(std::make_unique<record::RunRecording>(o));
  return hooks;
}

}  // namespace tactus::master
