// Deployment tests with the real master and client processes: the instance a client chooses
// (TACTUS_INSTANCE) and what it says while it waits, real-time worker threads and locked memory
// (and their refusals), the systemd notification protocol on a fake NOTIFY_SOCKET, and event
// logs that keep earlier runs; for the run of one schedule and for the managed run (-N).
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "test_skip.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 10'000;

// One client, one core, two runnables; 1 ms period.
Schedule oneClientSchedule() {
  return makeSchedule(
      {{"Client0", "A", "CPU0", 20'000, {}, 0, {}}, {"Client0", "B", "CPU0", 20'000, {"Client0.A"}, 0, {}}}, 1'000'000,
      1);
}

// A scratch instance with its schedule file; ends its processes and files when it goes.
struct Deployment {
  std::string instance;
  std::string dir;
  std::string schedulePath;
  mutable ChildProcesses children;

  explicit Deployment(const std::string& tag) {
    instance = uniqueInstance(tag);
    dir = scratchDir(instance);
    schedulePath = dir + "/schedule.tsched";
    const Schedule schedule = oneClientSchedule();
    REQUIRE(verifySchedule(schedule).ok());
    REQUIRE(saveScheduleFile(schedule, schedulePath).has_value());
  }
  ~Deployment() {
    children.killAll();
    if (segmentPresent(instance)) ::unlink(("/dev/shm/tactus_" + instance).c_str());
    if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  std::string out(const std::string& who) const { return dir + "/" + who + ".out"; }
  // `env` entries (NAME=value) go before the program through env(1).
  pid_t master(std::vector<std::string> extra, const std::vector<std::string>& env = {},
               const std::string& who = "master") const {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out(who));
  }
  // A client with no --instance unless `extra` gives one: init chooses.
  pid_t client(std::vector<std::string> extra, const std::vector<std::string>& env = {},
               const std::string& who = "Client0") const {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {buildPath("tests/runtime/tactus-test-client"), "--name", "Client0"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children.spawn(argv, out(who));
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A managed run (-N mgr) of the deployment's schedule (identifier 7) and a second one
// (identifier 8, the same client): the master's command line and the names of its segments.
struct ManagedDeployment {
  const Deployment& d;
  std::string secondPath;

  explicit ManagedDeployment(const Deployment& deployment) : d(deployment), secondPath(d.dir + "/second.tsched") {
    Schedule second = oneClientSchedule();
    second.identifier = 8;
    REQUIRE(verifySchedule(second).ok());
    REQUIRE(saveScheduleFile(second, secondPath).has_value());
  }
  pid_t master(const std::vector<std::string>& extra, const std::vector<std::string>& env,
               const std::string& who = "master") const {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {buildPath("master/tactus-master"), "-s", d.schedulePath + "," + secondPath, "-N", "mgr",
                             "-D", d.instance});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return d.children.spawn(argv, d.out(who));
  }
  // tactus-manager with `command` (e.g. {"start", "7"}); its exit status.
  int manager(const std::vector<std::string>& command, const std::string& who) const {
    std::vector<std::string> argv{buildPath("tools/tactus-manager"), "-D", d.instance, "-t", "10000"};
    argv.insert(argv.end(), command.begin(), command.end());
    return waitFor(d.children.spawn(argv, d.out(who)), kWaitMs);
  }
  // Every segment of the run: the schedules' and the manager channel.
  std::vector<std::string> segments() const { return {d.instance, d.instance + ".schedule1", d.instance + ".manager"}; }
  ~ManagedDeployment() {
    for (const std::string& name : segments()) {
      if (segmentPresent(name)) ::unlink(("/dev/shm/tactus_" + name).c_str());
    }
  }
  ManagedDeployment(const ManagedDeployment&) = delete;
  ManagedDeployment& operator=(const ManagedDeployment&) = delete;
};

std::int64_t nowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// A datagram socket standing in for systemd's notify socket: what a Type=notify service sends.
class FakeNotifySocket {
 public:
  explicit FakeNotifySocket(std::string path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path_.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~FakeNotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  FakeNotifySocket(const FakeNotifySocket&) = delete;
  FakeNotifySocket& operator=(const FakeNotifySocket&) = delete;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// One datagram received: when, on which socket (index), what.
struct Notification {
  std::int64_t atNs;
  std::size_t socket;
  std::string text;
};

// Receives on the sockets until `done` holds for what was received, or `timeoutMs` passed.
void listen(const std::vector<const FakeNotifySocket*>& sockets, std::vector<Notification>& got, int timeoutMs,
            const std::function<bool(const std::vector<Notification>&)>& done) {
  const std::int64_t deadline = nowNs() + static_cast<std::int64_t>(timeoutMs) * 1'000'000;
  while (!done(got)) {
    const std::int64_t left = deadline - nowNs();
    if (left <= 0) return;
    std::vector<pollfd> fds;
    fds.reserve(sockets.size());
    for (const FakeNotifySocket* s : sockets) fds.push_back({s->fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), static_cast<int>(left / 1'000'000) + 1) <= 0) continue;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if ((fds[k].revents & POLLIN) == 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fds[k].fd, buffer, sizeof buffer, 0);
      if (n > 0) got.push_back({nowNs(), k, std::string(buffer, static_cast<std::size_t>(n))});
    }
  }
}

// Whether a notification on `socket` starting with `prefix` arrived.
bool received(const std::vector<Notification>& got, std::size_t socket, const std::string& prefix) {
  for (const Notification& n : got) {
    if (n.socket == socket && n.text.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// When the first such notification arrived (0: none).
std::int64_t receivedAt(const std::vector<Notification>& got, std::size_t socket, const std::string& prefix) {
  for (const Notification& n : got) {
    if (n.socket == socket && n.text.rfind(prefix, 0) == 0) return n.atNs;
  }
  return 0;
}

std::size_t countBetween(const std::vector<Notification>& got, std::size_t socket, const std::string& text,
                         std::int64_t fromNs, std::int64_t toNs) {
  std::size_t n = 0;
  for (const Notification& x : got) n += x.socket == socket && x.text == text && x.atNs > fromNs && x.atNs < toNs;
  return n;
}

}  // namespace

TEST_CASE("init without an instance attaches to TACTUS_INSTANCE, for the C++ and the STM API", "[deploy][instance]") {
  Deployment d("envinst");
  const pid_t m = d.master({"-e", "5", "-t", "5000000"});
  const pid_t cpp = d.client({}, {"TACTUS_INSTANCE=" + d.instance});
  CHECK(waitFor(cpp, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("Client0")), "status=frame-limit"));
  CHECK(waitFor(m, kWaitMs) == 0);

  const pid_t m2 = d.master({"-e", "5", "-t", "5000000"}, {}, "master2");
  const pid_t stm = d.client({"--stm"}, {"TACTUS_INSTANCE=" + d.instance}, "stm");
  CHECK(waitFor(stm, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("stm")), "stm-enter: STM_SUCCESS"));
  CHECK(waitFor(m2, kWaitMs) == 0);
}

TEST_CASE("a client waiting on the wrong instance says where the name came from and which instances exist",
          "[deploy][instance]") {
  Deployment d("waitmsg");
  const pid_t m = d.master({"-t", "-1"});
  REQUIRE(waitForPath("/dev/shm/tactus_" + d.instance, kWaitMs));
  const std::string wrong = d.instance + "x";
  const pid_t c = d.client({"--timeout-ms", "300"}, {"TACTUS_INSTANCE=" + wrong});
  CHECK(waitFor(c, kWaitMs) == 3);
  const std::string out = readFile(d.out("Client0"));
  CHECK(contains(out, "waiting for tactus-master of instance '" + wrong + "'"));
  CHECK(contains(out, "from TACTUS_INSTANCE; it must equal the master's -D: set TACTUS_INSTANCE"));
  CHECK(contains(out, "instances with a segment now: "));
  CHECK(contains(out, "'" + d.instance + "'"));
  CHECK(contains(out, "no master for instance '" + wrong + "' within 300 ms"));

  // Without TACTUS_INSTANCE the default instance is named as the default.
  const pid_t c2 = d.client({"--timeout-ms", "100"}, {"-u", "TACTUS_INSTANCE"}, "nodefault");
  CHECK(waitFor(c2, kWaitMs) == 3);
  CHECK(contains(readFile(d.out("nodefault")),
                 "instance 'default' from the default (neither InitOptions::instance nor "
                 "TACTUS_INSTANCE is set)"));
  ::kill(m, SIGTERM);
  CHECK(waitFor(m, kWaitMs) == 0);
}

TEST_CASE(
    "the schedule manager's init without an instance attaches to TACTUS_INSTANCE; waiting, it names the "
    "instance and how to set it",
    "[deploy][instance][managed]") {
  Deployment d("mgrinst");
  const ManagedDeployment run(d);
  const pid_t m = run.master({"-t", "-1"}, {});
  REQUIRE(waitForSegmentState(d.instance, 1, kWaitMs));
  // tactus-manager without -D: tactus::manager::init with an empty ManagerOptions::instance.
  auto manager = [&](const std::vector<std::string>& args, const std::string& who) {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), args.begin(), args.end());
    return waitFor(d.children.spawn(argv, d.out(who)), kWaitMs);
  };
  const std::string program = buildPath("tools/tactus-manager");
  CHECK(manager({"TACTUS_INSTANCE=" + d.instance, program, "-t", "5000", "status"}, "env") == 0);

