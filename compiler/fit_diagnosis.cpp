// Why a schedule does not fit (fit_diagnosis.hpp).
#include "fit_diagnosis.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "schedule/bounds.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "?%";
  return std::to_string(static_cast<std::int64_t>(static_cast<__int128>(part) * 100 / whole)) + "%";
}

std::string nameOf(const Schedule& s, RunnableId r) { return quoted(qualifiedName(s, r)); }

// A set of instances (a hyperepoch's, or one frame's) inside a window of time.
struct Scope {
  std::vector<InstanceId> instances;
  std::int64_t startNs = 0;   ///< the window's start: the hyperepoch's or the frame's release
  std::int64_t periodNs = 0;  ///< the window's length
};

// The resource holding the most work of the scope, its work, and its largest contributors
// (`'A.x' 2 x 50ms`, by total work).
struct Load {
  ResourceId resource = kNone;
  std::int64_t workNs = 0;
  std::string contributors;
};

Load busiest(const Schedule& s, const Scope& scope) {
  std::map<ResourceId, std::int64_t> work;
  for (InstanceId i : scope.instances)
    for (ResourceId r : s.instances[i].resources) work[r] += s.instances[i].endNs - s.instances[i].startNs;
  Load best;
  for (const auto& [r, w] : work) {
    // Hardware first at equal work: a core or a GPU is what a user moves runnables between.
    const bool better =
        w > best.workNs || (w == best.workNs && best.resource != kNone && s.resources[r].kind == ResourceKind::kCpu &&
                            s.resources[best.resource].kind != ResourceKind::kCpu);
    if (best.resource == kNone || better) {
      best.resource = r;
      best.workNs = w;
    }
  }
  if (best.resource == kNone) return best;
  std::map<RunnableId, std::pair<std::int64_t, int>> per;  // runnable -> (work, instances)
  for (InstanceId i : scope.instances) {
    const InstanceInfo& in = s.instances[i];
    if (std::find(in.resources.begin(), in.resources.end(), best.resource) == in.resources.end()) continue;
    per[in.runnable].first += in.endNs - in.startNs;
    ++per[in.runnable].second;
  }
  std::vector<std::pair<RunnableId, std::pair<std::int64_t, int>>> sorted(per.begin(), per.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  constexpr std::size_t kShown = 4;
  for (std::size_t k = 0; k < sorted.size() && k < kShown; ++k) {
    const auto& [r, wn] = sorted[k];
    best.contributors += (k == 0 ? "" : ", ") + nameOf(s, r) + " " +
                         (wn.second == 1 ? humanDuration(wn.first)
                                         : std::to_string(wn.second) + " x " + humanDuration(wn.first / wn.second));
  }
  if (sorted.size() > kShown) best.contributors += " and " + std::to_string(sorted.size() - kShown) + " more";
  return best;
}

// The longest chain of dependencies in the scope, from its window's start: releases (frame
// start plus StartTime), WCETs, and cross-SoC transfer times.
struct Path {
  std::int64_t lengthNs = 0;  ///< from the window's start to the chain's end
  std::string text;           ///< `'A.x' f0 10ms -> 'A.y' f0 50ms`
};

Path criticalPath(const Schedule& s, const Scope& scope) {
  const std::size_t n = scope.instances.size();
  std::map<InstanceId, std::uint32_t> local;
  for (std::uint32_t k = 0; k < n; ++k) local[scope.instances[k]] = k;
  std::vector<std::vector<std::uint32_t>> succs(n);
  std::vector<std::uint32_t> indeg(n, 0);
  for (std::uint32_t k = 0; k < n; ++k)
    for (InstanceId d : s.instances[scope.instances[k]].dependencies) {
      auto it = local.find(d);
      if (it == local.end()) continue;
      succs[it->second].push_back(k);
      ++indeg[k];
    }
  const std::vector<std::uint32_t> order = schedule::topologicalOrder(succs, std::move(indeg));
  std::vector<std::int64_t> end(n, 0), release(n, 0);
  std::vector<std::uint32_t> from(n, kNone);
  for (std::uint32_t k : order) {
    const InstanceInfo& in = s.instances[scope.instances[k]];
    const RunnableInfo& r = s.runnables[in.runnable];
    release[k] = static_cast<std::int64_t>(in.frame) * s.epochs[r.epoch].periodNs + r.startTimeNs;
    std::int64_t start = release[k];
    for (InstanceId d : in.dependencies) {
      auto it = local.find(d);
      if (it == local.end()) continue;
      const std::int64_t lag = s.socs.empty() ? 0 : dependencyLatencyNs(s, s.instances[d].runnable, in.runnable);
      if (end[it->second] + lag > start) {
        start = end[it->second] + lag;
        from[k] = it->second;
      }
    }
    end[k] = start + (in.endNs - in.startNs);
  }
  Path p;
  std::uint32_t last = kNone;
  for (std::uint32_t k = 0; k < n; ++k)
    if (last == kNone || end[k] > end[last]) last = k;
  if (last == kNone) return p;
  p.lengthNs = end[last] - scope.startNs;
  std::vector<std::uint32_t> chain;
  for (std::uint32_t k = last; k != kNone; k = from[k]) chain.push_back(k);
  std::reverse(chain.begin(), chain.end());
  auto hop = [&](std::uint32_t k) {
    const InstanceInfo& in = s.instances[scope.instances[k]];
    return nameOf(s, in.runnable) + " f" + std::to_string(in.frame) + " " + humanDuration(in.endNs - in.startNs);
  };
  if (release[chain.front()] > scope.startNs)
    p.text = "released at " + humanDuration(release[chain.front()]) + ", then ";
  constexpr std::size_t kHead = 3, kTail = 4;
  for (std::size_t c = 0; c < chain.size(); ++c) {
    if (chain.size() > kHead + kTail + 1 && c == kHead) {
      p.text += " -> ... " + std::to_string(chain.size() - kHead - kTail) + " more ...";
      c = chain.size() - kTail - 1;
      continue;
    }
    p.text += (c == 0 ? "" : " -> ") + hop(chain[c]);
  }
  return p;
}

std::string loadLine(const Schedule& s, const Load& load, std::int64_t periodNs, const char* period) {
  return std::string("\n  ") + (load.workNs > periodNs ? "overloaded resource: " : "busiest resource: ") +
         quoted(s.resources[load.resource].name) + " has " + humanDuration(load.workNs) + " of work in the " +
         humanDuration(periodNs) + " " + period + " (" + percent(load.workNs, periodNs) + "): " + load.contributors;
}

std::string pathLine(const Path& p, std::int64_t periodNs) {
  return "\n  critical path: " + humanDuration(p.lengthNs) + " (" + percent(p.lengthNs, periodNs) +
         " of the period): " + p.text;
}

}  // namespace

