// Unit tests of libtactus in one process, without a master: what the API says before init, when
// no master comes, and for bad arguments. Runs against a master are in tests/runtime.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "runtime_harness.hpp"
#include "tactus/client.hpp"
#include "tactus/stm.h"

using namespace tactus;

TEST_CASE("before init every call that needs a client refuses with kInvalidState", "[client]") {
  auto registered = registerRunnable("A", [] {});
  REQUIRE_FALSE(registered.has_value());
  CHECK(registered.error().code == ErrorCode::kInvalidState);
  CHECK_THAT(registered.error().message, Catch::Contains("not initialized"));
  auto names = scheduledRunnables();
  REQUIRE_FALSE(names.has_value());
  CHECK(names.error().code == ErrorCode::kInvalidState);
  auto info = runtimeInfo();
  REQUIRE_FALSE(info.has_value());
  CHECK(info.error().code == ErrorCode::kInvalidState);
  auto now = logicalNowNs();
  REQUIRE_FALSE(now.has_value());
  CHECK(now.error().code == ErrorCode::kInvalidState);
  CHECK_THAT(now.error().message, Catch::Contains("only available inside a runnable"));
  std::int64_t ns = 0;
  CHECK(tactusLogicalNowNs(nullptr) == STM_ERROR_BAD_PARAMETER);
  CHECK(tactusLogicalNowNs(&ns) == STM_ERROR_INVALID_STATE);
  const RunOutcome outcome = enterScheduler();
  CHECK(outcome.status == RunStatus::kError);
  CHECK_FALSE(outcome.message.empty());
  exitScheduler();  // does nothing before init, and must not crash
  shutdown();
}

TEST_CASE("init refuses an empty client name and times out naming the instance without a master", "[client]") {
  auto empty = init("", {.instance = test::uniqueInstance("client"), .timeoutMs = 0});
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().code == ErrorCode::kBadParameter);

  const std::string instance = test::uniqueInstance("client");
  auto alone = init("Client0", {.instance = instance, .timeoutMs = 50});
  REQUIRE_FALSE(alone.has_value());
  CHECK(alone.error().code == ErrorCode::kTimeout);
  CHECK_THAT(alone.error().message, Catch::Contains("no master for instance '" + instance + "'"));
  CHECK_FALSE(test::segmentPresent(instance));
  // A failed init leaves the library uninitialized: the next call still says so.
  auto after = scheduledRunnables();
  REQUIRE_FALSE(after.has_value());
  CHECK(after.error().code == ErrorCode::kInvalidState);
}

TEST_CASE("every run status has its own lower-case name", "[client]") {
  const RunStatus all[] = {RunStatus::kFrameLimit, RunStatus::kExitRequested, RunStatus::kStoppedBySignal,
                           RunStatus::kTimeout,    RunStatus::kPeerDied,      RunStatus::kError};
  std::set<std::string> names;
  for (const RunStatus s : all) {
    const std::string name = runStatusName(s);
    CHECK_FALSE(name.empty());
    for (const char c : name) CHECK((c == '-' || (c >= 'a' && c <= 'z')));
    names.insert(name);
  }
  CHECK(names.size() == std::size(all));
  CHECK(std::string(runStatusName(RunStatus::kFrameLimit)) == "frame-limit");
  CHECK(std::string(runStatusName(RunStatus::kPeerDied)) == "peer-died");
}
