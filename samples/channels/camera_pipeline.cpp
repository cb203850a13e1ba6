// camera_pipeline: one client of schedules/camera_pipeline_chain.yaml, whose Detect hands the
// objects it found to Plan, in another process, through the channel `Objects` (a tactus
// extension): a buffer in the run's shared memory that Detect fills and Plan reads in place.
//
//   Sensing (every 25 ms):  Capture --> Preprocess --> Detect ==[Objects]==> Planning (every 50 ms): Plan --> Actuate
//
// Each Plan run reads the version of the Detect run the schedule names (the latest one the plan
// has ending before Plan starts), the same one in every iteration whatever the actual durations:
//
//   tactus-compile -i schedules/camera_pipeline_chain.yaml -o camera.tsched
//   tactus-master -s camera.tsched -e 20 -D demo &
//   tactus-sample-channels Sensing --instance demo &
//   tactus-sample-channels Planning --instance demo
//
// Plan prints, for the first iterations, the camera frame it decides on and that frame's age; at
// the end each process prints what it wrote or read.
#include <tactus/channel.hpp>
#include <tactus/client.hpp>

#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <string>

namespace {

// What Detect hands to Plan: trivially copyable, within the channel's Size (65536 bytes).
struct Object {
  float x, y, width, height;
  std::uint32_t label;
};
struct Objects {
  std::uint64_t cameraFrame;  // the camera frame (epoch iteration) the objects were detected in
  std::int64_t capturedNs;    // CLOCK_MONOTONIC ns at which Capture ran for it
  std::uint32_t count;
  Object objects[1024];
};
static_assert(sizeof(Objects) <= 65536, "the graph's Size of channel Objects");

std::int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Within Sensing, Capture -> Preprocess -> Detect of one camera frame run one after the other
// (dependencies) in one process, so they share the frame in process memory; only Detect's result
// crosses to Planning. One slot per frame of the hyperepoch: Capture of the next frame runs on
// another core and may start before Detect of this one has ended (nothing orders them), but not
// before the same frame of the next iteration, which the master releases once this iteration has
// ended. That order passes through the master's process, where ThreadSanitizer cannot follow it:
// relaxed atomics (plain loads and stores on x86 and ARM) keep its view of this sample clean.
struct CameraFrame {
  std::atomic<std::uint64_t> number{0};
  std::atomic<std::int64_t> capturedNs{0};
  std::atomic<std::uint32_t> features{0};
};
CameraFrame gFrames[4];  // the Camera epoch's frames per hyperepoch iteration

CameraFrame& thisFrame() {
  auto info = tactus::runtimeInfo();
  return gFrames[info ? info->frame % 4 : 0];
}

tactus::Channel* gObjects = nullptr;
std::atomic<std::uint64_t> gWritten{0}, gFresh{0}, gNoneYet{0}, gNotWritten{0};
std::atomic<std::int64_t> gMaxAgeNs{0};

void capture() {
  auto info = tactus::runtimeInfo();
  CameraFrame& frame = thisFrame();
  frame.number.store(info ? info->epochIteration : 0, std::memory_order_relaxed);
  frame.capturedNs.store(monotonicNs(), std::memory_order_relaxed);
}

void preprocess() {
  CameraFrame& frame = thisFrame();
  frame.features.store(static_cast<std::uint32_t>(frame.number.load(std::memory_order_relaxed) % 7 + 3),
                       std::memory_order_relaxed);
}

void detect() {
  auto out = gObjects->writeAs<Objects>();  // this run's buffer in the ring: filled in place
  if (!out) {
    std::fprintf(stderr, "Detect: %s\n", out.error().message.c_str());
    return;
  }
  Objects& o = **out;
  const CameraFrame& frame = thisFrame();
  o.cameraFrame = frame.number.load(std::memory_order_relaxed);
  o.capturedNs = frame.capturedNs.load(std::memory_order_relaxed);
  o.count = frame.features.load(std::memory_order_relaxed);
  for (std::uint32_t k = 0; k < o.count; ++k) {
    const auto at = static_cast<float>(k);
    o.objects[k] = {at, 2.0f * at, 0.5f, 0.5f, k % 3};
  }
  gWritten.fetch_add(1, std::memory_order_relaxed);
}

void plan() {
  auto in = gObjects->readAs<Objects>();
  if (!in) {
    std::fprintf(stderr, "Plan: %s\n", in.error().message.c_str());
    return;
  }
  auto info = tactus::runtimeInfo();
  const std::uint64_t iteration = info ? info->hyperepochIteration : 0;
  if (in->status != tactus::VersionStatus::kOk) {
    (in->status == tactus::VersionStatus::kNoVersionYet ? gNoneYet : gNotWritten).fetch_add(1);
    if (iteration < 2)
      std::printf("Plan (iteration %llu): %s\n", static_cast<unsigned long long>(iteration),
                  tactus::versionStatusName(in->status));
    return;
  }
  const Objects& o = *in->data;
  const std::int64_t ageNs = monotonicNs() - o.capturedNs;
  gFresh.fetch_add(1, std::memory_order_relaxed);
  std::int64_t seen = gMaxAgeNs.load();
  while (ageNs > seen && !gMaxAgeNs.compare_exchange_weak(seen, ageNs)) {}
  if (iteration < 2) {
    std::printf(
        "Plan (iteration %llu frame %u): %u objects of camera frame %llu (Detect of iteration %llu), "
        "captured %.1f ms ago\n",
        static_cast<unsigned long long>(iteration), info ? info->frame : 0, o.count,
        static_cast<unsigned long long>(o.cameraFrame), static_cast<unsigned long long>(in->writerIteration),
        static_cast<double>(ageNs) / 1e6);
    std::fflush(stdout);
  }
}

void actuate() {}

int usage() {
  std::fprintf(stderr, "usage: tactus-sample-channels Sensing|Planning [--instance NAME] [--timeout-ms MS]\n");
  return 2;
}

}  // namespace

