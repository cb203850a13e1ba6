// The `tactus._tactus` extension (pybind11): a run read by tactus-report's own code (loading,
// verification, analysis), handed to Python as columns (NumPy arrays, names as categorical codes)
// that tactus/__init__.py turns into pandas DataFrames; the --json report as its text; a schedule
// file's tables; the schedule-manager API. Nothing is re-parsed in Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis.hpp"
#include "report_command.hpp"
#include "switch_marks.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/manager.hpp"
#include "tactus/record/reader.hpp"
#include "tactus/record/summary.hpp"

namespace py = pybind11;
using namespace tactus;
using namespace tactus::report;

namespace {

class TactusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A column of names: codes into a list of categories (pandas.Categorical.from_codes).
struct NameColumn {
  std::vector<std::int32_t> codes;
  std::vector<std::string> categories;
  std::unordered_map<std::string, std::int32_t> index;
  /// The code of `name` (added to the categories when new).
  std::int32_t code(const std::string& name) {
    auto [it, added] = index.emplace(name, static_cast<std::int32_t>(categories.size()));
    if (added) categories.push_back(name);
    return it->second;
  }
  void push(const std::string& name) { codes.push_back(code(name)); }
};

// Columns in insertion order; numbers as int64, names as categorical codes.
struct Table {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::int64_t>> numbers;
  std::map<std::string, NameColumn> names;
  std::vector<std::int64_t>& num(const std::string& c) {
    if (!numbers.count(c) && !names.count(c)) order.push_back(c);
    return numbers[c];
  }
  NameColumn& name(const std::string& c) {
    if (!numbers.count(c) && !names.count(c)) order.push_back(c);
    return names[c];
  }
  // Rows reordered by `perm` (a stable sort's result).
  template <typename V>
  static V permuted(const V& v, const std::vector<std::size_t>& perm) {
    V out(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) out[k] = v[perm[k]];
    return out;
  }
  void sortBy(const std::string& key) {
    const std::vector<std::int64_t>& k = numbers[key];
    if (std::is_sorted(k.begin(), k.end())) return;
    // (key, row) pairs sorted: the row breaks ties, so the order is the stable one.
    std::vector<std::pair<std::int64_t, std::size_t>> keyed(k.size());
    for (std::size_t r = 0; r < k.size(); ++r) keyed[r] = {k[r], r};
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::size_t> perm(k.size());
    for (std::size_t r = 0; r < k.size(); ++r) perm[r] = keyed[r].second;
    for (auto& [n, v] : numbers) v = permuted(v, perm);
    for (auto& [n, v] : names) v.codes = permuted(v.codes, perm);
  }
  // {"columns": [...], "numbers": {c: ndarray}, "names": {c: (codes ndarray, [categories])}}; the
  // arrays take over the columns' memory (no copy of millions of rows).
  py::dict toPython() {
    py::dict numberDict, nameDict;
    for (auto& [c, v] : numbers) numberDict[py::str(c)] = adopt(std::move(v));
    for (auto& [c, v] : names) nameDict[py::str(c)] = py::make_tuple(adopt(std::move(v.codes)), v.categories);
    py::dict d;
    d["columns"] = order;
    d["numbers"] = numberDict;
    d["names"] = nameDict;
    return d;
  }
  template <typename T>
  static py::array_t<T> adopt(std::vector<T>&& v) {
    auto* held = new std::vector<T>(std::move(v));
    py::capsule owner(held, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(held->size()), held->data(), owner);
  }
};

std::string clientOf(const Schedule& s, RunnableId r) {
  const ClientId c = s.runnables[r].client;
  return s.clients.contains(c) ? s.clients[c].name : "?";
}

// One row per valid run (the rule and the names of tactus-report --csv), sorted by start. Columns
// and name codes are looked up once, not per row (a soak log holds millions of runs).
void addRuns(Table& t, const Schedule& s, const LogFile& log, const Analysis& a) {
  auto& schedule = t.num("schedule");
  NameColumn& client = t.name("client");
  NameColumn& runnable = t.name("runnable");
  NameColumn& epoch = t.name("epoch");
  NameColumn& resource = t.name("resource");
  auto& iteration = t.num("iteration");
  auto& frame = t.num("frame");
  auto& instance = t.num("instance");
  auto& start = t.num("start_ns");
  auto& end = t.num("end_ns");
  auto& plannedStart = t.num("planned_start_ns");
  auto& plannedEnd = t.num("planned_end_ns");
  auto& wcet = t.num("wcet_ns");
  // Codes per runnable and per instance, taken at first use (so only names that occur are categories).
  struct Codes {
    std::int32_t client = -1, runnable = -1, empty = -1, epoch = -1;
  };
  std::vector<Codes> byRunnable(s.runnables.size());
  std::size_t rows = 0;  // reserved once: a soak log's millions of rows, never regrown
  for (const EventRecord& r : log.records) rows += r.kind == static_cast<std::uint16_t>(EventKind::kRun) ? 1 : 0;
  for (auto* column : {&schedule, &iteration, &frame, &instance, &start, &end, &plannedStart, &plannedEnd, &wcet})
    column->reserve(column->size() + rows);
  for (NameColumn* column : {&client, &runnable, &epoch, &resource}) column->codes.reserve(column->codes.size() + rows);
  std::vector<std::int32_t> resourceOf(s.instances.size(), -1);
  for (const EventRecord& r : log.records) {
    if (!validRun(s, a, r)) continue;
    const InstanceId id{r.instance};
    const InstanceInfo& inst = s.instances[id];
    const RunnableId shown = r.aux == kNone ? inst.runnable : RunnableId{r.aux};
    const RunnableInfo& ran = s.runnables[shown];
    Codes& codes = byRunnable[index(shown)];
    if (codes.client < 0) {
      codes.client = client.code(clientOf(s, shown));
      codes.epoch = epoch.code(s.epochs.contains(ran.epoch) ? epochName(s, ran.epoch) : "?");
    }
    std::int32_t& name = r.aux == kNone ? codes.empty : codes.runnable;
    if (name < 0) name = runnable.code(r.aux == kNone ? ran.name + "(empty)" : ran.name);
    std::int32_t& held = resourceOf[r.instance];
    if (held < 0)
      held = resource.code(!inst.resources.empty() && s.resources.contains(inst.resources[0])
                               ? s.resources[inst.resources[0]].name
                               : "?");
    const std::int64_t base = iterationStartNs(s, log, a, a.instanceHyperepoch[id], r.iteration);
    schedule.push_back(s.identifier);
    client.codes.push_back(codes.client);
    runnable.codes.push_back(name);
    epoch.codes.push_back(codes.epoch);
    resource.codes.push_back(held);
    iteration.push_back(r.iteration);
    frame.push_back(inst.frame);
    instance.push_back(r.instance);
    start.push_back(r.startNs);
    end.push_back(r.endNs);
    plannedStart.push_back(base + inst.startNs);
    plannedEnd.push_back(base + inst.endNs);
    wcet.push_back(ran.wcetNs);
  }
}

void addReleases(Table& t, const Schedule& s, const LogFile& log, const Analysis& a) {
  for (const EventRecord& r : log.records) {
    if (!validRelease(s, a, r)) continue;
    t.num("schedule").push_back(s.identifier);
    t.num("iteration").push_back(r.iteration);
    t.name("epoch").push(epochName(s, EpochId{r.instance}));
    t.num("frame").push_back(r.aux);
    t.num("ideal_ns").push_back(r.startNs);
    t.num("actual_ns").push_back(r.endNs);
    t.num("late_ns").push_back(r.endNs - r.startNs);
  }
}

// Frame overruns (kOverrun) and skipped hyperepoch periods (kSkipped), as logged.
void addOverruns(Table& t, const Schedule& s, const LogFile& log) {
  for (const EventRecord& r : log.records) {
    const auto kind = static_cast<EventKind>(r.kind);
    if (kind == EventKind::kOverrun && r.instance < s.epochs.size()) {
      t.name("kind").push("frame");
      t.name("where").push(epochName(s, EpochId{r.instance}));
    } else if (kind == EventKind::kSkipped && r.instance < s.hyperepochs.size()) {
      t.name("kind").push("skip");
      t.name("where").push(s.hyperepochs[HyperepochId{r.instance}].name);
    } else {
      continue;
    }
    t.num("schedule").push_back(s.identifier);
    t.num("iteration").push_back(r.iteration);
    t.num("count").push_back(r.aux);  // the late frame, or the periods skipped
    t.num("planned_ns").push_back(r.startNs);
    t.num("actual_ns").push_back(r.endNs);
    t.num("late_ns").push_back(r.endNs - r.startNs);
  }
}

void addChains(Table& t, const Schedule& s, const Analysis& a) {
  auto run = [&](const std::string& prefix, const ChainRun& x) {
    const bool known = s.instances.contains(x.instance);
    const InstanceInfo* inst = known ? &s.instances[x.instance] : nullptr;
    t.name(prefix + "_client").push(known ? clientOf(s, inst->runnable) : "?");
    t.name(prefix + "_runnable").push(known ? s.runnables[inst->runnable].name : "?");
    t.num(prefix + "_iteration").push_back(x.iteration);
    t.num(prefix + "_frame").push_back(known ? inst->frame : -1);
  };
  for (std::size_t c = 0; c < s.chains.size() && c < a.chains.size(); ++c) {
    const ChainInfo& chain = s.chains[c];
    for (const bool reaction : {true, false}) {
      const std::int64_t required = reaction ? chain.maxReactionNs : chain.maxAgeNs;
      for (const ChainOccurrence& x : reaction ? a.chains[c].reactions : a.chains[c].ages) {
        t.name("chain").push(chain.name);
        t.name("measure").push(reaction ? "reaction" : "age");
        run("source", x.source);
        run("last", x.last);
        t.num("release_ns").push_back(x.releaseNs);
        t.num("end_ns").push_back(x.endNs);
        t.num("reaction_ns").push_back(reaction ? x.ns() : -1);
        t.num("age_ns").push_back(reaction ? -1 : x.ns());
        t.num("planned_ns").push_back(reaction ? chain.reactionNs : chain.ageNs);
        t.num("required_ns").push_back(required == kNoDuration ? -1 : required);
        t.num("schedule").push_back(s.identifier);
      }
    }
  }
}

void addSwitches(Table& t, const ReportInputs& in) {
  for (const EventRecord& r : in.log.records) {
    const auto kind = static_cast<EventKind>(r.kind);
    if (kind != EventKind::kScheduleStart && kind != EventKind::kScheduleStop) continue;
    t.name("event").push(kind == EventKind::kScheduleStart ? "start" : "stop");
    t.num("schedule").push_back(r.schedule);
    t.num("hyperepoch").push_back(r.instance);
    t.num("iteration").push_back(r.iteration);
    t.num("other").push_back(r.aux == 0xffffffffu ? -1 : static_cast<std::int64_t>(r.aux));
    t.num("at_ns").push_back(switchAtNs(r));
  }
}

// A run read as tactus-report reads it.
class Run {
 public:
  Run(const std::vector<std::string>& logs, const std::vector<std::string>& schedules) {
    ReportOptions o;
    o.logs = logs;
    o.schedules = schedules;
    o.json = true;
    std::ostringstream err;
    auto in = loadReportInputs(o, err);
    if (!in) throw TactusError(in.error().message);
    in_ = std::move(*in);
    std::string line;
    std::istringstream w(err.str());
    while (std::getline(w, line)) warnings_.push_back(line);
  }
  py::dict tables() const {
    Table runs, releases, overruns, chains, switches;
    {
      py::gil_scoped_release nogil;
      for (std::size_t k = 0; k < in_.schedules.size(); ++k) {
        const Schedule& s = in_.schedules[k];
        const Analysis& a = in_.parts[k].analysis;
        addRuns(runs, s, in_.logOf(k), a);
        addReleases(releases, s, in_.logOf(k), a);
        addOverruns(overruns, s, in_.logOf(k));
        addChains(chains, s, a);
      }
      addSwitches(switches, in_);
      if (!runs.order.empty()) runs.sortBy("start_ns");
      if (!releases.order.empty()) releases.sortBy("actual_ns");
      if (!chains.order.empty()) chains.sortBy("release_ns");
      if (!switches.order.empty()) switches.sortBy("at_ns");
    }
    py::dict d;
    d["runs"] = runs.toPython();
    d["releases"] = releases.toPython();
    d["overruns"] = overruns.toPython();
    d["chains"] = chains.toPython();
    d["switches"] = switches.toPython();
    return d;
  }
  std::string json() const { return formatReportJson(in_); }
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::int64_t runStartNs() const { return in_.log.header.runStartNs; }

