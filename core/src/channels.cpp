// The channel plan and chain bounds of a planned schedule (channels.hpp).
#include "tactus/core/channels.hpp"

#include <algorithm>
#include <map>
#include <new>
#include <utility>

#include "tactus/core/text.hpp"

namespace tactus {
namespace {

Error invalid(const std::string& what) { return Error{ErrorCode::kValidation, what}; }

// Whether runnable r can hold a channel end or a chain place: an ordinary runnable, not a
// round-robin group or member (whose runnable changes by frame).
bool plainRunnable(const RunnableInfo& r) { return r.kind != RunnableKind::kAliasGroup && r.aliasGroup == kNone; }

HyperepochId hyperepochOf(const Schedule& s, RunnableId r) { return s.epochs[s.runnables[r].epoch].hyperepoch; }

// The instances of a runnable by frame; an error when one is missing.
Result<std::vector<InstanceId>> runsOf(const Schedule& s, const IdVector<RunnableId, std::vector<InstanceId>>& byFrame,
                                       RunnableId r, const std::string& who) {
  const std::uint32_t frames = std::max<std::uint32_t>(1, s.epochs[s.runnables[r].epoch].frames);
  const std::vector<InstanceId>& runs = byFrame[r];
  if (runs.size() < frames || std::any_of(runs.begin(), runs.begin() + frames, [](InstanceId i) { return i == kNone; }))
    return invalid(who + ": runnable " + quoted(qualifiedName(s, r)) + " is not planned in every frame");
  return std::vector<InstanceId>(runs.begin(), runs.begin() + frames);
}

// A reader run and the version it reads: the writer frame, of its own iteration or (`previous`)
// of the one before.
struct Read {
  InstanceId instance;
  std::uint32_t version;  // writer frame
  bool previous;
};

// Each reader run's version: the latest writer run (`w`, in frame order) ending no later than its
// start, in its own iteration or else (the wrap) in the previous one.
Result<std::vector<Read>> readVersions(const Schedule& s, const IdVector<RunnableId, std::vector<InstanceId>>& byFrame,
                                       const ChannelInfo& ch, const std::vector<InstanceId>& w,
                                       const std::string& who) {
  const HyperepochId h = hyperepochOf(s, ch.writer);
  const std::int64_t period = s.hyperepochs[h].periodNs;
  const auto n = static_cast<std::uint32_t>(w.size());
  std::vector<Read> reads;
  // The writer's runs end in frame order (each frame ends before the next is released): the
  // latest run ending no later than t is found by a binary search.
  std::vector<std::int64_t> ends(n);
  for (std::uint32_t v = 0; v < n; ++v) ends[v] = s.instances[w[v]].endNs;
  auto latest = [&](std::int64_t t) -> std::uint32_t {
    const auto after = std::upper_bound(ends.begin(), ends.end(), t);
    return after == ends.begin() ? std::uint32_t{kNone} : static_cast<std::uint32_t>(after - ends.begin() - 1);
  };
  for (std::size_t k = 0; k < ch.readers.size(); ++k) {
    const RunnableId r = ch.readers[k];
    if (!s.runnables.contains(r)) return invalid(who + ": a reader is not a runnable of the schedule");
    if (k > 0 && !(ch.readers[k - 1] < r)) return invalid(who + ": its readers are not ascending and distinct");
    if (r == ch.writer) return invalid(who + ": runnable " + quoted(qualifiedName(s, r)) + " reads its own channel");
    if (!plainRunnable(s.runnables[r]))
      return invalid(who + ": reader " + quoted(qualifiedName(s, r)) +
                     " is round robin (a channel end runs the same runnable in every frame)");
    if (hyperepochOf(s, r) != h)
      return invalid(who + ": reader " + quoted(qualifiedName(s, r)) + " runs in hyperepoch " +
                     quoted(s.hyperepochs[hyperepochOf(s, r)].name) + ", writer " +
                     quoted(qualifiedName(s, ch.writer)) + " in " + quoted(s.hyperepochs[h].name) +
                     " (a channel stays within one hyperepoch)");
    auto readerRuns = runsOf(s, byFrame, r, who);
    if (!readerRuns) return readerRuns.error();
    for (const InstanceId i : *readerRuns) {
      const std::int64_t t = s.instances[i].startNs;
      Read read{i, latest(t), false};
      if (read.version == kNone) {
        read.version = latest(t + period);
        read.previous = true;
      }
      if (read.version == kNone)
        return invalid(who + ": reader " + quoted(qualifiedName(s, r)) + " frame " +
                       std::to_string(s.instances[i].frame) +
                       " starts before any writer run ends, even of the previous iteration (the hyperepoch is "
                       "longer than its period)");
      reads.push_back(read);
    }
  }
  return reads;
}

// The smallest ring of buffers that holds the versions of the writer runs `w` read by `reads`.
Result<std::uint32_t> ringDepth(const Schedule& s, const std::vector<InstanceId>& w, const std::vector<Read>& reads,
                                std::int64_t period, const std::string& who) {
  const auto n = static_cast<std::uint32_t>(w.size());
  // How long each version stays live: from its writer run's start to the end of its last reader
  // (a reader of the next iteration counts a period later).
  std::vector<std::int64_t> liveEnd(n);
  for (std::uint32_t v = 0; v < n; ++v) liveEnd[v] = s.instances[w[v]].endNs;
  for (const Read& r : reads)
    liveEnd[r.version] = std::max(liveEnd[r.version], s.instances[r.instance].endNs + (r.previous ? period : 0));
  // Version g (= iteration * n + frame) fills buffer g mod depth. The ring is deep enough when
  // the version a writer run overwrites (g - depth) is no longer live at that run's start.
  auto fits = [&](std::uint32_t depth) {
    for (std::uint32_t k = 0; k < n; ++k) {
      std::int64_t j = static_cast<std::int64_t>(k) - depth;
      std::int64_t back = 0;  // iterations back
      while (j < 0) {
        j += n;
        ++back;
      }
      if (liveEnd[static_cast<std::size_t>(j)] - back * period > s.instances[w[k]].startNs) return false;
    }
    return true;
  };
  // A ring that fits stays fitting one buffer deeper (the version it would then overwrite is
  // older than one that was already dead before an earlier writer run): the smallest is found
  // by a binary search.
  const auto most = static_cast<std::uint32_t>(4ULL * n + 4);  // in a plan that fits, 2n + 1 always does
  if (!fits(most))
    return invalid(who + ": no ring of up to " + std::to_string(most) +
                   " buffers holds its versions (the hyperepoch is longer than its period)");
  std::uint32_t depth = most;
  for (std::uint32_t lo = 1; lo < depth;) {
    const std::uint32_t mid = lo + (depth - lo) / 2;
    if (fits(mid)) depth = mid;
    else lo = mid + 1;
  }
  return depth;
}

// One channel's plan; writes and reads are appended.
Result<void> planOne(const Schedule& s, const IdVector<RunnableId, std::vector<InstanceId>>& byFrame, std::uint32_t c,
                     ChannelPlan& out) {
  const ChannelInfo& ch = s.channels[c];
  const std::string who = "channel " + quoted(ch.name);
  if (!s.runnables.contains(ch.writer)) return invalid(who + ": its writer is not a runnable of the schedule");
  if (!plainRunnable(s.runnables[ch.writer]))
    return invalid(who + ": writer " + quoted(qualifiedName(s, ch.writer)) +
                   " is round robin (a channel end runs the same runnable in every frame)");
  const HyperepochId h = hyperepochOf(s, ch.writer);
  const std::int64_t period = s.hyperepochs[h].periodNs;
  auto writerRuns = runsOf(s, byFrame, ch.writer, who);
  if (!writerRuns) return writerRuns.error();
  const std::vector<InstanceId>& w = *writerRuns;
  const auto n = static_cast<std::uint32_t>(w.size());
  auto readVersionsOf = readVersions(s, byFrame, ch, w, who);
  if (!readVersionsOf) return readVersionsOf.error();
  std::vector<Read>& reads = *readVersionsOf;
  auto ring = ringDepth(s, w, reads, period, who);
  if (!ring) return ring.error();
  const std::uint32_t depth = *ring;
  out.writes.push_back(n);
  out.depth.push_back(depth);

  // The reader runs of each version: [0] of the same iteration, [1] of the next.
  std::vector<std::vector<InstanceId>> readersOf[2] = {std::vector<std::vector<InstanceId>>(n),
                                                       std::vector<std::vector<InstanceId>>(n)};
  for (const Read& r : reads) readersOf[r.previous ? 1 : 0][r.version].push_back(r.instance);
  // Writer runs: buffer, and the reader runs of the same iteration that read the version it
  // overwrites (of this iteration, or of the previous one read early in this one).
  for (std::uint32_t k = 0; k < n; ++k) {
    ChannelWrite cw;
    cw.channel = c;
    cw.instance = w[k];
    cw.slot = k % depth;
    std::int64_t j = static_cast<std::int64_t>(k) - depth;
    std::int64_t back = 0;
    while (j < 0) {
      j += n;
      ++back;
    }
    if (back <= 1) cw.waits = readersOf[static_cast<std::size_t>(back)][static_cast<std::size_t>(j)];
    std::sort(cw.waits.begin(), cw.waits.end());
    out.channelWrites.push_back(std::move(cw));
  }
  std::sort(reads.begin(), reads.end(), [](const Read& a, const Read& b) { return a.instance < b.instance; });
  for (const Read& r : reads) out.channelReads.push_back({c, r.instance, w[r.version], r.previous, r.version % depth});
  std::sort(out.channelWrites.end() - n, out.channelWrites.end(),
            [](const ChannelWrite& a, const ChannelWrite& b) { return a.instance < b.instance; });
  return {};
}

}  // namespace

Result<ChannelPlan> computeChannelPlan(const Schedule& s) {
  try {
    ChannelPlan plan;
    if (s.channels.empty()) return plan;
    const auto byFrame = instancesByRunnableFrame(s);
    for (std::uint32_t c = 0; c < s.channels.size(); ++c) {
      auto one = planOne(s, byFrame, c, plan);
      if (!one) return one.error();
    }
    return plan;
  } catch (const std::bad_alloc&) {
    return invalid("out of memory planning the channels");
  }
}

Result<void> planChannels(Schedule& s) {
  auto plan = computeChannelPlan(s);
  if (!plan) return plan.error();
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    s.channels[c].writes = plan->writes[c];
    s.channels[c].depth = plan->depth[c];
  }
  s.channelWrites = std::move(plan->channelWrites);
  s.channelReads = std::move(plan->channelReads);
  return {};
}

