// tactus-top --metrics ADDR:PORT: the statistics block of a running instance as Prometheus
// metrics over HTTP (text exposition format 0.0.4), read through tactus-top's read-only snapshot
// at the idle scheduling class; nothing runs in the master. A small exposition of its own rather
// than libprometheus-cpp: every scrape renders one fresh snapshot (no registry to keep in step
// with the block), one thread, no civetweb, and nothing more to install (docs/guide/prometheus.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "top.hpp"

namespace tactus::top {

/// The snapshot in Prometheus's text format: every metric prefixed `tactus_`, labelled with the
/// instance as `tactus_instance` (Prometheus keeps `instance` for the scrape target) and the schedule (and the
/// runnable, hyperepoch, client, chain or channel); times in seconds (Prometheus's base unit).
std::string renderMetrics(const Snapshot& snapshot);

/// Where --metrics listens: an IPv4 address (dotted, or `localhost`) and a port (0: any free one).
struct MetricsAddress {
  std::string host;
  std::uint16_t port = 0;
};

/// Parses `ADDR:PORT`; kBadParameter naming the value.
Result<MetricsAddress> parseMetricsAddress(const std::string& text);

/// Serves `GET /metrics` (and `/`) on `address` until the run ends (0) or the socket fails (1):
/// each request takes a fresh snapshot of `instance`; 503 with the reason while none can be read.
/// Prints `tactus-top: serving metrics of INSTANCE on http://ADDR:PORT/metrics` on `out` once
/// listening (the port the kernel chose for port 0).
int serveMetrics(const std::string& instance, const MetricsAddress& address, std::ostream& out, std::ostream& err);

}  // namespace tactus::top