std::string whyOverlength(const Schedule& s, HyperepochId h, std::int64_t lowerBoundNs, bool searched) {
  Scope scope;
  scope.periodNs = s.hyperepochs[h].periodNs;
  for (InstanceId i : s.instances.ids())
    if (s.epochs[s.runnables[s.instances[i].runnable].epoch].hyperepoch == h) scope.instances.push_back(i);
  const Load load = busiest(s, scope);
  if (load.resource == kNone) return {};
  const Path path = criticalPath(s, scope);
  std::string out = loadLine(s, load, scope.periodNs, "period") + pathLine(path, scope.periodNs);
  const std::string resource = quoted(s.resources[load.resource].name);
  if (load.workNs > scope.periodNs) {
    out += "\n  no schedule fits while " + resource +
           " holds more work than the period: shorten WCETs, move runnables to another resource (or request a type, "
           "such as CPU, and let the compiler pick), or lengthen the Period";
  } else if (path.lengthNs > scope.periodNs) {
    out +=
        "\n  no schedule fits while the critical path is longer than the period: shorten the chain (WCETs, "
        "StartTimes, dependencies) or lengthen the Period";
  } else if (lowerBoundNs > scope.periodNs) {
    out += "\n  no schedule fits: every schedule is at least " + humanDuration(lowerBoundNs) +
           " long (the work of runnables sharing resources, with their releases)";
  } else if (!searched) {
    out +=
        "\n  the work fits the period on every resource and along every path: a search may find a schedule "
        "that fits (-t SECONDS)";
  } else {
    out +=
        "\n  the work fits the period on every resource and along every path, but the search found no "
        "schedule that fits: search longer (-t), or leave more room";
  }
  return out;
}

