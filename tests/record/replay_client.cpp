// tactus-replay-client: a client of the replay tests (replay_run_check.sh, bench/replay). Every
// runnable of its client is registered; a runnable that reads no channel (a source) writes fresh
// random bytes into each channel it writes; every other runnable writes a deterministic function
// of the versions it read (their status and bytes), so that a replay whose sources get the
// recorded versions writes, downstream, exactly what the recorded run wrote.
// usage: tactus-replay-client --name CLIENT --instance I --channel NAME... [--busy-us N] [--timeout-ms N]
// Exit: 0 when the run ended by its frame limit, 3 init, 4 registration, 5 otherwise.
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
  for (std::size_t c : r.writes) {
    const auto buffer = gChannels[c].write();
    std::uint64_t x = h ^ (c + 1) * 0x9e3779b97f4a7c15ULL;
    for (std::size_t i = 0; i < buffer->size(); i += 8) {
      std::uint64_t word = r.reads.empty() ? r.random() : (x ^= x << 13, x ^= x >> 7, x ^= x << 17);
      std::memcpy(buffer->data() + i, &word, std::min<std::size_t>(8, buffer->size() - i));
    }
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
