// The master's idle windows: where the plan leaves the master's cores free, and when its monitor
// loop wakes.
#include <catch2/catch.hpp>

#include "roles/idle_windows.hpp"
#include "runtime_harness.hpp"
#include "tactus/core/run_plan.hpp"

namespace tactus::master {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSlice = 2 * kMs;

RunPlan planOf(const Schedule& s) {
  auto plan = makeRunPlan(s);
  REQUIRE(plan);
  return std::move(*plan);
}

// A chain A -> B on CPU0 (0..2 ms, 2..5 ms) and C on CPU1 (1..2 ms) in a 10 ms period.
Schedule chain() {
  return test::makeSchedule({{"C0", "A", "CPU0", 2 * kMs, {}, 0, {}},
                             {"C0", "B", "CPU0", 3 * kMs, {"C0.A"}, 0, {}},
                             {"C1", "C", "CPU1", kMs, {}, kMs, {}}},
                            10 * kMs);
}

TEST_CASE("the master's idle windows are the gaps the plan leaves on every core it may use", "[idle]") {
  const Schedule s = chain();
  const RunPlan plan = planOf(s);
  const IdleWindows any(s, plan, -1, 16384, kSlice, true);
  REQUIRE(any.planned());
  REQUIRE(any.windows().size() == 1);
  CHECK(any.windows()[0].startNs == 5 * kMs);  // after B, the last planned end
  CHECK(any.windows()[0].endNs == 10 * kMs);
  // Pinned to CPU1 (-c 1): CPU1 is busy 1..2 ms only, so 0..1 ms and 2..10 ms are free.
  const IdleWindows core1(s, plan, 1, 16384, kSlice, true);
  REQUIRE(core1.planned());
  REQUIRE(core1.windows().size() == 2);
  CHECK(core1.windows()[0].startNs == 0);
  CHECK(core1.windows()[0].endNs == kMs);
  CHECK(core1.windows()[1].startNs == 2 * kMs);
}

TEST_CASE("the monitor loop wakes in the middle of the next window, never inside a planned chain", "[idle]") {
  const Schedule s = chain();
  const IdleWindows w(s, planOf(s), -1, 16384, kSlice, true);
  const std::int64_t run = 1'000 * kMs;
  const std::int64_t mid = 7'500'000;                    // the window 5..10 ms: 2.5 ms from the chain's end either way
  CHECK(w.nextWakeNs(run, run + kMs) == run + mid);      // during the chain: the window after it
  CHECK(w.nextWakeNs(run, run + 5 * kMs) == run + mid);  // its planned end: not there, where a late
                                                         // chain still runs
  CHECK(w.nextWakeNs(run, run + mid) == run + 10 * kMs + mid);       // just served: the next period's
  CHECK(w.nextWakeNs(run, run + 37 * kMs) == run + 40 * kMs + mid);  // a slice on is past iteration 3's
  CHECK(w.nextWakeNs(run, run - 3 * kMs) == run + mid);              // before the first release
  CHECK(w.maxSleepNs() == 12 * kMs);                                 // a period plus the slice between looks
}

TEST_CASE("windows that repeat faster than the fixed slice do not wake the loop more often", "[idle]") {
  // A 1 ms period with A at 0..0.3 ms on CPU0: one window, 0.3..1 ms, every millisecond.
  const Schedule s = test::makeSchedule({{"C0", "A", "CPU0", 300'000, {}, 0, {}}}, kMs);
  const IdleWindows w(s, planOf(s), -1, 16384, kSlice, true);
  REQUIRE(w.planned());
  const std::int64_t run = 1'000 * kMs;
  // The window's middle: 0.65 ms.
  CHECK(w.nextWakeNs(run, run + 650'000) == run + 2 * kMs + 650'000);    // served: the window a slice on
  CHECK(w.nextWakeNs(run, run + 100'000) == run + 2 * kMs + 650'000);    // inside A: not the next window either
  CHECK(w.nextWakeNs(run, run + 1'700'000) == run + 4 * kMs + 650'000);  // a slice on is past a middle: the next one
}

TEST_CASE("without a usable window the loop keeps its fixed slice", "[idle]") {
  // A core the plan does not use (-c 5): the master disturbs nothing there.
  const Schedule s = chain();
  const RunPlan plan = planOf(s);
  const IdleWindows freeCore(s, plan, 5, 16384, kSlice, true);
  CHECK_FALSE(freeCore.planned());
  CHECK(freeCore.nextWakeNs(0, 7 * kMs) == 7 * kMs + kSlice);
  // A plan with no gap of kMinWindowNs: busy the whole period.
  const Schedule full = test::makeSchedule({{"C0", "A", "CPU0", 10 * kMs, {}, 0, {}}}, 10 * kMs);
  CHECK_FALSE(IdleWindows(full, planOf(full), -1, 16384, kSlice, true).planned());
  // Rings that would fill beyond half within a slice: 3 records per worker per 10 us period.
  const Schedule fast = test::makeSchedule({{"C0", "A", "CPU0", 1'000, {}, 0, {}},
                                            {"C0", "B", "CPU0", 1'000, {"C0.A"}, 0, {}},
                                            {"C0", "D", "CPU0", 1'000, {"C0.B"}, 0, {}}},
                                           10'000);
  CHECK_FALSE(IdleWindows(fast, planOf(fast), -1, 4, kSlice, true).planned());
}

}  // namespace
}  // namespace tactus::master
