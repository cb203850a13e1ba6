// Contract violations found by tactus-check: the kinds and calls it names, how a violation travels
// as event records (client ring -> master -> event log -> tactus-report), and the C ABI between
// libtactus and the preloaded check library. Header-only: the check library uses it without
// linking core.
//
// One violation report is one kViolation record, followed (the first time a runnable commits a
// given (kind, call)) by up to kViolationSiteRecords kViolationSite records holding its first
// call site as text:
//
//   kViolation      reserved = ViolationKind, instance = InstanceId, iteration = count,
//                   aux = RunnableId, startNs = when it first happened in this run,
//                   endNs = CheckCall | (site records that follow << 16)
//                           | (context << 32): for kind info, 1 + the CheckCall of the call into
//                           the CUDA runtime during which `CheckCall` happened; 0 otherwise
//   kViolationSite  bytes 2..31: 30 bytes of the site text, NUL-padded
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tactus/core/event_log.hpp"

namespace tactus {

/// What rule of a runnable's contract (stm-model.md section 1, STM's CUDA rules) was broken.
enum class ViolationKind : std::uint16_t {
  kAllocation = 0,      ///< malloc/free family, operator new/delete
  kBlockingCall = 1,    ///< a call that can block or sleep
  kThreadCreation = 2,  ///< pthread_create, clone, fork-like calls
  kPageFault = 3,       ///< major faults, or minor ones above the threshold
  kCudaSync = 4,        ///< cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize
  kDefaultStream = 5,   ///< work enqueued on the legacy default stream
  kUnifiedMemory = 6,   ///< cudaMallocManaged
  kPageableCopy = 7,    ///< an asynchronous copy from pageable host memory
  /// Not a violation: what the CUDA runtime did inside a call a runnable made into it (its
  /// allocations, blocking calls), the call into the runtime in the record's context.
  kInfo = 8,
  kCount = 9,
};

/// The kinds' names as tactus-check's --allow and tactus-report print them.
inline constexpr std::string_view kViolationKindNames[] = {
    "allocation",     "blocking-call",  "thread-creation", "page-fault", "cuda-sync",
    "default-stream", "unified-memory", "pageable-copy",   "info",
};
static_assert(std::size(kViolationKindNames) == static_cast<std::size_t>(ViolationKind::kCount));

/// The calls the check library intercepts (the id travels in the record; the name is printed).
enum class CheckCall : std::uint16_t {
  kMalloc,
  kCalloc,
  kRealloc,
  kFree,
  kAlignedAlloc,
  kPosixMemalign,
  kMemalign,
  kValloc,
  kPvalloc,
  kOperatorNew,
  kOperatorNewArray,
  kOperatorDelete,
  kOperatorDeleteArray,
  kNanosleep,
  kClockNanosleep,
  kUsleep,
  kSleep,
  kRead,
  kWrite,
  kPread,
  kPwrite,
  kReadv,
  kWritev,
  kRecv,
  kSend,
  kRecvfrom,
  kSendto,
  kRecvmsg,
  kSendmsg,
  kAccept,
  kConnect,
  kPoll,
  kPpoll,
  kSelect,
  kPselect,
  kEpollWait,
  kEpollPwait,
  kOpen,
  kOpenat,
  kFopen,
  kMmap,
  kMunmap,
  kFork,
  kWait,
  kWaitpid,
  kWaitid,
  kSystem,
  kFutex,
  kMutexLock,
  kCondWait,
  kCondTimedwait,
  kSemWait,
  kPthreadJoin,
  kPthreadCreate,
  kClone,
  kVfork,
  kPosixSpawn,
  kMajorFault,
  kMinorFault,
  kCudaDeviceSynchronize,
  kCudaStreamSynchronize,
  kCudaEventSynchronize,
  kCudaMallocManaged,
  kCudaLaunchHostFunc,
  kCudaEventRecord,
  kCudaStreamWaitEvent,
  kCudaMemcpyAsync,
  // stdio (glibc writes and reads through its internal write/read, which interposing cannot see)
  kPrintf,
  kFprintf,
  kVprintf,
  kVfprintf,
  kDprintf,
  kVdprintf,
  kPuts,
  kFputs,
  kFputc,
  kPutc,
  kPutchar,
  kFwrite,
  kFflush,
  kFputsUnlocked,
  kFputcUnlocked,
  kPutcUnlocked,
  kPutcharUnlocked,
  kFwriteUnlocked,
  kFflushUnlocked,
  kFread,
  kFreadUnlocked,
  kFgets,
  kFgetsUnlocked,
  kFgetc,
  kGetc,
  kGetchar,
  kFgetcUnlocked,
  kGetcUnlocked,
  kGetcharUnlocked,
  kGetline,
  kGetdelim,
  kPerror,
  /// Occurrences of further calls of a kind that found the worker's table full (not itemised).
  kUnitemised,
  kIoctl,
  kCudaLaunchKernel,
  kCudaMemsetAsync,
  kCudaMalloc,
  kCudaFree,
  kCudaMallocHost,
  kCudaFreeHost,
  kCudaMemcpy,
  kCudaEventQuery,
  kCudaStreamQuery,
  kCount,
};

/// The calls' names, indexed by CheckCall.
inline constexpr std::string_view kCheckCallNames[] = {
    "malloc",
    "calloc",
    "realloc",
    "free",
    "aligned_alloc",
    "posix_memalign",
    "memalign",
    "valloc",
    "pvalloc",
    "operator new",
    "operator new[]",
    "operator delete",
    "operator delete[]",
    "nanosleep",
    "clock_nanosleep",
    "usleep",
    "sleep",
    "read",
    "write",
    "pread",
    "pwrite",
    "readv",
    "writev",
    "recv",
    "send",
    "recvfrom",
    "sendto",
    "recvmsg",
    "sendmsg",
    "accept",
    "connect",
    "poll",
    "ppoll",
    "select",
    "pselect",
    "epoll_wait",
    "epoll_pwait",
    "open",
    "openat",
    "fopen",
    "mmap",
    "munmap",
    "fork",
    "wait",
    "waitpid",
    "waitid",
    "system",
    "futex",
    "pthread_mutex_lock",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "sem_wait",
    "pthread_join",
    "pthread_create",
    "clone",
    "vfork",
    "posix_spawn",
    "major-fault",
    "minor-fault",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaMallocManaged",
    "cudaLaunchHostFunc",
    "cudaEventRecord",
    "cudaStreamWaitEvent",
    "cudaMemcpyAsync",
    "printf",
    "fprintf",
    "vprintf",
    "vfprintf",
    "dprintf",
    "vdprintf",
    "puts",
    "fputs",
    "fputc",
    "putc",
    "putchar",
    "fwrite",
    "fflush",
    "fputs_unlocked",
    "fputc_unlocked",
    "putc_unlocked",
    "putchar_unlocked",
    "fwrite_unlocked",
    "fflush_unlocked",
    "fread",
    "fread_unlocked",
    "fgets",
    "fgets_unlocked",
    "fgetc",
    "getc",
    "getchar",
    "fgetc_unlocked",
    "getc_unlocked",
    "getchar_unlocked",
    "getline",
    "getdelim",
    "perror",
    "unitemised",
    "ioctl",
    "cudaLaunchKernel",
    "cudaMemsetAsync",
    "cudaMalloc",
    "cudaFree",
    "cudaMallocHost",
    "cudaFreeHost",
    "cudaMemcpy",
    "cudaEventQuery",
    "cudaStreamQuery",
};
static_assert(std::size(kCheckCallNames) == static_cast<std::size_t>(CheckCall::kCount));

/// At most this many kViolationSite records follow a kViolation record (30 bytes each).
inline constexpr std::uint32_t kViolationSiteRecords = 6;
/// Text bytes one kViolationSite record carries.
/// (bytes 2 to 31: the schedule tag after them is the log writer's.)
inline constexpr std::size_t kViolationSiteBytes = offsetof(EventRecord, schedule) - 2;

/// The name of a violation kind, or "" for an out-of-range value.
inline std::string_view violationKindName(std::uint32_t kind) {
  return kind < std::size(kViolationKindNames) ? kViolationKindNames[kind] : std::string_view{};
}

/// The name of a call, or "" for an out-of-range value.
inline std::string_view checkCallName(std::uint32_t call) {
  return call < std::size(kCheckCallNames) ? kCheckCallNames[call] : std::string_view{};
}

/// The call id of a kViolation record.
inline std::uint32_t violationCall(const EventRecord& r) { return static_cast<std::uint32_t>(r.endNs & 0xffff); }

/// How many kViolationSite records follow a kViolation record.
inline std::uint32_t violationSiteRecords(const EventRecord& r) {
  return static_cast<std::uint32_t>((r.endNs >> 16) & 0xff);
}

/// The context of a kViolation record: 1 + the CheckCall into the CUDA runtime (kind info), or 0.
inline std::uint32_t violationContext(const EventRecord& r) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(r.endNs) >> 32) & 0xffff);
}

