#include "tactus/record/compare.hpp"

#include <map>
#include <tuple>

#include "tactus/core/hash.hpp"
#include "tactus/core/text.hpp"

namespace tactus::record {
namespace {

std::string byteText(std::string_view data, std::size_t i) {
  if (i >= data.size()) return "(none: " + std::to_string(data.size()) + " bytes)";
  static const char* hex = "0123456789abcdef";
  const auto c = static_cast<unsigned char>(data[i]);
  return std::string("0x") + hex[c >> 4] + hex[c & 15];
}

using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>;

Key keyOf(const RecordedVersion& v) { return {v.rec.scheduleId, v.rec.channel, v.rec.writerInstance, v.rec.iteration}; }

}  // namespace

std::string scheduleDifference(const RecordingFile& a, const RecordingFile& b) {
  if (a.schedules.size() != b.schedules.size())
    return std::to_string(a.schedules.size()) + " schedules against " + std::to_string(b.schedules.size());
  for (std::size_t i = 0; i < a.schedules.size(); ++i) {
    const ScheduleRecord& x = a.schedules[i].rec;
    const ScheduleRecord& y = b.schedules[i].rec;
    const std::string which = "schedule " + std::to_string(i) + " (" + tactus::quoted(a.schedules[i].name) + " and " +
                              tactus::quoted(b.schedules[i].name) + "): ";
    if (x.identifier != y.identifier)
      return which + "identifier " + std::to_string(x.identifier) + " against " + std::to_string(y.identifier);
    if (x.contentHash != y.contentHash)
      return which + "content hash " + hashToHex(x.contentHash) + " against " + hashToHex(y.contentHash);
    if (x.channelCount != y.channelCount)
      return which + std::to_string(x.channelCount) + " channels against " + std::to_string(y.channelCount);
    if (x.channelLayoutHash != y.channelLayoutHash)
      return which + "channel layout hash " + hashToHex(x.channelLayoutHash) + " against " +
             hashToHex(y.channelLayoutHash);
    if (x.instanceCount != y.instanceCount)
      return which + std::to_string(x.instanceCount) + " instances against " + std::to_string(y.instanceCount);
  }
  return {};
}

Comparison compareRecordings(const RecordingFile& a, const RecordingFile& b) {
  Comparison c;
  std::map<Key, const RecordedVersion*> inA;
  for (const RecordedVersion& v : a.versions) inA.emplace(keyOf(v), &v);
  for (const RecordedVersion& v : b.versions) {
    const auto it = inA.find(keyOf(v));
    if (it == inA.end()) {
      ++c.onlyB;
      continue;
    }
    ++c.compared;
    const std::string_view x = a.data(*it->second);
    const std::string_view y = b.data(v);
    if (!c.same || x == y) continue;
    std::size_t i = 0;
    while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
    c.same = false;
    const RecordedSchedule* s = b.schedule(v.rec.scheduleId);
    c.firstDifference = "schedule " + (s ? tactus::quoted(s->name) : std::string("?")) + " channel " +
                        (s && v.rec.channel < s->channels.size() ? tactus::quoted(s->channels[v.rec.channel])
                                                                 : std::to_string(v.rec.channel)) +
                        ", writer instance " + std::to_string(v.rec.writerInstance) + ", iteration " +
                        std::to_string(v.rec.iteration - 1) + ": byte " + std::to_string(i) + " is " + byteText(x, i) +
                        " in " + a.path + " and " + byteText(y, i) + " in " + b.path;
  }
  c.onlyA = a.versions.size() - c.compared;
  return c;
}

}  // namespace tactus::record
