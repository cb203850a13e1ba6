// tactus-launch's command: options, finding the tools, compiling a graph, dispatch.
#include "launch.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <utility>

#include "tactus/core/command_line.hpp"
#include "tactus_config.h"

namespace tactus::launch {
namespace {

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"units", 'u', "DIR", "write systemd units for the application to DIR instead of running it", {}},
      {"bin",
       'b',
       "DIR",
       "where tactus-master, tactus-compile and tactus-manager are (default: beside tactus-launch, the build "
       "tree, PATH)",
       {}},
      {"build", 0, "DIR", "a build tree: its master/, compiler/ and tools/ folders hold the tools", {}},
      {"seed", 0, "N", "the seed of `order: random` (default: a new one, printed)", {}},
      {"grace", 0, "SECONDS", "after SIGTERM to the master, before SIGTERM to the clients still alive (default 2)", {}},
      {"kill-after", 0, "SECONDS", "after the stop began, SIGKILL to whatever is left (default 10)", {}},
      {"no-color", 0, "", "no colours in the prefixes (default: colours when standard output is a terminal)", {}},
      {"version", 'V', "", "print the version", {}},
      {"help", 'h', "", "print this help", {}},
  };
  return kSpecs;
}

// The launch file's keys, for --help and the man page (docs/cli/gen_cli_docs.py: one `.TP` per key).
constexpr const char* kFileHelp =
    "launch file:\n"
    "A YAML map; paths in it are relative to its folder, which is also the processes' working directory.\n"
    "  schedule: FILE          the compiled schedule (.tsched) the master runs\n"
    "  schedules: [FILE, ...]  several compiled schedules: a managed master (tactus-master -N)\n"
    "  graph: FILE             a YAML graph, compiled first with tactus-compile (next to the -l log)\n"
    "  graphs: [FILE, ...]     several graphs, each compiled; with schedules: the master loads all\n"
    "  instance: NAME          the instance (-D, TACTUS_INSTANCE; default: a random one, printed)\n"
    "  master: [ARG, ...]      extra tactus-master options, e.g. [-l, logs/run.tlog]; compiled graphs\n"
    "                          are kept in the -l log's folder, for tactus-report LOG SCHED...\n"
    "  manager: NAME           the master's -N: a schedule manager starts the schedules (default with\n"
    "                          several schedules: launch); nothing runs until one is started\n"
    "  policy: FILE            with a manager: the master's --policy (rules that roll over on\n"
    "                          overruns, a client's death, clean iterations)\n"
    "  start: ID               with a manager: the schedule identifier started once every client\n"
    "                          attached (tactus-manager -D INSTANCE start ID, as process 'manager')\n"
    "  order: ORDER            master-first (default; clients once the segment exists),\n"
    "                          clients-first, random (its seed printed; --seed repeats it)\n"
    "  clients: [CLIENT, ...]  the client processes, each a map of the keys below\n"
    "  name: NAME              a client's name: output prefix, summary, unit name\n"
    "  command: [PROG, ...]    a client's program and arguments (a '/' in PROG: relative to the\n"
    "                          file's folder; else looked up on PATH)\n"
    "  env: {VAR: VALUE}       a client's extra environment (TACTUS_INSTANCE is set for it)\n"
    "  on_exit: stop|ignore    stop (default): a client's failure stops the launch; ignore: the\n"
    "                          others go on (a ClientDies policy rolls over) and it sets no status\n";

void usage(FILE* to) {
  std::fprintf(to,
               "usage: tactus-launch [OPTIONS] LAUNCH.yaml\n"
               "Starts a tactus master and its clients as LAUNCH.yaml says, prefixes their output with their\n"
               "names, stops them all on Ctrl-C or SIGTERM (SIGTERM to the master first) and prints a summary;\n"
               "with --units it writes systemd units for the same application instead, warning about master\n"
               "options that would end a deployed run (-e, a relative -l) and naming the schedule files the\n"
               "units read (they must stay where they are).\n"
               "options:\n%s"
               "%s"
               "exit status: 0 when all exited 0; else the master's failure, else the first (128 + N: signal N); 2: a "
               "bad file\n",
               optionsHelp(specs()).c_str(), kFileHelp);
}