int runMain(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string client = argv[1];
  if (client != "Sensing" && client != "Planning") return usage();
  tactus::InitOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--instance" && i + 1 < argc) {
      options.instance = argv[++i];
    } else if (a == "--timeout-ms" && i + 1 < argc) {
      char* end = nullptr;
      errno = 0;
      const long long ms = std::strtoll(argv[++i], &end, 10);
      if (errno != 0 || end == argv[i] || *end != '\0' || ms < 0 || ms > 2147483647) {
        std::fprintf(stderr, "tactus-sample-channels: --timeout-ms expects milliseconds 0..2147483647, got '%s'\n",
                     argv[i]);
        return 2;
      }
      options.timeoutMs = ms;
    } else {
      return usage();
    }
  }
  if (auto ok = tactus::init(client, options); !ok) {
    std::fprintf(stderr, "tactus-sample-channels: %s\n", ok.error().message.c_str());
    return 1;
  }
  auto objects = tactus::Channel::find("Objects");
  if (!objects) {
    std::fprintf(stderr, "tactus-sample-channels: %s\n", objects.error().message.c_str());
    tactus::shutdown();
    return 1;
  }
  gObjects = &*objects;
  const bool sensing = client == "Sensing";
  struct Entry {
    const char* name;
    void (*function)();
  };
  static const Entry kSensing[] = {{"Capture", capture}, {"Preprocess", preprocess}, {"Detect", detect}};
  static const Entry kPlanning[] = {{"Plan", plan}, {"Actuate", actuate}};
  for (const Entry& r : sensing ? std::span<const Entry>(kSensing) : std::span<const Entry>(kPlanning)) {
    if (auto ok = tactus::registerRunnable(r.name, r.function); !ok) {
      std::fprintf(stderr, "tactus-sample-channels: %s\n", ok.error().message.c_str());
      tactus::shutdown();
      return 1;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  std::printf("run ended (%s): %s\n", tactus::runStatusName(outcome.status), outcome.message.c_str());
  if (sensing) {
    std::printf("Detect wrote %llu versions of Objects\n", static_cast<unsigned long long>(gWritten.load()));
  } else {
    std::printf(
        "Plan read %llu versions of Objects (%llu before the first, %llu not written); oldest camera frame "
        "decided on: %.1f ms\n",
        static_cast<unsigned long long>(gFresh.load()), static_cast<unsigned long long>(gNoneYet.load()),
        static_cast<unsigned long long>(gNotWritten.load()), static_cast<double>(gMaxAgeNs.load()) / 1e6);
  }
  tactus::shutdown();
  const bool ended = outcome.status == tactus::RunStatus::kFrameLimit ||
                     outcome.status == tactus::RunStatus::kExitRequested ||
                     outcome.status == tactus::RunStatus::kStoppedBySignal;
  return ended ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception& e) {  // out of memory while setting up: a message, not std::terminate
    std::fprintf(stderr, "tactus-sample-channels: %s\n", e.what());
    return 1;
  }
}
