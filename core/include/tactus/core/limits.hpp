// The limits every reader of outside input shares: the compiler (YAML graph, WCET file), the
// schedule reader, the verifier, the master's run plan and tactus-report (event log). One copy of
// each bound, so a file one tool accepts is never one another tool cannot hold.
//
// The bounds are chosen so that sums the tools form stay far inside 64-bit arithmetic:
// kMaxInstancesTotal * kMaxDurationNs = 2^22 * 10^12 ~ 4.2e18 < INT64_MAX ~ 9.2e18, so a sum of
// every WCET or every planned time of a schedule cannot overflow.
#pragma once

#include <cstdint>

namespace tactus::limits {

/// Longest duration anywhere in a graph or schedule: a period, WCET, StartTime, Deadline, Monitor
/// or EndMonitorThreshold (1,000 s).
inline constexpr std::int64_t kMaxDurationNs = 1'000'000'000'000;
/// Most frames one epoch releases per hyperepoch iteration.
inline constexpr std::uint32_t kMaxFramesPerEpoch = 1u << 16;
/// Most epoch frames in one schedule, summed over every epoch (bounds the run plan's and the
/// report's per-frame tables).
inline constexpr std::uint32_t kMaxFramesTotal = 1u << 22;
/// Most runnables in one graph or schedule.
inline constexpr std::uint32_t kMaxRunnables = 1u << 21;
/// Most runnable instances (runnables unrolled over their frames) in one hyperepoch.
inline constexpr std::uint32_t kMaxInstancesPerHyperepoch = 1u << 22;
/// Most runnable instances in one schedule, over all hyperepochs.
inline constexpr std::uint32_t kMaxInstancesTotal = 1u << 22;
/// Most clients, resources, hyperepochs and epochs in one graph or schedule (each).
inline constexpr std::uint32_t kMaxClients = 1u << 12;
inline constexpr std::uint32_t kMaxResources = 1u << 16;
inline constexpr std::uint32_t kMaxHyperepochs = 1u << 10;
inline constexpr std::uint32_t kMaxEpochs = 1u << 12;
/// Most SoCs of a multi-SoC graph or schedule (one master each).
inline constexpr std::uint32_t kMaxSocs = 64;
/// Most dependencies of one runnable.
inline constexpr std::uint32_t kMaxDependenciesPerRunnable = 1u << 16;
/// Longest name (client, runnable, resource, hyperepoch, epoch, graph) in bytes.
inline constexpr std::uint32_t kMaxNameBytes = 1024;
/// Most channels and most chains in one graph or schedule (each; tactus extension).
inline constexpr std::uint32_t kMaxChannels = 1u << 16;
inline constexpr std::uint32_t kMaxChains = 1u << 16;
/// Largest buffer of one channel in bytes (its ring holds several).
inline constexpr std::uint64_t kMaxChannelBytes = 1ULL << 32;
/// Most schedules one master loads (-s a,b,... with a schedule manager).
inline constexpr std::uint32_t kMaxSchedules = 16;
/// Earlier event logs the master keeps beside the current one (TACTUS_LOG_KEEP).
inline constexpr std::uint32_t kMaxKeptEventLogs = 1000;
/// Largest event log read from standard input (`tactus-report -`; files are read by their size).
inline constexpr std::uint64_t kMaxEventLogBytes = 8ULL << 30;
/// An event-log timestamp further than this from the run's first record makes that record
/// invalid (about 11.6 days of CLOCK_MONOTONIC).
inline constexpr std::int64_t kMaxLogSpanNs = 1'000'000'000'000'000;
/// Most distinct violations tactus-check's library keeps per worker thread (tactus-check --entries).
inline constexpr std::uint32_t kMaxCheckEntries = 1u << 16;
/// Largest policy file the master reads (tactus-master --policy).
inline constexpr std::uint64_t kMaxPolicyFileBytes = 1ULL << 20;
/// Most rules a policy file may hold.
inline constexpr std::uint32_t kMaxPolicyRules = 256;
/// Largest window N of a policy's overrun rule (one bit per iteration in a 64-bit history).
inline constexpr std::uint32_t kMaxOverrunWindow = 64;
/// Largest count of clean iterations a policy's roll-back rule may wait for.
inline constexpr std::uint64_t kMaxCleanIterations = 1'000'000'000;

static_assert(static_cast<double>(kMaxInstancesTotal) * static_cast<double>(kMaxDurationNs) < 9.0e18,
              "a sum of every duration of a schedule must fit in int64");

}  // namespace tactus::limits
