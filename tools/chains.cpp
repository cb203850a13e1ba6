// Measuring cause-effect chains on an event log (chains.hpp).
#include "chains.hpp"

#include <limits>
#include <optional>
#include <unordered_map>

#include "tactus/core/text.hpp"

namespace tactus::report {
namespace {

std::uint64_t runKey(std::uint64_t high, std::uint64_t iteration) { return (high << 32) | iteration; }

// What the log says about the chains' ends: the end of every valid run of a chain's source or last
// runnable, and the ideal release of every frame of a source's epoch, by iteration.
class LoggedEnds {
 public:
  LoggedEnds(const Schedule& s, const LogFile& log, const Analysis& a) : s_(s), a_(a) {
    std::vector<bool> runnable(s.runnables.size(), false), epoch(s.epochs.size(), false);
    for (const ChainInfo& chain : s.chains) {
      if (chain.runnables.empty()) continue;
      for (const RunnableId r : {chain.runnables.front(), chain.runnables.back()})
        if (s.runnables.contains(r)) runnable[index(r)] = true;
      if (s.runnables.contains(chain.runnables.front()))
        epoch[index(s.runnables[chain.runnables.front()].epoch)] = true;
    }
    for (const EventRecord& r : log.records) {
      const auto kind = static_cast<EventKind>(r.kind);
      if (kind == EventKind::kRun && validRun(s, a, r) &&
          runnable[index(r.aux != kNone ? RunnableId{r.aux} : s.instances[InstanceId{r.instance}].runnable)]) {
        ends_[runKey(r.instance, r.iteration)] = r.endNs;
      } else if (kind == EventKind::kRelease && s.epochs.contains(EpochId{r.instance}) && epoch[r.instance] &&
                 r.aux < s.epochs[EpochId{r.instance}].frames && timeValid(a, r.startNs)) {
        releases_[r.instance][runKey(r.iteration, r.aux)] = r.startNs;
      }
    }
  }

