// tactus-master's entry points (the command line is in master_args.cpp): runMaster composes the
// one run (run.hpp) of every kind: one schedule or several under a schedule manager, on one
// machine or one SoC of several; setUpMasterProcess applies the process-wide options.
#include "master.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <ostream>

#include "run/run.hpp"

namespace tactus::master {

int runMaster(const MasterOptions& options, std::ostream& out, std::ostream& err) {
  try {
    Run run(options, out, err);
    return run.execute();
  } catch (const std::exception& e) {
    err << "tactus-master: internal error: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

int setUpMasterProcess(const MasterOptions& o, std::ostream& err) {
  if (o.priority > 0) {
    sched_param param{};
    param.sched_priority = o.priority;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      err << "tactus-master: cannot use SCHED_FIFO priority " << o.priority << ": " << std::strerror(errno)
          << " (needs CAP_SYS_NICE or an rtprio limit)\n";
      return kExitBadInput;
    }
  }
  if (o.core >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.core, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      err << "tactus-master: cannot pin to core " << o.core << ": " << std::strerror(errno) << "\n";
      return kExitBadInput;
    }
  }
  if (o.lockMemory && ::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    err << "tactus-master: cannot lock memory (-M): " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace tactus::master
