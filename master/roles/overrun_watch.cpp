// The overrun watch (see overrun_watch.hpp).
#include "roles/overrun_watch.hpp"

#include <algorithm>

#include "tactus/core/text.hpp"

namespace tactus::master {

OverrunWatch::OverrunWatch(const Schedule& schedule, std::ostream& err)
    : schedule_(schedule),
      err_(err),
      runsOf_(schedule.runnables.size(), 0),
      worstOf_(schedule.runnables.size(), 0),
      epochSaid_(schedule.epochs.size(), false),
      hyperepochSaid_(schedule.hyperepochs.size(), false) {}

void OverrunWatch::sayRun(const EventRecord& r, RunnableId runnable, std::int64_t limitNs) {
  const RunnableInfo& info = schedule_.runnables[runnable];
  err_ << "tactus-master: overrun: runnable " << quoted(qualifiedName(schedule_, runnable)) << " ran "
       << humanDuration(r.endNs - r.startNs) << " in iteration " << r.iteration << ", beyond its WCET "
       << humanDuration(info.wcetNs);
  if (limitNs > info.wcetNs) err_ << " + EndMonitorThreshold " << humanDuration(limitNs - info.wcetNs);
  err_ << " (later overruns of it are counted, not shown)\n";
}

void OverrunWatch::see(const EventRecord* records, std::size_t count, std::int64_t nowNs) {
  for (std::size_t k = 0; k < count; ++k) {
    const EventRecord& r = records[k];
    switch (static_cast<EventKind>(r.kind)) {
      case EventKind::kRun: {
        // aux: the runnable that ran (a round-robin member; kNone for an empty step).
        if (!schedule_.runnables.contains(RunnableId{r.aux})) break;
        const RunnableId runnable{r.aux};
        const RunnableInfo& info = schedule_.runnables[runnable];
        const std::int64_t limit = overrunLimitNs(info);
        const std::int64_t took = r.endNs - r.startNs;
        if (info.wcetNs <= 0 || took <= limit) break;
        if (runsOf_[index(runnable)]++ == 0) sayRun(r, runnable, limit);
        worstOf_[index(runnable)] = std::max(worstOf_[index(runnable)], took);
        ++runs_;
        break;
      }
      case EventKind::kOverrun: {  // instance: the epoch, aux: the late frame
        if (!schedule_.epochs.contains(EpochId{r.instance})) break;
        ++frames_;
        if (epochSaid_[r.instance]) break;
        epochSaid_[r.instance] = true;
        err_ << "tactus-master: overrun: frame " << r.aux << " of epoch "
             << quoted(schedule_.epochs[EpochId{r.instance}].name)
             << " was not finished at the next release (iteration " << r.iteration << "), which waited "
             << humanDuration(r.endNs - r.startNs) << "\n";
        break;
      }
      case EventKind::kSkipped: {  // instance: the hyperepoch, aux: the periods skipped
        if (!schedule_.hyperepochs.contains(HyperepochId{r.instance})) break;
        ++lateIterations_;
        skippedPeriods_ += r.aux;
        if (hyperepochSaid_[r.instance]) break;
        hyperepochSaid_[r.instance] = true;
        err_ << "tactus-master: overrun: hyperepoch " << quoted(schedule_.hyperepochs[HyperepochId{r.instance}].name)
             << " iteration " << r.iteration << " started " << humanDuration(r.endNs - r.startNs)
             << " late: the previous one was not finished; " << r.aux << " period" << (r.aux == 1 ? "" : "s")
             << " skipped\n";
        break;
      }
      default: break;
    }
  }
  // After the first reports, the counts while overruns go on, at most every kSummaryEveryNs.
  const std::uint64_t total = runs_ + frames_ + lateIterations_;
  if (total > countsSaid_ && countsSaidNs_ != 0 && nowNs - countsSaidNs_ >= kSummaryEveryNs) {
    err_ << "tactus-master: overruns so far: " << summary() << "\n";
    countsSaid_ = total;
    countsSaidNs_ = nowNs;
  } else if (countsSaidNs_ == 0 && total > 0) {
    countsSaid_ = total;
    countsSaidNs_ = nowNs;
  }
}

std::string OverrunWatch::summary(bool brief) const {
  if (!any()) return "";
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (runs_ > 0) {
    std::string runs = std::to_string(runs_) + " run" + (runs_ == 1 ? "" : "s") + " beyond WCET";
    if (!brief) {
      RunnableId top{0};
      for (RunnableId r : schedule_.runnables.ids()) {
        if (runsOf_[index(r)] > runsOf_[index(top)]) top = r;
      }
      const std::uint64_t most = runsOf_[index(top)];
      runs += " (most: " + quoted(qualifiedName(schedule_, top)) + " " + std::to_string(most) +
              (most == 1 ? " time" : " times") + ", longest " + humanDuration(worstOf_[index(top)]) +
              " against a WCET of " + humanDuration(schedule_.runnables[top].wcetNs) + ")";
    }
    add(runs);
  }
  if (frames_ > 0) add(std::to_string(frames_) + " frame" + (frames_ == 1 ? "" : "s") + " late");
  if (lateIterations_ > 0)
    add(std::to_string(lateIterations_) + " iteration" + (lateIterations_ == 1 ? "" : "s") + " late, " +
        std::to_string(skippedPeriods_) + " period" + (skippedPeriods_ == 1 ? "" : "s") + " skipped");
  return s;
}

}  // namespace tactus::master
