// tactus-sample-cuda: the two-process GPU sample (schedules/cuda_two_client.yaml), one program run
// once per client, through the STM C API:
//
//   Vision:  Decode ==> DecodeGpu (a kernel on Vision's CUDA_STREAM0)
//                           |
//   Fusion:                 +--> Prepare ==> FuseGpu (a kernel on Fusion's CUDA_STREAM0) --> Report
//
// FuseGpu's stream waits (on the GPU) for DecodeGpu's fence; Report (CPU) waits for
// FuseGpu's completion; no submitter ever waits for the GPU.
//
//   tactus-compile -i schedules/cuda_two_client.yaml -o /tmp/cuda.tsched
//   tactus-master -s /tmp/cuda.tsched -e 100 &
//   tactus-sample-cuda Vision & tactus-sample-cuda Fusion
//
// Without a CUDA device it says so and exits with status 77.
#include <cuda_runtime.h>
#include <tactus/stm.h>

#include <cstdio>
#include <cstring>

namespace {

__global__ void scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + 1.0f;
}

constexpr int kN = 1 << 16;
float* gData = nullptr;

// A CUDA submitter: enqueue the kernel on the stream the runtime hands over, return at once.
void submit(void* userdata, cudaStream_t stream) {
  const float factor = *static_cast<const float*>(userdata);
  scale<<<(kN + 255) / 256, 256, 0, stream>>>(gData, kN, factor);
}

void report(void*) {
  stmRunnableInfo_t info;
  if (stmGetRuntimeInfo(&info) == STM_SUCCESS && info.epochIterations % 20 == 0) {
    std::printf("Fusion: frame %u: the GPU work of both clients is done\n", info.epochIterations);
  }
}

int check(stmErrorCode_t rc, const char* what) {
  if (rc == STM_SUCCESS) return 0;
  std::fprintf(stderr, "tactus-sample-cuda: %s: %s: %s\n", what, stmErrorCodeToString(rc), tactusLastErrorMessage());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "Vision") != 0 && std::strcmp(argv[1], "Fusion") != 0)) {
    std::fprintf(stderr, "usage: tactus-sample-cuda Vision|Fusion   (graph: schedules/cuda_two_client.yaml)\n");
    return 2;
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("tactus-sample-cuda: no CUDA GPU on this machine (%s); this sample needs one. Exiting.\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  const bool vision = std::strcmp(argv[1], "Vision") == 0;
  if (cudaMalloc(&gData, kN * sizeof(float)) != cudaSuccess) return 1;
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  static float factor = vision ? 0.5f : 2.0f;
  if (check(stmClientInit(argv[1]), "stmClientInit") != 0) return 1;
  if (check(stmRegisterCudaResource("CUDA_STREAM0", stream), "stmRegisterCudaResource") != 0) return 1;
  if (vision) {
    if (check(stmRegisterCudaSubmitter(submit, "Decode", &factor), "register Decode") != 0) return 1;
  } else {
    if (check(stmRegisterCudaSubmitter(submit, "Prepare", &factor), "register Prepare") != 0) return 1;
    if (check(stmRegisterCpuRunnable(report, "Report", nullptr), "register Report") != 0) return 1;
  }
  const stmErrorCode_t rc = stmEnterScheduler();
  std::printf("%s: scheduler returned %s (%s)\n", argv[1], stmErrorCodeToString(rc), tactusLastErrorMessage());
  stmClientExit();
  cudaStreamDestroy(stream);
  cudaFree(gData);
  return rc == STM_SUCCESS ? 0 : 1;
}
