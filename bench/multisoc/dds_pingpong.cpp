// The bare Cyclone DDS round trip between two processes (reliable keyed topic, loopback only): the
// yardstick the cross-SoC hand-off of tactus-master is measured against. Two measurements, one
// after the other:
//   back to back  each ping written as soon as the previous echo came; p50/p99 of round trip / 2
//   paced         one ping per period (both processes sleep in between, as a run's masters and
//                 workers do between frames), each way timed on its own: receive time - the
//                 writer's stamp in the sample (one host, one CLOCK_MONOTONIC), as the run's
//                 hand-off is (a successor's start - its predecessor's end); both ways pooled;
//                 received by a thread woken by a waitset (take), as a plain DDS application does
//   listener      the same pace and stamps on topics of their own, received by a data-available
//                 listener on Cyclone's receiving thread (the pong echoes from it): the earliest
//                 an application can see a sample, and how tactus-master receives ends
//
//   dds-pingpong [ITERATIONS] [--period-us P]   (default 10000 and 1000; starts its own pong process)
#include <dds/dds.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "soc_topics.h"

using tactus::bench::monotonicNs;
using tactus::bench::percentileUs;

namespace {

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

// A reliable reader and writer pair for the listener measurement (no waitset).
struct ListenerEnds {
  dds_entity_t writer = 0, reader = 0;
};

ListenerEnds openListenerEnds(dds_entity_t participant, const char* out, const char* in, dds_listener_t* listener) {
  ListenerEnds e;
  dds_qos_t* qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 16);
  dds_entity_t tout = check(dds_create_topic(participant, &tactus_dds_Ping_desc, out, qos, nullptr), "topic");
  dds_entity_t tin = check(dds_create_topic(participant, &tactus_dds_Ping_desc, in, qos, nullptr), "topic");
  e.writer = check(dds_create_writer(participant, tout, qos, nullptr), "writer");
  e.reader = check(dds_create_reader(participant, tin, qos, listener), "reader");
  dds_delete_qos(qos);
  return e;
}

// Takes every waiting sample of `reader` and calls `each(sample, now)` for each valid one.
template <typename Each>
void takeAllPings(dds_entity_t reader, Each&& each) {
  for (;;) {
    tactus_dds_Ping buf[16];
    void* samples[16];
    dds_sample_info_t info[16];
    for (int k = 0; k < 16; ++k) samples[k] = &buf[k];
    const dds_return_t n = dds_take(reader, samples, info, 16, 16);
    const std::int64_t now = monotonicNs();
    for (int k = 0; k < n; ++k)
      if (info[k].valid_data) each(buf[k], now);
    if (n < 16) return;
  }
}

// The pong's listener side: echoes each ping from Cyclone's receiving thread, carrying the ping's
// one-way latency and its own write stamp.
struct ListenerPong {
  ListenerEnds ends;
  std::atomic<std::int64_t> lastNs{0};  // when the last ping came (keeps the pong alive meanwhile)
};

void echoFromListener(dds_entity_t reader, void* arg) {
  auto* pong = static_cast<ListenerPong*>(arg);
  takeAllPings(reader, [&](tactus_dds_Ping p, std::int64_t now) {
    p.forwardNs = static_cast<std::uint64_t>(now - static_cast<std::int64_t>(p.sentNs));
    p.sentNs = static_cast<std::uint64_t>(monotonicNs());
    (void)dds_write(pong->ends.writer, &p);
    pong->lastNs.store(now);
  });
}

