// Tests of the tactus-compile command: options, exit codes, outputs, determinism.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compile.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "test_files.hpp"

using namespace tactus;
using namespace tactus::compiler;

using tactus::test::readAll;
using tactus::test::sourceRoot;
using tactus::test::writeAll;

namespace {

std::string tempPath(const std::string& name) { return test::scratchPath("compile", name); }

struct Run {
  int code;
  std::string out, err;
};

Run compile(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = runCompileCommand(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("compile writes a verified schedule file and a JSON report", "[compile]") {
  std::string graph = sourceRoot() + "/schedules/two_client.yaml";
  std::string sched = tempPath("a.tsched"), json = tempPath("a.json");
  Run r = compile({"-i", graph, "-o", sched, "-k", json});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("wrote " + sched));
  auto loaded = loadScheduleFile(sched);
  REQUIRE(loaded.has_value());
  CHECK(verifySchedule(*loaded).ok());
  std::string report = readAll(json);
  for (const char* key :
       {"\"name\"", "\"period_ns\"", "\"schedule_length_ns\"", "\"critical_path_ns\"", "\"lower_bound_ns\"",
        "\"runnables\"", "\"deadlines_missed\"", "\"proven_optimal\"", "\"compile_time_ms\""})
    CHECK_THAT(report, Catch::Contains(key));
  std::remove(sched.c_str());
  std::remove(json.c_str());
}

TEST_CASE("compiling the same graph twice gives byte-identical schedule files", "[compile]") {
  for (const char* name : {"minimal_cpu", "two_client", "multi_rate", "cuda_two_client", "round_robin"}) {
    INFO(name);
    std::string graph = sourceRoot() + "/schedules/" + name + ".yaml";
    std::string a = tempPath("d1.tsched"), b = tempPath("d2.tsched");
    Run r1 = compile({"-i", graph, "-o", a});
    INFO(r1.err);
    REQUIRE(r1.code == 0);
    REQUIRE(compile({"-i", graph, "-o", b, "-j", "2"}).code == 0);
    CHECK(readAll(a) == readAll(b));
    CHECK_FALSE(readAll(a).empty());
    std::remove(a.c_str());
    std::remove(b.c_str());
  }
}

TEST_CASE("the default output is the input's name with the schedule extension", "[compile]") {
  CHECK(defaultOutputPath("dir/graph.yaml") == "dir/graph.tsched");
  CHECK(defaultOutputPath("graph") == "graph.tsched");
  CHECK(defaultOutputPath("dir.d/graph") == "dir.d/graph.tsched");
  CHECK(defaultOutputPath("/a/.hidden") == "/a/.hidden.tsched");
  std::string graph = tempPath("copy.yaml");
  writeAll(graph, readAll(sourceRoot() + "/schedules/minimal_cpu.yaml"));
  Run r = compile({"-i", graph});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string sched = tempPath("copy.tsched");
  CHECK(loadScheduleFile(sched).has_value());
  std::remove(sched.c_str());
  std::remove(graph.c_str());
}

TEST_CASE("bad command lines exit 2 with a message", "[compile]") {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  std::vector<Case> cases = {
      {{}, "no input graph"},
      {{"-i"}, "option '-i' needs a value"},
      {{"-i", "g.yaml", "-t", "abc"}, "option -t: 'abc'"},
      {{"-i", "g.yaml", "-t", "-1"}, "option -t: '-1'"},
      {{"-i", "g.yaml", "-j", "0"}, "option -j: '0'"},
      {{"-i", "g.yaml", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"g.yaml"}, "unexpected argument 'g.yaml'"},
      {{"-i", "a.yaml", "-i", "b.yaml"}, "option '-i' given twice"},
      {{"-i", "a.yaml", "-o", "a.tsched", "-o", "b.tsched"}, "option '-o' given twice"},
      {{"-i", "g.yaml", "-wt"}, "option '-wt' needs a value"},
      {{"-i", "g.yaml", "-wt", "500"}, "option -wt: '500'"},
      {{"-i", "g.yaml", "-wt", "0us"}, "option -wt: '0us'"},
      {{"-i", "g.yaml", "-wt", "1ms", "-nrf"}, "-wt and -nrf exclude each other"},
  };
  for (const Case& c : cases) {
    Run r = compile(c.args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
  }
  Run help = compile({"--help"});
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Catch::Contains("usage: tactus-compile"));
  Run version = compile({"-V"});
  CHECK(version.code == 0);
  CHECK_THAT(version.out, Catch::Contains("schedule file format 1"));
}

TEST_CASE("a graph that cannot be compiled exits 1 and writes nothing", "[compile]") {
  std::string graph = tempPath("bad.yaml"), sched = tempPath("bad.tsched");
  writeAll(graph,
           "Version: 3.0.0\nG:\n  Identifier: 1\n  Resources:\n    CPU: [CPU0]\n"
           "  Hyperepochs:\n    - H:\n        Epochs:\n          - E: {Period: 1ms}\n"
           "  Clients:\n    - C:\n        Epochs:\n          - H.E:\n              Runnables:\n"
           "                - A: {WCET: 2ms, Resources: [CPU]}\n");
  Run r = compile({"-i", graph, "-o", sched});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("'H'"));
  CHECK(::access(sched.c_str(), F_OK) != 0);
  Run missing = compile({"-i", tempPath("nonexistent.yaml")});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("nonexistent.yaml"));
  std::remove(graph.c_str());
}

