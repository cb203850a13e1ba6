// Shared-memory segments over Boost.Interprocess (shared_memory_object + mapped_region), with the
// checks that keep a damaged segment from killing a process: size and inode against the name,
// and a SIGBUS guard over the mapping.
#include "tactus/ipc/segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace bip = boost::interprocess;

namespace tactus::ipc {

namespace {

// The guarded mappings, for the SIGBUS handler (async-signal-safe: plain atomics only). A master or
// a client maps one segment per schedule (at most kMaxSchedules), a master the manager channel too,
// a master taking over a stale segment that one for a moment: every one of them is guarded.
struct Guard {
  std::atomic<std::uintptr_t> begin{0};  ///< 0: a free slot
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> fault{false};  ///< the mapping took a SIGBUS
};
constexpr std::size_t kGuards = 2 * limits::kMaxSchedules + 8;
std::array<Guard, kGuards> gGuards;
struct sigaction gPreviousBus {};
std::atomic<bool> gBusHandlerInstalled{false};

void onBus(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Guard& g : gGuards) {
    const std::uintptr_t begin = g.begin.load(std::memory_order_relaxed);
    if (begin == 0 || address < begin || address >= g.end.load(std::memory_order_relaxed)) continue;
    // The object was truncated under the mapping: put a private zero page where the shared one
    // was, so the faulting access completes (reading zeros, writing nowhere) and the process
    // notices busFault() at its next check instead of dying.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    // The faulting address comes as an integer (siginfo); the page start must become a pointer.
    void* at = reinterpret_cast<void*>(address & ~(page - 1));  // NOLINT(performance-no-int-to-ptr)
    if (::mmap(at, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      g.fault.store(true, std::memory_order_relaxed);
      return;
    }
    break;
  }
  // Not ours: what would have happened without us.
  if ((gPreviousBus.sa_flags & SA_SIGINFO) != 0 && gPreviousBus.sa_sigaction != nullptr) {
    gPreviousBus.sa_sigaction(sig, info, context);
    return;
  }
  if (gPreviousBus.sa_handler != SIG_DFL && gPreviousBus.sa_handler != SIG_IGN && gPreviousBus.sa_handler != nullptr) {
    gPreviousBus.sa_handler(sig);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

std::string errnoText(int error) {
  return std::string(std::strerror(error)) + " (errno " + std::to_string(error) + ")";
}

}  // namespace

ChosenInstance chooseInstance(const std::string& given, const std::string& givenSource,
                              const std::string& defaultSource) {
  if (!given.empty()) return {given, givenSource};
  const char* env = std::getenv("TACTUS_INSTANCE");
  if (env != nullptr && *env != '\0') return {env, "TACTUS_INSTANCE"};
  return {kDefaultInstance, defaultSource};
}

Result<void> validateInstanceName(const std::string& instance) {
  if (instance.empty() || instance.size() > 64 || instance[0] == '.') {
    return fail(ErrorCode::kBadParameter,
                "instance name " + quoted(instance, 256) + " must be 1 to 64 characters and not start with '.'");
  }
  for (const char c : instance) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) {
      return fail(ErrorCode::kBadParameter,
                  "instance name " + quoted(instance, 256) + " may only contain letters, digits, '_', '-' and '.'");
    }
  }
  return {};
}

std::string segmentName(const std::string& instance) { return "tactus_" + instance; }

std::string segmentPath(const std::string& instance) { return "/dev/shm/" + segmentName(instance); }

struct Segment::Impl {
  bip::shared_memory_object object;
  bip::mapped_region region;
  Guard* guard = nullptr;  ///< its slot in gGuards once guarded
  ~Impl() {
    if (guard == nullptr) return;
    guard->end.store(0);  // first: the handler no longer takes the range for a guarded one
    guard->begin.store(0);
  }
};

Segment::Segment() = default;
Segment::Segment(Segment&&) noexcept = default;
Segment& Segment::operator=(Segment&&) noexcept = default;
Segment::~Segment() = default;

std::span<std::byte> Segment::bytes() const {
  if (!impl_) return {};
  return {static_cast<std::byte*>(impl_->region.get_address()), impl_->region.get_size()};
}

bool Segment::removeNameIfStillOurs(const std::string& instance) const {
  if (!impl_) return false;
  struct stat mine {};
  struct stat named {};
  if (::fstat(impl_->object.get_mapping_handle().handle, &mine) != 0) return false;
  if (::lstat(segmentPath(instance).c_str(), &named) != 0) return false;
  if (mine.st_dev != named.st_dev || mine.st_ino != named.st_ino) return false;
  // The remaining window is a check-then-unlink race: a new master could replace the name
  // between the stat above and the unlink below. A new master tolerates it because it replaces
  // stale segments anyway (it finds this one, removes it and creates its own); only a master that
  // does all of that inside this few-microsecond window would lose its fresh name.
  return removeSegment(instance);
}

namespace {

// A write lock on byte `offset` as an open-file-description lock (F_OFD_*: l_pid must be 0).
struct flock byteLock(std::size_t offset) {
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(offset);
  l.l_len = 1;
  return l;
}

}  // namespace

int Segment::holdLock(std::size_t offset) const {
  if (!impl_) return EBADF;
  struct flock l = byteLock(offset);
  return ::fcntl(impl_->object.get_mapping_handle().handle, F_OFD_SETLK, &l) == 0 ? 0 : errno;
}

bool Segment::lockHeldElsewhere(std::size_t offset) const {
  if (!impl_) return false;
  struct flock l = byteLock(offset);
  return ::fcntl(impl_->object.get_mapping_handle().handle, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

std::string Segment::damage(const std::string& instance, bool checkName, const std::string& who) const {
  if (!impl_) return "";
  // First the fault, then the size: the kernel shrinks the size before it takes the pages away, so
  // a fault seen here has its truncation visible to the fstat below.
  const bool faulted = busFault();
  struct stat mine {};
  if (::fstat(impl_->object.get_mapping_handle().handle, &mine) != 0) {
    return faulted ? "truncated (" + who + "'s mapping took a SIGBUS)" : "";
  }
  const std::size_t mapped = impl_->region.get_size();
  if (static_cast<std::uint64_t>(mine.st_size) < mapped) {
    return "truncated to " + std::to_string(mine.st_size) + " of " + std::to_string(mapped) + " bytes";
  }
  if (checkName) {
    struct stat named {};
    if (::lstat(segmentPath(instance).c_str(), &named) != 0) return "removed from " + segmentPath(instance);
    if (named.st_dev != mine.st_dev || named.st_ino != mine.st_ino) {
      return "replaced: " + segmentPath(instance) + " is now another file";
    }
  }
  if (faulted) return "truncated (" + who + "'s mapping took a SIGBUS)";
  return "";
}

void Segment::guardAgainstTruncation() const {
  if (!impl_ || impl_->guard != nullptr) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(impl_->region.get_address());
  for (Guard& g : gGuards) {
    std::uintptr_t free = 0;
    if (!g.begin.compare_exchange_strong(free, begin)) continue;
    g.fault.store(false);
    g.end.store(begin + impl_->region.get_size());
    impl_->guard = &g;
    break;
  }
  if (!gBusHandlerInstalled.exchange(true)) {
    struct sigaction sa {};
    sa.sa_sigaction = onBus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &gPreviousBus);
  }
}

bool Segment::busFault() const noexcept {
  return impl_ && impl_->guard != nullptr && impl_->guard->fault.load(std::memory_order_relaxed);
}

std::string describeForeignFile(const std::string& instance) {
  const std::string path = segmentPath(instance);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  std::string kind = S_ISLNK(st.st_mode)   ? "a symbolic link"
                     : S_ISDIR(st.st_mode) ? "a directory"
                     : S_ISREG(st.st_mode) ? "a file"
                                           : "a special file";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  std::string text = path + " is " + kind + " owned by uid " + std::to_string(st.st_uid) + " (mode " + mode + ")";
  if (st.st_uid != ::geteuid()) text += ", not by this user (uid " + std::to_string(::geteuid()) + ")";
  return text;
}

Result<Segment> Segment::create(const std::string& instance, std::size_t size) {
  if (auto ok = validateInstanceName(instance); !ok) return ok.error();
  const std::string name = segmentName(instance);
  try {
    auto impl = std::make_unique<Impl>();
    bip::permissions perms(S_IRUSR | S_IWUSR);  // 0600: only this user's processes may attach
    impl->object = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, perms);
    impl->object.truncate(static_cast<bip::offset_t>(size));
    impl->region = bip::mapped_region(impl->object, bip::read_write, 0, size);
    // ftruncate zero-fills; no memset needed (and it would touch every page twice).
    Segment segment;
    segment.impl_ = std::move(impl);
    return segment;
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error) {
      return fail(ErrorCode::kAlreadyExists, segmentPath(instance) + ": segment exists already");
    }
    return fail(ErrorCode::kIo,
                segmentPath(instance) + ": cannot create shared memory: " + errnoText(e.get_native_error()));
  }
}

