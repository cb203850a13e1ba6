// channel-iceoryx-bench: a tactus channel against iceoryx, the zero-copy reference, in one run and
// interleaved, at payloads of 64 B, 64 KiB and 4 MiB (the writer writes the header only: neither
// side copies the payload):
//   tactus   writer runnable W<k> (client Writer, CPU0) takes its channel buffer, writes the header,
//            stamps it; reader runnable R<k> (client Reader, CPU1, after W<k>) stamps its start,
//            reads the version the schedule names, touches its header, stamps again
//   iceoryx  the publisher (core 0) loans a chunk, writes the header, stamps it and publishes; the
//            subscriber (core 1), woken by its WaitSet, stamps, takes, touches, stamps again
// Hand-off: the writer's stamp to the reader's start, and to its first touch. Two paces: 1 kHz
// (a 1 ms period; a message per tick) and as fast as each allows (tactus: pairs W<k> -> R<k>, each
// W<k+1> after R<k>, back to back in a frame; iceoryx: each message after the previous one's ack).
// CPU per message: each process's CPU time over the measured messages (writer, reader, and the
// broker: tactus-master or RouDi). RouDi runs in private namespaces (iox_domain.hpp).
//
// usage: channel-iceoryx-bench --compile TACTUS_COMPILE --master TACTUS_MASTER
//        --client CHANNEL_BENCH_CLIENT --roudi IOX_ROUDI [--quick] [--repeat N] [--paced N] [--fast N]
//        [--fifo PRIO]
// --paced / --fast: messages per run at 1 kHz (default 3000) and as fast as possible (20000);
// --repeat (default 3): repetitions, the order of the two sides alternating; then the medians;
// --fifo PRIO: writers and readers of both sides under SCHED_FIFO at PRIO (tactus's worker
// threads through TACTUS_WORKER_POLICY; the brokers stay as they are), as a deployment runs them.
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>

#include "bench_support.hpp"
#include "iox_domain.hpp"

namespace tb = tactus::bench;

