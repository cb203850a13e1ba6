// tactus-compile: compiles a YAML compute graph into a static schedule file.
#include <malloc.h>

#include <iostream>
#include <string>
#include <vector>

#include "compile.hpp"

int main(int argc, char** argv) {
  // A compile allocates and frees arrays of one entry per instance several times (a schedule per
  // priority rule, the split of a fused one, the report's and the verifier's tables). Memory
  // freed is kept for the next of them rather than returned to the kernel and faulted in again
  // page by page (a tenth of a large compile's time went to page faults): large blocks come from
  // the heap, not from mmap, and the heap is not trimmed. The peak is what it was plus the
  // blocks glibc would have unmapped early.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::vector<std::string> args(argv + 1, argv + argc);
  return tactus::compiler::runCompileCommand(args, std::cout, std::cerr);
}
