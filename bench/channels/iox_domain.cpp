// The iceoryx side of channel-iceoryx-bench (iox_domain.hpp): the private namespaces, RouDi's
// start and stop, and the publisher and subscriber processes.
#include "iox_domain.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "bench_support.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"

namespace tactus::bench {

// The block the harness, the domain process and its publisher and subscriber share (anonymous
// shared memory mapped before the fork, so the namespaces do not matter); the samples follow it.
struct IoxShared {
  IoxRequest request;
  std::uint64_t maxMessages = 0;
  std::uint64_t poolSizes[8] = {};  // payload sizes the RouDi config has pools for
  std::uint32_t poolCount = 0;
  pid_t roudiPid = -1;
  std::int64_t pubCpu[2] = {-1, -1}, subCpu[2] = {-1, -1}, roudiCpu[2] = {-1, -1};
  std::uint64_t wrong = 0;  // messages the subscriber saw out of order
  char roudiPath[1024] = {};
  char error[4096] = {};

  HandOffSample* samples() { return reinterpret_cast<HandOffSample*>(this + 1); }
  void setError(const std::string& message) { std::snprintf(error, sizeof error, "%s", message.c_str()); }
};

namespace {

constexpr const char* kConfigPath = "/tmp/roudi.toml";
constexpr const char* kRoudiSocket = "/tmp/roudi";  // iceoryx 2.0's fixed IPC channel (IOX_UDS_SOCKET_PATH_PREFIX)
const iox::capro::ServiceDescription kData{"TactusBench", "Payload", "Data"};
const iox::capro::ServiceDescription kAck{"TactusBench", "Payload", "Ack"};

bool writeFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// Enters new mount, IPC and network namespaces (and a user namespace where not root, mapping the
// caller to root there) and mounts fresh tmpfs on /dev/shm and /tmp, where iceoryx 2.0 keeps its
// segments, socket and lock under fixed names. Empty on success, else why not.
std::string enterPrivateNamespaces() {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  int flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;
  if (geteuid() != 0) flags |= CLONE_NEWUSER;
  if (unshare(flags) != 0) return std::string("unshare: ") + std::strerror(errno);
  if ((flags & CLONE_NEWUSER) != 0 && (!writeFile("/proc/self/setgroups", "deny") ||
                                       !writeFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
                                       !writeFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")))
    return "cannot map the user into the new user namespace";
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string("making the mounts private: ") + std::strerror(errno);
  for (const char* at : {"/dev/shm", "/tmp"}) {
    if (mount("tactus-iox", at, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
      return std::string("mounting a tmpfs on ") + at + ": " + std::strerror(errno);
  }
  return "";
}

// RouDi's configuration: one segment, a pool per payload size (the chunk header and alignment
// fit in the 1 KiB added), enough chunks for the subscriber's queue, one held by each side and
// the acks.
std::string roudiConfig(const std::uint64_t* sizes, std::uint32_t count) {
  std::string text = "[general]\nversion = 1\n\n[[segment]]\n\n[[segment.mempool]]\nsize = 128\ncount = 64\n";
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t chunk = (sizes[i] + 1024 + 63) / 64 * 64;
    const std::uint64_t chunks = sizes[i] >= (1u << 20) ? 10 : 32;
    text += "\n[[segment.mempool]]\nsize = " + std::to_string(chunk) + "\ncount = " + std::to_string(chunks) + "\n";
  }
  return text;
}

// Forks a child that dies with the domain process (PR_SET_PDEATHSIG), its output to `logPath`,
// running `body` and exiting with its status (exit, not _exit: the iceoryx runtime deregisters
// from RouDi at exit).
template <typename Body>
pid_t forkChild(const char* logPath, Body&& body) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(125);
  const int fd = ::open(logPath, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    ::close(fd);
  }
  std::exit(body());
}

// Waits for RouDi's socket, up to 10 s; empty when it is there, else why not (`exited` set when
// RouDi exited and was reaped).
std::string awaitRoudi(pid_t roudi, bool& exited) {
  const std::int64_t deadline = monotonicNs() + 10'000'000'000LL;
  for (;;) {
    struct stat st {};
    if (::stat(kRoudiSocket, &st) == 0) return "";
    int status = 0;
    exited = waitpid(roudi, &status, WNOHANG) == roudi;
    if (exited) return "iox-roudi exited at start:\n" + readText("/tmp/roudi.log");
    if (monotonicNs() > deadline)
      return "iox-roudi did not open its socket within 10 s:\n" + readText("/tmp/roudi.log");
    usleep(5000);
  }
}

// Sleeps until CLOCK_MONOTONIC `atNs` (the paced publisher's tick).
void sleepUntil(std::int64_t atNs) {
  const timespec t{static_cast<time_t>(atNs / 1'000'000'000), static_cast<long>(atNs % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {}
}

void initRuntime(const char* name) {
  iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name));
}

iox::popo::PublisherOptions publisherOptions() {
  iox::popo::PublisherOptions o;
  o.historyCapacity = 0;
  o.subscriberTooSlowPolicy = iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER;  // never a lost message
  return o;
}

iox::popo::SubscriberOptions subscriberOptions() {
  iox::popo::SubscriberOptions o;
  o.queueCapacity = 4;
  o.queueFullPolicy = iox::popo::QueueFullPolicy::BLOCK_PRODUCER;
  return o;
}

// Waits until `ready()`, checking every millisecond, for up to 20 s (RouDi connects publishers and
// subscribers in its discovery loop, every 100 ms).
template <typename Ready>
bool awaitConnection(Ready&& ready) {
  const std::int64_t deadline = monotonicNs() + 20'000'000'000LL;
  while (!ready()) {
    if (monotonicNs() > deadline) return false;
    usleep(1000);
  }
  return true;
}

// The publisher (core 0): message i at its period's tick (paced) or after message i - 1's ack,
// each in a loaned chunk whose header it writes last, stamp last of all, before publish().
int publisherMain(IoxShared& s, const std::string& name) {
  initRuntime(name.c_str());
  const IoxRequest r = s.request;
  iox::popo::UntypedPublisher publisher(kData, publisherOptions());
  iox::popo::UntypedSubscriber acks(kAck, subscriberOptions());
  iox::popo::WaitSet<> waitSet;
  if (waitSet.attachState(acks, iox::popo::SubscriberState::HAS_DATA).has_error()) return 10;
  if (!awaitConnection(
          [&] { return publisher.hasSubscribers() && acks.getSubscriptionState() == iox::SubscribeState::SUBSCRIBED; }))
    return 11;
  const std::int64_t firstNs = monotonicNs() + 2'000'000;
  for (std::uint64_t i = 0; i < r.messages; ++i) {
    if (r.periodNs > 0) sleepUntil(firstNs + static_cast<std::int64_t>(i) * r.periodNs);
    auto loaned = publisher.loan(static_cast<std::uint32_t>(r.payloadBytes), 64);
    if (loaned.has_error()) return 12;
    auto* header = new (loaned.value()) PayloadHeader;
    header->sequence = i;
    if (i == r.warmup) s.pubCpu[0] = processCpuNsOf(0);
    if (i + 1 == r.messages) s.pubCpu[1] = processCpuNsOf(0);
    header->writtenNs = monotonicNs();  // the writer's end
    publisher.publish(loaned.value());
    if (r.periodNs > 0 && i + 1 < r.messages) continue;
    // The ack of message i (each in the fast mode; the last only when paced, so that the
    // publisher outlives the subscriber's last take).
    for (bool acked = false; !acked;) {
      const std::int64_t deadline = monotonicNs() + 10'000'000'000LL;
      while (!acks.hasData()) {
        if (monotonicNs() > deadline) return 13;
        (void)waitSet.timedWait(iox::units::Duration::fromMilliseconds(100));
      }
      while (auto ack = acks.take()) {
        acked = acked || *static_cast<const std::uint64_t*>(ack.value()) == i;
        acks.release(ack.value());
      }
    }
  }
  return 0;
}

// The subscriber (core 1): woken by its WaitSet, it stamps its start, takes the sample, reads its
// header (the first touch) and stamps again, then releases it and acks.
int subscriberMain(IoxShared& s, const std::string& name) {
  initRuntime(name.c_str());
  const IoxRequest r = s.request;
  iox::popo::UntypedSubscriber subscriber(kData, subscriberOptions());
  iox::popo::UntypedPublisher acks(kAck, publisherOptions());
  iox::popo::WaitSet<> waitSet;
  if (waitSet.attachState(subscriber, iox::popo::SubscriberState::HAS_DATA).has_error()) return 20;
  if (!awaitConnection([&] { return acks.hasSubscribers(); })) return 21;
  HandOffSample* samples = s.samples();
  const std::int64_t deadline = monotonicNs() + 60'000'000'000LL + static_cast<std::int64_t>(r.messages) * r.periodNs;
  for (std::uint64_t received = 0; received < r.messages;) {
    if (monotonicNs() > deadline) return 22;
    (void)waitSet.timedWait(iox::units::Duration::fromMilliseconds(100));
    for (;;) {
      const std::int64_t startNs = monotonicNs();
      auto taken = subscriber.take();
      if (taken.has_error()) break;
      const auto* header = static_cast<const PayloadHeader*>(taken.value());
      const std::uint64_t sequence = header->sequence;  // the first touch
      const std::int64_t writtenNs = header->writtenNs;
      const std::int64_t touchNs = monotonicNs();
      subscriber.release(taken.value());
      if (sequence != received) ++s.wrong;
      if (sequence < r.messages) samples[sequence] = {sequence, writtenNs, startNs, touchNs};
      if (sequence == r.warmup) {
        s.subCpu[0] = processCpuNsOf(0);
        s.roudiCpu[0] = processCpuNsOf(s.roudiPid);
      } else if (sequence + 1 == r.messages) {
        s.subCpu[1] = processCpuNsOf(0);
        s.roudiCpu[1] = processCpuNsOf(s.roudiPid);
      }
      ++received;
      if (r.periodNs > 0 && sequence + 1 < r.messages) continue;
      auto loaned = acks.loan(sizeof(std::uint64_t), alignof(std::uint64_t));
      if (loaned.has_error()) return 23;
      *static_cast<std::uint64_t*>(loaned.value()) = sequence;
      acks.publish(loaned.value());
    }
  }
  return 0;
}

// Pins the calling process to `core` and gives it SCHED_FIFO at `fifoPriority` (unless 0);
// false, saying why on stderr (the child's log), when either fails.
bool placeSide(int core, int fifoPriority) {
  if (!pinToCore(core)) {
    std::fprintf(stderr, "cannot pin to core %d\n", core);
    return false;
  }
  const sched_param param{fifoPriority};
  if (fifoPriority > 0 && sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    std::fprintf(stderr, "SCHED_FIFO %d: %s\n", fifoPriority, std::strerror(errno));
    return false;
  }
  return true;
}

// One run: publisher and subscriber forked, pinned, waited for; the error set when one failed.
void runPair(IoxShared& s, std::uint64_t run) {
  s.error[0] = '\0';
  s.wrong = 0;
  for (std::int64_t* v : {s.pubCpu, s.subCpu, s.roudiCpu}) v[0] = v[1] = -1;
  std::fill(s.samples(), s.samples() + std::min(s.request.messages, s.maxMessages), HandOffSample{});
  if (s.request.messages > s.maxMessages || s.request.messages == 0) {
    s.setError("bad request");
    return;
  }
  std::fflush(nullptr);
  const std::string suffix = std::to_string(run);
  std::remove("/tmp/pub.log");
  std::remove("/tmp/sub.log");
  const pid_t sub = forkChild("/tmp/sub.log", [&] {
    return placeSide(1, s.request.fifoPriority) ? subscriberMain(s, "tactus-sub-" + suffix) : 2;
  });
  const pid_t pub = forkChild("/tmp/pub.log", [&] {
    return placeSide(0, s.request.fifoPriority) ? publisherMain(s, "tactus-pub-" + suffix) : 2;
  });
  const std::int64_t limit = 120'000'000'000LL + static_cast<std::int64_t>(s.request.messages) * s.request.periodNs;
  const std::vector<int> status = waitAll({pub, sub}, monotonicNs() + limit);
  if (status[0] != 0 || status[1] != 0) {
    s.setError("iceoryx run failed (publisher " + std::to_string(status[0]) + ", subscriber " +
               std::to_string(status[1]) + "; RouDi's log last):\n" + readText("/tmp/pub.log") +
               readText("/tmp/sub.log") + readText("/tmp/roudi.log"));
  } else if (s.wrong > 0) {
    s.setError("the subscriber saw " + std::to_string(s.wrong) + " messages out of order");
  }
}

// The domain process: namespaces, RouDi, then one run per command byte until the harness closes
// the pipe (or dies); then RouDi is stopped. Replies 'R' (ready), 'E' (failed; see error), 'N'
// (no private namespaces), 'D' (a run done).
[[noreturn]] void domainMain(IoxShared& s, int commandFd, int replyFd) {
  auto reply = [&](char c) { (void)!::write(replyFd, &c, 1); };
  if (const std::string e = enterPrivateNamespaces(); !e.empty()) {
    s.setError(e);
    reply('N');
    _exit(0);
  }
  if (!writeFile(kConfigPath, roudiConfig(s.poolSizes, s.poolCount))) {
    s.setError("cannot write the RouDi config");
    reply('E');
    _exit(0);
  }
  std::fflush(nullptr);
  const std::string roudiPath = s.roudiPath;
  const pid_t roudi = forkChild("/tmp/roudi.log", [&] {
    execl(roudiPath.c_str(), "iox-roudi", "-c", kConfigPath, "-m", "on", nullptr);
    std::fprintf(stderr, "cannot run %s: %s\n", roudiPath.c_str(), std::strerror(errno));
    return 127;
  });
  s.roudiPid = roudi;
  bool exited = false;
  if (const std::string e = awaitRoudi(roudi, exited); !e.empty()) {
    s.setError(e);
    if (!exited) kill(roudi, SIGKILL);
    if (!exited) waitpid(roudi, nullptr, 0);
    reply('E');
    _exit(0);
  }
  reply('R');
  char command = 0;
  for (std::uint64_t run = 0; ::read(commandFd, &command, 1) == 1; ++run) {
    runPair(s, run);
    reply('D');
  }
  kill(roudi, SIGTERM);  // RouDi's clean shutdown; the namespaces' tmpfs go with the last process in them
  if (waitUntil(roudi, monotonicNs() + 5'000'000'000LL) == -1) std::fprintf(stderr, "iox-roudi killed after 5 s\n");
  _exit(0);
}

// Reads the domain's one-byte reply, waiting until `deadlineNs`; 0 when none came.
char readReply(int fd, std::int64_t deadlineNs) {
  for (;;) {
    const std::int64_t left = deadlineNs - monotonicNs();
    if (left <= 0) return 0;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left / 1'000'000 + 1, 1000))) > 0) {
      char c = 0;
      return ::read(fd, &c, 1) == 1 ? c : '\0';
    }
  }
}

}  // namespace

IoxDomain::IoxDomain(const std::string& roudiPath, const std::vector<std::uint64_t>& payloadSizes,
                     std::uint64_t maxMessages) {
  sharedBytes_ = sizeof(IoxShared) + maxMessages * sizeof(HandOffSample);
  void* memory = mmap(nullptr, sharedBytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    error_ = "cannot map the shared block";
    return;
  }
  shared_ = new (memory) IoxShared;
  shared_->maxMessages = maxMessages;
  std::snprintf(shared_->roudiPath, sizeof shared_->roudiPath, "%s", roudiPath.c_str());
  for (const std::uint64_t size : payloadSizes) {
    if (shared_->poolCount < std::size(shared_->poolSizes)) shared_->poolSizes[shared_->poolCount++] = size;
  }
  int command[2], reply[2];
  if (pipe2(command, O_CLOEXEC) != 0 || pipe2(reply, O_CLOEXEC) != 0) {
    error_ = "cannot make pipes";
    return;
  }
  std::fflush(nullptr);
  domain_ = fork();
  if (domain_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(command[1]);
    ::close(reply[0]);
    domainMain(*shared_, command[0], reply[1]);
  }
  ::close(command[0]);
  ::close(reply[1]);
  commandFd_ = command[1];
  replyFd_ = reply[0];
  if (domain_ < 0) {
    error_ = "cannot fork";
    return;
  }
  const char r = readReply(replyFd_, monotonicNs() + 30'000'000'000LL);
  if (r != 'R') {
    error_ = r == 0 ? "the iceoryx domain did not start within 30 s" : std::string(shared_->error);
    noNamespaces_ = r == 'N';
    stop();
  }
}

IoxDomain::~IoxDomain() {
  stop();
  if (shared_ != nullptr) munmap(shared_, sharedBytes_);
}

void IoxDomain::stop() {
  if (commandFd_ >= 0) ::close(commandFd_);  // the domain stops RouDi and exits
  commandFd_ = -1;
  if (domain_ > 0) waitUntil(domain_, monotonicNs() + 10'000'000'000LL);
  domain_ = -1;
  if (replyFd_ >= 0) ::close(replyFd_);
  replyFd_ = -1;
}

IoxResult IoxDomain::run(const IoxRequest& request, std::int64_t timeoutNs) {
  IoxResult result;
  if (!error_.empty() || commandFd_ < 0) {
    result.error = error_.empty() ? "the iceoryx domain is stopped" : error_;
    return result;
  }
  shared_->request = request;
  const char c = 'r';
  if (::write(commandFd_, &c, 1) != 1 || readReply(replyFd_, monotonicNs() + timeoutNs) != 'D') {
    result.error = "the iceoryx domain did not answer";
    error_ = result.error;
    stop();
    return result;
  }
  if (shared_->error[0] != '\0') {
    result.error = shared_->error;
    return result;
  }
  const HandOffSample* samples = shared_->samples();
  result.samples.assign(samples + request.warmup, samples + request.messages);
  result.writerCpuNs = shared_->pubCpu[1] - shared_->pubCpu[0];
  result.readerCpuNs = shared_->subCpu[1] - shared_->subCpu[0];
  result.brokerCpuNs = shared_->roudiCpu[1] - shared_->roudiCpu[0];
  return result;
}

}  // namespace tactus::bench
