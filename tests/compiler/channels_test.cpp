// Unit tests of channels and cause-effect chains (tactus extension): reading them with located
// messages, the version every reader run sees on hand-computed plans (same rate, a faster
// writer, a faster reader, the hyperepoch wrap, a reader before the first write), the ring
// depth, the waits that make the mapping hold at run time, chain bounds computed by hand, a
// chain's runs followed back and forwards (ChainMap), a chain over its requirement refused, the
// report and HTML view, and the schedule file and verifier of version 6.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chain_search.hpp"
#include "channel_analysis.hpp"
#include "compile.hpp"
#include "graph_parser.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"

using namespace tactus;
using namespace tactus::compiler;

namespace {

constexpr std::int64_t kMs = 1000000;

// A graph of one hyperepoch `H` with the epochs `epochs` (YAML list items under Epochs), client
// `P` with the client epochs `clientEpochs`, and `extra` under the graph (Channels, Chains).
std::string graph(const std::string& period, const std::string& epochs, const std::string& clientEpochs,
                  const std::string& extra) {
  return "Version: 3.0.0\n"
         "G:\n"
         "  Resources:\n"
         "    CPU: [CPU0, CPU1, CPU2]\n"
         "  Hyperepochs:\n"
         "    - H:\n"
         "        Period: " +
         period + "\n        Epochs:\n" + epochs +
         "  Clients:\n"
         "    - P:\n"
         "        Epochs:\n" +
         clientEpochs + extra;
}

// Writer W and reader R in one epoch of 10 ms: W on CPU0 from `writerStart`, R on CPU1 from
// `readerStart` for `readerWcet`.
std::string sameRate(const std::string& writerStart, const std::string& readerStart,
                     const std::string& readerWcet = "1ms") {
  return graph("10ms", "          - E: {Period: 10ms}\n",
               "          - H.E:\n"
               "              Runnables:\n"
               "                - W: {WCET: 1ms, StartTime: " +
                   writerStart +
                   ", Resources: [CPU0]}\n"
                   "                - R: {WCET: " +
                   readerWcet + ", StartTime: " + readerStart + ", Resources: [CPU1]}\n",
               "  Channels:\n"
               "    - Data: {Writer: P.W, Readers: [P.R], Size: 64}\n");
}

struct Compiled {
  Graph graph;
  Schedule schedule;
};

Compiled compile(const std::string& yaml, std::int64_t allowanceNs = 0) {
  auto g = parseGraph(yaml, "g.yaml");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g.has_value());
  auto s = scheduleGraph(*g, ScheduleOptions{});
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.has_value());
  auto analysed = analyseChannels(*g, *s, allowanceNs);
  INFO((analysed ? std::string() : analysed.error().message));
  REQUIRE(analysed.has_value());
  const VerifyReport v = verifySchedule(*s);
  INFO((v.errors.empty() ? std::string() : v.errors.front()));
  REQUIRE(v.ok());
  return {std::move(*g), std::move(*s)};
}

InstanceId instanceOf(const Schedule& s, const std::string& name, std::uint32_t frame) {
  for (InstanceId i : s.instances.ids())
    if (s.runnables[s.instances[i].runnable].name == name && s.instances[i].frame == frame) return i;
  FAIL("no instance " << name << " frame " << frame);
  return kNone;
}

const ChannelRead& readOf(const Schedule& s, InstanceId reader) {
  const auto it = std::find_if(s.channelReads.begin(), s.channelReads.end(),
                               [&](const ChannelRead& r) { return r.instance == reader; });
  REQUIRE(it != s.channelReads.end());
  return *it;
}

const ChannelWrite& writeOf(const Schedule& s, InstanceId writer) {
  const auto it = std::find_if(s.channelWrites.begin(), s.channelWrites.end(),
                               [&](const ChannelWrite& w) { return w.instance == writer; });
  REQUIRE(it != s.channelWrites.end());
  return *it;
}

bool waitsFor(const RunPlan& plan, InstanceId waiter, InstanceId waited) {
  return std::any_of(plan.waits[waiter].begin(), plan.waits[waiter].end(),
                     [&](const WaitCondition& w) { return w.instance == waited && !w.previousIteration; });
}

std::string error(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE_FALSE(g.has_value());
  return g.error().message;
}