TEST_CASE("a WCET side file overrides the graph's WCETs and changes the source hash", "[compile]") {
  std::string graph = sourceRoot() + "/schedules/minimal_cpu.yaml";
  std::string plain = tempPath("w0.tsched"), with = tempPath("w1.tsched"), wcet = tempPath("wcet.yaml");
  REQUIRE(compile({"-i", graph, "-o", plain}).code == 0);
  auto base = loadScheduleFile(plain);
  REQUIRE(base.has_value());
  const RunnableInfo& first = base->runnables.at(0);
  std::string qualified = base->clients.at(index(first.client)).name + "." + first.name;
  writeAll(wcet, qualified + ": " + std::to_string(first.wcetNs + 1000) + "\n");
  Run r = compile({"-i", graph, "-o", with, "--wcet", wcet});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto changed = loadScheduleFile(with);
  REQUIRE(changed.has_value());
  CHECK(changed->runnables.at(0).wcetNs == first.wcetNs + 1000);
  CHECK(changed->sourceHash != base->sourceHash);
  for (const std::string& p : {plain, with, wcet}) std::remove(p.c_str());
}

TEST_CASE("fusion options -wt and -nrf give verified, reproducible schedule files", "[compile]") {
  for (const char* name : {"two_client", "multi_rate", "round_robin"}) {
    INFO(name);
    std::string graph = sourceRoot() + "/schedules/" + name + ".yaml";
    std::string a = tempPath("f1.tsched"), b = tempPath("f2.tsched"), c = tempPath("f3.tsched");
    Run r1 = compile({"-i", graph, "-o", a, "-wt", "1s", "--search-steps", "5000"});
    INFO(r1.err);
    REQUIRE(r1.code == 0);
    REQUIRE(compile({"-i", graph, "-o", b, "-wt", "1s", "--search-steps", "5000", "-j", "2"}).code == 0);
    CHECK(readAll(a) == readAll(b));
    auto loaded = loadScheduleFile(a);
    REQUIRE(loaded.has_value());
    CHECK(verifySchedule(*loaded).ok());
    // -nrf schedules the same runnables, each instance once.
    REQUIRE(compile({"-i", graph, "-o", c, "-nrf"}).code == 0);
    auto plain = loadScheduleFile(c);
    REQUIRE(plain.has_value());
    CHECK(plain->instances.size() == loaded->instances.size());
    std::remove(a.c_str());
    std::remove(b.c_str());
    std::remove(c.c_str());
  }
  CHECK_THAT(compile({"--help"}).out, Catch::Contains("-nrf"));
}

TEST_CASE("-v times each step and prints every resource's planned timeline", "[compile]") {
  std::string graph = sourceRoot() + "/schedules/two_client.yaml";
  std::string sched = tempPath("v.tsched");
  Run quiet = compile({"-i", graph, "-o", sched});
  Run verbose = compile({"-i", graph, "-o", sched, "-v"});
  REQUIRE(verbose.code == 0);
  CHECK_THAT(quiet.out, !Catch::Contains("planned timelines"));
  for (const char* step : {"tactus-compile: parse", "tactus-compile: schedule", "tactus-compile: verify",
                           "tactus-compile: write", "planned timelines"})
    CHECK_THAT(verbose.out, Catch::Contains(step));
  auto loaded = loadScheduleFile(sched);
  REQUIRE(loaded.has_value());
  for (const TimelineInfo& t : loaded->timelines)
    CHECK_THAT(verbose.out, Catch::Contains("  " + loaded->resources[t.resource].name + ": "));
  const RunnableInfo& first = loaded->runnables[loaded->instances[0].runnable];
  CHECK_THAT(verbose.out, Catch::Contains(loaded->clients[first.client].name + "." + first.name + " f0"));
  // The hash printed is the one the file carries.
  CHECK_THAT(verbose.out, Catch::Contains("content hash " + hashToHex(scheduleContentHash(*loaded))));
  std::remove(sched.c_str());
}

