// The run's hooks (run/run_hook.hpp): --replay first (it feeds the sources before anything is
// recorded), then --record.
#include "master.hpp"
#include "record/run_recording.hpp"
#include "replay/replay_run.hpp"
#include "run/run_hook.hpp"

namespace tactus::master {

std::vector<std::unique_ptr<RunHook>> makeRunHooks(const MasterOptions& o) {
  std::vector<std::unique_ptr<RunHook>> hooks;
  replay::ReplayRun* replay = nullptr;
  if (!o.replayDir.empty()) {
    auto hook = std::make_unique<replay::ReplayRun>(o);
    replay = hook.get();
    hooks.push_back(std::move(hook));
  }
  if (!o.recordDir.empty()) {
    auto hook = std::make_unique<record::RunRecording>(o);
    // A recorded replay's release records hold the recorded run's ideal times, the ones its
    // logical clock hands out: a replay of that recording hands them out again.
    if (replay != nullptr)
      hook->setIdealOf([replay](const tactus::record::ReleaseRecord& r) { return replay->recordedIdealNs(r); });
    hooks.push_back(std::move(hook));
  }
  return hooks;
}

}  // namespace tactus::master
