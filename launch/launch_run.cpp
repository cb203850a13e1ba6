// tactus-launch's run: the processes, their prefixed output, the stop and the summary.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>

#include "launch.hpp"

namespace tactus::launch {
namespace {

constexpr double kSegmentWaitS = 5.0;  // master-first: longest wait for the master's segment
constexpr double kStartGapS = 0.05;    // between two other starts
constexpr int kPollMs = 50;

double nowS() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Proc {
  std::string name;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  bool isMaster = false;
  bool isStarter = false;   // `tactus-manager start ID`, after every other process
  bool ignoreExit = false;  // on_exit: ignore
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // output after the last newline
  bool running = false;
  double startS = 0;
  ProcessEnd end;
  int colour = 0;
  bool signalled = false;  // tactus-launch sent it a signal: its failure may follow another's
};

int exitStatusOf(const ProcessEnd& e) { return e.signal != 0 ? 128 + e.signal : e.exitCode; }
bool failed(const ProcessEnd& e) { return e.started && (e.signal != 0 || e.exitCode != 0); }

// What tactus-launch does about a process's failure: an on_exit: ignore client's is no one's.
bool counts(const Proc& p) { return failed(p.end) && !p.ignoreExit; }

std::string describe(const ProcessEnd& e) {
  if (!e.started) return "not started";
  if (e.signal != 0) return std::string("signal SIG") + sigabbrev_np(e.signal);
  return "exit " + std::to_string(e.exitCode);
}

void writeAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

// In the child, between fork and exec: own process group (Ctrl-C reaches tactus-launch only),
// SIGTERM when tactus-launch dies, output into the pipe, the file's folder, the environment.
[[noreturn]] void execChild(const Proc& p, const sigset_t& blocked, int writeFd, const std::string& dir,
                            const std::string& instance) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  ::sigprocmask(SIG_UNBLOCK, &blocked, nullptr);
  ::signal(SIGPIPE, SIG_DFL);  // ignored in tactus-launch; an ignored signal stays ignored across exec
  ::dup2(writeFd, STDOUT_FILENO);
  ::dup2(writeFd, STDERR_FILENO);
  const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devNull >= 0) ::dup2(devNull, STDIN_FILENO);
  if (::chdir(dir.c_str()) != 0) {
    std::fprintf(stderr, "cannot enter %s: %s\n", dir.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::setenv("TACTUS_INSTANCE", instance.c_str(), 1);
  ::unsetenv("NOTIFY_SOCKET");  // readiness is ours to know, not a supervisor's
  for (const auto& [k, v] : p.env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  argv.reserve(p.argv.size() + 1);
  for (const std::string& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

class Runner {
 public:
  Runner(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts)
      : cfg_(cfg), opts_(opts) {
    Proc master;
    master.name = "master";
    master.isMaster = true;
    master.argv = masterCommand(cfg, schedules, opts);
    procs_.push_back(std::move(master));
    for (const ClientSpec& c : cfg.clients) {
      Proc p;
      p.name = c.name;
      p.argv = c.command;
      p.env = c.env;
      p.ignoreExit = c.onExit == OnExit::kIgnore;
      procs_.push_back(std::move(p));
    }
    // The master's start request waits for every client to enter (-t bounds it), so the starter
    // may come last of all: its answer arrives once the clients attached and the schedule runs.
    if (cfg.start >= 0) {
      Proc starter;
      starter.name = "manager";
      starter.isStarter = true;
      starter.argv = {findTool(opts.binDir, "tactus-manager"),
                      "-D",
                      cfg.instance,
                      "-N",
                      cfg.manager,
                      "-t",
                      "-1",
                      "start",
                      std::to_string(cfg.start)};
      procs_.push_back(std::move(starter));
    }
    static constexpr int kColours[] = {36, 32, 33, 35, 34, 31, 96, 92, 93, 95};
    for (std::size_t i = 0; i < procs_.size(); ++i) {
      procs_[i].end.name = procs_[i].name;
      procs_[i].colour = i == 0 ? 1 : kColours[(i - 1) % std::size(kColours)];
      width_ = std::max(width_, procs_[i].name.size());
    }
  }

  int run();

 private:
  void planOrder();
  bool setUpSignals();
  void startNext(double now);
  void start(Proc& p);
  void readOutput(Proc& p);
  void emitLine(const Proc& p, std::string_view line) const;
  void reap(double now);
  void onSignal(int sig, double now);
  void beginStop(double now, const std::string& why);
  void escalate(double now);
  bool allEnded() const;
  int summary() const;

  const LaunchConfig& cfg_;
  const LaunchOptions& opts_;
  std::vector<Proc> procs_;
  std::vector<std::size_t> order_;  // indexes into procs_, in start order
  std::size_t nextStart_ = 0;
  double nextStartS_ = 0;
  bool waitSegment_ = false;
  double segmentDeadlineS_ = 0;
  sigset_t blocked_{};
  int signalFd_ = -1;
  bool stopping_ = false;
  double stopS_ = 0;
  bool clientsTermed_ = false;
  bool killed_ = false;
  int signalsSeen_ = 0;
  std::vector<std::size_t> endOrder_;
  std::size_t width_ = 0;
};

void Runner::planOrder() {
  const bool starter = procs_.back().isStarter;
  for (std::size_t i = 0; i + (starter ? 1 : 0) < procs_.size(); ++i) order_.push_back(i);
  if (cfg_.order == StartOrder::kClientsFirst) {
    std::rotate(order_.begin(), order_.begin() + 1, order_.end());
  } else if (cfg_.order == StartOrder::kRandom) {
    const std::uint64_t seed = opts_.seed ? *opts_.seed : std::random_device{}();
    std::mt19937_64 rng(seed);
    std::shuffle(order_.begin(), order_.end(), rng);
    std::string names;
    for (std::size_t i : order_) names += " " + procs_[i].name;
    std::fprintf(stderr, "tactus-launch: random order, seed %llu (--seed %llu repeats it):%s\n",
                 static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed), names.c_str());
  }
  if (starter) order_.push_back(procs_.size() - 1);
  if (!cfg_.manager.empty() && !starter)
    std::fprintf(stderr,
                 "tactus-launch: nothing runs until the schedule manager '%s' starts a schedule: tactus-manager -D "
                 "%s start ID (or `start: ID` in the launch file)\n",
                 cfg_.manager.c_str(), cfg_.instance.c_str());
}

bool Runner::setUpSignals() {
  sigemptyset(&blocked_);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&blocked_, s);
  if (::sigprocmask(SIG_BLOCK, &blocked_, nullptr) != 0) return false;
  signalFd_ = ::signalfd(-1, &blocked_, SFD_CLOEXEC | SFD_NONBLOCK);
  return signalFd_ >= 0;
}

void Runner::start(Proc& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "tactus-launch: pipe: %s\n", std::strerror(errno));
    return;
  }
  const pid_t pid = ::fork();
  if (pid == 0) execChild(p, blocked_, fds[1], cfg_.dir, cfg_.instance);
  ::close(fds[1]);
  if (pid < 0) {
    std::fprintf(stderr, "tactus-launch: fork: %s\n", std::strerror(errno));
    ::close(fds[0]);
    return;
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  p.pid = pid;
  p.fd = fds[0];
  p.running = true;
  p.startS = nowS();
  p.end.started = true;
}

void Runner::startNext(double now) {
  if (stopping_ || nextStart_ >= order_.size()) return;
  if (waitSegment_) {
    const bool up = ::access(("/dev/shm/tactus_" + cfg_.instance).c_str(), F_OK) == 0;
    if (!up && now < segmentDeadlineS_) return;
    waitSegment_ = false;
  }
  if (now < nextStartS_) return;
  Proc& p = procs_[order_[nextStart_++]];
  start(p);
  nextStartS_ = now + kStartGapS;
  if (p.isMaster && cfg_.order == StartOrder::kMasterFirst) {
    waitSegment_ = true;
    segmentDeadlineS_ = now + kSegmentWaitS;
  }
}

void Runner::emitLine(const Proc& p, std::string_view line) const {
  std::string out;
  std::string name = p.name;
  name.resize(width_, ' ');
  if (opts_.color) {
    out = "\033[" + std::to_string(p.colour) + "m" + name + " |\033[0m ";
  } else {
    out = name + " | ";
  }
  out.append(line);
  out += '\n';
  writeAll(STDOUT_FILENO, out);
}

void Runner::readOutput(Proc& p) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(p.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: later
    if (n == 0) {
      if (!p.pending.empty()) emitLine(p, p.pending);
      p.pending.clear();
      ::close(p.fd);
      p.fd = -1;
      return;
    }
    p.pending.append(buf, static_cast<std::size_t>(n));
    std::size_t from = 0;
    for (std::size_t nl = p.pending.find('\n'); nl != std::string::npos; nl = p.pending.find('\n', from)) {
      emitLine(p, std::string_view(p.pending).substr(from, nl - from));
      from = nl + 1;
    }
    p.pending.erase(0, from);
  }
}

void Runner::reap(double now) {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (std::size_t i = 0; i < procs_.size(); ++i) {
      Proc& p = procs_[i];
      if (p.pid != pid || !p.running) continue;
      p.running = false;
      p.end.seconds = now - p.startS;
      if (WIFEXITED(status)) p.end.exitCode = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) p.end.signal = WTERMSIG(status);
      endOrder_.push_back(i);
      if (!stopping_ && failed(p.end) && p.ignoreExit) {
        std::fprintf(stderr, "tactus-launch: %s ended (%s): on_exit: ignore, the others go on\n", p.name.c_str(),
                     describe(p.end).c_str());
      }
      if (!stopping_ && counts(p)) beginStop(now, p.name + " ended (" + describe(p.end) + "): stopping the others");
      if (!stopping_ && p.isMaster) beginStop(now, "");
    }
  }
}