/// Whether a kViolation record's codes are known: kind, call, site records, and a context that
/// names a call exactly when the kind is info (indices into the schedule are the reader's to check).
inline bool violationCodesValid(const EventRecord& r) {
  const std::uint32_t context = violationContext(r);
  const bool info = r.detail == static_cast<std::uint16_t>(ViolationKind::kInfo);
  return !violationKindName(r.detail).empty() && !checkCallName(violationCall(r)).empty() &&
         violationSiteRecords(r) <= kViolationSiteRecords && (static_cast<std::uint64_t>(r.endNs) >> 48) == 0 &&
         (info ? context >= 1 && !checkCallName(context - 1).empty() : context == 0);
}

/// Builds a kViolation record (`context`: see violationContext).
inline EventRecord makeViolationRecord(ViolationKind kind, CheckCall call, std::uint32_t instance,
                                       std::uint32_t runnable, std::uint32_t count, std::int64_t whenNs,
                                       std::uint32_t siteRecords, std::uint32_t context = 0) {
  EventRecord r{};
  r.kind = static_cast<std::uint16_t>(EventKind::kViolation);
  r.detail = static_cast<std::uint16_t>(kind);
  r.instance = instance;
  r.iteration = count;
  r.aux = runnable;
  r.startNs = whenNs;
  r.endNs =
      static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<std::uint32_t>(call) | (siteRecords << 16)) |
                                (static_cast<std::uint64_t>(context & 0xffff) << 32));
  return r;
}