  // A wrong instance: after a second the wait is said once, then the time-out says it again.
  const std::string wrong = d.instance + "x";
  CHECK(manager({"TACTUS_INSTANCE=" + wrong, program, "-t", "1500", "status"}, "wrong") == 1);
  const std::string out = readFile(d.out("wrong"));
  INFO(out);
  CHECK(contains(out, "tactus: schedule manager: waiting for tactus-master -N of instance '" + wrong +
                          "' (segment /dev/shm/tactus_" + wrong +
                          ".manager): no master started with -N has published it"));
  CHECK(contains(out, "(instance '" + wrong +
                          "' from TACTUS_INSTANCE; it must equal the master's -D: set TACTUS_INSTANCE, "
                          "ManagerOptions::instance or tactus-manager -D"));
  CHECK(contains(out, "instances with a schedule manager channel now: "));
  CHECK(contains(out, "'" + d.instance + "'"));
  CHECK(contains(out, "no master with a schedule manager for instance '" + wrong + "' within 1500 ms"));
  // A wait shorter than a moment says nothing but its error; without TACTUS_INSTANCE the default is named
  // (not where a master of the default instance runs -N on this machine: it would attach).
  if (::access("/dev/shm/tactus_default.manager", F_OK) != 0) {
    CHECK(manager({"-u", "TACTUS_INSTANCE", program, "-t", "200", "-N", "mgr", "status"}, "short") == 1);
    const std::string shortOut = readFile(d.out("short"));
    CHECK_FALSE(contains(shortOut, "waiting for"));
    CHECK(contains(shortOut,
                   "schedule manager 'mgr': no master with a schedule manager for instance 'default' within "
                   "200 ms (no master started with -N has published it; instance 'default' from the default "
                   "(neither ManagerOptions::instance, tactus-manager -D, nor TACTUS_INSTANCE is set)"));
  } else {
    WARN("the default instance has a schedule manager channel here: its message is not checked");
  }
  // An empty -D (a unit's -D ${X} with X unset) is refused, not taken as "not given".
  CHECK(manager({"TACTUS_INSTANCE=" + d.instance, program, "-D", "", "status"}, "emptyD") == 2);
  CHECK(contains(readFile(d.out("emptyD")), "tactus-manager: -D needs an instance name"));
  // -D wins over TACTUS_INSTANCE.
  CHECK(manager({"TACTUS_INSTANCE=" + wrong, program, "-D", d.instance, "-t", "5000", "exit"}, "exit") == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
}

TEST_CASE("a bad TACTUS_INSTANCE is an init error naming the variable", "[deploy][instance]") {
  Deployment d("badenv");
  const pid_t c = d.client({"--timeout-ms", "100"}, {"TACTUS_INSTANCE=no/slash"});
  CHECK(waitFor(c, kWaitMs) == 3);
  const std::string out = readFile(d.out("Client0"));
  CHECK(contains(out, "code=bad parameter"));
  CHECK(contains(out, "client 'Client0': TACTUS_INSTANCE: instance name 'no/slash' may only contain"));
}

TEST_CASE(
    "worker threads take the real-time policy of the options or TACTUS_WORKER_POLICY; memory is locked on request",
    "[deploy][realtime]") {
  rlimit rtprio{};
  ::getrlimit(RLIMIT_RTPRIO, &rtprio);
  if (::geteuid() != 0 && rtprio.rlim_cur < 2) {
    TACTUS_SKIP("needs root or RLIMIT_RTPRIO >= 2 to give worker threads a real-time policy");
  }
  Deployment d("rt");
  // Priority 1 only: the workers spin briefly while they wait, on a machine others share. The
  // sanitizers reserve terabytes of shadow memory, which mlockall cannot lock: no --lock-memory there.
  const bool lock = timeScale() <= 1;
  const pid_t m = d.master({"-e", "5", "-t", "5000000"});
  std::vector<std::string> args{"--instance", d.instance, "--worker-policy", "fifo:1", "--print-realtime"};
  if (lock) args.emplace_back("--lock-memory");
  const pid_t c = d.client(args);
  CHECK(waitFor(c, kWaitMs) == 0);
  const std::string out = readFile(d.out("Client0"));
  CHECK(contains(out, "worker-policy=fifo priority=1"));
  CHECK(contains(out, "locked-kb="));
  if (lock) CHECK_FALSE(contains(out, "locked-kb=0\n"));
  CHECK(waitFor(m, kWaitMs) == 0);

  const pid_t m2 = d.master({"-e", "5", "-t", "5000000"}, {}, "master2");
  const pid_t c2 = d.client({"--instance", d.instance, "--print-realtime"}, {"TACTUS_WORKER_POLICY=rr:2"}, "env");
  CHECK(waitFor(c2, kWaitMs) == 0);
  const std::string out2 = readFile(d.out("env"));
  CHECK(contains(out2, "worker-policy=rr priority=2"));
  CHECK(contains(out2, "locked-kb=0\n"));  // not asked for
  CHECK(waitFor(m2, kWaitMs) == 0);

  // Without a policy the workers keep the process's own.
  const pid_t m3 = d.master({"-e", "5", "-t", "5000000"}, {}, "master3");
  const pid_t c3 = d.client({"--instance", d.instance, "--print-realtime"}, {"-u", "TACTUS_WORKER_POLICY"}, "plain");
  CHECK(waitFor(c3, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("plain")), "worker-policy=other priority=0"));
  CHECK(waitFor(m3, kWaitMs) == 0);
}

