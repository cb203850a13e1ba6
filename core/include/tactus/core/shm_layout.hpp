// The shared-memory layout of a tactus instance: one segment per instance, written by the master,
// attached by every client. Passive structs only; the logic acting on them lives in master/ and
// client_lib/. All structs are standard-layout, fixed-size, pointer-free and frozen by
// static_assert; bump kLayoutVersion on ANY change.
//
// Publication: everything the master writes before `state` leaves kCreating is published by that
// store (release) and read by clients after their acquire load of `state`; `magic` (release) and
// `masterPid` (release, after `masterStartTime`) are the two words read before that, so both are
// atomics. A process never trusts the geometry it reads here after attach: SegmentView keeps a
// private, validated copy of the counts and offsets, taken once, and every accessor uses only it.
//
//   offset 0               SegmentHeader            (10 cache lines)
//   hyperepochOffset       HyperepochSlot[hyperepochCount]   master writes
//   epochOffset            EpochSlot[epochCount]             master writes (frame release)
//   instanceOffset         InstanceSlot[instanceCount]       the worker running the instance writes
//   clientOffset           ClientSlot[clientCount]           each client writes its own
//   workerOffset           WorkerSlot[workerCount]           ring indices: worker / master
//   ringOffset             EventRecord[workerCount * ringCapacity]  worker writes, master drains
//   gpuOffset              GpuSlot[instanceCount]            the client submitting the instance writes
//   scheduleTextOffset     the schedule file text (scheduleTextSize bytes), master writes once
//   switchOffset           SwitchSlot[hyperepochCount]       schedule switching (master / clients)
//   statsOffset            the statistics block (stats_layout.hpp)  the master's drain writes,
//                          tactus-top and tactus-manager status read
//   channelOffset          the channels' rings (channelBytes bytes; none without channels): per
//                          channel, depth x (ChannelVersion + the buffer), the writer run fills
//                          its version, reader runs read it (zero-copy; channels.hpp maps them)
//
// A master of several schedules (-s a,b -N manager) creates one such segment per schedule: the
// first at the instance's name, schedule k > 0 at scheduleInstanceName(instance, k); the header's
// scheduleCount and scheduleIndex say which. The manager's request channel (ManagerChannel) is a
// segment of its own at managerInstanceName(instance).
//
// Each slot is a whole number of cache lines, and fields written by different processes sit on
// different cache lines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tactus/core/event_log.hpp"
#include "tactus/core/ids.hpp"
#include "tactus/core/result.hpp"
#include "tactus/core/stats_layout.hpp"

namespace tactus {
struct Schedule;
struct RunPlan;
}  // namespace tactus

namespace tactus::shm {

/// "TACTUSHM" as a little-endian integer: the first 8 bytes of every segment.
inline constexpr std::uint64_t kMagic = 0x4d48535554434154ULL;
/// The layout version; a client refuses a segment of another version. Version 12: header flag
/// kFlagUnplannedReleases. Version 11: header flags kFlagReplay (replay_layout.hpp) and
/// kFlagManaged, which change how a client's workers run.
/// Version 10: the statistics block grew its chain and channel tables (statistics version 2).
inline constexpr std::uint32_t kLayoutVersion = 12;
/// The cache line size the layout assumes.
inline constexpr std::size_t kCacheLine = 64;
/// Event records per worker ring (a power of two). 16384 records = 512 KiB per worker: the master
/// drains every few milliseconds, and a worker running 1 us runnables fills 10k per 10 ms.
inline constexpr std::uint32_t kRingCapacity = 16384;
/// Bytes reserved for the stop message in the header.
inline constexpr std::size_t kMessageSize = 256;
/// GPU completion events per submittee, used round-robin by hyperepoch iteration (h % kGpuEventRing),
/// so a record for a later iteration never replaces one a successor still has to wait on.
inline constexpr std::uint32_t kGpuEventRing = 4;
/// Bytes of one inter-process event handle (CUDA's cudaIpcEventHandle_t is 64 bytes).
inline constexpr std::size_t kIpcEventHandleSize = 64;

static_assert(std::atomic<std::uint32_t>::is_always_lock_free && sizeof(std::atomic<std::uint32_t>) == 4);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && sizeof(std::atomic<std::uint64_t>) == 8);
static_assert(std::atomic<std::int64_t>::is_always_lock_free && sizeof(std::atomic<std::int64_t>) == 8);

/// The life of a segment, in the header's `state` word (a futex word; only increases).
enum class SegmentState : std::uint32_t {
  kCreating = 0,   ///< the master is filling the segment; do not read anything else yet
  kPublished = 1,  ///< schedule published; clients may attach and enter
  kRunning = 2,    ///< every client entered; frames are being released
  kFinished = 3,   ///< the run ended normally (see stopReason)
  kAborted = 4,    ///< the run ended because of a failure (see stopReason, stopClient, message)
};