/// Writes the text bytes [offset, offset + kViolationSiteBytes) of `site` into a kViolationSite record.
inline EventRecord makeViolationSiteRecord(const char* site, std::size_t length, std::size_t offset) {
  EventRecord r{};
  r.kind = static_cast<std::uint16_t>(EventKind::kViolationSite);
  unsigned char bytes[sizeof(EventRecord)] = {};
  std::memcpy(bytes, &r, sizeof r);
  for (std::size_t k = 0; k < kViolationSiteBytes && offset + k < length; ++k) bytes[2 + k] = site[offset + k];
  std::memcpy(&r, bytes, sizeof r);
  return r;
}

/// Appends the text a kViolationSite record carries (up to its first NUL) to `out`.
inline void appendViolationSite(const EventRecord& r, std::string& out) {
  unsigned char bytes[sizeof(EventRecord)];
  std::memcpy(bytes, &r, sizeof r);
  for (std::size_t k = 2; k < 2 + kViolationSiteBytes && bytes[k] != 0; ++k) out.push_back(static_cast<char>(bytes[k]));
}

}  // namespace tactus

/// The C ABI between libtactus and the preloaded check library (libtactus_check.so). The check
/// library defines these functions; libtactus looks them up once with dlsym(RTLD_DEFAULT, ...)
/// and, when they are there, calls them around every runnable it runs on a worker thread.
extern "C" {
/// A worker thread is about to run `runnable` (RunnableId) as `instance` (InstanceId).
typedef void (*TactusCheckBeginFn)(std::uint32_t instance, std::uint32_t runnable);
/// The runnable returned: writes at most `capacity` violation records (kViolation followed by its
/// kViolationSite records) into `out` and returns how many it wrote.
typedef std::uint32_t (*TactusCheckEndFn)(tactus::EventRecord* out, std::uint32_t capacity);
}