 private:
  ReportInputs in_;
  std::vector<std::string> warnings_;
};

std::string runnableName(const Schedule& s, RunnableId r) { return clientOf(s, r) + "." + s.runnables[r].name; }

// A schedule file's tables.
py::dict scheduleTables(const std::string& path) {
  auto loaded = loadScheduleFile(path);
  if (!loaded) throw TactusError(loaded.error().message);
  const Schedule& s = *loaded;
  Table instances, channels, reads, chains;
  for (InstanceId i : s.instances.ids()) {
    const InstanceInfo& inst = s.instances[i];
    const RunnableInfo& r = s.runnables[inst.runnable];
    instances.num("instance").push_back(index(i));
    instances.name("client").push(clientOf(s, inst.runnable));
    instances.name("runnable").push(r.name);
    instances.name("epoch").push(epochName(s, r.epoch));
    instances.num("frame").push_back(inst.frame);
    instances.name("resource").push(!inst.resources.empty() ? s.resources[inst.resources[0]].name : "");
    instances.num("start_ns").push_back(inst.startNs);
    instances.num("end_ns").push_back(inst.endNs);
    instances.num("wcet_ns").push_back(r.wcetNs);
  }
  for (const ChannelInfo& c : s.channels) {
    std::string readers;
    for (RunnableId r : c.readers) readers += (readers.empty() ? "" : " ") + runnableName(s, r);
    channels.name("channel").push(c.name);
    channels.name("writer").push(runnableName(s, c.writer));
    channels.name("readers").push(readers);
    channels.num("size_bytes").push_back(static_cast<std::int64_t>(c.sizeBytes));
    channels.num("writes").push_back(c.writes);
    channels.num("depth").push_back(c.depth);
  }
  for (const ChannelRead& r : s.channelReads) {
    reads.name("channel").push(s.channels[r.channel].name);
    reads.num("reader_instance").push_back(index(r.instance));
    reads.name("reader").push(runnableName(s, s.instances[r.instance].runnable));
    reads.num("reader_frame").push_back(s.instances[r.instance].frame);
    reads.num("writer_instance").push_back(index(r.writer));
    reads.name("writer").push(runnableName(s, s.instances[r.writer].runnable));
    reads.num("writer_frame").push_back(s.instances[r.writer].frame);
    reads.num("previous_iteration").push_back(r.previousIteration ? 1 : 0);
    reads.num("slot").push_back(r.slot);
  }
  for (const ChainInfo& c : s.chains) {
    std::string path;
    for (RunnableId r : c.runnables) path += (path.empty() ? "" : " -> ") + runnableName(s, r);
    chains.name("chain").push(c.name);
    chains.name("runnables").push(path);
    chains.num("reaction_ns").push_back(c.reactionNs);
    chains.num("age_ns").push_back(c.ageNs);
    chains.num("max_reaction_ns").push_back(c.maxReactionNs == kNoDuration ? -1 : c.maxReactionNs);
    chains.num("max_age_ns").push_back(c.maxAgeNs == kNoDuration ? -1 : c.maxAgeNs);
  }
  std::vector<std::string> clients, runnables, resources, hyperepochs, epochs;
  for (ClientId c : s.clients.ids()) clients.push_back(s.clients[c].name);
  for (RunnableId r : s.runnables.ids()) runnables.push_back(runnableName(s, r));
  for (ResourceId r : s.resources.ids()) resources.push_back(s.resources[r].name);
  for (HyperepochId h : s.hyperepochs.ids()) hyperepochs.push_back(s.hyperepochs[h].name);
  for (EpochId e : s.epochs.ids()) epochs.push_back(epochName(s, e));
  py::dict d;
  d["name"] = s.name;
  d["identifier"] = s.identifier;
  d["instances"] = instances.toPython();
  d["channels"] = channels.toPython();
  d["channel_reads"] = reads.toPython();
  d["chains"] = chains.toPython();
  d["clients"] = clients;
  d["runnables"] = runnables;
  d["resources"] = resources;
  d["hyperepochs"] = hyperepochs;
  d["epochs"] = epochs;
  return d;
}

template <typename T>
T check(Result<T> r) {
  if (!r) throw TactusError(r.error().message);
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

// A recording folder read by the record library's strict reader (tactus-report --recording's):
// its channels' names and, per channel, the versions tactus-report --export-channel writes (the
// first schedule that has the channel, in its SoC file), as stamp columns and bytes.
class Recording {
 public:
  explicit Recording(const std::string& dir) : files_(check(record::readRecordingDir(dir))) {}

  std::vector<std::string> channels() const {
    std::vector<std::string> names;
    for (const record::RecordingFile& f : files_)
      for (const record::RecordedSchedule& s : f.schedules)
        for (const std::string& c : s.channels)
          if (std::find(names.begin(), names.end(), c) == names.end()) names.push_back(c);
    return names;
  }

  // {"stamps": columns (soc, schedule, writer_instance, iteration, written_ns, source_ns, bytes),
  //  "data": [bytes per version]} of channel `name`.
  py::dict versions(const std::string& name) const {
    const record::ChannelRef ref = check(record::findChannel(files_, name));
    const record::RecordingFile& f = files_.at(ref.file);
    Table stamps;
    py::list data;
    for (const record::RecordedVersion& v : f.versions) {
      if (v.rec.scheduleId != ref.schedule || v.rec.channel != ref.channel) continue;
      stamps.num("soc").push_back(f.header.soc);
      stamps.num("schedule").push_back(v.rec.scheduleId);
      stamps.num("writer_instance").push_back(v.rec.writerInstance);
      stamps.num("iteration").push_back(static_cast<std::int64_t>(v.rec.iteration - 1));
      stamps.num("written_ns").push_back(v.rec.writtenNs);
      stamps.num("source_ns").push_back(v.rec.sourceNs);
      stamps.num("bytes").push_back(v.rec.dataSize);
      const std::string_view bytes = f.data(v);
      data.append(py::bytes(bytes.data(), bytes.size()));
    }
    py::dict d;
    d["stamps"] = stamps.toPython();
    d["data"] = data;
    return d;
  }

  // Where each SoC file stops early (empty: it ends with its end record).
  std::vector<std::string> stops() const {
    std::vector<std::string> out;
    for (const record::RecordingFile& f : files_) out.push_back(f.stop);
    return out;
  }

 private:
  std::vector<record::RecordingFile> files_;
};

}  // namespace

PYBIND11_MODULE(_tactus, m) {
  m.doc() = "tactus: event logs, schedules and the schedule manager (see the tactus package)";
  py::register_exception<TactusError>(m, "Error", PyExc_RuntimeError);
  py::class_<Run>(m, "Run")
      .def(py::init<std::vector<std::string>, std::vector<std::string>>(), py::arg("logs"), py::arg("schedules"))
      .def("tables", &Run::tables)
      .def("json", &Run::json)
      .def_property_readonly("warnings", &Run::warnings)
      .def_property_readonly("run_start_ns", &Run::runStartNs);
  m.def("schedule_tables", &scheduleTables, py::arg("path"));
  py::class_<Recording>(m, "Recording")
      .def(py::init<std::string>(), py::arg("dir"))
      .def("channels", &Recording::channels)
      .def("versions", &Recording::versions, py::arg("channel"))
      .def_property_readonly("stops", &Recording::stops);
  m.def(
      "manager_init",
      [](const std::string& name, const std::string& instance, std::int64_t timeoutMs) {
        check(manager::init(name, {.instance = instance, .timeoutMs = timeoutMs, .oneShot = true}));
      },
      py::arg("name"), py::arg("instance"), py::arg("timeout_ms"));
  m.def("manager_start", [](std::uint16_t id) { check(manager::startSchedule(id)); });
  m.def("manager_stop", [](std::uint16_t id) { check(manager::stopSchedule(id)); });
  m.def("manager_rollover",
        [](std::uint16_t start, std::uint16_t stop) { check(manager::rollOverSchedule(start, stop)); });
  m.def("manager_exit", [] { check(manager::exitRun()); });
  m.def("manager_status", [] {
    const manager::Status s = check(manager::status());
    py::dict d;
    d["running"] = s.running;
    d["schedule"] = s.schedule;
    d["iterations"] = s.iterations;
    d["overruns"] = s.overruns;
    d["schedule_count"] = s.scheduleCount;
    return d;
  });
  m.def("manager_shutdown", [] { manager::shutdown(); });
}
