// The stall watch (stall_watch.hpp): from a release thread's longest wait to the client to name.
#include "roles/stall_watch.hpp"

#include <algorithm>

#include "tactus/core/text.hpp"

namespace tactus::master {

using shm::SegmentState;
using shm::StopReason;

// The Monitor budget of the hyperepoch, else -t; 0 when neither limits it.
std::int64_t StallWatch::budgetNs(HyperepochId hyperepoch) const {
  const std::int64_t monitor = schedule_.hyperepochs[hyperepoch].monitorNs;
  if (monitor != kNoDuration && monitor > 0) return monitor;
  return timeoutUs_ >= 0 ? std::max<std::int64_t>(timeoutUs_ * 1000, 1) : 0;
}

// The instance that holds up a stalled release thread: of the hyperepoch's instances not done with
// the iteration, the first whose frame is released and whose own waits are all met (so it is
// running, or its client does not run it). Instances behind it (waiting for it) are not to blame.
// In a multi-SoC run, where none is ready and one waits for another SoC's instance, that one:
// its SoC's master watches (and names) its client.
InstanceId StallWatch::blockingInstance(const Stall& stall) const {
  const std::uint32_t target = stall.target;
  const std::uint64_t h = target - 1u;  // the iteration (low 32 bits suffice for the release word)
  std::optional<InstanceId> remoteWait;
  for (const InstanceId i : plan_.hyperepochs[stall.hyperepoch].instances) {
    if (shm::sequenceReached(view_.instance(i).done.load(std::memory_order_acquire), target)) continue;
    const EpochId e = plan_.instanceEpoch[i];
    const std::uint64_t frames = std::max<std::uint32_t>(1, schedule_.epochs[e].frames);
    const auto released = static_cast<std::uint32_t>(h * frames + schedule_.instances[i].frame + 1);
    if (!shm::sequenceReached(view_.epoch(e).released.load(std::memory_order_acquire), released)) continue;
    bool ready = true;
    for (const WaitCondition& c : plan_.waits[i]) {
      const std::uint32_t need = c.previousIteration ? target - 1u : target;
      if (shm::sequenceReached(view_.instance(c.instance).done.load(std::memory_order_acquire), need)) continue;
      ready = false;
      if (!remoteWait && monitor_.remote(schedule_.runnables[schedule_.instances[c.instance].runnable].client))
        remoteWait = c.instance;
    }
    if (ready) return i;
  }
  return remoteWait.value_or(stall.instance);
}

Blocker StallWatch::blockerOf(const Stall& stall) const {
  const RunnableId runnable = schedule_.instances[blockingInstance(stall)].runnable;
  const ClientId client = schedule_.runnables[runnable].client;
  return Blocker{client, runnable, monitor_.remote(client)};
}

// " (on SoC 'B')" for another SoC's client, else "".
std::string StallWatch::socOf(const Blocker& b) const {
  const std::uint32_t soc = schedule_.clients[b.client].soc;
  if (!b.remote || soc >= schedule_.socs.size()) return "";
  return " (on SoC " + quoted(schedule_.socs[soc].name) + ")";
}

// The release threads' longest wait, unless what it waits for has ended meanwhile (a follower
// shows its SoC's pending instance while it waits for the primary: then the primary holds it up).
std::optional<Stall> StallWatch::currentStall() const {
  const std::optional<Stall> stall = releaser_.longestStall();
  if (!stall || !schedule_.instances.contains(stall->instance) ||
      shm::sequenceReached(view_.instance(stall->instance).done.load(std::memory_order_acquire), stall->target))
    return std::nullopt;
  return stall;
}

std::optional<Blocker> StallWatch::blocker() const {
  const std::optional<Stall> stall = currentStall();
  if (!stall) return std::nullopt;
  return blockerOf(*stall);
}

std::optional<RunEnd> StallWatch::stuck(std::int64_t nowNs) const {
  const std::optional<Stall> stall = currentStall();
  if (!stall) return std::nullopt;
  const std::int64_t budget = budgetNs(stall->hyperepoch);
  if (budget == 0 || nowNs - stall->sinceNs <= budget) return std::nullopt;
  const Blocker b = blockerOf(*stall);
  // Another SoC's client: its own master names it within the same budget and ends the run on
  // every SoC. Only when that does not come (its ends lost on the link) does this master end it.
  if (b.remote && nowNs - stall->sinceNs <= kRemoteBudgetFactor * budget) return std::nullopt;
  const std::int64_t monitor = schedule_.hyperepochs[stall->hyperepoch].monitorNs;
  const std::string limit = monitor != kNoDuration && monitor > 0
                                ? "the Monitor budget of hyperepoch " +
                                      quoted(schedule_.hyperepochs[stall->hyperepoch].name) + ", " +
                                      humanDuration(monitor)
                                : "-t " + std::to_string(timeoutUs_);
  if (b.remote) {
    return RunEnd{SegmentState::kAborted, StopReason::kStuck, b.client,
                  "client " + quoted(monitor_.name(b.client)) + socOf(b) + " is stuck: the end of runnable " +
                      quoted(qualifiedName(schedule_, b.runnable)) + " did not arrive for " +
                      humanDuration(nowNs - stall->sinceNs) + ", beyond " + std::to_string(kRemoteBudgetFactor) +
                      " times " + limit + ", and its SoC's master did not end the run"};
  }
  return RunEnd{SegmentState::kAborted, StopReason::kStuck, b.client,
                "client " + quoted(monitor_.name(b.client)) + " (pid " + std::to_string(monitor_.pid(b.client)) +
                    ") is stuck: runnable " + quoted(qualifiedName(schedule_, b.runnable)) + " made no progress for " +
                    humanDuration(nowNs - stall->sinceNs) + ", beyond " + limit};
}

std::string StallWatch::graceText(ClientId& client) const {
  const std::optional<Blocker> b = blocker();
  if (!b) return "";
  client = b->client;
  return "; client " + quoted(monitor_.name(b->client)) + " did not finish runnable " +
         quoted(qualifiedName(schedule_, b->runnable)) + " within " + humanDuration(kStopGraceNs) + socOf(*b);
}

}  // namespace tactus::master
