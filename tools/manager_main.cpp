// tactus-manager: the schedule manager as a command, for people and init systems. Each call
// attaches to the master's request channel, makes one synchronous request and detaches (a
// detached manager does not end the run; only a manager that dies while attached does).
//
//   tactus-manager -D demo start 101
//   tactus-manager -D demo rollover 102 101
//   tactus-manager -D demo status
//   tactus-manager -D demo exit
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "tactus/manager.hpp"

namespace {

constexpr const char* kUsage =
    "usage: tactus-manager [-D instance] [-N name] [-t ms] COMMAND\n"
    "  start ID            start schedule ID (nothing may be running)\n"
    "  stop ID             stop schedule ID: every hyperepoch finishes its iteration\n"
    "  rollover START STOP switch from STOP to START per hyperepoch\n"
    "  status              the running schedule, its iterations and overruns\n"
    "  exit                end the run: every client returns, the master exits 0\n"
    "  -D NAME   the master's instance (default 'default')\n"
    "  -N NAME   the manager name the master was started with (default: the one it expects)\n"
    "  -t MS     wait at most MS milliseconds for the master (default 5000; -1 forever)\n"
    "exit status: 0 done; 1 the master refused the request (message on stderr); 2 bad arguments\n";

// A schedule identifier argument (0..65535).
bool parseId(const std::string& text, std::uint16_t& id) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long v = std::stoul(text);
  if (v > 0xffff) return false;
  id = static_cast<std::uint16_t>(v);
  return true;
}

int run(const std::vector<std::string>& args) {
  tactus::manager::ManagerOptions options;
  options.timeoutMs = 5000;
  std::string name;
  std::vector<std::string> command;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "-D" || a == "-N" || a == "-t") {
      if (i + 1 >= args.size()) {
        std::cerr << "tactus-manager: option '" << a << "' needs a value\n";
        return 2;
      }
      const std::string& v = args[++i];
      if (a == "-D") {
        options.instance = v;
      } else if (a == "-N") {
        name = v;
      } else {
        try {
          options.timeoutMs = std::stoll(v);
        } catch (...) {
          std::cerr << "tactus-manager: -t expects milliseconds, got '" << v << "'\n";
          return 2;
        }
      }
    } else {
      command.push_back(a);
    }
  }
  if (command.empty()) {
    std::cerr << "tactus-manager: missing command\n" << kUsage;
    return 2;
  }
  const std::string& verb = command[0];
  const std::size_t want = verb == "start" || verb == "stop" ? 2 : verb == "rollover" ? 3 : 1;
  if ((verb != "start" && verb != "stop" && verb != "rollover" && verb != "status" && verb != "exit") ||
      command.size() != want) {
    std::cerr << "tactus-manager: bad command '";
    for (std::size_t k = 0; k < command.size(); ++k) std::cerr << (k ? " " : "") << command[k];
    std::cerr << "'\n" << kUsage;
    return 2;
  }
  std::uint16_t a = 0;
  std::uint16_t b = 0;
  if (want >= 2 && !parseId(command[1], a)) {
    std::cerr << "tactus-manager: '" << command[1] << "' is no schedule identifier (0..65535)\n";
    return 2;
  }
  if (want == 3 && !parseId(command[2], b)) {
    std::cerr << "tactus-manager: '" << command[2] << "' is no schedule identifier (0..65535)\n";
    return 2;
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
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "tactus-manager: internal error: " << e.what() << "\n";
    return 1;
  }
}
