// The traps a first-time user meets in the compiler (issue 26), caught: did-you-mean and the
// declared names for unknown names, the warning for an epoch whose frames leave its hyperepoch
// partly empty, --werror, and a schedule that does not fit saying why and still writing -k and
// --html. One fixture per kind under fixtures/.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "compile.hpp"
#include "compile_args.hpp"
#include "graph/warnings.hpp"
#include "graph_parser.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/suggest.hpp"
#include "test_files.hpp"
#include "wcet_file.hpp"

using namespace tactus;
using namespace tactus::compiler;

using tactus::test::sourceRoot;

namespace {

std::string fixture(const std::string& name) { return sourceRoot() + "/tests/compiler/fixtures/" + name; }

std::string tempPath(const std::string& name) { return test::scratchPath("traps", name); }

bool exists(const std::string& path) { return std::ifstream(path).good(); }

struct Run {
  int code;
  std::string out, err;
};

Run compile(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = runCompileCommand(args, out, err);
  return {code, out.str(), err.str()};
}

// The message of a fixture that must fail to parse.
std::string parseError(const std::string& name) {
  auto g = parseGraphFile(fixture(name));
  REQUIRE_FALSE(g.has_value());
  return g.error().message;
}

}  // namespace

TEST_CASE("closestName guesses typos but not other instances", "[compiler][traps]") {
  const std::vector<std::string_view> names{"Read", "Preprocess", "Publish"};
  CHECK(closestName("Preprocces", names) == "Preprocess");  // two edits in ten letters
  CHECK(closestName("preprocess", names) == "Preprocess");  // letter case is free
  CHECK(closestName("Raed", names) == "Read");              // a swap of neighbours is one edit
  CHECK(closestName("Write", names).empty());               // nothing close
  CHECK(closestName("Read", names).empty());                // the name itself is no guess
  const std::vector<std::string_view> cpus{"CPU", "CPU0", "CPU1", "GPU0"};
  CHECK(closestName("CPU2", cpus).empty());  // another instance, or the type: listed, not guessed
  CHECK(closestName("cpu1", cpus) == "CPU1");
  const std::vector<std::string_view> socs{"SocA", "SocB"};
  CHECK(closestName("SocC", socs).empty());  // as close to either: no guess
  CHECK(closestName("SocAA", socs) == "SocA");
  const std::vector<std::string_view> keys{"WCET", "Resources", "Dependencies"};
  CHECK(closestName("Dependecies", keys) == "Dependencies");
  CHECK(closestName("wcet", keys) == "WCET");
}

TEST_CASE("nameList quotes the names in order and counts the rest", "[compiler][traps]") {
  const std::vector<std::string_view> names{"a", "b", "c"};
  CHECK(nameList(names) == "'a', 'b', 'c'");
  CHECK(nameList(names, 2) == "'a', 'b' and 1 more");
}

TEST_CASE("an unknown runnable gets the closest declared name and the client's runnables", "[compiler][traps]") {
  CHECK(parseError("unknown_runnable_typo.yaml") ==
        fixture("unknown_runnable_typo.yaml") +
            ":21: runnable 'Camera.Publish': unknown runnable 'Camera.Preprocces' (did you mean "
            "'Camera.Preprocess'? client 'Camera' declares 'Read', 'Preprocess', 'Publish')");
  // The runnable under another client: the client part was the mistake.
  auto g = parseGraph(
      "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  Hyperepochs: [{H: {Epochs: [{E: {Period: 10ms}}]}}]\n"
      "  Clients:\n    - A:\n        Epochs: [{H.E: {Runnables: [{Read: {WCET: 1ms, Resources: [CPU0]}}]}}]\n"
      "    - B:\n        Epochs: [{H.E: {Runnables: [{Use: {WCET: 1ms, Resources: [CPU0], "
      "Dependencies: [B.Read]}}]}}]\n",
      "inline.yaml");
  REQUIRE_FALSE(g.has_value());
  CHECK_THAT(g.error().message,
             Catch::EndsWith("unknown runnable 'B.Read' (did you mean 'A.Read'? client 'B' declares 'Use')"));
}

