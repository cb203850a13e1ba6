// Runtime test helpers (see runtime_harness.hpp).
#include "runtime_harness.hpp"

#include "tactus/core/shm_layout.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tactus::test {

namespace {

// Children started and not reaped yet, process-wide: waitFor and ChildProcesses both reap, and
// neither may signal or wait for a pid the other already reaped (the number may belong to a
// stranger by then).
std::mutex gChildrenMutex;
std::set<pid_t> gUnreaped;

bool isUnreaped(pid_t pid) {
  const std::lock_guard lock(gChildrenMutex);
  return gUnreaped.count(pid) != 0;
}

void forget(pid_t pid) {
  const std::lock_guard lock(gChildrenMutex);
  gUnreaped.erase(pid);
}

}  // namespace

Schedule makeSchedule(const std::vector<RunnableSpec>& specs, std::int64_t periodNs, std::uint32_t frames,
                      std::uint16_t identifier) {
  Schedule s;
  s.name = "RuntimeTest";
  s.identifier = identifier;
  s.sourceHash = 0x1234;
  std::map<std::string, ClientId> clientIds;
  std::map<std::string, ResourceId> resourceIds;
  std::map<std::string, RunnableId> runnableIds;
  auto resourceId = [&](const std::string& name) {
    auto it = resourceIds.find(name);
    if (it != resourceIds.end()) return it->second;
    ResourceInfo r;
    r.name = name;
    if (name.rfind("CPU", 0) == 0) {
      r.type = "CPU";
      r.kind = ResourceKind::kCpu;
      r.core = static_cast<std::uint32_t>(std::stoul(name.substr(3)));
    } else {
      r.type = "MUTEX";
      r.kind = ResourceKind::kMutex;
    }
    r.hyperepoch = HyperepochId{0};
    const ResourceId id{static_cast<std::uint32_t>(s.resources.size())};
    s.resources.push_back(r);
    resourceIds[name] = id;
    return id;
  };
  // Resources first in a stable order: hardware named by runnables, then mutexes.
  for (const auto& spec : specs) {
    if (!clientIds.count(spec.client)) {
      clientIds[spec.client] = ClientId{static_cast<std::uint32_t>(s.clients.size())};
      s.clients.push_back({spec.client});
    }
  }
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const auto& spec : specs) names.push_back(spec.cpu);
  for (const auto& spec : specs) names.insert(names.end(), spec.extraResources.begin(), spec.extraResources.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& n : names) resourceId(n);

  HyperepochInfo he;
  he.name = "Main";
  he.periodNs = periodNs;
  for (ResourceId r : s.resources.ids()) he.resources.push_back(r);
  he.epochs = {EpochId{0}};
  s.hyperepochs.push_back(he);
  EpochInfo ep;
  ep.name = "Tick";
  ep.hyperepoch = HyperepochId{0};
  ep.periodNs = periodNs / frames;
  ep.frames = frames;
  s.epochs.push_back(ep);

  for (const auto& spec : specs) {
    RunnableInfo r;
    r.name = spec.name;
    r.client = clientIds.at(spec.client);
    r.epoch = EpochId{0};
    r.wcetNs = spec.wcetNs;
    r.startTimeNs = spec.startTimeNs;
    runnableIds[spec.client + "." + spec.name] = RunnableId{static_cast<std::uint32_t>(s.runnables.size())};
    s.runnables.push_back(r);
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    for (const auto& d : specs[i].dependencies) s.runnables[i].dependencies.push_back(runnableIds.at(d));
    std::sort(s.runnables[i].dependencies.begin(), s.runnables[i].dependencies.end());
  }

  // ASAP placement, frame by frame, runnables in the given order (dependencies come first).
  struct Placed {
    RunnableId runnable;
    std::uint32_t frame;
    std::int64_t start, end;
    std::vector<ResourceId> resources;
  };
  std::vector<Placed> placed;
  std::map<ResourceId, std::int64_t> resourceFree;
  for (std::uint32_t f = 0; f < frames; ++f) {
    std::map<RunnableId, std::int64_t> endOf;
    for (RunnableId r : s.runnables.ids()) {
      const RunnableSpec& spec = specs[index(r)];  // runnable r was made from specs[r]
      Placed p;
      p.runnable = r;
      p.frame = f;
      p.resources.push_back(resourceIds.at(spec.cpu));
      for (const auto& m : spec.extraResources) p.resources.push_back(resourceIds.at(m));
      std::int64_t start = f * ep.periodNs + spec.startTimeNs;
      for (const auto res : p.resources) start = std::max(start, resourceFree[res]);
      for (const auto d : s.runnables[r].dependencies) start = std::max(start, endOf.at(d));
      p.start = start;
      p.end = start + spec.wcetNs;
      for (const auto res : p.resources) resourceFree[res] = p.end;
      endOf[r] = p.end;
      placed.push_back(p);
    }
  }
  std::vector<std::size_t> order(placed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return placed[a].start < placed[b].start; });
  std::map<std::pair<RunnableId, std::uint32_t>, InstanceId> idOf;  // (runnable, frame) -> instance
  for (std::size_t k = 0; k < order.size(); ++k) {
    idOf[{placed[order[k]].runnable, placed[order[k]].frame}] = InstanceId{static_cast<std::uint32_t>(k)};
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Placed& p = placed[order[k]];
    InstanceInfo inst;
    inst.runnable = p.runnable;
    inst.frame = p.frame;
    inst.startNs = p.start;
    inst.endNs = p.end;
    inst.resources = p.resources;
    for (const auto d : s.runnables[p.runnable].dependencies) inst.dependencies.push_back(idOf.at({d, p.frame}));
    std::sort(inst.dependencies.begin(), inst.dependencies.end());
    s.instances.push_back(inst);
  }
  for (ResourceId r : s.resources.ids()) {
    TimelineInfo t;
    t.resource = r;
    for (InstanceId i : s.instances.ids()) {
      const auto& res = s.instances[i].resources;
      if (std::find(res.begin(), res.end(), r) != res.end()) t.instances.push_back(i);
    }
    if (!t.instances.empty()) s.timelines.push_back(t);
  }
  return s;
}