void Runner::beginStop(double now, const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  stopS_ = now;
  // A start still waiting is answered when the master ends: its failure follows the stop.
  for (Proc& p : procs_) p.signalled = p.signalled || (p.isStarter && p.running);
  if (!why.empty()) std::fprintf(stderr, "tactus-launch: %s\n", why.c_str());
  if (procs_[0].running) {
    procs_[0].signalled = true;
    ::kill(procs_[0].pid, SIGTERM);
  }
}

void Runner::escalate(double now) {
  if (!stopping_) return;
  if (!clientsTermed_ && now >= stopS_ + opts_.graceS) {
    clientsTermed_ = true;
    for (Proc& p : procs_) {
      if (!p.running || p.isMaster) continue;
      std::fprintf(stderr, "tactus-launch: %s still runs %.1f s after the stop began: SIGTERM\n", p.name.c_str(),
                   opts_.graceS);
      p.signalled = true;
      ::kill(p.pid, SIGTERM);
    }
  }
  if (!killed_ && now >= stopS_ + opts_.killS) {
    killed_ = true;
    for (Proc& p : procs_) {
      if (!p.running) continue;
      std::fprintf(stderr, "tactus-launch: %s still runs %.1f s after the stop began: SIGKILL\n", p.name.c_str(),
                   opts_.killS);
      p.signalled = true;
      ::kill(-p.pid, SIGKILL);
      ::kill(p.pid, SIGKILL);
    }
  }
}