Result<ChainMap> ChainMap::make(const Schedule& s, const ChainInfo& chain) {
  ChainMap map(s, chain);
  if (auto ok = map.resolve(); !ok) return ok.error();
  return map;
}

Result<void> ChainMap::resolve() {
  const Schedule& s = *s_;
  const std::string who = "chain " + quoted(chain_->name);
  const auto& rs = chain_->runnables;
  if (rs.size() < 2) return invalid(who + ": a chain names two runnables or more");
  for (const RunnableId r : rs) {
    if (!s.runnables.contains(r)) return invalid(who + ": a runnable is not one of the schedule");
    if (!plainRunnable(s.runnables[r]))
      return invalid(who + ": runnable " + quoted(qualifiedName(s, r)) +
                     " is round robin (a chain follows one runnable's runs)");
  }
  const HyperepochId h = hyperepochOf(s, rs[0]);
  for (const RunnableId r : rs)
    if (hyperepochOf(s, r) != h)
      return invalid(who + ": runnable " + quoted(qualifiedName(s, r)) + " runs in hyperepoch " +
                     quoted(s.hyperepochs[hyperepochOf(s, r)].name) + ", the chain's source in " +
                     quoted(s.hyperepochs[h].name) + " (a chain stays within one hyperepoch)");
  const auto all = instancesByRunnableFrame(s);
  for (const RunnableId r : rs) {
    auto runs = runsOf(s, all, r, who);
    if (!runs) return runs.error();
    byFrame_.push_back(*runs);
    std::vector<InstanceId> sorted = std::move(*runs);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](InstanceId a, InstanceId b) { return s.instances[a].startNs < s.instances[b].startNs; });
    byStart_.push_back(std::move(sorted));
  }
  for (std::size_t k = 0; k + 1 < rs.size(); ++k) {
    const RunnableInfo& a = s.runnables[rs[k]];
    const RunnableInfo& b = s.runnables[rs[k + 1]];
    const bool dependency =
        a.epoch == b.epoch && (std::find(b.dependencies.begin(), b.dependencies.end(), rs[k]) != b.dependencies.end() ||
                               a.submits == rs[k + 1]);
    std::uint32_t channel = kNone;
    if (!dependency)
      for (std::uint32_t c = 0; c < s.channels.size() && channel == kNone; ++c)
        if (s.channels[c].writer == rs[k] && std::find(s.channels[c].readers.begin(), s.channels[c].readers.end(),
                                                       rs[k + 1]) != s.channels[c].readers.end())
          channel = c;
    if (!dependency && channel == kNone)
      return invalid(who + ": " + quoted(qualifiedName(s, rs[k + 1])) + " neither depends on " +
                     quoted(qualifiedName(s, rs[k])) + " nor reads a channel it writes");
    links_.push_back(dependency ? ChainLink::kDependency : ChainLink::kChannel);
    linkChannel_.push_back(channel);
  }
  // Per channel hop: the version each reader run reads, by frame and in start order.
  std::map<std::pair<std::uint32_t, InstanceId>, const ChannelRead*> readOf;
  for (const ChannelRead& read : s.channelReads) readOf[{read.channel, read.instance}] = &read;
  readers_.resize(links_.size());
  for (std::size_t k = 0; k < links_.size(); ++k) {
    if (links_[k] != ChainLink::kChannel) continue;
    const auto n = static_cast<std::int64_t>(s.channels[linkChannel_[k]].writes);
    ReaderRuns& readers = readers_[k];
    readers.byFrame.resize(byFrame_[k + 1].size());
    for (const InstanceId r : byStart_[k + 1]) {
      const auto read = readOf.find({linkChannel_[k], r});
      if (read == readOf.end())
        return invalid(who + ": the channel plan has no version for " + quoted(qualifiedName(s, rs[k + 1])) +
                       " frame " + std::to_string(s.instances[r].frame));
      readers.runs.push_back(r);
      readers.offsets.push_back((read->second->previousIteration ? -n : 0) + s.instances[read->second->writer].frame);
      readers.byFrame[s.instances[r].frame] = {read->second->writer, read->second->previousIteration};
    }
  }
  return {};
}

