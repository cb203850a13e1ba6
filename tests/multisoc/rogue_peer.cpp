// A rogue participant for the trust tests: it joins a multi-SoC run's DDS domain with whatever
// configuration CYCLONEDDS_URI gives it (no certificates of the run's authority) and, for
// --seconds, publishes forged samples of schedule --schedule as SoC --soc: the end of runnable
// --runnable (frame 0) in every iteration from --from to --to, and, with --stop-at N, the
// primary's stop before iteration N. Every 50 ms it publishes them all again, so a master that
// matches it late still gets them. At the end it prints on stdout what it sent and how many of the
// run's masters it ever matched: `rogue: published E ends, S stops; matched M`. As any follower's
// link, it learns the run's identity from the primary's ready state (no secret: DDS Security is).
//
// tactus-rogue-peer --domain D --schedule ID --soc S --runnable R --from A --to B
//                   [--stop-at N] [--seconds S]
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tactus/ipc/clock.hpp"
#include "tactus/soc_link/soc_link.hpp"

namespace {

struct Options {
  tactus::soc_link::LinkOptions link;
  std::uint32_t runnable = 0;
  std::uint64_t from = 0, to = 0, stopAt = 0;
  double seconds = 3.0;
};

bool parse(int argc, char** argv, Options& o) {
  for (int k = 1; k + 1 < argc; k += 2) {
    const std::string a = argv[k];
    const std::string v = argv[k + 1];
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (a != "--seconds" && (end == v.c_str() || *end != '\0')) return false;
    if (a == "--domain") o.link.domain = static_cast<std::uint32_t>(n);
    else if (a == "--schedule") o.link.schedule = static_cast<std::uint16_t>(n);
    else if (a == "--soc") o.link.soc = static_cast<std::uint32_t>(n);
    else if (a == "--runnable") o.runnable = static_cast<std::uint32_t>(n);
    else if (a == "--from") o.from = n;
    else if (a == "--to") o.to = n;
    else if (a == "--stop-at") o.stopAt = n;
    else if (a == "--seconds") o.seconds = std::atof(v.c_str());
    else return false;
  }
  return argc % 2 == 1 && o.to >= o.from && o.seconds > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: tactus-rogue-peer --domain D --schedule ID --soc S --runnable R --from A --to B "
                 "[--stop-at N] [--seconds S]\n");
    return 2;
  }
  auto link = tactus::soc_link::Link::open(o.link);
  if (!link) {
    std::fprintf(stderr, "tactus-rogue-peer: %s\n", link.error().message.c_str());
    return 1;
  }
  std::uint64_t ends = 0, stops = 0;
  std::uint32_t matched = 0;
  const std::int64_t until = tactus::ipc::monotonicNs() + static_cast<std::int64_t>(o.seconds * 1e9);
  bool adopted = false;
  while (tactus::ipc::monotonicNs() < until) {
    (void)(*link)->peers();  // as SoC --soc, it adopts the run of the primary's ready state (link v2)
    if (!adopted && (*link)->runId() != 0) {
      adopted = true;  // said at once: a test starts the run's clients only after it
      std::printf("rogue: adopted the run\n");
      std::fflush(stdout);
    }
    for (std::uint64_t it = o.from; it <= o.to; ++it) {
      if ((*link)->publishEnd(it, 0, o.runnable, tactus::ipc::monotonicNs())) ++ends;
    }
    if (o.stopAt > 0 && (*link)->publishRelease(0, o.stopAt, 0, o.stopAt + 1)) ++stops;
    matched = std::max({matched, (*link)->matchedPeers(), (*link)->releaseWriterMatches()});
    ::usleep(50'000);
  }
  std::printf("rogue: published %llu ends, %llu stops; matched %u\n", static_cast<unsigned long long>(ends),
              static_cast<unsigned long long>(stops), matched);
  return 0;
}