/// Why a run ended, in the header's `stopReason`.
enum class StopReason : std::uint32_t {
  kNone = 0,           ///< still running
  kFrameLimit = 1,     ///< `-e N` iterations done
  kExitRequested = 2,  ///< a client called exitScheduler
  kSignal = 3,         ///< the master got SIGTERM or SIGINT
  kTimeout = 4,        ///< a client did not come within `-t` (stopClient names it)
  kPeerDied = 5,       ///< a client died (stopClient names it)
  kError = 6,          ///< anything else (message says what)
  kStuck = 7,          ///< a client made no progress within its budget (stopClient names it)
  kDamaged = 8,        ///< the segment was truncated, replaced or written with values out of range
};

/// Header flags (`flags`), set by the master from its command line.
enum HeaderFlags : std::uint32_t {
  kFlagAllowUnregistered = 1u << 0,  ///< --allow-unregistered-runnables: missing ones do nothing
  kFlagNoPinning = 1u << 1,          ///< -C: workers are not pinned to cores
  kFlagFreeRunning = 1u << 2,        ///< -m: no skipping after an overrun
  // 1u << 3: kFlagReplay (replay_layout.hpp)
  /// -N: a schedule manager starts and switches the schedules, with one schedule as with several;
  /// a client's workers run only while their hyperepoch is active (the switching worker).
  kFlagManaged = 1u << 4,
  /// --replay-rate other than 1: the master releases frames off the plan's times (the clients'
  /// copy of the schedule is unchanged), so workers wait for releases and predecessors without
  /// the plan's lead (a worker guided by the plan would sleep to the recorded times).
  kFlagUnplannedReleases = 1u << 5,
};

/// The segment header at offset 0.
struct alignas(kCacheLine) SegmentHeader {
  // --- line 0: identity; written once by the master before state leaves kCreating ---
  std::atomic<std::uint64_t> magic;  ///< kMagic; the master stores it (release) once the header is complete
  std::uint32_t layoutVersion;       ///< kLayoutVersion
  std::uint32_t headerSize;          ///< sizeof(SegmentHeader)
  std::uint64_t totalSize;           ///< bytes in the segment
  /// The master's pid; others use it to see a dead master. Stored (release) after masterStartTime,
  /// so a reader that loads a non-zero pid (acquire) reads the start time that belongs to it.
  std::atomic<std::uint32_t> masterPid;
  std::uint32_t flags;  ///< HeaderFlags
  /// The master's start time (/proc stat ticks), against pid reuse; written before masterPid.
  std::atomic<std::uint64_t> masterStartTime;
  std::uint64_t scheduleContentHash;  ///< content hash of the published schedule text
  std::uint16_t scheduleIdentifier;   ///< the schedule's identifier
  std::uint16_t reserved0;
  std::uint32_t ringCapacity;  ///< records per worker ring (kRingCapacity)
  std::uint64_t gpuOffset;     ///< GpuSlot array (one per instance), from the segment start
  // --- line 1: geometry; written once by the master; every offset is from the segment start ---
  std::uint64_t hyperepochOffset;    ///< HyperepochSlot array
  std::uint64_t epochOffset;         ///< EpochSlot array
  std::uint64_t instanceOffset;      ///< InstanceSlot array
  std::uint64_t clientOffset;        ///< ClientSlot array
  std::uint64_t workerOffset;        ///< WorkerSlot array
  std::uint64_t ringOffset;          ///< EventRecord rings
  std::uint64_t scheduleTextOffset;  ///< schedule file text
  std::uint64_t scheduleTextSize;    ///< its length in bytes
  // --- line 2: counts; written once by the master ---
  std::uint32_t hyperepochCount;
  std::uint32_t epochCount;
  std::uint32_t instanceCount;
  std::uint32_t clientCount;
  std::uint32_t workerCount;
  /// Schedules of the instance: 1 for a master of one schedule, N for `-s a,..,n -N manager`.
  std::uint32_t scheduleCount;
  /// This segment's schedule: its position in the master's -s list (0 = the instance's name).
  std::uint32_t scheduleIndex;
  std::uint32_t reserved1[1];
  /// SwitchSlot array (one per hyperepoch), from the segment start.
  std::uint64_t switchOffset;
  /// The statistics block (stats_layout.hpp), from the segment start (layout version 7).
  std::uint64_t statsOffset;
  /// The schedule's runnables: entries of the statistics block (layout version 7).
  std::uint32_t runnableCount;
  std::uint32_t reserved5;
  /// The channels' rings (ChannelVersion headers and buffers), from the segment start (layout version 8).
  std::uint64_t channelOffset;
  // --- line 3: run state; master writes, clients read (state is a futex word) ---
  std::atomic<std::uint32_t> state;         ///< SegmentState
  std::atomic<std::uint32_t> stateWaiters;  ///< clients sleeping on `state`; the master wakes only if > 0
  std::atomic<std::uint32_t> stopReason;    ///< StopReason, valid once state >= kFinished (kSignal sooner: stopping)
  std::atomic<std::uint32_t> stopClient;    ///< ClientId the reason names, or kNone
  std::atomic<std::int64_t> runStartNs;     ///< CLOCK_MONOTONIC ns of the first release
  std::uint8_t reserved2[40];
  // --- line 4: attention; clients write (exit requests), the master sleeps on it ---
  std::atomic<std::uint32_t> attention;  ///< bumped by a client that wants the master to look
  std::uint8_t reserved3[60];
  // --- lines 5-8: stop message; master writes before state >= kFinished ---
  char message[kMessageSize];  ///< NUL-terminated reason in words
  // --- line 9: the channel area's size; pad to 10 lines ---
  std::uint64_t channelBytes;  ///< bytes of the channels' rings (0: the schedule has no channels)
  std::uint8_t reserved4[56];
};
static_assert(sizeof(SegmentHeader) == 10 * kCacheLine);
static_assert(offsetof(SegmentHeader, hyperepochOffset) == 1 * kCacheLine);
static_assert(offsetof(SegmentHeader, hyperepochCount) == 2 * kCacheLine);
static_assert(offsetof(SegmentHeader, state) == 3 * kCacheLine);
static_assert(offsetof(SegmentHeader, attention) == 4 * kCacheLine);
static_assert(offsetof(SegmentHeader, message) == 5 * kCacheLine);
static_assert(offsetof(SegmentHeader, statsOffset) == 2 * kCacheLine + 40);
static_assert(offsetof(SegmentHeader, channelOffset) == 2 * kCacheLine + 56);
static_assert(offsetof(SegmentHeader, channelBytes) == 9 * kCacheLine);
static_assert(offsetof(SegmentHeader, masterPid) == 24 && offsetof(SegmentHeader, masterStartTime) == 32);
/// The byte of its segment a master holds an open-file-description write lock on while it runs
/// (taken right after it creates the segment): the proof of ownership for readers that may not
/// read the master's memory maps (another user's), where a header alone may be forged or copied.
inline constexpr std::size_t kOwnerLockByte = offsetof(SegmentHeader, masterPid);

