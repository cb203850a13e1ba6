// tactus-check-static-cudart-client: a program that carries CUDA runtime functions in itself, as a
// program linked with nvcc's default static cudart does (here defined by hand: no CUDA needed).
// tactus-check must warn that its CUDA calls cannot be checked; the program exits 0.
extern "C" {
__attribute__((noinline)) int cudaStreamSynchronize(void* stream) { return stream == nullptr ? 0 : 1; }
__attribute__((noinline)) int cudaMemcpyAsync(void*, const void*, unsigned long, int, void* stream) {
  return stream == nullptr ? 0 : 1;
}
}

int main() { return cudaStreamSynchronize(nullptr) + cudaMemcpyAsync(nullptr, nullptr, 0, 0, nullptr); }
