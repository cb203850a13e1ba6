// autoware_client: one client process of samples/autoware_reference/autoware_reference.yaml, the
// Autoware reference system of ros-realtime/reference-system (autoware_reference_system) on tactus.
// Every node is a runnable that does what the reference system's node does: a timer source stamps
// a message, a transform, fusion or cyclic node runs the number cruncher (primes below a
// per-node count) and hands on a 4 KiB message that carries the history of timestamps of every
// node it passed through (reference_interfaces/msg/Message4kb), a command sink takes its input.
// Messages between clients or epochs travel in tactus channels; within a client and epoch, the
// graph's dependencies order the runs and the message stays in the process.
//
//   tactus-compile -i samples/autoware_reference/autoware_reference.yaml -o autoware.tsched
//   tactus-master -s autoware.tsched -e 20 -D aw &
//   for c in FrontLidar RearLidar Fusion Planning Other; do tactus-sample-autoware $c --instance aw & done
//   tactus-sample-autoware --calibrate        # the number cruncher's duration on this machine
//
// The object collision estimator records the hot-path latency as the reference system does
// (sample_management.hpp: from the later of the two lidar drivers' timer stamps in its input's
// history to its own entry), the behaviour planner its period; every node counts the samples of
// its inputs it missed (sequence gaps), read twice (stale) or found not written. At the end each
// process prints its figures, one line each, the first hyperepoch iteration (warm-up) left out
// of the timings.
#include <tactus/channel.hpp>
#include <tactus/client.hpp>

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

// reference_interfaces/msg/TransmissionStats.idl: one node's entry in a message's history.
struct TransmissionStats {
  std::uint64_t timestamp;  // CLOCK_MONOTONIC ns at which the node's callback began
  std::uint32_t sequenceNumber;
  std::uint32_t droppedSamples;  // the input samples the node missed in that run
  char nodeName[48];
};
constexpr std::uint64_t kStatsCapacity = 63;
// reference_interfaces/msg/Message4kb.idl: the one message type of the reference system.
struct Message4kb {
  std::uint64_t size;  // entries of stats in use
  TransmissionStats stats[kStatsCapacity];
  std::int64_t data[7];
};
static_assert(sizeof(Message4kb) == 4096, "the channels' Size in autoware_reference.yaml");

// number_cruncher.hpp: counts the primes up to `maximum` by trial division, the reference
// system's stand-in for a node's work (a fixed amount of work, not of time).
template <typename T>
inline void escape(const T& value) {
  asm volatile("" : : "g"(value) : "memory");
}
std::int64_t numberCruncher(std::uint64_t maximum) {
  std::int64_t primes = 0;
  if (maximum <= 2) return 2;
  for (std::uint64_t i = 2; i <= maximum; ++i) {
    bool isPrime = true;
    for (std::uint64_t n = 2; n < i; ++n) {
      if (i % n == 0) {
        isPrime = false;
        break;
      }
    }
    escape(isPrime);
    if (isPrime) ++primes;
  }
  return primes;
}