/// Per hyperepoch; the master writes, workers read.
struct alignas(kCacheLine) HyperepochSlot {
  /// Iterations to run: workers stop before iteration `stopAt`. Starts at `-e N` (or ~0); the
  /// master lowers it only to an iteration none of whose frames has been released.
  std::atomic<std::uint64_t> stopAt;
  /// Iterations fully completed so far (diagnostics).
  std::atomic<std::uint64_t> completed;
  /// Skipped periods so far (skip mode).
  std::atomic<std::uint64_t> skipped;
  std::uint8_t reserved[40];
};
static_assert(sizeof(HyperepochSlot) == kCacheLine);

/// Per epoch: frame release. The master writes, workers read and sleep on `released`.
struct alignas(kCacheLine) EpochSlot {
  /// Frames of this epoch released so far, counted over all iterations (wraps; compare with
  /// sequenceReached). Frame f of iteration h is released once it reaches h * frames + f + 1.
  std::atomic<std::uint32_t> released;
  /// Workers sleeping on `released`; the master issues FUTEX_WAKE only if > 0.
  std::atomic<std::uint32_t> waiters;
  /// Ideal CLOCK_MONOTONIC ns release time of the latest released frame (StartTime counts from
  /// it); written before `released`.
  std::atomic<std::int64_t> releaseNs;
  std::uint8_t reserved[48];
};
static_assert(sizeof(EpochSlot) == kCacheLine);

/// Per instance: completion. The worker that runs the instance writes `done`; successors (any
/// process) and the master read it and sleep on it.
struct alignas(kCacheLine) InstanceSlot {
  /// Hyperepoch iterations of this instance completed (wraps): after iteration h it holds h + 1.
  std::atomic<std::uint32_t> done;
  /// Threads sleeping on `done`; the finishing worker issues FUTEX_WAKE only if > 0.
  std::atomic<std::uint32_t> waiters;
  /// Hyperepoch iterations of this instance begun (wraps): when iteration h starts it holds h + 1;
  /// written after `startedNs`. A CPU worker's successors estimate its end from them.
  std::atomic<std::uint32_t> started;
  std::uint32_t reserved0;
  /// CLOCK_MONOTONIC ns at which the iteration in `started` began.
  std::atomic<std::int64_t> startedNs;
  std::uint8_t reserved[40];
};
static_assert(sizeof(InstanceSlot) == kCacheLine);
static_assert(offsetof(InstanceSlot, started) == 8 && offsetof(InstanceSlot, startedNs) == 16);

