// tactus-launch --units: the application as systemd units, on the conventions of
// samples/systemd/ (an instance target; a Type=notify master PartOf= it; clients PartOf= the target
// and the master, After= the master; exit status 2 never restarted), with the launch file's
// values written in: concrete units, instance-named as the templates' instances are. Under a
// schedule manager with `start:`, a oneshot manager unit starts that schedule (as
// tactus-manager@.service does). Before writing, it warns about what would end a deployed run.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "launch.hpp"

namespace tactus::launch {
namespace {

// One argument of ExecStart= (or value of Environment=): '%' specifiers and (execArg) '$'
// variables escaped, quoted when it has a blank, a quote or a backslash or is empty.
std::string unitWord(const std::string& s, bool execArg) {
  std::string out;
  bool quote = s.empty();
  for (char c : s) {
    if (c == '%') {
      out += "%%";
    } else if (c == '$' && execArg) {
      out += "$$";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
      quote = true;
    } else {
      quote = quote || c == ' ' || c == '\t' || c == '\'' || c == ';';
      out += c;
    }
  }
  return quote ? "\"" + out + "\"" : out;
}

std::string execLine(const std::vector<std::string>& argv) {
  std::string out = "ExecStart=";
  for (std::size_t i = 0; i < argv.size(); ++i) out += (i == 0 ? "" : " ") + unitWord(argv[i], true);
  return out + "\n";
}

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) std::fprintf(stderr, "tactus-launch: cannot write %s\n", path.c_str());
  return static_cast<bool>(f);
}

std::string masterUnit(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts) {
  const std::string& i = cfg.instance;
  std::vector<std::string> argv = masterCommand(cfg, schedules, opts);
  bool timeout = false;
  for (const std::string& a : cfg.masterArgs)
    timeout = timeout || a.rfind("-t", 0) == 0 || a.rfind("--timeout-us", 0) == 0;
  if (!timeout) argv.insert(argv.end(), {"-t", "-1"});  // clients may start in any order
  return "# tactus-master@" + i + ".service: written by tactus-launch --units from " + cfg.file +
         "; the conventions of\n# samples/systemd/tactus-master@.service (see its README.md).\n"
         "[Unit]\nDescription=tactus master, instance " +
         i + "\nAfter=local-fs.target\nPartOf=tactus@" + i +
         ".target\n\n[Service]\nType=notify\nNotifyAccess=main\nWatchdogSec=10s\nTimeoutStartSec=30s\n"
         "WorkingDirectory=" +
         unitWord(cfg.dir, false) + "\nEnvironment=TACTUS_LOG_KEEP=10\n" + execLine(argv) +
         "KillMode=mixed\nKillSignal=SIGTERM\nTimeoutStopSec=10\nRestart=on-failure\nRestartSec=2\n"
         "RestartPreventExitStatus=2\nLimitRTPRIO=99\nLimitMEMLOCK=infinity\n\n[Install]\nWantedBy=tactus@" +
         i + ".target\n";
}

std::string clientUnit(const LaunchConfig& cfg, const ClientSpec& c) {
  const std::string& i = cfg.instance;
  std::vector<std::string> argv = c.command;
  argv[0] = std::filesystem::absolute(onPath(argv[0])).lexically_normal().string();
  std::string env = "Environment=TACTUS_INSTANCE=" + i + "\n";
  for (const auto& [k, v] : c.env) {
    std::string assignment = k;
    assignment += '=';
    assignment += v;
    env += "Environment=" + unitWord(assignment, false) + "\n";
  }
  return "# tactus-client-" + i + "@" + c.name + ".service: written by tactus-launch --units from " + cfg.file +
         "; the conventions\n# of samples/systemd/tactus-client-INSTANCE@.service (see its README.md).\n"
         "[Unit]\nDescription=tactus client " +
         c.name + " of instance " + i +
         "\nAfter=local-fs.target\n"
         "PartOf=tactus@" +
         i + ".target\nPartOf=tactus-master@" + i + ".service\nAfter=tactus-master@" + i +
         ".service\n\n[Service]\nType=notify\nNotifyAccess=main\nTimeoutStartSec=infinity\nWorkingDirectory=" +
         unitWord(cfg.dir, false) + "\n" + env + execLine(argv) +
         "Restart=always\nRestartSec=1\nRestartPreventExitStatus=2\nKillSignal=SIGTERM\nTimeoutStopSec=10\n"
         "LimitRTPRIO=99\nLimitMEMLOCK=infinity\n\n[Install]\nWantedBy=tactus@" +
         i + ".target\n";
}