TEST_CASE("unreadable inputs and outputs give messages, never a crash", "[compile]") {
  Run dir = compile({"-i", "/tmp"});
  CHECK(dir.code == 1);
  CHECK_THAT(dir.err, Catch::Contains("graph file '/tmp': it is a directory"));
  Run device = compile({"-i", "/dev/zero"});
  CHECK(device.code == 1);
  CHECK_THAT(device.err, Catch::Contains("not a regular file"));
  std::string graph = sourceRoot() + "/schedules/minimal_cpu.yaml";
  Run wcetDir = compile({"-i", graph, "-o", tempPath("wd.tsched"), "--wcet", "/tmp"});
  CHECK(wcetDir.code == 1);
  CHECK_THAT(wcetDir.err, Catch::Contains("WCET file '/tmp': it is a directory"));
  Run outDir = compile({"-i", graph, "-o", "/tmp"});
  CHECK(outDir.code == 1);
  CHECK_THAT(outDir.err, Catch::Contains("schedule file '/tmp': it is a directory"));

  std::string nul = tempPath("nul.yaml");
  writeAll(nul, std::string("Version: 3.0.0\nG:\n  Iden\0tifier: 1\n", 33));
  Run binary = compile({"-i", nul});
  CHECK(binary.code == 1);
  CHECK_THAT(binary.err, Catch::Contains(nul + ":3: the graph contains a NUL byte"));
  std::remove(nul.c_str());

  // A report that cannot be written to standard output is an error, not a silent success.
  std::ostringstream out, err;
  out.setstate(std::ios::badbit);
  std::string sched = tempPath("so.tsched");
  CHECK(runCompileCommand({"-i", graph, "-o", sched}, out, err) == 1);
  CHECK_THAT(err.str(), Catch::Contains("cannot write the report to standard output"));
  std::remove(sched.c_str());
}

TEST_CASE("a submitter whose work waits for another core runs at once and keeps its CPU busy (gpu_idle_cpu.yaml)",
          "[compile][gpu]") {
  // Sense (8 ms) runs on CPU1; Brain's Submit (0.5 ms, CPU0) submits Infer (3 ms, GPU0), which
  // waits for Sense; Plan (6 ms, CPU0) follows Submit. The old rule made Submit depend on Sense
  // (its work's CPU predecessor) and held CPU0 idle meanwhile:
  //   Sense 0-8 ms, Submit 8-8.5, Infer 8.5-11.5, Plan 8.5-14.5: length 14.5 ms.
  // Now the stream waits for Sense on the GPU:
  //   Sense 0-8 ms, Submit 0-0.5, Plan 0.5-6.5, Infer 8-11: length 11 ms (Sense + Infer, the bound).
  constexpr std::int64_t kMs = 1'000'000;
  const std::string graph = sourceRoot() + "/schedules/gpu_idle_cpu.yaml";
  const std::string sched = tempPath("idle.tsched");
  Run r = compile({"-i", graph, "-o", sched});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto s = loadScheduleFile(sched);
  std::remove(sched.c_str());
  REQUIRE(s.has_value());
  CHECK(verifySchedule(*s).ok());
  auto named = [&](const std::string& qualified) -> const InstanceInfo& {
    for (const InstanceInfo& i : s->instances)
      if (qualifiedName(*s, i.runnable) == qualified) return i;
    FAIL("no instance of " << qualified);
    return s->instances[InstanceId{0}];
  };
  const InstanceInfo& sense = named("Sensor.Sense");
  const InstanceInfo& submit = named("Brain.Submit");
  const InstanceInfo& plan = named("Brain.Plan");
  const InstanceInfo& infer = named("Brain.Infer");
  CHECK(s->resources[sense.resources[0]].name == "CPU1");
  CHECK(s->resources[submit.resources[0]].name == "CPU0");
  CHECK(s->resources[plan.resources[0]].name == "CPU0");
  CHECK(submit.dependencies.empty());  // no implicit dependency on Sense
  CHECK(submit.startNs < sense.endNs);
  CHECK(plan.startNs < sense.endNs);
  CHECK(infer.startNs >= sense.endNs);  // the work itself still waits for Sense
  std::int64_t length = 0;
  for (const InstanceInfo& i : s->instances) length = std::max(length, i.endNs);
  CHECK(length < 14 * kMs + kMs / 2);  // below the old rule's 14.5 ms
  CHECK(length == 11 * kMs);
}

