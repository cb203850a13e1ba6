// Tests of tactus-report's measured chains (tools/chains.cpp) on hand-made logs of the example
// graphs with channels and chains: a run at exactly the planned times measures the planned bounds
// less their allowance, occurrences counted by hand, a late run's occurrences named as misses, the
// outputs, and --fail-on-chain-miss.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis.hpp"
#include "chains.hpp"
#include "compile.hpp"
#include "outputs.hpp"
#include "report_fixtures.hpp"
#include "tactus/core/channels.hpp"
#include "tactus/core/schedule_file.hpp"

using namespace tactus;
using namespace tactus::report;
using namespace tactus::report::test;

namespace {

// An example graph of schedules/ compiled (default chain allowance, 100 us per runnable), saved
// at `path`.
Schedule compileExample(const std::string& name, const std::string& path) {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  if (!root) root = TACTUS_TEST_SOURCE_ROOT;
  std::ostringstream o, e;
  REQUIRE(compiler::runCompileCommand({"-q", "-i", std::string(root) + "/schedules/" + name, "-o", path}, o, e) == 0);
  auto s = loadScheduleFile(path);
  REQUIRE(s);
  return std::move(*s);
}

// A run of `iterations` iterations of every hyperepoch exactly as planned: every frame released on
// time, every instance from its planned start to its planned end; `late` moves the end of one
// (instance, iteration) later by its value.
std::vector<EventRecord> plannedRun(const Schedule& s, std::uint32_t iterations,
                                    const std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t>& late = {}) {
  std::vector<EventRecord> r;
  for (std::uint32_t it = 0; it < iterations; ++it) {
    for (EpochId e : s.epochs.ids()) {
      const std::int64_t start = kT0 + it * s.hyperepochs[s.epochs[e].hyperepoch].periodNs;
      for (std::uint32_t f = 0; f < s.epochs[e].frames; ++f) {
        const std::int64_t release = start + f * s.epochs[e].periodNs;
        r.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, index(e), it, f, release, release});
      }
    }
    for (InstanceId i : s.instances.ids()) {
      const InstanceInfo& in = s.instances[i];
      const std::int64_t start = kT0 + it * s.hyperepochs[instanceHyperepoch(s, i)].periodNs;
      const auto moved = late.find({index(i), it});
      const std::int64_t extra = moved == late.end() ? 0 : moved->second;
      r.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, index(i), it, index(in.runnable), start + in.startNs,
                   start + in.endNs + extra});
    }
  }
  return r;
}

InstanceId instanceOf(const Schedule& s, const std::string& runnable, std::uint32_t frame) {
  for (InstanceId i : s.instances.ids())
    if (s.runnables[s.instances[i].runnable].name == runnable && s.instances[i].frame == frame) return i;
  FAIL("no instance " << runnable << " frame " << frame);
  return InstanceId{};
}

}  // namespace

TEST_CASE("a run at the planned times measures every chain's planned bounds less their allowance", "[report][chains]") {
  for (const char* graph : {"camera_pipeline_chain.yaml", "control_loop_chain.yaml", "sensor_fusion_channels.yaml"}) {
    INFO(graph);
    const std::string path = tempPath("chains.tsched");
    const Schedule s = compileExample(graph, path);
    std::remove(path.c_str());
    REQUIRE_FALSE(s.chains.empty());
    const Analysis a = analyze(s, makeLog(s, plannedRun(s, 6)));
    REQUIRE(a.chains.size() == s.chains.size());
    for (std::size_t c = 0; c < s.chains.size(); ++c) {
      INFO(s.chains[c].name);
      const ChainStats& x = a.chains[c];
      CHECK(x.error.empty());
      CHECK(x.reaction.count > 0);
      CHECK(x.age.count > 0);
      CHECK(x.reaction.maxNs == s.chains[c].reactionNs - chainAllowanceNs(s.chains[c]));
      CHECK(x.age.maxNs == s.chains[c].ageNs - chainAllowanceNs(s.chains[c]));
      CHECK(x.reactionsOverPlanned + x.reactionsOverRequired + x.agesOverPlanned + x.agesOverRequired == 0);
    }
    CHECK(chainMisses(s, a).empty());
  }
}

