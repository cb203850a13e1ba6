// Unit tests of chain-guided scheduling's StartTime search (chain_search.hpp): the planner
// that reads tracks of an older run than it could, met by a StartTime the schedule file carries;
// a bound no StartTime meets, refused as impossible; and an oracle over random graphs whose
// chains' StartTimes decide their bounds: an exhaustive search of the readers' StartTimes on the
// graphs' grain (1 ms) says whether a schedule meets the chains, and the compiler must meet every
// chain that one does and refuse, as impossible, every one that none does.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "chain_search.hpp"
#include "channel_analysis.hpp"
#include "compile.hpp"
#include "graph_parser.hpp"
#include "scheduler.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using namespace tactus::compiler;

namespace {

constexpr std::int64_t kMs = 1000000;

// Tracks written every 20 ms (6 ms each), a planner every 60 ms (2.2 ms) reading them.
std::string planner(const std::string& requirement, const std::string& trackStart = "0") {
  return "Version: 3.0.0\n"
         "Drive:\n"
         "  Resources:\n"
         "    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n"
         "    - Main:\n"
         "        Period: 60ms\n"
         "        Epochs:\n"
         "          - Track: {Period: 20ms, Frames: 3}\n"
         "          - Plan: {Period: 60ms}\n"
         "  Clients:\n"
         "    - Tracker:\n"
         "        Epochs:\n"
         "          - Main.Track:\n"
         "              Runnables:\n"
         "                - Track: {WCET: 6ms, StartTime: " +
         trackStart +
         ", Resources: [CPU0]}\n"
         "    - Planner:\n"
         "        Epochs:\n"
         "          - Main.Plan:\n"
         "              Runnables:\n"
         "                - Plan: {WCET: 2.2ms, Resources: [CPU1]}\n"
         "  Channels:\n"
         "    - Tracks: {Writer: Tracker.Track, Readers: [Planner.Plan], Size: 4096}\n"
         "  Chains:\n"
         "    - TrackToPlan:\n"
         "        Runnables: [Tracker.Track, Planner.Plan]\n" +
         requirement;
}

// What compile.cpp does with a graph's chains: the first schedule, chain-guided scheduling when a
// chain is over, then the analysis that refuses a chain still over.
struct ChainOutcome {
  bool met = false;
  bool impossible = false;  // the note, or the WCET floor, says no schedule meets it
  std::string message;
  ChainSearchNote note;
  Schedule schedule;
};

ChainOutcome compileChains(const Graph& g, std::int64_t allowanceNs) {
  ChainOutcome out;
  auto first = scheduleGraph(g, ScheduleOptions{});
  REQUIRE(first.has_value());
  out.schedule = std::move(*first);
  if (chainsToShorten(g, out.schedule, allowanceNs, false))
    out.schedule = chainGuidedSchedule(g, ScheduleOptions{}, allowanceNs, false, std::move(out.schedule), out.note);
  auto analysed = analyseChannels(g, out.schedule, allowanceNs, out.note.impossible);
  out.met = analysed.has_value();
  if (!analysed) {
    REQUIRE(analysed.error().code == ErrorCode::kInfeasible);
    out.message = analysed.error().message;
    out.impossible = out.note.impossible || out.message.find("which no schedule can meet") != std::string::npos;
  }
  if (out.met) {
    const VerifyReport v = verifySchedule(out.schedule);
    INFO((v.errors.empty() ? std::string() : v.errors.front()));
    CHECK(v.ok());
  }
  return out;
}

RunnableId runnableNamed(const Graph& g, const std::string& name) {
  for (RunnableId r : g.runnables.ids())
    if (g.runnables[r].name == name) return r;
  FAIL("no runnable " << name);
  return kNone;
}

}  // namespace