TEST_CASE("an unknown resource lists what the runnable may use, without guessing another instance",
          "[compiler][traps]") {
  CHECK(parseError("unknown_resource_instance.yaml") ==
        fixture("unknown_resource_instance.yaml") +
            ":23: runnable 'Camera.Read' uses unknown resource 'CPU2' (hyperepoch 'Perception' has 'CPU0', 'CPU1', "
            "'GPU0', 'MEM_BW_MUTEX'; client 'Camera' has 'STREAM0'; types: 'CPU', 'GPU', 'MUTEX', 'CUDA_STREAM')");
  CHECK_THAT(parseError("unknown_resource.yaml"),
             Catch::EndsWith("uses unknown resource 'NO_SUCH_LOCK' (hyperepoch 'H' has 'CPU0', 'CPU1'; types: 'CPU')"));
}

TEST_CASE("a misspelt hardware type, taken for a mutex type, is named when a runnable has no hardware",
          "[compiler][traps]") {
  // `CPUS:` is a legal type (any other type is a scheduling mutex), so CPU0 is a mutex here.
  const std::string yaml =
      "Version: 3.0.0\nG:\n  Resources: {CPUS: [CPU0]}\n  Hyperepochs:\n    - H:\n"
      "        Epochs: [{E: {Period: 10ms}}]\n  Clients:\n    - C:\n        Epochs: [{H.E: {Runnables: [\n"
      "          {A: {WCET: 1ms, Resources: [CPU0]}}]}}]\n";
  auto g = parseGraph(yaml, "g.yaml");
  REQUIRE_FALSE(g.has_value());
  CHECK_THAT(g.error().message, Catch::EndsWith("runnable 'C.A' must hold exactly one hardware resource (a CPU, GPU, "
                                                "DLA or VPU), not 0 ('CPU0' is of type 'CPUS', a scheduling mutex: did "
                                                "you mean type 'CPU'?)"));
  // A mutex type far from every hardware type gets no guess.
  std::string far = yaml;
  far.replace(far.find("CPUS"), 4, "MAP_LOCK");
  auto h = parseGraph(far, "g.yaml");
  REQUIRE_FALSE(h.has_value());
  CHECK_THAT(h.error().message, Catch::EndsWith("hardware resource (a CPU, GPU, DLA or VPU), not 0"));
}

TEST_CASE("an unknown client, epoch or key gets the closest declared name and the list", "[compiler][traps]") {
  CHECK(parseError("unknown_client_typo.yaml") ==
        fixture("unknown_client_typo.yaml") +
            ":24: runnable 'Planner.Plan': unknown client 'Camrea' in 'Camrea.Read' (did you mean 'Camera'? "
            "declared clients: 'Camera', 'Planner')");
  CHECK(parseError("unknown_epoch_typo.yaml") ==
        fixture("unknown_epoch_typo.yaml") +
            ":16: client 'C' names unknown epoch 'Camera' (did you mean 'Perception.Camera'? write "
            "Hyperepoch.Epoch; declared: 'Perception.Camera', 'Perception.Radar')");
  CHECK(parseError("unknown_key.yaml") ==
        fixture("unknown_key.yaml") +
            ":18: unknown key 'Dependecies' in runnable 'C.A' (did you mean 'Dependencies'? allowed: WCET, "
            "Resources, Dependencies, Submits, StartTime, Deadline, Priority, EndMonitorThreshold)");
  CHECK_THAT(parseError("stream_unknown_gpu.yaml"), Catch::EndsWith("(the graph declares no GPU)"));

  auto failure = [](const std::string& yaml) {
    auto g = parseGraph(yaml, "inline.yaml");
    REQUIRE_FALSE(g.has_value());
    return g.error().message;
  };
  // A misspelt Version reads as a second graph id.
  CHECK(failure("Verison: 3.0.0\nG:\n  Hyperepochs: []\n") ==
        "inline.yaml:2: unexpected top-level key 'G': a graph file holds Version and one graph id (already "
        "'Verison') (did you mean 'Version' for 'Verison'?)");
  // A hyperepoch's resource list names global instances.
  CHECK(failure("Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0, CPU1], MUTEX: [MEM_BW]}\n  Hyperepochs:\n"
                "    - A: {Resources: [CPU0], Epochs: [{E: {Period: 1ms}}]}\n"
                "    - B: {Resources: [CPU1, MEMBW], Epochs: [{E: {Period: 1ms}}]}\n  Clients: []\n") ==
        "inline.yaml:6: hyperepoch 'B' lists unknown resource 'MEMBW' (did you mean 'MEM_BW'? name global resource "
        "instances; declared: 'CPU0', 'CPU1', 'MEM_BW')");
  // A misspelt key under the graph id.
  CHECK_THAT(failure("Version: 3.0.0\nG:\n  Hyperepoch: []\n"),
             Catch::Contains("unknown key 'Hyperepoch' in graph 'G' (did you mean 'Hyperepochs'? allowed: "));
}

