// STAND-IN, NOT CUDA: the memory functions of the stand-in runtime (cuda_runtime_api.h). All
// memory is host memory; each block is remembered with its CUDA kind (device, pinned host,
// managed) so cudaPointerGetAttributes answers like CUDA, and tactus-check's pageable-copy rule
// can be tested without a GPU. Copies run on the stream's thread as host functions.
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "cuda_runtime_api.h"

namespace {

struct Block {
  std::size_t size;
  cudaMemoryType type;
};

std::mutex gMutex;
std::map<const char*, Block>& blocks() {
  static auto* b = new std::map<const char*, Block>();  // never destroyed: streams may copy at exit
  return *b;
}

cudaError_t allocate(void** pointer, std::size_t size, cudaMemoryType type) {
  if (pointer == nullptr) return cudaErrorInvalidValue;
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  std::lock_guard<std::mutex> lock(gMutex);
  blocks()[static_cast<const char*>(p)] = {size, type};
  *pointer = p;
  return cudaSuccess;
}

cudaError_t release(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(gMutex);
  const auto it = blocks().find(static_cast<const char*>(pointer));
  if (it == blocks().end()) return cudaErrorInvalidValue;
  blocks().erase(it);
  std::free(pointer);
  return cudaSuccess;
}

struct Copy {
  void* destination;
  const void* source;
  std::size_t size;
};

void runCopy(void* data) {
  auto* c = static_cast<Copy*>(data);
  std::memcpy(c->destination, c->source, c->size);
  delete c;
}

}  // namespace

cudaError_t cudaMalloc(void** pointer, size_t size) { return allocate(pointer, size, cudaMemoryTypeDevice); }
cudaError_t cudaMallocHost(void** pointer, size_t size) { return allocate(pointer, size, cudaMemoryTypeHost); }
cudaError_t cudaMallocManaged(void** pointer, size_t size, unsigned int) {
  return allocate(pointer, size, cudaMemoryTypeManaged);
}
cudaError_t cudaFree(void* pointer) { return release(pointer); }
cudaError_t cudaFreeHost(void* pointer) { return release(pointer); }

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* pointer) {
  if (attributes == nullptr) return cudaErrorInvalidValue;
  *attributes = {cudaMemoryTypeUnregistered, 0, nullptr, nullptr};
  const auto* p = static_cast<const char*>(pointer);
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = blocks().upper_bound(p);
  if (it == blocks().begin()) return cudaSuccess;
  --it;
  if (p >= it->first + it->second.size && !(it->second.size == 0 && p == it->first)) return cudaSuccess;
  attributes->type = it->second.type;
  attributes->devicePointer = const_cast<char*>(p);
  attributes->hostPointer = const_cast<char*>(p);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t size, cudaMemcpyKind, cudaStream_t stream) {
  if ((destination == nullptr || source == nullptr) && size != 0) return cudaErrorInvalidValue;
  auto* c = new Copy{destination, source, size};
  const cudaError_t e = cudaLaunchHostFunc(stream, runCopy, c);
  if (e != cudaSuccess) delete c;
  return e;
}