/// A client's attachment state, in ClientSlot::state.
enum class ClientState : std::uint32_t {
  kAbsent = 0,    ///< no process attached
  kAttached = 1,  ///< init done, not yet in the scheduler
  kEntered = 2,   ///< in enterScheduler, ready to run
  kRefused = 3,   ///< enterScheduler failed (ClientSlot::refusal says why)
  kExited = 4,    ///< left the scheduler and detached
};

/// Why a client refused to enter the scheduler, in ClientSlot::refusal (with state kRefused).
enum class Refusal : std::uint32_t {
  kUnregistered = 0,  ///< refusalDetail: the RunnableId scheduled for it and not registered
  kGpuEngine = 1,     ///< refusalDetail: a CUDA submitter of its GPU engine, which could not start
  kCore = 2,          ///< refusalDetail: a core its worker would be pinned to and it may not use
};
inline constexpr std::uint32_t kMaxRefusal = 2;

/// Per client; only that client writes (the master reads and validates).
struct alignas(kCacheLine) ClientSlot {
  std::atomic<std::uint32_t> pid;            ///< attached process; claimed with compare-exchange from 0
  std::atomic<std::uint32_t> state;          ///< ClientState
  std::atomic<std::uint32_t> exitRequested;  ///< 1 once exitScheduler was called (async-signal-safe)
  std::atomic<std::uint32_t> refusalDetail;  ///< kRefused: what `refusal` names (a RunnableId or a core)
  std::atomic<std::uint64_t> startTime;      ///< the process's start time, against pid reuse
  /// Switch callbacks the client registered (schedule manager runs): a rollover waits for the
  /// acknowledgement of each client that has any; written before state kEntered.
  std::atomic<std::uint32_t> switchCallbacks;
  std::atomic<std::uint32_t> refusal;  ///< kRefused: a Refusal (written before the state)
  /// The signal (SIGINT, SIGTERM) whose default handler in libtactus asked the exit, written
  /// before exitRequested; 0: exitScheduler was called by the application.
  std::atomic<std::uint32_t> exitSignal;
  std::uint8_t reserved[28];
};
static_assert(sizeof(ClientSlot) == kCacheLine);
static_assert(offsetof(ClientSlot, refusal) == 28 && offsetof(ClientSlot, exitSignal) == 32);

/// Per worker (one per client and hardware resource it uses): the event ring's indices.
struct alignas(kCacheLine) WorkerSlot {
  // line 0: the worker writes
  std::atomic<std::uint64_t> head;     ///< records written (monotonic; slot = head % capacity)
  std::atomic<std::uint64_t> dropped;  ///< records lost because the ring was full
  std::uint8_t reserved0[48];
  // line 1: the master writes
  std::atomic<std::uint64_t> tail;  ///< records drained
  std::uint8_t reserved1[56];
};
static_assert(sizeof(WorkerSlot) == 2 * kCacheLine);
static_assert(offsetof(WorkerSlot, tail) == kCacheLine);

/// How a submittee's completion is signalled, in GpuSlot::mode.
enum class GpuMode : std::uint32_t {
  kNone = 0,    ///< no GPU engine: only InstanceSlot::done says it finished
  kEvents = 1,  ///< a GPU engine runs it: `submitted` and the inter-process event handles are valid
  kFences = 2,  ///< a GPU engine runs it: `submitted` is valid and the stream writes `fence` when it ends
};

