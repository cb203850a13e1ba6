// tactus-top --metrics: Prometheus's text exposition of the statistics block (top_metrics.hpp).
#include "top_metrics.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string_view>

#include "tactus/core/text.hpp"

namespace tactus::top {
namespace {

// A label value escaped as the format wants (backslash, quote, newline).
std::string escaped(std::string_view v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

// The metrics text, one family at a time: HELP and TYPE once, then every sample.
class Exposition {
 public:
  void family(const std::string& name, const char* type, const char* help) {
    text_ += "# HELP tactus_" + name + " " + help + "\n# TYPE tactus_" + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, double value) {
    char v[40];
    std::snprintf(v, sizeof v, "%.17g", value);
    text_ += "tactus_" + name + "{" + labels + "} " + v + "\n";
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

std::string label(const char* key, std::string_view value) { return std::string(key) + "=\"" + escaped(value) + "\""; }
double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

// One metric family over rows of one kind: its name, type, help and the value of a row.
template <typename Row>
struct Metric {
  const char* name;
  const char* type;
  const char* help;
  double (*value)(const Row&);
};

// Writes each family of `metrics` whole (HELP, TYPE, then every sample: the text format wants a
// family's lines in one group); `eachRow(emit)` calls emit(labels, row) for every row.
template <typename Row, std::size_t N, typename EachRow>
void writeFamilies(Exposition& e, const Metric<Row> (&metrics)[N], EachRow&& eachRow) {
  for (const Metric<Row>& m : metrics) {
    e.family(m.name, m.type, m.help);
    eachRow([&](const std::string& labels, const Row& row) { e.sample(m.name, labels, m.value(row)); });
  }
}

std::string scheduleLabels(const Snapshot& snap, const ScheduleView& s) {
  return label("tactus_instance", snap.instance) + "," + label("schedule", std::to_string(s.identifier));
}

void runnableMetrics(Exposition& e, const Snapshot& snap) {
  static const Metric<RunnableRow> kMetrics[] = {
      {"runs_total", "counter", "Runs of the runnable (the master's drain of the event log).",
       [](const RunnableRow& r) { return static_cast<double>(r.stats.count); }},
      {"overruns_total", "counter", "Runs of the runnable longer than WCET + EndMonitorThreshold.",
       [](const RunnableRow& r) { return static_cast<double>(r.stats.overruns); }},
      {"run_duration_seconds_sum", "counter", "Total run time of the runnable.",
       [](const RunnableRow& r) { return seconds(r.stats.totalNs); }},
      {"run_duration_median_seconds", "gauge", "Median duration of the runnable's latest 32 runs.",
       [](const RunnableRow& r) { return seconds(r.stats.medianNs); }},
      {"run_duration_max_seconds", "gauge", "Longest run of the runnable.",
       [](const RunnableRow& r) { return seconds(r.stats.maxNs); }},
      {"run_duration_last_seconds", "gauge", "Duration of the runnable's latest run.",
       [](const RunnableRow& r) { return seconds(r.stats.lastNs); }},
      {"runnable_wcet_seconds", "gauge", "The runnable's WCET in the schedule.",
       [](const RunnableRow& r) { return seconds(r.wcetNs); }},
  };
  writeFamilies(e, kMetrics, [&](auto&& emit) {
    for (const ScheduleView& s : snap.schedules)
      for (const RunnableRow& r : s.runnables)
        emit(scheduleLabels(snap, s) + "," + label("client", r.client) + "," + label("runnable", r.name), r);
  });
}

void hyperepochMetrics(Exposition& e, const Snapshot& snap) {
  static const Metric<HyperepochRow> kMetrics[] = {
      {"frames_released_total", "counter", "Frames the master released in the hyperepoch.",
       [](const HyperepochRow& h) { return static_cast<double>(h.stats.releases); }},
      {"iterations_completed_total", "counter", "Hyperepoch iterations fully completed.",
       [](const HyperepochRow& h) { return static_cast<double>(h.completed); }},
      {"skipped_periods_total", "counter", "Periods skipped after an iteration overran.",
       [](const HyperepochRow& h) { return static_cast<double>(h.skipped); }},
      {"late_iterations_total", "counter", "Iterations that started late (the previous one overran).",
       [](const HyperepochRow& h) { return static_cast<double>(h.stats.lateIterations); }},
      {"late_frames_total", "counter", "Frames not finished at their epoch's next release.",
       [](const HyperepochRow& h) { return static_cast<double>(h.stats.lateFrames); }},
      {"release_lateness_seconds_sum", "counter", "Sum of the releases' lateness (actual - ideal).",
       [](const HyperepochRow& h) { return seconds(h.stats.totalJitterNs); }},
      {"release_lateness_max_seconds", "gauge", "Latest release's largest lateness so far.",
       [](const HyperepochRow& h) { return seconds(h.stats.maxJitterNs); }},
      {"release_lateness_last_seconds", "gauge", "Lateness of the latest release.",
       [](const HyperepochRow& h) { return seconds(h.stats.lastJitterNs); }},
      {"hyperepoch_period_seconds", "gauge", "The hyperepoch's period.",
       [](const HyperepochRow& h) { return seconds(h.periodNs); }},
  };
  writeFamilies(e, kMetrics, [&](auto&& emit) {
    for (const ScheduleView& s : snap.schedules)
      for (const HyperepochRow& h : s.hyperepochs) emit(scheduleLabels(snap, s) + "," + label("hyperepoch", h.name), h);
  });
}

// Chain reaction and age, each family whole (only chains the master measures).
void chainMetrics(Exposition& e, const Snapshot& snap) {
  static const Metric<ChainRow> kMetrics[] = {
      {"chain_reactions_total", "counter", "Chain occurrences measured by the master.",
       [](const ChainRow& c) { return static_cast<double>(c.stats.reaction.count); }},
      {"chain_reaction_last_seconds", "gauge", "The chain's latest measured reaction.",
       [](const ChainRow& c) { return seconds(c.stats.reaction.lastNs); }},
      {"chain_reaction_max_seconds", "gauge", "The chain's worst measured reaction.",
       [](const ChainRow& c) { return seconds(c.stats.reaction.maxNs); }},
      {"chain_reaction_planned_seconds", "gauge", "The chain's planned reaction bound (allowance included).",
       [](const ChainRow& c) { return seconds(c.plannedReactionNs); }},
      {"chain_reaction_over_planned_total", "counter", "Occurrences whose reaction is over the planned bound.",
       [](const ChainRow& c) { return static_cast<double>(c.stats.reaction.overPlanned); }},
      {"chain_ages_total", "counter", "Chain occurrences whose age the master measured.",
       [](const ChainRow& c) { return static_cast<double>(c.stats.age.count); }},
      {"chain_age_last_seconds", "gauge", "The chain's latest measured age.",
       [](const ChainRow& c) { return seconds(c.stats.age.lastNs); }},
      {"chain_age_max_seconds", "gauge", "The chain's worst measured age.",
       [](const ChainRow& c) { return seconds(c.stats.age.maxNs); }},
      {"chain_age_planned_seconds", "gauge", "The chain's planned age bound (allowance included).",
       [](const ChainRow& c) { return seconds(c.plannedAgeNs); }},
      {"chain_age_over_planned_total", "counter", "Occurrences whose age is over the planned bound.",
       [](const ChainRow& c) { return static_cast<double>(c.stats.age.overPlanned); }},
  };
  writeFamilies(e, kMetrics, [&](auto&& emit) {
    for (const ScheduleView& s : snap.schedules)
      for (const ChainRow& c : s.chains)
        if (c.measured) emit(scheduleLabels(snap, s) + "," + label("chain", c.name), c);
  });
}

}  // namespace

std::string renderMetrics(const Snapshot& snap) {
  Exposition e;
  const std::string inst = label("tactus_instance", snap.instance);
  e.family("schedule_info", "gauge", "Each schedule of the instance (1), with its name and state.");
  for (const ScheduleView& s : snap.schedules)
    e.sample("schedule_info",
             inst + "," + label("schedule", std::to_string(s.identifier)) + "," + label("name", s.name) + "," +
                 label("state", s.state),
             1);
  e.family("running_schedule", "gauge", "Identifier of the running schedule (-1: none runs).");
  std::int64_t running = -1;
  if (snap.managed) running = snap.managedRunning ? static_cast<std::int64_t>(*snap.managedRunning) : -1;
  else if (!snap.schedules.empty() && snap.schedules[0].state == "running") running = snap.schedules[0].identifier;
  e.sample("running_schedule", inst, static_cast<double>(running));
  e.family("client_state", "gauge", "Each client's state (1 for the state it is in).");
  for (const ScheduleView& s : snap.schedules)
    for (const ClientRow& c : s.clients)
      e.sample("client_state",
               inst + "," + label("schedule", std::to_string(s.identifier)) + "," + label("client", c.name) + "," +
                   label("state", c.state),
               1);
  hyperepochMetrics(e, snap);
  runnableMetrics(e, snap);
  chainMetrics(e, snap);
  e.family("schedule_switches_total", "counter", "Schedule switches of the instance.");
  e.sample("schedule_switches_total", inst, static_cast<double>(snap.switches.size()));
  return e.take();
}

Result<MetricsAddress> parseMetricsAddress(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  const auto bad = [&](const std::string& why) {
    return fail(ErrorCode::kBadParameter,
                "--metrics " + quoted(text) + ": " + why + " (ADDR:PORT, e.g. 127.0.0.1:9464)");
  };
  if (colon == std::string::npos || colon == 0) return bad("no address");
  MetricsAddress a;
  a.host = text.substr(0, colon);
  if (a.host == "localhost") a.host = "127.0.0.1";
  in_addr probe{};
  if (::inet_pton(AF_INET, a.host.c_str(), &probe) != 1) return bad("not an IPv4 address");
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) return bad("the port is not 0..65535");
  a.port = static_cast<std::uint16_t>(p);
  return a;
}

namespace {

void sendAll(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

// Answers one connection: reads the request line (a short wait), then the metrics or an error.
// Returns false when the run has ended (the answer was a 503 for a run that was shown).
bool answer(int fd, const std::string& instance, bool& shown) {
  std::string request;
  char buf[2048];
  pollfd p{fd, POLLIN, 0};
  while (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos &&
         request.size() < 16384 && ::poll(&p, 1, 2000) > 0) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    request.append(buf, static_cast<std::size_t>(n));
  }
  const auto respond = [&](const char* status, const char* type, const std::string& body) {
    sendAll(fd, std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  };
  if (request.rfind("GET /metrics ", 0) != 0 && request.rfind("GET / ", 0) != 0) {
    respond("404 Not Found", "text/plain", "tactus-top serves GET /metrics\n");
    return true;
  }
  auto snap = takeSnapshot(instance);
  if (!snap) {
    respond("503 Service Unavailable", "text/plain", snap.error().message + "\n");
    return !(shown && snap.error().code == ErrorCode::kNotFound);
  }
  shown = true;
  respond("200 OK", "text/plain; version=0.0.4; charset=utf-8", renderMetrics(*snap));
  return true;
}

}  // namespace

int serveMetrics(const std::string& instance, const MetricsAddress& address, std::ostream& out, std::ostream& err) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const auto failed = [&](const char* what) {
    err << "tactus-top: --metrics " << address.host << ":" << address.port << ": " << what << ": "
        << std::strerror(errno) << "\n";
    if (fd >= 0) ::close(fd);
    return 1;
  };
  if (fd < 0) return failed("socket");
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(address.port);
  (void)::inet_pton(AF_INET, address.host.c_str(), &sa.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return failed("cannot listen there");
  if (::listen(fd, 16) != 0) return failed("listen");
  socklen_t len = sizeof sa;
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  out << "tactus-top: serving metrics of " << instance << " on http://" << address.host << ":" << ntohs(sa.sin_port)
      << "/metrics\n"
      << std::flush;
  bool shown = false;
  for (;;) {
    // Between scrapes, once a second: a run that was seen and is gone ends the server.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) == 0) {
      auto snap = takeSnapshot(instance);
      if (snap) shown = true;
      else if (shown && snap.error().code == ErrorCode::kNotFound) break;
      continue;
    }
    const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return failed("accept");
    }
    const bool goOn = answer(c, instance, shown);
    ::close(c);
    if (!goOn) break;
  }
  out << "tactus-top: the run of instance " << instance << " ended\n";
  ::close(fd);
  return 0;
}

}  // namespace tactus::top
