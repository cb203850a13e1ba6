// tactus-report's Chrome trace (Perfetto, chrome://tracing): the plan of every iteration beside
// what ran, one process per client with two threads per worker (plan above, executed below),
// frame releases and overruns as instant events in the master's process, flow arrows for the
// dependencies that cross clients, and each measured chain occurrence as an async slice in a
// process of its own ("chains").
//
//   master             |rel Fast#0      |rel Fast#1 ... (instant events, global scope)
//   client 'Sensing'   CPU0 plan      [ReadImu][Capture   ][Detect     ]
//                      CPU0           [ReadImu] [Capture    ][Detect]-----+  (flow arrow)
//   client 'Planning'  CPU1 plan                                          v
//                      CPU1                                          [PlanPath]
#include <charconv>
#include <cstdio>
#include <ostream>
#include <unordered_map>

#include "outputs.hpp"
#include "tactus/core/text.hpp"

namespace tactus::report {
namespace {

constexpr int kMasterPid = 1;        // frame releases, overruns, skips
constexpr int kChainPid = 2;         // measured chain occurrences (async slices)
constexpr int kFirstClientPid = 10;  // client c is process kFirstClientPid + c

int clientPid(ClientId c) { return kFirstClientPid + static_cast<int>(index(c)); }
// Resource r's worker: the plan thread directly above the executed one.
unsigned planTid(ResourceId r) { return 2 * index(r) + 1; }
unsigned execTid(ResourceId r) { return 2 * index(r) + 2; }

void appendInt(std::string& out, std::int64_t v) {
  char b[24];
  auto [p, ec] = std::to_chars(b, b + sizeof b, v);
  (void)ec;
  out.append(b, p);
}

// Nanoseconds as microseconds with three decimals (the trace format's unit), exactly; the
// magnitude in unsigned arithmetic, so even INT64_MIN has one.
void appendMicros(std::string& out, std::int64_t ns) {
  std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = 0 - magnitude;
  }
  char b[24];
  auto [p, ec] = std::to_chars(b, b + sizeof b, magnitude / 1000);
  (void)ec;
  out.append(b, p);
  const int frac = static_cast<int>(magnitude % 1000);
  const char d[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                     static_cast<char>('0' + frac % 10)};
  out.append(d, 4);
}

// The events as one JSON document, streamed to `out` in pieces of about 1 MiB.
class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const Schedule& s, const LogFile* log, const Analysis* a)
      : out_(out), s_(s), log_(log), a_(a), base_(log && a ? a->baseNs : 0) {
    names_.resize(s.runnables.size());
    for (RunnableId r : s.runnables.ids()) names_[r] = jsonString(qualifiedName(s, r));
  }

  void write() {
    buf_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
    metadata();
    plan();
    if (log_ != nullptr && a_ != nullptr) {
      executed();
      flows();
      chains();
    }
    buf_ += "\n]}\n";
    out_ << buf_;
  }

 private:
  void event() {
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
    if (buf_.size() > (1u << 20)) {
      out_ << buf_;
      buf_.clear();
    }
  }

  void meta(const char* what, int pid, unsigned tid, const std::string& jsonName, int sortIndex) {
    event();
    buf_ += R"({"ph":"M","name":")";
    buf_ += what;
    buf_ += R"(_name","pid":)";
    appendInt(buf_, pid);
    buf_ += R"(,"tid":)";
    appendInt(buf_, tid);
    buf_ += R"(,"args":{"name":)";
    buf_ += jsonName;
    buf_ += "}}";
    event();
    buf_ += std::string(R"({"ph":"M","name":")") + what + "_sort_index\",\"pid\":";
    appendInt(buf_, pid);
    buf_ += R"(,"tid":)";
    appendInt(buf_, tid);
    buf_ += R"(,"args":{"sort_index":)";
    appendInt(buf_, sortIndex);
    buf_ += "}}";
  }

  // Processes: the master and each client; threads: per worker of a client, plan and executed.
  void metadata() {
    meta("process", kMasterPid, 0, jsonString("master"), 0);
    meta("thread", kMasterPid, 0, jsonString("frame releases, overruns"), 0);
    if (log_ != nullptr && a_ != nullptr && !s_.chains.empty()) {
      meta("process", kChainPid, 0, jsonString("chains"), 0);
      meta("thread", kChainPid, 0, jsonString("reactions, data ages"), 0);
    }
    // The workers of a client: the hardware resources its instances run on.
    std::vector<std::vector<bool>> used(s_.clients.size(), std::vector<bool>(s_.resources.size(), false));
    for (const InstanceInfo& inst : s_.instances) {
      if (!s_.runnables.contains(inst.runnable) || inst.resources.empty()) continue;
      used[index(s_.runnables[inst.runnable].client)][index(inst.resources[0])] = true;
    }
    for (ClientId c : s_.clients.ids()) {
      meta("process", clientPid(c), 0, jsonString("client " + quoted(s_.clients[c].name)),
           static_cast<int>(index(c)) + 1);
      for (ResourceId r : s_.resources.ids()) {
        if (!used[index(c)][index(r)]) continue;
        meta("thread", clientPid(c), planTid(r), jsonString(s_.resources[r].name + " plan"),
             static_cast<int>(planTid(r)));
        meta("thread", clientPid(c), execTid(r), jsonString(s_.resources[r].name), static_cast<int>(execTid(r)));
      }
    }
  }

  // Where an instance's events go: its runnable's client, its hardware resource's worker.
  bool placed(InstanceId i, int& pid, ResourceId& resource) const {
    const InstanceInfo& inst = s_.instances[i];
    if (!s_.runnables.contains(inst.runnable) || inst.resources.empty()) return false;
    pid = clientPid(s_.runnables[inst.runnable].client);
    resource = inst.resources[0];
    return true;
  }

  std::int64_t plannedStart(InstanceId i, std::uint64_t iteration) const {
    const HyperepochId h = s_.epochs[s_.runnables[s_.instances[i].runnable].epoch].hyperepoch;
    const std::int64_t origin = log_ && a_ ? iterationStartNs(s_, *log_, *a_, h, iteration) - base_ : 0;
    return origin + s_.instances[i].startNs;
  }

  // The plan of every iteration the log names (without a log: iteration 0 from time 0).
  void plan() {
    IdVector<HyperepochId, std::vector<InstanceId>> byHyperepoch(s_.hyperepochs.size());
    for (InstanceId i : s_.instances.ids()) {
      int pid = 0;
      ResourceId res{};
      if (placed(i, pid, res))
        byHyperepoch[s_.epochs[s_.runnables[s_.instances[i].runnable].epoch].hyperepoch].push_back(i);
    }
    for (HyperepochId h : s_.hyperepochs.ids()) {
      std::vector<std::uint64_t> iterations{0};
      if (log_ != nullptr && a_ != nullptr) iterations = a_->iterations[h];
      for (std::uint64_t it : iterations) {
        for (InstanceId i : byHyperepoch[h]) {
          int pid = 0;
          ResourceId res{};
          const InstanceInfo& inst = s_.instances[i];
          placed(i, pid, res);
          event();
          buf_ += R"({"ph":"X","cat":"plan","name":)";
          buf_ += names_[inst.runnable];
          buf_ += R"(,"pid":)";
          appendInt(buf_, pid);
          buf_ += R"(,"tid":)";
          appendInt(buf_, planTid(res));
          buf_ += R"(,"ts":)";
          appendMicros(buf_, plannedStart(i, it));
          buf_ += R"(,"dur":)";
          appendMicros(buf_, inst.endNs - inst.startNs);
          buf_ += R"(,"args":{"iteration":)";
          appendInt(buf_, static_cast<std::int64_t>(it));
          buf_ += R"(,"frame":)";
          appendInt(buf_, inst.frame);
          buf_ += R"(,"instance":)";
          appendInt(buf_, index(i));
          buf_ += R"(,"wcet_us":)";
          appendMicros(buf_, s_.runnables[inst.runnable].wcetNs);
          buf_ += "}}";
        }
      }
    }
  }

  void instant(const std::string& jsonName, const char* cat, std::int64_t atNs, const std::string& args) {
    event();
    buf_ += R"({"ph":"i","s":"g","cat":")";
    buf_ += cat;
    buf_ += R"(","name":)";
    buf_ += jsonName;
    buf_ += R"(,"pid":1,"tid":0,"ts":)";
    appendMicros(buf_, atNs - base_);
    buf_ += R"(,"args":{)";
    buf_ += args;
    buf_ += "}}";
  }

  void executed() {
    char text[160];
    for (const EventRecord& r : log_->records) {
      if (r.kind == static_cast<std::uint16_t>(EventKind::kRun)) {
        if (validRun(s_, *a_, r)) run(r);
      } else if (r.kind == static_cast<std::uint16_t>(EventKind::kRelease) && s_.epochs.contains(EpochId{r.instance}) &&
                 timeValid(*a_, r.startNs) && timeValid(*a_, r.endNs)) {
        const std::string epoch = epochName(s_, EpochId{r.instance});
        std::string args = "\"epoch\":" + jsonString(epoch) + ",\"iteration\":" + std::to_string(r.iteration) +
                           ",\"frame\":" + std::to_string(r.aux) + ",\"ideal_us\":";
        appendMicros(args, r.startNs - base_);
        args += ",\"jitter_us\":";
        appendMicros(args, r.endNs - r.startNs);
        std::snprintf(text, sizeof text, " #%u", r.aux);
        instant(jsonString("release " + epoch + text), "release", r.endNs, args);
      } else if (r.kind == static_cast<std::uint16_t>(EventKind::kOverrun) && s_.epochs.contains(EpochId{r.instance}) &&
                 timeValid(*a_, r.startNs)) {
        std::snprintf(text, sizeof text, " #%u", r.aux);
        instant(jsonString("frame overrun " + epochName(s_, EpochId{r.instance}) + text), "overrun", r.startNs,
                "\"iteration\":" + std::to_string(r.iteration));
      } else if (r.kind == static_cast<std::uint16_t>(EventKind::kSkipped) &&
                 s_.hyperepochs.contains(HyperepochId{r.instance}) && timeValid(*a_, r.startNs)) {
        std::snprintf(text, sizeof text, "skipped %u periods", r.aux);
        instant(jsonString(text), "skip", r.startNs, "\"iteration\":" + std::to_string(r.iteration));
      }
    }
  }

  void run(const EventRecord& r) {
    const InstanceId i{r.instance};
    const InstanceInfo& inst = s_.instances[i];
    int pid = 0;
    ResourceId res{};
    if (!placed(i, pid, res)) return;
    const RunnableId shown = r.aux == kNone ? inst.runnable : RunnableId{r.aux};
    const std::int64_t wcet = s_.runnables[shown].wcetNs;
    const bool over = r.aux != kNone && r.endNs - r.startNs > wcet;
    const std::int64_t planned = plannedStart(i, r.iteration);
    event();
    // Formatted by hand: snprintf of doubles dominates the time on a million events.
    buf_ += over ? R"({"ph":"X","cat":"run,overrun","name":)" : R"({"ph":"X","cat":"run","name":)";
    if (over) {
      // Visible by name: "OVERRUN Client.Runnable" (search for it in Perfetto).
      buf_ += "\"OVERRUN ";
      buf_.append(names_[shown], 1, std::string::npos);
    } else {
      buf_ += names_[shown];
    }
    buf_ += R"(,"pid":)";
    appendInt(buf_, pid);
    buf_ += R"(,"tid":)";
    appendInt(buf_, execTid(res));
    buf_ += R"(,"ts":)";
    appendMicros(buf_, r.startNs - base_);
    buf_ += R"(,"dur":)";
    appendMicros(buf_, r.endNs - r.startNs);
    buf_ += R"(,"args":{"iteration":)";
    appendInt(buf_, r.iteration);
    buf_ += R"(,"frame":)";
    appendInt(buf_, inst.frame);
    buf_ += R"(,"instance":)";
    appendInt(buf_, r.instance);
    buf_ += R"(,"planned_start_us":)";
    appendMicros(buf_, planned);
    buf_ += R"(,"wcet_us":)";
    appendMicros(buf_, wcet);
    buf_ += R"(,"jitter_us":)";
    appendMicros(buf_, r.startNs - base_ - planned);
    if (over) {
      buf_ += R"(,"over_wcet_us":)";
      appendMicros(buf_, r.endNs - r.startNs - wcet);
    }
    buf_ += "}}";
  }

  // A flow arrow from each run to the runs of another client that waited for it (same iteration).
  void flows() {
    // Which instances take part: those with a predecessor in another client, and those predecessors.
    std::vector<bool> involved(s_.instances.size(), false);
    bool any = false;
    for (InstanceId i : s_.instances.ids()) {
      if (!s_.runnables.contains(s_.instances[i].runnable)) continue;
      const ClientId c = s_.runnables[s_.instances[i].runnable].client;
      for (InstanceId d : s_.instances[i].dependencies) {
        if (!s_.instances.contains(d) || !s_.runnables.contains(s_.instances[d].runnable)) continue;
        if (s_.runnables[s_.instances[d].runnable].client != c) involved[index(i)] = involved[index(d)] = any = true;
      }
    }
    if (!any) return;
    struct Ran {
      std::int64_t startNs;
      RunnableId shown;
    };
    std::unordered_map<std::uint64_t, Ran> ran;  // (instance, iteration) -> its run
    auto key = [](std::uint32_t instance, std::uint32_t iteration) {
      return (static_cast<std::uint64_t>(instance) << 32) | iteration;
    };
    for (const EventRecord& r : log_->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || !validRun(s_, *a_, r) || !involved[r.instance])
        continue;
      const RunnableId shown = r.aux == kNone ? s_.instances[InstanceId{r.instance}].runnable : RunnableId{r.aux};
      ran.emplace(key(r.instance, r.iteration), Ran{r.startNs, shown});
    }
    std::uint64_t id = 0;
    for (const EventRecord& r : log_->records) {
      if (r.kind != static_cast<std::uint16_t>(EventKind::kRun) || !validRun(s_, *a_, r) || !involved[r.instance])
        continue;
      const InstanceId i{r.instance};
      const ClientId c = s_.runnables[s_.instances[i].runnable].client;
      int pid = 0;
      ResourceId res{};
      if (!placed(i, pid, res)) continue;
      for (InstanceId d : s_.instances[i].dependencies) {
        int fromPid = 0;
        ResourceId fromRes{};
        if (!s_.instances.contains(d) || !placed(d, fromPid, fromRes) ||
            s_.runnables[s_.instances[d].runnable].client == c)
          continue;
        auto from = ran.find(key(index(d), r.iteration));
        if (from == ran.end()) continue;
        ++id;
        const std::string name =
            jsonString(qualifiedName(s_, from->second.shown) + " -> " +
                       qualifiedName(s_, r.aux == kNone ? s_.instances[i].runnable : RunnableId{r.aux}));
        flowEvent("s", name, id, fromPid, execTid(fromRes), from->second.startNs);
        flowEvent("f", name, id, pid, execTid(res), r.startNs);
      }
    }
  }

  void flowEvent(const char* ph, const std::string& jsonName, std::uint64_t id, int pid, unsigned tid,
                 std::int64_t atNs) {
    event();
    buf_ += R"({"ph":")";
    buf_ += ph;
    buf_ += R"(","cat":"dependency","name":)";
    buf_ += jsonName;
    buf_ += R"(,"id":)";
    appendInt(buf_, static_cast<std::int64_t>(id));
    buf_ += R"(,"pid":)";
    appendInt(buf_, pid);
    buf_ += R"(,"tid":)";
    appendInt(buf_, tid);
    buf_ += R"(,"ts":)";
    appendMicros(buf_, atNs - base_);
    if (ph[0] == 'f') buf_ += R"(,"bp":"e")";  // binds to the slice that starts there
    buf_ += "}";
  }

  // Every measured chain occurrence as an async slice from the source frame's release to the last
  // run's end, named "Chain reaction" or "Chain data age" ("MISS ..." over its planned bound or
  // requirement); args: the source's iteration and frame, measured, planned and required time.
  void chains() {
    std::uint64_t id = 0;
    for (std::size_t c = 0; c < s_.chains.size() && c < a_->chains.size(); ++c) {
      const ChainInfo& chain = s_.chains[c];
      for (const bool reaction : {true, false}) {
        const std::int64_t planned = reaction ? chain.reactionNs : chain.ageNs;
        const std::int64_t required = reaction ? chain.maxReactionNs : chain.maxAgeNs;
        const std::string name = chain.name + (reaction ? " reaction" : " data age");
        const std::string plain = jsonString(name), missed = jsonString("MISS " + name);
        for (const ChainOccurrence& o : reaction ? a_->chains[c].reactions : a_->chains[c].ages) {
          const bool miss = o.ns() > planned || (required != kNoDuration && o.ns() > required);
          ++id;
          for (const char* ph : {"b", "e"}) {
            event();
            buf_ += R"({"ph":")";
            buf_ += ph;
            buf_ += miss ? R"(","cat":"chain,miss","name":)" : R"(","cat":"chain","name":)";
            buf_ += miss ? missed : plain;
            buf_ += R"(,"id":)";
            appendInt(buf_, static_cast<std::int64_t>(id));
            buf_ += R"(,"pid":)";
            appendInt(buf_, kChainPid);
            buf_ += R"(,"tid":0,"ts":)";
            appendMicros(buf_, (ph[0] == 'b' ? o.releaseNs : o.endNs) - base_);
            if (ph[0] == 'e') {
              buf_ += "}";
              continue;
            }
            buf_ += R"(,"args":{"iteration":)";
            appendInt(buf_, o.source.iteration);
            buf_ += R"(,"frame":)";
            appendInt(buf_, s_.instances[o.source.instance].frame);
            buf_ += R"(,"measured_us":)";
            appendMicros(buf_, o.ns());
            buf_ += R"(,"planned_us":)";
            appendMicros(buf_, planned);
            if (required != kNoDuration) {
              buf_ += R"(,"required_us":)";
              appendMicros(buf_, required);
            }
            buf_ += "}}";
          }
        }
      }
    }
  }

  std::ostream& out_;
  const Schedule& s_;
  const LogFile* log_;
  const Analysis* a_;
  const std::int64_t base_;
  IdVector<RunnableId, std::string> names_;
  std::string buf_;
  bool first_ = true;
};

}  // namespace

void writeTrace(std::ostream& out, const Schedule& s, const LogFile* log, const Analysis* a) {
  TraceWriter(out, s, log, a).write();
}

}  // namespace tactus::report