TEST_CASE("a WCET file naming an unknown runnable gets the closest name and the client's runnables",
          "[compiler][traps]") {
  auto g = parseGraphFile(sourceRoot() + "/schedules/minimal_cpu.yaml");
  REQUIRE(g.has_value());
  auto typo = applyWcetFile(*g, "Pipeline.Proces: 1ms\n", "w.yaml");
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().message ==
        "w.yaml:1: unknown runnable 'Pipeline.Proces' (did you mean 'Pipeline.Process'? client 'Pipeline' declares "
        "'Read', 'Process', 'Publish')");
  auto client = applyWcetFile(*g, "Pipline.Read: 1ms\n", "w.yaml");
  REQUIRE_FALSE(client.has_value());
  CHECK(client.error().message ==
        "w.yaml:1: unknown runnable 'Pipline.Read' (no client 'Pipline'; did you mean 'Pipeline'? declared clients: "
        "'Pipeline')");
}

TEST_CASE("an epoch whose frames cover under 90% of its hyperepoch is warned about, naming Frames",
          "[compiler][traps]") {
  const std::string path = fixture("epoch_frames_short.yaml");
  auto g = parseGraphFile(path);
  REQUIRE(g.has_value());
  const std::vector<std::string> warnings = graphWarnings(*g);
  REQUIRE(warnings.size() == 1);  // Radar fills its hyperepoch
  CHECK(warnings[0] == path +
                           ":11: epoch 'Perception.Camera' covers 33.33ms of the 100ms period of hyperepoch "
                           "'Perception' (Period 33.33ms x 1 frame, 33%): it runs once every 100ms (10 Hz), not "
                           "every 33.33ms (30 Hz); write `Frames: 3` to fill the hyperepoch (3 x 33.33ms = 99.99ms)");

  // tactus-compile prints it and still writes the schedule.
  const std::string sched = tempPath("short.tsched");
  const Run r = compile({"-i", path, "-o", sched});
  CHECK(r.code == 0);
  CHECK(r.err == "tactus-compile: warning: " + warnings[0] + "\n");
  CHECK(exists(sched));
  std::remove(sched.c_str());

  auto graphWith = [](const std::string& epochs) {
    auto parsed = parseGraph(
        "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0]}\n  Hyperepochs:\n    - H:\n"
        "        Period: 100ms\n        Epochs: [" +
            epochs +
            "]\n  Clients:\n    - C:\n        Epochs: [{H.E: {Runnables: [{A: {WCET: 1ms, "
            "Resources: [CPU0]}}]}}]\n",
        "inline.yaml");
    REQUIRE(parsed.has_value());
    return graphWarnings(*parsed);
  };
  CHECK(graphWith("{E: {Period: 33.33ms, Frames: 3}}").empty());  // 99.99%: filled
  CHECK(graphWith("{E: {Period: 90ms}}").empty());                // 90%: at the threshold
  // No whole number of 60 ms frames fills 100 ms: the nearest period that divides it.
  const auto sixty = graphWith("{E: {Period: 60ms}}");
  REQUIRE(sixty.size() == 1);
  CHECK_THAT(sixty[0], Catch::EndsWith("no Frames value fills the hyperepoch with frames of 60ms: a Period that "
                                       "divides 100ms does (50ms with `Frames: 2`)"));
  const auto two = graphWith("{E: {Period: 20ms, Frames: 2}}");
  REQUIRE(two.size() == 1);
  CHECK_THAT(two[0], Catch::Contains("it runs 2 frames every 100ms (20 Hz), not one every 20ms (50 Hz); write "
                                     "`Frames: 5` to fill the hyperepoch"));
}

