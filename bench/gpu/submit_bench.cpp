// gpu-submit-bench: what the GPU engine costs a CPU worker per CUDA submitter, beyond the
// submitter's own body (enqueueing the fence waits on its predecessors, the start and completion
// fence writes with their time stamps, and publishing the submission word), measured on the CUDA
// stand-in with the real master and two client processes (submit_bench.yaml). The overhead is the
// worker's wall time outside the body (CLOCK_MONOTONIC), not its thread CPU time: the engine never
// waits there, so it bounds the CPU time from above (a preemption counts in it). Prints p50/p99/max
// per client, how many fence waits blocked a stream, and the stand-in's count of synchronising
// CUDA calls made by threads that submit work (must be 0: no CPU worker ever waits on the GPU).
//
//   gpu-submit-bench TACTUS_COMPILE TACTUS_MASTER GRAPH [ITERATIONS]
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tactus/client.hpp"
#include "tactus/cuda.hpp"

namespace {

void kernel(void*) {}  // the stand-in's "GPU work": nothing, so the figures show the engine alone

int runClient(const std::string& name, const std::string& instance, int outFd) {
  tactus::InitOptions options;
  options.instance = instance;
  options.timeoutMs = 20'000;
  if (auto ok = tactus::init(name, options); !ok) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), ok.error().message.c_str());
    return 3;
  }
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 3;
  if (auto ok = tactus::cuda::registerStream("CUDA_STREAM0", stream); !ok) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), ok.error().message.c_str());
    return 3;
  }
  auto names = tactus::scheduledRunnables();
  if (!names) return 3;
  for (const std::string& n : *names) {
    if (auto ok = tactus::cuda::registerSubmitter(n, [](cudaStream_t s) { cudaLaunchHostFunc(s, kernel, nullptr); });
        !ok) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), ok.error().message.c_str());
      return 3;
    }
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  const tactus::cuda::EngineStats st = tactus::cuda::engineStats();
  const tactusCudaStandinStats sd = tactusCudaStandinGetStats();
  char line[512];
  const int len = std::snprintf(
      line, sizeof line,
      "  %-6s %8llu submissions  overhead p50 %6.2f us  p99 %6.2f us  max %7.2f us  (%llu samples)\n"
      "         fence waits enqueued %llu, of which blocked a stream %llu\n"
      "         synchronising CUDA calls by submitting threads: %llu  run: %s\n",
      name.c_str(), static_cast<unsigned long long>(st.submissions), static_cast<double>(st.overheadP50Ns) / 1000.0,
      static_cast<double>(st.overheadP99Ns) / 1000.0, static_cast<double>(st.overheadMaxNs) / 1000.0,
      static_cast<unsigned long long>(st.overheadSamples), static_cast<unsigned long long>(st.streamWaits),
      sd.valueWaitsThatBlocked, sd.syncCallsOnSubmitThreads, tactus::runStatusName(outcome.status));
  if (len > 0) (void)!::write(outFd, line, static_cast<std::size_t>(len));
  tactus::shutdown();
  cudaStreamDestroy(stream);
  return outcome.status == tactus::RunStatus::kFrameLimit && sd.syncCallsOnSubmitThreads == 0 ? 0 : 1;
}

pid_t spawn(const std::vector<std::string>& argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

int wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::fprintf(stderr, "usage: gpu-submit-bench TACTUS_COMPILE TACTUS_MASTER GRAPH [ITERATIONS]\n");
    return 2;
  }
  const std::string iterations = argc > 4 ? argv[4] : "3000";
  const std::string instance = "gpubench" + std::to_string(::getpid());
  const std::string sched = "/tmp/tactus-gpu-bench-" + std::to_string(::getpid()) + ".tsched";
  ::setenv("TACTUS_CUDA_STANDIN_TABLE", ("tactus_cuda_standin_bench" + std::to_string(::getpid())).c_str(), 1);
  if (wait(spawn({argv[1], "-i", argv[3], "-o", sched})) != 0) return 1;
  std::printf(
      "gpu-submit-bench: %s iterations of %s on the CUDA stand-in; overhead = wall time (not thread CPU "
      "time) on the CPU worker per submitter outside its body (waits for predecessors excluded); "
      "target: p50 < 1 us\n",
      iterations.c_str(), argv[3]);
  std::fflush(stdout);
  const pid_t master = spawn({argv[2], "-s", sched, "-D", instance, "-e", iterations, "-C"});
  const pid_t right = ::fork();
  if (right == 0) ::_exit(runClient("Right", instance, 1));
  const int left = runClient("Left", instance, 1);
  const int rightRc = wait(right);
  const int masterRc = wait(master);
  ::unlink(sched.c_str());
  const std::string table = "/dev/shm/" + std::string(std::getenv("TACTUS_CUDA_STANDIN_TABLE"));
  ::unlink(table.c_str());
  return left == 0 && rightRc == 0 && masterRc == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpu-submit-bench: %s\n", e.what());
  return 1;
}