/// Per instance: how GPU work in any process orders itself after it without blocking a CPU.
/// The client whose submitter enqueues a submittee writes lines 0-4; line 5 (`fence`) is
/// written by whatever completes the instance (see there).
///
///   submitter: for each predecessor p of its work (not on its own stream):
///                cuStreamWaitValue64(stream, &gpu(p).fence, h + 1, geq)
///              cuStreamWriteValue64(stream, &gpu(work).started, h + 1)
///              the user's kernels; cuStreamWriteValue64(stream, &gpu(work).fence, h + 1)
///              submitted = h + 1 (enqueued: the next submitter on the stream may go)
///   a CPU runnable after GPU work: spin, then sleep, until fence >= h + 1
///   a CPU runnable that GPU work waits for: fence = h + 1 when it ends
///   the work's client's GPU worker: watches started and fence, logs the work, done = h + 1
struct alignas(kCacheLine) GpuSlot {
  // --- line 0: the submitting client writes ---
  /// Iterations whose GPU work and completion record have been enqueued (wraps): after iteration h
  /// it holds h + 1. Written by the submitter's worker right after the record was issued.
  std::atomic<std::uint32_t> submitted;
  /// Threads sleeping on `submitted`; the submitting worker issues FUTEX_WAKE only if > 0.
  std::atomic<std::uint32_t> waiters;
  /// GpuMode; written once by the submitting client before it enters the scheduler.
  std::atomic<std::uint32_t> mode;
  /// Events in `eventHandle` (kGpuEventRing); written with `mode`.
  std::uint32_t eventCount;
  /// The process that created the events (same process: use them directly, others open the handles).
  std::uint32_t ownerPid;
  std::uint8_t reserved[44];
  // --- lines 1-4: inter-process event handles, one per ring slot; written with `mode` ---
  std::uint8_t eventHandle[kGpuEventRing][kIpcEventHandleSize];
  // --- line 5: the instance's fence (every instance that GPU work waits for has one) ---
  /// Iterations of this instance done: h + 1 once iteration h has ended (monotonic, never wraps;
  /// the instance names the frame). Written by the GPU itself for a submittee a GPU engine runs
  /// (cuStreamWriteValue64 after the work), by the worker that ran it for any other instance
  /// that GPU work waits for. Read by streams (cuStreamWaitValue64, geq) and by CPU workers
  /// that wait for GPU work (spin, then sleep). The segment is registered with the device
  /// (cuMemHostRegister) so the device reads and writes it.
  std::atomic<std::uint64_t> fence;
  /// A submittee a GPU engine runs: iterations whose work has started (h + 1), written by the
  /// GPU (cuStreamWriteValue64 before the work); its client's GPU worker reads it for the event
  /// log's GPU-side start (no host callback).
  std::atomic<std::uint64_t> started;
  /// A submittee a GPU engine runs: when its work of iteration h started ([h % 2][0]) and ended
  /// ([h % 2][1]), CLOCK_MONOTONIC ns, stamped in stream order right before the work and right
  /// after it: on a GPU by a one-thread kernel reading %globaltimer (plus the offset the engine
  /// measured at start), on the CUDA stand-in by the stream's thread. Written before `started`
  /// and `fence` respectively; its client's GPU worker reads them into the event log once it
  /// has seen the fence. 0: not stamped (the worker logs the times it saw the fences instead).
  std::atomic<std::int64_t> gpuTimesNs[2][2];
  std::uint8_t reserved2[16];
};
static_assert(sizeof(GpuSlot) == 6 * kCacheLine);
static_assert(offsetof(GpuSlot, eventHandle) == kCacheLine);
static_assert(offsetof(GpuSlot, fence) == 5 * kCacheLine);
static_assert(offsetof(GpuSlot, started) == 5 * kCacheLine + 8);
static_assert(offsetof(GpuSlot, gpuTimesNs) == 5 * kCacheLine + 16);

/// Per hyperepoch: schedule switching with a schedule manager (-N). The master activates the
/// hyperepoch (raises HyperepochSlot::stopAt, then bumps `activation`); every worker of the
/// hyperepoch sleeps on `activation` while the hyperepoch is stopped, counts itself in `left`
/// each time it leaves an activation, and, for a rollover activation, the first worker of each
/// client in the hyperepoch runs the client's switch callbacks and counts them in `acks`.
struct alignas(kCacheLine) SwitchSlot {
  // --- line 0: the master writes ---
  /// Activations of the hyperepoch so far (a futex word; only increases). The master bumps it
  /// once more as it publishes the end, so that parked workers wake and find the end.
  std::atomic<std::uint32_t> activation;
  /// The activation that is a rollover (the switch callbacks run before its first frame); 0 = none.
  std::atomic<std::uint32_t> rolloverActivation;
  /// Workers sleeping on `activation`; the master issues FUTEX_WAKE only if > 0.
  std::atomic<std::uint32_t> activationWaiters;
  std::uint8_t reserved0[52];
  // --- line 1: the clients' workers write, the master reads ---
  /// Times a worker of the hyperepoch left an activation (cumulative, all workers).
  std::atomic<std::uint32_t> left;
  /// Switch-callback rounds completed (cumulative, one per client and rollover activation).
  std::atomic<std::uint32_t> acks;
  /// Master threads sleeping on `left` or `acks`; a worker issues FUTEX_WAKE only if > 0.
  std::atomic<std::uint32_t> masterWaiters;
  std::uint8_t reserved1[52];
};
static_assert(sizeof(SwitchSlot) == 2 * kCacheLine);
static_assert(offsetof(SwitchSlot, left) == kCacheLine);