TEST_CASE("--werror turns warnings into errors: exit 1, no schedule file, the report still written",
          "[compiler][traps]") {
  const std::string path = fixture("epoch_frames_short.yaml");
  const std::string sched = tempPath("werror.tsched"), json = tempPath("werror.json");
  std::string expected = "tactus-compile: " + path;
  expected += ": 1 warning, an error under --werror (no schedule written):\n  " + path;
  expected += ":11: epoch 'Perception.Camera' covers 33.33ms";
  for (const char* flag : {"--werror", "-Werror"}) {
    INFO(flag);
    const Run r = compile({"-i", path, "-o", sched, "-k", json, flag});
    CHECK(r.code == 1);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith(expected));
    CHECK_FALSE(exists(sched));
    CHECK_THAT(tactus::test::readFile(json), Catch::Contains("\"schedule_length_ns\""));
    std::remove(json.c_str());
  }
  // Without warnings, --werror changes nothing.
  const Run clean = compile({"-i", sourceRoot() + "/schedules/two_client.yaml", "-o", sched, "--werror"});
  CHECK(clean.code == 0);
  CHECK(clean.err.empty());
  CHECK(exists(sched));
  std::remove(sched.c_str());
  CHECK_THAT(compileUsage(), Catch::Contains("-Werror, --werror"));
}

TEST_CASE("a schedule that does not fit names the overloaded resource and the critical path and writes -k and --html",
          "[compiler][traps]") {
  const std::string path = fixture("overloaded_resource.yaml");
  const std::string sched = tempPath("over.tsched"), json = tempPath("over.json"), html = tempPath("over.html");
  const Run r = compile({"-i", path, "-o", sched, "-k", json, "--html", html});
  CHECK(r.code == 1);
  CHECK(r.err ==
        "tactus-compile: " + path +
            ":9: hyperepoch 'Main': schedule length 120ms exceeds its period 100ms\n"
            "  overloaded resource: 'CPU0' has 120ms of work in the 100ms period (120%): 'App.Detect' 2 x 50ms, "
            "'App.Read' 2 x 10ms\n"
            "  critical path: 110ms (110% of the period): released at 50ms, then 'App.Read' f1 10ms -> 'App.Detect' "
            "f1 50ms\n"
            "  no schedule fits while 'CPU0' holds more work than the period: shorten WCETs, move runnables to another "
            "resource (or request a type, such as CPU, and let the compiler pick), or lengthen the Period\n"
            "  wrote the schedule that does not fit to " +
            json + " (-k) and " + html + " (--html); no schedule file\n");
  CHECK_FALSE(exists(sched));
  CHECK_THAT(tactus::test::readFile(json), Catch::Contains("\"schedule_length_ns\": 120000000"));
  CHECK_THAT(tactus::test::readFile(html), Catch::StartsWith("<!DOCTYPE html>"));
  std::remove(json.c_str());
  std::remove(html.c_str());

  // Without -k and --html, the message says how to look.
  const Run bare = compile({"-i", path, "-o", sched});
  CHECK(bare.code == 1);
  CHECK_THAT(bare.err, Catch::EndsWith("  -k REPORT.json and --html VIEW.html write the schedule that does not fit, "
                                       "to look at\n"));
}

