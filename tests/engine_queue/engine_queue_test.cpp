// Engine-neutral queues at run time (<tactus/engine_queue.hpp>, tactusRegisterEngineQueue): the
// real tactus-master and real client processes; the DLA is a STAND-IN (standin_queue.hpp: a
// thread-backed in-order queue; this machine has no DLA or PVA). Order is checked from the
// master's event log (checkLog, what tactus-check-log runs) and from the fake kernels' own times.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <sstream>

#include "runtime_harness.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 30'000;
constexpr std::uint64_t kFrames = 20;

struct QueueRun : TestRun {
  Schedule schedule;

  QueueRun() : TestRun("eq") {
    const std::string yaml =
        std::string(std::getenv("TACTUS_SOURCE_ROOT")) + "/tests/engine_queue/graphs/dla_cross.yaml";
    const pid_t c =
        children.spawn({buildPath("compiler/tactus-compile"), "-i", yaml, "-o", schedulePath}, schedulePath + ".out");
    REQUIRE(waitFor(c, kWaitMs) == 0);
    auto s = loadScheduleFile(schedulePath);
    REQUIRE(s.has_value());
    schedule = std::move(*s);
  }
  std::string trace(const std::string& who) const { return dir + "/" + who + ".trace"; }
  pid_t master(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv{buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance, "-l", logPath};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out("master"));
  }
  pid_t client(const std::string& name, const std::vector<std::string>& extra) const {
    std::vector<std::string> argv{buildPath("tests/engine_queue/tactus-engine-queue-test-client"),
                                  "--name",
                                  name,
                                  "--instance",
                                  instance,
                                  "--trace",
                                  trace(name)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out(name));
  }
  // Vision with its DLA and PVA queues registered, Detect, Segment and Warp as fake kernels of
  // 1.5, 1 and 1 ms.
  pid_t vision(std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{"--queue",  "DLA_HANDLE0",
                                  "--queue",  "PVA_STREAM0",
                                  "--submit", "SubmitDetect=Detect:1500@DLA_HANDLE0",
                                  "--submit", "SubmitSegment=Segment:1000@DLA_HANDLE0",
                                  "--submit", "SubmitWarp=Warp:1000@PVA_STREAM0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return client("Vision", argv);
  }
  pid_t camera() const { return client("Camera", {"--sleep", "Capture=2000"}); }
};

// A number after `key=` in the text (the first), or -1.
long long field(const std::string& text, const std::string& key) {
  const auto at = text.find(key + "=");
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + key.size() + 1);
}

// Runs per (name, iteration): start and end (CLOCK_MONOTONIC ns), from a client's trace.
std::map<std::pair<std::string, std::uint64_t>, std::pair<std::int64_t, std::int64_t>> readRuns(
    const std::string& path) {
  std::map<std::pair<std::string, std::uint64_t>, std::pair<std::int64_t, std::int64_t>> runs;
  std::istringstream in(readFile(path));
  std::string name;
  std::uint64_t h = 0;
  std::int64_t start = 0, end = 0;
  while (in >> name >> h >> start >> end) runs[{name, h}] = {start, end};
  return runs;
}

void checkRun(const QueueRun& run) {
  const std::string vision = readFile(run.out("Vision"));
  INFO(vision);
  INFO(readFile(run.out("master")));
  CHECK(vision.find("status=frame-limit") != std::string::npos);
  CHECK(field(vision, "drained") == 1);
  // Per frame: Detect's queue waits for Capture (another process), Warp's for Detect (the other
  // queue), and each of the three submissions signals the work's start and its fence.
  CHECK(field(vision, "library waits") >= static_cast<long long>(2 * kFrames));
  CHECK(field(vision, "adapter waits") == field(vision, "library waits"));
  CHECK(field(vision, "signals") == static_cast<long long>(6 * kFrames));  // the adapters' count
  CHECK(field(vision, "library waits=" + std::to_string(field(vision, "library waits")) + " signals") ==
        static_cast<long long>(6 * kFrames));
  CHECK(field(vision, "submissions") == static_cast<long long>(3 * kFrames));
  auto log = readEventLog(run.logPath);
  REQUIRE(log.has_value());
  CHECK(checkLog(run.schedule, *log, kFrames) == "");
  // The fake kernels' own times: Detect after Capture (another process's CPU runnable, through
  // a fence wait on the queue), Segment after Detect (the queue's order), Warp after Detect (the
  // PVA queue waits on the fence the DLA queue signals), Post after all three.
  const auto camera = readRuns(run.trace("Camera"));
  const auto mine = readRuns(run.trace("Vision"));
  for (std::uint64_t h = 0; h < kFrames; ++h) {
    INFO("iteration " << h);
    const auto capture = camera.find({"Capture", h});
    const auto detect = mine.find({"work:Detect", h});
    const auto segment = mine.find({"work:Segment", h});
    const auto warp = mine.find({"work:Warp", h});
    const auto post = mine.find({"Post", h});
    REQUIRE(warp != mine.end());
    REQUIRE(capture != camera.end());
    REQUIRE(detect != mine.end());
    REQUIRE(segment != mine.end());
    REQUIRE(post != mine.end());
    CHECK(detect->second.first >= capture->second.second);
    CHECK(segment->second.first >= detect->second.second);
    CHECK(post->second.first >= segment->second.second);
    CHECK(post->second.first >= detect->second.second);
    CHECK(warp->second.first >= detect->second.second);
    CHECK(post->second.first >= warp->second.second);
  }
}

}  // namespace

