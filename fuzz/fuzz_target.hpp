// What every fuzz entry point shares: the libFuzzer signature (also driven by replay_main.cpp
// under any compiler, and by AFL++'s libFuzzer driver) and the checks that turn a wrong answer
// into a crash the fuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

/// The entry point each fuzz target defines: read `data` as its reader's input. Returns 0.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace tactus::fuzz {

/// Aborts, printing `what` and `detail`: a broken invariant is a finding like a crash.
[[noreturn]] void fail(std::string_view what, std::string_view detail);

/// Aborts when a message for people holds a control byte other than a newline: every name and
/// value a reader prints from its input goes through tactus::quoted.
void checkMessage(std::string_view message);

/// Whether the compiler's messages are checked too (TACTUS_FUZZ_COMPILER_MESSAGES=1): off by
/// default while the compiler's readers are being fixed elsewhere, so its known findings do not
/// stop the search for new ones.
bool checkCompilerMessages();

}  // namespace tactus::fuzz