// Fast epoch (10 ms, 4 frames): writer W on CPU0 at the start of each frame; Slow epoch (40 ms):
// reader R on CPU1 from 15 ms for `readerWcet`.
std::string fastWriter(const std::string& readerWcet, const std::string& chains = "") {
  return graph("40ms",
               "          - Fast: {Period: 10ms, Frames: 4}\n"
               "          - Slow: {Period: 40ms}\n",
               "          - H.Fast:\n"
               "              Runnables:\n"
               "                - W: {WCET: 1ms, Resources: [CPU0]}\n"
               "          - H.Slow:\n"
               "              Runnables:\n"
               "                - R: {WCET: " +
                   readerWcet + ", StartTime: 15ms, Resources: [CPU1]}\n",
               "  Channels:\n"
               "    - Data: {Writer: P.W, Readers: [P.R], Size: 4096}\n" +
                   chains);
}

// A (Fast, 10 ms x 2, CPU0) -> B (depends on A, CPU0) -> channel -> C (Slow, 20 ms, CPU1 from 12 ms).
std::string threeHop(const std::string& requirement) {
  return graph("20ms",
               "          - Fast: {Period: 10ms, Frames: 2}\n"
               "          - Slow: {Period: 20ms}\n",
               "          - H.Fast:\n"
               "              Runnables:\n"
               "                - A: {WCET: 1ms, Resources: [CPU0]}\n"
               "                - B: {WCET: 2ms, Resources: [CPU0], Dependencies: [P.A]}\n"
               "          - H.Slow:\n"
               "              Runnables:\n"
               "                - C: {WCET: 3ms, StartTime: 12ms, Resources: [CPU1]}\n",
               "  Channels:\n"
               "    - Track: {Writer: P.B, Readers: [P.C], Size: 128}\n"
               "  Chains:\n"
               "    - Loop:\n"
               "        Runnables: [P.A, P.B, P.C]\n" +
                   requirement);
}

}  // namespace

TEST_CASE("channels and chains are read with their ends, size and requirements", "[channels]") {
  const Compiled c = compile(threeHop("        MaxReaction: 30ms\n        MaxAge: 20ms\n"));
  REQUIRE(c.graph.channels.size() == 1);
  CHECK(c.graph.channels[0].name == "Track");
  CHECK(c.graph.channels[0].sizeBytes == 128);
  CHECK(c.graph.channels[0].loc.line > 0);
  REQUIRE(c.graph.chains.size() == 1);
  CHECK(c.graph.chains[0].runnables.size() == 3);
  CHECK(c.graph.chains[0].maxReactionNs == 30 * kMs);
  CHECK(c.graph.chains[0].maxAgeNs == 20 * kMs);
}

TEST_CASE("channel and chain mistakes are refused with the line and a guess", "[channels]") {
  const std::string unknown = error(graph("10ms", "          - E: {Period: 10ms}\n",
                                          "          - H.E:\n              Runnables:\n"
                                          "                - Writer: {WCET: 1ms, Resources: [CPU0]}\n"
                                          "                - Reader: {WCET: 1ms, Resources: [CPU1]}\n",
                                          "  Channels:\n"
                                          "    - Data: {Writer: P.Writer, Readers: [P.Reder], Size: 8}\n"));
  CHECK_THAT(unknown, Catch::Contains("g.yaml:18:"));
  CHECK_THAT(unknown, Catch::Contains("unknown runnable 'P.Reder'"));
  CHECK_THAT(unknown, Catch::Contains("did you mean 'P.Reader'?"));

  std::string misspelt = sameRate("0", "2ms");
  misspelt.replace(misspelt.find("Size: 64"), 4, "Sise");
  const std::string key = error(misspelt);
  CHECK_THAT(key, Catch::Contains("did you mean 'Size'?"));

  std::string noSize = sameRate("0", "2ms");
  noSize.replace(noSize.find(", Size: 64"), 10, "");
  CHECK_THAT(error(noSize), Catch::Contains("channel 'Data' has no Size"));

  std::string self = sameRate("0", "2ms");
  self.replace(self.find("Readers: [P.R]"), 14, "Readers: [P.W]");
  CHECK_THAT(error(self), Catch::Contains("its writer 'P.W' is also a reader"));

  const std::string unlinked = error(sameRate("0", "2ms") + "  Chains:\n    - X: {Runnables: [P.R, P.W]}\n");
  CHECK_THAT(unlinked, Catch::Contains("chain 'X': 'P.W' neither depends on 'P.R' nor reads a channel it writes"));
  CHECK_THAT(error(sameRate("0", "2ms") + "  Chains:\n    - X: {Runnables: [P.W]}\n"),
             Catch::Contains("a path of two or more"));
  CHECK_THAT(error(sameRate("0", "2ms") + "  Chains:\n    - X: {Runnables: [P.W, P.Rr]}\n"),
             Catch::Contains("did you mean 'P.R'?"));
}