TEST_CASE("a schedule that does not fit for its critical path says so", "[compiler][traps]") {
  const std::string path = fixture("critical_path_too_long.yaml");
  const Run r = compile({"-i", path, "-o", tempPath("chain.tsched")});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tactus-compile: " + path +
                                      ":9: hyperepoch 'Main': schedule length 130ms exceeds its period 100ms\n"
                                      "  busiest resource: 'CPU0' has 70ms of work in the 100ms period (70%): "
                                      "'App.Act' 40ms, 'App.Sense' 30ms\n"
                                      "  critical path: 130ms (130% of the period): 'App.Sense' f0 30ms -> "
                                      "'App.Plan' f0 60ms -> 'App.Act' f0 40ms\n"
                                      "  no schedule fits while the critical path is longer than the period"));
}

TEST_CASE("with --allow-overlength a late frame is named with what crowds it out, not a runnable",
          "[compiler][traps]") {
  const std::string path = fixture("frame_crowded_out.yaml");
  const std::string json = tempPath("late.json");
  const Run r = compile({"-i", path, "-o", tempPath("late.tsched"), "--allow-overlength", "-k", json});
  CHECK(r.code == 1);
  INFO(r.err);
  // Tick, which ends late, is not its cause: Heavy on CPU0 is, and the hyperepoch is overloaded.
  CHECK_THAT(r.err, Catch::StartsWith("tactus-compile: " + path +
                                      ":14: epoch 'Main.Fast' frame 0 ends at 100ms, after its next frame's release "
                                      "at 50ms\n"));
  CHECK_THAT(r.err, !Catch::Contains("runnable 'Tick'"));
  CHECK_THAT(r.err, Catch::Contains("  other epochs hold 'CPU0' for 50ms of the frame's period (0ns..50ms): "
                                    "'App.Heavy' 50ms\n"));
  CHECK_THAT(r.err, Catch::Contains("  overloaded resource of hyperepoch 'Main': 'CPU0' has 105ms of work in the "
                                    "100ms period (105%): 'App.Heavy' 95ms, 'App.Tick' 2 x 5ms\n"));
  CHECK(exists(json));
  std::remove(json.c_str());
}

TEST_CASE("an overlength schedule accepted with --allow-overlength is warned about with its cause",
          "[compiler][traps]") {
  // One frame per hyperepoch: only the hyperepoch runs over its period, which is allowed.
  const std::string yaml = tempPath("allowed.yaml");
  std::ofstream(yaml)
      << "Version: 3.0.0\nG:\n  Resources: {CPU: [CPU0, CPU1]}\n  Hyperepochs:\n    - H:\n        Period: 100ms\n"
         "        Epochs: [{E: {Period: 100ms}}]\n  Clients:\n    - C:\n        Epochs: [{H.E: {Runnables: [\n"
         "          {A: {WCET: 70ms, Resources: [CPU0]}}, {B: {WCET: 50ms, Resources: [CPU0]}}]}}]\n";
  const std::string sched = tempPath("allowed.tsched");
  const Run r = compile({"-i", yaml, "-o", sched, "--allow-overlength"});
  CHECK(r.code == 0);
  // The one warning is the hyperepoch's: no runnable (B, placed last) is blamed for running late.
  CHECK_THAT(r.err, Catch::StartsWith("tactus-compile: warning: hyperepoch 'H'"));
  CHECK_THAT(r.err, !Catch::Contains("runnable 'C."));
  CHECK_THAT(r.err, Catch::Contains("tactus-compile: warning: hyperepoch 'H': schedule length 120ms exceeds its "
                                    "period 100ms\n  overloaded resource: 'CPU0' has 120ms of work in the 100ms "
                                    "period (120%): 'C.A' 70ms, 'C.B' 50ms\n"));
  CHECK(exists(sched));
  // ... and under --werror that warning fails the compilation.
  std::remove(sched.c_str());
  const Run strict = compile({"-i", yaml, "-o", sched, "--allow-overlength", "--werror"});
  CHECK(strict.code == 1);
  CHECK_THAT(strict.err, Catch::Contains(": 1 warning, an error under --werror"));
  CHECK_FALSE(exists(sched));
  std::remove(yaml.c_str());
}
