// tactus-check: runs a client program in check mode, the way valgrind or strace wrap a program:
// it preloads libtactus_check.so (LD_PRELOAD), which reports every runnable that allocates,
// blocks, starts a thread or page-faults into the master's event log, then executes the command.
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "client_probe.hpp"
#include "tactus/core/command_line.hpp"
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
               "Options take --name=value or --name value; the first argument that is not an option (or\n"
               "the one after --) starts the client command.\n"
               "options:\n"
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
               "  --library FILE         the check library to preload (default: beside tactus-check, else in the\n"
               "                         lib folder of the installed tree tactus-check is in, else installed)\n"
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

// The check library: beside this executable (the build tree, or an install with both in one
// folder), else in the libdir of the installed tree this executable is in (relative to its folder,
// so a moved tree finds its own), else where `meson install` put it.
std::string findLibrary() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/') + 1);
    if (::access((dir + kLibraryName).c_str(), R_OK) == 0) return dir + kLibraryName;
    const std::string_view libdir = TACTUS_CHECK_LIBDIR_FROM_BINDIR;  // absolute: not relative to us
    const std::string installed = dir + std::string(libdir) + "/" + kLibraryName;
    char real[PATH_MAX];  // without the bin/.. of the path from here, for LD_PRELOAD and messages
    if (!libdir.empty() && libdir[0] != '/' && ::realpath(installed.c_str(), real) != nullptr &&
        ::access(real, R_OK) == 0)
      return real;
  }
  return TACTUS_CHECK_LIBRARY_INSTALLED;
}

// The options before the client command, on the tools' one parser (--allow may repeat).
const std::vector<tactus::OptionSpec>& specs() {
  static const std::vector<tactus::OptionSpec> kSpecs = {
      {"allow", 0, "KIND", "", {}, true}, {"minor-faults", 0, "N", "", {}}, {"page-faults", 0, "MODE", "", {}},
      {"entries", 0, "N", "", {}},        {"library", 0, "FILE", "", {}},   {"version", 'V', "", "", {}},
      {"help", 'h', "", "", {}},
  };
  return kSpecs;
}

// Where the client command starts: after `--`, or at the first argument that is neither an option
// nor the value of one (like env or strace, tactus-check's own options come first).
int commandStart(int argc, char** argv) {
  for (int k = 1; k < argc; ++k) {
    const std::string_view a = argv[k];
    if (a == "--") return k;
    if (a.size() < 2 || a[0] != '-') return k;
    if (a.find('=') != std::string_view::npos) continue;
    for (const tactus::OptionSpec& s : specs()) {
      const bool named = a == "--" + s.longName || (s.shortName != 0 && a.size() == 2 && a[1] == s.shortName);
      if (named && !s.valueName.empty()) ++k;  // its value
    }
  }
  return argc;
}

}  // namespace

// The command; main only catches what escapes it (out of memory while parsing).
int runCheck(int argc, char** argv) {
  std::string allow;
  std::string library;
  std::string minorFaults;
  std::string pageFaults = "on";
  std::string entries;
  int k = commandStart(argc, argv);
  auto line = tactus::parseCommandLine(specs(), std::vector<std::string>(argv + 1, argv + std::min(k, argc)));
  if (k < argc && std::string_view(argv[k]) == "--") ++k;
  if (!line) {
    std::fprintf(stderr, "tactus-check: %s\n(try 'tactus-check --help')\n", line.error().message.c_str());
    return 2;
  }
  for (const tactus::ParsedOption& o : line->options) {
    const std::string& a = o.spelled;
    const std::string& v = o.value;
    if (o.name == "help") {
      usage(stdout);
      return 0;
    }
    if (o.name == "version") {
      std::printf("tactus-check %s\n", TACTUS_VERSION);
      return 0;
    }
    if (o.name == "allow") {
      std::string_view rest(v);
      while (true) {
        const std::size_t comma = rest.find(',');
        const std::string problem = checkAllow(rest.substr(0, comma));
        if (!problem.empty()) {
          std::fprintf(stderr, "tactus-check: %s %s: %s\n", a.c_str(), tactus::quoted(v).c_str(), problem.c_str());
          return 2;
        }
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      allow += (allow.empty() ? "" : ",") + v;
    } else if (o.name == "library") {
      library = v;
    } else if (o.name == "page-faults") {
      if (v != "on" && v != "off") {
        std::fprintf(stderr, "tactus-check: %s %s: say on or off\n", a.c_str(), tactus::quoted(v).c_str());
        return 2;
      }
      pageFaults = v;
    } else if (o.name == "entries") {
      char* end = nullptr;
      errno = 0;
      const long value = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || value < 1 || value > tactus::limits::kMaxCheckEntries) {
        std::fprintf(stderr, "tactus-check: %s %s: not a count from 1 to %u\n", a.c_str(), tactus::quoted(v).c_str(),
                     tactus::limits::kMaxCheckEntries);
        return 2;
      }
      entries = v;
    } else {
      char* end = nullptr;
      errno = 0;
      const long value = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || value < 0) {
        std::fprintf(stderr, "tactus-check: %s %s: not a count (a whole number >= 0)\n", a.c_str(),
                     tactus::quoted(v).c_str());
        return 2;
      }
      minorFaults = v;
    }
  }
  if (k >= argc) {
    std::fprintf(stderr, "tactus-check: no client command given\n");
    usage(stderr);
    return 2;
  }
  const bool libraryGiven = !library.empty();
  if (!libraryGiven) library = findLibrary();
  if (::access(library.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "tactus-check: check library %s: %s%s\n", tactus::quoted(library).c_str(),
                 std::strerror(errno),
                 libraryGiven ? ""
                              : " (not beside tactus-check, nor in the lib folder of its installed tree, "
                                "nor at the configured path: pass --library FILE)");
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

int main(int argc, char** argv) {
  try {
    return runCheck(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tactus-check: internal error: %s\n", e.what());
    return 1;
  }
}