TEST_CASE("a channel across hyperepochs or SoCs is refused, named", "[channels]") {
  const std::string twoHyper =
      "Version: 3.0.0\nG:\n  Resources:\n    CPU: [CPU0, CPU1]\n  Hyperepochs:\n"
      "    - A:\n        Resources: [CPU0]\n        Epochs:\n          - E: {Period: 10ms}\n"
      "    - B:\n        Resources: [CPU1]\n        Epochs:\n          - E: {Period: 10ms}\n"
      "  Clients:\n    - P:\n        Epochs:\n"
      "          - A.E:\n              Runnables:\n                - W: {WCET: 1ms, Resources: [CPU0]}\n"
      "          - B.E:\n              Runnables:\n                - R: {WCET: 1ms, Resources: [CPU1]}\n"
      "  Channels:\n    - Data: {Writer: P.W, Readers: [P.R], Size: 8}\n";
  const std::string across = error(twoHyper);
  CHECK_THAT(across, Catch::Contains(
                         "g.yaml:24: channel 'Data': reader 'P.R' runs in hyperepoch 'B', its writer 'P.W' in 'A': a "
                         "channel across hyperepochs is not supported"));

  const std::string twoSoc =
      "Version: 3.0.0\nG:\n  SOC:\n    - SocA:\n        Resources: {CPU: [CPU0]}\n"
      "    - SocB:\n        Resources: {CPU: [CPU0]}\n  Hyperepochs:\n"
      "    - H:\n        Epochs:\n          - E: {Period: 10ms}\n  Clients:\n"
      "    - P:\n        SOC: SocA\n        Epochs:\n          - H.E:\n              Runnables:\n"
      "                - W: {WCET: 1ms, Resources: [SocA.CPU0]}\n"
      "    - Q:\n        SOC: SocB\n        Epochs:\n          - H.E:\n              Runnables:\n"
      "                - R: {WCET: 1ms, Resources: [SocB.CPU0], Dependencies: [P.W]}\n"
      "  Channels:\n    - Data: {Writer: P.W, Readers: [Q.R], Size: 8}\n";
  CHECK_THAT(error(twoSoc), Catch::Contains("a channel across SoCs is not supported"));
}

TEST_CASE("same rate: the reader sees the writer run of its iteration and waits for it", "[channels]") {
  const Compiled c = compile(sameRate("0", "2ms"));
  const Schedule& s = c.schedule;
  const InstanceId w = instanceOf(s, "W", 0), r = instanceOf(s, "R", 0);
  REQUIRE(s.instances[w].endNs == 1 * kMs);
  REQUIRE(s.instances[r].startNs == 2 * kMs);
  const ChannelRead& read = readOf(s, r);
  CHECK(read.writer == w);
  CHECK_FALSE(read.previousIteration);
  CHECK(s.channels[0].writes == 1);
  CHECK(s.channels[0].depth == 1);
  CHECK(writeOf(s, w).waits.empty());
  auto plan = makeRunPlan(s);
  REQUIRE(plan.has_value());
  CHECK(waitsFor(*plan, r, w));  // on another core, no dependency: the channel orders them
}

TEST_CASE("a reader before the first write sees the previous iteration's version", "[channels]") {
  // W 2-3 ms, R 0-1 ms: R reads W of iteration h - 1 (none in the first iteration), and W waits
  // for R before it overwrites the one buffer.
  const Compiled c = compile(sameRate("2ms", "0"));
  const Schedule& s = c.schedule;
  const InstanceId w = instanceOf(s, "W", 0), r = instanceOf(s, "R", 0);
  const ChannelRead& read = readOf(s, r);
  CHECK(read.writer == w);
  CHECK(read.previousIteration);
  CHECK(s.channels[0].depth == 1);
  CHECK(writeOf(s, w).waits == std::vector<InstanceId>{r});
  auto plan = makeRunPlan(s);
  REQUIRE(plan.has_value());
  CHECK(waitsFor(*plan, w, r));
  CHECK_FALSE(waitsFor(*plan, r, w));  // the previous iteration ended before this one was released
}

TEST_CASE("wrap-around: a reader still reading when the next write starts needs a second buffer", "[channels]") {
  // R 0-3 ms reads W of the previous iteration; W 2-3 ms starts while R reads: two buffers,
  // which alternate by iteration (slot + h * writes mod depth), and no wait.
  const Compiled c = compile(sameRate("2ms", "0", "3ms"));
  const Schedule& s = c.schedule;
  const InstanceId w = instanceOf(s, "W", 0), r = instanceOf(s, "R", 0);
  CHECK(readOf(s, r).previousIteration);
  CHECK(s.channels[0].depth == 2);
  CHECK(writeOf(s, w).waits.empty());
  CHECK(readOf(s, r).slot == writeOf(s, w).slot);
}

