// tactus-check-cuda-client: CUDA submitters on the CUDA stand-in for the tactus-check tests
// (graph tests/check/cuda_rules.yaml): SyncDevice, SyncStream, DefaultStream, Managed and
// PageableCopy each break one of STM's CUDA rules; Good enqueues a copy from pinned memory and a
// "kernel" on its own stream and nothing else.
//   tactus-check-cuda-client --instance I
#include <cuda_runtime_api.h>

#include <cstdio>
#include <map>
#include <string>

#include "tactus/client.hpp"
#include "tactus/cuda.hpp"

namespace {

char gPageable[256];  // ordinary (pageable) host memory
void* gPinned = nullptr;
void* gDevice = nullptr;
void* volatile gKeep = nullptr;

void kernel(void*) {}

extern "C" {
__attribute__((noinline)) void submitSyncDevice(void*, cudaStream_t stream) {
  cudaLaunchHostFunc(stream, kernel, nullptr);
  cudaDeviceSynchronize();
}
__attribute__((noinline)) void submitSyncStream(void*, cudaStream_t stream) {
  cudaLaunchHostFunc(stream, kernel, nullptr);
  cudaStreamSynchronize(stream);
}
__attribute__((noinline)) void submitDefaultStream(void*, cudaStream_t stream) {
  cudaLaunchHostFunc(nullptr, kernel, nullptr);  // the legacy default stream (the stand-in refuses it)
  cudaLaunchHostFunc(stream, kernel, nullptr);
}
__attribute__((noinline)) void submitManaged(void*, cudaStream_t stream) {
  void* p = nullptr;
  cudaMallocManaged(&p, 64, cudaMemAttachGlobal);
  gKeep = p;
  cudaFree(gKeep);
  cudaLaunchHostFunc(stream, kernel, nullptr);
}
__attribute__((noinline)) void submitPageableCopy(void*, cudaStream_t stream) {
  cudaMemcpyAsync(gDevice, gPageable, sizeof gPageable, cudaMemcpyHostToDevice, stream);
  gKeep = nullptr;  // not a tail call: the site names this function
}
__attribute__((noinline)) void submitGood(void*, cudaStream_t stream) {
  cudaMemcpyAsync(gDevice, gPinned, sizeof gPageable, cudaMemcpyHostToDevice, stream);
  cudaLaunchHostFunc(stream, kernel, nullptr);
}
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--instance") {
    std::fprintf(stderr, "usage: tactus-check-cuda-client --instance I\n");
    return 2;
  }
  if (cudaMallocHost(&gPinned, sizeof gPageable) != cudaSuccess ||
      cudaMalloc(&gDevice, sizeof gPageable) != cudaSuccess)
    return 5;
  tactus::InitOptions options;
  options.instance = argv[2];
  options.timeoutMs = 20'000;
  if (!tactus::init("Gpu", options)) return 3;
  const std::map<std::string, std::pair<std::string, tactus::cuda::SubmitterFunction>> table = {
      {"SyncDevice", {"S0", submitSyncDevice}},       {"SyncStream", {"S1", submitSyncStream}},
      {"DefaultStream", {"S2", submitDefaultStream}}, {"Managed", {"S3", submitManaged}},
      {"PageableCopy", {"S4", submitPageableCopy}},   {"Good", {"S5", submitGood}},
  };
  for (const auto& [name, entry] : table) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 5;
    if (!tactus::cuda::registerStream(entry.first, stream)) return 4;
    if (!tactus::cuda::registerSubmitter(name, entry.second, nullptr)) return 4;
  }
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  std::printf("status=%s message=%s\n", tactus::runStatusName(outcome.status), outcome.message.c_str());
  std::fflush(stdout);
  tactus::shutdown();
  return outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 10 + static_cast<int>(outcome.status);
}
