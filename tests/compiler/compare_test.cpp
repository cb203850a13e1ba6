// Tests of `tactus-compile --compare OLD.tsched`: what changes against an old schedule file.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compare.hpp"
#include "compile.hpp"
#include "graph_parser.hpp"
#include "report.hpp"
#include "scheduler.hpp"
#include "test_files.hpp"

using namespace tactus;
using namespace tactus::compiler;

using tactus::test::readAll;
using tactus::test::sourceRoot;
using tactus::test::writeAll;

namespace {

std::string tempPath(const std::string& name) { return test::scratchPath("compare", name); }

// `text` with `from` replaced by `to` (once; `from` must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

struct Run {
  int code;
  std::string out, err;
};

Run compile(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = runCompileCommand(args, out, err);
  return {code, out.str(), err.str()};
}

// The chain graph, compiled to `old` (the schedule deployed).
std::string compileOld(const std::string& old) {
  const std::string graph = sourceRoot() + "/schedules/control_loop_chain.yaml";
  Run r = compile({"-q", "-i", graph, "-o", old});
  INFO(r.err);
  REQUIRE(r.code == 0);
  return readAll(graph);
}

}  // namespace

TEST_CASE("--compare names the changed length, load and chain values, old and new", "[compile][compare]") {
  const std::string old = tempPath("old.tsched"), now = tempPath("new.tsched"), json = tempPath("new.json");
  const std::string graph = tempPath("new.yaml");
  // A WCET measured longer (Control 3ms -> 4ms on CPU1) and a chain bound relaxed (20ms -> 25ms).
  std::string text = compileOld(old);
  text = replaced(text, "Control: {WCET: 3ms", "Control: {WCET: 4ms");
  text = replaced(text, "MaxAge: 20ms", "MaxAge: 25ms");
  writeAll(graph, text);
  Run r = compile({"-q", "-i", graph, "-o", now, "-k", json, "--compare", old});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("compared with " + old + ": "));
  CHECK_THAT(r.out, Catch::Contains("hyperepoch 'Control'"));
  // CPU1 holds Estimate twice (2ms) and Control once: 7ms, now 8ms.
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*load CPU1 +7ms +8ms +\\+1ms\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*load CPU0 +1.3ms +1.3ms +unchanged\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*schedule length +17.5ms +18.5ms +\\+1ms\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Contains("chain 'ImuToCommand'"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*max age +20ms +25ms +\\+5ms\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*data age +[0-9.]+ms +[0-9.]+ms +\\+1ms\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*max reaction +30ms +30ms +unchanged\n[\\s\\S]*"));
  CHECK_THAT(r.out, !Catch::Contains("nothing changed"));
  CHECK_THAT(r.out, !Catch::Contains("the old schedule is of graph"));  // same graph, same identifier

  const std::string report = readAll(json);
  CHECK_THAT(report, Catch::Contains("\"compare\": {"));
  CHECK_THAT(report, Catch::Contains("\"old\": \"" + old + "\""));
  CHECK_THAT(report, Catch::Contains("{\"name\": \"CPU1\", \"presence\": \"both\", \"load_ns\": {\"old\": 7000000, "
                                     "\"new\": 8000000, \"difference\": 1000000}}"));
  CHECK_THAT(report, Catch::Contains("\"schedule_length_ns\": {\"old\": 17500000, \"new\": 18500000, "
                                     "\"difference\": 1000000}"));
  CHECK_THAT(report, Catch::Contains("\"max_age_ns\": {\"old\": 20000000, \"new\": 25000000, "
                                     "\"difference\": 5000000}"));
  CHECK_THAT(report, Catch::Contains("\"max_reaction_ns\": {\"old\": 30000000, \"new\": 30000000, "
                                     "\"difference\": 0}"));
  for (const std::string& p : {old, now, json, graph}) std::remove(p.c_str());
}

TEST_CASE("--compare of a graph with its own schedule says nothing changed", "[compile][compare]") {
  // cuda_two_client: its lower bound is the graph's (pinned resources), not its resource types'.
  for (const char* name : {"control_loop_chain", "cuda_two_client", "dla_vpu"}) {
    INFO(name);
    const std::string graph = sourceRoot() + "/schedules/" + name + ".yaml";
    const std::string old = tempPath("self_old.tsched"), now = tempPath("self_new.tsched");
    const std::string json = tempPath("self.json");
    REQUIRE(compile({"-q", "-i", graph, "-o", old}).code == 0);
    Run r = compile({"-q", "-i", graph, "-o", now, "-k", json, "--compare", old});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("compared with " + old + ": nothing changed\n"));
    CHECK_THAT(r.out, !Catch::Matches("[\\s\\S]*(\\+|-)[0-9.]+(ns|us|ms|s)\n[\\s\\S]*"));
    CHECK_THAT(r.out, !Catch::Contains("added"));
    CHECK_THAT(r.out, !Catch::Contains("removed"));
    CHECK_THAT(readAll(json), Catch::Contains("\"changes\": 0,"));
    for (const std::string& p : {old, now, json}) std::remove(p.c_str());
  }
}

