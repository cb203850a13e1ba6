// The check library's core: the window libtactus opens around each runnable (tactusCheckBegin /
// tactusCheckEnd, found by libtactus with dlsym), the per-thread table of violations (repeats
// counted, the first call site kept), page faults from the thread's rusage, the --allow list.
#include "check_state.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "tactus/core/limits.hpp"

namespace tactus::check {

thread_local bool tActive __attribute__((tls_model("initial-exec"))) = false;
thread_local int tDepth __attribute__((tls_model("initial-exec"))) = 0;
thread_local std::uint32_t tCudaContext __attribute__((tls_model("initial-exec"))) = 0;

namespace {

constexpr std::uint32_t kDefaultEntries = 128;  // distinct (runnable, kind, call) per thread
constexpr std::uint32_t kKinds = static_cast<std::uint32_t>(ViolationKind::kCount);
constexpr std::size_t kSiteBytes = kViolationSiteRecords * kViolationSiteBytes;
constexpr int kFrames = 24;               // backtrace depth searched for the site
constexpr long kDefaultMinorFaults = 16;  // minor faults per run tolerated

struct Entry {
  std::uint32_t runnable;
  std::uint32_t instance;  // the instance of the latest occurrence
  std::uint16_t kind;
  std::uint16_t call;
  std::uint16_t context;  // kind info: 1 + the CUDA call it happened in
  std::uint32_t pending;  // occurrences not reported yet
  std::int64_t firstNs;   // first occurrence not reported yet
  bool siteSent;          // the site records went out with an earlier report
  char site[kSiteBytes + 1];
};

// A worker thread's state, in anonymous memory mapped before its first runnable; `entries`
// (gEntries of them) follows it in the same mapping.
struct ThreadState {
  std::uint32_t instance;
  std::uint32_t runnable;
  long majorFaults;
  long minorFaults;
  std::uint32_t used;
  std::uint32_t evict;               // where the search for a reported entry to reuse starts
  std::uint32_t unitemised[kKinds];  // this run's occurrences that found the table full
  bool anyUnitemised;                // one of them is not 0 (the clean path tests only this)
  Entry* entries;
};

thread_local ThreadState* tState __attribute__((tls_model("initial-exec"))) = nullptr;
// The return address of the runnable's call into the CUDA runtime that tCudaContext names.
thread_local const void* tCudaCaller __attribute__((tls_model("initial-exec"))) = nullptr;

// What --allow permits: a whole kind, or single calls.
bool gAllowKind[static_cast<std::size_t>(ViolationKind::kCount)] = {};
bool gAllowCall[static_cast<std::size_t>(ViolationKind::kCount)][static_cast<std::size_t>(CheckCall::kCount)] = {};
long gMinorFaultThreshold = kDefaultMinorFaults;
bool gPageFaults = true;                   // false with tactus-check --page-faults off: no rusage reads
std::uint32_t gEntries = kDefaultEntries;  // tactus-check --entries

// The address ranges of libtactus (its own calls are never the user's): set once by the first
// tactusCheckBegin from its caller's address.
struct Range {
  std::uintptr_t lo;
  std::uintptr_t hi;
};
constexpr int kMaxRanges = 8;
Range gTactusRanges[kMaxRanges];
std::atomic<int> gTactusRangeCount{-1};  // -1: not looked up yet
pthread_once_t gRangesOnce = PTHREAD_ONCE_INIT;
const void* gTactusProbe = nullptr;

std::int64_t nowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int collectRanges(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  const auto base = reinterpret_cast<std::uintptr_t>(static_cast<const Dl_info*>(data)->dli_fbase);
  bool mine = false;
  for (int k = 0; k < info->dlpi_phnum && !mine; ++k) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[k];
    if (ph.p_type == PT_LOAD && info->dlpi_addr + ph.p_vaddr <= base &&
        base < info->dlpi_addr + ph.p_vaddr + ph.p_memsz)
      mine = true;
  }
  if (!mine) return 0;
  int n = 0;
  for (int k = 0; k < info->dlpi_phnum && n < kMaxRanges; ++k) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[k];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    gTactusRanges[n++] = {info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
  }
  gTactusRangeCount.store(n, std::memory_order_release);
  return 1;
}

// Runs once, at the first tactusCheckBegin (before any runnable): libtactus's address ranges,
// and a first backtrace, which loads libgcc_s (it allocates, so it never happens inside a
// runnable). Not in the constructor: in a client built with ASan, a dlopen from the check
// library's constructor (before ASan's runtime is set up) leaves allocations that ASan's leak
// checker reports as leaks (GCC 12's libasan).
void findTactusRanges() {
  OwnWork own;
  void* frames[2];
  (void)::backtrace(frames, 2);
  Dl_info info{};
  if (::dladdr(gTactusProbe, &info) == 0 || info.dli_fbase == nullptr) {
    gTactusRangeCount.store(0, std::memory_order_release);
    return;
  }
  ::dl_iterate_phdr(collectRanges, &info);
  if (gTactusRangeCount.load(std::memory_order_acquire) < 0) gTactusRangeCount.store(0, std::memory_order_release);
}

bool inTactus(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  const int n = gTactusRangeCount.load(std::memory_order_acquire);
  for (int k = 0; k < n; ++k)
    if (gTactusRanges[k].lo <= a && a < gTactusRanges[k].hi) return true;
  return false;
}

// Libraries whose frames are skipped when looking for the call site: the user's code called them.
bool systemObject(const char* path) {
  if (path == nullptr) return false;
  const char* base = std::strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  static constexpr const char* kSkip[] = {"libtactus_check", "libc.so", "libc-",      "libstdc++",
                                          "libgcc_s",        "libm.so", "libpthread", "ld-linux"};
  for (const char* s : kSkip)
    if (std::strncmp(base, s, std::strlen(s)) == 0) return true;
  return false;
}

// Whether a symbol (mangled) is the standard library's own code instantiated in the user's object
// (std::vector's growth, std::allocator's allocate: inlined into the caller at -O1 and above,
// frames of their own at -O0): skipped like the libraries, so the site is the user's function.
bool standardLibraryCode(const char* symbol) {
  if (symbol == nullptr) return false;
  static constexpr const char* kPrefixes[] = {"_ZNSt", "_ZNKSt", "_ZSt", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx"};
  for (const char* p : kPrefixes)
    if (std::strncmp(symbol, p, std::strlen(p)) == 0) return true;
  return false;
}

// Writes `function+0xOFF (object)` for an address, the function demangled when the object exports
// its name (an executable linked with -rdynamic, any shared library), else `object+0xOFF`.
void describe(const void* address, char* out, std::size_t size) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    std::snprintf(out, size, "%p", address);
    return;
  }
  const char* object = std::strrchr(info.dli_fname, '/');
  object = object != nullptr ? object + 1 : info.dli_fname;
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    int status = -1;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    const char* name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
    std::snprintf(
        out, size, "%s+0x%zx (%s)", name,
        static_cast<std::size_t>(static_cast<const char*>(address) - static_cast<const char*>(info.dli_saddr)), object);
    std::free(demangled);
    return;
  }
  std::snprintf(out, size, "%s+0x%zx", object,
                static_cast<std::size_t>(static_cast<const char*>(address) - static_cast<const char*>(info.dli_fbase)));
}