namespace {

struct Options {
  std::string compile, master, client, roudi;
  bool quick = false;
  int repeat = 3;
  std::uint64_t paced = 3000, fast = 20000;
  int fifo = 0;
};

constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;
const std::vector<std::uint64_t> kSizes = {64, 64 * kKiB, 4 * kMiB};
constexpr std::int64_t kPeriodNs = 1'000'000;  // 1 kHz
constexpr std::uint64_t kWarmupFrames = 2;

// One pace: the tactus frame's pairs and the messages of a run.
struct Pace {
  const char* name;
  bool paced;
};

// The channels (pairs) per frame of the fast tactus run: back to back, in a 1 ms frame, as many
// as keep the buffers at 64 MiB or less.
std::uint64_t fastPairs(std::uint64_t size) { return size <= 64 * kKiB ? 40 : 16; }

std::string sizeName(std::uint64_t size) {
  if (size >= kMiB) return std::to_string(size / kMiB) + " MiB";
  if (size >= kKiB) return std::to_string(size / kKiB) + " KiB";
  return std::to_string(size) + " B";
}

// The graph: pairs W<k> (Writer, CPU0) -> R<k> (Reader, CPU1) over channel C<k>, each W<k+1>
// after R<k>; WCETs of 5 us, so a reader spins for its writer from the writer's start.
std::string channelGraph(std::uint64_t pairs, std::uint64_t size, std::int64_t periodNs) {
  std::string writer, reader, channels;
  for (std::uint64_t k = 0; k < pairs; ++k) {
    const std::string n = std::to_string(k);
    writer.append("                - W").append(n).append(": {WCET: 5us, Resources: [CPU0]");
    if (k > 0) writer.append(", Dependencies: [Reader.R").append(std::to_string(k - 1)).append("]");
    writer.append("}\n");
    reader.append("                - R").append(n).append(": {WCET: 5us, Resources: [CPU1], Dependencies: [Writer.W");
    reader.append(n).append("]}\n");
    channels.append("    - C").append(n).append(": {Writer: Writer.W").append(n).append(", Readers: [Reader.R");
    channels.append(n).append("], Size: ").append(std::to_string(size)).append("}\n");
  }
  return "Version: 3.0.0\nChannelBench:\n  Identifier: 9\n  Resources:\n    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n    - Main:\n        Epochs:\n          - Frame: {Period: " +
         std::to_string(periodNs / 1000) + "us}\n  Clients:\n" +
         "    - Writer:\n        Epochs:\n          - Main.Frame:\n              Runnables:\n" + writer +
         "    - Reader:\n        Epochs:\n          - Main.Frame:\n              Runnables:\n" + reader +
         "  Channels:\n" + channels;
}

// Reads a client's --out file: its CPU window (and the master's), and the reader's samples.
bool readClientOut(const std::string& path, std::int64_t cpu[4], std::vector<tb::HandOffSample>* samples) {
  std::ifstream in(path);
  std::string word;
  long long c[4] = {};
  if (!(in >> word >> c[0] >> c[1] >> c[2] >> c[3]) || word != "cpu") return false;
  for (int i = 0; i < 4; ++i) cpu[i] = c[i];
  unsigned long long sequence = 0;
  long long written = 0, start = 0, touch = 0;
  while (samples != nullptr && in >> sequence >> written >> start >> touch)
    samples->push_back({sequence, written, start, touch});
  return true;
}

// One tactus run: compiled, master and both clients started, their out files read.
tb::IoxResult tactusRun(const Options& o, const std::string& dir, std::uint64_t size, std::uint64_t pairs,
                        std::uint64_t frames, std::int64_t periodNs) {
  tb::IoxResult result;
  const std::string yaml = dir + "/bench.yaml", sched = dir + "/bench.tsched";
  std::ofstream(yaml) << channelGraph(pairs, size, periodNs);
  const std::int64_t deadline = tb::monotonicNs() + 300'000'000'000LL;
  if (tb::waitUntil(tb::spawn({o.compile, "-i", yaml, "-o", sched}, dir + "/compile.out"), deadline) != 0) {
    result.error = "tactus-compile failed:\n" + tb::readText(dir + "/compile.out");
    return result;
  }
  const std::string instance = "chanbench_" + std::to_string(getpid());
  for (const char* f : {"/master.out", "/writer.out", "/reader.out", "/writer.txt", "/reader.txt"})
    std::remove((dir + f).c_str());
  std::fflush(nullptr);
  const pid_t master = tb::spawn(
      {o.master, "-s", sched, "-e", std::to_string(frames), "-D", instance, "-t", "30000000"}, dir + "/master.out");
  auto client = [&](const std::string& name, const std::string& out) {
    return tb::spawn({o.client, name, "--instance", instance, "--channels", std::to_string(pairs), "--frames",
                      std::to_string(frames), "--warmup-frames", std::to_string(kWarmupFrames), "--out", out,
                      "--master-pid", std::to_string(master)},
                     out + ".log");
  };
  const pid_t writer = client("Writer", dir + "/writer.txt");
  const pid_t reader = client("Reader", dir + "/reader.txt");
  const std::vector<int> rs = tb::waitAll({master, writer, reader}, deadline);
  std::int64_t w[4] = {}, r[4] = {};
  if (rs[0] != 0 || rs[1] != 0 || rs[2] != 0 || !readClientOut(dir + "/writer.txt", w, nullptr) ||
      !readClientOut(dir + "/reader.txt", r, &result.samples)) {
    result.error = "the tactus run failed (master " + std::to_string(rs[0]) + ", writer " + std::to_string(rs[1]) +
                   ", reader " + std::to_string(rs[2]) + "):\n" + tb::readText(dir + "/master.out") +
                   tb::readText(dir + "/writer.txt.log") + tb::readText(dir + "/reader.txt.log");
    return result;
  }
  const std::uint64_t firstMeasured = kWarmupFrames * pairs;
  std::erase_if(result.samples, [&](const tb::HandOffSample& s) { return s.sequence < firstMeasured; });
  if (result.samples.size() != (frames - kWarmupFrames) * pairs)
    result.error = "the reader saw " + std::to_string(result.samples.size()) + " measured messages, expected " +
                   std::to_string((frames - kWarmupFrames) * pairs);
  result.writerCpuNs = w[1] - w[0];
  result.readerCpuNs = r[1] - r[0];
  result.brokerCpuNs = r[3] - r[2];
  return result;
}

// Percentiles of one side's run, and its CPU per message.
struct Figures {
  tb::Percentiles start, touch;
  double writerUs = 0, readerUs = 0, brokerUs = 0;
  double totalUs() const { return writerUs + readerUs + brokerUs; }
};

Figures figuresOf(const tb::IoxResult& r) {
  Figures f;
  std::vector<std::int64_t> start, touch;
  for (const tb::HandOffSample& s : r.samples) {
    start.push_back(s.startNs - s.writtenNs);
    touch.push_back(s.touchNs - s.writtenNs);
  }
  f.start = tb::percentiles(start);
  f.touch = tb::percentiles(touch);
  // The CPU windows span the measured messages but the first.
  const double n = r.samples.size() > 1 ? static_cast<double>(r.samples.size() - 1) : 1.0;
  f.writerUs = static_cast<double>(r.writerCpuNs) / 1e3 / n;
  f.readerUs = static_cast<double>(r.readerCpuNs) / 1e3 / n;
  f.brokerUs = static_cast<double>(r.brokerCpuNs) / 1e3 / n;
  return f;
}

void printRow(const char* name, const Figures& f) {
  std::printf("  %-18s %7.0f %7.0f %8.0f   %7.0f %7.0f %8.0f   %6.2f %6.2f %6.2f %6.2f\n", name, f.start.p50,
              f.start.p99, f.start.max, f.touch.p50, f.touch.p99, f.touch.max, f.writerUs, f.readerUs, f.brokerUs,
              f.totalUs());
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

// Every repetition's figures of one pace and size, for the medians.
struct Series {
  std::vector<double> tactusP50, tactusP99, ioxP50, ioxP99, ratioP50, ratioP99, tactusCpu, ioxCpu;
};

int usage() {
  std::fprintf(stderr,
               "usage: channel-iceoryx-bench --compile TACTUS_COMPILE --master TACTUS_MASTER --client "
               "CHANNEL_BENCH_CLIENT --roudi IOX_ROUDI [--quick] [--repeat N] [--paced N] [--fast N] [--fifo PRIO]\n");
  return 2;
}

void printLoad(const char* when) {
  double load[3] = {};
  if (getloadavg(load, 3) == 3) std::printf("load average %s: %.2f %.2f %.2f\n", when, load[0], load[1], load[2]);
}

// One pace and size of one repetition: both sides, in the order given; false on failure.
bool runSegment(const Options& o, tb::IoxDomain& domain, const std::string& dir, const Pace& pace, std::uint64_t size,
                bool tactusFirst, int rep, Series& series) {
  const std::uint64_t pairs = pace.paced ? 1 : fastPairs(size);
  const std::uint64_t messages = pace.paced ? o.paced : o.fast;
  const std::uint64_t frames = std::max<std::uint64_t>(kWarmupFrames + 2, (messages + pairs - 1) / pairs);
  tb::IoxRequest request{size, frames * pairs, kWarmupFrames * pairs, pace.paced ? kPeriodNs : 0, o.fifo};
  tb::IoxResult tactus, iox;
  for (int side = 0; side < 2; ++side) {
    if ((side == 0) == tactusFirst) tactus = tactusRun(o, dir, size, pairs, frames, kPeriodNs);
    else iox = domain.run(request, 600'000'000'000LL);
  }
  if (!tactus.error.empty() || !iox.error.empty()) {
    std::fprintf(stderr, "channel-iceoryx-bench: %s, %s: %s\n", sizeName(size).c_str(), pace.name,
                 (!tactus.error.empty() ? tactus.error : iox.error).c_str());
    return false;
  }
  const Figures t = figuresOf(tactus), x = figuresOf(iox);
  std::printf("%s, %s, repetition %d of %d (%s first): %zu messages measured each side\n", sizeName(size).c_str(),
              pace.name, rep, o.repeat, tactusFirst ? "tactus" : "iceoryx", tactus.samples.size());
  std::printf("  %-18s %7s %7s %8s   %7s %7s %8s   %6s %6s %6s %6s\n", "ns; CPU us/msg", "start50", "p99", "max",
              "touch50", "p99", "max", "writer", "reader", "broker", "total");
  printRow("tactus channel", t);
  printRow("iceoryx WaitSet", x);
  std::printf("  ratio tactus / iceoryx: p50 %.2f p99 %.2f (first touch; reader's start: p50 %.2f p99 %.2f)\n",
              ratio(t.touch.p50, x.touch.p50), ratio(t.touch.p99, x.touch.p99), ratio(t.start.p50, x.start.p50),
              ratio(t.start.p99, x.start.p99));
  series.tactusP50.push_back(t.touch.p50);
  series.tactusP99.push_back(t.touch.p99);
  series.ioxP50.push_back(x.touch.p50);
  series.ioxP99.push_back(x.touch.p99);
  series.ratioP50.push_back(ratio(t.touch.p50, x.touch.p50));
  series.ratioP99.push_back(ratio(t.touch.p99, x.touch.p99));
  series.tactusCpu.push_back(t.totalUs());
  series.ioxCpu.push_back(x.totalUs());
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--compile") o.compile = value();
    else if (a == "--master") o.master = value();
    else if (a == "--client") o.client = value();
    else if (a == "--roudi") o.roudi = value();
    else if (a == "--quick") o.quick = true;
    else if (a == "--repeat") o.repeat = std::atoi(value().c_str());
    else if (a == "--paced") o.paced = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--fast") o.fast = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--fifo") o.fifo = std::atoi(value().c_str());
    else return usage();
  }
  if (o.quick) {
    o.repeat = 1;
    o.paced = 20;
    o.fast = 200;
  }
  if (o.compile.empty() || o.master.empty() || o.client.empty() || o.roudi.empty() || o.repeat < 1 || o.repeat > 100 ||
      o.paced < 1 || o.fast < 1)
    return usage();
  if (!tb::haveCores01()) {
    std::printf("channel-iceoryx-bench: needs cores 0 and 1, skipped\n");
    return 77;
  }
  tb::TempDir dir;
  if (dir.path().empty()) {
    std::fprintf(stderr, "channel-iceoryx-bench: cannot make a temporary directory\n");
    return 1;
  }
  // A run's messages: whole frames of up to 40 pairs, at least kWarmupFrames + 2 of them.
  const std::uint64_t maxMessages = std::max(o.paced, o.fast) + (kWarmupFrames + 2) * 40 + 64;
  tb::IoxDomain domain(o.roudi, kSizes, maxMessages);
  if (!domain.error().empty()) {
    std::printf("channel-iceoryx-bench: %s%s\n", domain.error().c_str(),
                domain.noNamespaces() ? " (no private namespaces for RouDi here; skipped)" : "");
    return domain.noNamespaces() ? 77 : 1;
  }
  printLoad("at start");
  std::printf("hand-off from the writer's end (its last store) to the reader's start and first touch of the data%s%s\n",
              o.fifo > 0 ? (", writers and readers SCHED_FIFO " + std::to_string(o.fifo)).c_str() : "",
              o.quick ? " [quick: checks that it works, no figures to keep]" : "");
  const Pace paces[] = {{"1 kHz", true}, {"as fast as each allows", false}};
  std::map<std::pair<int, std::uint64_t>, Series> all;
  for (int rep = 1; rep <= o.repeat; ++rep) {
    for (int p = 0; p < 2; ++p) {
      for (const std::uint64_t size : kSizes) {
        if (!runSegment(o, domain, dir.path(), paces[p], size, rep % 2 == 1, rep, all[{p, size}])) return 1;
      }
    }
  }
  printLoad("at end");
  std::printf("medians over %d repetitions, first touch, ns (CPU: us per message, all three processes):\n", o.repeat);
  bool met = true;
  for (const auto& [key, s] : all) {
    std::printf("  %-22s %-7s tactus p50 %6.0f p99 %7.0f CPU %6.2f | iceoryx p50 %6.0f p99 %7.0f CPU %6.2f\n",
                paces[key.first].name, sizeName(key.second).c_str(), median(s.tactusP50), median(s.tactusP99),
                median(s.tactusCpu), median(s.ioxP50), median(s.ioxP99), median(s.ioxCpu));
    std::printf("    ratio tactus / iceoryx: p50 %.2f p99 %.2f\n", median(s.ratioP50), median(s.ratioP99));
    if (key.second == 64 * kKiB) met = met && median(s.ratioP50) <= 1.0 && median(s.ratioP99) <= 1.0;
  }
  std::printf("target (64 KiB, both paces: tactus p50 and p99 at or below iceoryx's): %s\n", met ? "met" : "missed");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "channel-iceoryx-bench: %s\n", e.what());
  return 1;
}
