// Fuzz entry point for the WCET side file (tactus-compile --wcet): applied to a fixed graph
// with a round-robin group, as the compiler applies it after parsing.
#include <string>

#include "fuzz_target.hpp"
#include "graph_parser.hpp"
#include "wcet_file.hpp"

namespace {

constexpr const char* kGraph = R"yaml(
# round_robin.yaml: round-robin slots (AliasGroups): runnables that take turns by frame.
#
#   Main.Tick, 4 frames of 10 ms:   frame 0    frame 1    frame 2    frame 3
#     Housekeeping slot (CPU1):     Diag       Stats      (none)     Diag
#     Heavy slot (CPU0):            CalibA     CalibB     CalibA     CalibB
#     Log slot (CPU1):              LogA       LogB       LogA       LogB
#
# A group shares one slot: frame k runs Steps[k mod len(Steps)]; `None` is an empty step.
# Members of a group belong to one client and one epoch and use the same resources; the slot
# is as long as its longest member. Dependencies on a member are dependencies on its group, so
# a group that depends on another needs the same number of steps (Log after Heavy: 2 and 2).
Version: 3.0.0
RoundRobin:
  Identifier: 5
  Resources:
    CPU: [CPU0, CPU1]
  Hyperepochs:
    - Main:
        Period: 40ms
        Epochs:
          - Tick: {Period: 10ms, Frames: 4}
  Clients:
    - Worker:
        Epochs:
          - Main.Tick:
              Runnables:
                - Sample: {WCET: 1ms, Resources: [CPU0]}
                - Diag: {WCET: 2ms, Resources: [CPU1]}
                - Stats: {WCET: 1ms, Resources: [CPU1]}
                - CalibA:
                    WCET: 3ms
                    Resources: [CPU0]
                    Dependencies: [Worker.Sample]
                - CalibB:
                    WCET: 2ms
                    Resources: [CPU0]
                    Dependencies: [Worker.Sample]
                - LogA:
                    WCET: 500us
                    Resources: [CPU1]
                    Dependencies: [Worker.CalibA]
                - LogB:
                    WCET: 500us
                    Resources: [CPU1]
                    Dependencies: [Worker.CalibB]
              AliasGroups:
                - Housekeeping:
                    Steps: [Worker.Diag, Worker.Stats, None]
                - Heavy:
                    Steps: [Worker.CalibA, Worker.CalibB]
                - Log:
                    Steps: [Worker.LogA, Worker.LogB]
)yaml";

const tactus::compiler::Graph& graph() {
  static const tactus::compiler::Graph g = [] {
    auto parsed = tactus::compiler::parseGraph(std::string_view(kGraph).substr(1), "wcet_fuzz.yaml");
    if (!parsed) tactus::fuzz::fail("the WCET fuzzer's graph does not parse", parsed.error().message);
    return *parsed;
  }();
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tactus::compiler::Graph g = graph();
  auto applied =
      tactus::compiler::applyWcetFile(g, std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.wcet");
  if (!applied && tactus::fuzz::checkCompilerMessages()) tactus::fuzz::checkMessage(applied.error().message);
  return 0;
}