TEST_CASE("writer faster than reader: the reader sees the latest run ended before it starts", "[channels]") {
  // W runs at 0, 10, 20, 30 ms for 1 ms; R starts at 15 ms: it sees W frame 1.
  const Compiled c = compile(fastWriter("2ms"));
  const Schedule& s = c.schedule;
  const InstanceId r = instanceOf(s, "R", 0);
  REQUIRE(s.instances[r].startNs == 15 * kMs);
  CHECK(readOf(s, r).writer == instanceOf(s, "W", 1));
  CHECK_FALSE(readOf(s, r).previousIteration);
  CHECK(s.channels[0].writes == 4);
  // R ends at 17 ms, before W frame 2 starts: one buffer, W frame 2 waits for R.
  CHECK(s.channels[0].depth == 1);
  CHECK(writeOf(s, instanceOf(s, "W", 2)).waits == std::vector<InstanceId>{r});
  CHECK(writeOf(s, instanceOf(s, "W", 3)).waits.empty());
}

TEST_CASE("the ring holds every version still to be read when the next writes come", "[channels]") {
  // R reads W frame 1 from 15 to 21 ms while W frame 2 writes at 20 ms: two buffers; W frame 3
  // (the next to reuse frame 1's buffer) waits for R.
  const Compiled c = compile(fastWriter("6ms"));
  const Schedule& s = c.schedule;
  CHECK(s.channels[0].depth == 2);
  const InstanceId r = instanceOf(s, "R", 0);
  for (std::uint32_t f = 0; f < 4; ++f) CHECK(writeOf(s, instanceOf(s, "W", f)).slot == f % 2);
  CHECK(writeOf(s, instanceOf(s, "W", 2)).waits.empty());
  CHECK(writeOf(s, instanceOf(s, "W", 3)).waits == std::vector<InstanceId>{r});
  CHECK(readOf(s, r).slot == 1);
}

TEST_CASE("reader faster than writer: early frames see the previous iteration's run", "[channels]") {
  // W (40 ms epoch) 5-7 ms; R (10 ms x 4) at 0, 10, 20, 30 ms: frame 0 sees the previous
  // iteration's W, frames 1-3 this iteration's; W waits for R frame 0.
  const std::string yaml = graph("40ms",
                                 "          - Fast: {Period: 10ms, Frames: 4}\n"
                                 "          - Slow: {Period: 40ms}\n",
                                 "          - H.Slow:\n              Runnables:\n"
                                 "                - W: {WCET: 2ms, StartTime: 5ms, Resources: [CPU0]}\n"
                                 "          - H.Fast:\n              Runnables:\n"
                                 "                - R: {WCET: 1ms, Resources: [CPU1]}\n",
                                 "  Channels:\n    - Data: {Writer: P.W, Readers: [P.R], Size: 8}\n");
  const Compiled c = compile(yaml);
  const Schedule& s = c.schedule;
  const InstanceId w = instanceOf(s, "W", 0);
  CHECK(readOf(s, instanceOf(s, "R", 0)).previousIteration);
  for (std::uint32_t f = 1; f < 4; ++f) {
    CHECK(readOf(s, instanceOf(s, "R", f)).writer == w);
    CHECK_FALSE(readOf(s, instanceOf(s, "R", f)).previousIteration);
  }
  CHECK(s.channels[0].depth == 1);
  CHECK(writeOf(s, w).waits == std::vector<InstanceId>{instanceOf(s, "R", 0)});
}

TEST_CASE("chain bounds over a channel from a faster writer, computed by hand", "[chains]") {
  // W at 0, 10, 20, 30 ms (1 ms); R 15-21 ms reads W frame 1. Age: 21 - 10 = 11 ms. Reaction:
  // W frame 2 (released at 20 ms) is first seen by R of the next iteration, ending at 61 ms: 41 ms,
  // of which R costs 40 ms.
  const Compiled c = compile(fastWriter("6ms", "  Chains:\n    - C: {Runnables: [P.W, P.R]}\n"));
  const Schedule& s = c.schedule;
  auto bounds = computeChainBounds(s, s.chains[0]);
  REQUIRE(bounds.has_value());
  CHECK(bounds->links == std::vector<ChainLink>{ChainLink::kChannel});
  CHECK(bounds->ageNs == 11 * kMs);
  CHECK(bounds->reactionNs == 41 * kMs);
  CHECK(s.runnables[bounds->reactionCostliest].name == "R");
  CHECK(bounds->reactionCostliestNs == 40 * kMs);
  CHECK(s.chains[0].reactionNs == 41 * kMs);  // allowance 0
}