TEST_CASE("a planner reading an older track run than it could meets its MaxAge by a StartTime", "[chains]") {
  auto g = parseGraph(planner("        MaxAge: 12ms\n"), "g.yaml");
  REQUIRE(g.has_value());
  // The first schedule: Plan at 0 reads the last track of the previous iteration (released 20 ms
  // before this one): 22.2 ms + 200 us allowance.
  auto first = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(first.has_value());
  REQUIRE_FALSE(analyseChannels(*g, *first, 100000).has_value());
  CHECK(first->chains[0].ageNs == 22 * kMs + 400000);

  const ChainOutcome c = compileChains(*g, 100000);
  INFO(c.message);
  REQUIRE(c.met);
  // Plan starts at the end of the first track run and reads it: 6 ms + 2.2 ms + allowance.
  const RunnableId plan = runnableNamed(*g, "Plan");
  CHECK(c.schedule.runnables[plan].startTimeNs == 6 * kMs);
  CHECK(c.schedule.chains[0].ageNs == 8 * kMs + 400000);
  CHECK_THAT(c.note.text(), Catch::Contains("readers' StartTimes: 1 schedule tried, kept StartTime 6ms on "
                                            "'Planner.Plan'"));
  CHECK_FALSE(c.note.impossible);

  // The StartTime reaches the runtime the way the graph's does: the schedule file's start_ns.
  const std::string path = "/tmp/tactus_chain_start_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << planner("        MaxAge: 12ms\n");
  std::ostringstream o, e;
  CHECK(runCompileCommand({"-q", "-i", path, "-o", path + ".tsched"}, o, e) == 0);
  CHECK_THAT(o.str() + e.str(), Catch::Contains("kept StartTime 6ms on 'Planner.Plan'"));
  auto file = loadScheduleFile(path + ".tsched");
  REQUIRE(file.has_value());
  bool found = false;
  for (const RunnableInfo& r : file->runnables)
    if (r.name == "Plan") found = r.startTimeNs == 6 * kMs;
  CHECK(found);
  std::remove(path.c_str());
  std::remove((path + ".tsched").c_str());
}

TEST_CASE("a planner's MaxReaction is met by a StartTime too", "[chains]") {
  auto g = parseGraph(planner("        MaxReaction: 50ms\n"), "g.yaml");
  REQUIRE(g.has_value());
  const ChainOutcome c = compileChains(*g, 100000);
  INFO(c.message);
  REQUIRE(c.met);
  CHECK(c.schedule.chains[0].reactionNs <= 50 * kMs);
}

TEST_CASE("a chain bound no StartTime of its reader meets is refused as impossible", "[chains]") {
  // Tracks start 1 ms after their release: the freshest plan ends 9.2 ms after a track's release,
  // above a MaxAge of 9 ms although the WCETs alone (8.2 ms + allowance) are below it.
  auto g = parseGraph(planner("        MaxAge: 9ms\n", "1ms"), "g.yaml");
  REQUIRE(g.has_value());
  const ChainOutcome c = compileChains(*g, 100000);
  REQUIRE_FALSE(c.met);
  CHECK(c.note.impossible);
  CHECK_THAT(c.note.text(), Catch::Contains("no schedule meets the chains' requirements"));

  const std::string path = "/tmp/tactus_chain_impossible_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << planner("        MaxAge: 9ms\n", "1ms");
  std::ostringstream o, e;
  CHECK(runCompileCommand({"-q", "-i", path, "-o", path + ".tsched"}, o, e) == 1);
  CHECK_THAT(e.str(), Catch::Contains("chain 'TrackToPlan'"));
  CHECK_THAT(e.str(), Catch::Contains("exceeds its MaxAge 9ms, which no schedule can meet (chain-guided scheduling "
                                      "tried every StartTime of the chains' readers"));
  CHECK_THAT(e.str(), !Catch::Contains("hint:"));
  CHECK_THAT(e.str(), Catch::Contains("no schedule meets the chains' requirements"));
  std::remove(path.c_str());
}