double timeScale() {
  const char* text = std::getenv("TACTUS_TEST_TIME_SCALE");
  if (text == nullptr) return 1.0;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  return end != text && scale >= 1.0 ? scale : 1.0;
}

std::string uniqueInstance(const std::string& tag) {
  static std::atomic<int> counter{0};
  return "t" + std::to_string(::getpid()) + "_" + tag + "_" + std::to_string(counter.fetch_add(1));
}

std::string scratchDir(const std::string& tag) {
  std::string dir = "/tmp/tactus-runtime-tests-" + std::to_string(::getpid()) + "-" + tag;
  ::mkdir(dir.c_str(), 0700);
  return dir;
}

std::string buildPath(const std::string& relative) {
  const char* root = std::getenv("TACTUS_BUILD_ROOT");
  return std::string(root ? root : ".") + "/" + relative;
}

ChildProcesses::~ChildProcesses() { killAll(); }

TestRun::TestRun(const std::string& tag) : instance(uniqueInstance(tag)), dir(scratchDir(instance)) {
  schedulePath = dir + "/schedule.tsched";
  logPath = dir + "/events.log";
}

TestRun::~TestRun() {
  children.killAll();
  if (segmentPresent(instance)) ::unlink(("/dev/shm/tactus_" + instance).c_str());
  if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

pid_t ChildProcesses::spawn(const std::vector<std::string>& argv, const std::string& outputPath) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::lock_guard lock(gChildrenMutex);  // the pid is registered before anyone can wait for it
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(outputPath.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (pid > 0) {
    gUnreaped.insert(pid);
    pids_.push_back(pid);
  }
  return pid;
}

void ChildProcesses::adopt(pid_t pid) {
  if (pid <= 0) return;
  const std::lock_guard lock(gChildrenMutex);
  gUnreaped.insert(pid);
  pids_.push_back(pid);
}

std::size_t ChildProcesses::killAll() {
  std::size_t ended = 0;
  for (const pid_t pid : pids_) {
    if (!isUnreaped(pid)) continue;
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
    forget(pid);
    ++ended;
  }
  pids_.clear();
  return ended;
}

std::size_t ChildProcesses::unreaped() const {
  return static_cast<std::size_t>(std::count_if(pids_.begin(), pids_.end(), isUnreaped));
}

namespace {
ChildProcesses& processWideChildren() {
  static ChildProcesses processWide;  // destroyed at exit: kills and reaps what is still running
  return processWide;
}
}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath) {
  return processWideChildren().spawn(argv, outputPath);
}

