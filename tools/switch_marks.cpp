// Switch marks and the Chrome trace of a run of several schedules (see switch_marks.hpp).
#include "switch_marks.hpp"

#include <algorithm>
#include <cstdio>

#include "tactus/core/event_log.hpp"
#include "tactus/core/text.hpp"

namespace tactus::report {

namespace {

constexpr std::uint32_t kNoSchedule = 0xffffffffu;

std::string hyperepochName(const Schedule* s, std::uint32_t he) {
  return s != nullptr && he < s->hyperepochs.size() ? quoted(s->hyperepochs[HyperepochId{he}].name)
                                                    : std::to_string(he);
}

}  // namespace

const Schedule* scheduleOf(const std::vector<Schedule>& schedules, std::uint32_t id) {
  for (const Schedule& s : schedules) {
    if (s.identifier == id) return &s;
  }
  return nullptr;
}

std::int64_t switchAtNs(const EventRecord& r) {
  const bool stop = r.kind == static_cast<std::uint16_t>(EventKind::kScheduleStop);
  return stop && r.endNs < r.startNs ? r.startNs : r.endNs;
}

std::vector<SwitchMark> collectSwitchMarks(const LogFile& log, const std::vector<Schedule>& schedules) {
  std::vector<SwitchMark> marks;
  for (const EventRecord& r : log.records) {
    const auto kind = static_cast<EventKind>(r.kind);
    if (kind != EventKind::kScheduleStart && kind != EventKind::kScheduleStop && kind != EventKind::kPolicyDecision)
      continue;
    const Schedule* s = scheduleOf(schedules, r.schedule);
    SwitchMark m;
    m.schedule = r.schedule;
    if (kind == EventKind::kPolicyDecision) {
      m.atNs = r.startNs;
      m.text = "policy rule " + std::to_string(r.instance + 1) +
               (r.aux != kNoSchedule ? ": roll over to " + std::to_string(r.aux) : ": no switch");
    } else {
      const bool start = kind == EventKind::kScheduleStart;
      m.atNs = switchAtNs(r);
      m.hyperepoch = r.instance;
      m.text =
          std::string(start ? "start " : "stop ") + std::to_string(r.schedule) + " on " + hyperepochName(s, r.instance);
      if (r.aux != kNoSchedule)
        m.text += std::string(start ? " (rollover from " : " (rollover to ") + std::to_string(r.aux) + ")";
    }
    marks.push_back(std::move(m));
  }
  std::stable_sort(marks.begin(), marks.end(),
                   [](const SwitchMark& a, const SwitchMark& b) { return a.atNs < b.atNs; });
  return marks;
}

void writeManagedTrace(std::ostream& out, const LogFile& log, const std::vector<Schedule>& schedules) {
  std::int64_t base = log.header.runStartNs;
  if (base <= 0) {
    for (const EventRecord& r : log.records) {
      if (r.startNs > 0 && (base <= 0 || r.startNs < base)) base = r.startNs;
    }
  }
  std::string buf = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  char line[640];
  auto emit = [&](const char* text) {
    buf += first ? "\n" : ",\n";
    buf += text;
    first = false;
    if (buf.size() > (1u << 20)) {
      out << buf;
      buf.clear();
    }
  };
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    const Schedule& s = schedules[k];
    const std::string name =
        jsonString("schedule " + std::to_string(s.identifier) + " " + quoted(s.name) + " (executed)");
    std::snprintf(line, sizeof line, R"({"ph":"M","name":"process_name","pid":%zu,"tid":0,"args":{"name":%s}})", k + 1,
                  name.c_str());
    emit(line);
    for (std::size_t r = 0; r < s.resources.size(); ++r) {
      if (s.resources[ResourceId{static_cast<std::uint32_t>(r)}].hyperepoch == kNone) continue;
      std::snprintf(line, sizeof line, R"({"ph":"M","name":"thread_name","pid":%zu,"tid":%zu,"args":{"name":%s}})",
                    k + 1, r, jsonString(s.resources[ResourceId{static_cast<std::uint32_t>(r)}].name).c_str());
      emit(line);
    }
  }
  for (const EventRecord& r : log.records) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kRun)) continue;
    std::size_t k = 0;
    while (k < schedules.size() && schedules[k].identifier != r.schedule) ++k;
    if (k == schedules.size()) continue;
    const Schedule& s = schedules[k];
    if (r.instance >= s.instances.size() || r.endNs < r.startNs || r.startNs < base) continue;
    const InstanceInfo& inst = s.instances[InstanceId{r.instance}];
    const RunnableId shown = r.aux < s.runnables.size() ? RunnableId{r.aux} : inst.runnable;
    if (index(shown) >= s.runnables.size()) continue;
    std::snprintf(
        line, sizeof line,
        R"({"ph":"X","cat":"run","name":%s,"pid":%zu,"tid":%u,"ts":%.3f,"dur":%.3f,"args":{"iteration":%u,"instance":%u}})",
        jsonString(qualifiedName(s, shown)).c_str(), k + 1, inst.resources.empty() ? 0u : index(inst.resources[0]),
        static_cast<double>(r.startNs - base) / 1e3, static_cast<double>(r.endNs - r.startNs) / 1e3, r.iteration,
        r.instance);
    emit(line);
  }
  for (const SwitchMark& m : collectSwitchMarks(log, schedules)) {
    if (m.atNs < base) continue;
    std::size_t k = 0;
    while (k < schedules.size() && schedules[k].identifier != m.schedule) ++k;
    std::snprintf(line, sizeof line, R"({"ph":"i","s":"g","cat":"switch","name":%s,"pid":%zu,"tid":0,"ts":%.3f})",
                  jsonString(m.text).c_str(), k + 1, static_cast<double>(m.atNs - base) / 1e3);
    emit(line);
  }
  buf += "\n]}\n";
  out << buf;
}

}  // namespace tactus::report
