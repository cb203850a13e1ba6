// Test helper: writes a simulated event log for a schedule file (or a synthetic schedule and its log).
//
// usage: make_log SCHEDULE LOG [ITERATIONS] [OVERRUN_PROBABILITY]
//        make_log --synthetic RUNNABLES SCHEDULE_OUT LOG [ITERATIONS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "simulate.hpp"
#include "tactus/core/schedule_file.hpp"

int main(int argc, char** argv) {
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