void endSpawnedProcesses() { processWideChildren().killAll(); }

void adoptChild(pid_t pid) { processWideChildren().adopt(pid); }

int waitFor(pid_t pid, int timeoutMs) {
  if (!isUnreaped(pid)) return -3;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      forget(pid);
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -2;
    }
    if (r < 0 && errno != EINTR) {  // not our child after all: never signal that number
      forget(pid);
      return -3;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      forget(pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

pid_t threadNamed(pid_t pid, const std::string& name) {
  std::error_code ignored;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ignored)) {
    std::string comm = readFile(task.path().string() + "/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm == name) return static_cast<pid_t>(std::atol(task.path().filename().c_str()));
  }
  return 0;
}

long voluntarySwitches(pid_t pid, pid_t tid) {
  std::istringstream status(readFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::atol(line.c_str() + 24);
  }
  return -1;
}

bool segmentPresent(const std::string& instance) {
  struct stat st {};
  return ::stat(("/dev/shm/tactus_" + instance).c_str(), &st) == 0;
}

namespace {

// Reads a 32-bit word of the instance's segment file at `offset`; false when it cannot.
bool readSegmentWord(const std::string& instance, std::uint64_t offset, std::uint32_t& value) {
  const int fd = ::open(("/dev/shm/tactus_" + instance).c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::pread(fd, &value, sizeof value, static_cast<off_t>(offset)) == sizeof value;
  ::close(fd);
  return ok;
}

bool waitForWord(const std::function<bool(std::uint32_t&)>& read, std::uint32_t want, int timeoutMs) {
  return waitUntil(
      [&] {
        std::uint32_t value = 0;
        return read(value) && value == want;
      },
      timeoutMs);
}

}  // namespace

bool waitUntil(const std::function<bool()>& holds, int timeoutMs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (!holds()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

bool waitForSegmentState(const std::string& instance, std::uint32_t state, int timeoutMs) {
  return waitForWord(
      [&](std::uint32_t& v) { return readSegmentWord(instance, offsetof(shm::SegmentHeader, state), v); }, state,
      timeoutMs);
}

bool waitForClientState(const std::string& instance, std::uint32_t client, std::uint32_t state, int timeoutMs) {
  return waitForWord(
      [&](std::uint32_t& v) {
        std::uint32_t low = 0, high = 0;  // clientOffset, read as two words
        if (!readSegmentWord(instance, offsetof(shm::SegmentHeader, clientOffset), low) ||
            !readSegmentWord(instance, offsetof(shm::SegmentHeader, clientOffset) + 4, high)) {
          return false;
        }
        const std::uint64_t slot = (std::uint64_t{high} << 32 | low) + std::uint64_t{client} * sizeof(shm::ClientSlot);
        return slot != 0 && readSegmentWord(instance, slot + offsetof(shm::ClientSlot, state), v);
      },
      state, timeoutMs);
}

bool waitForPath(const std::string& path, int timeoutMs) {
  struct stat st {};
  return waitUntil([&] { return ::stat(path.c_str(), &st) == 0; }, timeoutMs);
}

std::string checkLog(const Schedule& s, const EventLog& log, std::uint64_t iterations, std::int64_t gpuSlackNs,
                     std::int64_t* crossClockSkewNs, std::int64_t gpuDriftPpm) {
  const std::size_t n = s.instances.size();
  const auto onGpu = [&](std::size_t i) {
    return s.runnables[s.instances[InstanceId{static_cast<std::uint32_t>(i)}].runnable].kind ==
           RunnableKind::kSubmittee;
  };
  // GPU work may start as soon as its submitter has enqueued it, before the submitter returns:
  // the submitter's end bounds nothing (the stand-in runs it after; a GPU often during).
  const auto ownSubmitter = [&](std::size_t d, std::size_t i) {
    const RunnableInfo& r = s.runnables[s.instances[InstanceId{static_cast<std::uint32_t>(i)}].runnable];
    return r.kind == RunnableKind::kSubmittee &&
           r.submittedBy == s.instances[InstanceId{static_cast<std::uint32_t>(d)}].runnable;
  };
  // How far `later` may precede `earlier` (0, or the slack where one side is GPU work: the
  // offset's uncertainty plus the drift since the run started).
  std::int64_t skew = 0;
  const auto allowed = [&](bool gpuA, bool gpuB, std::int64_t earlier, std::int64_t later) {
    if (gpuA == gpuB) return later >= earlier;
    skew = std::max(skew, earlier - later);
    const std::int64_t elapsed = std::max<std::int64_t>(0, earlier - log.header.runStartNs);
    return later >= earlier - gpuSlackNs - elapsed / 1'000'000 * gpuDriftPpm;
  };
  struct Report {
    std::int64_t* out;
    const std::int64_t& skew;
    ~Report() {
      if (out != nullptr) *out = skew;
    }
  } report{crossClockSkewNs, skew};
  std::vector<const EventRecord*> run(n * iterations, nullptr);
  std::map<std::pair<EpochId, std::uint64_t>, std::int64_t> release;  // (epoch, global frame) -> ideal
  for (const EventRecord& r : log.records) {
    if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease)) {  // instance: the epoch, aux: the frame
      const EpochId epoch{r.instance};
      if (!s.epochs.contains(epoch)) return "record names unknown epoch " + std::to_string(r.instance);
      const std::uint64_t frames = s.epochs[epoch].frames;
      release[{epoch, std::uint64_t{r.iteration} * frames + r.aux}] = r.startNs;
      continue;
    }
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    if (!s.instances.contains(InstanceId{r.instance}))
      return "record names unknown instance " + std::to_string(r.instance);
    if (r.iteration >= iterations) return "record for iteration " + std::to_string(r.iteration) + " beyond the limit";
    if (r.endNs < r.startNs) return "record ends before it starts";
    auto& slot = run[r.iteration * n + r.instance];
    if (slot)
      return "instance " + std::to_string(r.instance) + " ran twice in iteration " + std::to_string(r.iteration);
    slot = &r;
  }
  for (std::uint64_t h = 0; h < iterations; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      const EventRecord* r = run[h * n + i];
      if (!r) return "instance " + std::to_string(i) + " missing in iteration " + std::to_string(h);
      for (const InstanceId d : s.instances[i].dependencies) {
        if (!ownSubmitter(index(d), i) &&
            !allowed(onGpu(index(d)), onGpu(i), run[h * n + index(d)]->endNs, r->startNs)) {
          return "instance " + std::to_string(i) + " started before its dependency " + std::to_string(index(d)) +
                 " ended (iteration " + std::to_string(h) + ")";
        }
      }
      const auto& inst = s.instances[i];
      const auto& rn = s.runnables[inst.runnable];
      const std::uint64_t frames = s.epochs[rn.epoch].frames;
      auto rel = release.find({rn.epoch, h * frames + inst.frame});
      if (rel == release.end()) return "no release record for the frame of instance " + std::to_string(i);
      if (!allowed(false, onGpu(i), rel->second + rn.startTimeNs, r->startNs)) {
        return "instance " + std::to_string(i) + " started before its release + StartTime (iteration " +
               std::to_string(h) + ")";
      }
    }
  }
  for (const TimelineInfo& t : s.timelines) {
    const EventRecord* previous = nullptr;
    for (std::uint64_t h = 0; h < iterations; ++h) {
      for (const InstanceId i : t.instances) {
        const EventRecord* r = run[h * n + index(i)];
        if (previous && !ownSubmitter(previous->instance, index(i)) &&
            !allowed(onGpu(previous->instance), onGpu(index(i)), previous->endNs, r->startNs)) {
          return "on resource " + s.resources[t.resource].name + " instance " + std::to_string(index(i)) +
                 " started before its timeline predecessor " + std::to_string(previous->instance) +
                 " ended (iteration " + std::to_string(h) + ")";
        }
        previous = r;
      }
    }
  }
  return "";
}

}  // namespace tactus::test
