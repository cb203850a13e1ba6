// The schedule file: a versioned, line-oriented text form of a Schedule, with a content hash.
//
// Layout (format version 1), one record per line, fields `key=value`, lists comma-separated:
//
//   tactus-schedule 1
//   schedule name=Drive identifier=101 source_hash=0123456789abcdef
//   client id=0 name=Client0
//   resource id=0 name=CPU0 type=CPU kind=cpu client=- hyperepoch=0 core=0 device=- stream_limit=-
//   hyperepoch id=0 name=Perception period_ns=100000000 monitor_ns=- resources=0,1 epochs=0
//   epoch id=0 name=Camera hyperepoch=0 period_ns=33330000 frames=3
//   runnable id=0 name=ReadCamera client=0 epoch=0 kind=cpu wcet_ns=10000 start_ns=0 deadline_ns=-
//            end_monitor_ns=- priority=10 deps= submits=- submitted_by=- alias_group=- steps=
//   instance id=0 runnable=0 frame=0 start_ns=0 end_ns=10000 resources=0 deps=
//   timeline resource=0 instances=0,3,5
//   content_hash 89abcdef01234567
//
// (the runnable record is one line in the file). Records appear in this order and ids count up
// from 0 in each kind. `-` is an absent value. The content hash covers every byte before the
// `content_hash` line. Names contain no white space, `,`, `=` or `#`.
//
// Format version 2 is written for multi-SoC schedules only (a schedule of one machine is still
// written as version 1, byte for byte as before): the schedule record ends with
// `cross_soc_latency_ns=N` (the default transfer time), `soc id=0 name=SocA` records follow it,
// and client and resource records end with `soc=K` (`-` for none). Format version 3 is version 2
// plus one `soc_latency from=0 to=1 latency_ns=N` record per SoC pair the graph gives a transfer
// time of its own (after the soc records; ascending by from, then to; two different SoCs; each pair
// once); it is written only when the graph gives such a pair, so a version-2 reader refuses it by
// its version rather than by an unknown record. Format version 4 is version 3 (its fields present
// even in a schedule of one machine) for schedules with GPU work (a submitter), planned with STM's
// stream semantics: a CUDA stream's timeline holds its submitters only (the stream serialises the
// submissions) and a submittee holds its device, not the stream, running in its stream's
// submission order. A file of an older version with GPU work is refused by its version: its work
// held the stream for its whole run, a plan this build no longer makes; recompile the graph.
// Format version 5 is version 4 for schedules with DLA or VPU (PVA) engines: resource kinds `dla`,
// `vpu`, `dla_handle` and `pva_stream` (engine queues mapped to an engine of their kind with
// `device=`), planned as version 4 plans a GPU and its CUDA streams. It is written only when a
// schedule has such a resource (all others are written as before, byte for byte), so a version-4
// reader refuses it by its version rather than by an unknown kind.
// Format version 6 is version 5 (the fields of version 2 present even in a schedule of one
// machine) for schedules with channels or chains (tactus extension), which end, after the
// timelines, with their records:
//
//   channel id=0 name=Frame size=4096 writer=3 readers=5,7 writes=2 depth=2
//   channel_write channel=0 instance=12 slot=0 waits=15,18
//   channel_read channel=0 instance=20 writer=12 previous=0 slot=0
//   chain id=0 name=CamToBrake runnables=3,5,9 max_reaction_ns=- max_age_ns=50000000
//         hop_allowance_ns=100000 reaction_ns=41300000 age_ns=47200000
//
// A channel: its buffer's size in bytes, its writer and readers (runnable ids, readers
// ascending), the writer's runs per hyperepoch iteration and its ring depth. A channel_write per
// writer instance (by channel, then instance): the buffer it fills in iteration 0 (in iteration
// h: (slot + h * writes) mod depth) and the reader instances of the same iteration it waits for.
// A channel_read per reader instance (by channel, then instance): the writer instance whose
// version it reads, of the previous iteration when previous=1 (none in the first iteration),
// and that version's buffer in the writer's iteration 0. A chain: its runnables, its
// requirements and its planned bounds (allowance included). It is written only when a graph has
// channels or chains (every other schedule is written as before, byte for byte), so a version-5
// reader refuses it by its version; a file of an older version holding these records is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tactus/core/result.hpp"
#include "tactus/core/schedule.hpp"

namespace tactus {

/// The newest format version this build writes and reads (schedules with channels or chains).
inline constexpr std::uint32_t kScheduleFormatVersion = 6;
/// The version written for schedules with channels or chains: the oldest that holds them.
inline constexpr std::uint32_t kScheduleFormatVersionChannels = 6;
/// The version written for schedules with a DLA or VPU (PVA) engine or queue: the oldest that holds them.
inline constexpr std::uint32_t kScheduleFormatVersionEngines = 5;
/// The version written for schedules with GPU work: the oldest that holds GPU work.
inline constexpr std::uint32_t kScheduleFormatVersionGpu = 4;
/// The version written for multi-SoC schedules with a transfer time per SoC pair.
inline constexpr std::uint32_t kScheduleFormatVersionSocLatency = 3;
/// The version written for multi-SoC schedules whose graph gives no SoC pair a time of its own.
inline constexpr std::uint32_t kScheduleFormatVersionMultiSoc = 2;
/// The version written for schedules of one machine (no SoCs); read as well.
inline constexpr std::uint32_t kScheduleFormatVersionOneSoc = 1;

/// The conventional file extension of schedule files.
inline constexpr const char* kScheduleFileExtension = ".tsched";

/// Writes a schedule in the file format. Same schedule, same bytes.
std::string writeSchedule(const Schedule& schedule);

/// Reads a schedule file's text; `origin` names it in messages (`drive.tsched:12: ...`).
/// Checks syntax, record order, the format version and the content hash; index ranges and
/// scheduling invariants are checked by verifySchedule.
/// `contentHash`, when given, receives the checked content hash (no need to rewrite the schedule
/// to learn it).
Result<Schedule> readSchedule(std::string_view text, const std::string& origin, std::uint64_t* contentHash = nullptr);

/// The largest schedule file loadScheduleFile reads (a million runnables take about 0.5 GB).
inline constexpr std::uint64_t kMaxScheduleFileBytes = 8ULL << 30;

/// Reads a schedule file from disk (a regular file).
Result<Schedule> loadScheduleFile(const std::string& path);

/// Writes the file atomically (temporary file, then rename); returns the content hash it wrote.
Result<std::uint64_t> saveScheduleFile(const Schedule& schedule, const std::string& path);

/// The content hash a schedule would have in its file.
std::uint64_t scheduleContentHash(const Schedule& schedule);

}  // namespace tactus
