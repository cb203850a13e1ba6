// The cross-SoC hand-off through tactus's link (soc_link) between two processes over Cyclone DDS
// on loopback: a runnable end published by one master's link to its arrival at the other's, as
// round trip / 2 (end of runnable 7 on SoC 0 -> end of runnable 8 published back by SoC 1), p50
// and p99 over N iterations; then the bare Cyclone DDS ping-pong of the same run (dds-pingpong)
// and the ratios.
//
//   link-handoff DDS_PINGPONG [ITERATIONS] [--uri-a URI --uri-b URI] [--netns-a NS --netns-b NS]
//                [--no-bare]
//
// ITERATIONS defaults to 10000. By default both sides use samples/multisoc/loopback.xml. With
// --uri-a/--uri-b each side joins with its own Cyclone DDS configuration (a DDS Security fragment
// after the network part, say), and with --netns-a/--netns-b each side first enters a network
// namespace of `ip netns` (root; two emulated hosts joined by a veth pair): then, as with
// --no-bare, the bare ping-pong (loopback) is not run, as it would measure another path
// (link_variants.sh compares the variants with each other instead).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "soc_run.hpp"
#include "tactus/soc_link/soc_link.hpp"

using namespace tactus;
using namespace tactus::soc_link;
using namespace tactus::bench;

namespace {

LinkOptions options(std::uint32_t soc) {
  LinkOptions o;
  o.domain = 18;
  o.schedule = 12;
  o.soc = soc;
  return o;
}

bool waitAlive(Link& link, std::uint32_t soc) {
  for (int i = 0; i < 1000; ++i) {
    (void)link.announce(1);
    for (std::uint32_t s : link.aliveSocs())
      if (s == soc && link.matchedPeers() >= 1) return true;
    usleep(10000);
  }
  return false;
}

// One side's network: its Cyclone DDS configuration and, if named, the network namespace it
// enters first (before any DDS participant exists in this process).
struct Side {
  std::string uri = "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml";
  std::string netns;
};

bool enter(const Side& side) {
  if (!side.netns.empty()) {
    const int fd = ::open(("/var/run/netns/" + side.netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      std::fprintf(stderr, "link-handoff: cannot enter network namespace %s\n", side.netns.c_str());
      if (fd >= 0) ::close(fd);
      return false;
    }
    ::close(fd);
  }
  return setenv("CYCLONEDDS_URI", side.uri.c_str(), 1) == 0;
}

[[noreturn]] void echo(long total, const Side& side) {
  if (!enter(side)) _exit(9);
  auto link = Link::open(options(1));
  if (!link || !waitAlive(**link, 0)) _exit(10);
  long seen = 0;
  const std::int64_t until = monotonicNs() + 300'000'000'000;
  while (seen < total && monotonicNs() < until) {
    auto ends = (*link)->takeEnds(1'000'000'000);
    if (!ends) _exit(11);
    for (const RemoteEnd& e : *ends) {
      if (!(*link)->publishEnd(e.iteration, e.frame, 8, monotonicNs())) _exit(12);
      ++seen;
    }
  }
  usleep(200000);
  _exit(seen == total ? 0 : 13);
}

}  // namespace

namespace {

int run(int argc, char** argv) {
  // Loopback by default: the shipped configuration, whatever the environment says (nothing may
  // leave loopback or the tests' own veth pairs on these machines).
  Side a, b;
  std::vector<std::string> positional;
  bool bare = true;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--no-bare") {
      bare = false;
      continue;
    }
    std::string* value = arg == "--uri-a"     ? &a.uri
                         : arg == "--uri-b"   ? &b.uri
                         : arg == "--netns-a" ? &a.netns
                         : arg == "--netns-b" ? &b.netns
                                              : nullptr;
    if (value == nullptr) {
      positional.push_back(arg);
    } else if (k + 1 < argc) {
      *value = argv[++k];
    } else {
      positional.clear();
      break;
    }
  }
  if (positional.empty() || positional.size() > 2) {
    std::fprintf(stderr,
                 "usage: link-handoff DDS_PINGPONG [ITERATIONS] [--uri-a URI --uri-b URI] [--netns-a NS --netns-b "
                 "NS] [--no-bare]\n");
    return 2;
  }
  const bool loopback = a.netns.empty() && b.netns.empty();
  const long iterations = positional.size() > 1 ? std::strtol(positional[1].c_str(), nullptr, 10) : 10000;
  if (iterations < 100 || iterations > 10000000) {
    std::fprintf(stderr, "link-handoff: ITERATIONS must be 100..10000000\n");
    return 2;
  }
  const long warmup = 200;
  const pid_t child = fork();
  if (child == 0) echo(iterations + warmup, b);
  if (!enter(a)) {
    kill(child, SIGKILL);
    return 1;
  }
  auto link = Link::open(options(0));
  if (!link || !waitAlive(**link, 1)) {
    std::fprintf(stderr, "link-handoff: the other link did not come\n");
    kill(child, SIGKILL);
    return 1;
  }
  std::vector<std::int64_t> half;
  half.reserve(static_cast<std::size_t>(iterations));
  for (long i = 0; i < iterations + warmup; ++i) {
    const std::int64_t t0 = monotonicNs();
    if (!(*link)->publishEnd(static_cast<std::uint64_t>(i), 0, 7, t0)) return 1;
    bool back = false;
    while (!back) {
      auto ends = (*link)->takeEnds(5'000'000'000);
      if (!ends || ends->empty()) {
        std::fprintf(stderr, "link-handoff: no answer to end %ld within 5 s\n", i);
        kill(child, SIGKILL);
        return 1;
      }
      for (const RemoteEnd& e : *ends) back = back || e.iteration == static_cast<std::uint64_t>(i);
    }
    if (i >= warmup) half.push_back((monotonicNs() - t0) / 2);
  }
  int status = 0;
  waitpid(child, &status, 0);
  link->reset();
  const double p50 = percentileUs(half, 0.5), p99 = percentileUs(half, 0.99);
  std::printf(
      "soc_link hand-off (runnable end keyed by schedule, runnable, frame; two processes, "
      "%s), %ld iterations\n",
      loopback ? "loopback" : "network namespaces", iterations);
  std::printf("  one way (round trip / 2): p50 %.1f us  p99 %.1f us\n", p50, p99);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "link-handoff: the echoing side failed (status %d)\n", status);
    return 1;
  }
  if (!loopback || !bare) return 0;
  setenv("CYCLONEDDS_URI", "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml", 1);
  BarePingPong bareDds;
  if (!barePingPong(positional[0], iterations, 1000, bareDds)) {
    std::fprintf(stderr, "link-handoff: the bare ping-pong failed\n");
    return 1;
  }
  std::printf("ratio soc_link / bare DDS: p50 %.2fx  p99 %.2fx\n", p50 / bareDds.p50, p99 / bareDds.p99);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return guardedMain("link-handoff", run, argc, argv); }
