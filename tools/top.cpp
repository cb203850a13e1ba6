// tactus-top's logic (see top.hpp).
#include "top.hpp"
#include "top_metrics.hpp"

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tactus/core/command_line.hpp"
#include "tactus/core/schedule.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/clock.hpp"
#include "tactus/ipc/process.hpp"
#include "tactus/ipc/segment.hpp"
#include "tactus_config.h"

namespace tactus::top {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

const char* stateName(std::uint32_t s) {
  static const char* const kNames[] = {"creating", "published", "running", "finished", "aborted"};
  return s < 5 ? kNames[s] : "unknown";
}

const char* clientStateName(std::uint32_t s) {
  static const char* const kNames[] = {"absent", "attached", "entered", "refused", "exited"};
  return s < 5 ? kNames[s] : "unknown";
}

const char* stopReasonName(std::uint32_t r) {
  static const char* const kNames[] = {"",          "frame-limit", "exit-requested", "signal", "timeout",
                                       "peer-died", "error",       "stuck",          "damaged"};
  return r < 9 ? kNames[r] : "unknown";
}

// The chain and channel rows: the schedule's bounds and names, the drain's figures for those the
// statistics block holds.
void fillChainsAndChannels(const Schedule& schedule, const shm::StatsSnapshot& stats, ScheduleView& out) {
  for (std::size_t c = 0; c < schedule.chains.size(); ++c) {
    const ChainInfo& chain = schedule.chains[c];
    ChainRow row;
    row.name = chain.name;
    if (!chain.runnables.empty() && schedule.runnables.contains(chain.runnables.front()) &&
        schedule.runnables.contains(chain.runnables.back())) {
      row.source = qualifiedName(schedule, chain.runnables.front());
      row.last = qualifiedName(schedule, chain.runnables.back());
    }
    row.plannedReactionNs = chain.reactionNs;
    row.plannedAgeNs = chain.ageNs;
    row.maxReactionNs = chain.maxReactionNs == kNoDuration ? -1 : chain.maxReactionNs;
    row.maxAgeNs = chain.maxAgeNs == kNoDuration ? -1 : chain.maxAgeNs;
    row.measured = c < stats.chains.size();
    if (row.measured) row.stats = stats.chains[c];
    out.chains.push_back(row);
  }
  for (std::size_t c = 0; c < schedule.channels.size(); ++c) {
    const ChannelInfo& channel = schedule.channels[c];
    ChannelRow row;
    row.name = channel.name;
    if (schedule.runnables.contains(channel.writer)) row.writer = qualifiedName(schedule, channel.writer);
    row.writes = channel.writes;
    row.measured = c < stats.channels.size();
    if (row.measured) row.stats = stats.channels[c];
    out.channels.push_back(row);
  }
}

// The rows of a parsed schedule with the slots' counters and the statistics copied.
void fillRows(const Schedule& schedule, const shm::SegmentView& view, const shm::StatsSnapshot& stats,
              ScheduleView& out) {
  for (HyperepochId he : schedule.hyperepochs.ids()) {
    HyperepochRow row;
    row.name = schedule.hyperepochs[he].name;
    row.periodNs = schedule.hyperepochs[he].periodNs;
    row.completed = view.hyperepoch(he).completed.load(kRelaxed);
    row.skipped = view.hyperepoch(he).skipped.load(kRelaxed);
    if (index(he) < stats.hyperepochs.size()) row.stats = stats.hyperepochs[index(he)];
    out.hyperepochs.push_back(row);
  }
  for (ClientId c : schedule.clients.ids()) {
    const shm::ClientSlot& slot = view.client(c);
    out.clients.push_back(
        {schedule.clients[c].name, slot.pid.load(kRelaxed), clientStateName(slot.state.load(kRelaxed))});
  }
  for (RunnableId r : schedule.runnables.ids()) {
    const RunnableInfo& info = schedule.runnables[r];
    // A round-robin group runs as its members, which have rows of their own.
    if (info.kind == RunnableKind::kAliasGroup) continue;
    RunnableRow row;
    row.name = qualifiedName(schedule, r);
    row.client = schedule.clients[info.client].name;
    row.wcetNs = info.wcetNs;
    if (index(r) < stats.runnables.size()) row.stats = stats.runnables[index(r)];
    out.runnables.push_back(row);
  }
  out.switches = stats.switchHistory;
  fillChainsAndChannels(schedule, stats, out);
}

// Opens one segment read-only and reads it; a message that says what to do when it cannot.
Result<ScheduleView> readNamed(const std::string& segment) {
  auto mapped = ipc::Segment::openReadOnly(segment);
  if (!mapped) return mapped.error();
  mapped->guardAgainstTruncation();  // a segment truncated underneath reads as zeros, not SIGBUS
  auto view = readSegment(mapped->bytes(), segment);
  if (mapped->busFault())
    return fail(ErrorCode::kIncompatible, ipc::segmentPath(segment) + " was truncated while tactus-top read it");
  return view;
}

// The manager channel's running schedule, when the instance has one.
std::optional<std::uint32_t> managerRunning(const std::string& instance, bool& managed) {
  managed = false;
  auto mapped = ipc::Segment::openReadOnly(shm::managerInstanceName(instance));
  if (!mapped || mapped->bytes().size() < sizeof(shm::ManagerChannel)) return std::nullopt;
  mapped->guardAgainstTruncation();
  const auto* channel = reinterpret_cast<const shm::ManagerChannel*>(mapped->bytes().data());
  if (channel->magic.load(std::memory_order_acquire) != shm::kManagerMagic) return std::nullopt;
  managed = true;
  const std::uint32_t running = channel->running.load(kRelaxed);
  if (running == 0xffffffffu) return std::nullopt;
  return running;
}

}  // namespace