Result<Segment> Segment::open(const std::string& instance) { return openMapped(instance, false); }

Result<Segment> Segment::openReadOnly(const std::string& instance) { return openMapped(instance, true); }

Result<Segment> Segment::openMapped(const std::string& instance, bool readOnly) {
  if (auto ok = validateInstanceName(instance); !ok) return ok.error();
  const std::string name = segmentName(instance);
  const bip::mode_t mode = readOnly ? bip::read_only : bip::read_write;
  try {
    auto impl = std::make_unique<Impl>();
    impl->object = bip::shared_memory_object(bip::open_only, name.c_str(), mode);
    bip::offset_t size = 0;
    if (!impl->object.get_size(size) || size <= 0) {
      return fail(ErrorCode::kNotFound, segmentPath(instance) + ": segment is still empty");
    }
    impl->region = bip::mapped_region(impl->object, mode);
    Segment segment;
    segment.impl_ = std::move(impl);
    return segment;
  } catch (const bip::interprocess_exception& e) {
    const int error = e.get_native_error();
    if (e.get_error_code() == bip::not_found_error || error == ENOENT) {
      return fail(ErrorCode::kNotFound, segmentPath(instance) + ": no such segment");
    }
    std::string text = segmentPath(instance) + ": cannot open shared memory: " + errnoText(error);
    if (const std::string what = describeForeignFile(instance); !what.empty()) text += "; " + what;
    return fail(ErrorCode::kIo, text);
  }
}

bool removeSegment(const std::string& instance) { return unlinkSegment(instance).has_value(); }

Result<void> unlinkSegment(const std::string& instance) {
  const std::string path = segmentPath(instance);
  if (::shm_unlink(segmentName(instance).c_str()) == 0) return {};
  const int error = errno;
  std::string text = path + ": cannot remove it: " + errnoText(error);
  if (const std::string what = describeForeignFile(instance); !what.empty()) text += "; " + what;
  return fail(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, text);
}

bool segmentExists(const std::string& instance) {
  struct stat st {};
  return ::lstat(segmentPath(instance).c_str(), &st) == 0;
}

}  // namespace tactus::ipc