TEST_CASE("DLA work on a registered engine queue runs in the compiled order across processes",
          "[engine-queue][order]") {
  QueueRun run;
  const pid_t m = run.master({"-e", std::to_string(kFrames)});
  const pid_t v = run.vision();
  const pid_t c = run.camera();
  CHECK(waitFor(v, kWaitMs) == 0);
  CHECK(waitFor(c, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  checkRun(run);
}

TEST_CASE("the C API tactusRegisterEngineQueue runs the same", "[engine-queue][order]") {
  QueueRun run;
  const pid_t m = run.master({"-e", std::to_string(kFrames)});
  const pid_t v = run.vision({"--c-api"});
  const pid_t c = run.camera();
  CHECK(waitFor(v, kWaitMs) == 0);
  CHECK(waitFor(c, kWaitMs) == 0);
  REQUIRE(waitFor(m, kWaitMs) == 0);
  CHECK(readFile(run.out("Vision")).find("register DLA_HANDLE0: STM_SUCCESS") != std::string::npos);
  checkRun(run);
}

TEST_CASE("engine queue registration refuses null, unknown and duplicate queues with clear errors",
          "[engine-queue][errors]") {
  QueueRun run;
  const pid_t m = run.master({"-e", "3"});
  const pid_t v = run.vision({"--misuse"});
  const pid_t c = run.camera();
  CHECK(waitFor(v, kWaitMs) == 0);
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  const std::string out = readFile(run.out("Vision"));
  INFO(out);
  CHECK(out.find("null-queue: bad parameter") != std::string::npos);
  CHECK(out.find("null-function: bad parameter") != std::string::npos);
  CHECK(out.find("unknown-name: not found: engine queue 'NO_SUCH_QUEUE' is not a DLA_HANDLE or PVA_STREAM resource "
                 "of client 'Vision'") != std::string::npos);
  CHECK(out.find("cpu-name: not found") != std::string::npos);
  CHECK(out.find("register DLA_HANDLE0: ok") != std::string::npos);
  CHECK(out.find("register PVA_STREAM0: ok") != std::string::npos);
  CHECK(out.find("same-name-twice: already exists") != std::string::npos);
  CHECK(out.find("same-queue-twice: already exists") != std::string::npos);
}

TEST_CASE("a scheduled DLA or PVA queue that was not registered is refused, named by the client and the master",
          "[engine-queue][errors]") {
  std::vector<std::string> argv;  // the queue registered: the other one is missing
  std::string missing, submitter;
  SECTION("DLA_HANDLE") {
    argv = {"--queue", "PVA_STREAM0", "--submit", "SubmitWarp=Warp:1000"};
    missing = "DLA_HANDLE 'DLA_HANDLE0'";
    submitter = "'Vision.SubmitDetect'";
  }
  SECTION("PVA_STREAM") {
    argv = {"--queue", "DLA_HANDLE0", "--submit", "SubmitDetect=Detect:1000", "--submit", "SubmitSegment=Segment:1000"};
    missing = "PVA_STREAM 'PVA_STREAM0'";
    submitter = "'Vision.SubmitWarp'";
  }
  QueueRun run;
  const pid_t m = run.master({"-e", "5", "-t", "5000000"});
  const pid_t c = run.camera();
  REQUIRE(waitForClientState(run.instance, 0, static_cast<std::uint32_t>(shm::ClientState::kEntered), kWaitMs));
  const pid_t v = run.client("Vision", argv);
  const int visionExit = waitFor(v, kWaitMs);
  CHECK(visionExit == 4);
  const int cameraExit = waitFor(c, kWaitMs);
  CHECK(cameraExit != 0);
  CHECK(cameraExit != -1);  // ended by the refusal, not the test's time limit
  CHECK(waitFor(m, kWaitMs) == 1);
  const std::string out = readFile(run.out("Vision"));
  INFO(out);
  CHECK(out.find(missing + " of submitter " + submitter +
                 " is not registered (register it with tactus::registerEngineQueue") != std::string::npos);
  const std::string master = readFile(run.out("master"));
  INFO(master);
  CHECK(master.find("client 'Vision' refused to run") != std::string::npos);
  CHECK(master.find("for submitter " + submitter + " on " + missing) != std::string::npos);
}

TEST_CASE("an adapter that drops its signals fails the run instead of passing it", "[engine-queue][errors]") {
  QueueRun run;
  const pid_t m = run.master({"-e", "5", "-t", "3000000"});
  const pid_t v = run.vision({"--drop-signals"});
  const pid_t c = run.camera();
  const int visionExit = waitFor(v, kWaitMs);
  CHECK(visionExit != 0);
  CHECK(visionExit != -1);  // the master's watch ended it, within the test's limit
  waitFor(c, kWaitMs);
  CHECK(waitFor(m, kWaitMs) != 0);
  // The master's watch names the work that never ended.
  CHECK(readFile(run.out("master")).find("runnable 'Vision.Detect' made no progress") != std::string::npos);
}