/// The header of one buffer of a channel's ring, followed by the buffer (the channel's size,
/// rounded up to whole cache lines). The writer run that takes the buffer writes every field, then
/// `iteration` (release); a reader run reads them after its wait for that writer run (which
/// orders them), and sees from `iteration` and `writerInstance` whether the buffer holds the
/// version the schedule names. Zero-filled when the master creates the segment: no version. The
/// stamps are atomics (relaxed): the schedule orders a writer and its readers, but a reader may
/// look at a buffer's stamp while a run beyond the schedule's (a late one) rewrites it.
struct alignas(kCacheLine) ChannelVersion {
  /// The hyperepoch iteration + 1 of the writer run whose data the buffer holds (0: none yet).
  std::atomic<std::uint64_t> iteration;
  std::atomic<std::uint32_t> writerInstance;  ///< that run's InstanceId
  std::uint32_t reserved0;
  std::atomic<std::int64_t> writtenNs;  ///< CLOCK_MONOTONIC ns at which that run took the buffer
  /// CLOCK_MONOTONIC ns of the frame release of the oldest source data the version derives from:
  /// the writer run's own release, or an older one of a version that run read (chains).
  std::atomic<std::int64_t> sourceNs;
  std::uint8_t reserved[32];
};
static_assert(sizeof(ChannelVersion) == kCacheLine);
static_assert(offsetof(ChannelVersion, writtenNs) == 16 && offsetof(ChannelVersion, sourceNs) == 24);

/// The manager's request to the master, in ManagerChannel::op.
enum class ManagerOp : std::uint32_t {
  kNone = 0,
  kStart = 1,     ///< start schedule arg0
  kStop = 2,      ///< stop schedule arg0 (complete swap)
  kRollover = 3,  ///< start arg0, stop arg1, per hyperepoch
  kExit = 4,      ///< end the run (every client returns)
  kStatus = 5,    ///< fill the status words only
};

/// Manager result codes, in ManagerChannel::resultCode (mirrors the STM error codes it maps to).
enum class ManagerResult : std::uint32_t {
  kOk = 0,
  kUnknownSchedule = 1,  ///< no schedule has the identifier
  kBadState = 2,         ///< start while one runs, stop of one not running
  kNotSupported = 3,     ///< rollover across schedules that partition resources differently
  kBadRequest = 4,       ///< an op out of range
  kRunEnded = 5,         ///< the run ended while the request waited
};

/// Who claims the manager channel, in ManagerChannel::managerKind.
enum class ManagerKind : std::uint32_t {
  kSession = 0,  ///< a manager that stays attached: its death while it holds the claim ends the run
  kCommand = 1,  ///< a one-shot command (tactus-manager): its death drops its claim, the run goes on
};

/// "TACTUSMG": the first 8 bytes of a manager channel segment.
inline constexpr std::uint64_t kManagerMagic = 0x474d535554434154ULL;
/// Bytes of the manager's name.
inline constexpr std::size_t kManagerNameSize = 128;
/// Bytes of a result message.
inline constexpr std::size_t kManagerMessageSize = 256;

/// The schedule manager's request channel: one segment per instance with -N, created by the
/// master. The manager writes a request and bumps `requestSeq`; the master handles it and
/// publishes `resultSeq` = requestSeq with a result code and message (futex word).
struct alignas(kCacheLine) ManagerChannel {
  // --- line 0: identity; the master writes once before `open` ---
  std::atomic<std::uint64_t> magic;  ///< kManagerMagic (release, last)
  std::uint32_t layoutVersion;       ///< kLayoutVersion
  std::atomic<std::uint32_t> masterPid;
  std::atomic<std::uint64_t> masterStartTime;
  std::atomic<std::uint32_t> open;  ///< 1 while the master takes requests, 2 once the run ended (futex word)
  std::uint32_t scheduleCount;      ///< schedules loaded
  std::uint16_t identifiers[16];    ///< their identifiers (first 16)
  // --- lines 1-2: the manager's name as the master expects it (-N), NUL-terminated ---
  char expectedName[kManagerNameSize];
  // --- line 3: the manager writes ---
  std::atomic<std::uint32_t> managerPid;  ///< claimed with compare-exchange from 0
  std::atomic<std::uint32_t> requestSeq;  ///< bumped per request (after op and args)
  std::atomic<std::uint64_t> managerStartTime;
  std::atomic<std::uint32_t> op;    ///< ManagerOp
  std::atomic<std::uint32_t> arg0;  ///< schedule identifier
  std::atomic<std::uint32_t> arg1;  ///< schedule identifier (rollover: the one to stop)
  /// ManagerKind of the claim, written before `managerPid`: whether its holder's death ends the run.
  std::atomic<std::uint32_t> managerKind;
  std::uint8_t reserved0[32];
  // --- line 4: the master writes ---
  std::atomic<std::uint32_t> resultSeq;      ///< equals requestSeq once handled (futex word)
  std::atomic<std::uint32_t> resultCode;     ///< ManagerResult
  std::atomic<std::uint32_t> running;        ///< identifier of the running schedule, or 0xffffffff
  std::atomic<std::uint32_t> resultWaiters;  ///< managers sleeping on resultSeq
  std::atomic<std::uint64_t> iterations;     ///< iterations completed by the running schedule (max over hyperepochs)
  std::atomic<std::uint64_t> overruns;       ///< skipped periods of the running schedule
  std::uint8_t reserved1[32];
  // --- lines 5-8: the result message, NUL-terminated ---
  char message[kManagerMessageSize];
};
static_assert(sizeof(ManagerChannel) == 9 * kCacheLine);
static_assert(offsetof(ManagerChannel, expectedName) == kCacheLine);
static_assert(offsetof(ManagerChannel, managerPid) == 3 * kCacheLine);
/// The byte of the channel a manager holds an open-file-description write lock on from before it
/// claims the channel until it detaches (kOwnerLockByte's counterpart for `managerPid`).
inline constexpr std::size_t kManagerLockByte = offsetof(ManagerChannel, managerPid);
static_assert(offsetof(ManagerChannel, resultSeq) == 4 * kCacheLine);
static_assert(offsetof(ManagerChannel, message) == 5 * kCacheLine);

