// tactus-replay-client: a client of the replay tests (replay_run_check.sh, bench/replay). Every
// runnable of its client is registered; a runnable that reads no channel (a source) writes fresh
// random bytes into each channel it writes; every other runnable writes a deterministic function
// of the versions it read (their status and bytes), so that a replay whose sources get the
// recorded versions writes, downstream, exactly what the recorded run wrote. A downstream
// runnable's versions begin with its frame's logical clock (tactus::logicalNowNs) and runtime
// information, so that a replay must also give those the recorded values.
// usage: tactus-replay-client --name CLIENT --instance I --channel NAME... [--busy-us N] [--timeout-ms N]
// Exit: 0 when the run ended by its frame limit, 3 init, 4 registration, 6 the C and C++ APIs'
// logical clock or runtime information differed, 5 otherwise.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "tactus/channel.hpp"
#include "tactus/client.hpp"
#include "tactus/stm.h"

namespace {

std::vector<tactus::Channel> gChannels;
long long gBusyUs = 0;

struct Runnable {
  std::string name;
  bool probed = false;
  std::vector<std::size_t> reads, writes;  // indices into gChannels
  std::mt19937_64 random{std::random_device{}()};
};

std::uint64_t fnv(std::uint64_t h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

void spin(long long us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {}
}

// What a downstream runnable stamps its output with: the logical clock and the runtime
// information, through the C++ API and the C API (which must agree), so that the replay's
// comparison covers them: a replay must give the recorded values.
struct Stamp {
  std::int64_t logicalNs = 0;
  std::int64_t logicalNsC = 0;
  std::uint64_t hyperepochIteration = 0;
  std::uint64_t epochIteration = 0;
  std::uint32_t frame = 0;
  std::uint32_t scheduleId = 0;
  std::uint32_t instance = 0;
  std::uint32_t epochIterationsC = 0;
  std::uint32_t scheduleIdC = 0;
  std::uint32_t reserved = 0;
};

bool gStampFailed = false;  // the C and C++ answers differed, or one failed: exit 6

Stamp stampOfFrame() {
  Stamp s;
  const auto now = tactus::logicalNowNs();
  const auto again = tactus::logicalNowNs();
  const auto info = tactus::runtimeInfo();
  stmRunnableInfo_t infoC{};
  if (!now || !again || !info || *now != *again || tactusLogicalNowNs(&s.logicalNsC) != STM_SUCCESS ||
      stmGetRuntimeInfo(&infoC) != STM_SUCCESS) {
    std::printf("stamp: %s\n", !now ? now.error().message.c_str() : "a call failed or the clock moved in a frame");
    gStampFailed = true;
    return s;
  }
  // The frame's ideal release time (or the recorded run's, earlier still) lies in the past.
  const std::int64_t monotonic =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (*now <= 0 || *now > monotonic) {
    std::printf("stamp: the logical clock %lld is not in the past (now %lld)\n", static_cast<long long>(*now),
                static_cast<long long>(monotonic));
    gStampFailed = true;
  }
  s.logicalNs = *now;
  s.hyperepochIteration = info->hyperepochIteration;
  s.epochIteration = info->epochIteration;
  s.frame = info->frame;
  s.scheduleId = info->scheduleId;
  s.instance = info->instance;
  s.epochIterationsC = infoC.epochIterations;
  s.scheduleIdC = infoC.scheduleId;
  if (s.logicalNsC != s.logicalNs || s.epochIterationsC != static_cast<std::uint32_t>(s.epochIteration) ||
      s.scheduleIdC != s.scheduleId) {
    std::printf("stamp: the C API says otherwise than the C++ API\n");
    gStampFailed = true;
  }
  return s;
}

void run(void* userdata) {
  auto& r = *static_cast<Runnable*>(userdata);
  if (!r.probed) {  // which channels this runnable reads and writes (a refusal: not its)
    for (std::size_t c = 0; c < gChannels.size(); ++c) {
      if (gChannels[c].read()) r.reads.push_back(c);
      if (gChannels[c].write()) r.writes.push_back(c);
    }
    r.probed = true;
  }
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t c : r.reads) {
    const auto v = gChannels[c].read();
    const auto status = static_cast<int>(v->status);
    h = fnv(h, &status, sizeof status);
    if (v->status == tactus::VersionStatus::kOk) h = fnv(h, v->data, v->size);
  }
  const Stamp stamp = r.reads.empty() ? Stamp{} : stampOfFrame();
  for (std::size_t c : r.writes) {
    const auto buffer = gChannels[c].write();
    std::uint64_t x = h ^ (c + 1) * 0x9e3779b97f4a7c15ULL;
    for (std::size_t i = 0; i < buffer->size(); i += 8) {
      std::uint64_t word = r.reads.empty() ? r.random() : (x ^= x << 13, x ^= x >> 7, x ^= x << 17);
      std::memcpy(buffer->data() + i, &word, std::min<std::size_t>(8, buffer->size() - i));
    }
    if (!r.reads.empty()) std::memcpy(buffer->data(), &stamp, std::min(sizeof stamp, buffer->size()));
  }
  if (gBusyUs > 0) spin(gBusyUs);
}

int runClient(int argc, char** argv) {
  std::string name, instance;
  std::vector<std::string> channels;
  long long timeoutMs = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--name") name = v;
    else if (a == "--instance") instance = v;
    else if (a == "--channel") channels.push_back(v);
    else if (a == "--busy-us") gBusyUs = std::atoll(v.c_str());
    else if (a == "--timeout-ms") timeoutMs = std::atoll(v.c_str());
  }
  tactus::InitOptions options;
  options.instance = instance;
  options.timeoutMs = timeoutMs;
  if (auto ok = tactus::init(name, options); !ok) {
    std::printf("init failed: %s\n", ok.error().message.c_str());
    return 3;
  }
  for (const std::string& c : channels) {
    auto found = tactus::Channel::find(c);
    if (!found) {
      std::printf("channel %s: %s\n", c.c_str(), found.error().message.c_str());
      return 3;
    }
    gChannels.push_back(*found);
  }
  std::deque<Runnable> runnables;
  const auto names = tactus::scheduledRunnables();
  if (!names) return 4;
  for (const std::string& r : *names) {
    Runnable& runnable = runnables.emplace_back();
    runnable.name = r;
    if (auto ok = tactus::registerRunnable(r, &run, &runnable); !ok) {
      std::printf("register %s: %s\n", r.c_str(), ok.error().message.c_str());
      return 4;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  std::printf("status=%s\n", tactus::runStatusName(outcome.status));
  if (gStampFailed) return 6;
  return outcome.status == tactus::RunStatus::kFrameLimit || outcome.status == tactus::RunStatus::kExitRequested ? 0
                                                                                                                 : 5;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return runClient(argc, argv);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 3;
  }
}
