// tactus-check's look at the client program before it runs it: whether the program carries the
// CUDA runtime linked in statically (nvcc's default), whose calls no preloaded library can see.
#pragma once

#include <string>

namespace tactus::check {

/// What the static CUDA runtime in `program` keeps from being checked, as a warning line (without
/// the program's prefix), or "" when the program is not an ELF file, cannot be read, or links the
/// CUDA runtime dynamically or not at all. `program` is found on PATH when it has no '/'.
std::string staticCudartWarning(const std::string& program);

}  // namespace tactus::check
