// gpu-device-probe: what tactus's CUDA engine needs of the machine, checked before anything runs
// on it (scripts/device-check.sh): a device, a driver at least as new as the CUDA runtime this
// build links, and 64-bit stream memory operations (cuStreamWaitValue64 / cuStreamWriteValue64,
// which the engine's fences are made of). Prints one line per check; exit 0 when all hold, 77
// when there is no device (nothing to check), 1 when a check fails.
#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr int kAttr64BitMemOps = 122;  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS
using DrvDeviceGetAttribute = int (*)(int*, int, int);

const char* version(int v, char (&buf)[16]) {
  std::snprintf(buf, sizeof buf, "%d.%d", v / 1000, v % 1000 / 10);
  return buf;
}

}  // namespace

int main() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char d[16], r[16];
  if (driver == 0) {
    std::printf("driver: none (no NVIDIA driver loaded); CUDA runtime %s\n", version(runtime, r));
    return 77;
  }
  std::printf("driver: supports CUDA %s; runtime %s\n", version(driver, d), version(runtime, r));
  if (driver < runtime) {
    std::printf("FAIL: the driver supports CUDA %s only, older than the runtime %s this build links\n", d, r);
    return 1;
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices <= 0) {
    std::printf("devices: none (cudaGetDeviceCount: %s)\n", cudaGetErrorName(e));
    return 77;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("FAIL: cudaGetDeviceProperties(0) failed\n");
    return 1;
  }
  std::printf("device 0 of %d: %s, compute capability %d.%d, %d multiprocessors, %.1f GiB\n", devices, prop.name,
              prop.major, prop.minor, prop.multiProcessorCount,
              static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  DrvDeviceGetAttribute getAttribute = nullptr;
  cudaDriverEntryPointQueryResult status{};
#if CUDART_VERSION >= 12050
  const cudaError_t ep = cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", reinterpret_cast<void**>(&getAttribute),
                                                         12000, cudaEnableDefault, &status);
#else
  const cudaError_t ep =
      cudaGetDriverEntryPoint("cuDeviceGetAttribute", reinterpret_cast<void**>(&getAttribute), cudaEnableDefault, &status);
#endif
  if (ep != cudaSuccess || status != cudaDriverEntryPointSuccess || getAttribute == nullptr) {
    std::printf("FAIL: cuDeviceGetAttribute is not in the driver\n");
    return 1;
  }
  int can = 0;
  if (getAttribute(&can, kAttr64BitMemOps, 0) != 0) {
    std::printf("FAIL: cuDeviceGetAttribute(CAN_USE_64_BIT_STREAM_MEM_OPS) failed\n");
    return 1;
  }
  std::printf("64-bit stream memory operations: %s\n", can != 0 ? "yes" : "no");
  if (can == 0) {
    std::printf("FAIL: device 0 cannot run 64-bit stream memory operations (the engine's fences need them)\n");
    return 1;
  }
  return 0;
}
