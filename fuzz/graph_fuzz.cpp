// Fuzz entry point for the YAML graph: the compiler's parser and checks, then, for graphs of at
// most kMaxInstances instances, the scheduler under a tiny step budget. Whatever the compiler
// schedules must pass the verifier (or break only a shared limit) and read back through the
// master's schedule reader.
#include <string>

#include "fuzz_target.hpp"
#include "graph_parser.hpp"
#include "scheduler.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"

namespace {

// Larger graphs are parsed but not scheduled: the fuzzer looks for wrong answers, not for
// inputs that are merely big.
constexpr std::uint64_t kMaxInstances = 200;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tactus;
  auto graph = compiler::parseGraph(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!graph) {
    if (fuzz::checkCompilerMessages()) fuzz::checkMessage(graph.error().message);
    return 0;
  }
  std::uint64_t instances = 0;
  for (const compiler::GraphRunnable& r : graph->runnables)
    if (r.aliasGroup == kNone && graph->epochs.contains(r.epoch)) instances += graph->epochs[r.epoch].frames;
  if (instances > kMaxInstances) return 0;
  compiler::ScheduleOptions options;
  options.searchSteps = 64;
  options.allowOverlength = true;
  auto schedule = compiler::scheduleGraph(*graph, options);
  if (!schedule) return 0;
  VerifyOptions lenient;
  lenient.allowOverlength = true;
  const VerifyReport report = verifySchedule(*schedule, lenient);
  if (!report.ok()) {
    // tactus-compile verifies before writing, so a refusal is a clear error, not a bad file; a
    // limit the graph reader does not check yet is one (compiler/ is another helper's), a broken
    // scheduling invariant is a finding.
    const std::string& first = report.errors.front();
    if (first.find("above the limit") == std::string::npos && first.find(", outside 0..") == std::string::npos)
      fuzz::fail("the compiler scheduled a graph into a schedule its verifier refuses", first);
    return 0;
  }
  const std::string text = writeSchedule(*schedule);
  auto back = readSchedule(text, "compiled.tsched");
  if (!back) fuzz::fail("the compiler wrote a schedule the master cannot read", back.error().message);
  return 0;
}