void ChainMap::dataPath(ChainRun last, std::vector<ChainRun>& path) const {
  const std::size_t n = byFrame_.size();
  path.resize(n);
  path.back() = last;
  for (std::size_t k = n - 1; k-- > 0;) {
    const ChainRun next = path[k + 1];
    const std::uint32_t frame = s_->instances[next.instance].frame;
    if (links_[k] == ChainLink::kDependency) {
      path[k] = {byFrame_[k][frame], next.iteration};
    } else {
      const Read& read = readers_[k].byFrame[frame];
      path[k] = {read.writer, next.iteration - (read.previous ? 1 : 0)};
    }
  }
}

Result<void> ChainMap::reactionPath(ChainRun source, std::vector<ChainRun>& path) const {
  const Schedule& s = *s_;
  path.resize(byFrame_.size());
  path.front() = source;
  for (std::size_t k = 0; k + 1 < path.size(); ++k) {
    const ChainRun prev = path[k];
    if (links_[k] == ChainLink::kDependency) {
      path[k + 1] = {byFrame_[k + 1][s.instances[prev.instance].frame], prev.iteration};
      continue;
    }
    const auto n = static_cast<std::int64_t>(s.channels[linkChannel_[k]].writes);
    const std::int64_t version = prev.iteration * n + s.instances[prev.instance].frame;
    // The first reader run, in time order from the writer run's iteration on, whose version is
    // this one or newer (within two iterations every reader run reads a newer one). Along a
    // runnable's runs in start order the versions never decrease: a binary search per iteration.
    const ReaderRuns& readers = readers_[k];
    bool found = false;
    for (std::int64_t it = prev.iteration; it <= prev.iteration + 2 && !found; ++it) {
      const auto at = std::lower_bound(readers.offsets.begin(), readers.offsets.end(), version - it * n);
      if (at == readers.offsets.end()) continue;
      path[k + 1] = {readers.runs[static_cast<std::size_t>(at - readers.offsets.begin())], it};
      found = true;
    }
    if (!found)
      return invalid("chain " + quoted(chain_->name) + ": no run of " +
                     quoted(qualifiedName(s, chain_->runnables[k + 1])) + " reads the version of " +
                     quoted(qualifiedName(s, chain_->runnables[k])) + " frame " +
                     std::to_string(s.instances[prev.instance].frame) + " or a newer one");
  }
  return {};
}