TEST_CASE("work queued first that waits for the stream's other submitter compiles and verifies (issue 44)",
          "[compile][gpu]") {
  // sub0 submits k0, sub1 submits k1, both on S1; k0 waits for sub1, k1 for c0 (after sub0). Each
  // order needs the second submission queued while the first work still waits: submitting sub0
  // first, k0 waits for sub1 behind it; the list scheduler forced one of them past the stream's
  // order, and the verifier caught it ("internal error: ... fails verification").
  const std::string yaml = R"(Version: 3.0.0
g113:
  Identifier: 113
  Resources: {CPU: [CPU0, CPU1], GPU: [dGPU], MUTEX: [M0]}
  Hyperepochs:
    - h: {Period: 100ms, Resources: [CPU0, CPU1, dGPU, M0], Epochs: [e: {Period: 100ms}]}
  Clients:
    - A:
        Resources: {CUDA_STREAM: [S1: dGPU]}
        Epochs:
          - h.e:
              Runnables:
                - sub0: {WCET: 20us, Resources: [CPU0, S1], Submits: A.k0}
                - k0: {WCET: 3000us, Resources: [dGPU], Dependencies: [A.c1, A.sub1]}
                - sub1: {WCET: 100us, Resources: [CPU0, S1], Submits: A.k1}
                - k1: {WCET: 2000us, Resources: [dGPU], Dependencies: [A.c0, A.c1]}
                - c0: {WCET: 500us, Resources: [CPU1], Dependencies: [A.sub0]}
                - c1: {WCET: 1000us, Resources: [CPU1]}
                - c2: {WCET: 1500us, Resources: [CPU1, M0]}
    - B:
        Epochs: [h.e: {Runnables: [c0: {WCET: 1000us, Resources: [CPU1], Dependencies: [A.c1, A.c2, A.sub0]}]}]
)";
  const std::string graph = tempPath("issue44.yaml");
  writeAll(graph, yaml);
  const std::string sched = tempPath("issue44.tsched");
  // The first schedule, and the search, which proves 6 ms optimal (k0 then k1 on the GPU after c1).
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--search-steps", "5000"}}) {
    std::vector<std::string> args{"-i", graph, "-o", sched, "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    INFO((extra.empty() ? "first schedule" : "search"));
    Run r = compile(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
    auto s = loadScheduleFile(sched);
    REQUIRE(s.has_value());
    CHECK(verifySchedule(*s).ok());
    if (!extra.empty()) CHECK_THAT(r.out, Catch::Contains("6ms (proven optimal)"));
  }
  std::remove(sched.c_str());
  std::remove(graph.c_str());
}

TEST_CASE("the report counts the client switches on the cores, before and after grouping (--no-grouping)",
          "[compile][grouping]") {
  // Three clients, each a chain of six 20us runnables, on one core: equally urgent, so the search
  // alternates them; grouped, the core switches client twice.
  std::string yaml =
      "Version: 3.0.0\nG:\n  Identifier: 3\n  Resources: {CPU: [CPU0]}\n"
      "  Hyperepochs: [H: {Period: 10ms, Epochs: [E: {Period: 10ms}]}]\n  Clients:\n";
  for (int c = 0; c < 3; ++c) {
    yaml += "    - C" + std::to_string(c) + ":\n        Epochs:\n          - H.E:\n              Runnables:\n";
    for (int k = 0; k < 6; ++k) {
      yaml += "                - R" + std::to_string(k) + ": {WCET: 20us, Resources: [CPU]" +
              (k > 0 ? ", Dependencies: [C" + std::to_string(c) + ".R" + std::to_string(k - 1) + "]" : "") + "}\n";
    }
  }
  const std::string graph = tempPath("clients.yaml"), sched = tempPath("clients.tsched"),
                    json = tempPath("clients.json");
  writeAll(graph, yaml);
  Run grouped = compile({"-i", graph, "-o", sched, "-k", json});
  INFO(grouped.err);
  REQUIRE(grouped.code == 0);
  CHECK_THAT(grouped.out, Catch::Contains("client switches   2 on the cores (17 before grouping)"));
  CHECK_THAT(readAll(json), Catch::Contains("\"client_switches\": 2,\n      \"client_switches_before_grouping\": 17"));
  Run plain = compile({"-i", graph, "-o", sched, "-k", json, "--no-grouping"});
  REQUIRE(plain.code == 0);
  CHECK_THAT(plain.out, Catch::Contains("client switches   17 on the cores\n"));
  CHECK_THAT(readAll(json), Catch::Contains("\"client_switches\": 17,"));
  for (const std::string& f : {graph, sched, json}) std::remove(f.c_str());
}