int pong() {
  Ends e = openEnds("tactus_bench_pong", "tactus_bench_ping");
  ListenerPong listened;
  dds_listener_t* listener = dds_create_listener(&listened);
  dds_lset_data_available(listener, &echoFromListener);
  listened.ends = openListenerEnds(e.participant, "tactus_bench_lpong", "tactus_bench_lping", nullptr);
  check(dds_set_listener(listened.ends.reader, listener), "set listener");
  waitMatched(e);
  tactus_dds_Ping p{};
  for (;;) {
    if (!takeOne(e, p, DDS_SECS(5))) {
      if (monotonicNs() - listened.lastNs.load() < 5'000'000'000) continue;  // the listener phase runs
      break;
    }
    const std::int64_t now = monotonicNs();
    // Paced pings carry their write time: echo the one-way latency, then stamp the echo.
    p.forwardNs = p.sentNs != 0 ? static_cast<std::uint64_t>(now - static_cast<std::int64_t>(p.sentNs)) : 0;
    if (p.sentNs != 0) p.sentNs = static_cast<std::uint64_t>(monotonicNs());
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    if (p.seq == UINT64_MAX) break;
  }
  (void)dds_set_listener(listened.ends.reader, nullptr);
  dds_delete_listener(listener);
  dds_delete(e.participant);
  return 0;
}

// The ping's listener side: records each echo's two one-way latencies by its sequence number.
struct ListenerPing {
  ListenerEnds ends;
  std::vector<std::int64_t> forward, back;  // by seq; written by the listener, read once `got` says so
  std::atomic<long> got{0};
};

void recordFromListener(dds_entity_t reader, void* arg) {
  auto* ping = static_cast<ListenerPing*>(arg);
  takeAllPings(reader, [&](const tactus_dds_Ping& p, std::int64_t now) {
    if (p.seq >= ping->forward.size()) return;
    ping->forward[p.seq] = static_cast<std::int64_t>(p.forwardNs);
    ping->back[p.seq] = now - static_cast<std::int64_t>(p.sentNs);
    ping->got.fetch_add(1, std::memory_order_release);
  });
}

// Writes one ping per period from now on, `count` of them, stamping each; `write` sends it.
template <typename Write>
void pacedPings(long count, std::int64_t periodNs, Write&& write) {
  std::int64_t next = monotonicNs() + periodNs;
  for (long i = 0; i < count; ++i, next += periodNs) {
    const timespec at{static_cast<time_t>(next / 1000000000), static_cast<long>(next % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {}
    if (!write(i)) return;
  }
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
    std::int64_t t0 = monotonicNs();
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    tactus_dds_Ping back{};
    if (!awaitEcho(e, p.seq, back, child)) return 1;
    if (i >= warmup) half.push_back((monotonicNs() - t0) / 2);
  }
  // Paced: one ping per period, each way timed from the writer's stamp to the take.
  std::vector<std::int64_t> oneWay;
  oneWay.reserve(2 * static_cast<std::size_t>(iterations));
  const std::int64_t periodNs = periodUs * 1000;
  bool answered = true;
  pacedPings(iterations + warmup, periodNs, [&](long i) {
    p.seq = static_cast<std::uint64_t>(iterations + warmup + i);
    p.sentNs = static_cast<std::uint64_t>(monotonicNs());
    dds_return_t rc = dds_write(e.writer, &p);
    if (rc < 0) die("write", rc);
    tactus_dds_Ping back{};
    if (!awaitEcho(e, p.seq, back, child)) return answered = false;
    const std::int64_t now = monotonicNs();
    if (i >= warmup) {
      oneWay.push_back(static_cast<std::int64_t>(back.forwardNs));
      oneWay.push_back(now - static_cast<std::int64_t>(back.sentNs));
    }
    return true;
  });
  if (!answered) return 1;
  // Listener: the same pace on topics of their own, both sides receiving on Cyclone's thread.
  const auto total = static_cast<std::size_t>(iterations + warmup);
  ListenerPing listened;
  listened.forward.assign(total, 0);
  listened.back.assign(total, 0);
  dds_listener_t* listener = dds_create_listener(&listened);
  dds_lset_data_available(listener, &recordFromListener);
  listened.ends = openListenerEnds(e.participant, "tactus_bench_lping", "tactus_bench_lpong", listener);
  for (int i = 0; i < 1000; ++i) {  // matched both ways (discovery of the new topics)
    dds_publication_matched_status_t st{};
    dds_get_publication_matched_status(listened.ends.writer, &st);
    dds_subscription_matched_status_t rs{};
    dds_get_subscription_matched_status(listened.ends.reader, &rs);
    if (st.current_count > 0 && rs.current_count > 0) break;
    usleep(10000);
  }
  pacedPings(iterations + warmup, periodNs, [&](long i) {
    tactus_dds_Ping lp{};
    lp.id = 2;
    lp.seq = static_cast<std::uint64_t>(i);
    lp.sentNs = static_cast<std::uint64_t>(monotonicNs());
    dds_return_t rc = dds_write(listened.ends.writer, &lp);
    if (rc < 0) die("write", rc);
    return true;
  });
  for (int i = 0; i < 500 && listened.got.load(std::memory_order_acquire) < static_cast<long>(total); ++i)
    usleep(10000);
  (void)dds_set_listener(listened.ends.reader, nullptr);  // waits for a call in progress
  dds_delete_listener(listener);
  std::vector<std::int64_t> viaListener;
  for (std::size_t i = static_cast<std::size_t>(warmup); i < total; ++i) {
    if (listened.back[i] == 0) continue;  // no echo (counted below)
    viaListener.push_back(listened.forward[i]);
    viaListener.push_back(listened.back[i]);
  }
  const long lost = static_cast<long>(total) - listened.got.load();
  p.seq = UINT64_MAX;
  p.sentNs = 0;
  dds_write(e.writer, &p);
  int status = 0;
  waitpid(child, &status, 0);
  dds_delete(e.participant);
  std::printf("dds ping-pong (reliable keyed topic, two processes, loopback), %ld iterations\n", iterations);
  auto us = [&](double p) { return percentileUs(half, p); };
  std::printf("  one way (round trip / 2): p50 %.1f us  p99 %.1f us  max %.1f us\n", us(0.5), us(0.99), us(1.0));
  auto paced = [&](double q) { return percentileUs(oneWay, q); };
  std::printf(
      "  one way, paced (%ld us period, write stamp to take, both ways): p50 %.1f us  p99 %.1f us  max %.1f us\n",
      periodUs, paced(0.5), paced(0.99), paced(1.0));
  if (viaListener.empty() || lost > 0) {
    std::fprintf(stderr, "dds-pingpong: %ld of %zu listener pings got no echo\n", lost, total);
    return 1;
  }
  auto heard = [&](double q) { return percentileUs(viaListener, q); };
  std::printf(
      "  one way, paced, listener (%ld us period, write stamp to the listener's call, both ways): p50 %.1f us  p99 "
      "%.1f us  max %.1f us\n",
      periodUs, heard(0.5), heard(0.99), heard(1.0));
  return 0;
}
