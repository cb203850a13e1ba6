// The GPU engine's entry points for a libtactus built without CUDA: registration of CUDA streams
// and submitters is refused (see client.cpp), and submitters registered as CPU runnables keep the
// NullEngine path.
#include "cuda_engine.hpp"
#include "tactus/cuda.hpp"

namespace tactus::client {

struct CudaEngine::Impl {};

bool cudaEngineAvailable() { return false; }
Result<void> checkCudaStream(CUstream_st*, const std::string& what) {
  return fail(ErrorCode::kInvalidState, what + ": libtactus was built without CUDA");
}
std::uint32_t deviceStreamLimit() { return 0; }
std::size_t gpuOverheadSampleCapacity() { return 0; }
CudaEngine::CudaEngine() = default;
CudaEngine::~CudaEngine() = default;
Result<void> CudaEngine::prepare(const GpuSetup&) {
  return fail(ErrorCode::kInvalidState, "libtactus was built without CUDA");
}
bool CudaEngine::bindThread() { return true; }
std::string CudaEngine::failure() const { return {}; }
bool CudaEngine::runsSubmittee(InstanceId) const { return false; }
bool CudaEngine::runsSubmitter(InstanceId) const { return false; }
bool CudaEngine::submissionSuffices(InstanceId, InstanceId) const { return false; }
bool CudaEngine::submit(InstanceId, std::uint64_t, const std::function<bool()>&, GpuWorkerStats&, std::int64_t&,
                        std::int64_t&) {
  return false;
}
bool CudaEngine::observe(InstanceId, std::uint64_t, const std::function<bool()>&, std::int64_t, std::int64_t&,
                         std::int64_t&) {
  return false;
}
void CudaEngine::finish(bool) {}
void publishEngineStats(const std::vector<GpuWorkerStats*>&) {}

}  // namespace tactus::client

namespace tactus::cuda {
EngineStats engineStats() { return {}; }
}  // namespace tactus::cuda