TEST_CASE("--compare lists what was added or removed and says when the graph differs", "[compile][compare]") {
  const std::string old = tempPath("add_old.tsched"), now = tempPath("add_new.tsched");
  const std::string graph = tempPath("add.yaml");
  std::string text = compileOld(old);
  // Another graph name and identifier, a third core with a runnable of its own, no chain.
  text = replaced(text, "ControlLoopChain:\n  Identifier: 32", "ControlLoop2:\n  Identifier: 33");
  text = replaced(text, "CPU: [CPU0, CPU1]", "CPU: [CPU0, CPU1, CPU2]");
  text = replaced(text, "Period: 20ms\n        Epochs:",
                  "Period: 20ms\n        Resources: [CPU0, CPU1, CPU2]\n"
                  "        Epochs:");
  text = replaced(text, "Resources: [CPU0], Dependencies: [Controller.Control]}",
                  "Resources: [CPU0], Dependencies: [Controller.Control]}\n"
                  "                - Log: {WCET: 1ms, Resources: [CPU2]}");
  text = text.substr(0, text.find("  Chains:"));
  writeAll(graph, text);
  Run r = compile({"-q", "-i", graph, "-o", now, "--compare", old});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("the old schedule is of graph 'ControlLoopChain' (identifier 32), the new one of "
                                    "'ControlLoop2' (identifier 33): compared by name\n"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*load CPU2 \\(added\\) +- +1ms +added\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Contains("chain 'ImuToCommand' (removed)"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*data age +[0-9.]+ms +- +removed\n[\\s\\S]*"));
  for (const std::string& p : {old, now, graph}) std::remove(p.c_str());
}

TEST_CASE("--compare with an old file that is not a schedule gives a located error", "[compile][compare]") {
  const std::string now = tempPath("bad_new.tsched"), notSchedule = tempPath("not.tsched");
  const std::string graph = sourceRoot() + "/schedules/control_loop_chain.yaml";
  writeAll(notSchedule, readAll(graph));  // a YAML graph, not a schedule file
  Run r = compile({"-q", "-i", graph, "-o", now, "--compare", notSchedule});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tactus-compile: " + notSchedule + ":1: "));
  CHECK(::access(now.c_str(), F_OK) != 0);  // nothing written
  Run missing = compile({"-q", "-i", graph, "-o", now, "--compare", tempPath("absent.tsched")});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains(tempPath("absent.tsched")));
  // The old file is not the one this compilation writes, and standard input is read once.
  Run same = compile({"-q", "-i", graph, "-o", now, "--compare", now});
  CHECK(same.code == 2);
  CHECK_THAT(same.err, Catch::Contains("--compare " + now + " is the schedule file this compilation writes"));
  Run stdinTwice = compile({"-q", "-i", "-", "-o", now, "--compare", "-"});
  CHECK(stdinTwice.code == 2);
  CHECK_THAT(stdinTwice.err, Catch::Contains("--compare - wants standard input"));
  std::remove(notSchedule.c_str());
}

TEST_CASE("--compare lists the graph's changes: WCETs, links, runnables and resources", "[compile][compare]") {
  const std::string old = tempPath("in_old.tsched"), now = tempPath("in_new.tsched"), json = tempPath("in.json");
  const std::string graph = tempPath("in.yaml");
  std::string text = compileOld(old);
  text = replaced(text, "Control: {WCET: 3ms, StartTime: 14ms", "Control: {WCET: 4ms, StartTime: 13ms");
  text = replaced(text, "CPU: [CPU0, CPU1]", "CPU: [CPU0, CPU1, CPU2]");
  text = replaced(text, "Command: {WCET: 500us, Resources: [CPU0], Dependencies: [Controller.Control]}",
                  "Command: {WCET: 500us, Resources: [CPU2], Dependencies: [Controller.Control, Controller.Log]}\n"
                  "                - Log: {WCET: 1ms, Resources: [CPU0], Deadline: 19ms}");
  writeAll(graph, text);
  Run r = compile({"-q", "-i", graph, "-o", now, "-k", json, "--compare", old});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("  graph changes\n"
                                    "    runnable 'Controller.Control' WCET: 3ms -> 4ms\n"
                                    "    runnable 'Controller.Control' start time: 14ms -> 13ms\n"
                                    "    runnable 'Controller.Command' dependencies: Controller.Control -> "
                                    "Controller.Control, Controller.Log\n"
                                    "    runnable 'Controller.Command' resources: CPU0 -> CPU2\n"
                                    "    runnable 'Controller.Log' added\n"
                                    "    resource 'CPU2' added\n"
                                    "  hyperepoch 'Control'"));
  CHECK_THAT(r.out, !Catch::Contains("runnable 'Imu.Sample'"));  // unchanged: not listed
  CHECK_THAT(r.out, Catch::Contains("compared with " + old + ": "));
  const std::string report = readAll(json);
  CHECK_THAT(report, Catch::Contains("{\"item\": \"runnable\", \"name\": \"Controller.Control\", \"change\": \"WCET\", "
                                     "\"old\": \"3ms\", \"new\": \"4ms\"}"));
  CHECK_THAT(report, Catch::Contains("{\"item\": \"resource\", \"name\": \"CPU2\", \"change\": \"added\", "
                                     "\"old\": \"\", \"new\": \"\"}"));

  // Back again: the old graph against the new schedule names the removed runnable and resource.
  Run back = compile({"-q", "-i", sourceRoot() + "/schedules/control_loop_chain.yaml", "-o", tempPath("in_back.tsched"),
                      "--compare", now});
  INFO(back.out << back.err);
  REQUIRE(back.code == 0);
  CHECK_THAT(back.out, Catch::Contains("    runnable 'Controller.Log' removed\n"));
  CHECK_THAT(back.out, Catch::Contains("    resource 'CPU2' removed\n"));
  CHECK_THAT(back.out, Catch::Contains("    runnable 'Controller.Control' WCET: 4ms -> 3ms\n"));
  for (const std::string& p : {old, now, json, graph, tempPath("in_back.tsched")}) std::remove(p.c_str());
}