namespace {

// The planned bounds: the chain's paths over the plan's times, iteration 0 and its neighbours.
class PlannedChain {
 public:
  PlannedChain(const Schedule& s, const ChainInfo& chain, const ChainMap& map)
      : s_(s), chain_(chain), map_(map), period_(s.hyperepochs[hyperepochOf(s, chain.runnables[0])].periodNs) {}

  Result<ChainBounds> run() {
    out_.links = map_.links();
    out_.linkChannel = map_.linkChannels();
    std::vector<ChainRun> path;
    // Age: from every run of the last runnable, back to the source run whose data it decides on.
    for (const InstanceId last : map_.runs(chain_.runnables.size() - 1)) {
      map_.dataPath({last, 0}, path);
      const std::int64_t a = end(path.back()) - release(path.front());
      if (out_.ageCostliest == kNone || a > out_.ageNs) {
        out_.ageNs = a;
        std::tie(out_.ageCostliest, out_.ageCostliestNs) = costliest(path);
      }
    }
    // Reaction: from every run of the source, forwards to the first last-runnable run that sees it.
    for (const InstanceId first : map_.runs(0)) {
      if (auto ok = map_.reactionPath({first, 0}, path); !ok) return ok.error();
      const std::int64_t r = end(path.back()) - release(path.front());
      if (out_.reactionCostliest == kNone || r > out_.reactionNs) {
        out_.reactionNs = r;
        std::tie(out_.reactionCostliest, out_.reactionCostliestNs) = costliest(path);
      }
    }
    return out_;
  }

