// tactus-report's contract violations (see violations.hpp).
#include "violations.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "tactus/core/violation.hpp"

namespace tactus::report {
namespace {

// Keeps printable ASCII; anything else in a site (it came from a client) becomes '?'.
std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::vector<ViolationRow> collectViolations(const Schedule& schedule, const std::vector<EventRecord>& records,
                                            std::uint64_t* invalid) {
  std::map<std::tuple<RunnableId, std::uint32_t, std::uint32_t, std::uint32_t>, ViolationRow> rows;
  std::uint64_t bad = 0;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const EventRecord& r = records[k];
    if (r.kind != static_cast<std::uint16_t>(EventKind::kViolation)) continue;
    const std::uint32_t call = violationCall(r);
    const RunnableId runnable{r.aux};
    if (!schedule.runnables.contains(runnable) || !violationCodesValid(r)) {
      ++bad;
      continue;
    }
    const std::uint32_t context = violationContext(r);
    ViolationRow& row = rows[{runnable, r.detail, call, context}];
    if (row.name.empty()) {
      const RunnableInfo& info = schedule.runnables[runnable];
      row.runnable = runnable;
      row.name = schedule.clients[info.client].name + "." + info.name;
      row.kind = std::string(violationKindName(r.detail));
      row.call = std::string(checkCallName(call));
      row.info = r.detail == static_cast<std::uint16_t>(ViolationKind::kInfo);
      if (row.info && context - 1 != static_cast<std::uint32_t>(CheckCall::kUnitemised))
        row.call = std::string(checkCallName(context - 1)) + ": " + row.call;
    }
    row.count = row.count > UINT64_MAX - r.iteration ? UINT64_MAX : row.count + r.iteration;
    // The site records follow their violation record in the same worker's batch.
    std::string site;
    const std::uint32_t sites = std::min(violationSiteRecords(r), kViolationSiteRecords);
    for (std::uint32_t s = 1; s <= sites && k + s < records.size(); ++s) {
      if (records[k + s].kind != static_cast<std::uint16_t>(EventKind::kViolationSite)) break;
      appendViolationSite(records[k + s], site);
    }
    if (row.firstSite.empty() && !site.empty()) row.firstSite = printable(site);
  }
  if (invalid != nullptr) *invalid = bad;
  std::vector<ViolationRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::sort(out.begin(), out.end(), [](const ViolationRow& a, const ViolationRow& b) {
    return std::tie(a.name, a.kind, a.call) < std::tie(b.name, b.kind, b.call);
  });
  return out;
}

std::size_t countViolations(const std::vector<ViolationRow>& rows) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const ViolationRow& r) { return !r.info; }));
}

void writeViolationsCsv(std::ostream& out, const std::vector<ViolationRow>& rows, const std::string& schedule,
                        bool header) {
  const std::string last = schedule.empty() ? "\n" : "," + schedule + "\n";
  if (header) out << "runnable,kind,call,count,first_site" << (schedule.empty() ? "\n" : ",schedule\n");
  for (const ViolationRow& r : rows)
    out << csvField(r.name) << ',' << r.kind << ',' << csvField(r.call) << ',' << r.count << ','
        << csvField(r.firstSite) << last;
}

namespace {

void writeRows(std::ostream& out, const std::vector<ViolationRow>& rows, bool info, const char* title) {
  std::size_t wName = 8, wKind = 4, wCall = 4, n = 0;
  for (const ViolationRow& r : rows) {
    if (r.info != info) continue;
    ++n;
    wName = std::max(wName, r.name.size());
    wKind = std::max(wKind, r.kind.size());
    wCall = std::max(wCall, r.call.size());
  }
  if (n == 0) return;
  auto pad = [](const std::string& s, std::size_t w) { return s + std::string(w - std::min(w, s.size()), ' '); };
  out << "\n" << title << ": " << n << "\n";
  out << "  " << pad("runnable", wName) << "  " << pad("kind", wKind) << "  " << pad("call", wCall)
      << "  count       first site\n";
  for (const ViolationRow& r : rows) {
    if (r.info != info) continue;
    const std::string count = std::to_string(r.count);
    out << "  " << pad(r.name, wName) << "  " << pad(r.kind, wKind) << "  " << pad(r.call, wCall) << "  "
        << pad(count, 10) << "  " << (r.firstSite.empty() ? "-" : r.firstSite) << "\n";
  }
}

}  // namespace

void writeViolationsTable(std::ostream& out, const std::vector<ViolationRow>& rows) {
  writeRows(out, rows, false, "contract violations (tactus-check)");
  std::uint64_t unitemised = 0;
  for (const ViolationRow& r : rows)
    if (!r.info && r.call == checkCallName(static_cast<std::uint32_t>(CheckCall::kUnitemised)))
      unitemised = unitemised > UINT64_MAX - r.count ? UINT64_MAX : unitemised + r.count;
  if (unitemised != 0)
    out << "  note: " << unitemised
        << " further occurrences were not itemised (call 'unitemised'): a worker's table of distinct "
           "violations was full (raise tactus-check --entries)\n";
  writeRows(out, rows, true,
            "the CUDA runtime's work inside runnables' calls into it (tactus-check, information, not violations)");
}

void markViolations(view::Execution& execution, const std::vector<ViolationRow>& rows) {
  for (const ViolationRow& r : rows) {
    if (r.info) continue;
    if (!execution.runnables.contains(r.runnable)) execution.runnables.resize(index(r.runnable) + std::size_t{1});
    std::string& text = execution.runnables[r.runnable].violations;
    text += (text.empty() ? "" : ", ") + r.kind + ": " + r.call + " x" + std::to_string(r.count);
  }
}

}  // namespace tactus::report
