// Fuzz entry point for the schedule file: read, verify and derive the run plan, as the master does
// on load. The content hash is recomputed first so that mutations reach past it, and (under
// libFuzzer) a field-aware mutator swaps values of `key=value` fields for boundary numbers and
// duplicates or drops whole records.
#include <algorithm>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "tactus/core/hash.hpp"
#include "tactus/core/run_plan.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

namespace {

// The text with its content_hash value replaced by the hash of the bytes before that line.
std::string rehash(std::string_view in) {
  const std::size_t at = in.rfind("\ncontent_hash ");
  if (at == std::string_view::npos) return std::string(in);
  const std::string_view body = in.substr(0, at + 1);
  const std::size_t end = in.find('\n', at + 1);
  const std::string_view rest = end == std::string_view::npos ? std::string_view() : in.substr(end);
  return std::string(body) + "content_hash " + tactus::hashToHex(tactus::hashBytes(tactus::kHashSeed, body)) +
         std::string(rest);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tactus;
  const std::string text = rehash(std::string_view(reinterpret_cast<const char*>(data), size));
  auto schedule = readSchedule(text, "fuzz.tsched");
  if (!schedule) {
    fuzz::checkMessage(schedule.error().message);
    return 0;
  }
  // What the writer makes of a schedule, the reader reads back to the same schedule.
  const std::string written = writeSchedule(*schedule);
  auto again = readSchedule(written, "rewritten.tsched");
  if (!again || writeSchedule(*again) != written) fuzz::fail("a written schedule does not read back", written);

  const VerifyReport report = verifySchedule(*schedule);
  for (const std::string& e : report.errors) fuzz::checkMessage(e);
  for (const std::string& w : report.warnings) fuzz::checkMessage(w);
  if (!report.ok()) {
    VerifyOptions lenient;  // the report's mode
    lenient.allowOverlength = true;
    (void)verifySchedule(*schedule, lenient);
    return 0;
  }
  auto plan = makeRunPlan(*schedule);
  if (!plan) fuzz::fail("a verified schedule has no run plan", plan.error().message);
  return 0;
}

#ifdef TACTUS_LIBFUZZER
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t maxSize);

// Field-aware mutations, one in two; libFuzzer's own byte mutations otherwise.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t maxSize,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (size == 0 || rng() % 2 == 0) return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char*>(data), size);
  static const char* const kValues[] = {"0",
                                        "1",
                                        "2",
                                        "-",
                                        "-1",
                                        "",
                                        "0,0",
                                        "1,0",
                                        "4294967295",
                                        "4294967294",
                                        "65535",
                                        "65536",
                                        "65537",
                                        "4194304",
                                        "4194305",
                                        "1000000000000",
                                        "1000000000001",
                                        "9223372036854775807",
                                        "18446744073709551616",
                                        "00",
                                        "x"};
  const unsigned op = static_cast<unsigned>(rng() % 4);
  switch (op) {
    case 0:
    case 1: {  // a field's value
      std::vector<std::size_t> eqs;
      for (std::size_t k = 0; k < text.size(); ++k)
        if (text[k] == '=') eqs.push_back(k);
      if (eqs.empty()) return LLVMFuzzerMutate(data, size, maxSize);
      const std::size_t from = eqs[rng() % eqs.size()] + 1;
      std::size_t to = text.find_first_of(" \n", from);
      if (to == std::string::npos) to = text.size();
      std::string value = rng() % 4 == 0 ? std::to_string(rng() % 16) : kValues[rng() % std::size(kValues)];
      text.replace(from, to - from, value);
      break;
    }
    case 2:    // a record twice
    case 3: {  // a record dropped
      std::vector<std::size_t> starts = {0};
      for (std::size_t k = 0; k + 1 < text.size(); ++k)
        if (text[k] == '\n') starts.push_back(k + 1);
      const std::size_t line = rng() % starts.size();
      const std::size_t begin = starts[line];
      const std::size_t end = line + 1 < starts.size() ? starts[line + 1] : text.size();
      const std::string record = text.substr(begin, end - begin);
      if (op == 2) text.insert(begin, record);
      else text.erase(begin, end - begin);
      break;
    }
  }
  if (text.size() > maxSize) return LLVMFuzzerMutate(data, size, maxSize);
  std::copy(text.begin(), text.end(), data);
  return text.size();
}
#endif