// The first frame of the user's code that led here (skipping the check library, the system
// libraries and the standard library's templates it went through); the direct caller when there
// is none.
void captureSite(const void* caller, char* out, std::size_t size) {
  void* frames[kFrames];
  const int n = ::backtrace(frames, kFrames);
  const void* site = nullptr;
  for (int k = 1; k < n && site == nullptr; ++k) {
    Dl_info info{};
    // A return address points after the call: look one byte back to name the calling function.
    const void* at = static_cast<const char*>(frames[k]) - 1;
    if (::dladdr(at, &info) != 0 && !systemObject(info.dli_fname) && !standardLibraryCode(info.dli_sname)) site = at;
  }
  if (site == nullptr) site = static_cast<const char*>(caller) - 1;
  if (inTactus(site)) {
    // The runnable's last statement was this call, compiled as a jump: its frame is gone and
    // the return address is libtactus's, the one that called the runnable.
    std::snprintf(out, size, "tail call at the end of the runnable");
    return;
  }
  describe(site, out, size);
}

// Whether libtactus itself made the call that returns to `caller`. A return address inside
// libtactus is not enough: a runnable that ends in a tail call (`return free(p)` compiled as a
// jump) leaves libtactus's return address behind. libtactus calls the functions it imports
// directly (x86-64: `call rel32` into its PLT, or `call *GOT(%rip)`), while it calls a runnable
// through a pointer; so on x86-64 only a direct call counts as libtactus's own.
bool directTactusCall(const void* caller) {
  if (!inTactus(caller)) return false;
#if defined(__x86_64__)
  const auto* p = static_cast<const unsigned char*>(caller);
  if (!inTactus(p - 6)) return false;
  if (p[-5] == 0xe8) {
    std::int32_t offset = 0;
    std::memcpy(&offset, p - 4, sizeof offset);
    return inTactus(p + offset);
  }
  return p[-6] == 0xff && p[-5] == 0x15;
#else
  return true;
#endif
}

