// tactus-sample-stm-gpu: STM's shipped two-process GPU sample (schedules/stm_two_process_gpu.yaml),
// one program run once per client, through the STM C API:
//
//   clientGpuY:  submit ==> kernel (CUDA_STREAMY) <---------------+
//                  +--> test1 ------------------+                 |
//                                               v                 |
//   clientGpuX:  submit ==> kernel (CUDA_STREAMX) ----------------+
//
// clientGpuY.submit runs first on CPU0 and enqueues a kernel that must wait for clientGpuX's
// kernel, which clientGpuX submits only after clientGpuY.test1. The submitter returns at once:
// its stream waits on the GPU for the other kernel's fence. No submitter ever waits.
//
//   tactus-compile -i schedules/stm_two_process_gpu.yaml -o /tmp/stm_gpu.tsched
//   tactus-master -s /tmp/stm_gpu.tsched -e 100 &
//   tactus-sample-stm-gpu clientGpuY & tactus-sample-stm-gpu clientGpuX
//
// Without a CUDA device it says so and exits with status 77.
#include <cuda_runtime.h>
#include <tactus/stm.h>

#include <cstdio>
#include <cstring>

namespace {

__global__ void step(float* data, int n, float add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 0.5f + add;
}

constexpr int kN = 1 << 16;
float* gData = nullptr;

// A CUDA submitter: enqueue the kernel on the stream the runtime hands over, return at once.
void submit(void* userdata, cudaStream_t stream) {
  const float add = *static_cast<const float*>(userdata);
  step<<<(kN + 255) / 256, 256, 0, stream>>>(gData, kN, add);
}

// clientGpuY.test1: CPU work after the submitter returned (before its kernel has even started).
void test1(void*) {
  stmRunnableInfo_t info;
  if (stmGetRuntimeInfo(&info) == STM_SUCCESS && info.epochIterations % 20 == 0) {
    std::printf("clientGpuY: frame %u: test1 ran after submit returned\n", info.epochIterations);
  }
}

int check(stmErrorCode_t rc, const char* what) {
  if (rc == STM_SUCCESS) return 0;
  std::fprintf(stderr, "tactus-sample-stm-gpu: %s: %s: %s\n", what, stmErrorCodeToString(rc),
               tactusLastErrorMessage());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "clientGpuY") != 0 && std::strcmp(argv[1], "clientGpuX") != 0)) {
    std::fprintf(stderr,
                 "usage: tactus-sample-stm-gpu clientGpuY|clientGpuX   (graph: schedules/stm_two_process_gpu.yaml)\n");
    return 2;
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("tactus-sample-stm-gpu: no CUDA GPU on this machine (%s); this sample needs one. Exiting.\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  const bool y = std::strcmp(argv[1], "clientGpuY") == 0;
  if (cudaMalloc(&gData, kN * sizeof(float)) != cudaSuccess) return 1;
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  static float add = y ? 1.0f : 2.0f;
  if (check(stmClientInit(argv[1]), "stmClientInit") != 0) return 1;
  if (check(stmRegisterCudaResource(y ? "CUDA_STREAMY" : "CUDA_STREAMX", stream), "stmRegisterCudaResource") != 0)
    return 1;
  if (check(stmRegisterCudaSubmitter(submit, "submit", &add), "register submit") != 0) return 1;
  if (y && check(stmRegisterCpuRunnable(test1, "test1", nullptr), "register test1") != 0) return 1;
  const stmErrorCode_t rc = stmEnterScheduler();
  std::printf("%s: scheduler returned %s (%s)\n", argv[1], stmErrorCodeToString(rc), tactusLastErrorMessage());
  stmClientExit();
  cudaStreamDestroy(stream);
  cudaFree(gData);
  return rc == STM_SUCCESS ? 0 : 1;
}