std::string selfDir() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  self[n] = '\0';
  return std::filesystem::path(self).parent_path().string();
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string randomInstance() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "launch_%06x", rd() & 0xffffffU);
  return buf;
}

bool parseSeconds(const ParsedOption& o, double& out) {
  char* end = nullptr;
  const double v = std::strtod(o.value.c_str(), &end);
  if (end == o.value.c_str() || *end != '\0' || !(v >= 0) || v > 3600) {
    std::fprintf(stderr, "tactus-launch: %s needs seconds between 0 and 3600, not '%s'\n", o.spelled.c_str(),
                 o.value.c_str());
    return false;
  }
  out = v;
  return true;
}

// The options into `opts`; false after saying why.
bool readOptions(const CommandLine& cl, LaunchOptions& opts) {
  if (const ParsedOption* o = cl.find("units")) opts.unitsDir = o->value;
  if (const ParsedOption* o = cl.find("bin")) opts.binDir = o->value;
  if (const ParsedOption* o = cl.find("build"))
    opts.binDir = o->value + "/master:" + o->value + "/compiler:" + o->value + "/tools";
  if (const ParsedOption* o = cl.find("seed")) {
    char* end = nullptr;
    opts.seed = std::strtoull(o->value.c_str(), &end, 10);
    if (o->value.empty() || *end != '\0') {
      std::fprintf(stderr, "tactus-launch: --seed needs a number, not '%s'\n", o->value.c_str());
      return false;
    }
  }
  if (const ParsedOption* o = cl.find("grace"); o != nullptr && !parseSeconds(*o, opts.graceS)) return false;
  if (const ParsedOption* o = cl.find("kill-after"); o != nullptr && !parseSeconds(*o, opts.killS)) return false;
  opts.killS = std::max(opts.killS, opts.graceS);
  opts.color = !cl.has("no-color") && ::isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  return true;
}

// Where compiled graphs go: the units' folder (--units), else the event log's folder (the master's
// -l, so that `tactus-report LOG SCHED...` works after the run), else a temporary folder
// (`tempDir`, removed after the run). Empty after saying why when it cannot be made.
std::string scheduleDir(const LaunchConfig& cfg, const LaunchOptions& opts, std::string& tempDir) {
  std::error_code ec;
  std::filesystem::path dir;
  if (!opts.unitsDir.empty()) {
    dir = opts.unitsDir;
  } else if (const std::string log = logOption(cfg.masterArgs); !log.empty()) {
    dir = (std::filesystem::path(cfg.dir) / log).parent_path();
  } else {
    char tmpl[] = "/tmp/tactus-launch-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      std::perror("tactus-launch: mkdtemp");
      return "";
    }
    tempDir = tmpl;
    return tempDir;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "tactus-launch: cannot make %s: %s\n", dir.c_str(), ec.message().c_str());
    return "";
  }
  return std::filesystem::absolute(dir).lexically_normal().string();
}

// The compiled schedules' paths in `dir`, one per graph: the graph's name with .tsched (a unit's
// lone one: INSTANCE.tsched, INSTANCE-NAME.tsched for several); a name taken twice gets -2, -3...
std::vector<std::string> compiledNames(const LaunchConfig& cfg, const LaunchOptions& opts, const std::string& dir) {
  std::vector<std::string> out;
  std::set<std::string> taken;
  for (const std::string& graph : cfg.graphs) {
    std::string stem = std::filesystem::path(graph).stem().string();
    if (!opts.unitsDir.empty()) {
      std::string unitStem = cfg.instance;
      if (cfg.graphs.size() != 1) unitStem.append("-").append(stem);
      stem = std::move(unitStem);
    }
    std::string name = stem;
    for (int k = 2; !taken.insert(name).second; ++k) name = stem + "-" + std::to_string(k);
    std::string path = dir;
    path.append("/").append(name).append(".tsched");
    out.push_back(std::move(path));
  }
  return out;
}

}  // namespace

std::vector<std::string> masterCommand(const LaunchConfig& cfg, const std::vector<std::string>& schedules,
                                       const LaunchOptions& opts) {
  std::string list;
  for (const std::string& s : schedules) list += (list.empty() ? "" : ",") + s;
  std::vector<std::string> argv = {findTool(opts.binDir, "tactus-master"), "-s", list, "-D", cfg.instance};
  if (!cfg.manager.empty()) argv.insert(argv.end(), {"-N", cfg.manager});
  if (!cfg.policy.empty()) argv.insert(argv.end(), {"--policy", cfg.policy});
  argv.insert(argv.end(), cfg.masterArgs.begin(), cfg.masterArgs.end());
  return argv;
}

