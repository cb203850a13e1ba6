// The bare Cyclone DDS round trip between two processes (reliable keyed topic, loopback only): the
// yardstick the cross-SoC hand-off of tactus-master is measured against. Two measurements, one
// after the other:
//   back to back  each ping written as soon as the previous echo came; p50/p99 of round trip / 2
//   paced         one ping per period (both processes sleep in between, as a run's masters and
//                 workers do between frames), each way timed on its own: receive time - the
//                 writer's stamp in the sample (one host, one CLOCK_MONOTONIC), as the run's
//                 hand-off is (a successor's start - its predecessor's end); both ways pooled
//
//   dds-pingpong [ITERATIONS] [--period-us P]   (default 10000 and 1000; starts its own pong process)
#include <dds/dds.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "soc_topics.h"

namespace {

std::int64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void die(const char* what, dds_return_t rc) {
  std::fprintf(stderr, "dds-pingpong: %s: %s\n", what, dds_strretcode(rc));
  std::exit(1);
}

dds_entity_t check(dds_entity_t e, const char* what) {
  if (e < 0) die(what, e);
  return e;
}

struct Ends {
  dds_entity_t participant = 0, writer = 0, reader = 0, waitset = 0;
};

// A participant writing on `out` and reading `in`, both reliable and keeping all samples.
Ends openEnds(const char* out, const char* in) {
  Ends e;
  e.participant = check(dds_create_participant(DDS_DOMAIN_DEFAULT, nullptr, nullptr), "participant");
  dds_qos_t* qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 16);
  dds_entity_t tout = check(dds_create_topic(e.participant, &tactus_dds_Ping_desc, out, qos, nullptr), "topic");
  dds_entity_t tin = check(dds_create_topic(e.participant, &tactus_dds_Ping_desc, in, qos, nullptr), "topic");
  e.writer = check(dds_create_writer(e.participant, tout, qos, nullptr), "writer");
  e.reader = check(dds_create_reader(e.participant, tin, qos, nullptr), "reader");
  dds_delete_qos(qos);
  e.waitset = check(dds_create_waitset(e.participant), "waitset");
  dds_entity_t cond = check(dds_create_readcondition(e.reader, DDS_ANY_STATE), "read condition");
  dds_return_t rc = dds_waitset_attach(e.waitset, cond, 0);
  if (rc < 0) die("attach", rc);
  return e;
}

// Waits up to `timeout` for one sample; false on timeout.
bool takeOne(const Ends& e, tactus_dds_Ping& out, dds_duration_t timeout) {
  for (;;) {
    void* samples[1] = {&out};
    dds_sample_info_t info[1];
    dds_return_t n = dds_take(e.reader, samples, info, 1, 1);
    if (n < 0) die("take", n);
    if (n == 1 && info[0].valid_data) return true;
    if (n == 1) continue;
    dds_return_t w = dds_waitset_wait(e.waitset, nullptr, 0, timeout);
    if (w < 0) die("wait", w);
    if (w == 0) return false;
  }
}

// Takes samples until the echo of ping `seq` comes (up to 5 s each); false, with the pong process
// stopped, when none comes.
bool awaitEcho(const Ends& e, std::uint64_t seq, tactus_dds_Ping& back, pid_t pong) {
  do {
    if (!takeOne(e, back, DDS_SECS(5))) {
      std::fprintf(stderr, "dds-pingpong: no answer to ping %llu within 5 s\n", static_cast<unsigned long long>(seq));
      kill(pong, SIGTERM);
      return false;
    }
  } while (back.seq != seq);
  return true;
}

// Waits until the writer sees its reader (discovery), up to 10 s.
void waitMatched(const Ends& e) {
  for (int i = 0; i < 1000; ++i) {
    dds_publication_matched_status_t st{};
    dds_get_publication_matched_status(e.writer, &st);
    dds_subscription_matched_status_t rs{};
    dds_get_subscription_matched_status(e.reader, &rs);
    if (st.current_count > 0 && rs.current_count > 0) return;
    usleep(10000);
  }
  std::fprintf(stderr, "dds-pingpong: the other process was not discovered within 10 s\n");
  std::exit(1);
}