  // The measured end of a run, if the log holds it.
  std::optional<std::int64_t> end(ChainRun run) const {
    if (run.iteration < 0 || run.iteration > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
    const auto found = ends_.find(runKey(index(run.instance), static_cast<std::uint64_t>(run.iteration)));
    return found == ends_.end() ? std::nullopt : std::optional<std::int64_t>(found->second);
  }

  // The ideal release of a run's frame: as logged, or else the iteration's start (the analysis's)
  // plus the frame's offset; none when neither is known.
  std::optional<std::int64_t> release(ChainRun run) const {
    const InstanceInfo& in = s_.instances[run.instance];
    const EpochId e = s_.runnables[in.runnable].epoch;
    if (run.iteration < 0) return std::nullopt;
    const auto it = static_cast<std::uint64_t>(run.iteration);
    if (const auto epoch = releases_.find(index(e)); epoch != releases_.end()) {
      const auto found = epoch->second.find(runKey(it, in.frame));
      if (found != epoch->second.end()) return found->second;
    }
    const HyperepochId h = s_.epochs[e].hyperepoch;
    const std::size_t row = iterationIndex(a_, h, it);
    if (row == kNoIteration || a_.iterationStart[h][row] == 0) return std::nullopt;
    return a_.iterationStart[h][row] + static_cast<std::int64_t>(in.frame) * s_.epochs[e].periodNs;
  }

 private:
  const Schedule& s_;
  const Analysis& a_;
  std::unordered_map<std::uint64_t, std::int64_t> ends_;  // (instance, iteration) -> end
  // epoch -> (iteration, frame) -> ideal release
  std::unordered_map<std::uint32_t, std::unordered_map<std::uint64_t, std::int64_t>> releases_;
};

// One chain's occurrences over the iterations the log names, and their figures.
ChainStats measureOne(const Schedule& s, const ChainInfo& chain, const LoggedEnds& logged, const Analysis& a) {
  ChainStats out;
  auto map = ChainMap::make(s, chain);
  if (!map) {
    out.error = map.error().message;
    return out;
  }
  const std::size_t lastPosition = chain.runnables.size() - 1;
  const HyperepochId h = s.epochs[s.runnables[chain.runnables.front()].epoch].hyperepoch;
  std::vector<ChainRun> path;
  for (const std::uint64_t iteration : a.iterations[h]) {
    const auto it = static_cast<std::int64_t>(iteration);
    for (const InstanceId first : map->runs(0)) {
      const ChainRun source{first, it};
      if (!logged.end(source) || !map->reactionPath(source, path)) continue;
      const auto end = logged.end(path.back());
      const auto release = logged.release(source);
      if (end && release) out.reactions.push_back({source, path.back(), *release, *end});
    }
    for (const InstanceId last : map->runs(lastPosition)) {
      const ChainRun run{last, it};
      const auto end = logged.end(run);
      if (!end) continue;
      map->dataPath(run, path);
      const ChainRun source = path.front();
      const auto release = logged.release(source);
      if (logged.end(source) && release) out.ages.push_back({source, run, *release, *end});
    }
  }
  auto figures = [](const std::vector<ChainOccurrence>& occurrences, std::int64_t planned, std::int64_t required,
                    Quantiles& q, std::uint64_t& overPlanned, std::uint64_t& overRequired) {
    std::vector<std::int64_t> values;
    values.reserve(occurrences.size());
    for (const ChainOccurrence& o : occurrences) {
      values.push_back(o.ns());
      if (o.ns() > planned) ++overPlanned;
      if (required != kNoDuration && o.ns() > required) ++overRequired;
    }
    q = summarize(values);
  };
  figures(out.reactions, chain.reactionNs, chain.maxReactionNs, out.reaction, out.reactionsOverPlanned,
          out.reactionsOverRequired);
  figures(out.ages, chain.ageNs, chain.maxAgeNs, out.age, out.agesOverPlanned, out.agesOverRequired);
  return out;
}

}  // namespace

std::vector<ChainStats> measureChains(const Schedule& s, const LogFile& log, const Analysis& a) {
  std::vector<ChainStats> out;
  if (s.chains.empty()) return out;
  const LoggedEnds logged(s, log, a);
  for (const ChainInfo& chain : s.chains) out.push_back(measureOne(s, chain, logged, a));
  return out;
}

std::vector<ChainMiss> chainMisses(const Schedule& s, const Analysis& a) {
  std::vector<ChainMiss> misses;
  for (std::size_t c = 0; c < s.chains.size() && c < a.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    for (const bool reaction : {true, false}) {
      const std::int64_t planned = reaction ? chain.reactionNs : chain.ageNs;
      const std::int64_t required = reaction ? chain.maxReactionNs : chain.maxAgeNs;
      for (const ChainOccurrence& o : reaction ? a.chains[c].reactions : a.chains[c].ages) {
        const bool overPlanned = o.ns() > planned;
        const bool overRequired = required != kNoDuration && o.ns() > required;
        if (overPlanned || overRequired) misses.push_back({c, reaction, o, overPlanned, overRequired});
      }
    }
  }
  return misses;
}

std::string describeChainMiss(const Schedule& s, const ChainMiss& miss) {
  const ChainInfo& chain = s.chains[miss.chain];
  auto run = [&](ChainRun r) {
    const InstanceInfo& in = s.instances[r.instance];
    return qualifiedName(s, in.runnable) + " frame " + std::to_string(in.frame) + " of iteration " +
           std::to_string(r.iteration);
  };
  const ChainOccurrence& o = miss.occurrence;
  std::string text = "chain " + quoted(chain.name) + (miss.reaction ? " reaction from " : " data age from ") +
                     run(o.source) + " to " + run(o.last) + ": " + humanDuration(o.ns()) + ", over its ";
  const std::int64_t planned = miss.reaction ? chain.reactionNs : chain.ageNs;
  const std::int64_t required = miss.reaction ? chain.maxReactionNs : chain.maxAgeNs;
  if (miss.overPlanned) text += "planned " + humanDuration(planned);
  if (miss.overPlanned && miss.overRequired) text += " and its ";
  if (miss.overRequired) text += (miss.reaction ? "MaxReaction " : "MaxAge ") + humanDuration(required);
  return text;
}

}  // namespace tactus::report
