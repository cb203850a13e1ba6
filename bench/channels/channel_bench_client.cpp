// tactus-channel-bench-client: the tactus side of channel-iceoryx-bench. Client Writer runs
// W0..W<K-1>, each writing the header of its channel C<k>'s buffer (PayloadHeader: sequence, then
// the stamp as its last store); client Reader runs R0..R<K-1>, each stamping its start, reading
// the version of C<k> the schedule names, touching its header and stamping again. Each process
// samples its CPU time at the first measured message and the last (the reader also the master's),
// and writes them, with the reader's samples, to --out when the run ends.
//
// usage: tactus-channel-bench-client Writer|Reader --instance NAME --channels K --frames N
//        --warmup-frames W --out FILE [--master-pid PID]
#include <tactus/channel.hpp>
#include <tactus/client.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "payload_bench.hpp"
#include "tactus/ipc/clock.hpp"

namespace tb = tactus::bench;

namespace {

struct Options {
  std::string client, instance, out;
  std::uint64_t channels = 1, frames = 0, warmupFrames = 0;
  int masterPid = 0;
};

// What every runnable of the client shares: the window of measured messages and its CPU times.
struct Shared {
  std::uint64_t channels = 1, firstMeasured = 0, last = 0;
  int masterPid = 0;
  std::int64_t cpuStart = -1, cpuEnd = -1, brokerStart = -1, brokerEnd = -1;
  std::vector<tb::HandOffSample> samples;
  std::uint64_t wrong = 0;  // reader runs whose version or sequence was not the one expected
  std::string firstWrong;

  void sampleCpu(std::uint64_t sequence) {
    if (sequence == firstMeasured) {
      cpuStart = tb::processCpuNsOf(0);
      if (masterPid != 0) brokerStart = tb::processCpuNsOf(masterPid);
    } else if (sequence == last) {
      cpuEnd = tb::processCpuNsOf(0);
      if (masterPid != 0) brokerEnd = tb::processCpuNsOf(masterPid);
    }
  }
};

// One writer runnable W<k>: its channel and how many runs it has had.
struct WriterRun {
  Shared* shared = nullptr;
  const tactus::Channel* channel = nullptr;
  std::uint64_t pair = 0, runs = 0;

  void operator()() {
    auto buffer = channel->write();
    if (!buffer) return;  // the reader sees it not written and counts it
    const std::uint64_t sequence = runs++ * shared->channels + pair;
    shared->sampleCpu(sequence);
    auto* header = reinterpret_cast<tb::PayloadHeader*>(buffer->data());
    header->sequence = sequence;
    header->writtenNs = tactus::ipc::monotonicNs();  // the writer's end
  }
};

// One reader runnable R<k>.
struct ReaderRun {
  Shared* shared = nullptr;
  const tactus::Channel* channel = nullptr;
  std::uint64_t pair = 0;

  void operator()() const {
    const std::int64_t startNs = tactus::ipc::monotonicNs();
    auto version = channel->read();
    if (!version || version->status != tactus::VersionStatus::kOk) {
      if (shared->wrong++ == 0)
        shared->firstWrong = "R" + std::to_string(pair) + ": " +
                             (version ? tactus::versionStatusName(version->status) : version.error().message);
      return;
    }
    const auto* header = reinterpret_cast<const tb::PayloadHeader*>(version->data);
    const std::uint64_t sequence = header->sequence;  // the first touch
    const std::int64_t writtenNs = header->writtenNs;
    const std::int64_t touchNs = tactus::ipc::monotonicNs();
    const std::uint64_t expected = version->writerIteration * shared->channels + pair;
    if (sequence != expected && shared->wrong++ == 0)
      shared->firstWrong = "R" + std::to_string(pair) + ": sequence " + std::to_string(sequence) + ", expected " +
                           std::to_string(expected);
    if (shared->samples.size() < shared->samples.capacity())
      shared->samples.push_back({sequence, writtenNs, startNs, touchNs});
    shared->sampleCpu(sequence);
  }
};

bool writeOut(const Options& o, const Shared& shared) {
  std::FILE* f = std::fopen(o.out.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "cpu %lld %lld %lld %lld\n", static_cast<long long>(shared.cpuStart),
               static_cast<long long>(shared.cpuEnd), static_cast<long long>(shared.brokerStart),
               static_cast<long long>(shared.brokerEnd));
  for (const tb::HandOffSample& s : shared.samples)
    std::fprintf(f, "%llu %lld %lld %lld\n", static_cast<unsigned long long>(s.sequence),
                 static_cast<long long>(s.writtenNs), static_cast<long long>(s.startNs),
                 static_cast<long long>(s.touchNs));
  return std::fclose(f) == 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: tactus-channel-bench-client Writer|Reader --instance NAME --channels K --frames N "
               "--warmup-frames W --out FILE [--master-pid PID]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) return usage();
  Options o;
  o.client = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--instance") o.instance = v;
    else if (a == "--channels") o.channels = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--frames") o.frames = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--warmup-frames") o.warmupFrames = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--out") o.out = v;
    else if (a == "--master-pid") o.masterPid = std::atoi(v.c_str());
    else return usage();
  }
  const bool writer = o.client == "Writer";
  if ((!writer && o.client != "Reader") || o.instance.empty() || o.out.empty() || o.channels == 0 ||
      o.frames <= o.warmupFrames)
    return usage();

  tactus::InitOptions options;
  options.instance = o.instance;
  options.timeoutMs = 30'000;
  if (auto ok = tactus::init(o.client, options); !ok) {
    std::fprintf(stderr, "channel-bench-client %s: init failed: %s\n", o.client.c_str(), ok.error().message.c_str());
    return 3;
  }
  Shared shared;
  shared.channels = o.channels;
  shared.firstMeasured = o.warmupFrames * o.channels;
  shared.last = o.frames * o.channels - 1;
  shared.masterPid = writer ? 0 : o.masterPid;
  if (!writer) shared.samples.reserve(o.frames * o.channels);
  std::vector<tactus::Channel> channels;
  channels.reserve(o.channels);
  for (std::uint64_t k = 0; k < o.channels; ++k) {
    auto channel = tactus::Channel::find("C" + std::to_string(k));
    if (!channel) {
      std::fprintf(stderr, "channel-bench-client: %s\n", channel.error().message.c_str());
      return 3;
    }
    channels.push_back(*channel);
  }
  for (std::uint64_t k = 0; k < o.channels; ++k) {
    const std::string name = (writer ? "W" : "R") + std::to_string(k);
    auto ok = writer ? tactus::registerRunnable(name, WriterRun{&shared, &channels[k], k, 0})
                     : tactus::registerRunnable(name, ReaderRun{&shared, &channels[k], k});
    if (!ok) {
      std::fprintf(stderr, "channel-bench-client %s: %s\n", o.client.c_str(), ok.error().message.c_str());
      return 4;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tactus::shutdown();
  if (!writeOut(o, shared)) {
    std::fprintf(stderr, "channel-bench-client: cannot write %s\n", o.out.c_str());
    return 1;
  }
  if (shared.wrong > 0) {
    std::fprintf(stderr, "channel-bench-client %s: %llu reader runs off their version, first %s\n", o.client.c_str(),
                 static_cast<unsigned long long>(shared.wrong), shared.firstWrong.c_str());
    return 1;
  }
  if (outcome.status != tactus::RunStatus::kFrameLimit) {
    std::fprintf(stderr, "channel-bench-client %s: %s: %s\n", o.client.c_str(), tactus::runStatusName(outcome.status),
                 outcome.message.c_str());
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "channel-bench-client: %s\n", e.what());
  return 1;
}