 private:
  std::int64_t end(ChainRun r) const { return s_.instances[r.instance].endNs + r.iteration * period_; }
  // The release of the run's frame.
  std::int64_t release(ChainRun r) const {
    const InstanceInfo& in = s_.instances[r.instance];
    return static_cast<std::int64_t>(in.frame) * s_.epochs[s_.runnables[in.runnable].epoch].periodNs +
           r.iteration * period_;
  }
  // The runnable of a path that costs most: the time from the end of the run before it (the
  // source: from its release) to its own end.
  std::pair<RunnableId, std::int64_t> costliest(const std::vector<ChainRun>& path) const {
    std::pair<RunnableId, std::int64_t> best{kNone, -1};
    for (std::size_t k = 0; k < path.size(); ++k) {
      const std::int64_t cost = end(path[k]) - (k == 0 ? release(path[0]) : end(path[k - 1]));
      if (cost > best.second) best = {chain_.runnables[k], cost};
    }
    return best;
  }

  const Schedule& s_;
  const ChainInfo& chain_;
  const ChainMap& map_;
  std::int64_t period_;
  ChainBounds out_;
};

}  // namespace

Result<ChainBounds> computeChainBounds(const Schedule& s, const ChainInfo& chain) {
  try {
    auto map = ChainMap::make(s, chain);
    if (!map) return map.error();
    return PlannedChain(s, chain, *map).run();
  } catch (const std::bad_alloc&) {
    return invalid("out of memory computing the bounds of chain " + quoted(chain.name));
  }
}