bool allowed(ViolationKind kind, CheckCall call) {
  const auto k = static_cast<std::size_t>(kind);
  return gAllowKind[k] || gAllowCall[k][static_cast<std::size_t>(call)];
}

void resetEntry(ThreadState& s, Entry& e, ViolationKind kind, CheckCall call, std::uint32_t context) {
  e.runnable = s.runnable;
  e.kind = static_cast<std::uint16_t>(kind);
  e.call = static_cast<std::uint16_t>(call);
  e.context = static_cast<std::uint16_t>(context);
  e.pending = 0;
  e.siteSent = false;
  e.site[0] = '\0';
}

// The entry of (the running runnable, kind, call). When the table is full, an entry whose
// occurrences went out already is reused (its key, when it comes back, sends its site again;
// tactus-report keeps the first); nullptr when every entry still waits to be reported.
Entry* entryFor(ThreadState& s, ViolationKind kind, CheckCall call, std::uint32_t context) {
  for (std::uint32_t k = 0; k < s.used; ++k) {
    Entry& e = s.entries[k];
    if (e.runnable == s.runnable && e.kind == static_cast<std::uint16_t>(kind) &&
        e.call == static_cast<std::uint16_t>(call) && e.context == context)
      return &e;
  }
  if (s.used < gEntries) {
    Entry& e = s.entries[s.used++];
    resetEntry(s, e, kind, call, context);
    return &e;
  }
  for (std::uint32_t n = 0; n < s.used; ++n) {
    Entry& e = s.entries[(s.evict + n) % s.used];
    if (e.pending != 0) continue;
    s.evict = (s.evict + n + 1) % s.used;
    resetEntry(s, e, kind, call, context);
    return &e;
  }
  return nullptr;
}