TEST_CASE("malformed real-time settings are init errors naming the variable", "[deploy][realtime]") {
  Deployment d("rtbad");
  struct Case {
    std::string env;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"TACTUS_WORKER_POLICY=fifo", "TACTUS_WORKER_POLICY='fifo': fifo needs a priority (fifo:PRIO)"},
      {"TACTUS_WORKER_POLICY=idle:3", "TACTUS_WORKER_POLICY='idle:3': the policy must be fifo:PRIO, rr:PRIO or other"},
      {"TACTUS_WORKER_POLICY=fifo:x", "the priority 'x' is not a number"},
      {"TACTUS_WORKER_POLICY=fifo:100", "TACTUS_WORKER_POLICY: SCHED_FIFO priority 100 is outside 1..99"},
      {"TACTUS_LOCK_MEMORY=yes", "TACTUS_LOCK_MEMORY='yes': must be 0 or 1"},
  };
  int n = 0;
  for (const Case& k : cases) {
    const std::string who = "bad" + std::to_string(n++);
    const pid_t c = d.client({"--instance", d.instance, "--timeout-ms", "100"}, {k.env}, who);
    CHECK(waitFor(c, kWaitMs) == 3);
    const std::string out = readFile(d.out(who));
    INFO(out);
    CHECK(contains(out, "code=bad parameter"));
    CHECK(contains(out, "message=client 'Client0': "));
    CHECK(contains(out, k.expected));
  }
}

