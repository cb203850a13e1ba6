// tactus-gen-graph: writes a seeded synthetic STM-format YAML graph of N runnables (speed benchmark).
//
// usage: tactus-gen-graph N [-s SEED] [-o FILE]   (default seed 1, default output stdout)
// Shape: 8 CPUs, 2 GPUs, 8 clients each with a stream per GPU, one hyperepoch with epochs Fast
// (4 frames), Mid (2) and Slow (1), layered dependencies, every 16th runnable a submitter with its
// GPU submittee; the period leaves room for three times the load. Same N and seed, same bytes.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "gen_model.hpp"

namespace {

bool parseNumber(const std::string& text, std::uint32_t& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t count = 0;
  std::uint32_t seed = 1;
  std::string output;
  bool haveCount = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "-s" || a == "-o") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "-o") {
        output = v;
      } else if (!parseNumber(v, seed)) {
        std::fprintf(stderr, "tactus-gen-graph: seed '%s' is not a number\n", v.c_str());
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: tactus-gen-graph N [-s SEED] [-o FILE]\n");
      return 0;
    } else if (!haveCount && parseNumber(a, count) && count > 0) {
      haveCount = true;
    } else {
      std::fprintf(stderr,
                   "tactus-gen-graph: unexpected argument '%s' (usage: tactus-gen-graph N [-s SEED] [-o FILE])\n",
                   a.c_str());
      return 2;
    }
  }
  if (!haveCount) {
    std::fprintf(stderr, "usage: tactus-gen-graph N [-s SEED] [-o FILE]\n");
    return 2;
  }
  const std::string yaml = tactus::bench::modelYaml(tactus::bench::generateModel(count, seed));
  if (output.empty()) {
    std::cout << yaml;
    return std::cout ? 0 : 1;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << yaml;
  if (!out) {
    std::fprintf(stderr, "tactus-gen-graph: %s: cannot write file\n", output.c_str());
    return 1;
  }
  return 0;
}