std::string onPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t from = 0; from <= rest.size();) {
    std::size_t colon = rest.find(':', from);
    if (colon == std::string::npos) colon = rest.size();
    const std::filesystem::path candidate = std::filesystem::path(rest.substr(from, colon - from)) / program;
    if (colon > from && executable(candidate.string())) return std::filesystem::absolute(candidate).string();
    from = colon + 1;
  }
  return program;
}

std::string findTool(const std::string& binDir, const std::string& name) {
  std::vector<std::string> dirs;
  for (std::size_t from = 0; !binDir.empty() && from <= binDir.size();) {
    std::size_t colon = binDir.find(':', from);
    if (colon == std::string::npos) colon = binDir.size();
    dirs.push_back(binDir.substr(from, colon - from));
    from = colon + 1;
  }
  if (binDir.empty()) {
    const std::string self = selfDir();
    const std::string sub = name == "tactus-master" ? "master" : name == "tactus-compile" ? "compiler" : "tools";
    if (!self.empty()) dirs = {self, self + "/../" + sub};
    if (const char* root = std::getenv("TACTUS_BUILD_ROOT")) dirs.push_back(std::string(root) + "/" + sub);
  }
  for (const std::string& d : dirs) {
    const std::filesystem::path p = std::filesystem::path(d) / name;
    if (executable(p.string())) return std::filesystem::absolute(p).lexically_normal().string();
  }
  return onPath(name);
}

bool compileGraph(const std::string& compiler, const std::string& graph, const std::string& out) {
  std::fprintf(stderr, "tactus-launch: %s -i %s -o %s\n", compiler.c_str(), graph.c_str(), out.c_str());
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The report stays out of the way (our stdout carries the processes' lines); errors and
    // warnings come on standard error.
    const int devNull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devNull >= 0) ::dup2(devNull, STDOUT_FILENO);
    ::execlp(compiler.c_str(), compiler.c_str(), "-i", graph.c_str(), "-o", out.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "tactus-launch: cannot run %s\n", compiler.c_str());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  std::fprintf(stderr, "tactus-launch: tactus-compile failed on %s\n", graph.c_str());
  return false;
}

int launchMain(const std::vector<std::string>& args) {
  Result<CommandLine> cl = parseCommandLine(specs(), args);
  if (!cl) {
    std::fprintf(stderr, "tactus-launch: %s\n", cl.error().message.c_str());
    usage(stderr);
    return 2;
  }
  if (cl->has("help")) return usage(stdout), 0;
  if (cl->has("version")) return std::printf("tactus-launch %s\n", TACTUS_VERSION), 0;
  LaunchOptions opts;
  if (!readOptions(*cl, opts)) return 2;
  if (cl->operands.size() != 1) {
    std::fprintf(stderr, "tactus-launch: give one launch file\n");
    usage(stderr);
    return 2;
  }
  Result<LaunchConfig> cfg = readLaunchFile(cl->operands[0]);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().message.c_str());
    return 2;
  }
  if (cfg->instance.empty()) {
    cfg->instance = randomInstance();
    std::fprintf(stderr, "tactus-launch: instance %s\n", cfg->instance.c_str());
  }
  std::vector<std::string> schedules = cfg->schedules;
  std::string tempDir;
  int status = 0;
  if (!cfg->graphs.empty()) {
    const std::string dir = scheduleDir(*cfg, opts, tempDir);
    if (dir.empty()) return 1;
    const std::string compiler = findTool(opts.binDir, "tactus-compile");
    const std::vector<std::string> outs = compiledNames(*cfg, opts, dir);
    for (std::size_t k = 0; k < outs.size() && status == 0; ++k) {
      if (!compileGraph(compiler, cfg->graphs[k], outs[k])) status = 2;
      schedules.push_back(outs[k]);
    }
  }
  if (status == 0)
    status = opts.unitsDir.empty() ? runApplication(*cfg, schedules, opts) : writeUnits(*cfg, schedules, opts);
  if (!tempDir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tempDir, ec);
  }
  return status;
}

}  // namespace tactus::launch