TEST_CASE("chain occurrences are counted and measured as the mapping says, by hand", "[report][chains]") {
  // camera_pipeline_chain: Capture every 25 ms (frames 0-3), Plan frame 0 (15 ms) reads Detect
  // frame 0, Plan frame 1 (65 ms) Detect frame 2; Actuate ends at 26 and 76 ms.
  //   reactions: Capture frame 0 -> Actuate 0 (26 ms), 1 -> Actuate 1 (76 - 25 = 51 ms), 2 -> Actuate
  //   1 (26 ms), 3 -> Actuate 0 of the next iteration (126 - 75 = 51 ms): none for the last
  //   iteration's frame 3. Ages: every Actuate run, 26 ms.
  const std::string path = tempPath("camera.tsched");
  const Schedule s = compileExample("camera_pipeline_chain.yaml", path);
  std::remove(path.c_str());
  constexpr std::uint32_t kIterations = 10;
  const Analysis a = analyze(s, makeLog(s, plannedRun(s, kIterations)));
  const ChainStats& x = a.chains.at(0);
  REQUIRE(x.reactions.size() == std::size_t{4} * kIterations - 1);
  REQUIRE(x.ages.size() == std::size_t{2} * kIterations);
  CHECK(x.reaction.medianNs == 26 * kMs);
  CHECK(x.reaction.maxNs == 51 * kMs);
  CHECK(x.age.minNs == 26 * kMs);
  CHECK(x.age.maxNs == 26 * kMs);
  const ChainOccurrence& fourth = x.reactions[3];  // Capture frame 3 of iteration 0
  CHECK(fourth.source.instance == instanceOf(s, "Capture", 3));
  CHECK(fourth.source.iteration == 0);
  CHECK(fourth.last.instance == instanceOf(s, "Actuate", 0));
  CHECK(fourth.last.iteration == 1);
  CHECK(fourth.releaseNs == kT0 + 75 * kMs);
  CHECK(x.ages[1].source.instance == instanceOf(s, "Capture", 2));  // Actuate frame 1 decides on camera frame 2

  // A log without release records: the releases come from the iterations' starts.
  std::vector<EventRecord> runsOnly;
  for (const EventRecord& r : plannedRun(s, kIterations))
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRun)) runsOnly.push_back(r);
  const Analysis b = analyze(s, makeLog(s, runsOnly));
  CHECK(b.chains.at(0).reaction.maxNs == 51 * kMs);
  CHECK(b.chains.at(0).ages.size() == std::size_t{2} * kIterations);
}

TEST_CASE("a reader of the previous iteration's version has no data age in the first iteration", "[report][chains]") {
  // sensor_fusion_channels: the tracker's early runs read the fusion of the previous iteration.
  const std::string path = tempPath("fusion.tsched");
  const Schedule s = compileExample("sensor_fusion_channels.yaml", path);
  std::remove(path.c_str());
  std::size_t previousReads = 0;
  for (const ChannelRead& read : s.channelReads) previousReads += read.previousIteration ? 1 : 0;
  REQUIRE(previousReads > 0);
  const Analysis one = analyze(s, makeLog(s, plannedRun(s, 1)));
  const Analysis two = analyze(s, makeLog(s, plannedRun(s, 2)));
  for (std::size_t c = 0; c < s.chains.size(); ++c) {
    // Every last-runnable run of the second iteration has its data; of the first, fewer.
    const std::size_t lastRuns = two.chains[c].ages.size() - one.chains[c].ages.size();
    CHECK(one.chains[c].ages.size() < lastRuns);
    for (const ChainOccurrence& o : two.chains[c].ages) CHECK(o.source.iteration >= 0);
  }
}

