// tactus-manager: the schedule manager as a command, for people and init systems. Each call
// attaches to the master's request channel, makes one synchronous request and detaches (a
// detached manager does not end the run; only a manager that dies while attached does).
//
//   tactus-manager -D demo start 101
//   tactus-manager -D demo rollover 102 101
//   tactus-manager -D demo status
//   tactus-manager -D demo exit
#include <charconv>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "tactus/core/command_line.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus/manager.hpp"
#include "tactus_config.h"
#include "top.hpp"

namespace {

// On the tools' one parser (core/command_line.hpp); -D is STM's discriminator, as for the master.
const std::vector<tactus::OptionSpec>& specs() {
  static const std::vector<tactus::OptionSpec> kSpecs = {
      {"discriminator", 'D', "NAME", "the master's instance (default: $TACTUS_INSTANCE, else 'default')", {}},
      {"manager", 'N', "NAME", "the manager name the master was started with (default: the one it expects)", {}},
      {"timeout-ms", 't', "MS", "wait at most MS milliseconds for the master (default 5000; -1 forever)", {}},
      {"version", 'V', "", "print the version and exit", {}},
      {"help", 'h', "", "print this help and exit", {}},
  };
  return kSpecs;
}

std::string usage() {
  return "usage: tactus-manager [-D INSTANCE] [-N NAME] [-t MS] COMMAND\n"
         "\n"
         "The schedule manager as a command: attaches to the master of the instance (started with -N),\n"
         "makes one synchronous request and detaches. Options take --name=value or --name value.\n"
         "\n"
         "commands:\n"
         "  start ID            start schedule ID (nothing may be running)\n"
         "  stop ID             stop schedule ID: every hyperepoch finishes its iteration\n"
         "  rollover START STOP switch from STOP to START per hyperepoch\n"
         "  status              the running schedule, its iterations and overruns (also on a master\n"
         "                      without -N: its schedule, state, iterations, overruns and clients)\n"
         "  exit                end the run: every client returns, the master exits 0\n"
         "\n"
         "options:\n" +
         tactus::optionsHelp(specs()) +
         "\n"
         "exit status: 0 done; 1 the master refused the request (message on stderr); 2 bad arguments\n";
}

// A schedule identifier argument (0..65535).
bool parseId(const std::string& text, std::uint16_t& id) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long v = std::stoul(text);
  if (v > 0xffff) return false;
  id = static_cast<std::uint16_t>(v);
  return true;
}

// status of a plain run: the schedule, its state, iterations, overruns and clients.
int plainStatus(const std::string& instance) {
  auto snapshot = tactus::top::takeSnapshot(instance);
  if (!snapshot) {
    std::cerr << "tactus-manager: status: " << snapshot.error().message << "\n";
    return 1;
  }
  std::cout << tactus::top::plainStatus(*snapshot);
  return 0;
}

int run(const std::vector<std::string>& args) {
  tactus::manager::ManagerOptions options;
  options.timeoutMs = 5000;
  options.oneShot = true;  // a supervisor's time-out that kills this command must not end the run
  tactus::CommandLine line;
  if (const int code = tactus::top::startCommandLine("tactus-manager", specs(), usage(), true, args, std::cout,
                                                     std::cerr, line, options.instance);
      code >= 0)
    return code;
  std::string name;
  if (const auto* o = line.find("manager")) name = o->value;
  if (const auto* o = line.find("timeout-ms")) {
    long long ms = 0;
    const char* end = o->value.data() + o->value.size();
    auto [p, ec] = std::from_chars(o->value.data(), end, ms);
    if (ec != std::errc() || p != end || ms < -1) {
      std::cerr << "tactus-manager: " << o->spelled << " expects milliseconds >= 0 or -1 (forever), got "
                << tactus::quoted(o->value) << "\n";
      return 2;
    }
    options.timeoutMs = ms;
  }
  const std::vector<std::string>& command = line.operands;
  if (command.empty()) {
    std::cerr << "tactus-manager: missing command (start, stop, rollover, status or exit)\n"
              << "try 'tactus-manager --help'\n";
    return 2;
  }
  const std::string& verb = command[0];
  const std::size_t want = verb == "start" || verb == "stop" ? 2 : verb == "rollover" ? 3 : 1;
  if ((verb != "start" && verb != "stop" && verb != "rollover" && verb != "status" && verb != "exit") ||
      command.size() != want) {
    std::cerr << "tactus-manager: bad command '";
    for (std::size_t k = 0; k < command.size(); ++k) std::cerr << (k ? " " : "") << command[k];
    std::cerr << "'\ntry 'tactus-manager --help'\n";
    return 2;
  }
  std::uint16_t a = 0, b = 0;
  for (std::size_t k = 1; k < want; ++k) {
    if (!parseId(command[k], k == 1 ? a : b)) {
      std::cerr << "tactus-manager: '" << command[k] << "' is no schedule identifier (0..65535)\n";
      return 2;
    }
  }
  // status on a run without a manager (no -N, so no channel): answered from what the master
  // publishes in its segment, as tactus-top reads it.
  if (verb == "status") {
    const std::string instance = tactus::ipc::chooseInstance(options.instance).name;
    if (tactus::ipc::validateInstanceName(instance) && tactus::ipc::segmentExists(instance) &&
        !tactus::ipc::segmentExists(tactus::shm::managerInstanceName(instance))) {
      return plainStatus(instance);
    }
  }
  if (auto ok = tactus::manager::init(name, options); !ok) {
    std::cerr << "tactus-manager: " << ok.error().message << "\n";
    return 1;
  }
  tactus::Result<void> result;
  if (verb == "start") {
    result = tactus::manager::startSchedule(a);
  } else if (verb == "stop") {
    result = tactus::manager::stopSchedule(a);
  } else if (verb == "rollover") {
    result = tactus::manager::rollOverSchedule(a, b);
  } else if (verb == "exit") {
    result = tactus::manager::exitRun();
  } else {
    auto s = tactus::manager::status();
    if (s) {
      if (s->running) {
        std::cout << "running schedule " << s->schedule << ", " << s->iterations << " iterations, " << s->overruns
                  << " overruns\n";
      } else {
        std::cout << "no schedule running (" << s->scheduleCount << " loaded)\n";
      }
    } else {
      result = s.error();
    }
  }
  tactus::manager::shutdown();
  if (!result) {
    std::cerr << "tactus-manager: " << verb << ": " << result.error().message << "\n";
    return 1;
  }
  // A request that went well says what it did (status printed its answer above).
  if (verb == "start") std::cout << "tactus-manager: started schedule " << a << "\n";
  else if (verb == "stop") std::cout << "tactus-manager: stopped schedule " << a << "\n";
  else if (verb == "rollover") std::cout << "tactus-manager: rolled over from schedule " << b << " to " << a << "\n";
  else if (verb == "exit") std::cout << "tactus-manager: the run ends\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return tactus::finishStandardOutput("tactus-manager", run(std::vector<std::string>(argv + 1, argv + argc)));
  } catch (const std::exception& e) {
    std::cerr << "tactus-manager: internal error: " << e.what() << "\n";
    return 1;
  }
}
