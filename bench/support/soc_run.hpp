// The harness of the multi-SoC benchmarks (soc-run-handoff, soc-run-four; link-handoff's
// yardstick): ITERATIONS of their command lines, a graph of bench/multisoc compiled in a scratch
// folder, each SoC's master and client started (under a prefix: a namespace), the run waited for,
// the logs read into run times per instance on the primary's clock, the followers' clock estimates,
// and the bare DDS ping-pong's figures read from dds-pingpong's output.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime_harness.hpp"
#include "tactus/core/event_log.hpp"

namespace tactus::bench {

/// ITERATIONS of a benchmark's command line (`text`; nullptr: 10000), 100..1,000,000; 0 with a
/// message on stderr (`program: ITERATIONS must be ...`) when out of range.
long socRunIterations(const char* program, const char* text);

/// The start and end of one instance's run in each iteration (0: none), on the primary's clock.
struct Runs {
  std::vector<std::int64_t> start, end;
};

/// A follower's clock estimate: the offset to the primary's clock and its bound (ns).
using ClockEstimate = std::pair<std::int64_t, std::int64_t>;

/// One run of several SoCs' masters and clients, on this machine, over DDS domain `domain`. Its
/// processes end with it.
class SocRun {
 public:
  /// `program` names the benchmark in messages; the run's files go to a scratch folder `tag`.
  SocRun(std::string program, const std::string& tag, std::string build, long iterations, std::string domain);

  /// Points DDS at loopback, compiles bench/multisoc/`graph` into the run's schedule file; false
  /// with the compiler's output on stderr when it does not compile.
  bool compile(const std::string& graph);

  /// Starts SoC `soc`'s master (its log `soc.log`, `extra` at the end of its command line) and
  /// the client `client`, both under `prefix` (nothing, or a namespace's command).
  void start(const std::string& soc, const std::string& client, const std::vector<std::string>& prefix = {},
             const std::vector<std::string>& extra = {});

  /// Waits for every process started, 20 ms an iteration and a minute more each; false with the
  /// masters' output on stderr when one failed.
  bool wait();

  /// SoC `soc`'s event log; nullopt with a message when unreadable.
  std::optional<EventLog> log(const std::string& soc) const;

  /// What SoC `soc`'s master printed.
  std::string masterOutput(const std::string& soc) const;

  /// The schedule file compiled.
  const std::string& schedule() const { return schedule_; }

  /// The run's scratch folder.
  const std::string& dir() const { return dir_; }

  /// `instances` instances with room for every iteration, none run.
  std::vector<Runs> emptyRuns(std::size_t instances) const;

 private:
  std::string program_, build_, domain_, dir_, instance_, schedule_;
  long iterations_;
  std::vector<std::string> socs_;
  std::vector<pid_t> pids_;  // master and client of each of socs_, in that order
  test::ChildProcesses kids_;
};

/// The clock estimates `log` recorded (its kClockOffset records), in order.
std::vector<ClockEstimate> clockEstimates(const EventLog& log);

/// Puts the run records of `log` (iterations below runs' size, instances below runs.size()) into
/// `runs`, moved back by `shiftNs`; with `releases`, each iteration's actual release time too.
void collectRuns(const EventLog& log, std::int64_t shiftNs, std::vector<Runs>& runs,
                 std::vector<std::int64_t>* releases = nullptr);

/// How far each estimate is from `setNs`, the offset the harness set, and how many of them are
/// within their bound.
struct EstimateErrors {
  std::vector<std::int64_t> error;
  std::size_t within = 0;
};
EstimateErrors estimateErrors(const std::vector<ClockEstimate>& estimates, std::int64_t setNs);

/// The bare Cyclone DDS ping-pong's one-way figures (us): back to back (round trip / 2) and paced
/// like a run (one ping per period, each way from the writer's stamp to the take).
struct BarePingPong {
  double p50 = 0, p99 = 0;            // back to back
  double pacedP50 = 0, pacedP99 = 0;  // paced, received by a waitset and take
  double heardP50 = 0, heardP99 = 0;  // paced, received by a listener
};

/// Runs dds-pingpong (`program`) paced at `periodUs`, echoing its output, and reads its figures;
/// false when it failed or printed one of them not.
bool barePingPong(const std::string& program, long iterations, long periodUs, BarePingPong& bare);

/// main() of a benchmark: `run`, with an exception said as `program: what` and exit status 1.
int guardedMain(const char* program, int (*run)(int, char**), int argc, char** argv);

}  // namespace tactus::bench