TEST_CASE("a policy or locked memory the limits forbid is refused naming the limit and the unit setting",
          "[deploy][realtime]") {
  Deployment d("rtlimit");
  // Without CAP_SYS_NICE and CAP_IPC_LOCK (dropped from the bounding set, so root loses them at
  // exec) and with RLIMIT_RTPRIO 0 and RLIMIT_MEMLOCK 64 KiB, as an unprivileged service has.
  const std::string setpriv = "/usr/bin/setpriv";
  const std::string prlimit = "/usr/bin/prlimit";
  REQUIRE(::access(setpriv.c_str(), X_OK) == 0);
  REQUIRE(::access(prlimit.c_str(), X_OK) == 0);
  auto limited = [&](std::vector<std::string> clientArgs, const std::string& who) {
    std::vector<std::string> argv{prlimit, "--rtprio=0:0", "--memlock=65536:65536"};
    if (::geteuid() == 0) {  // an unprivileged user has neither capability anyway
      argv.insert(argv.end(), {setpriv, "--bounding-set", "-sys_nice,-ipc_lock", "--inh-caps", "-all"});
    }
    argv.insert(argv.end(), {buildPath("tests/runtime/tactus-test-client"), "--name", "Client0", "--instance",
                             d.instance, "--timeout-ms", "100"});
    argv.insert(argv.end(), clientArgs.begin(), clientArgs.end());
    return d.children.spawn(argv, d.out(who));
  };
  const pid_t fifo = limited({"--worker-policy", "fifo:10"}, "fifo");
  CHECK(waitFor(fifo, kWaitMs) == 3);
  const std::string out = readFile(d.out("fifo"));
  INFO(out);
  CHECK(contains(out, "InitOptions::workerPolicy: worker policy SCHED_FIFO priority 10 is not permitted"));
  CHECK(contains(out, "RLIMIT_RTPRIO is 0"));
  CHECK(contains(out, "LimitRTPRIO=10"));

  // Not under a sanitizer, whose terabytes of shadow memory mlockall is never asked to lock there.
  if (timeScale() <= 1) {
    const pid_t lock = limited({"--lock-memory"}, "lock");
    CHECK(waitFor(lock, kWaitMs) == 3);
    const std::string out2 = readFile(d.out("lock"));
    INFO(out2);
    CHECK(contains(out2, "locked memory (InitOptions::lockMemory or TACTUS_LOCK_MEMORY=1) is not permitted"));
    CHECK(contains(out2, "RLIMIT_MEMLOCK is 65536 bytes"));
    CHECK(contains(out2, "LimitMEMLOCK=infinity"));
  }

  // The same limits with nothing asked: init goes on to wait for the master (times out).
  const pid_t plain = limited({}, "plain");
  CHECK(waitFor(plain, kWaitMs) == 3);
  CHECK(contains(readFile(d.out("plain")), "code=timeout"));
}

