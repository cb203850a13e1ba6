// Deployment tests with the real master and client processes: the instance a client chooses
// (TACTUS_INSTANCE) and what it says while it waits, real-time worker threads and locked memory
// (and their refusals), the systemd notification protocol on a fake NOTIFY_SOCKET, and event
// logs that keep earlier runs.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "runtime_harness.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 10'000;

// One client, one core, two runnables; 1 ms period.
Schedule oneClientSchedule() {
  return makeSchedule({{"Client0", "A", "CPU0", 20'000, {}, 0, {}}, {"Client0", "B", "CPU0", 20'000, {"Client0.A"}, 0, {}}},
                      1'000'000, 1);
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
  CHECK(contains(readFile(d.out("nodefault")), "instance 'default' from the default (neither InitOptions::instance nor "
                                               "TACTUS_INSTANCE is set)"));
  ::kill(m, SIGTERM);
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

TEST_CASE("worker threads take the real-time policy of the options or TACTUS_WORKER_POLICY; memory is locked on request",
          "[deploy][realtime]") {
  Deployment d("rt");
  // Priority 1 only: the workers spin briefly while they wait, on a machine others share.
  const pid_t m = d.master({"-e", "5", "-t", "5000000"});
  const pid_t c = d.client({"--instance", d.instance, "--worker-policy", "fifo:1", "--lock-memory", "--print-realtime"});
  CHECK(waitFor(c, kWaitMs) == 0);
  const std::string out = readFile(d.out("Client0"));
  CHECK(contains(out, "worker-policy=fifo priority=1"));
  CHECK_FALSE(contains(out, "locked-kb=0\n"));
  CHECK(contains(out, "locked-kb="));
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
    std::vector<std::string> argv{prlimit,  "--rtprio=0:0", "--memlock=65536:65536", setpriv, "--bounding-set",
                                  "-sys_nice,-ipc_lock", "--inh-caps", "-all", buildPath("tests/runtime/tactus-test-client"),
                                  "--name", "Client0", "--instance", d.instance, "--timeout-ms", "100"};
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

  const pid_t lock = limited({"--lock-memory"}, "lock");
  CHECK(waitFor(lock, kWaitMs) == 3);
  const std::string out2 = readFile(d.out("lock"));
  INFO(out2);
  CHECK(contains(out2, "locked memory (InitOptions::lockMemory or TACTUS_LOCK_MEMORY=1) is not permitted"));
  CHECK(contains(out2, "RLIMIT_MEMLOCK is 65536 bytes"));
  CHECK(contains(out2, "LimitMEMLOCK=infinity"));

  // The same limits with nothing asked: init goes on to wait for the master (times out).
  const pid_t plain = limited({}, "plain");
  CHECK(waitFor(plain, kWaitMs) == 3);
  CHECK(contains(readFile(d.out("plain")), "code=timeout"));
}