TEST_CASE("a late run makes its chain occurrences misses, naming the iterations and the bounds", "[report][chains]") {
  const std::string path = tempPath("late.tsched");
  const Schedule s = compileExample("camera_pipeline_chain.yaml", path);
  // Actuate frame 1 of iteration 4 ends 10 ms late: the reaction to camera frame 1 takes 61 ms (over
  // the planned 51.5 ms and MaxReaction 60 ms), to camera frame 2 36 ms (within both); the data
  // age at that run 36 ms (over the planned 26.5 ms and MaxAge 30 ms).
  const InstanceId actuate = instanceOf(s, "Actuate", 1);
  const auto records = plannedRun(s, 8, {{{index(actuate), 4}, 10 * kMs}});
  const Analysis a = analyze(s, makeLog(s, records));
  const ChainStats& x = a.chains.at(0);
  CHECK(x.reaction.maxNs == 61 * kMs);
  CHECK(x.reactionsOverPlanned == 1);
  CHECK(x.reactionsOverRequired == 1);
  CHECK(x.age.maxNs == 36 * kMs);
  CHECK(x.agesOverPlanned == 1);
  CHECK(x.agesOverRequired == 1);
  const std::vector<ChainMiss> misses = chainMisses(s, a);
  REQUIRE(misses.size() == 2);
  CHECK(misses[0].reaction);
  CHECK(describeChainMiss(s, misses[0]) ==
        "chain 'CameraToActuate' reaction from Sensing.Capture frame 1 of iteration 4 to Planning.Actuate frame 1 "
        "of iteration 4: 61ms, over its planned 51.5ms and its MaxReaction 60ms");
  CHECK(describeChainMiss(s, misses[1]) ==
        "chain 'CameraToActuate' data age from Sensing.Capture frame 2 of iteration 4 to Planning.Actuate frame 1 "
        "of iteration 4: 36ms, over its planned 26.5ms and its MaxAge 30ms");

  // The outputs: the text table, JSON, the HTML view's table (a miss row), the trace's slices.
  const LogFile log = makeLog(s, records);
  const std::string text = formatText(s, log, a);
  CHECK(text.find("CameraToActuate  reaction") != std::string::npos);
  const std::string json = formatJson(s, log, a);
  CHECK(json.find("\"chains\":[{\"name\":\"CameraToActuate\",\"reaction\":{\"count\":31,") != std::string::npos);
  CHECK(json.find("\"reactions_over_planned\":1,\"reactions_over_required\":1") != std::string::npos);
  CHECK(json.find("\"planned_age_ns\":26500000,\"max_age_ns\":30000000") != std::string::npos);
  const std::string html = view::renderHtml(s, nullptr);
  CHECK(html.find("chains-measured") == std::string::npos);
  const view::Execution execution = makeExecution(s, log, a);
  CHECK(countOf(view::renderHtml(s, &execution), "<tr class=\"miss\"><td>CameraToActuate") == 2);
  std::ostringstream trace;
  writeTrace(trace, s, &log, &a);
  CHECK(countOf(trace.str(), "\"ph\":\"b\",\"cat\":\"chain") == x.reactions.size() + x.ages.size());
  CHECK(countOf(trace.str(), "\"name\":\"MISS CameraToActuate reaction\"") == 2);  // its b and e

  // --fail-on-chain-miss: 1 naming them; 0 on the run as planned.
  const std::string lateLog = writeLogFile(s, records), onTime = writeLogFile(s, plannedRun(s, 8));
  std::string out, err;
  CHECK(runCommand({lateLog, path, "--fail-on-chain-miss"}, out, err) == 1);
  CHECK(err.find("tactus-report: chain 'CameraToActuate' reaction from Sensing.Capture frame 1 of iteration 4") !=
        std::string::npos);
  CHECK(err.find("2 chain occurrences over their planned bound or requirement in " + lateLog +
                 " ('CameraToActuate': reactions 1, data ages 1)") != std::string::npos);
  CHECK(runCommand({lateLog, path}, out, err) == 0);  // without the flag: reported, not failed
  CHECK(runCommand({onTime, path, "--fail-on-chain-miss"}, out, err) == 0);
  CHECK(err.empty());
  CHECK(runCommand({"--schedule", path, "--html", "x.html", "--fail-on-chain-miss"}, out, err) == 2);
  for (const auto& p : {path, lateLog, onTime}) std::remove(p.c_str());
}