TEST_CASE("master and client speak systemd's notify protocol: ready once published and entered, the watchdog kept",
          "[deploy][systemd]") {
  Deployment d("notify");
  const FakeNotifySocket masterSocket(d.dir + "/master.sock");
  const FakeNotifySocket clientSocket(d.dir + "/client.sock");
  const std::vector<const FakeNotifySocket*> sockets{&masterSocket, &clientSocket};
  std::vector<Notification> got;
  // WatchdogSec=100ms: the master must send WATCHDOG=1 at least every 50 ms.
  const pid_t m = d.master({"-e", "600", "-t", "-1"}, {"NOTIFY_SOCKET=" + masterSocket.path(), "WATCHDOG_USEC=100000"});
  listen(sockets, got, kWaitMs, [](const auto& g) { return received(g, 0, "READY=1"); });
  REQUIRE(received(got, 0, "READY=1\nSTATUS=published schedule"));
  // Ready means published: the segment is there, in state kPublished, at once.
  CHECK(waitForSegmentState(d.instance, 1, 1));

  // Waiting for clients (no release loop yet), the watchdog is kept.
  const std::int64_t waitFrom = nowNs();
  listen(sockets, got, 400, [](const auto&) { return false; });
  CHECK(countBetween(got, 0, "WATCHDOG=1", waitFrom, nowNs()) >= 3);

  const pid_t c = d.client({"--instance", d.instance}, {"NOTIFY_SOCKET=" + clientSocket.path()});
  listen(sockets, got, kWaitMs, [](const auto& g) { return received(g, 0, "STOPPING=1"); });
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(waitFor(m, kWaitMs) == 0);
  REQUIRE(received(got, 1, "READY=1\nSTATUS=client Client0 runs on instance " + d.instance));
  REQUIRE(received(got, 0, "STOPPING=1\nSTATUS=ran 600 hyperepoch iterations"));
  // During the 600 ms run the release loop keeps the watchdog (every 50 ms: about 12).
  const std::int64_t entered = receivedAt(got, 1, "READY=1");
  const std::int64_t stopping = receivedAt(got, 0, "STOPPING=1");
  INFO("run lasted " << (stopping - entered) / 1'000'000 << " ms");
  CHECK(countBetween(got, 0, "WATCHDOG=1", entered, stopping) >= 4);
  // Nothing the client sent went to the master's socket, nor the reverse.
  CHECK_FALSE(received(got, 1, "WATCHDOG=1"));
  CHECK_FALSE(received(got, 0, "READY=1\nSTATUS=client"));
}

TEST_CASE(
    "a managed run (-N) is ready once its schedules and manager channel are published, keeps the watchdog "
    "with and without a running schedule, and keeps the earlier event log",
    "[deploy][systemd][managed]") {
  Deployment d("notifymanaged");
  const ManagedDeployment run(d);
  const FakeNotifySocket masterSocket(d.dir + "/master.sock");
  std::vector<Notification> got;
  const std::string log = d.dir + "/events.tlog";
  std::ofstream(log) << "the log of an earlier run";
  // WatchdogSec=100ms: the master must send WATCHDOG=1 at least every 50 ms.
  const pid_t m = run.master({"-t", "-1", "-l", log}, {"NOTIFY_SOCKET=" + masterSocket.path(), "WATCHDOG_USEC=100000"});
  listen({&masterSocket}, got, kWaitMs, [](const auto& g) { return received(g, 0, "READY=1"); });
  REQUIRE(received(got, 0,
                   "READY=1\nSTATUS=published schedules 7 (" + d.schedulePath + "), 8 (" + run.secondPath +
                       ") on instance " + d.instance + "; waiting for clients and the schedule manager 'mgr'"));
  // Ready means every segment is there: a tactus-manager@ unit ordered after the master attaches.
  for (const std::string& name : run.segments()) CHECK(segmentPresent(name));
  CHECK(readFile(log + ".1") == "the log of an earlier run");

  // Waiting for clients and the manager, the watchdog is kept.
  std::int64_t from = nowNs();
  listen({&masterSocket}, got, 400, [](const auto&) { return false; });
  CHECK(countBetween(got, 0, "WATCHDOG=1", from, nowNs()) >= 3);

  const pid_t c = d.client({"--instance", d.instance});
  REQUIRE(run.manager({"start", "7"}, "start") == 0);  // waits for the client to enter
  from = nowNs();
  listen({&masterSocket}, got, 400, [](const auto&) { return false; });
  CHECK(countBetween(got, 0, "WATCHDOG=1", from, nowNs()) >= 3);  // a schedule runs

  // Stopped: every release thread sleeps on its activation; the master's loop keeps the watchdog.
  REQUIRE(run.manager({"stop", "7"}, "stop") == 0);
  from = nowNs();
  listen({&masterSocket}, got, 400, [](const auto&) { return false; });
  CHECK(countBetween(got, 0, "WATCHDOG=1", from, nowNs()) >= 3);

  REQUIRE(run.manager({"exit"}, "exit") == 0);
  listen({&masterSocket}, got, kWaitMs, [](const auto& g) { return received(g, 0, "STOPPING=1"); });
  CHECK(received(got, 0, "STOPPING=1\nSTATUS="));
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("Client0")), "status=exit-requested"));
  CHECK(waitFor(m, kWaitMs) == 0);
  auto written = readEventLog(log);
  REQUIRE(written.has_value());
  CHECK(written->header.scheduleCount == 2);
  CHECK(readFile(log + ".1") == "the log of an earlier run");
}