void Runner::onSignal(int sig, double now) {
  if (sig == SIGCHLD) return;
  ++signalsSeen_;
  if (signalsSeen_ == 1) {
    beginStop(now, std::string("got SIG") + sigabbrev_np(sig) + ": stopping (SIGTERM to the master first)");
  } else {
    std::fprintf(stderr, "tactus-launch: a second SIG%s: SIGKILL to everything left\n", sigabbrev_np(sig));
    stopS_ = now - opts_.killS;  // escalate at once
    escalate(now);
  }
}

bool Runner::allEnded() const {
  const bool started = nextStart_ >= order_.size() || stopping_;
  return started && std::none_of(procs_.begin(), procs_.end(), [](const Proc& p) { return p.running; });
}

int Runner::run() {
  if (!setUpSignals()) {
    std::fprintf(stderr, "tactus-launch: signals: %s\n", std::strerror(errno));
    return 1;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a closed standard output ends the writes, not tactus-launch
  planOrder();
  while (!allEnded()) {
    double now = nowS();
    startNext(now);
    std::vector<pollfd> fds{{signalFd_, POLLIN, 0}};
    std::vector<Proc*> owners{nullptr};
    for (Proc& p : procs_) {
      if (p.fd < 0) continue;
      fds.push_back({p.fd, POLLIN, 0});
      owners.push_back(&p);
    }
    ::poll(fds.data(), fds.size(), kPollMs);
    now = nowS();
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) readOutput(*owners[i]);
    signalfd_siginfo info{};
    while (::read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
      onSignal(static_cast<int>(info.ssi_signo), now);
    reap(now);
    escalate(now);
  }
  for (Proc& p : procs_)
    if (p.fd >= 0) readOutput(p);  // what a process wrote before it ended (its children may hold the pipe)
  return summary();
}

int Runner::summary() const {
  std::string out = "\ntactus-launch: summary, instance " + cfg_.instance + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-*s  %-14s  %s\n", static_cast<int>(width_), "process", "status", "run time");
  out += line;
  for (const Proc& p : procs_) {
    char t[32] = "-";
    if (p.end.started) std::snprintf(t, sizeof t, "%.2f s", p.end.seconds);
    std::snprintf(line, sizeof line, "  %-*s  %-14s  %s%s\n", static_cast<int>(width_), p.name.c_str(),
                  describe(p.end).c_str(), t, failed(p.end) && p.ignoreExit ? "  (on_exit: ignore)" : "");
    out += line;
  }
  // The failure that names the run: the master's on its own, else the first one on its own, else
  // (all failures followed tactus-launch's signals) the master's, else the first.
  const ProcessEnd* first = nullptr;
  for (const bool afterSignal : {false, true}) {
    const auto pick = [&](const Proc& p) {
      if (first == nullptr && counts(p) && p.signalled == afterSignal) first = &p.end;
    };
    pick(procs_[0]);
    for (std::size_t i : endOrder_) pick(procs_[i]);
  }
  if (first == nullptr) {
    const auto ignored = std::count_if(procs_.begin(), procs_.end(), [](const Proc& p) { return failed(p.end); });
    if (ignored == 0) {
      out += "tactus-launch: all " + std::to_string(procs_.size()) + " processes exited 0\n";
    } else {
      out += "tactus-launch: exit status 0: the others exited 0, " + std::to_string(ignored) + " of " +
             std::to_string(procs_.size()) + " ended with on_exit: ignore\n";
    }
  } else {
    out += "tactus-launch: " + first->name + " failed (" + describe(*first) + "): exit status " +
           std::to_string(exitStatusOf(*first)) + "\n";
  }
  writeAll(STDOUT_FILENO, out);
  return first == nullptr ? 0 : exitStatusOf(*first);
}

}  // namespace

int runApplication(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts) {
  Runner runner(cfg, schedules, opts);
  return runner.run();
}

}  // namespace tactus::launch