Result<ScheduleView> readSegment(std::span<std::byte> bytes, const std::string& segment) {
  const std::string where = ipc::segmentPath(segment);
  shm::SegmentView view(bytes);
  if (!view.hasHeader()) return fail(ErrorCode::kNotFound, where + ": the master is still creating it");
  if (auto ok = view.validate(); !ok) {
    return fail(ok.error().code, where + ": " + ok.error().message + " (use the tactus-top of the master's build)");
  }
  const shm::SegmentHeader& h = view.header();
  const std::uint32_t state = h.state.load(std::memory_order_acquire);
  if (state == static_cast<std::uint32_t>(shm::SegmentState::kCreating)) {
    return fail(ErrorCode::kNotFound, where + ": the master is still creating it");
  }
  auto stats = shm::readStats(view.stats());
  if (!stats) return fail(stats.error().code, where + ": " + stats.error().message);
  auto schedule = tactus::readSchedule(view.scheduleText(), where);
  if (!schedule) return fail(schedule.error().code, where + ": the published schedule: " + schedule.error().message);
  ScheduleView out;
  out.segment = segment;
  out.name = schedule->name;
  out.identifier = h.scheduleIdentifier;
  out.index = h.scheduleIndex;
  out.scheduleCount = h.scheduleCount;
  out.masterPid = h.masterPid.load(std::memory_order_acquire);
  out.state = stateName(state);
  out.stopReason = stopReasonName(h.stopReason.load(kRelaxed));
  out.runStartNs = h.runStartNs.load(kRelaxed);
  fillRows(*schedule, view, *stats, out);
  return out;
}

Result<Snapshot> takeSnapshot(const std::string& instance) {
  Snapshot snap;
  snap.instance = instance;
  auto first = readNamed(instance);
  if (!first) {
    if (first.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "no master publishes instance " + quoted(instance, 256) + " (" +
                                            first.error().message + "); start tactus-master -D " + instance +
                                            ", or name its instance with -D");
    }
    return first.error();
  }
  if (first->masterPid != 0 && !ipc::processAlive(static_cast<pid_t>(first->masterPid))) {
    // Whoever finds a dead master's remains removes all of its group (segments and channel).
    std::string removed;
    for (const std::string& what : ipc::removeDeadMastersGroup(instance))
      removed += (removed.empty() ? "" : ", ") + what;
    return fail(
        ErrorCode::kNotFound,
        "instance " + quoted(instance, 256) + ": its master (pid " + std::to_string(first->masterPid) + ") is gone; " +
            (removed.empty() ? ipc::segmentPath(instance) + " is left from it" : "removed what it left: " + removed));
  }
  const std::uint32_t count = first->scheduleCount;
  snap.schedules.push_back(std::move(*first));
  for (std::uint32_t k = 1; k < count && k < 64; ++k) {
    auto other = readNamed(shm::scheduleInstanceName(instance, k));
    if (!other) return other.error();
    snap.schedules.push_back(std::move(*other));
  }
  snap.managedRunning = managerRunning(instance, snap.managed);
  snap.switches = snap.schedules.front().switches;
  return snap;
}

namespace {

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"discriminator", 'D', "NAME", "the master's instance (default: $TACTUS_INSTANCE, else 'default')", {}},
      {"once", 0, "", "print one snapshot and exit (for scripts)", {}},
      {"json", 0, "", "print JSON (one object per snapshot, one line each) instead of the screen", {}},
      {"interval", 'n', "MS", "refresh every MS milliseconds (default 500, at least 50)", {}},
      {"metrics",
       0,
       "ADDR:PORT",
       "serve the statistics as Prometheus metrics on http://ADDR:PORT/metrics (e.g. 127.0.0.1:9464) until the run "
       "ends",
       {}},
      {"version", 'V', "", "print the version and exit", {}},
      {"help", 'h', "", "print this help and exit", {}},
  };
  return kSpecs;
}