/// The instance name of schedule `index`'s segment (index 0 is the instance itself).
inline std::string scheduleInstanceName(const std::string& instance, std::uint32_t index) {
  return index == 0 ? instance : instance + ".schedule" + std::to_string(index);
}
/// The instance name of SoC `soc`'s segment of a multi-SoC schedule (`<instance>.soc<k>`, k the
/// SoC's index in the schedule): each SoC's master has its own, so two SoCs can share one host.
/// A client finds its SoC's segment by its client name (client_lib/src/attach.cpp).
inline std::string socInstanceName(const std::string& instance, std::uint32_t soc) {
  return instance + ".soc" + std::to_string(soc);
}
/// The marker between an instance and its SoC index in socInstanceName.
inline constexpr std::string_view kSocInstanceMarker = ".soc";
/// The instance name of the manager channel's segment.
inline std::string managerInstanceName(const std::string& instance) { return instance + ".manager"; }

/// The counts that determine a segment's geometry.
struct LayoutCounts {
  std::uint32_t hyperepochs = 0;
  std::uint32_t epochs = 0;
  std::uint32_t instances = 0;
  std::uint32_t clients = 0;
  std::uint32_t workers = 0;
  std::uint32_t ringCapacity = kRingCapacity;
  std::uint64_t scheduleTextSize = 0;
  std::uint32_t runnables = 0;     ///< entries of the statistics block
  std::uint64_t channelBytes = 0;  ///< the channels' rings (channelRings)
  /// The schedule's chains and channels, for the statistics block's tables (of fixed capacity:
  /// not part of the geometry, and not in the header; 0 in counts a reader took from a header).
  std::uint32_t chains = 0, channels = 0;
};

/// Offsets and total size for given counts (every area cache-line aligned).
struct LayoutOffsets {
  std::uint64_t hyperepoch = 0, epoch = 0, instance = 0, client = 0, worker = 0, ring = 0, gpu = 0, text = 0;
  std::uint64_t switching = 0;  ///< SwitchSlot array
  std::uint64_t stats = 0;      ///< the statistics block
  std::uint64_t channels = 0;   ///< the channels' rings
  std::uint64_t total = 0;
};

/// Where one channel's ring lies in the channel area (from its start): `depth` buffers of
/// `stride` bytes each, a ChannelVersion and then `size` bytes of data.
struct ChannelRing {
  std::uint64_t offset = 0;
  std::uint64_t stride = 0;
  std::uint64_t size = 0;
  std::uint32_t depth = 0;
  std::uint32_t writes = 0;  ///< writer runs per hyperepoch iteration
};

/// The rings of a schedule's channels, in the order of Schedule::channels, and the area's size
/// (the last entry's end). The master and every client compute it the same way.
std::vector<ChannelRing> channelRings(const Schedule& schedule, std::uint64_t* totalBytes);

/// Computes the geometry; the master and every client compute it the same way.
LayoutOffsets computeLayout(const LayoutCounts& counts);

/// The segment's counts for a schedule, its plan and its text's size (the master's segment, and
/// the tests' segments on the heap).
LayoutCounts layoutCounts(const Schedule& schedule, const RunPlan& plan, std::size_t textSize);

