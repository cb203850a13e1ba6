// Skipping a Catch2 test case that cannot run on this machine (a device node mknod may not make),
// so that it is reported as skipped instead of passed. Catch2 2.x has no skip of its own: the case
// records the skip and returns; a test executable whose every selected case skipped exits with 77,
// Meson's SKIP. Skippable cases are therefore tagged [device] and run as a meson test of their own
// (`<exe> [device]`, the module's main test runs `~[device]`).
#pragma once

#include <catch2/catch.hpp>

namespace tactus::test {

/// Records that the running test case skipped itself (use TACTUS_SKIP, which also says why).
void noteSkipped();

}  // namespace tactus::test

/// Leaves the running test case (from its body, not from a helper function) as skipped, with the
/// reason in Catch2's output.
#define TACTUS_SKIP(reason)                                                               \
  do {                                                                                    \
    ::tactus::test::noteSkipped();                                                        \
    WARN("skipped: " << reason); /* NOLINT(bugprone-macro-parentheses): a stream chain */ \
    return;                                                                               \
  } while (false)