TEST_CASE("a client under a schedule manager (-N) tells systemd READY=1 once it has entered, before any schedule runs",
          "[deploy][systemd][managed]") {
  Deployment d("notifyclientmanaged");
  const ManagedDeployment run(d);
  const FakeNotifySocket clientSocket(d.dir + "/client.sock");
  std::vector<Notification> got;
  const pid_t m = run.master({"-t", "-1"}, {});
  const pid_t c = d.client({"--instance", d.instance}, {"NOTIFY_SOCKET=" + clientSocket.path()});
  listen({&clientSocket}, got, kWaitMs, [](const auto& g) { return received(g, 0, "READY=1"); });
  CHECK(received(got, 0, "READY=1\nSTATUS=client Client0 runs on instance " + d.instance));
  CHECK(run.manager({"start", "8"}, "start") == 0);
  REQUIRE(run.manager({"exit"}, "exit") == 0);
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("Client0")), "status=exit-requested"));
  CHECK(waitFor(m, kWaitMs) == 0);
}

TEST_CASE("under a schedule manager (-N) the workers of every schedule take the real-time policy",
          "[deploy][realtime][managed]") {
  rlimit rtprio{};
  ::getrlimit(RLIMIT_RTPRIO, &rtprio);
  if (::geteuid() != 0 && rtprio.rlim_cur < 1) {
    TACTUS_SKIP("needs root or RLIMIT_RTPRIO >= 1 to give worker threads a real-time policy");
  }
  Deployment d("rtmanaged");
  const ManagedDeployment run(d);
  const pid_t m = run.master({"-t", "15000000"}, {});
  const pid_t c = d.client({"--instance", d.instance, "--worker-policy", "fifo:1", "--print-realtime"});
  // Schedule 8 is the instance's second: the first runnable to run (and print its worker's
  // policy) runs on a worker of that schedule.
  REQUIRE(run.manager({"start", "8"}, "start") == 0);
  waitUntil([&] { return contains(readFile(d.out("Client0")), "worker-policy="); }, kWaitMs);
  REQUIRE(run.manager({"exit"}, "exit") == 0);
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("Client0")), "worker-policy=fifo priority=1"));
  CHECK(waitFor(m, kWaitMs) == 0);
}

TEST_CASE("a watchdog meant for another process (WATCHDOG_PID) is not kept; no NOTIFY_SOCKET sends nothing",
          "[deploy][systemd]") {
  Deployment d("notifypid");
  const FakeNotifySocket masterSocket(d.dir + "/master.sock");
  std::vector<Notification> got;
  const pid_t m =
      d.master({"-t", "-1"}, {"NOTIFY_SOCKET=" + masterSocket.path(), "WATCHDOG_USEC=20000", "WATCHDOG_PID=1"});
  listen({&masterSocket}, got, kWaitMs, [](const auto& g) { return received(g, 0, "READY=1"); });
  REQUIRE(received(got, 0, "READY=1"));
  listen({&masterSocket}, got, 300, [](const auto&) { return false; });
  CHECK_FALSE(received(got, 0, "WATCHDOG=1"));
  ::kill(m, SIGTERM);
  CHECK(waitFor(m, kWaitMs) == 0);

  // A NOTIFY_SOCKET that is not a socket path: the master says so and runs anyway.
  const pid_t m2 = d.master({"-e", "3", "-t", "5000000"}, {"NOTIFY_SOCKET=relative/path"}, "master2");
  const pid_t c = d.client({"--instance", d.instance});
  CHECK(waitFor(c, kWaitMs) == 0);
  CHECK(waitFor(m2, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("master2")), "warning: cannot notify systemd: NOTIFY_SOCKET='relative/path'"));
}

