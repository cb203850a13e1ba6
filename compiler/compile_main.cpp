// tactus-compile: compiles a YAML compute graph into a static schedule file.
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "compile.hpp"
#include "tactus/core/command_line.hpp"

namespace {

// A compile allocates and frees arrays of one entry per instance several times (a schedule per
// priority rule, the split of a fused one, the report's and the verifier's tables), and a large
// one spent a tenth of its time in page faults. So memory freed is kept for the next of them
// rather than returned to the kernel and faulted in again page by page (large blocks come from
// the heap, not from mmap, and the heap is not trimmed), and the heap is reserved in one piece
// of 256 MiB of address space that asks for transparent huge pages, which the kernel fills 2 MiB
// at a time where it allows them (`madvise` mode): a 50,000-runnable compile then takes a few
// hundred page faults, not 20,000. Only what is touched is resident; the peak grows by less than
// a huge page per region in use.
void setUpHeap() {
  constexpr std::size_t kPad = std::size_t{256} << 20;
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kPad));
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, static_cast<int>(kPad));
  // A block larger than the heap's free top makes it grow now, by the block and the pad.
  void* block = std::malloc(std::size_t{1} << 20);
  if (block == nullptr) return;
  char* const base = static_cast<char*>(block);
  char* const from = base + (kHuge - reinterpret_cast<std::uintptr_t>(base) % kHuge) % kHuge;
  const auto start = reinterpret_cast<std::uintptr_t>(from);
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0)) & ~(kHuge - 1);
  if (end > start) madvise(from, end - start, MADV_HUGEPAGE);  // advice only: no harm where refused
  std::free(block);
}

}  // namespace

int main(int argc, char** argv) {
  setUpHeap();
  std::vector<std::string> args(argv + 1, argv + argc);
  const int code = tactus::compiler::runCompileCommand(args, std::cout, std::cerr);
  return tactus::finishStandardOutput("tactus-compile", code);  // a full disk is not success
}
