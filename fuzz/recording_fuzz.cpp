// Fuzz entry point for the recording reader (record/): the strict parse of a recording file, and
// what tactus-report makes of one that reads (the listing, the stamp CSV, the comparison with
// itself). Invariants: a recording that reads holds versions inside its bytes, compares equal to
// itself, and every message is printable.
#include <sstream>
#include <string>

#include "fuzz_target.hpp"
#include "tactus/record/compare.hpp"
#include "tactus/record/reader.hpp"
#include "tactus/record/summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tactus::record;
  auto f = parseRecording(std::string(reinterpret_cast<const char*>(data), size), "fuzz.trec");
  if (!f) {
    tactus::fuzz::checkMessage(f.error().message);
    return 0;
  }
  tactus::fuzz::checkMessage(f->stop);
  if (f->wholeBytes > f->bytes.size()) tactus::fuzz::fail("wholeBytes beyond the file", f->stop);
  for (const RecordedVersion& v : f->versions)
    if (v.dataOffset + v.rec.dataSize > f->wholeBytes) tactus::fuzz::fail("a version beyond the whole chunks", "");
  if (!scheduleDifference(*f, *f).empty()) tactus::fuzz::fail("a recording differs from itself", "");
  const Comparison c = compareRecordings(*f, *f);
  if (!c.same || c.compared != f->versions.size())
    tactus::fuzz::fail("a recording's versions differ from themselves", c.firstDifference);
  std::vector<RecordingFile> files;
  files.push_back(std::move(*f));
  const std::string listing = describeRecording(files);
  tactus::fuzz::checkMessage(listing);
  std::ostringstream csv;
  if (!files[0].schedules.empty()) writeStampsCsv(csv, files, 0);
  return 0;
}