std::string usage() {
  return "usage: tactus-top [-D INSTANCE] [--once] [--json] [-n MS] [--metrics ADDR:PORT]\n"
         "\n"
         "A live view of a running instance: schedule and iterations, each client's state, each\n"
         "runnable's last, median (of its latest 32 runs) and longest duration against its WCET,\n"
         "overruns and skipped periods, release jitter per hyperepoch, per chain its reactions and\n"
         "data ages so far (count, latest, worst, against the planned bound and MaxReaction/MaxAge;\n"
         "tactus-report's definitions, measured by the master as it drains the log; the first 16\n"
         "chains), per channel its writer runs' versions written, not written and unseen (the first\n"
         "64 channels), and under a schedule manager the running schedule and the switches.\n"
         "It reads what the master publishes in shared memory through a read-only mapping, at the\n"
         "idle scheduling class (SCHED_IDLE): the run is not disturbed and the workers do no extra\n"
         "work. A master of several schedules (-N) shows each; on a multi-SoC run each SoC's master\n"
         "is an instance of its own (INSTANCE.soc<k>): name the one to show. Ends when the run ends,\n"
         "or on Ctrl-C. A tactus-top of another build than the master's refuses the run, naming both\n"
         "layout versions.\n"
         "Options take --name=value or --name value.\n"
         "\n"
         "options:\n" +
         optionsHelp(specs()) +
         "\n"
         "exit status: 0 shown; 1 no running master for the instance, or one of another build; 2 bad arguments\n";
}

// The options as given: false with a message on `err` when they are bad.
struct TopOptions {
  std::string instance;
  bool once = false, json = false;
  long long intervalMs = 500;
  std::optional<MetricsAddress> metrics;  ///< --metrics
};

int parseTop(const std::vector<std::string>& args, TopOptions& options, std::ostream& out, std::ostream& err) {
  CommandLine line;
  if (const int code = startCommandLine("tactus-top", specs(), usage(), false, args, out, err, line, options.instance);
      code >= 0)
    return code;
  if (const auto* o = line.find("interval")) {
    char* end = nullptr;
    options.intervalMs = std::strtoll(o->value.c_str(), &end, 10);
    if (o->value.empty() || *end != '\0' || options.intervalMs < 50 || options.intervalMs > 3'600'000) {
      err << "tactus-top: " << o->spelled << " expects milliseconds from 50 to 3600000, got " << quoted(o->value)
          << "\n";
      return 2;
    }
  }
  if (const auto* o = line.find("metrics")) {
    auto address = parseMetricsAddress(o->value);
    if (!address) {
      err << "tactus-top: " << address.error().message << "\n";
      return 2;
    }
    options.metrics = *address;
  }
  options.once = line.has("once");
  options.json = line.has("json");
  options.instance = ipc::chooseInstance(options.instance).name;
  return -1;
}

}  // namespace

int startCommandLine(const char* program, std::span<const OptionSpec> specs, const std::string& usage, bool operands,
                     const std::vector<std::string>& args, std::ostream& out, std::ostream& err, CommandLine& line,
                     std::string& instance) {
  auto parsed = parseCommandLine(specs, args);
  const std::string tryHelp = std::string("try '") + program + " --help'\n";
  if (!parsed) {
    std::string message = parsed.error().message;
    // The common slip: the instance by its tactus name; STM calls it the discriminator.
    if (message.rfind("unknown option '--instance'", 0) == 0) message += " (the instance is -D, --discriminator)";
    err << program << ": " << message << "\n" << tryHelp;
    return 2;
  }
  line = std::move(*parsed);
  if (line.has("help")) {
    out << usage;
    return 0;
  }
  if (line.has("version")) {
    out << program << " " << TACTUS_VERSION << "\n";
    return 0;
  }
  if (!operands && !line.operands.empty()) {
    err << program << ": unexpected argument " << quoted(line.operands.front()) << "\n" << tryHelp;
    return 2;
  }
  if (const auto* o = line.find("discriminator")) {
    if (o->value.empty()) {
      err << program << ": " << o->spelled
          << " needs an instance name (leave it out for $TACTUS_INSTANCE, else 'default')\n";
      return 2;
    }
    instance = o->value;
  }
  return -1;
}

int topMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  TopOptions options;
  if (const int code = parseTop(args, options, out, err); code >= 0) return code;
  // A viewer takes only CPU time nothing else wants: at SCHED_IDLE the scheduler preempts it at
  // once for the master's release thread or a worker sharing its core, where a normal process's
  // refresh could delay a release by up to the scheduler's wake-up granularity (issue 28: the
  // release benchmark's p99 rose with tactus-top attached on a 2-core machine).
  const sched_param idle{};
  (void)::sched_setscheduler(0, SCHED_IDLE, &idle);
  if (options.metrics) return serveMetrics(options.instance, *options.metrics, out, err);
  bool shown = false;
  for (;;) {
    auto snap = takeSnapshot(options.instance);
    if (!snap) {
      // A run that ended while shown is the normal end of a live view.
      if (shown && snap.error().code == ErrorCode::kNotFound) {
        if (!options.json) out << "tactus-top: the run of instance " << options.instance << " ended\n";
        return 0;
      }
      err << "tactus-top: " << snap.error().message << "\n";
      return 1;
    }
    if (options.json) {
      out << renderJson(*snap);
    } else {
      // A plain ANSI refresh: cursor home, clear to the end, the screen.
      if (!options.once) out << "\x1b[H\x1b[J";
      out << renderText(*snap);
    }
    out.flush();
    shown = true;
    if (options.once) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(options.intervalMs));
  }
}

}  // namespace tactus::top
