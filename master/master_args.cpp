// tactus-master's command line (MasterOptions, see master.hpp) on the tools' one parser
// (core/command_line.hpp): STM's short flags, a long name for each, `--opt=value`, -h/--help.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>

#include "master.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::master {

namespace {

const std::vector<OptionSpec>& specs() {
  // STM's long names where STM has one (schedule, log, epochs, timeout-us, discriminator, core).
  // -s is repeatable here only so that a second -s gets its own message (parseMasterArguments).
  static const std::vector<OptionSpec> kSpecs = {
      {"schedule",
       's',
       "FILE",
       "compiled schedule file (from tactus-compile); with -N a comma-separated\n"
       "list of them",
       {},
       true},
      {"manager",
       'N',
       "NAME",
       "a schedule manager NAME starts, stops and rolls over the schedules;\n"
       "nothing runs until it starts one (see tactus-manager)",
       {}},
      {"schedule-count", 'i', "N", "the number of schedule files (checked against -s)", {}},
      {"policy",
       0,
       "FILE",
       "with -N: YAML rules that roll the running schedule over on overruns,\n"
       "on a client's death and after clean iterations (samples/modes/policy.yaml)",
       {}},
      {"epochs", 'e', "N", "run N hyperepoch iterations, then stop (default: until stopped)", {}},
      {"log", 'l', "FILE", "write the event log (start/end of every runnable, releases, overruns)", {}},
      {"timeout-us", 't', "US", "wait at most US microseconds for the clients (default 5000000; -1 forever)", {}},
      {"free-running", 'm', "", "free-running after an overrun (default: skip to the next period boundary)", {}},
      {"discriminator", 'D', "NAME", "instance name (default 'default'); shared memory /dev/shm/tactus_NAME", {}},
      {"soc", 'x', "SOC", "run SoC SOC of a multi-SoC schedule (one master per SoC)", {}},
      {"primary", 0, "SOC", "the SoC whose master releases the frames (default: the first SoC)", {}},
      {"dds-domain",
       0,
       "N",
       "DDS domain id of the multi-SoC link (default 0; interfaces and peers\n"
       "come from Cyclone DDS's configuration, CYCLONEDDS_URI)",
       {}},
      {"start-timeout-s",
       'a',
       "S",
       "multi-SoC: wait at most S seconds for every SoC's master and clients\n"
       "(default 600; -1 forever)",
       {}},
      {"sync-timeout-us",
       'o',
       "US",
       "multi-SoC: a master with no DDS liveliness for US microseconds is gone,\n"
       "and the run ends on every SoC (default 5000000)",
       {}},
      {"switch-lead-us",
       0,
       "US",
       "multi-SoC with -N: a schedule starts (or takes over in a rollover)\n"
       "US microseconds after the primary decided it, so every SoC's master\n"
       "has activated it by its first frame (default 20000)",
       {}},
      {"core", 'c', "CORE", "pin the master's threads to CORE", {}},
      {"priority", 'P', "PRIO", "run the release threads with SCHED_FIFO priority PRIO (1..99)", {}},
      {"no-pinning",
       'C',
       "",
       "do not pin client worker threads to their cores (else a CPU<n> it cannot pin to is refused)",
       {}},
      {"lock-memory", 'M', "", "lock the master's memory (mlockall)", {}},
      {"allow-unregistered-runnables", 0, "", "run even if a client did not register a scheduled runnable", {}},
      {"fail-on-overrun",
       0,
       "",
       "exit with 1 when any runnable ran beyond its WCET (+ EndMonitorThreshold),\n"
       "a frame was late or a period was skipped (for CI; every overrun is reported either way)",
       {}},
      {"record", 0, "DIR", "record the run into folder DIR (docs/guide/record-replay.md)", {}},
      {"record-overwrite", 0, "", "--record into a folder that holds a recording: replace it", {}},
      {"record-required", 0, "", "the recording's first loss of data ends the run (exit 1), named", {}},
      {"replay",
       0,
       "DIR",
       "replay the recording in DIR: its sources' recorded versions feed the readers\n"
       "(with -N the master makes the recorded switches itself)",
       {}},
      {"replay-rate",
       0,
       "R",
       "--replay at R times real time (default 1); 0: each iteration as soon as the previous ended",
       {}},
      {"replay-sources",
       0,
       "LIST",
       "--replay: the runnables (Client.Runnable,...) whose versions are replayed\n"
       "(default: every runnable that writes a channel and reads none)",
       {}},
      {"verbose", 'v', "", "verbose", {}},
      {"version", 'V', "", "print the version and exit", {}},
      {"help", 'h', "", "print this help and exit", {}},
  };
  return kSpecs;
}

// An integer value in lo..hi; the error names the option as written and what it expects.
Result<long long> integer(const ParsedOption& o, long long lo, long long hi, const std::string& expects) {
  long long v = 0;
  const char* end = o.value.data() + o.value.size();
  auto [p, ec] = std::from_chars(o.value.data(), end, v);
  if (ec == std::errc::invalid_argument || (ec == std::errc() && p != end) || o.value.empty()) {
    return fail(ErrorCode::kParse, "option '" + o.spelled + "' expects an integer, got " + quoted(o.value));
  }
  if (ec != std::errc() || v < lo || v > hi) {
    return fail(ErrorCode::kParse, o.spelled + " expects " + expects + ", got " + quoted(o.value));
  }
  return v;
}

// -s a,b,c: the list of schedule files, checked against -N and -i.
Result<void> splitSchedulePaths(MasterOptions& o) {
  if (o.schedulePath.empty()) return {};
  o.schedulePaths.clear();
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = o.schedulePath.find(',', from);
    const std::string part = o.schedulePath.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (part.empty()) return fail(ErrorCode::kParse, "-s '" + o.schedulePath + "': an empty file name in the list");
    o.schedulePaths.push_back(part);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (o.schedulePaths.size() > 1 && o.managerName.empty()) {
    return fail(ErrorCode::kParse, "-s lists " + std::to_string(o.schedulePaths.size()) +
                                       " schedules: several schedules need a schedule manager (-N name)");
  }
  if (o.schedulePaths.size() > limits::kMaxSchedules) {
    return fail(ErrorCode::kParse, "-s lists " + std::to_string(o.schedulePaths.size()) + " schedules, at most " +
                                       std::to_string(limits::kMaxSchedules) + " are supported");
  }
  if (o.scheduleCount >= 0 && static_cast<std::size_t>(o.scheduleCount) != o.schedulePaths.size()) {
    return fail(ErrorCode::kParse, "-i " + std::to_string(o.scheduleCount) + " does not match the " +
                                       std::to_string(o.schedulePaths.size()) + " schedule files of -s");
  }
  if (o.scheduleCount >= 0 && o.managerName.empty()) return fail(ErrorCode::kParse, "-i needs -N (a schedule manager)");
  if (!o.policyPath.empty() && o.managerName.empty())
    return fail(ErrorCode::kParse, "--policy needs -N (the policy switches between the manager's schedules)");
  if (o.replayDir.empty() && (o.replayRate != 1.0 || !o.replaySources.empty()))
    return fail(ErrorCode::kParse,
                std::string(o.replaySources.empty() ? "--replay-rate" : "--replay-sources") + " needs --replay DIR");
  if (!o.replayDir.empty() && !o.recordDir.empty() && o.replayDir == o.recordDir)
    return fail(ErrorCode::kParse, "--replay and --record name the same folder " + quoted(o.replayDir));
  if (!o.managerName.empty() && o.iterations != 0) {
    return fail(ErrorCode::kParse,
                "-e cannot be combined with -N: the schedule manager starts and stops the schedules");
  }
  if (!o.managerName.empty()) {
    o.schedulePath = o.schedulePaths.front();
    for (std::uint32_t k = 0; k < o.schedulePaths.size(); ++k) {
      if (auto ok = ipc::validateInstanceName(shm::scheduleInstanceName(o.instance, k)); !ok)
        return fail(ErrorCode::kParse,
                    "-D '" + o.instance + "' is too long for several schedules (" + ok.error().message + ")");
    }
    if (auto ok = ipc::validateInstanceName(shm::managerInstanceName(o.instance)); !ok)
      return fail(ErrorCode::kParse,
                  "-D '" + o.instance + "' is too long for a schedule manager (" + ok.error().message + ")");
  }
  return {};
}

// One option's value into `o`; the range checks name the option as written.
Result<void> apply(const ParsedOption& p, MasterOptions& o) {
  const std::string& n = p.name;
  if (n == "schedule") {
    if (!o.schedulePath.empty()) {
      return fail(ErrorCode::kParse, p.spelled + " given twice ('" + o.schedulePath + "', then '" + p.value +
                                         "'): one -s per master; list several schedule files in it, "
                                         "comma-separated, with a schedule manager (-N)");
    }
    if (p.value.empty()) return fail(ErrorCode::kParse, p.spelled + " expects a schedule file name");
    o.schedulePath = p.value;
  } else if (n == "log") {
    o.logPath = p.value;
  } else if (n == "discriminator") {
    o.instance = p.value;
  } else if (n == "soc" || n == "primary") {
    if (p.value.empty() || p.value.size() > limits::kMaxNameBytes)
      return fail(ErrorCode::kParse, p.spelled + " expects a SoC name of the schedule, got " + quoted(p.value));
    (n == "soc" ? o.soc : o.primarySoc) = p.value;
  } else if (n == "dds-domain") {
    // Cyclone DDS domain ids: 0..230 (the port mapping of the DDSI specification).
    auto v = integer(p, 0, 230, "a domain id 0..230");
    if (!v) return v.error();
    o.ddsDomain = *v;
  } else if (n == "start-timeout-s") {
    auto v = integer(p, -1, 31'536'000, "seconds 0..31536000 or -1 (forever)");
    if (!v) return v.error();
    o.startSyncS = *v;
  } else if (n == "sync-timeout-us") {
    auto v = integer(p, 1000, 3'600'000'000LL, "microseconds 1000..3600000000");
    if (!v) return v.error();
    o.socTimeoutUs = *v;
  } else if (n == "switch-lead-us") {
    auto v = integer(p, 0, 10'000'000, "microseconds 0..10000000");
    if (!v) return v.error();
    o.switchLeadUs = *v;
  } else if (n == "manager") {
    if (p.value.empty() || p.value.size() >= 128)
      return fail(ErrorCode::kParse, p.spelled + " expects a manager name of 1..127 bytes");
    o.managerName = p.value;
  } else if (n == "record") {
    if (p.value.empty()) return fail(ErrorCode::kParse, p.spelled + " expects a folder");
    o.recordDir = p.value;
  } else if (n == "replay") {
    if (p.value.empty()) return fail(ErrorCode::kParse, p.spelled + " expects a folder");
    o.replayDir = p.value;
  } else if (n == "replay-rate") {
    char* end = nullptr;
    const double r = std::strtod(p.value.c_str(), &end);
    if (p.value.empty() || end == nullptr || *end != '\0' || !(r >= 0) || r > 1e6)
      return fail(ErrorCode::kParse,
                  p.spelled + " expects a rate 0..1000000 (0: as fast as the work allows), not " + quoted(p.value));
    o.replayRate = r;
  } else if (n == "replay-sources") {
    o.replaySources.clear();
    for (std::size_t at = 0; at <= p.value.size();) {
      const std::size_t comma = std::min(p.value.find(',', at), p.value.size());
      const std::string name = p.value.substr(at, comma - at);
      if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.')
        return fail(ErrorCode::kParse, p.spelled + " expects Client.Runnable,..., not " + quoted(name));
      o.replaySources.push_back(name);
      at = comma + 1;
    }
  } else if (n == "policy") {
    if (p.value.empty()) return fail(ErrorCode::kParse, p.spelled + " expects a file name");
    o.policyPath = p.value;
  } else if (n == "schedule-count") {
    auto v = integer(p, 1, std::numeric_limits<long long>::max(), "a schedule count >= 1");
    if (!v) return v.error();
    o.scheduleCount = *v;
  } else if (n == "epochs") {
    auto v = integer(p, 0, std::numeric_limits<long long>::max(), "a count >= 0");
    if (!v) return v.error();
    o.iterations = static_cast<std::uint64_t>(*v);
  } else if (n == "timeout-us") {
    // At most a year, as -a: the run's deadlines and the stuck budget are this in ns, times two.
    auto v = integer(p, -1, 31'536'000'000'000LL, "microseconds 0..31536000000000 (a year) or -1 (forever)");
    if (!v) return v.error();
    o.timeoutUs = *v;
  } else if (n == "core") {
    auto v = integer(p, 0, 4095, "a core number 0..4095");
    if (!v) return v.error();
    o.core = static_cast<int>(*v);
  } else if (n == "priority") {
    auto v = integer(p, 0, 99, "a priority 1..99 (0: normal)");
    if (!v) return v.error();
    o.priority = static_cast<int>(*v);
  } else {
    o.freeRunning |= n == "free-running";
    o.noPinning |= n == "no-pinning";
    o.lockMemory |= n == "lock-memory";
    o.allowUnregistered |= n == "allow-unregistered-runnables";
    o.failOnOverrun |= n == "fail-on-overrun";
    o.recordOverwrite |= n == "record-overwrite";
    o.recordRequired |= n == "record-required";
    o.verbose |= n == "verbose";
    o.showVersion |= n == "version";
    o.showHelp |= n == "help";
  }
  return {};
}

}  // namespace

std::span<const OptionSpec> masterOptionSpecs() { return specs(); }

Result<MasterOptions> parseMasterArguments(const std::vector<std::string>& args) {
  auto line = parseCommandLine(specs(), args);
  if (!line) {
    std::string message = line.error().message;
    // The common slip: the instance by its tactus name; STM calls it the discriminator.
    if (message.rfind("unknown option '--instance'", 0) == 0) message += " (the instance is -D, --discriminator)";
    return fail(ErrorCode::kParse, message);
  }
  MasterOptions o;
  for (const ParsedOption& p : line->options) {
    if (auto ok = apply(p, o); !ok) return ok.error();
  }
  if (!line->operands.empty()) {
    // The common slip: the schedule file given without -s.
    const std::string& first = line->operands.front();
    std::string message = "unexpected argument " + quoted(first);
    if (first.ends_with(".tsched")) message += " (did you mean '-s " + first + "'?)";
    return fail(ErrorCode::kParse, message);
  }
  if (o.showHelp || o.showVersion) return o;
  if (o.schedulePath.empty()) return fail(ErrorCode::kParse, "missing -s <schedule file> (--schedule)");
  if (auto ok = splitSchedulePaths(o); !ok) return ok.error();
  if (auto ok = ipc::validateInstanceName(o.instance); !ok) return ok.error();
  return o;
}

std::string masterUsage() {
  return "usage: tactus-master -s SCHEDULE.tsched [options]\n"
         "       tactus-master -s A.tsched,B.tsched -N MANAGER [-i 2] [options]\n"
         "\n"
         "Runs a compiled schedule across the client processes of an instance: publishes it in\n"
         "shared memory, waits for every client, releases the frames and writes the event log.\n"
         "Options take --name=value or --name value; -e 5, -e5 and --epochs=5 are the same.\n"
         "\n"
         "options:\n" +
         optionsHelp(specs()) +
         "\n"
         "examples:\n"
         "  tactus-master -s graph.tsched -D demo -e 100 -l demo.tlog\n"
         "  tactus-master --schedule=a.tsched,b.tsched --manager=modes --discriminator=demo\n"
         "\n"
         "exit status: 0 ended by frame limit, exit request or signal; 1 the run failed (a client\n"
         "died, did not come or refused); 2 bad arguments, bad schedule, or the instance is busy\n";
}

}  // namespace tactus::master
