// The harness of the multi-SoC benchmarks (see soc_run.hpp).
#include "soc_run.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace tactus::bench {

long socRunIterations(const char* program, const char* text) {
  const long iterations = text != nullptr ? std::atol(text) : 10000;
  if (iterations >= 100 && iterations <= 1'000'000) return iterations;
  std::fprintf(stderr, "%s: ITERATIONS must be 100..1000000\n", program);
  return 0;
}

SocRun::SocRun(std::string program, const std::string& tag, std::string build, long iterations, std::string domain)
    : program_(std::move(program)),
      build_(std::move(build)),
      domain_(std::move(domain)),
      dir_(test::scratchDir(tag)),
      instance_(test::uniqueInstance(tag)),
      schedule_(dir_ + "/" + tag + ".tsched"),
      iterations_(iterations) {}

bool SocRun::compile(const std::string& graph) {
  setenv("CYCLONEDDS_URI", "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml", 1);
  setenv("TACTUS_BUILD_ROOT", build_.c_str(), 1);
  setenv("TACTUS_INSTANCE", instance_.c_str(), 1);
  const std::string path = std::string(TACTUS_SOURCE_ROOT) + "/bench/multisoc/" + graph;
  const std::string out = dir_ + "/compile.out";
  if (test::waitFor(kids_.spawn({build_ + "/compiler/tactus-compile", "-i", path, "-o", schedule_}, out), 60000) == 0)
    return true;
  std::fprintf(stderr, "%s: the graph does not compile:\n%s", program_.c_str(), test::readFile(out).c_str());
  return false;
}

void SocRun::start(const std::string& soc, const std::string& client, const std::vector<std::string>& prefix,
                   const std::vector<std::string>& extra) {
  std::vector<std::string> master = prefix;
  master.insert(master.end(), {build_ + "/master/tactus-master", "-s", schedule_, "-x", soc, "-D", instance_, "-l",
                               dir_ + "/" + soc + ".log", "--dds-domain", domain_, "-a", "60"});
  master.insert(master.end(), extra.begin(), extra.end());
  std::vector<std::string> clientArgv = prefix;
  clientArgv.insert(clientArgv.end(), {build_ + "/tests/runtime/tactus-test-client", "--name", client});
  socs_.push_back(soc);
  pids_.push_back(kids_.spawn(master, dir_ + "/master" + soc + ".out"));
  pids_.push_back(kids_.spawn(clientArgv, dir_ + "/client" + soc + ".out"));
}

bool SocRun::wait() {
  const int limitMs = static_cast<int>(iterations_) * 20 + 60000;
  for (std::size_t p = 0; p < pids_.size(); ++p) {
    if (test::waitFor(pids_[p], limitMs) == 0) continue;
    std::fprintf(stderr, "%s: the run failed (%s of %s):\n", program_.c_str(), p % 2 == 0 ? "master" : "client",
                 socs_[p / 2].c_str());
    for (const std::string& soc : socs_) std::fputs(masterOutput(soc).c_str(), stderr);
    return false;
  }
  return true;
}

std::optional<EventLog> SocRun::log(const std::string& soc) const {
  auto log = readEventLog(dir_ + "/" + soc + ".log");
  if (log) return std::move(*log);
  std::fprintf(stderr, "%s: the log of %s is unreadable\n", program_.c_str(), soc.c_str());
  return std::nullopt;
}

std::string SocRun::masterOutput(const std::string& soc) const {
  return test::readFile(dir_ + "/master" + soc + ".out");
}

std::vector<Runs> SocRun::emptyRuns(std::size_t instances) const {
  const auto n = static_cast<std::size_t>(iterations_);
  return std::vector<Runs>(instances, Runs{std::vector<std::int64_t>(n, 0), std::vector<std::int64_t>(n, 0)});
}

std::vector<ClockEstimate> clockEstimates(const EventLog& log) {
  std::vector<ClockEstimate> estimates;
  for (const EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kClockOffset)) estimates.emplace_back(r.startNs, r.endNs);
  }
  return estimates;
}

void collectRuns(const EventLog& log, std::int64_t shiftNs, std::vector<Runs>& runs,
                 std::vector<std::int64_t>* releases) {
  const std::size_t n = runs.empty() ? 0 : runs[0].start.size();
  for (const EventRecord& r : log.records) {
    if (r.iteration >= n) continue;
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && releases != nullptr) {
      (*releases)[r.iteration] = r.endNs - shiftNs;  // the actual release time
    } else if (r.kind == static_cast<std::uint16_t>(EventKind::kRun) && r.instance < runs.size()) {
      runs[r.instance].start[r.iteration] = r.startNs - shiftNs;
      runs[r.instance].end[r.iteration] = r.endNs - shiftNs;
    }
  }
}

EstimateErrors estimateErrors(const std::vector<ClockEstimate>& estimates, std::int64_t setNs) {
  EstimateErrors e;
  for (const auto& [estimate, bound] : estimates) {
    e.error.push_back(std::llabs(estimate - setNs));
    if (e.error.back() <= bound) ++e.within;
  }
  return e;
}

bool barePingPong(const std::string& program, long iterations, long periodUs, BarePingPong& bare) {
  const std::string cmd = program + " " + std::to_string(iterations) + " --period-us " + std::to_string(periodUs);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  char line[256];
  int found = 0;
  while (std::fgets(line, sizeof line, p) != nullptr) {
    std::fputs(line, stdout);
    long period = 0;
    if (std::sscanf(line, " one way (round trip / 2): p50 %lf us p99 %lf us", &bare.p50, &bare.p99) == 2) ++found;
    if (std::sscanf(line, " one way, paced (%ld us period, write stamp to take, both ways): p50 %lf us p99 %lf us",
                    &period, &bare.pacedP50, &bare.pacedP99) == 3)
      ++found;
    if (std::sscanf(line,
                    " one way, paced, listener (%ld us period, write stamp to the listener's call, both ways): p50 %lf "
                    "us p99 %lf us",
                    &period, &bare.heardP50, &bare.heardP99) == 3)
      ++found;
  }
  return pclose(p) == 0 && found == 3;
}

int guardedMain(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace tactus::bench
