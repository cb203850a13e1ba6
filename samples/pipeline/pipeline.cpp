// pipeline: the four clients of samples/pipeline/pipeline.yaml in one program (the first argument
// names the client), a camera-to-actuation pipeline whose stages hand their data to the next
// process through channels, frame after frame, each reader seeing the version the schedule names:
//
//   Camera: Capture ==[Image]==> Detector: Detect ==[Detections]==> Tracker: Track ==[Tracks]==> Planner: Plan -> Act
//
// Every stage checks that it got the frame the plan says (Detect and Track: the same camera frame,
// through their dependency; Plan: the iteration's last frame, through its StartTime) and says at
// the end how many it checked. Run it with tactus-launch (launch.yaml beside this file):
//
//   tactus-launch samples/pipeline/launch.yaml
//
// or by hand, each client in its own shell, in any order:
//
//   tactus-compile -i pipeline.yaml -o pipeline.tsched
//   tactus-master -s pipeline.tsched -e 50 -D pipeline -l pipeline.tlog
//   tactus-sample-pipeline Camera --instance pipeline      (and Detector, Tracker, Planner)
#include <tactus/channel.hpp>
#include <tactus/client.hpp>

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

namespace {

constexpr std::uint64_t kCameraFrames = 3;  // camera frames per hyperepoch iteration (the graph's Frames)

struct Image {  // Capture's output: within the channel's Size, 65536 bytes
  std::uint64_t frame;
  std::int64_t capturedNs;
  std::uint32_t width, height;
  std::uint8_t pixels[128 * 128];
};
struct Box {
  float x, y, width, height;
};
struct Detections {
  std::uint64_t frame;
  std::int64_t capturedNs;
  std::uint32_t count;
  Box boxes[64];
};
struct Tracks {
  std::uint64_t frame;
  std::int64_t capturedNs;
  std::uint32_t count;
  std::uint32_t ids[64];
  Box boxes[64];
};
static_assert(sizeof(Image) <= 65536 && sizeof(Detections) <= 4096 && sizeof(Tracks) <= 4096,
              "the channels' Size in pipeline.yaml");

std::int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The channels, found once after init; the counts each stage prints at the end.
tactus::Channel* gIn = nullptr;
tactus::Channel* gOut = nullptr;
std::atomic<std::uint64_t> gRuns{0}, gChecked{0}, gWrong{0}, gMissing{0};
std::atomic<std::int64_t> gWorstAgeNs{0};

// The version a run reads, checked against the frame the plan says it sees; null when none.
template <typename T>
const T* readChecked(std::uint64_t expectedFrame) {
  auto in = gIn->readAs<T>();
  if (!in || in->status != tactus::VersionStatus::kOk) {
    gMissing.fetch_add(1);  // the first iteration's Plan, or a writer run that was skipped
    return nullptr;
  }
  gChecked.fetch_add(1);
  if (in->data->frame != expectedFrame) gWrong.fetch_add(1);
  return in->data;
}

void capture() {
  auto info = tactus::runtimeInfo();
  auto out = gOut->writeAs<Image>();
  if (!info || !out) return;
  Image& image = **out;
  image.frame = info->epochIteration;
  image.capturedNs = monotonicNs();
  image.width = image.height = 128;
  std::memset(image.pixels, static_cast<int>(image.frame % 251), sizeof image.pixels);
  gRuns.fetch_add(1);
}

void detect() {
  auto info = tactus::runtimeInfo();
  if (!info) return;
  const Image* image = readChecked<Image>(info->epochIteration);  // the same frame: Detect follows Capture
  auto out = gOut->writeAs<Detections>();
  if (image == nullptr || !out) return;  // nothing taken: Track sees "not written", never stale boxes
  Detections& d = **out;
  d.frame = image->frame;
  d.capturedNs = image->capturedNs;
  d.count = 1 + static_cast<std::uint32_t>(image->pixels[0] % 8);
  for (std::uint32_t k = 0; k < d.count; ++k) d.boxes[k] = {10.0f * static_cast<float>(k), 5.0f, 4.0f, 4.0f};
  gRuns.fetch_add(1);
}

void track() {
  auto info = tactus::runtimeInfo();
  if (!info) return;
  const Detections* d = readChecked<Detections>(info->epochIteration);
  auto out = gOut->writeAs<Tracks>();
  if (d == nullptr || !out) return;
  Tracks& t = **out;
  t.frame = d->frame;
  t.capturedNs = d->capturedNs;
  t.count = d->count;
  for (std::uint32_t k = 0; k < d->count; ++k) {
    t.ids[k] = k;
    t.boxes[k] = d->boxes[k];
  }
  gRuns.fetch_add(1);
}

void plan() {
  auto info = tactus::runtimeInfo();
  if (!info) return;
  // Plan starts once the iteration's last camera frame is tracked (StartTime 50 ms).
  const Tracks* t = readChecked<Tracks>(info->hyperepochIteration * kCameraFrames + kCameraFrames - 1);
  if (t == nullptr) return;
  const std::int64_t age = monotonicNs() - t->capturedNs;
  for (std::int64_t seen = gWorstAgeNs.load(); age > seen && !gWorstAgeNs.compare_exchange_weak(seen, age);) {}
  gRuns.fetch_add(1);
}

void act() {}

struct Stage {
  const char* client;
  const char* in;   // the channel it reads, or null
  const char* out;  // the channel it writes, or null
  struct Runnable {
    const char* name;
    void (*body)();
  } runnables[2];
};
const Stage kStages[] = {
    {"Camera", nullptr, "Image", {{"Capture", capture}, {nullptr, nullptr}}},
    {"Detector", "Image", "Detections", {{"Detect", detect}, {nullptr, nullptr}}},
    {"Tracker", "Detections", "Tracks", {{"Track", track}, {nullptr, nullptr}}},
    {"Planner", "Tracks", nullptr, {{"Plan", plan}, {"Act", act}}},
};

int fail(const char* what, const tactus::Error& error) {
  std::fprintf(stderr, "tactus-sample-pipeline: %s: %s\n", what, error.message.c_str());
  tactus::shutdown();
  return 1;
}

int usage() {
  std::fprintf(stderr, "usage: tactus-sample-pipeline Camera|Detector|Tracker|Planner [--instance NAME]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--instance") == 0)) return usage();
  const Stage* stage = nullptr;
  for (const Stage& s : kStages)
    if (std::strcmp(argv[1], s.client) == 0) stage = &s;
  if (stage == nullptr) return usage();
  tactus::InitOptions options;
  if (argc == 4) options.instance = argv[3];
  if (auto ok = tactus::init(stage->client, options); !ok) return fail("init", ok.error());
  // The channels it reads and writes, found once (a misspelt name: "did you mean ...?").
  static std::optional<tactus::Channel> in, out;
  for (auto [name, slot] : {std::pair{stage->in, &in}, std::pair{stage->out, &out}}) {
    if (name == nullptr) continue;
    auto found = tactus::Channel::find(name);
    if (!found) return fail("channel", found.error());
    slot->emplace(*found);
  }
  gIn = in ? &*in : nullptr;
  gOut = out ? &*out : nullptr;
  for (const Stage::Runnable& r : stage->runnables) {
    if (r.name == nullptr) continue;
    if (auto ok = tactus::registerRunnable(r.name, r.body); !ok) return fail("register", ok.error());
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();  // every frame until the run ends
  std::printf("%s: %s; %llu runs", stage->client, outcome.message.c_str(),
              static_cast<unsigned long long>(gRuns.load()));
  if (gIn != nullptr)
    std::printf(", %llu versions of %s checked, %llu of another frame, %llu missing",
                static_cast<unsigned long long>(gChecked.load()), stage->in,
                static_cast<unsigned long long>(gWrong.load()), static_cast<unsigned long long>(gMissing.load()));
  if (gWorstAgeNs.load() > 0)
    std::printf(", oldest camera frame decided on: %.1f ms", static_cast<double>(gWorstAgeNs.load()) / 1e6);
  std::printf("\n");
  tactus::shutdown();
  const bool ended = outcome.status == tactus::RunStatus::kFrameLimit ||
                     outcome.status == tactus::RunStatus::kExitRequested ||
                     outcome.status == tactus::RunStatus::kStoppedBySignal;
  return ended && gWrong.load() == 0 ? 0 : 1;
}