TEST_CASE("chain bounds through a dependency and a channel, computed by hand", "[chains]") {
  // A 0-1 and 10-11 ms, B after A (1-3, 11-13), C 12-15 ms reads B frame 0. Age: 15 - 0 = 15 ms.
  // Reaction: A frame 1 (released at 10 ms) reaches C of the next iteration, ending at 35 ms:
  // 25 ms, of which C costs 22 ms (from B's end at 13 ms).
  const Compiled c = compile(threeHop(""));
  const Schedule& s = c.schedule;
  REQUIRE(s.instances[instanceOf(s, "B", 1)].endNs == 13 * kMs);
  auto bounds = computeChainBounds(s, s.chains[0]);
  REQUIRE(bounds.has_value());
  CHECK(bounds->links == std::vector<ChainLink>{ChainLink::kDependency, ChainLink::kChannel});
  CHECK(bounds->ageNs == 15 * kMs);
  CHECK(bounds->reactionNs == 25 * kMs);
  CHECK(s.runnables[bounds->reactionCostliest].name == "C");
  CHECK(bounds->reactionCostliestNs == 22 * kMs);
  CHECK(s.runnables[bounds->ageCostliest].name == "C");
  CHECK(bounds->ageCostliestNs == 12 * kMs);

  // The allowance per runnable is part of the stated bound, and the report shows both.
  const Compiled withAllowance = compile(threeHop(""), 100000);
  CHECK(withAllowance.schedule.chains[0].reactionNs == 25 * kMs + 300000);
  const CompileReport report = buildReport(withAllowance.graph, withAllowance.schedule);
  REQUIRE(report.chains.size() == 1);
  CHECK(report.chains[0].links == std::vector<std::string>{"dependency", "channel 'Track'"});
  CHECK_THAT(reportText(report), Catch::Contains("chain 'Loop'  reaction 25.3ms"));
  CHECK_THAT(reportJson(report), Catch::Contains("\"reaction_ns\": 25300000"));
  const std::string html = view::renderHtml(withAllowance.schedule);
  CHECK_THAT(html, Catch::Contains("<h2>Channels and chains</h2>"));
  CHECK_THAT(html, Catch::Contains("<tr><td>Loop</td><td>25.3ms</td><td>15.3ms</td>"));
  // C reads B frame 0 until 15 ms while B frame 1 writes from 11 ms: two buffers.
  CHECK(withAllowance.schedule.channels[0].depth == 2);
  CHECK_THAT(reportJson(report), Catch::Contains("\"depth\": 2"));
}

TEST_CASE("a chain over its requirement is refused, naming it and its costliest runnable", "[chains]") {
  auto g = parseGraph(threeHop("        MaxReaction: 20ms\n"), "g.yaml");
  REQUIRE(g.has_value());
  auto s = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(s.has_value());
  auto analysed = analyseChannels(*g, *s, 100000);
  REQUIRE_FALSE(analysed.has_value());
  CHECK(analysed.error().code == ErrorCode::kInfeasible);
  const std::string& msg = analysed.error().message;
  CHECK_THAT(msg, Catch::Contains("g.yaml:24: chain 'Loop': its reaction 25.3ms"));
  CHECK_THAT(msg, Catch::Contains("exceeds its MaxReaction 20ms"));
  CHECK_THAT(msg, Catch::Contains("costliest on it: 'P.C'"));

  auto g2 = parseGraph(threeHop("        MaxAge: 15ms\n"), "g.yaml");
  REQUIRE(g2.has_value());
  auto s2 = scheduleGraph(*g2, ScheduleOptions{});
  REQUIRE(s2.has_value());
  CHECK(analyseChannels(*g2, *s2, 0).has_value());  // exactly at its bound
  auto s3 = scheduleGraph(*g2, ScheduleOptions{});
  REQUIRE(s3.has_value());
  auto over = analyseChannels(*g2, *s3, 1);
  REQUIRE_FALSE(over.has_value());
  CHECK_THAT(over.error().message, Catch::Contains("exceeds its MaxAge 15ms"));
}

namespace {

// The error of a chain over its requirements (analyseChannels with an allowance of 100 us).
std::string chainRefusal(const std::string& yaml) {
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE(g.has_value());
  auto s = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(s.has_value());
  auto analysed = analyseChannels(*g, *s, 100000);
  REQUIRE_FALSE(analysed.has_value());
  CHECK(analysed.error().code == ErrorCode::kInfeasible);
  return analysed.error().message;
}

}  // namespace