// tactus-manager@INSTANCE.service's conventions: a oneshot that starts `start:` once the master is
// there (the start waits for every client) and ends the run when stopped.
std::string managerUnit(const LaunchConfig& cfg, const LaunchOptions& opts) {
  const std::string& i = cfg.instance;
  const std::string tool = findTool(opts.binDir, "tactus-manager");
  const std::vector<std::string> start = {
      tool, "-D", i, "-N", cfg.manager, "-t", "-1", "start", std::to_string(cfg.start)};
  std::string stop = execLine({tool, "-D", i, "-N", cfg.manager, "-t", "5000", "exit"});
  stop.replace(0, std::string("ExecStart=").size(), "ExecStop=");
  return "# tactus-manager@" + i + ".service: written by tactus-launch --units from " + cfg.file +
         "; the conventions of\n# samples/systemd/tactus-manager@.service (see its README.md).\n"
         "[Unit]\nDescription=tactus schedule manager, instance " +
         i + "\nRequires=tactus-master@" + i + ".service\nAfter=tactus-master@" + i + ".service\nPartOf=tactus@" + i +
         ".target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n" + execLine(start) + stop +
         "\n[Install]\nWantedBy=tactus@" + i + ".target\n";
}

// What would end a deployed run, or break it at its next start, said before the units are written.
void warnDeployment(const LaunchConfig& cfg, const std::vector<std::string>& schedules) {
  if (hasEpochsOption(cfg.masterArgs))
    std::fprintf(stderr,
                 "tactus-launch: warning: the master's -e ends the deployed run after its iterations: the master "
                 "exits 0 and systemd does not restart it (Restart=on-failure); leave -e out of `master:` to deploy\n");
  if (const std::string log = logOption(cfg.masterArgs); !log.empty() && log[0] != '/')
    std::fprintf(stderr,
                 "tactus-launch: warning: the master's -l %s is a relative path: the unit writes it under %s "
                 "(WorkingDirectory=); if that folder moves or the service may not write there the master fails "
                 "at start and is not restarted; give an absolute path (e.g. /var/log/tactus/%s.tlog)\n",
                 log.c_str(), cfg.dir.c_str(), cfg.instance.c_str());
  for (const ClientSpec& c : cfg.clients) {
    if (c.onExit == OnExit::kIgnore)
      std::fprintf(stderr,
                   "tactus-launch: note: client %s has on_exit: ignore; its unit restarts it (Restart=always) and "
                   "the master's policy decides what its death does\n",
                   c.name.c_str());
  }
  std::string list;
  for (const std::string& s : schedules) list += "\n  " + s;
  std::fprintf(stderr,
               "tactus-launch: the master's unit reads these schedule files at every start: they must stay where "
               "they are (or write the units again after moving them):%s\n",
               list.c_str());
}

}  // namespace

int writeUnits(const LaunchConfig& cfg, const std::vector<std::string>& schedules, const LaunchOptions& opts) {
  const std::string& i = cfg.instance;
  warnDeployment(cfg, schedules);
  std::error_code ec;
  std::filesystem::create_directories(opts.unitsDir, ec);
  const std::string dir = opts.unitsDir + "/";
  std::string wants = "tactus-master@" + i + ".service";
  for (const ClientSpec& c : cfg.clients) wants += " tactus-client-" + i + "@" + c.name + ".service";
  if (cfg.start >= 0) wants += " tactus-manager@" + i + ".service";
  const std::string target = "# tactus@" + i + ".target: written by tactus-launch --units from " + cfg.file +
                             ": the instance as a whole.\n[Unit]\nDescription=tactus instance " + i +
                             " (master and clients)\nWants=" + wants + "\n\n[Install]\nWantedBy=multi-user.target\n";
  std::vector<std::string> written = {"tactus@" + i + ".target", "tactus-master@" + i + ".service"};
  std::vector<std::string> absolute;
  absolute.reserve(schedules.size());
  for (const std::string& s : schedules) absolute.push_back(std::filesystem::absolute(s).lexically_normal().string());
  bool ok = writeFile(dir + written[0], target) && writeFile(dir + written[1], masterUnit(cfg, absolute, opts));
  for (const ClientSpec& c : cfg.clients) {
    written.push_back("tactus-client-" + i + "@" + c.name + ".service");
    ok = ok && writeFile(dir + written.back(), clientUnit(cfg, c));
  }
  if (cfg.start >= 0) {
    written.push_back("tactus-manager@" + i + ".service");
    ok = ok && writeFile(dir + written.back(), managerUnit(cfg, opts));
  }
  if (!ok) return 1;
  for (const std::string& w : written) std::printf("tactus-launch: wrote %s%s\n", dir.c_str(), w.c_str());
  std::printf(
      "install: sudo cp %s*.target %s*.service /etc/systemd/system/ && sudo systemctl daemon-reload"
      " && sudo systemctl enable --now tactus@%s.target\n",
      dir.c_str(), dir.c_str(), i.c_str());
  return 0;
}

}  // namespace tactus::launch
