// The one Catch2 main shared by every test executable: Catch2's session, plus exit status 77
// (Meson's SKIP) when every test case that ran skipped itself with TACTUS_SKIP (test_skip.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "test_skip.hpp"

namespace {

int gCasesRun = 0;
int gCasesSkipped = 0;
bool gThisCaseSkipped = false;

// Counts the test cases that ran and the ones that skipped themselves.
struct SkipCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    gThisCaseSkipped = false;
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    ++gCasesRun;
    if (gThisCaseSkipped) ++gCasesSkipped;
    TestEventListenerBase::testCaseEnded(stats);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(SkipCounter)

void tactus::test::noteSkipped() { gThisCaseSkipped = true; }

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && gCasesRun > 0 && gCasesSkipped == gCasesRun) return 77;
  return failed;
}
