// The check library's per-thread state and the one function every interposed call goes through
// (noteViolation): which runnable a worker thread runs, what it did wrong, and where first.
#pragma once

#include <cstdint>

#include "tactus/core/violation.hpp"

namespace tactus::check {

/// Whether the calling thread runs a runnable right now (set by tactusCheckBegin/End). Read first
/// by every interposed call, so a call outside runnables costs one thread-local load.
extern thread_local bool tActive __attribute__((tls_model("initial-exec")));
/// Depth of the check library's own work on this thread: calls made meanwhile are not the user's.
extern thread_local int tDepth __attribute__((tls_model("initial-exec")));

/// The call into the CUDA runtime a runnable made that the thread is inside now (1 + CheckCall,
/// 0 when none): what happens meanwhile is the runtime's work, reported as kind info.
extern thread_local std::uint32_t tCudaContext __attribute__((tls_model("initial-exec")));

/// Whether a call made now on this thread is to be looked at (inside a runnable, not our own).
inline bool checking() { return tActive && tDepth == 0; }

/// Records that the running runnable made `call` (`count` times), unless allowed or made by
/// libtactus itself (`caller`, the return address of the interposed call, lies in it).
void noteViolation(ViolationKind kind, CheckCall call, const void* caller, std::uint32_t count = 1);

/// Keeps the check library's own calls (symbol lookups, backtraces) out of the reports.
class OwnWork {
 public:
  OwnWork() { ++tDepth; }
  ~OwnWork() { --tDepth; }
  OwnWork(const OwnWork&) = delete;
  OwnWork& operator=(const OwnWork&) = delete;
};

/// Whether libtactus itself made the call that returns to `caller` (see check_state.cpp).
bool ownCall(const void* caller);

/// The scope of one call into the CUDA runtime. A runnable's own call (not libtactus's, not one
/// the runtime makes inside another) opens an info context for what the runtime does meanwhile;
/// libtactus's calls are our own work, as before.
class CudaScope {
 public:
  CudaScope(CheckCall call, const void* caller);
  ~CudaScope();
  CudaScope(const CudaScope&) = delete;
  CudaScope& operator=(const CudaScope&) = delete;

 private:
  enum class Mode : std::uint8_t { kNone, kOwn, kContext } mode_ = Mode::kNone;
};

/// Looks up the next definition of an interposed function (dlsym(RTLD_NEXT)), as our own work.
void* nextSymbol(const char* name);

}  // namespace tactus::check

/// Notes a violation for the calling interposer when the thread is checking.
#define TACTUS_CHECK_NOTE(kind, call)                                                          \
  do {                                                                                         \
    if (::tactus::check::checking())                                                           \
      ::tactus::check::noteViolation(::tactus::ViolationKind::kind, ::tactus::CheckCall::call, \
                                     __builtin_return_address(0));                             \
  } while (false)

/// Declares `real` as the next definition of `name` with the type of our own `name`.
#define TACTUS_CHECK_NEXT(name)            \
  static decltype(&(name)) real = nullptr; \
  if (real == nullptr) real = reinterpret_cast<decltype(&(name))>(::tactus::check::nextSymbol(#name))
