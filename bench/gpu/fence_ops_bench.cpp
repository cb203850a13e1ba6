// fence-ops-bench: what the two stream memory operations the GPU engine enqueues per submitter
// cost the calling thread on the CUDA stand-in (cuStreamWaitValue64 on a reached fence, then
// cuStreamWriteValue64), with the stream's thread asleep before each pair as it is between
// frames. Prints p50/p90/p99 per call; the stand-in only, never GPU figures.
//
//   fence-ops-bench [PAIRS]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "bench_support.hpp"

namespace {

using MemOp = int (*)(CUstream_st*, unsigned long long, std::uint64_t, unsigned int);

using tactus::bench::monotonicNs;

void print(const char* what, std::vector<std::int64_t>& v) {
  std::sort(v.begin(), v.end());
  std::printf("  %-22s p50 %6lld ns  p90 %6lld ns  p99 %6lld ns  (%zu calls)\n", what,
              static_cast<long long>(v[v.size() / 2]), static_cast<long long>(v[v.size() * 9 / 10]),
              static_cast<long long>(v[v.size() * 99 / 100]), v.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int pairs = argc > 1 ? std::atoi(argv[1]) : 20000;
  if (pairs <= 0) {
    std::fprintf(stderr, "usage: fence-ops-bench [PAIRS]\n");
    return 2;
  }
  cudaStream_t stream = nullptr;
  void* wait = nullptr;
  void* write = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      tactusCudaStandinDriverEntryPoint("cuStreamWaitValue64", &wait) != cudaSuccess ||
      tactusCudaStandinDriverEntryPoint("cuStreamWriteValue64", &write) != cudaSuccess) {
    std::fprintf(stderr, "fence-ops-bench: the stand-in refused a stream or a driver entry point\n");
    return 1;
  }
  std::atomic<std::uint64_t> predecessor{1}, own{0};
  std::vector<std::int64_t> waits, writes;
  waits.reserve(static_cast<std::size_t>(pairs));
  writes.reserve(static_cast<std::size_t>(pairs));
  for (int i = 0; i < pairs; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // the stream thread goes to sleep
    const std::int64_t t0 = monotonicNs();
    reinterpret_cast<MemOp>(wait)(stream, reinterpret_cast<std::uintptr_t>(&predecessor), 1, 0);
    const std::int64_t t1 = monotonicNs();
    reinterpret_cast<MemOp>(write)(stream, reinterpret_cast<std::uintptr_t>(&own), static_cast<std::uint64_t>(i) + 1,
                                   0);
    const std::int64_t t2 = monotonicNs();
    waits.push_back(t1 - t0);
    writes.push_back(t2 - t1);
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  std::printf("fence-ops-bench: %d pairs on the CUDA stand-in (calling thread's wall time per call)\n", pairs);
  print("cuStreamWaitValue64", waits);
  print("cuStreamWriteValue64", writes);
  return own.load() == static_cast<std::uint64_t>(pairs) ? 0 : 1;
}
