// Fixtures shared by tactus-report's tests: a two-runnable schedule, the log of a known run of it
// (4 iterations, each released 5 us late), and helpers to build logs in memory and on disk.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis.hpp"
#include "id_list.hpp"
#include "report_command.hpp"
#include "tactus/core/event_log.hpp"
#include "tactus/core/schedule_file.hpp"
#include "test_files.hpp"

using tactus::test::ids;

namespace tactus::report::test {

inline constexpr std::int64_t kMs = 1'000'000, kUs = 1'000, kT0 = 1'000'000'000;

// Two runnables on two cores: A (WCET 1 ms) then B (WCET 2 ms, Deadline 4 ms, EndMonitorThreshold
// 0.5 ms: a run beyond 2.5 ms is an end-monitor violation), one 10 ms epoch.
inline Schedule twoStepSchedule() {
  Schedule s;
  s.name = "TwoStep";
  s.identifier = 5;
  s.clients = {{"Client0"}};
  for (int k = 0; k < 2; ++k) {
    ResourceInfo r;
    r.name = "CPU" + std::to_string(k);
    r.type = "CPU";
    r.hyperepoch = HyperepochId{0};
    r.core = k;
    s.resources.push_back(r);
  }
  HyperepochInfo h;
  h.name = "Main";
  h.periodNs = 10 * kMs;
  h.monitorNs = 4 * kMs;
  h.resources = ids<ResourceId>({0, 1});
  h.epochs = ids<EpochId>({0});
  s.hyperepochs = {h};
  s.epochs = {{"Loop", HyperepochId{0}, 10 * kMs, 1}};
  RunnableInfo a;
  a.name = "A";
  a.wcetNs = 1 * kMs;
  RunnableInfo b;
  b.name = "B";
  b.wcetNs = 2 * kMs;
  b.deadlineNs = 4 * kMs;
  b.endMonitorThresholdNs = 500 * kUs;
  b.dependencies = ids<RunnableId>({0});
  s.runnables = {a, b};
  InstanceInfo ia;
  ia.runnable = RunnableId{0};
  ia.startNs = 0;
  ia.endNs = 1 * kMs;
  ia.resources = ids<ResourceId>({0});
  InstanceInfo ib;
  ib.runnable = RunnableId{1};
  ib.startNs = 1 * kMs;
  ib.endNs = 3 * kMs;
  ib.resources = ids<ResourceId>({1});
  ib.dependencies = ids<InstanceId>({0});
  s.instances = {ia, ib};
  s.timelines = {{ResourceId{0}, ids<InstanceId>({0})}, {ResourceId{1}, ids<InstanceId>({1})}};
  return s;
}

// The known run: 4 iterations, each released 5 us late; A then B back to back.
inline const std::vector<std::int64_t> kDurA = {500 * kUs, 800 * kUs, 1000 * kUs, 1500 * kUs};
inline const std::vector<std::int64_t> kDurB = {1000 * kUs, 2000 * kUs, 2000 * kUs, 3000 * kUs};
inline constexpr std::int64_t kLate = 5 * kUs;

inline std::vector<EventRecord> knownRecords() {
  std::vector<EventRecord> r;
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::int64_t ideal = kT0 + static_cast<std::int64_t>(i) * 10 * kMs, rel = ideal + kLate;
    r.push_back({static_cast<std::uint16_t>(EventKind::kRelease), 0, 0, i, 0, ideal, rel});
    r.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 0, i, 0, rel, rel + kDurA[i]});
    r.push_back({static_cast<std::uint16_t>(EventKind::kRun), 0, 1, i, 1, rel + kDurA[i], rel + kDurA[i] + kDurB[i]});
  }
  r.push_back({static_cast<std::uint16_t>(EventKind::kOverrun), 0, 0, 3, 0, kT0 + 40 * kMs, kT0 + 41 * kMs});
  r.push_back({static_cast<std::uint16_t>(EventKind::kSkipped), 0, 0, 3, 2, kT0 + 40 * kMs, kT0 + 60 * kMs});
  r.push_back({static_cast<std::uint16_t>(EventKind::kDropped), 0, 0, 7, 0, kT0, kT0});
  return r;
}

inline LogFile makeLog(const Schedule& s, std::vector<EventRecord> records) {
  LogFile log;
  log.path = "known.tlog";
  log.header = makeEventLogHeader(s.identifier, scheduleContentHash(s));
  log.header.runStartNs = kT0;
  log.records = std::move(records);
  return log;
}

inline std::string tempPath(const std::string& name) {
  static int counter = 0;
  return "/tmp/tactus-report-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name;
}

// The bytes of a version 1 log (32-byte records, before the fields version 2 added) of `records`.
inline std::string v1LogBytes(const Schedule& s, const std::vector<EventRecord>& records) {
  EventLogHeader h = makeEventLogHeader(s.identifier, scheduleContentHash(s));
  h.version = 1;
  h.recordSize = kEventRecordSizeV1;
  h.runStartNs = kT0;
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  for (const EventRecord& r : records) bytes.append(reinterpret_cast<const char*>(&r), kEventRecordSizeV1);
  return bytes;
}

inline std::string writeLogFile(const Schedule& s, const std::vector<EventRecord>& records) {
  std::string path = tempPath("log.tlog");
  EventLogWriter w;
  REQUIRE(w.open(path, s.identifier, scheduleContentHash(s)));
  w.setRunStart(kT0);
  w.append(records.data(), records.size());
  REQUIRE(w.close());
  return path;
}

using tactus::test::readAll;

inline int runCommand(const std::vector<std::string>& args, std::string& out, std::string& err) {
  std::ostringstream o, e;
  const int rc = runReportCommand(args, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

inline std::size_t countOf(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace tactus::report::test