void record(ViolationKind kind, CheckCall call, const void* caller, std::uint32_t count, std::uint32_t context = 0) {
  ThreadState* s = tState;
  if (s == nullptr || count == 0) return;
  OwnWork own;
  Entry* e = entryFor(*s, kind, call, context);
  if (e == nullptr) {
    std::uint32_t& lost = s->unitemised[static_cast<std::size_t>(kind)];
    lost = lost > 0xffffffffu - count ? 0xffffffffu : lost + count;
    s->anyUnitemised = true;
    return;
  }
  if (e->pending == 0) e->firstNs = nowNs();
  e->instance = s->instance;
  e->pending = e->pending > 0xffffffffu - count ? 0xffffffffu : e->pending + count;
  if (e->site[0] != '\0' || caller == nullptr) return;
  if (context == 0) {
    captureSite(caller, e->site, sizeof e->site);
  } else if (inTactus(tCudaCaller)) {
    // The runnable's call into the runtime: its site, not the runtime's own frames.
    std::snprintf(e->site, sizeof e->site, "tail call at the end of the runnable");
  } else {
    describe(static_cast<const char*>(tCudaCaller) - 1, e->site, sizeof e->site);
  }
}

// Reads --allow from TACTUS_CHECK_ALLOW ("kind" or "kind:call", comma separated; tactus-check
// checked the names) and the minor-fault threshold from TACTUS_CHECK_MINOR_FAULTS.
void readSettings() {
  if (const char* env = std::getenv("TACTUS_CHECK_MINOR_FAULTS"); env != nullptr && *env != '\0')
    gMinorFaultThreshold = std::strtol(env, nullptr, 10);
  if (const char* env = std::getenv("TACTUS_CHECK_PAGE_FAULTS"); env != nullptr && std::strcmp(env, "off") == 0)
    gPageFaults = false;
  if (const char* env = std::getenv("TACTUS_CHECK_ENTRIES"); env != nullptr && *env != '\0') {
    const long n = std::strtol(env, nullptr, 10);
    if (n >= 1 && n <= static_cast<long>(limits::kMaxCheckEntries)) gEntries = static_cast<std::uint32_t>(n);
  }
  const char* env = std::getenv("TACTUS_CHECK_ALLOW");
  if (env == nullptr) return;
  std::string_view rest(env);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t colon = item.find(':');
    const std::string_view kindName = item.substr(0, colon);
    for (std::size_t k = 0; k < std::size(kViolationKindNames); ++k) {
      if (kViolationKindNames[k] != kindName) continue;
      if (colon == std::string_view::npos) {
        gAllowKind[k] = true;
        continue;
      }
      const std::string_view callName = item.substr(colon + 1);
      for (std::size_t c = 0; c < std::size(kCheckCallNames); ++c)
        if (kCheckCallNames[c] == callName) gAllowCall[k][c] = true;
    }
  }
}

// Runs when the library is loaded: the settings.
__attribute__((constructor)) void initialize() {
  OwnWork own;
  readSettings();
}

void readFaults(long& major, long& minor) {
  rusage u{};
  if (::getrusage(RUSAGE_THREAD, &u) != 0) return;
  major = u.ru_majflt;
  minor = u.ru_minflt;
}

}  // namespace

void noteViolation(ViolationKind kind, CheckCall call, const void* caller, std::uint32_t count) {
  if (tCudaContext != 0) {
    // Inside a runnable's call into the CUDA runtime: the runtime's work, information.
    if (!allowed(ViolationKind::kInfo, call)) record(ViolationKind::kInfo, call, caller, count, tCudaContext);
    return;
  }
  if (allowed(kind, call) || ownCall(caller)) return;
  record(kind, call, caller, count);
}

bool ownCall(const void* caller) { return directTactusCall(caller); }

CudaScope::CudaScope(CheckCall call, const void* caller) {
  if (!checking() || tCudaContext != 0) return;  // not checked, or the runtime calling itself
  if (ownCall(caller)) {
    mode_ = Mode::kOwn;
    ++tDepth;
    return;
  }
  mode_ = Mode::kContext;
  tCudaContext = static_cast<std::uint32_t>(call) + 1;
  tCudaCaller = caller;
}

CudaScope::~CudaScope() {
  if (mode_ == Mode::kOwn) --tDepth;
  if (mode_ == Mode::kContext) tCudaContext = 0;
}

void* nextSymbol(const char* name) {
  OwnWork own;
  return ::dlsym(RTLD_NEXT, name);
}

}  // namespace tactus::check