std::int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The node types of reference_system/nodes (the intersection node's two callbacks are two
// transforms here, EuclideanClusterDetector and EuclideanIntersection).
enum class Kind { kSensor, kTransform, kFusion, kCyclic, kCommand };

// One node of the graph: its runnable (the same name), client and epoch in the YAML graph, and its
// inputs (the nodes whose topics it subscribes to).
struct NodeSpec {
  const char* name;
  const char* client;
  const char* epoch;
  Kind kind;
  std::uint64_t crunch;  // the number cruncher's count (timing/default.hpp: 4096 for every node)
  std::array<const char*, 6> inputs;
};
constexpr std::uint64_t kCrunch = 4096;
constexpr NodeSpec kNodes[] = {
    {"FrontLidarDriver", "FrontLidar", "Lidar", Kind::kSensor, 0, {}},
    {"PointsTransformerFront", "FrontLidar", "Lidar", Kind::kTransform, kCrunch, {"FrontLidarDriver"}},
    {"RearLidarDriver", "RearLidar", "Lidar", Kind::kSensor, 0, {}},
    {"PointsTransformerRear", "RearLidar", "Lidar", Kind::kTransform, kCrunch, {"RearLidarDriver"}},
    {"PointCloudFusion",
     "Fusion",
     "Lidar",
     Kind::kFusion,
     kCrunch,
     {"PointsTransformerFront", "PointsTransformerRear"}},
    {"RayGroundFilter", "Fusion", "Lidar", Kind::kTransform, kCrunch, {"PointCloudFusion"}},
    {"EuclideanClusterDetector", "Fusion", "Lidar", Kind::kTransform, kCrunch, {"RayGroundFilter"}},
    {"ObjectCollisionEstimator", "Fusion", "Lidar", Kind::kTransform, kCrunch, {"EuclideanClusterDetector"}},
    {"EuclideanIntersection", "Fusion", "ClusterSettings", Kind::kTransform, kCrunch, {"EuclideanClusterSettings"}},
    {"BehaviorPlanner",
     "Planning",
     "Planning",
     Kind::kCyclic,
     kCrunch,
     {"ObjectCollisionEstimator", "NDTLocalizer", "Lanelet2GlobalPlanner", "Lanelet2MapLoader", "ParkingPlanner",
      "LanePlanner"}},
    {"MPCController", "Planning", "Planning", Kind::kTransform, kCrunch, {"BehaviorPlanner"}},
    {"VehicleInterface", "Planning", "Planning", Kind::kFusion, kCrunch, {"MPCController", "BehaviorPlanner"}},
    {"VehicleDBWSystem", "Planning", "Planning", Kind::kCommand, 0, {"VehicleInterface"}},
    {"VoxelGridDownsampler", "Other", "Lidar", Kind::kTransform, kCrunch, {"PointCloudFusion"}},
    {"Lanelet2Map", "Other", "Lanelet2Map", Kind::kSensor, 0, {}},
    {"PointCloudMap", "Other", "Map", Kind::kSensor, 0, {}},
    {"PointCloudMapLoader", "Other", "Map", Kind::kTransform, kCrunch, {"PointCloudMap"}},
    {"NDTLocalizer", "Other", "Map", Kind::kFusion, kCrunch, {"VoxelGridDownsampler", "PointCloudMapLoader"}},
    {"Lanelet2GlobalPlanner", "Other", "Map", Kind::kFusion, kCrunch, {"Visualizer", "NDTLocalizer"}},
    {"Lanelet2MapLoader", "Other", "Map", Kind::kFusion, kCrunch, {"Lanelet2Map", "Lanelet2GlobalPlanner"}},
    {"ParkingPlanner", "Other", "Map", Kind::kTransform, kCrunch, {"Lanelet2MapLoader"}},
    {"LanePlanner", "Other", "Map", Kind::kTransform, kCrunch, {"Lanelet2MapLoader"}},
    {"Visualizer", "Other", "Visualizer", Kind::kSensor, 0, {}},
    {"EuclideanClusterSettings", "Other", "ClusterSettings", Kind::kSensor, 0, {}},
    {"IntersectionOutput", "Other", "ClusterSettings", Kind::kCommand, 0, {"EuclideanIntersection"}},
};
constexpr const char* kClients[] = {"FrontLidar", "RearLidar", "Fusion", "Planning", "Other"};
// The reference system's hot path (autoware_system_builder.hpp: set_hot_path).
constexpr std::string_view kHotPathRoots[] = {"FrontLidarDriver", "RearLidarDriver"};
constexpr std::string_view kHotPathNodes[] = {
    "FrontLidarDriver", "RearLidarDriver", "PointsTransformerFront",   "PointsTransformerRear",
    "PointCloudFusion", "RayGroundFilter", "EuclideanClusterDetector", "ObjectCollisionEstimator"};
constexpr std::string_view kHotPathSink = "ObjectCollisionEstimator";

const NodeSpec* findSpec(std::string_view name) {
  for (const NodeSpec& s : kNodes) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// Count, mean, standard deviation (Welford, as sample_management.hpp), min and max.
struct Stats {
  std::uint64_t n = 0;
  double mean = 0, m2 = 0, min = 0, max = 0;
  void add(double v) {
    ++n;
    const double delta = v - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (v - mean);
    min = n == 1 ? v : std::min(min, v);
    max = n == 1 ? v : std::max(max, v);
  }
  double stddev() const { return n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0; }
};

struct NodeState;

// One input of a node: the writer's message in this process (same client and epoch, ordered by a
// dependency) or the writer's channel; and the writer's last sequence number seen.
struct Input {
  const NodeState* local = nullptr;
  std::optional<tactus::Channel> channel;
  std::uint32_t lastSequence = 0;
  bool seen = false;
};

// A node at run time: its last output, its inputs and what it counted. Touched by its own
// runnable only (and its output, read-only, by the later runnables of its epoch in this client).
struct NodeState {
  const NodeSpec* spec = nullptr;
  Message4kb out{};
  std::uint32_t sequence = 0;
  bool written = false;
  std::vector<Input> inputs;
  std::optional<tactus::Channel> channel;  // its output's channel, when another client or epoch reads it
  std::uint64_t runs = 0, dropped = 0, stale = 0, notWritten = 0, noneYet = 0, errors = 0;
  Stats durationMs;
  // The behaviour planner: its period; the collision estimator: the hot path's latency and drops.
  std::int64_t lastStartNs = 0;
  Stats periodMs, latencyMs;
  std::uint64_t hotPathDrops = 0, hotPathIncomplete = 0;
};

// sample_management.hpp's set_sample: appends the node's own entry to the message's history.
void setSample(Message4kb& m, const char* name, std::uint32_t sequence, std::uint32_t dropped, std::int64_t ns) {
  if (m.size >= kStatsCapacity) return;
  TransmissionStats& s = m.stats[m.size++];
  std::memset(s.nodeName, 0, sizeof s.nodeName);
  std::strncpy(s.nodeName, name, sizeof s.nodeName - 1);
  s.timestamp = static_cast<std::uint64_t>(ns);
  s.sequenceNumber = sequence;
  s.droppedSamples = dropped;
}

// merge_history_into_sample: the input's entries of nodes the message does not hold yet.
void mergeHistory(Message4kb& m, const Message4kb& from) {
  const std::uint64_t have = m.size;
  for (std::uint64_t i = 0; i < std::min(from.size, kStatsCapacity) && m.size < kStatsCapacity; ++i) {
    bool found = false;
    for (std::uint64_t k = 0; k < have && !found; ++k) {
      found = std::strncmp(m.stats[k].nodeName, from.stats[i].nodeName, sizeof m.stats[k].nodeName) == 0;
    }
    if (!found) m.stats[m.size++] = from.stats[i];
  }
}

// The input's message for this run, or null (not written, none yet: counted).
const Message4kb* readInput(NodeState& node, const Input& in) {
  if (in.local != nullptr) return in.local->written ? &in.local->out : nullptr;
  auto version = in.channel->readAs<Message4kb>();
  if (!version) {
    if (node.errors++ == 0) std::fprintf(stderr, "%s: %s\n", node.spec->name, version.error().message.c_str());
    return nullptr;
  }
  switch (version->status) {
    case tactus::VersionStatus::kOk: return version->data;
    case tactus::VersionStatus::kNoVersionYet: ++node.noneYet; return nullptr;
    case tactus::VersionStatus::kNotWritten: ++node.notWritten; return nullptr;
  }
  return nullptr;
}

// get_missed_samples_and_update_seq_nr: the writer's samples missed since the last one this input
// saw (from the first it saw); a repeat of the last one is stale. Returns whether it is fresh.
bool account(NodeState& node, Input& in, const Message4kb& m, std::uint32_t& missed) {
  const std::uint32_t sequence = m.size > 0 ? m.stats[m.size - 1].sequenceNumber : 0;
  const bool first = !in.seen;
  in.seen = true;
  if (!first && sequence == in.lastSequence) {
    ++node.stale;
    return false;
  }
  if (!first && sequence > in.lastSequence) missed += sequence - in.lastSequence - 1;
  in.lastSequence = sequence;
  return true;
}

// ObjectCollisionEstimator: the hot path's latency, from the later lidar driver's stamp in the
// input's history to this run's entry, and the drops its hot-path entries carry (as
// print_sample_path does at the reference system's sinks).
void recordHotPath(NodeState& node, const Message4kb& in, std::int64_t startNs, bool measured) {
  std::uint64_t root = 0;
  int roots = 0;
  std::uint64_t drops = 0;
  for (std::uint64_t i = 0; i < std::min(in.size, kStatsCapacity); ++i) {
    const std::string_view name(in.stats[i].nodeName, strnlen(in.stats[i].nodeName, sizeof in.stats[i].nodeName));
    if (std::find(std::begin(kHotPathRoots), std::end(kHotPathRoots), name) != std::end(kHotPathRoots)) {
      root = std::max(root, in.stats[i].timestamp);
      ++roots;
    }
    if (std::find(std::begin(kHotPathNodes), std::end(kHotPathNodes), name) != std::end(kHotPathNodes)) {
      drops += in.stats[i].droppedSamples;
    }
  }
  node.hotPathDrops += drops;
  if (roots < 2) ++node.hotPathIncomplete;
  if (roots > 0 && measured) node.latencyMs.add(static_cast<double>(startNs - static_cast<std::int64_t>(root)) / 1e6);
}

// Reads every input into `out`'s history; returns the samples missed. A cyclic node takes only
// fresh inputs (its caches are reset after use); the others count a missing or stale input as a
// sample dropped in this run, as a fusion in ROS would not have fired on it.
std::uint32_t gatherInputs(NodeState& node, std::int64_t startNs, bool measured) {
  std::uint32_t missed = 0;
  for (Input& in : node.inputs) {
    const std::uint64_t noneYet = node.noneYet;
    const Message4kb* m = readInput(node, in);
    if (m == nullptr) {
      // Before the writer's first run nothing was dropped; after it, a missing version was.
      if (node.spec->kind != Kind::kCyclic && node.noneYet == noneYet) ++missed;
      continue;
    }
    const bool fresh = account(node, in, *m, missed);
    if (!fresh && node.spec->kind != Kind::kCyclic) ++missed;
    if (fresh || node.spec->kind != Kind::kCyclic) mergeHistory(node.out, *m);
    if (node.spec->name == kHotPathSink) recordHotPath(node, *m, startNs, measured);
  }
  return missed;
}

// A node's runnable: what its reference_system node does in its callback.
void runNode(void* userdata) {
  NodeState& node = *static_cast<NodeState*>(userdata);
  const std::int64_t startNs = monotonicNs();
  auto info = tactus::runtimeInfo();
  const bool measured = info && info->hyperepochIteration > 0;  // the first iteration is warm-up
  ++node.runs;
  if (node.spec->kind == Kind::kCyclic) {
    if (node.lastStartNs != 0 && measured) node.periodMs.add(static_cast<double>(startNs - node.lastStartNs) / 1e6);
    node.lastStartNs = startNs;
  }
  const std::int64_t result = node.spec->crunch > 0 ? numberCruncher(node.spec->crunch) : 0;
  node.out.size = 0;
  const std::uint32_t missed = gatherInputs(node, startNs, measured);
  node.dropped += missed;
  if (node.spec->kind != Kind::kCommand) {
    setSample(node.out, node.spec->name, node.sequence++, missed, startNs);
    node.out.data[0] = result;  // the cruncher's result, so that it is not optimised away
    node.written = true;
    if (node.channel) {
      auto buffer = node.channel->writeAs<Message4kb>();
      if (buffer) {
        std::memcpy(*buffer, &node.out, sizeof node.out);
      } else if (node.errors++ == 0) {
        std::fprintf(stderr, "%s: %s\n", node.spec->name, buffer.error().message.c_str());
      }
    }
  }
  if (measured) node.durationMs.add(static_cast<double>(monotonicNs() - startNs) / 1e6);
}

// The client's nodes with their inputs and channels (after init). `states` is sized once, so the
// local inputs' pointers into it stay valid.
bool buildNodes(const std::string& client, std::vector<NodeState>& states) {
  std::size_t count = 0;
  for (const NodeSpec& s : kNodes) count += client == s.client ? 1 : 0;
  states.resize(count);
  std::size_t k = 0;
  for (const NodeSpec& s : kNodes) {
    if (client == s.client) states[k++].spec = &s;
  }
  for (NodeState& node : states) {
    if (auto c = tactus::Channel::find(node.spec->name); c) node.channel = *c;
    for (const char* name : node.spec->inputs) {
      if (name == nullptr) break;
      const NodeSpec* writer = findSpec(name);
      Input in;
      if (std::string_view(writer->client) == client && std::string_view(writer->epoch) == node.spec->epoch) {
        for (const NodeState& other : states) {
          if (other.spec == writer) in.local = &other;
        }
      } else {
        auto c = tactus::Channel::find(name);
        if (!c) {
          std::fprintf(stderr, "tactus-sample-autoware: %s: %s\n", node.spec->name, c.error().message.c_str());
          return false;
        }
        in.channel = *c;
      }
      node.inputs.push_back(std::move(in));
    }
  }
  return true;
}

void printStats(const char* what, const Stats& s) {
  std::printf("%s n=%llu mean=%.3f min=%.3f max=%.3f std=%.3f", what, static_cast<unsigned long long>(s.n), s.mean,
              s.min, s.max, s.stddev());
}

// Each node's line, then the hot path's and the planner's, then the process's CPU time.
void printFigures(const std::string& client, const std::vector<NodeState>& states) {
  for (const NodeState& node : states) {
    std::printf("node %s runs=%llu dropped=%llu stale=%llu not_written=%llu no_version_yet=%llu errors=%llu ",
                node.spec->name, static_cast<unsigned long long>(node.runs),
                static_cast<unsigned long long>(node.dropped), static_cast<unsigned long long>(node.stale),
                static_cast<unsigned long long>(node.notWritten), static_cast<unsigned long long>(node.noneYet),
                static_cast<unsigned long long>(node.errors));
    printStats("duration_ms", node.durationMs);
    std::printf("\n");
    if (node.spec->name == kHotPathSink) {
      printStats("hot_path_latency_ms", node.latencyMs);
      std::printf(" drops=%llu incomplete=%llu\n", static_cast<unsigned long long>(node.hotPathDrops),
                  static_cast<unsigned long long>(node.hotPathIncomplete));
    }
    if (node.spec->kind == Kind::kCyclic) {
      printStats("behavior_planner_period_ms", node.periodMs);
      std::printf("\n");
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  };
  std::printf("cpu client=%s user_ms=%.1f system_ms=%.1f\n", client.c_str(), ms(usage.ru_utime), ms(usage.ru_stime));
}

// --calibrate: the number cruncher's duration for each count the graph uses, and the WCET that
// gives 1.3 x its 99th percentile (rounded up to 0.5 ms).
int calibrate(int runs) {
  std::vector<std::uint64_t> counts;
  for (const NodeSpec& s : kNodes) {
    if (s.crunch > 0 && std::find(counts.begin(), counts.end(), s.crunch) == counts.end()) counts.push_back(s.crunch);
  }
  for (std::uint64_t count : counts) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      const std::int64_t start = monotonicNs();
      escape(numberCruncher(count));
      ms.push_back(static_cast<double>(monotonicNs() - start) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    const auto rank = [&](double q) {
      return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
    };
    const double wcet = std::ceil(rank(0.99) * 1.3 * 2.0) / 2.0;
    std::printf("number cruncher %llu: runs=%d min=%.3f median=%.3f p99=%.3f max=%.3f ms; WCET at 1.3 x p99: %.1fms\n",
                static_cast<unsigned long long>(count), runs, ms.front(), rank(0.5), rank(0.99), ms.back(), wcet);
  }
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: tactus-sample-autoware CLIENT [--instance NAME] [--timeout-ms MS]\n"
               "       tactus-sample-autoware --calibrate [--runs N]\n"
               "CLIENT: FrontLidar, RearLidar, Fusion, Planning or Other\n");
  return 2;
}

// A whole number in lo..hi, or nullopt (with a message).
std::optional<long long> number(const char* option, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "tactus-sample-autoware: %s expects %lld..%lld, got '%s'\n", option, lo, hi, text);
    return std::nullopt;
  }
  return v;
}