std::string whyFrameIsLate(const Schedule& s, EpochId e, std::uint32_t frame) {
  const EpochInfo& ep = s.epochs[e];
  Scope scope;
  scope.periodNs = ep.periodNs;
  scope.startNs = static_cast<std::int64_t>(frame) * ep.periodNs;
  const std::int64_t boundaryNs = scope.startNs + ep.periodNs;
  for (InstanceId i : s.instances.ids())
    if (s.runnables[s.instances[i].runnable].epoch == e && s.instances[i].frame == frame) scope.instances.push_back(i);
  const Load load = busiest(s, scope);
  if (load.resource == kNone) return {};
  const Path path = criticalPath(s, scope);
  std::string out = loadLine(s, load, scope.periodNs, "epoch period of the frame") + pathLine(path, scope.periodNs);
  // Other epochs' work on the frame's resources within its period: what it waited for.
  std::map<ResourceId, std::int64_t> held;
  std::map<ResourceId, std::map<RunnableId, std::int64_t>> by;
  std::vector<ResourceId> mine;
  for (InstanceId i : scope.instances)
    for (ResourceId r : s.instances[i].resources) mine.push_back(r);
  for (InstanceId i : s.instances.ids()) {
    const InstanceInfo& in = s.instances[i];
    if (s.runnables[in.runnable].epoch == e) continue;
    const std::int64_t overlap = std::min(in.endNs, boundaryNs) - std::max(in.startNs, scope.startNs);
    if (overlap <= 0) continue;
    for (ResourceId r : in.resources)
      if (std::find(mine.begin(), mine.end(), r) != mine.end()) {
        held[r] += overlap;
        by[r][in.runnable] += overlap;
      }
  }
  ResourceId worst = kNone;
  for (const auto& [r, ns] : held)
    if (worst == kNone || ns > held[worst]) worst = r;
  if (worst != kNone) {
    std::vector<std::pair<RunnableId, std::int64_t>> who(by[worst].begin(), by[worst].end());
    std::stable_sort(who.begin(), who.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string names;
    for (std::size_t k = 0; k < who.size() && k < 4; ++k)
      names += (k == 0 ? "" : ", ") + nameOf(s, who[k].first) + " " + humanDuration(who[k].second);
    if (who.size() > 4) names += " and " + std::to_string(who.size() - 4) + " more";
    out += "\n  other epochs hold " + quoted(s.resources[worst].name) + " for " + humanDuration(held[worst]) +
           " of the frame's period (" + humanDuration(scope.startNs) + ".." + humanDuration(boundaryNs) + "): " + names;
  }
  // Under --allow-overlength the hyperepoch may be over its period as a whole: say so, since
  // only each epoch's last frame may run past it.
  Scope hyper;
  hyper.periodNs = s.hyperepochs[ep.hyperepoch].periodNs;
  for (InstanceId i : s.instances.ids())
    if (s.epochs[s.runnables[s.instances[i].runnable].epoch].hyperepoch == ep.hyperepoch) hyper.instances.push_back(i);
  const Load hyperLoad = busiest(s, hyper);
  if (hyperLoad.resource != kNone && hyperLoad.workNs > hyper.periodNs) {
    out += "\n  overloaded resource of hyperepoch " + quoted(s.hyperepochs[ep.hyperepoch].name) + ": " +
           quoted(s.resources[hyperLoad.resource].name) + " has " + humanDuration(hyperLoad.workNs) +
           " of work in the " + humanDuration(hyper.periodNs) + " period (" +
           percent(hyperLoad.workNs, hyper.periodNs) + "): " + hyperLoad.contributors +
           "\n  the hyperepoch holds more work than its period, and --allow-overlength lets only each epoch's last "
           "frame run past a frame boundary: shorten WCETs, move work to other resources, or lengthen the Period";
    return out;
  }
  if (load.workNs > scope.periodNs) {
    out += "\n  no schedule fits while one frame holds " + quoted(s.resources[load.resource].name) +
           " longer than the epoch's period: shorten WCETs, spread the frame's runnables over more resources, or "
           "lengthen the epoch's Period";
  } else if (path.lengthNs > scope.periodNs) {
    out +=
        "\n  no schedule fits while the frame's critical path is longer than the epoch's period: shorten the "
        "chain or lengthen the epoch's Period";
  } else if (worst != kNone) {
    out += "\n  the frame fits its period on its own: the other epochs' work on " + quoted(s.resources[worst].name) +
           " leaves it too little room (move that work to other resources, or search longer with -t)";
  }
  return out;
}

std::string whyItDoesNotFit(const UnfitSchedule& unfit, std::int64_t lowerBoundNs, bool searched) {
  if (unfit.epoch == kNone) return whyOverlength(unfit.schedule, unfit.hyperepoch, lowerBoundNs, searched);
  return whyFrameIsLate(unfit.schedule, unfit.epoch, unfit.frame);
}

}  // namespace tactus::compiler
