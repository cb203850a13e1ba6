// What the channel-versus-iceoryx benchmark's writers put at the start of each payload and what
// its readers record per message; shared by the harness (both sides) and the tactus client.
#pragma once

#include <time.h>

#include <cstdint>

namespace tactus::bench {

/// The first bytes of every payload, written by the writer (publisher) as its run's last stores:
/// the sequence first, the stamp last, so that the reader's first touch is a line just written
/// on another core.
struct PayloadHeader {
  std::uint64_t sequence = 0;  ///< message number, from 0: frame * channels + pair
  std::int64_t writtenNs = 0;  ///< CLOCK_MONOTONIC ns at the writer's end (its last store)
};

/// One message as the reader saw it (CLOCK_MONOTONIC ns).
struct HandOffSample {
  std::uint64_t sequence = 0;  ///< the header's sequence, as read
  std::int64_t writtenNs = 0;  ///< the writer's end (the header's stamp)
  std::int64_t startNs = 0;    ///< the reader's start: its runnable's first instruction, or the WaitSet's return
  std::int64_t touchNs = 0;    ///< after its first read of the payload (the header)
};

/// CPU time (user + system, ns) of the process `pid` (0: the calling process), or -1 when it
/// cannot be read (the process is gone).
inline std::int64_t processCpuNsOf(int pid) {
  clockid_t clock = CLOCK_PROCESS_CPUTIME_ID;
  if (pid != 0 && clock_getcpuclockid(pid, &clock) != 0) return -1;
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return -1;
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace tactus::bench