TEST_CASE("exit statuses the units rely on: 2 for configuration errors (not restarted), 1 for a failed run",
          "[deploy][systemd]") {
  Deployment d("exits");
  // RestartPreventExitStatus=2 in both units: a client name the schedule does not know...
  const pid_t m = d.master({"-t", "-1"});
  REQUIRE(waitForSegmentState(d.instance, 1, kWaitMs));
  const pid_t sample = d.children.spawn(
      {"/usr/bin/env", "TACTUS_INSTANCE=" + d.instance, buildPath("samples/tactus-sample-two-client"), "Sensing"},
      d.out("sample"));
  CHECK(waitFor(sample, kWaitMs) == 2);
  CHECK(contains(readFile(d.out("sample")), "client 'Sensing' is not in schedule"));
  // ... and a busy instance or a missing schedule for the master.
  const pid_t second = d.master({"-t", "-1"}, {}, "second");
  CHECK(waitFor(second, kWaitMs) == 2);
  const pid_t missing = d.children.spawn(
      {buildPath("master/tactus-master"), "-s", d.dir + "/none.tsched", "-D", d.instance + "m"}, d.out("missing"));
  CHECK(waitFor(missing, kWaitMs) == 2);
  ::kill(m, SIGTERM);
  CHECK(waitFor(m, kWaitMs) == 0);
  // A client that finds no master in time is not a configuration error: 1, restarted.
  const pid_t late = d.children.spawn({"/usr/bin/env", "TACTUS_INSTANCE=" + d.instance,
                                       buildPath("samples/tactus-sample-two-client"), "Sensing", "--timeout-ms", "50"},
                                      d.out("late"));
  CHECK(waitFor(late, kWaitMs) == 1);
}

TEST_CASE("event logs of earlier runs are kept as LOG.1, LOG.2 ... up to TACTUS_LOG_KEEP", "[deploy][logs]") {
  Deployment d("logkeep");
  const std::string log = d.dir + "/events.tlog";
  auto runOnce = [&](const std::vector<std::string>& env, const std::string& who) {
    const pid_t m = d.master({"-e", "3", "-t", "5000000", "-l", log}, env, who);
    const pid_t c = d.client({"--instance", d.instance}, {}, who + "-client");
    CHECK(waitFor(c, kWaitMs) == 0);
    return waitFor(m, kWaitMs);
  };
  auto runStart = [](const std::string& path) -> std::int64_t {
    auto read = readEventLog(path);
    REQUIRE(read.has_value());
    return read->header.runStartNs;
  };
  for (int k = 0; k < 4; ++k) REQUIRE(runOnce({"TACTUS_LOG_KEEP=2"}, "run" + std::to_string(k)) == 0);
  REQUIRE(std::filesystem::exists(log + ".1"));
  REQUIRE(std::filesystem::exists(log + ".2"));
  CHECK_FALSE(std::filesystem::exists(log + ".3"));
  // Newest at LOG, then .1, then .2.
  CHECK(runStart(log + ".2") < runStart(log + ".1"));
  CHECK(runStart(log + ".1") < runStart(log));

  // Unset: 5 kept (LOG.3 appears where 2 stopped at LOG.2); 0: overwritten as before.
  REQUIRE(runOnce({"-u", "TACTUS_LOG_KEEP"}, "default") == 0);
  CHECK(std::filesystem::exists(log + ".3"));
  CHECK_FALSE(std::filesystem::exists(log + ".4"));
  const std::int64_t newest = runStart(log);
  REQUIRE(runOnce({"TACTUS_LOG_KEEP=0"}, "zero") == 0);
  CHECK(runStart(log + ".1") < newest);  // .1 was not touched
  CHECK(runStart(log) > newest);

  const pid_t bad = d.master({"-e", "3", "-l", log}, {"TACTUS_LOG_KEEP=many"}, "bad");
  CHECK(waitFor(bad, kWaitMs) == 2);
  CHECK(contains(readFile(d.out("bad")), "TACTUS_LOG_KEEP='many': expects a count 0..1000"));
}