int pong() {
  Ends e = openEnds("tactus_bench_pong", "tactus_bench_ping");
  waitMatched(e);
  tactus_dds_Ping p{};
  while (takeOne(e, p, DDS_SECS(5))) {
    const std::int64_t now = nowNs();
    // Paced pings carry their write time: echo the one-way latency, then stamp the echo.
    p.forwardNs = p.sentNs != 0 ? static_cast<std::uint64_t>(now - static_cast<std::int64_t>(p.sentNs)) : 0;
    if (p.sentNs != 0) p.sentNs = static_cast<std::uint64_t>(nowNs());
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    if (p.seq == UINT64_MAX) break;
  }
  dds_delete(e.participant);
  return 0;
}

std::int64_t percentile(std::vector<std::int64_t> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  // Loopback only: the shipped configuration, whatever the environment says (nothing may leave
  // loopback on these machines).
  setenv("CYCLONEDDS_URI", "file://" TACTUS_SOURCE_ROOT "/samples/multisoc/loopback.xml", 1);
  if (argc > 1 && std::string(argv[1]) == "pong") return pong();
  long iterations = 10000;
  long periodUs = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--period-us" && i + 1 < argc) {
      periodUs = std::strtol(argv[++i], nullptr, 10);
    } else {
      iterations = std::strtol(argv[i], nullptr, 10);
    }
  }
  if (iterations < 100 || iterations > 10000000 || periodUs < 100 || periodUs > 1000000) {
    std::fprintf(stderr, "usage: dds-pingpong [ITERATIONS 100..10000000] [--period-us 100..1000000]\n");
    return 2;
  }
  pid_t child = fork();
  if (child == 0) {
    execl("/proc/self/exe", argv[0], "pong", static_cast<char*>(nullptr));
    _exit(127);
  }
  Ends e = openEnds("tactus_bench_ping", "tactus_bench_pong");
  waitMatched(e);
  std::vector<std::int64_t> half;
  half.reserve(static_cast<std::size_t>(iterations));
  tactus_dds_Ping p{};
  p.id = 1;
  const long warmup = 200;
  for (long i = 0; i < iterations + warmup; ++i) {
    p.seq = static_cast<std::uint64_t>(i);
    std::int64_t t0 = nowNs();
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    tactus_dds_Ping back{};
    if (!awaitEcho(e, p.seq, back, child)) return 1;
    if (i >= warmup) half.push_back((nowNs() - t0) / 2);
  }
  // Paced: one ping per period, each way timed from the writer's stamp to the take.
  std::vector<std::int64_t> oneWay;
  oneWay.reserve(2 * static_cast<std::size_t>(iterations));
  const std::int64_t periodNs = periodUs * 1000;
  std::int64_t next = nowNs() + periodNs;
  for (long i = 0; i < iterations + warmup; ++i, next += periodNs) {
    const timespec at{static_cast<time_t>(next / 1000000000), static_cast<long>(next % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {}
    p.seq = static_cast<std::uint64_t>(iterations + warmup + i);
    p.sentNs = static_cast<std::uint64_t>(nowNs());
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    tactus_dds_Ping back{};
    if (!awaitEcho(e, p.seq, back, child)) return 1;
    const std::int64_t now = nowNs();
    if (i >= warmup) {
      oneWay.push_back(static_cast<std::int64_t>(back.forwardNs));
      oneWay.push_back(now - static_cast<std::int64_t>(back.sentNs));
    }
  }
  p.seq = UINT64_MAX;
  p.sentNs = 0;
  dds_write(e.writer, &p);
  int status = 0;
  waitpid(child, &status, 0);
  dds_delete(e.participant);
  std::printf("dds ping-pong (reliable keyed topic, two processes, loopback), %ld iterations\n", iterations);
  auto us = [&](double p) { return static_cast<double>(percentile(half, p)) / 1e3; };
  std::printf("  one way (round trip / 2): p50 %.1f us  p99 %.1f us  max %.1f us\n", us(0.5), us(0.99), us(1.0));
  auto paced = [&](double q) { return static_cast<double>(percentile(oneWay, q)) / 1e3; };
  std::printf(
      "  one way, paced (%ld us period, write stamp to take, both ways): p50 %.1f us  p99 %.1f us  max %.1f us\n",
      periodUs, paced(0.5), paced(0.99), paced(1.0));
  return 0;
}