namespace {

// Two 10ms runnables pinned to CPU0 of two cores: 20ms at least, which the resource types alone
// (CPU0 standing for both cores) put at 10ms.
const char* const kPinned = R"(Version: 3.0.0
Pinned:
  Identifier: 7
  Resources:
    CPU: [CPU0, CPU1]
  Hyperepochs:
    - Main:
        Epochs:
          - Tick: {Period: 50ms}
  Clients:
    - App:
        Epochs:
          - Main.Tick:
              Runnables:
                - A: {WCET: 10ms, Resources: [CPU0]}
                - B: {WCET: 10ms, Resources: [CPU0]}
)";

}  // namespace

TEST_CASE("--compare bounds the old schedule by its runnables' requests, not their types", "[compile][compare]") {
  const std::string old = tempPath("req_old.tsched"), now = tempPath("req_new.tsched");
  const std::string oldGraph = tempPath("req_old.yaml"), newGraph = tempPath("req_new.yaml");
  writeAll(oldGraph, kPinned);
  REQUIRE(compile({"-q", "-i", oldGraph, "-o", old}).code == 0);
  // A runnable added on the other core: the runnables differ, the bound stays 20ms.
  writeAll(newGraph, std::string(kPinned) + "                - C: {WCET: 1ms, Resources: [CPU1]}\n");
  Run r = compile({"-q", "-i", newGraph, "-o", now, "--compare", old});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("    runnable 'App.C' added\n"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*lower bound +20ms +20ms +unchanged\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*schedule length +20ms +20ms +unchanged\n[\\s\\S]*"));
  // A runnable the new graph lacks stands by its resources' types: B removed, the old bound is
  // A on CPU0 and B on either core (10ms), what the types alone give for both.
  writeAll(newGraph, replaced(kPinned, "                - B: {WCET: 10ms, Resources: [CPU0]}\n", ""));
  Run gone = compile({"-q", "-i", newGraph, "-o", now, "--compare", old});
  INFO(gone.out << gone.err);
  REQUIRE(gone.code == 0);
  CHECK_THAT(gone.out, Catch::Contains("    runnable 'App.B' removed\n"));
  CHECK_THAT(gone.out, Catch::Matches("[\\s\\S]*lower bound +10ms +10ms +unchanged\n[\\s\\S]*"));
  for (const std::string& p : {old, now, oldGraph, newGraph}) std::remove(p.c_str());
}

TEST_CASE("--compare sets the bounds computed from each schedule side by side, not the search's",
          "[compile][compare]") {
  const std::string old = tempPath("sb_old.tsched"), graphPath = tempPath("sb.yaml");
  // 2ms, 3ms and 3ms on either core: 4ms by the load, 5ms at best (what a search proves).
  std::string text = replaced(kPinned, "A: {WCET: 10ms, Resources: [CPU0]}", "A: {WCET: 2ms, Resources: [CPU]}");
  text = replaced(text, "B: {WCET: 10ms, Resources: [CPU0]}",
                  "B: {WCET: 3ms, Resources: [CPU]}\n                - C: {WCET: 3ms, Resources: [CPU]}");
  writeAll(graphPath, text);
  REQUIRE(compile({"-q", "-i", graphPath, "-o", old}).code == 0);
  auto graph = parseGraphFile(graphPath);
  REQUIRE(graph.has_value());
  auto schedule = scheduleGraph(*graph, ScheduleOptions{});
  REQUIRE(schedule.has_value());
  REQUIRE(schedule->hyperepochs.size() == 1);
  // The search's own bound: the optimum it proved, above the computed one.
  SearchInfo search;
  search.hyperepochs.resize(1);
  search.hyperepochs[0].searched = true;
  search.hyperepochs[0].lowerBoundNs = 5000000;
  search.hyperepochs[0].firstLengthNs = 5000000;
  CompileReport report = buildReport(*graph, *schedule, &search);
  REQUIRE(report.hyperepochs.at(0).scheduleLengthNs == 5000000);
  CHECK(report.hyperepochs.at(0).lowerBoundNs == 5000000);
  CHECK(report.hyperepochs.at(0).computedLowerBoundNs == 4000000);
  CHECK(report.hyperepochs.at(0).searchLowerBoundNs == 5000000);
  CHECK_THAT(reportJson(report), Catch::Contains("\"lower_bound_ns\": 5000000,\n      \"proven_optimal\": true,\n"
                                                 "      \"search_lower_bound_ns\": 5000000"));
  // The old file, the same schedule read back, has no search: its bound is the computed one.
  auto oldSchedule = loadComparedSchedule(old);
  REQUIRE(oldSchedule.has_value());
  const ScheduleComparison c = compareSchedules(*graph, *oldSchedule, old, *schedule, report);
  CHECK(c.hyperepochs.at(0).lowerBound.oldNs == 4000000);
  CHECK(c.hyperepochs.at(0).lowerBound.newNs == 4000000);
  CHECK(c.changes() == 0);
  for (const std::string& p : {old, graphPath}) std::remove(p.c_str());
}

TEST_CASE("--compare names a client added or removed and a deadline set", "[compile][compare]") {
  const std::string old = tempPath("cl_old.tsched"), now = tempPath("cl_new.tsched"), graph = tempPath("cl.yaml");
  std::string text = compileOld(old);
  text = replaced(text, "Estimate: {WCET: 2ms, StartTime: 1ms, Resources: [CPU1]}",
                  "Estimate: {WCET: 2ms, StartTime: 1ms, Deadline: 8ms, Resources: [CPU1]}");
  text = replaced(text, "  Channels:",
                  "    - Logger:\n"
                  "        Epochs:\n"
                  "          - Control.Loop:\n"
                  "              Runnables:\n"
                  "                - Write: {WCET: 1ms, Resources: [CPU0]}\n"
                  "  Channels:");
  writeAll(graph, text);
  Run r = compile({"-q", "-i", graph, "-o", now, "--compare", old});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("    runnable 'Estimator.Estimate' deadline: none -> 8ms\n"));
  CHECK_THAT(r.out, Catch::Contains("    runnable 'Logger.Write' added\n"));
  CHECK_THAT(r.out, Catch::Contains("    client 'Logger' added\n"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*load CPU0 +1.3ms +2.3ms +\\+1ms\n[\\s\\S]*"));
  // The way back: the client and its runnable removed, the deadline dropped.
  Run back = compile({"-q", "-i", sourceRoot() + "/schedules/control_loop_chain.yaml", "-o", tempPath("cl_back.tsched"),
                      "--compare", now});
  INFO(back.out << back.err);
  REQUIRE(back.code == 0);
  CHECK_THAT(back.out, Catch::Contains("    runnable 'Estimator.Estimate' deadline: 8ms -> none\n"));
  CHECK_THAT(back.out, Catch::Contains("    runnable 'Logger.Write' removed\n"));
  CHECK_THAT(back.out, Catch::Contains("    client 'Logger' removed\n"));
  for (const std::string& p : {old, now, graph, tempPath("cl_back.tsched")}) std::remove(p.c_str());
}