int runClient(const std::string& client, const tactus::InitOptions& options) {
  if (auto ok = tactus::init(client, options); !ok) {
    std::fprintf(stderr, "tactus-sample-autoware: %s\n", ok.error().message.c_str());
    return 1;
  }
  std::vector<NodeState> states;
  if (!buildNodes(client, states)) {
    tactus::shutdown();
    return 1;
  }
  for (NodeState& node : states) {
    if (auto ok = tactus::registerRunnable(node.spec->name, runNode, &node); !ok) {
      std::fprintf(stderr, "tactus-sample-autoware: %s\n", ok.error().message.c_str());
      tactus::shutdown();
      return 1;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  std::printf("client %s: run ended (%s): %s\n", client.c_str(), tactus::runStatusName(outcome.status),
              outcome.message.c_str());
  printFigures(client, states);
  std::fflush(stdout);
  tactus::shutdown();
  const bool ended = outcome.status == tactus::RunStatus::kFrameLimit ||
                     outcome.status == tactus::RunStatus::kExitRequested ||
                     outcome.status == tactus::RunStatus::kStoppedBySignal;
  return ended ? 0 : 1;
}

}  // namespace

int runMain(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string first = argv[1];
  if (first == "--calibrate") {
    long long runs = 300;
    if (argc == 4 && std::string(argv[2]) == "--runs") {
      auto v = number("--runs", argv[3], 1, 1000000);
      if (!v) return 2;
      runs = *v;
    } else if (argc != 2) {
      return usage();
    }
    return calibrate(static_cast<int>(runs));
  }
  if (std::find_if(std::begin(kClients), std::end(kClients), [&](const char* c) { return first == c; }) ==
      std::end(kClients)) {
    return usage();
  }
  tactus::InitOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--instance" && i + 1 < argc) {
      options.instance = argv[++i];
    } else if (a == "--timeout-ms" && i + 1 < argc) {
      auto v = number("--timeout-ms", argv[++i], 0, 2147483647);
      if (!v) return 2;
      options.timeoutMs = *v;
    } else {
      return usage();
    }
  }
  return runClient(first, options);
}

int main(int argc, char** argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception& e) {  // out of memory while setting up: a message, not std::terminate
    std::fprintf(stderr, "tactus-sample-autoware: %s\n", e.what());
    return 1;
  }
}
