// tactus-check: runs a client program in check mode, the way valgrind or strace wrap a program:
// it preloads libtactus_check.so (LD_PRELOAD), which reports every runnable that allocates,
// blocks, starts a thread or page-faults into the master's event log, then executes the command.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "client_probe.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"
#include "tactus/core/violation.hpp"
#include "tactus_config.h"

namespace {

constexpr const char* kLibraryName = "libtactus_check.so";

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: tactus-check [options] [--] CLIENT_COMMAND [ARGS...]\n"
               "Runs a tactus client in check mode: every runnable that allocates, blocks, starts a thread,\n"
               "page-faults or breaks a CUDA rule is logged as a contract violation in the master's event\n"
               "log (tactus-report LOG SCHEDULE shows them; --violations prints them as CSV).\n"
               "  --allow KIND[:CALL]    do not report KIND (or only its CALL); repeatable, or comma separated\n"
               "                         kinds: allocation, blocking-call, thread-creation, page-fault, cuda-sync,\n"
               "                         default-stream, unified-memory, pageable-copy, and info (the CUDA\n"
               "                         runtime's work inside a runnable's call into it: not a violation)\n"
               "  --minor-faults N       minor page faults one run may take before it is reported (default 16)\n"
               "  --page-faults on|off   read the thread's fault counters around each runnable (default on;\n"
               "                         off saves two system calls per runnable)\n"
               "  --entries N            distinct violations kept per worker thread until reported (default 128,\n"
               "                         at most 65536); occurrences that find them all waiting are counted as\n"
               "                         call 'unitemised' of their kind\n"
               "  --library FILE         the check library to preload (default: beside tactus-check, or installed)\n"
               "  -V, --version          print the version and exit\n"
               "  -h, --help             print this help and exit\n");
}

// Checks one --allow item; returns "" or what is wrong with it.
std::string checkAllow(std::string_view item) {
  const std::size_t colon = item.find(':');
  const std::string_view kind = item.substr(0, colon);
  std::size_t k = 0;
  while (k < std::size(tactus::kViolationKindNames) && tactus::kViolationKindNames[k] != kind) ++k;
  if (k == std::size(tactus::kViolationKindNames)) {
    std::string known;
    for (std::string_view n : tactus::kViolationKindNames) known += (known.empty() ? "" : ", ") + std::string(n);
    return "unknown kind " + tactus::quoted(std::string(kind)) + " (known: " + known + ")";
  }
  if (colon == std::string_view::npos) return "";
  const std::string_view call = item.substr(colon + 1);
  for (std::string_view n : tactus::kCheckCallNames)
    if (n == call) return "";
  return "unknown call " + tactus::quoted(std::string(call)) + " (e.g. malloc, nanosleep, pthread_create)";
}

// The check library: beside this executable (build tree, or an install with both in one folder),
// else where `meson install` puts it.
std::string findLibrary() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/') + 1);
    if (::access((dir + kLibraryName).c_str(), R_OK) == 0) return dir + kLibraryName;
  }
  return TACTUS_CHECK_LIBRARY_INSTALLED;
}

}  // namespace

int main(int argc, char** argv) {
  std::string allow;
  std::string library;
  std::string minorFaults;
  std::string pageFaults = "on";
  std::string entries;
  int k = 1;
  for (; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--") {
      ++k;
      break;
    }
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    }
    if (a == "-V" || a == "--version") {
      std::printf("tactus-check %s\n", TACTUS_VERSION);
      return 0;
    }
    if (a == "--allow" || a == "--library" || a == "--minor-faults" || a == "--page-faults" || a == "--entries") {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "tactus-check: %s needs a value\n(try 'tactus-check --help')\n", a.c_str());
        return 2;
      }
      const std::string v = argv[++k];
      if (a == "--allow") {
        std::string_view rest(v);
        while (true) {
          const std::size_t comma = rest.find(',');
          const std::string problem = checkAllow(rest.substr(0, comma));
          if (!problem.empty()) {
            std::fprintf(stderr, "tactus-check: --allow %s: %s\n", tactus::quoted(v).c_str(), problem.c_str());
            return 2;
          }
          if (comma == std::string_view::npos) break;
          rest = rest.substr(comma + 1);
        }
        allow += (allow.empty() ? "" : ",") + v;
      } else if (a == "--library") {
        library = v;
      } else if (a == "--page-faults") {
        if (v != "on" && v != "off") {
          std::fprintf(stderr, "tactus-check: --page-faults %s: say on or off\n", tactus::quoted(v).c_str());
          return 2;
        }
        pageFaults = v;
      } else if (a == "--entries") {
        char* end = nullptr;
        errno = 0;
        const long value = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || value < 1 || value > tactus::limits::kMaxCheckEntries) {
          std::fprintf(stderr, "tactus-check: --entries %s: not a count from 1 to %u\n", tactus::quoted(v).c_str(),
                       tactus::limits::kMaxCheckEntries);
          return 2;
        }
        entries = v;
      } else {
        char* end = nullptr;
        errno = 0;
        const long value = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || value < 0) {
          std::fprintf(stderr, "tactus-check: --minor-faults %s: not a count (a whole number >= 0)\n",
                       tactus::quoted(v).c_str());
          return 2;
        }
        minorFaults = v;
      }
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tactus-check: unknown option %s\n(try 'tactus-check --help')\n", tactus::quoted(a).c_str());
      return 2;
    }
    break;
  }
  if (k >= argc) {
    std::fprintf(stderr, "tactus-check: no client command given\n");
    usage(stderr);
    return 2;
  }
  if (library.empty()) library = findLibrary();
  if (::access(library.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "tactus-check: check library %s: %s\n", tactus::quoted(library).c_str(), std::strerror(errno));
    return 2;
  }
  // A CUDA runtime linked into the program itself cannot be interposed: say what goes unchecked.
  if (const std::string warning = tactus::check::staticCudartWarning(argv[k]); !warning.empty())
    std::fprintf(stderr, "tactus-check: warning: %s\n", warning.c_str());
  // The check library goes first, before any preload the user set already.
  std::string preload = library;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') preload += std::string(":") + old;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  // A client built with AddressSanitizer refuses to start when its runtime is not first in the
  // library list; the check library must be first (its malloc before the sanitizer's) and
  // forwards to the sanitizer's allocator, so the order check is turned off (README.md).
  std::string asan = "verify_asan_link_order=0";
  if (const char* old = std::getenv("ASAN_OPTIONS"); old != nullptr && *old != '\0')
    asan = std::string(old) + ":" + asan;
  ::setenv("ASAN_OPTIONS", asan.c_str(), 1);
  ::setenv("TACTUS_CHECK_ALLOW", allow.c_str(), 1);
  if (!minorFaults.empty()) ::setenv("TACTUS_CHECK_MINOR_FAULTS", minorFaults.c_str(), 1);
  ::setenv("TACTUS_CHECK_PAGE_FAULTS", pageFaults.c_str(), 1);
  if (!entries.empty()) ::setenv("TACTUS_CHECK_ENTRIES", entries.c_str(), 1);
  ::execvp(argv[k], argv + k);
  std::fprintf(stderr, "tactus-check: cannot run %s: %s\n", tactus::quoted(argv[k]).c_str(), std::strerror(errno));
  return 127;
}