TEST_CASE("a chain's refusal says the fix: both bounds, a dependency or a StartTime, an impossible bound", "[chains]") {
  SECTION("reaction and data age over: both are named") {
    const std::string msg = chainRefusal(threeHop("        MaxReaction: 20ms\n        MaxAge: 14ms\n"));
    CHECK_THAT(msg, Catch::Contains("exceeds its MaxReaction 20ms"));
    CHECK_THAT(msg, Catch::Contains("; and its data age "));
    CHECK_THAT(msg, Catch::Contains("exceeds its MaxAge 14ms"));
  }
  SECTION("a slower reader that reads an older run than it could: the StartTime that reads the newer one") {
    // C (every 20 ms, from 12 ms) reads B of frame 0 (ends at 3 ms); B of frame 1 ends at 13 ms and
    // C (3 ms) can still follow it within its frame.
    const std::string msg = chainRefusal(threeHop("        MaxAge: 14ms\n"));
    CHECK_THAT(msg, Catch::Contains("hint: 'P.C' reads channel 'Track' from an older run of 'P.B' than it could: "
                                    "'StartTime: 13ms' on 'P.C'"));
  }
  SECTION("a reader of the writer's rate that reads an older frame: the dependency that reads the same frame's") {
    const std::string msg = chainRefusal(sameRate("0ms", "0ms") +
                                         "  Chains:\n    - WR:\n        Runnables: [P.W, P.R]\n        MaxAge: 5ms\n");
    CHECK_THAT(msg, Catch::Contains("hint: 'P.R' reads channel 'Data' from an older frame's run of 'P.W': "
                                    "'Dependencies: [P.W]' on 'P.R' makes it read the same frame's version"));
  }
  SECTION("a bound below the chain's WCETs is impossible, with the smallest it could be") {
    const std::string msg = chainRefusal(threeHop("        MaxReaction: 5ms\n"));
    CHECK_THAT(msg, Catch::Contains("exceeds its MaxReaction 5ms, which no schedule can meet: its runnables' WCETs "
                                    "and allowance alone take 6.3ms (a MaxReaction below that is impossible)"));
    CHECK_THAT(msg, !Catch::Contains("costliest on it"));
  }
  SECTION("a reader that reads the same frame's data gets no hint") {
    const std::string msg = chainRefusal(
        sameRate("0ms", "2ms") + "  Chains:\n    - WR:\n        Runnables: [P.W, P.R]\n        MaxReaction: 2500us\n");
    CHECK_THAT(msg, Catch::Contains("exceeds its MaxReaction 2.5ms; costliest on it"));
    CHECK_THAT(msg, !Catch::Contains("hint:"));
  }
}

TEST_CASE("channels and chains go through the schedule file of version 6 and its verifier", "[channels]") {
  const Compiled c = compile(threeHop("        MaxAge: 30ms\n"), 100000);
  const std::string text = writeSchedule(c.schedule);
  CHECK(text.rfind("tactus-schedule 6\n", 0) == 0);
  CHECK_THAT(text, Catch::Contains("\nchannel id=0 name=Track size=128 "));
  auto back = readSchedule(text, "g.tsched");
  REQUIRE(back.has_value());
  CHECK(writeSchedule(*back) == text);
  CHECK(verifySchedule(*back).ok());

  // A reader run mapped to another writer run than the plan's is refused, named.
  Schedule bad = *back;
  bad.channelReads[0].writer = instanceOf(bad, "B", 1);
  const VerifyReport v = verifySchedule(bad);
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(v.errors.front(),
             Catch::Contains("channel 'Track': reader run 'P.C' frame 0 is mapped inconsistently with the plan"));
  // A ring other than the plan's, and a stated chain bound other than the plan's.
  Schedule shallow = *back;
  shallow.channels[0].depth = 3;
  CHECK_THAT(verifySchedule(shallow).errors.front(), Catch::Contains("a ring of 3"));
  Schedule optimistic = *back;
  optimistic.chains[0].ageNs -= 1;
  CHECK_THAT(verifySchedule(optimistic).errors.front(), Catch::Contains("chain 'Loop': the file states"));
}

TEST_CASE("a graph without channels or chains compiles as before", "[channels]") {
  const std::string yaml = graph("10ms", "          - E: {Period: 10ms}\n",
                                 "          - H.E:\n              Runnables:\n"
                                 "                - W: {WCET: 1ms, Resources: [CPU0]}\n",
                                 "");
  const Compiled c = compile(yaml);
  CHECK(c.schedule.channels.empty());
  CHECK(writeSchedule(c.schedule).rfind("tactus-schedule 1\n", 0) == 0);
  const CompileReport report = buildReport(c.graph, c.schedule);
  CHECK_THAT(reportJson(report), !Catch::Contains("channels"));
  CHECK_THAT(reportText(report), !Catch::Contains("chain '"));
  CHECK_THAT(view::renderHtml(c.schedule), !Catch::Contains("Channels and chains"));
}

