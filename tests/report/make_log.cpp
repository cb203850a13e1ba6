// Test helper: writes a simulated event log for a schedule file (or a synthetic schedule and its log).
//
// usage: make_log SCHEDULE LOG [ITERATIONS] [OVERRUN_PROBABILITY]
//        make_log --synthetic RUNNABLES SCHEDULE_OUT LOG [ITERATIONS]
//        make_log --add-violation LOG SCHEDULE_ID RUNNABLE_ID   (appends one malloc violation, count 3)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "simulate.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/violation.hpp"

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--add-violation") {  // what tactus-check would have logged
    tactus::EventRecord r = tactus::makeViolationRecord(tactus::ViolationKind::kAllocation, tactus::CheckCall::kMalloc,
                                                        0, static_cast<std::uint32_t>(std::atol(argv[4])), 3, 0, 0);
    r.schedule = static_cast<std::uint16_t>(std::atol(argv[3]));
    std::ofstream log(argv[2], std::ios::binary | std::ios::app);
    log.write(reinterpret_cast<const char*>(&r), sizeof r);
    return log.good() ? 0 : 1;
  }
  tactus::report::SimulationOptions sim;
  sim.iterations = 20;
  if (argc >= 5 && std::string(argv[1]) == "--synthetic") {
    tactus::report::SyntheticShape shape;
    shape.runnables = static_cast<std::uint32_t>(std::atol(argv[2]));
    shape.clients = 8;
    shape.cpus = 8;
    shape.frames = 2;
    const tactus::Schedule s = tactus::report::makeSyntheticSchedule(shape);
    if (argc > 5) sim.iterations = std::strtoull(argv[5], nullptr, 10);
    sim.overrunProbability = 0.01;
    auto saved = tactus::saveScheduleFile(s, argv[3]);
    if (!saved) {
      std::fprintf(stderr, "make_log: %s\n", saved.error().message.c_str());
      return 1;
    }
    auto w = tactus::report::writeSimulatedLog(argv[4], s, sim);
    if (!w) {
      std::fprintf(stderr, "make_log: %s\n", w.error().message.c_str());
      return 1;
    }
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_log SCHEDULE LOG [ITERATIONS] [OVERRUN_PROBABILITY]\n");
    return 2;
  }
  auto s = tactus::loadScheduleFile(argv[1]);
  if (!s) {
    std::fprintf(stderr, "make_log: %s\n", s.error().message.c_str());
    return 1;
  }
  if (argc > 3) sim.iterations = std::strtoull(argv[3], nullptr, 10);
  sim.overrunProbability = argc > 4 ? std::atof(argv[4]) : 0.05;
  auto w = tactus::report::writeSimulatedLog(argv[2], *s, sim);
  if (!w) {
    std::fprintf(stderr, "make_log: %s\n", w.error().message.c_str());
    return 1;
  }
  return 0;
}