/// Whether `a` has reached `b` on a wrapping 32-bit sequence (a - b read as signed >= 0).
inline bool sequenceReached(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

/// A typed view of a segment's bytes. Logic takes a view so tests can run it on a plain buffer.
///
/// The view never reads the geometry from shared memory after it was set: initialize() (master)
/// or validate() (a client) takes a private copy of the counts and offsets, and every accessor
/// uses that copy, so a segment damaged later cannot make an accessor reach outside the mapping.
/// Indices passed to the accessors come from the process's own schedule (checked against the
/// counts once, at attach); an index read from shared memory must be checked with the count
/// accessors before use.
class SegmentView {
 public:
  SegmentView() = default;
  explicit SegmentView(std::span<std::byte> bytes) : bytes_(bytes) {}

  /// The master: writes a fresh header for `counts` (state kCreating), constructs every slot and
  /// takes the geometry as its private copy. Fails when the buffer is too small or misaligned.
  Result<void> initialize(const LayoutCounts& counts);

  /// A client: checks magic, version, sizes and that every area lies inside the buffer, then
  /// takes a private copy of the geometry. Call once state >= kPublished.
  Result<void> validate();

  /// Whether the buffer holds at least a header with the right magic (the master may still be creating).
  bool hasHeader() const;

  /// Whether the geometry was taken (initialize or validate succeeded).
  bool hasGeometry() const { return geometryTaken_; }
  /// The private copy of the counts (valid once hasGeometry()).
  const LayoutCounts& counts() const { return counts_; }
  /// The private copy of the offsets (valid once hasGeometry()).
  const LayoutOffsets& offsets() const { return offsets_; }

  /// Compares the header's identity and geometry with the private copy: "" when they agree, else
  /// the name of the first field that differs (the segment was written over).
  std::string changedHeaderField() const;

  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(bytes_.data()); }
  HyperepochSlot& hyperepoch(HyperepochId h) const { return at<HyperepochSlot>(offsets_.hyperepoch, index(h)); }
  EpochSlot& epoch(EpochId e) const { return at<EpochSlot>(offsets_.epoch, index(e)); }
  InstanceSlot& instance(InstanceId i) const { return at<InstanceSlot>(offsets_.instance, index(i)); }
  ClientSlot& client(ClientId c) const { return at<ClientSlot>(offsets_.client, index(c)); }
  WorkerSlot& worker(std::uint32_t i) const { return at<WorkerSlot>(offsets_.worker, i); }
  /// The ring of worker `w` (ringCapacity() records).
  EventRecord* ring(std::uint32_t w) const {
    return reinterpret_cast<EventRecord*>(bytes_.data() + offsets_.ring) +
           static_cast<std::size_t>(w) * counts_.ringCapacity;
  }
  /// Records per worker ring (the private copy).
  std::uint32_t ringCapacity() const { return counts_.ringCapacity; }
  /// The GPU slot of instance `i`.
  GpuSlot& gpu(InstanceId i) const { return at<GpuSlot>(offsets_.gpu, index(i)); }
  /// The switching slot of hyperepoch `i`.
  SwitchSlot& switching(HyperepochId h) const { return at<SwitchSlot>(offsets_.switching, index(h)); }
  /// The channels' rings (channelBytes bytes; empty without channels).
  std::span<std::byte> channelArea() const { return bytes_.subspan(offsets_.channels, counts_.channelBytes); }
  /// The statistics block (stats_layout.hpp), as large as the counts make it.
  StatsView stats() const { return StatsView(bytes_.subspan(offsets_.stats, offsets_.channels - offsets_.stats)); }
  /// The published schedule text.
  std::string_view scheduleText() const {
    return {reinterpret_cast<const char*>(bytes_.data() + offsets_.text),
            static_cast<std::size_t>(counts_.scheduleTextSize)};
  }
  /// Copies `text` into the text area (master, while kCreating).
  void writeScheduleText(std::string_view text) const;
  /// Writes the stop message (truncated to fit).
  void setMessage(std::string_view text) const;
  /// Reads the stop message (at most kMessageSize bytes, whatever the segment holds; a byte
  /// that is not printable ASCII reads as '?').
  std::string message() const;
  /// What is wrong with the master's published end, "" when each of its fields holds what a master
  /// writes: `state` and `stopReason` in range, `stopClient` one of the clients (or none), `message`
  /// NUL-terminated within its array and printable UTF-8. Else the first such field and what it holds
  /// ("header field 'message' is not NUL-terminated within its 256 bytes"): the segment was written over.
  std::string endFault() const;

  std::span<std::byte> bytes() const { return bytes_; }

 private:
  template <typename T>
  T& at(std::uint64_t offset, std::uint32_t i) const {
    return *reinterpret_cast<T*>(bytes_.data() + offset + static_cast<std::uint64_t>(i) * sizeof(T));
  }
  std::span<std::byte> bytes_;
  LayoutCounts counts_{};
  LayoutOffsets offsets_{};
  bool geometryTaken_ = false;
};

}  // namespace tactus::shm