using namespace tactus;
using namespace tactus::check;

extern "C" __attribute__((visibility("default"))) void tactusCheckBegin(std::uint32_t instance,
                                                                        std::uint32_t runnable) {
  if (gTactusRangeCount.load(std::memory_order_acquire) < 0) {
    gTactusProbe = __builtin_return_address(0);
    ::pthread_once(&gRangesOnce, findTactusRanges);
  }
  ThreadState* s = tState;
  if (s == nullptr) {
    // Outside any runnable still: the worker is about to start one. Anonymous memory, so the
    // table never touches the client's heap.
    const std::size_t bytes = sizeof(ThreadState) + std::size_t{gEntries} * sizeof(Entry);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    s = static_cast<ThreadState*>(p);
    s->entries = reinterpret_cast<Entry*>(static_cast<char*>(p) + sizeof(ThreadState));
    tState = s;
  }
  s->instance = instance;
  s->runnable = runnable;
  if (gPageFaults) readFaults(s->majorFaults, s->minorFaults);
  tActive = true;
}

extern "C" __attribute__((visibility("default"))) std::uint32_t tactusCheckEnd(EventRecord* out,
                                                                               std::uint32_t capacity) {
  tActive = false;
  ThreadState* s = tState;
  if (s == nullptr) return 0;
  long major = s->majorFaults;
  long minor = s->minorFaults;
  if (gPageFaults) readFaults(major, minor);
  const long majorDelta = major - s->majorFaults;
  const long minorDelta = minor - s->minorFaults;
  if (majorDelta > 0 && !allowed(ViolationKind::kPageFault, CheckCall::kMajorFault))
    record(ViolationKind::kPageFault, CheckCall::kMajorFault, nullptr, static_cast<std::uint32_t>(majorDelta));
  if (minorDelta > gMinorFaultThreshold && !allowed(ViolationKind::kPageFault, CheckCall::kMinorFault))
    record(ViolationKind::kPageFault, CheckCall::kMinorFault, nullptr, static_cast<std::uint32_t>(minorDelta));
  std::uint32_t written = 0;
  // What found the table full belongs to this run's runnable: it goes out first, so it always fits.
  for (std::uint32_t kind = 0; s->anyUnitemised && kind < kKinds; ++kind) {
    if (s->unitemised[kind] == 0) continue;
    if (out != nullptr && written < capacity)
      out[written++] = makeViolationRecord(static_cast<ViolationKind>(kind), CheckCall::kUnitemised, s->instance,
                                           s->runnable, s->unitemised[kind], nowNs(), 0,
                                           kind == static_cast<std::uint32_t>(ViolationKind::kInfo)
                                               ? static_cast<std::uint32_t>(CheckCall::kUnitemised) + 1
                                               : 0);
    s->unitemised[kind] = 0;
  }
  s->anyUnitemised = false;
  for (std::uint32_t k = 0; k < s->used; ++k) {
    Entry& e = s->entries[k];
    if (e.pending == 0) continue;
    const bool page = e.kind == static_cast<std::uint16_t>(ViolationKind::kPageFault);
    const std::size_t length = e.siteSent || page ? 0 : std::strlen(e.site);
    const auto sites = static_cast<std::uint32_t>((length + kViolationSiteBytes - 1) / kViolationSiteBytes);
    if (out == nullptr || written + 1 + sites > capacity) continue;  // stays pending for the next run
    out[written++] = makeViolationRecord(static_cast<ViolationKind>(e.kind), static_cast<CheckCall>(e.call), e.instance,
                                         e.runnable, e.pending, e.firstNs, sites, e.context);
    for (std::uint32_t r = 0; r < sites; ++r)
      out[written++] = makeViolationSiteRecord(e.site, length, r * kViolationSiteBytes);
    e.pending = 0;
    e.siteSent = true;
  }
  return written;
}