TEST_CASE("group mode: TACTUS_SEGMENT_GROUP lets a client of another user in that group attach", "[deploy][group]") {
  Deployment d("group");
  const passwd* nobody = ::getpwnam("nobody");
  const group* nogroup = ::getgrnam("nogroup");
  if (::geteuid() != 0 || nobody == nullptr || nogroup == nullptr || ::access("/usr/bin/setpriv", X_OK) != 0) {
    TACTUS_SKIP("needs root, user nobody, group nogroup and setpriv to run a client as another user");
  }
  {
    // The build may live where nobody cannot go (a mode-0700 checkout such as `mktemp -d` makes):
    // ask, as nobody, before reading an exit status 127 as the programs' answer.
    const std::string client = buildPath("tests/runtime/tactus-test-client");
    const std::string manager = buildPath("tools/tactus-manager");
    const pid_t probe = d.children.spawn({"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                          "/bin/sh", "-c", "test -x \"$0\" && test -x \"$1\"", client, manager},
                                         d.out("probe"));
    if (waitFor(probe, kWaitMs) != 0)
      TACTUS_SKIP("user nobody cannot run " << client << " (a directory above it is closed to other users)");
  }
  const gid_t gid = nogroup->gr_gid;
  // The test's scratch directory must be readable by nobody for the client's output: it writes
  // to a file the harness opened already, so only the program must be reachable.
  auto asNobody = [&](const std::string& who, const std::string& timeoutMs) {
    return d.children.spawn({"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             buildPath("tests/runtime/tactus-test-client"), "--name", "Client0", "--instance",
                             d.instance, "--timeout-ms", timeoutMs},
                            d.out(who));
  };
  // Without group mode the segment is 0600 and the other user cannot open it.
  const pid_t m = d.master({"-e", "3", "-t", "1000000"});
  REQUIRE(waitForSegmentState(d.instance, 1, kWaitMs));
  struct stat st {};
  REQUIRE(::stat(("/dev/shm/tactus_" + d.instance).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const pid_t refused = asNobody("refused", "300");
  CHECK(waitFor(refused, kWaitMs) == 3);
  CHECK(contains(readFile(d.out("refused")), "Permission denied"));
  waitFor(m, kWaitMs);

  const pid_t m2 = d.master({"-e", "3", "-t", "5000000"}, {"TACTUS_SEGMENT_GROUP=nogroup"}, "master2");
  REQUIRE(waitForSegmentState(d.instance, 1, kWaitMs));
  REQUIRE(::stat(("/dev/shm/tactus_" + d.instance).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == gid);
  const pid_t admitted = asNobody("admitted", "5000");
  CHECK(waitFor(admitted, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("admitted")), "status=frame-limit"));
  CHECK(waitFor(m2, kWaitMs) == 0);

  const pid_t bad = d.master({"-e", "3"}, {"TACTUS_SEGMENT_GROUP=no-such-group-here"}, "bad");
  CHECK(waitFor(bad, kWaitMs) == 2);
  CHECK(contains(readFile(d.out("bad")), "TACTUS_SEGMENT_GROUP='no-such-group-here': no such group"));
  CHECK_FALSE(segmentPresent(d.instance));

  // A managed run (-N) shares every schedule's segment and the manager channel: a manager of
  // the group's other user starts the schedule, its client runs, and it ends the run.
  const ManagedDeployment run(d);
  const pid_t m3 = run.master({"-t", "-1"}, {"TACTUS_SEGMENT_GROUP=nogroup"}, "managed");
  REQUIRE(waitForPath("/dev/shm/tactus_" + d.instance + ".manager", kWaitMs));
  REQUIRE(waitForSegmentState(d.instance, 1, kWaitMs));  // published last: the others are there
  for (const std::string& name : run.segments()) {
    REQUIRE(::stat(("/dev/shm/tactus_" + name).c_str(), &st) == 0);
    INFO(name);
    CHECK((st.st_mode & 0777) == 0660);
    CHECK(st.st_gid == gid);
  }
  const pid_t client = asNobody("managed-client", "10000");
  auto managerAsNobody = [&](const std::vector<std::string>& command, const std::string& who) {
    std::vector<std::string> argv{"/usr/bin/setpriv",
                                  "--reuid=nobody",
                                  "--regid=nogroup",
                                  "--clear-groups",
                                  buildPath("tools/tactus-manager"),
                                  "-D",
                                  d.instance,
                                  "-t",
                                  "10000"};
    argv.insert(argv.end(), command.begin(), command.end());
    return waitFor(d.children.spawn(argv, d.out(who)), kWaitMs);
  };
  CHECK(managerAsNobody({"start", "7"}, "managed-start") == 0);
  CHECK(managerAsNobody({"exit"}, "managed-exit") == 0);
  CHECK(waitFor(client, kWaitMs) == 0);
  CHECK(contains(readFile(d.out("managed-client")), "status=exit-requested"));
  CHECK(waitFor(m3, kWaitMs) == 0);
}