TEST_CASE("a chain's map follows its runs back to their data and forwards to their first reaction", "[chains]") {
  // threeHop: A then B in frames 0 (0 ms) and 1 (10 ms); C (12-15 ms) reads B frame 0.
  const Compiled c = compile(threeHop(""));
  const Schedule& s = c.schedule;
  auto map = ChainMap::make(s, s.chains[0]);
  REQUIRE(map.has_value());
  CHECK(map->links() == std::vector<ChainLink>{ChainLink::kDependency, ChainLink::kChannel});
  CHECK(map->runs(0) == std::vector<InstanceId>{instanceOf(s, "A", 0), instanceOf(s, "A", 1)});
  std::vector<ChainRun> path;
  // C of iteration 7 decides on A frame 0 of iteration 7, through B frame 0.
  map->dataPath({instanceOf(s, "C", 0), 7}, path);
  REQUIRE(path.size() == 3);
  CHECK(path[0].instance == instanceOf(s, "A", 0));
  CHECK(path[0].iteration == 7);
  CHECK(path[1].instance == instanceOf(s, "B", 0));
  // A frame 0 of iteration 3 is first seen by C of iteration 3; A frame 1 by C of iteration 4.
  REQUIRE(map->reactionPath({instanceOf(s, "A", 0), 3}, path));
  CHECK(path[2].instance == instanceOf(s, "C", 0));
  CHECK(path[2].iteration == 3);
  REQUIRE(map->reactionPath({instanceOf(s, "A", 1), 3}, path));
  CHECK(path[1].instance == instanceOf(s, "B", 1));
  CHECK(path[1].iteration == 3);
  CHECK(path[2].iteration == 4);
  // A chain the plan cannot follow is refused as computeChainBounds refuses it.
  ChainInfo reversed = s.chains[0];
  std::reverse(reversed.runnables.begin(), reversed.runnables.end());
  auto bad = ChainMap::make(s, reversed);
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains("neither depends on"));
}

TEST_CASE("tactus-compile states chain bounds with --chain-allowance and refuses a chain over them", "[chains]") {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  const std::string graphPath = std::string(root ? root : "../..") + "/schedules/camera_pipeline_chain.yaml";
  const std::string out = "/tmp/tactus_channels_test_" + std::to_string(::getpid()) + ".tsched";
  auto run = [&](const std::vector<std::string>& extra, std::string& text) {
    std::vector<std::string> args{"-q", "-i", graphPath, "-o", out};
    args.insert(args.end(), extra.begin(), extra.end());
    std::ostringstream o, e;
    const int code = runCompileCommand(args, o, e);
    text = o.str() + e.str();
    return code;
  };
  std::string text;
  // Reaction: camera frame 1 (released at 25 ms) is detected by 37 ms, read by Plan at 65 ms,
  // acted on by 76 ms: 51 ms. Age: Plan at 15 ms reads frame 0 (released at 0), Actuate ends at 26 ms.
  REQUIRE(run({"--chain-allowance", "0"}, text) == 0);
  CHECK_THAT(text, Catch::Contains("chain 'CameraToActuate'  reaction 51ms (max 60ms), data age 26ms (max 30ms)"));
  // 5 runnables x 1.5ms: the reaction 58.5 ms still meets MaxReaction 60 ms, the age 33.5 ms
  // exceeds MaxAge 30 ms; chain-guided scheduling starts Plan at the end of Detect (StartTime), down
  // to the five WCETs.
  CHECK(run({"--chain-allowance", "1500us"}, text) == 1);
  // No schedule can: the five WCETs (23 ms) and the allowance are 30.5 ms.
  CHECK_THAT(text, Catch::Contains("chain 'CameraToActuate': its data age 30.5ms (planned 23ms + allowance 7.5ms) "
                                   "exceeds its MaxAge 30ms, which no schedule can meet: its runnables' WCETs and "
                                   "allowance alone take 30.5ms"));
  // The report (-k) still shows the schedule made and every chain's bounds; no schedule file.
  const std::string json = out + ".json";
  std::remove(out.c_str());
  CHECK(run({"--chain-allowance", "1500us", "-k", json}, text) == 1);
  CHECK_THAT(text, Catch::Contains("wrote the schedule and its chains' bounds to the report (-k)"));
  std::ifstream in(json);
  std::stringstream report;
  report << in.rdbuf();
  CHECK_THAT(report.str(), Catch::Contains("\"age_ns\": 30500000, \"max_age_ns\": 30000000"));
  CHECK_FALSE(std::ifstream(out).good());
  std::remove(json.c_str());
  CHECK(run({"--chain-allowance", "soon"}, text) == 2);
  CHECK_THAT(text, Catch::Contains("'soon' is not a duration"));
  std::remove(out.c_str());
}

