// The multi-SoC link between two processes over Cyclone DDS on loopback (the shipped
// samples/multisoc/loopback.xml, set before any participant exists): runnable ends handed over in
// order in both directions, and a master that vanishes (SIGKILL) is named once its liveliness
// lease runs out; the primary's frame releases delivered to the follower as they come.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tactus/soc_link/soc_link.hpp"

using namespace tactus;
using namespace tactus::soc_link;

namespace {

constexpr std::uint16_t kSchedule = 4242;

std::int64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Loopback only, before anything touches DDS; a domain of this test's own.
void useLoopback() {
  const char* root = std::getenv("TACTUS_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  setenv("CYCLONEDDS_URI", ("file://" + std::string(root) + "/samples/multisoc/loopback.xml").c_str(), 1);
}

LinkOptions options(std::uint32_t soc, std::int64_t livelinessNs = 5'000'000'000, std::uint32_t primary = 0) {
  LinkOptions o;
  o.domain = 17;
  o.schedule = kSchedule;
  o.soc = soc;
  o.primary = primary;
  o.livelinessNs = livelinessNs;
  return o;
}

// Waits until the link sees SoC `soc` alive and its runnable-end topic matched both ways
// (announcing its own state meanwhile), up to 10 s. A follower's link adopts the primary's run on
// the way (link v2), so it announces once more on success: its samples before carried no run.
bool waitAlive(Link& link, std::uint32_t soc) {
  for (int i = 0; i < 1000; ++i) {
    if (!link.announce(1)) return false;
    for (std::uint32_t s : link.aliveSocs())
      if (s == soc && link.matchedPeers() >= 1) return link.announce(1).has_value();  // a follower's, now in the run
    usleep(10000);
  }
  return false;
}

// The peer process (SoC 1): echoes each end of runnable 7 as an end of runnable 8 with the same
// iteration and frame, until iteration `count - 1`; exit status 0 when all came in order.
[[noreturn]] void echoPeer(std::uint64_t count) {
  auto link = Link::open(options(1));
  if (!link) _exit(10);
  if (!waitAlive(**link, 0)) _exit(11);
  std::uint64_t expected = 0;
  const std::int64_t until = nowNs() + 60'000'000'000;
  while (expected < count && nowNs() < until) {
    (void)(*link)->announce(2);
    auto ends = (*link)->takeEnds(100'000'000);
    if (!ends) _exit(12);
    for (const RemoteEnd& e : *ends) {
      if (e.runnable != 7 || e.iteration != expected || e.frame != static_cast<std::uint32_t>(expected % 3)) {
        std::fprintf(stderr, "peer: got runnable %u iteration %llu frame %u, expected iteration %llu\n", e.runnable,
                     static_cast<unsigned long long>(e.iteration), e.frame, static_cast<unsigned long long>(expected));
        _exit(13);
      }
      if (!(*link)->publishEnd(e.iteration, e.frame, 8, nowNs())) _exit(14);
      ++expected;
    }
  }
  // Stay until the other side has seen the last end.
  usleep(300000);
  _exit(expected == count ? 0 : 15);
}

}  // namespace

TEST_CASE("runnable ends cross between two masters' links in order, both ways", "[multisoc]") {
  REQUIRE(available());
  useLoopback();
  const std::uint64_t count = 1000;
  const pid_t peer = fork();
  REQUIRE(peer >= 0);
  if (peer == 0) echoPeer(count);
  auto link = Link::open(options(0));
  REQUIRE(link.has_value());
  REQUIRE(waitAlive(**link, 1));
  std::uint64_t back = 0;
  for (std::uint64_t it = 0; it < count; ++it) {
    REQUIRE((*link)->publishEnd(it, static_cast<std::uint32_t>(it % 3), 7, nowNs()));
    std::vector<RemoteEnd> got;
    const std::int64_t until = nowNs() + 5'000'000'000;
    while (got.empty() && nowNs() < until) {
      auto ends = (*link)->takeEnds(100'000'000);
      REQUIRE(ends.has_value());
      got = *ends;
    }
    REQUIRE(got.size() == 1);
    CHECK(got[0].runnable == 8);
    CHECK(got[0].iteration == it);
    CHECK(got[0].frame == it % 3);
    ++back;
  }
  CHECK(back == count);
  CHECK_FALSE((*link)->lostSoc().has_value());
  int status = 0;
  REQUIRE(waitpid(peer, &status, 0) == peer);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a master killed on the other SoC is named once its liveliness lease runs out", "[multisoc]") {
  REQUIRE(available());
  useLoopback();
  const std::int64_t lease = 300'000'000;  // 300 ms
  const pid_t peer = fork();
  REQUIRE(peer >= 0);
  if (peer == 0) {
    auto link = Link::open(options(1, lease));
    if (!link) _exit(10);
    if (!waitAlive(**link, 0)) _exit(11);  // it adopts the primary's run from its ready state
    for (;;) {
      (void)(*link)->announce(2);
      usleep(20000);
    }
  }
  auto link = Link::open(options(0, lease));
  REQUIRE(link.has_value());
  REQUIRE(waitAlive(**link, 1));
  CHECK_FALSE((*link)->lostSoc().has_value());
  // Alive for longer than the lease while it runs: no loss is reported.
  usleep(2 * static_cast<useconds_t>(lease / 1000));
  CHECK_FALSE((*link)->lostSoc().has_value());
  const std::int64_t killedAt = nowNs();
  REQUIRE(kill(peer, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(peer, &status, 0) == peer);
  std::optional<std::uint32_t> lost;
  while (!lost && nowNs() - killedAt < 10'000'000'000) {
    lost = (*link)->lostSoc();
    usleep(5000);
  }
  REQUIRE(lost.has_value());
  CHECK(*lost == 1);
  const std::int64_t detectedNs = nowNs() - killedAt;
  INFO("loss detected after " << detectedNs / 1000000 << " ms");
  CHECK(detectedNs >= lease / 2);
  CHECK(detectedNs < 5 * lease);
}

TEST_CASE("the primary's frame releases reach the other master's delivery handler in order, the stop last",
          "[multisoc]") {
  REQUIRE(available());
  useLoopback();
  const std::uint64_t count = 200;
  const pid_t peer = fork();
  REQUIRE(peer >= 0);
  if (peer == 0) {
    // The primary (SoC 1): once it sees the follower, writes `count` iteration starts of
    // hyperepoch 2 (release time 1000 + iteration), then a stop, and stays until told to go.
    auto link = Link::open(options(1, 5'000'000'000, 1));
    if (!link) _exit(10);
    if (!waitAlive(**link, 0)) _exit(11);
    for (int i = 0; i < 1000 && (*link)->releaseWriterMatches() == 0; ++i) usleep(10000);
    for (std::uint64_t it = 0; it < count; ++it) {
      if (!(*link)->publishRelease(2, it, static_cast<std::int64_t>(1000 + it), 0)) _exit(12);
      usleep(200);
    }
    if (!(*link)->publishRelease(2, count, 0, count + 1)) _exit(13);
    for (int i = 0; i < 1000; ++i) {
      (void)(*link)->announce(2);
      usleep(10000);
    }
    _exit(0);
  }
  auto link = Link::open(options(0, 5'000'000'000, 1));
  REQUIRE(link.has_value());
  std::mutex mutex;
  std::vector<RemoteRelease> got;
  REQUIRE((*link)->deliverReleases([&](const RemoteRelease& r) {
    const std::lock_guard<std::mutex> hold(mutex);
    got.push_back(r);
  }));
  REQUIRE(waitAlive(**link, 1));
  const std::int64_t until = nowNs() + 20'000'000'000;
  for (;;) {
    {
      const std::lock_guard<std::mutex> hold(mutex);
      if (got.size() >= count + 1 || nowNs() > until) break;
    }
    usleep(5000);
  }
  REQUIRE((*link)->deliverReleases(nullptr));  // stops the delivery
  // The primary stays (announcing) until killed below: an exit before says why it failed.
  int early = 0;
  if (waitpid(peer, &early, WNOHANG) == peer) FAIL("the primary's process ended early, status " << early);
  const std::lock_guard<std::mutex> hold(mutex);
  REQUIRE(got.size() == count + 1);
  for (std::uint64_t it = 0; it < count; ++it) {
    INFO("release " << it);
    CHECK(got[it].hyperepoch == 2);
    CHECK(got[it].iteration == it);
    CHECK(got[it].releaseNs == static_cast<std::int64_t>(1000 + it));
    CHECK(got[it].stopAfter == 0);
    CHECK(got[it].receivedNs >= got[it].sentNs);  // one host, one clock
  }
  CHECK(got[count].stopAfter == count + 1);
  kill(peer, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(peer, &status, 0) == peer);
  CHECK(WIFSIGNALED(status));  // still there when killed: it never failed
}

TEST_CASE("a primary's link reopened over a closed one takes none of the old run's samples (link v2)", "[multisoc]") {
  REQUIRE(available());
  useLoopback();
  // The survivor of the old run (SoC 1): it joins the first primary's run, then, as a master whose
  // peer died, announces its failed end and keeps publishing ends of that run.
  int toChild[2];
  REQUIRE(pipe(toChild) == 0);
  const pid_t survivor = fork();
  REQUIRE(survivor >= 0);
  if (survivor == 0) {
    close(toChild[1]);
    auto link = Link::open(options(1));
    if (!link) _exit(10);
    if (!waitAlive(**link, 0)) _exit(11);
    char go = 0;
    if (read(toChild[0], &go, 1) != 1) _exit(12);  // the first primary is closed
    for (std::uint64_t it = 0;; ++it) {
      (void)(*link)->announce(3, 1, "SoC 'SocA' is gone");
      (void)(*link)->publishEnd(it, 0, 7, nowNs());
      usleep(20000);
    }
  }
  close(toChild[0]);
  // A new master of SoC 1, forked now (no process forks with a link open: Cyclone's threads would
  // not follow), opens its link when told.
  int toFresh[2];
  REQUIRE(pipe(toFresh) == 0);
  const pid_t fresh = fork();
  REQUIRE(fresh >= 0);
  if (fresh == 0) {
    close(toFresh[1]);
    char go = 0;
    if (read(toFresh[0], &go, 1) != 1) _exit(9);
    auto link = Link::open(options(1));
    if (!link) _exit(10);
    if (!waitAlive(**link, 0)) _exit(11);
    for (int i = 0; i < 100; ++i) {
      (void)(*link)->announce(1);
      usleep(10000);
    }
    _exit((*link)->runId() == 0 ? 12 : 0);
  }
  close(toFresh[0]);
  // The first primary (a process of its own, as a master is): it meets the survivor and dies.
  const pid_t first = fork();
  REQUIRE(first >= 0);
  if (first == 0) {
    auto link = Link::open(options(0));
    if (!link) _exit(10);
    _exit(waitAlive(**link, 1) ? 0 : 11);
  }
  int status = 0;
  REQUIRE(waitpid(first, &status, 0) == first);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  REQUIRE(write(toChild[1], "g", 1) == 1);
  auto second = Link::open(options(0));
  REQUIRE(second.has_value());
  CHECK((*second)->runId() != 0);
  // For a second the survivor announces its failure and publishes ends: none reaches the new run.
  const std::int64_t until = nowNs() + 1'000'000'000;
  std::size_t ends = 0;
  bool sawSurvivor = false;
  while (nowNs() < until) {
    (void)(*second)->announce(1);
    auto got = (*second)->takeEnds(20'000'000);
    REQUIRE(got.has_value());
    ends += got->size();
    for (const PeerState& p : (*second)->peers()) sawSurvivor = sawSurvivor || p.soc == 1;
  }
  CHECK(ends == 0);
  CHECK_FALSE(sawSurvivor);
  CHECK_FALSE((*second)->lostSoc().has_value());
  // A new master of SoC 1 joins the new run (its ready state adopts the new primary's run).
  REQUIRE(write(toFresh[1], "g", 1) == 1);
  CHECK(waitAlive(**second, 1));
  REQUIRE(waitpid(fresh, &status, 0) == fresh);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  kill(survivor, SIGKILL);
  REQUIRE(waitpid(survivor, &status, 0) == survivor);
  close(toChild[1]);
  close(toFresh[1]);
}
