// The iceoryx side of channel-iceoryx-bench: a RouDi of the benchmark's own, in private mount, IPC
// and network namespaces (fresh tmpfs on /dev/shm and /tmp, no network but a loopback that is
// down), so that it can meet no other RouDi, iceoryx application or tactus run, and leaves nothing
// behind however it ends; and the publisher and subscriber processes each run starts there.
//
//   harness ──pipe──> domain process (namespaces; stops RouDi when the pipe closes)
//      │                 ├── iox-roudi -c /tmp/roudi.toml   (PR_SET_PDEATHSIG: dies with it)
//      │                 ├── publisher  (core 0) ─ data ─>  subscriber (core 1), WaitSet
//      │                 │              <─ ack ─            (fast mode: each message; paced: the last)
//      └── shared anonymous memory: the request, the subscriber's samples, the CPU times
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "payload_bench.hpp"

namespace tactus::bench {

/// One iceoryx run: `messages` of `payloadBytes`, the first `warmup` not measured.
struct IoxRequest {
  std::uint64_t payloadBytes = 0;
  std::uint64_t messages = 0;
  std::uint64_t warmup = 0;
  std::int64_t periodNs = 0;  ///< one message per period (1 kHz: 1 ms); 0: the next after the previous one's ack
  int fifoPriority = 0;       ///< publisher and subscriber under SCHED_FIFO at this priority; 0: as started
};

struct IoxShared;  // the block the harness and the domain's processes share (iox_domain.cpp)

/// What an iceoryx run measured.
struct IoxResult {
  std::vector<HandOffSample> samples;  ///< the measured messages, as the subscriber saw them
  /// CPU time (ns) over the measured messages: publisher, subscriber, RouDi.
  std::int64_t writerCpuNs = 0, readerCpuNs = 0, brokerCpuNs = 0;
  std::string error;  ///< empty when the run worked
};

/// A private RouDi and the processes of its runs; stopped (RouDi with SIGTERM, then SIGKILL) at
/// destruction, and by the kernel (parent-death signals, the namespaces' tmpfs) if the harness dies.
class IoxDomain {
 public:
  /// Starts the domain process and RouDi (`roudiPath`, iox-roudi) with memory pools for payloads
  /// of `payloadSizes` bytes, for runs of up to `maxMessages`. Check error() after.
  IoxDomain(const std::string& roudiPath, const std::vector<std::uint64_t>& payloadSizes, std::uint64_t maxMessages);
  ~IoxDomain();
  IoxDomain(const IoxDomain&) = delete;
  IoxDomain& operator=(const IoxDomain&) = delete;

  /// Empty when RouDi runs; else why not.
  const std::string& error() const { return error_; }
  /// Whether the error is that this machine gives no private namespaces (then the benchmark is
  /// skipped rather than risk meeting another RouDi).
  bool noNamespaces() const { return noNamespaces_; }
  /// Runs one publisher-subscriber pair to the end (a deadline of `timeoutNs`).
  IoxResult run(const IoxRequest& request, std::int64_t timeoutNs);

 private:
  void stop();
  IoxShared* shared_ = nullptr;
  std::size_t sharedBytes_ = 0;
  pid_t domain_ = -1;
  int commandFd_ = -1, replyFd_ = -1;
  std::string error_;
  bool noNamespaces_ = false;
};

}  // namespace tactus::bench
