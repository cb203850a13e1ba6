// The master's side of --replay DIR (docs/guide/record-replay.md, docs/design/recording.md): a
// RunHook (run/run_hook.hpp). At load it reads this SoC's recording strictly (damage refused naming
// the file and offset), refuses a recording of other schedules naming the difference, chooses the
// sources (--replay-sources, or every runnable that writes a channel and reads none) and scales
// the master's release plan by --replay-rate; once the schedule segments exist it creates the
// replay segment (core/replay_layout.hpp) with every recorded version of the sources, which the
// clients' workers put into the sources' buffers at their writer runs (client_lib/src/replay_feed.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replay/switch_script.hpp"
#include "run/run_hook.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/record/reader.hpp"

namespace tactus::master::replay {

/// A recorded version of a source, as the replay segment will hold it.
struct SourceVersion {
  std::uint32_t scheduleId = 0;
  std::uint32_t instance = 0;
  std::uint32_t channel = 0;
  std::uint64_t iteration = 0;  ///< the writer run's (not + 1)
  const tactus::record::RecordedVersion* version = nullptr;
};

/// The replay segment's bytes for `versions` (sorted by schedule, instance, channel, iteration;
/// one source per (schedule, instance) of `sources`, which may have none), read from `file`.
std::vector<std::byte> replaySegmentBytes(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sources,
                                          const std::vector<SourceVersion>& versions,
                                          const tactus::record::RecordingFile& file);

class ReplayRun : public RunHook {
 public:
  explicit ReplayRun(const MasterOptions& options) : o_(options) {}
  ~ReplayRun() override;
  Result<void> loaded(std::vector<std::unique_ptr<Mode>>& modes) override;
  std::uint32_t segmentFlags() const override;
  /// The recorded run's ideal time of the release `live` names (schedule, epoch, iteration,
  /// frame), which the logical clock hands out in the replay; `live.idealNs` where none was recorded.
  std::int64_t recordedIdealNs(const tactus::record::ReleaseRecord& live) const;
  std::uint64_t iterations(std::uint64_t given) const override;
  bool freeRunning() const override;
  Result<void> created(std::vector<std::unique_ptr<Mode>>& modes, const std::string& instance) override;
  void started(std::vector<std::unique_ptr<Mode>>& modes, std::int64_t runStartNs, std::ostream& err) override;
  /// Under -N: the recorded switches, which the run makes itself (managed/replay_switches.cpp).
  const SwitchScript* switchScript() const override;
  int finished(int code, std::ostream& out, std::ostream& err) override;

 private:
  Result<void> checkManaged() const;
  Result<void> checkSchedules(const std::vector<std::unique_ptr<Mode>>& modes) const;
  Result<void> chooseSources(const std::vector<std::unique_ptr<Mode>>& modes);
  Result<void> readSwitches(const std::vector<std::unique_ptr<Mode>>& modes);
  void scaleReleases(std::vector<std::unique_ptr<Mode>>& modes) const;

  const MasterOptions& o_;
  tactus::record::RecordingFile file_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sources_;  // (schedule identifier, instance)
  std::vector<SourceVersion> versions_;
  std::vector<tactus::record::ReleaseRecord> releases_;  // the recording's, by (schedule, epoch, iteration, frame)
  std::uint64_t recordedIterations_ = 0;
  std::optional<SwitchScript> script_;  // under -N
  std::string warning_;
  std::string segmentName_;
  ipc::Segment segment_;
};

}  // namespace tactus::master::replay