TEST_CASE("where other work shares a chain's cores the search claims no impossibility it has not proven", "[chains]") {
  // The same impossible MaxAge, with Log sharing Plan's core: StartTimes no longer decide the plan
  // (the order on CPU1 does too), so the refusal does not call the bound impossible.
  std::string yaml = planner("        MaxAge: 9ms\n", "1ms");
  const std::string plan = "                - Plan: {WCET: 2.2ms, Resources: [CPU1]}\n";
  yaml.replace(yaml.find(plan), plan.size(), plan + "                - Log: {WCET: 1ms, Resources: [CPU1]}\n");
  auto g = parseGraph(yaml, "g.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  const ChainOutcome c = compileChains(*g, 100000);
  REQUIRE_FALSE(c.met);
  CHECK_FALSE(c.note.impossible);
  CHECK(c.note.startTimeSchedules > 0);
  CHECK_THAT(c.note.text(), !Catch::Contains("no schedule meets"));
}

namespace {

// A random graph of the oracle: Src (Fast epoch) -> Mid (a dependency) -> channel -> Rdr (Slow
// epoch); variant 1 adds Fin depending on Rdr, variant 2 Fin reading Rdr over a channel in a third
// epoch. Every runnable on its own core (unless Busy, off the chain, shares Rdr's), every duration
// a whole number of milliseconds.
struct OracleGraph {
  std::int64_t fastMs, slowMs, thirdMs, srcStartMs, srcMs, midMs, rdrMs, finMs;
  std::int64_t busyMs, busyStartMs;  // Busy on CPU2 in the Slow epoch (0: none)
  int variant;
  std::vector<std::string> chain;

  std::string yaml(std::int64_t rdrStartMs, std::int64_t finStartMs, const std::string& requirement) const {
    auto ms = [](std::int64_t v) { return std::to_string(v) + "ms"; };
    std::string y =
        "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0, CPU1, CPU2, CPU3]\n  Hyperepochs:\n"
        "    - H:\n        Period: 60ms\n        Epochs:\n";
    y += "          - Fast: {Period: " + ms(fastMs) + ", Frames: " + std::to_string(60 / fastMs) + "}\n";
    y += "          - Slow: {Period: " + ms(slowMs) + ", Frames: " + std::to_string(60 / slowMs) + "}\n";
    if (variant == 2)
      y += "          - Third: {Period: " + ms(thirdMs) + ", Frames: " + std::to_string(60 / thirdMs) + "}\n";
    y += "  Clients:\n    - C:\n        Epochs:\n          - H.Fast:\n              Runnables:\n";
    y += "                - Src: {WCET: " + ms(srcMs) + ", StartTime: " + ms(srcStartMs) + ", Resources: [CPU0]}\n";
    y += "                - Mid: {WCET: " + ms(midMs) + ", Resources: [CPU1], Dependencies: [C.Src]}\n";
    y += "          - H.Slow:\n              Runnables:\n";
    y += "                - Rdr: {WCET: " + ms(rdrMs) + ", StartTime: " + ms(rdrStartMs) + ", Resources: [CPU2]}\n";
    if (busyMs > 0)
      y +=
          "                - Busy: {WCET: " + ms(busyMs) + ", StartTime: " + ms(busyStartMs) + ", Resources: [CPU2]}\n";
    if (variant == 1)
      y += "                - Fin: {WCET: " + ms(finMs) + ", Resources: [CPU3], Dependencies: [C.Rdr]}\n";
    if (variant == 2)
      y += "          - H.Third:\n              Runnables:\n                - Fin: {WCET: " + ms(finMs) +
           ", StartTime: " + ms(finStartMs) + ", Resources: [CPU3]}\n";
    y += "  Channels:\n    - D: {Writer: C.Mid, Readers: [C.Rdr], Size: 64}\n";
    if (variant == 2) y += "    - E: {Writer: C.Rdr, Readers: [C.Fin], Size: 64}\n";
    y += "  Chains:\n    - K:\n        Runnables: [";
    for (std::size_t k = 0; k < chain.size(); ++k) y += (k ? ", C." : "C.") + chain[k];
    return y + "]\n" + requirement;
  }
};

OracleGraph randomGraph(std::mt19937& rng, bool busy) {
  auto pick = [&](std::vector<std::int64_t> v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  auto in = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  OracleGraph o{};
  o.fastMs = pick({10, 15, 20, 30});
  o.slowMs = pick({20, 30, 60});
  o.thirdMs = pick({20, 30, 60});
  o.srcStartMs = in(0, 3);
  o.srcMs = in(1, 3);
  o.midMs = in(1, 3);
  o.rdrMs = in(1, 5);
  o.finMs = in(1, 4);
  o.variant = static_cast<int>(in(0, 2));
  o.busyMs = busy ? in(1, 6) : 0;
  o.busyStartMs = busy ? in(0, 12) : 0;
  o.chain = {"Src", "Mid", "Rdr"};
  if (o.variant > 0) o.chain.push_back("Fin");
  return o;
}

// A chain's reaction and data age (allowance 0), or none when the graph does not fit.
struct Bounds {
  bool fits = false;
  std::int64_t reactionNs = 0, ageNs = 0;
};

Bounds boundsOf(const std::string& yaml) {
  auto g = parseGraph(yaml, "oracle.yaml");
  REQUIRE(g.has_value());
  auto s = scheduleGraph(*g, ScheduleOptions{});
  if (!s) return {};
  REQUIRE(analyseChannels(*g, *s, 0).has_value());
  return {true, s->chains[0].reactionNs, s->chains[0].ageNs};
}

// What the oracle found on a set of random graphs.
struct OracleCounts {
  int feasible = 0, met = 0, infeasible = 0, refused = 0, refusedImpossible = 0;
  int beyond = 0;  // met although no StartTime alone meets them (another order on a shared core)
};

// `graphs` random graphs (with Busy or not) with chain requirements near their best reaction and
// age: an exhaustive search over the readers' StartTimes on the 1 ms grain says whether a schedule
// meets them; the compiler must meet every chain that one does; without Busy it must refuse every
// other one (none meets them), as impossible.
OracleCounts chainOracle(unsigned seed, int graphs, bool busy) {
  std::mt19937 rng(seed);
  OracleCounts k;
  for (int n = 0; n < graphs; ++n) {
    const OracleGraph o = randomGraph(rng, busy);
    // Every StartTime of the readers on the grain (1 ms) that keeps them in their frame.
    std::vector<Bounds> all;
    std::int64_t minAge = INT64_MAX, minReaction = INT64_MAX;
    for (std::int64_t r = 0; r + o.rdrMs <= o.slowMs; ++r)
      for (std::int64_t f = 0; f == 0 || (o.variant == 2 && f + o.finMs <= o.thirdMs); ++f) {
        const Bounds b = boundsOf(o.yaml(r, f, ""));
        if (!b.fits) continue;
        all.push_back(b);
        minAge = std::min(minAge, b.ageNs);
        minReaction = std::min(minReaction, b.reactionNs);
      }
    REQUIRE_FALSE(all.empty());
    // Requirements near the best each bound can be alone: some met together, some not.
    const int kind = static_cast<int>(rng() % 3);  // age, reaction, both
    const std::int64_t maxAge = minAge + (static_cast<std::int64_t>(rng() % 7) - 2) * kMs;
    const std::int64_t maxReaction = minReaction + (static_cast<std::int64_t>(rng() % 7) - 2) * kMs;
    std::string requirement;
    if (kind != 1) requirement += "        MaxAge: " + std::to_string(maxAge) + "ns\n";
    if (kind != 0) requirement += "        MaxReaction: " + std::to_string(maxReaction) + "ns\n";
    bool exists = false;
    for (const Bounds& b : all)
      exists = exists || ((kind == 1 || b.ageNs <= maxAge) && (kind == 0 || b.reactionNs <= maxReaction));

    auto g = parseGraph(o.yaml(0, 0, requirement), "oracle.yaml");
    REQUIRE(g.has_value());
    const ChainOutcome c = compileChains(*g, 0);
    INFO("graph " << n << ":\n" << o.yaml(0, 0, requirement) << c.message << "\n" << c.note.text());
    if (exists) {
      ++k.feasible;
      CHECK(c.met);
      k.met += c.met ? 1 : 0;
    } else {
      // With Busy the order on CPU2 matters too: chain-guided scheduling may meet, with a verified
      // schedule, a chain that no StartTime alone meets.
      ++k.infeasible;
      if (!busy) CHECK_FALSE(c.met);
      k.refused += c.met ? 0 : 1;
      k.beyond += c.met ? 1 : 0;
      k.refusedImpossible += !c.met && c.impossible ? 1 : 0;
    }
  }
  return k;
}

}  // namespace

TEST_CASE("on random graphs the compiler meets every chain bound a StartTime meets and proves the rest impossible",
          "[chains][chain-oracle][heavy]") {
  const OracleCounts k = chainOracle(44, 150, false);
  CHECK(k.met == k.feasible);
  CHECK(k.refusedImpossible == k.infeasible);
  WARN("chain oracle: " << k.feasible << " feasible, " << k.met << " met; " << k.infeasible << " infeasible, "
                        << k.refusedImpossible << " refused as impossible");
  CHECK(k.feasible > 20);
  CHECK(k.infeasible > 20);
}

TEST_CASE("on random graphs with other work on a reader's core every chain a StartTime meets is met",
          "[chains][chain-oracle][heavy]") {
  const OracleCounts k = chainOracle(45, 100, true);
  CHECK(k.met == k.feasible);
  WARN("chain oracle, shared core: " << k.feasible << " feasible, " << k.met << " met; " << k.infeasible
                                     << " infeasible by StartTimes alone, " << k.refused << " refused ("
                                     << k.refusedImpossible << " as impossible), " << k.beyond
                                     << " met by another order");
}

TEST_CASE("on many more random graphs the chain search meets every feasible chain and proves the rest",
          "[chains][chain-oracle][.long]") {
  const OracleCounts k = chainOracle(4400, 1000, false);
  CHECK(k.met == k.feasible);
  CHECK(k.refusedImpossible == k.infeasible);
  const OracleCounts b = chainOracle(4500, 500, true);
  CHECK(b.met == b.feasible);
  WARN("chain oracle (long): " << k.feasible << " feasible, " << k.met << " met; " << k.infeasible << " infeasible, "
                               << k.refusedImpossible << " refused as impossible; shared core: " << b.feasible
                               << " feasible, " << b.met << " met; " << b.infeasible
                               << " infeasible by StartTimes alone, " << b.refused << " refused, " << b.beyond
                               << " met by another order");
}