std::vector<std::string> channelErrors(const Schedule& s) {
  std::vector<std::string> errors;
  if (s.channels.empty() && s.chains.empty() && s.channelWrites.empty() && s.channelReads.empty()) return errors;
  auto plan = computeChannelPlan(s);
  if (!plan) {
    errors.push_back(plan.error().message);
    return errors;
  }
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    const ChannelInfo& ch = s.channels[c];
    if (ch.sizeBytes == 0) errors.push_back("channel " + quoted(ch.name) + " has size 0");
    if (ch.writes != plan->writes[c] || ch.depth != plan->depth[c])
      errors.push_back("channel " + quoted(ch.name) + ": the file gives " + std::to_string(ch.writes) +
                       " writes per iteration and a ring of " + std::to_string(ch.depth) + ", the plan " +
                       std::to_string(plan->writes[c]) + " and " + std::to_string(plan->depth[c]));
  }
  auto channelName = [&](std::uint32_t c) {
    return c < s.channels.size() ? quoted(s.channels[c].name) : "#" + std::to_string(c);
  };
  auto who = [&](InstanceId i) {
    if (!s.instances.contains(i)) return "instance " + std::to_string(index(i));
    return quoted(qualifiedName(s, s.instances[i].runnable)) + " frame " + std::to_string(s.instances[i].frame);
  };
  const std::vector<ChannelWrite>& cw = plan->channelWrites;
  if (s.channelWrites.size() != cw.size())
    errors.push_back("the file has " + std::to_string(s.channelWrites.size()) + " channel writer runs, the plan " +
                     std::to_string(cw.size()));
  for (std::size_t k = 0; k < std::min(cw.size(), s.channelWrites.size()); ++k) {
    const ChannelWrite& a = s.channelWrites[k];
    const ChannelWrite& b = cw[k];
    if (a.channel != b.channel || a.instance != b.instance || a.slot != b.slot || a.waits != b.waits) {
      errors.push_back("channel " + channelName(b.channel) + ": writer run " + who(b.instance) +
                       " is inconsistent with the plan (the plan gives buffer " + std::to_string(b.slot) + " and " +
                       std::to_string(b.waits.size()) + " reader runs to wait for)");
      break;
    }
  }
  const std::vector<ChannelRead>& cr = plan->channelReads;
  if (s.channelReads.size() != cr.size())
    errors.push_back("the file has " + std::to_string(s.channelReads.size()) + " channel reader runs, the plan " +
                     std::to_string(cr.size()));
  for (std::size_t k = 0; k < std::min(cr.size(), s.channelReads.size()); ++k) {
    const ChannelRead& a = s.channelReads[k];
    const ChannelRead& b = cr[k];
    if (a.channel != b.channel || a.instance != b.instance || a.writer != b.writer ||
        a.previousIteration != b.previousIteration || a.slot != b.slot) {
      errors.push_back("channel " + channelName(b.channel) + ": reader run " + who(b.instance) +
                       " is mapped inconsistently with the plan (the plan gives the version of " + who(b.writer) +
                       (b.previousIteration ? " of the previous iteration" : "") + ", buffer " +
                       std::to_string(b.slot) + ")");
      break;
    }
  }
  if (!errors.empty()) return errors;
  for (const ChainInfo& chain : s.chains) {
    auto bounds = computeChainBounds(s, chain);
    if (!bounds) {
      errors.push_back(bounds.error().message);
      continue;
    }
    const std::int64_t allowance = chainAllowanceNs(chain);
    if (chain.reactionNs != bounds->reactionNs + allowance || chain.ageNs != bounds->ageNs + allowance)
      errors.push_back("chain " + quoted(chain.name) + ": the file states a reaction of " +
                       std::to_string(chain.reactionNs) + " ns and an age of " + std::to_string(chain.ageNs) +
                       " ns, the plan gives " + std::to_string(bounds->reactionNs + allowance) + " and " +
                       std::to_string(bounds->ageNs + allowance) + " (allowance included)");
    if (chain.maxReactionNs != kNoDuration && chain.reactionNs > chain.maxReactionNs)
      errors.push_back("chain " + quoted(chain.name) + ": reaction " + humanDuration(chain.reactionNs) +
                       " exceeds its MaxReaction " + humanDuration(chain.maxReactionNs));
    if (chain.maxAgeNs != kNoDuration && chain.ageNs > chain.maxAgeNs)
      errors.push_back("chain " + quoted(chain.name) + ": data age " + humanDuration(chain.ageNs) +
                       " exceeds its MaxAge " + humanDuration(chain.maxAgeNs));
  }
  return errors;
}

}  // namespace tactus
