// Warnings about a valid graph that most likely says something else than meant (warnings.hpp).
#include "graph/warnings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "tactus/core/text.hpp"

namespace tactus::compiler {
namespace {

// `30 Hz`, `0.5 Hz`: three significant digits.
std::string hertz(double perSecond) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g Hz", perSecond);
  return buf;
}

std::string where(const Graph& g, EpochId e) {
  if (g.sourceFile.empty() || !g.epochLines.contains(e) || g.epochLines[e] <= 0) return {};
  return g.sourceFile + ":" + std::to_string(g.epochLines[e]) + ": ";
}

// The warning for epoch e when its frames leave more than a tenth of the hyperepoch empty.
std::string coverageWarning(const Graph& g, EpochId e) {
  const EpochInfo& ep = g.epochs[e];
  if (!g.hyperepochs.contains(ep.hyperepoch) || ep.periodNs <= 0 || ep.frames == 0) return {};
  const HyperepochInfo& he = g.hyperepochs[ep.hyperepoch];
  const std::int64_t hyperNs = he.periodNs;
  const __int128 covered = static_cast<__int128>(ep.periodNs) * ep.frames;
  if (hyperNs <= 0 || covered * 100 >= static_cast<__int128>(hyperNs) * kMinEpochCoveragePercent) return {};
  const auto coveredNs = static_cast<std::int64_t>(covered);
  const std::string name = he.name + "." + ep.name;
  const double perSecond = 1e9 * ep.frames / static_cast<double>(hyperNs);
  const double meant = 1e9 / static_cast<double>(ep.periodNs);
  std::string msg = where(g, e) + "epoch " + quoted(name) + " covers " + humanDuration(coveredNs) + " of the " +
                    humanDuration(hyperNs) + " period of hyperepoch " + quoted(he.name) + " (Period " +
                    humanDuration(ep.periodNs) + " x " + std::to_string(ep.frames) +
                    (ep.frames == 1 ? " frame, " : " frames, ") +
                    std::to_string(static_cast<int>(covered * 100 / hyperNs)) + "%): it runs ";
  if (ep.frames == 1) {
    msg += "once every " + humanDuration(hyperNs) + " (" + hertz(perSecond) + "), not every " +
           humanDuration(ep.periodNs) + " (" + hertz(meant) + ")";
  } else {
    msg += std::to_string(ep.frames) + " frames every " + humanDuration(hyperNs) + " (" + hertz(perSecond) +
           "), not one every " + humanDuration(ep.periodNs) + " (" + hertz(meant) + ")";
  }
  // The most frames that fit, and whether they fill the hyperepoch.
  const std::int64_t fit = hyperNs / ep.periodNs;
  if (fit > ep.frames &&
      static_cast<__int128>(fit) * ep.periodNs * 100 >= static_cast<__int128>(hyperNs) * kMinEpochCoveragePercent) {
    msg += "; write `Frames: " + std::to_string(fit) + "` to fill the hyperepoch (" + std::to_string(fit) + " x " +
           humanDuration(ep.periodNs) + " = " + humanDuration(fit * ep.periodNs) + ")";
  } else {
    // No whole number of frames of this period fills it: the nearest period that divides it.
    const auto frames =
        std::max<std::int64_t>(1, std::llround(static_cast<double>(hyperNs) / static_cast<double>(ep.periodNs)));
    msg += "; no Frames value fills the hyperepoch with frames of " + humanDuration(ep.periodNs) +
           ": a Period that divides " + humanDuration(hyperNs) + " does (" + humanDuration(hyperNs / frames) +
           " with `Frames: " + std::to_string(frames) + "`)";
  }
  return msg;
}

}  // namespace

std::vector<std::string> graphWarnings(const Graph& g) {
  std::vector<std::string> out;
  for (EpochId e : g.epochs.ids()) {
    std::string w = coverageWarning(g, e);
    if (!w.empty()) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace tactus::compiler