namespace {

// One core, one 50 ms epoch: Background (20 ms, no dependencies) is the list scheduler's most
// urgent (latest start 30 ms, against Src's 48 and Sink's 49), so it runs first and the chain
// Src -> Sink ends at 22 ms.
std::string backgroundFirst(const std::string& requirement) {
  return "Version: 3.0.0\n"
         "Toy:\n"
         "  Resources:\n"
         "    CPU: [CPU0]\n"
         "  Hyperepochs:\n"
         "    - H:\n"
         "        Epochs:\n"
         "          - E: {Period: 50ms}\n"
         "  Clients:\n"
         "    - C:\n"
         "        Epochs:\n"
         "          - H.E:\n"
         "              Runnables:\n"
         "                - Background: {WCET: 20ms, Resources: [CPU0]}\n"
         "                - Src: {WCET: 1ms, Resources: [CPU0]}\n"
         "                - Sink: {WCET: 1ms, Resources: [CPU0], Dependencies: [C.Src]}\n"
         "  Chains:\n"
         "    - Loop:\n"
         "        Runnables: [C.Src, C.Sink]\n" +
         requirement;
}

}  // namespace

TEST_CASE("a chain over its requirement on the first schedule is met by chain-guided scheduling", "[chains]") {
  auto g = parseGraph(backgroundFirst("        MaxReaction: 10ms\n"), "g.yaml");
  REQUIRE(g.has_value());
  auto first = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(first.has_value());
  {
    Schedule copy = *first;
    REQUIRE_FALSE(analyseChannels(*g, copy, 100000).has_value());  // 22.2 ms against 10 ms
  }
  REQUIRE(chainsToShorten(*g, *first, 100000, false));
  ChainSearchNote note;
  Schedule s = chainGuidedSchedule(*g, ScheduleOptions{}, 100000, false, std::move(*first), note);
  REQUIRE(analyseChannels(*g, s, 100000).has_value());
  CHECK(s.chains[0].reactionNs == 2 * kMs + 200000);  // Src, then Sink, then Background
  CHECK(note.overBeforeNs == 12 * kMs + 200000);
  CHECK(note.overAfterNs == 0);
  CHECK(note.improvements >= 1);
  // The schedule keeps the graph's own deadlines (none): the scheduler's are not written.
  for (const RunnableInfo& r : s.runnables) CHECK(r.deadlineNs == kNoDuration);
  CHECK(verifySchedule(s).ok());
  CHECK_THAT(note.text(), Catch::Contains("chains over their requirements by 12.2ms -> 0ns"));

  // A requirement no schedule meets (Src and Sink take 2 ms) is still refused, with what was tried.
  const std::string path = "/tmp/tactus_chain_search_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << backgroundFirst("        MaxReaction: 1ms\n");
  std::ostringstream o, e;
  CHECK(runCompileCommand({"-q", "-i", path, "-o", path + ".tsched"}, o, e) == 1);
  CHECK_THAT(e.str(), Catch::Contains("chain 'Loop': its reaction 2.2ms"));
  CHECK_THAT(e.str(), Catch::Contains("chain-guided scheduling:"));
  // Met with chain-guided scheduling: the compile succeeds and says so.
  std::ofstream(path) << backgroundFirst("        MaxReaction: 10ms\n");
  std::ostringstream o2, e2;
  CHECK(runCompileCommand({"-q", "-i", path, "-o", path + ".tsched"}, o2, e2) == 0);
  CHECK_THAT(o2.str() + e2.str(), Catch::Contains("chain 'Loop'  reaction 2.2ms (max 10ms)"));
  CHECK_THAT(o2.str() + e2.str(), Catch::Contains("chain-guided scheduling: 2 rounds, 1 kept"));
  std::remove(path.c_str());
  std::remove((path + ".tsched").c_str());
}

TEST_CASE("without chains over their requirements the schedule is the first one, unless favouring", "[chains]") {
  auto g = parseGraph(backgroundFirst("        MaxReaction: 30ms\n"), "g.yaml");
  REQUIRE(g.has_value());
  auto first = scheduleGraph(*g, ScheduleOptions{});
  REQUIRE(first.has_value());
  CHECK_FALSE(chainsToShorten(*g, *first, 100000, false));
  // --favour-chains: the chain's waiting (Background before Src) is cut, the chain shortened.
  REQUIRE(chainsToShorten(*g, *first, 100000, true));
  ChainSearchNote note;
  Schedule s = chainGuidedSchedule(*g, ScheduleOptions{}, 100000, true, *first, note);
  REQUIRE(analyseChannels(*g, s, 100000).has_value());
  CHECK(s.chains[0].reactionNs < 22 * kMs + 200000);
  CHECK(note.sumAfterNs < note.sumBeforeNs);
  CHECK(verifySchedule(s).ok());
}
