// The check library's allocation interposers: the malloc family (forwarded to glibc's __libc_*
// entry points, or a sanitizer's allocator, so no symbol lookup can recurse into malloc) and every C++ operator
// new/delete (forwarded to libstdc++'s, whose own malloc calls are then not counted twice).
#include <cerrno>
#include <cstddef>
#include <new>

#include "check_state.hpp"

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
void __libc_free(void* pointer);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

// A sanitizer runtime (ASan, TSan, LSan) that the client links has its own allocator and exports
// its malloc family as __interceptor_*: weak references find them when it is loaded (the check
// library is preloaded before it, see README.md), and then every allocation goes to it, so memory
// that the sanitizer's other interceptors allocate (strdup, ...) is freed where it came from.
// Without one, the weak references are null and glibc's __libc_* entry points serve.
extern "C" {
void* __interceptor_malloc(std::size_t size) __attribute__((weak));
void* __interceptor_calloc(std::size_t count, std::size_t size) __attribute__((weak));
void* __interceptor_realloc(void* pointer, std::size_t size) __attribute__((weak));
void __interceptor_free(void* pointer) __attribute__((weak));
void* __interceptor_memalign(std::size_t alignment, std::size_t size) __attribute__((weak));
void* __interceptor_aligned_alloc(std::size_t alignment, std::size_t size) __attribute__((weak));
int __interceptor_posix_memalign(void** out, std::size_t alignment, std::size_t size) __attribute__((weak));
void* __interceptor_valloc(std::size_t size) __attribute__((weak));
void* __interceptor_pvalloc(std::size_t size) __attribute__((weak));
}

#define TACTUS_EXPORT extern "C" __attribute__((visibility("default")))

TACTUS_EXPORT void* malloc(std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kMalloc);
  return __interceptor_malloc != nullptr ? __interceptor_malloc(size) : __libc_malloc(size);
}

TACTUS_EXPORT void* calloc(std::size_t count, std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kCalloc);
  return __interceptor_calloc != nullptr ? __interceptor_calloc(count, size) : __libc_calloc(count, size);
}

TACTUS_EXPORT void* realloc(void* pointer, std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kRealloc);
  return __interceptor_realloc != nullptr ? __interceptor_realloc(pointer, size) : __libc_realloc(pointer, size);
}

TACTUS_EXPORT void free(void* pointer) {
  if (pointer != nullptr) TACTUS_CHECK_NOTE(kAllocation, kFree);
  if (__interceptor_free != nullptr) __interceptor_free(pointer);
  else __libc_free(pointer);
}

TACTUS_EXPORT void* memalign(std::size_t alignment, std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kMemalign);
  return __interceptor_memalign != nullptr ? __interceptor_memalign(alignment, size) : __libc_memalign(alignment, size);
}

TACTUS_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kAlignedAlloc);
  if (__interceptor_aligned_alloc != nullptr) return __interceptor_aligned_alloc(alignment, size);
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return __libc_memalign(alignment, size);
}

TACTUS_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kPosixMemalign);
  if (__interceptor_posix_memalign != nullptr) return __interceptor_posix_memalign(out, alignment, size);
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

TACTUS_EXPORT void* valloc(std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kValloc);
  return __interceptor_valloc != nullptr ? __interceptor_valloc(size) : __libc_valloc(size);
}

TACTUS_EXPORT void* pvalloc(std::size_t size) {
  TACTUS_CHECK_NOTE(kAllocation, kPvalloc);
  return __interceptor_pvalloc != nullptr ? __interceptor_pvalloc(size) : __libc_pvalloc(size);
}

// operator new and delete: noted under their own names, then forwarded to the next definition
// (libstdc++'s) as the check library's own work, so its malloc call is not noted again.
#define TACTUS_FORWARD_NEW(call, mangled, ...)                                            \
  TACTUS_CHECK_NOTE(kAllocation, call);                                                   \
  using Fn = void* (*)(__VA_ARGS__);                                                      \
  static Fn real = nullptr;                                                               \
  if (real == nullptr) real = reinterpret_cast<Fn>(::tactus::check::nextSymbol(mangled)); \
  ::tactus::check::OwnWork own

#define TACTUS_FORWARD_DELETE(call, mangled, ...)                                         \
  if (pointer != nullptr) TACTUS_CHECK_NOTE(kAllocation, call);                           \
  using Fn = void (*)(__VA_ARGS__);                                                       \
  static Fn real = nullptr;                                                               \
  if (real == nullptr) real = reinterpret_cast<Fn>(::tactus::check::nextSymbol(mangled)); \
  ::tactus::check::OwnWork own

__attribute__((visibility("default"))) void* operator new(std::size_t size) {
  TACTUS_FORWARD_NEW(kOperatorNew, "_Znwm", std::size_t);
  return real(size);
}
__attribute__((visibility("default"))) void* operator new[](std::size_t size) {
  TACTUS_FORWARD_NEW(kOperatorNewArray, "_Znam", std::size_t);
  return real(size);
}
__attribute__((visibility("default"))) void* operator new(std::size_t size, const std::nothrow_t& tag) noexcept {
  TACTUS_FORWARD_NEW(kOperatorNew, "_ZnwmRKSt9nothrow_t", std::size_t, const std::nothrow_t&);
  return real(size, tag);
}
__attribute__((visibility("default"))) void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  TACTUS_FORWARD_NEW(kOperatorNewArray, "_ZnamRKSt9nothrow_t", std::size_t, const std::nothrow_t&);
  return real(size, tag);
}
__attribute__((visibility("default"))) void* operator new(std::size_t size, std::align_val_t alignment) {
  TACTUS_FORWARD_NEW(kOperatorNew, "_ZnwmSt11align_val_t", std::size_t, std::align_val_t);
  return real(size, alignment);
}
__attribute__((visibility("default"))) void* operator new[](std::size_t size, std::align_val_t alignment) {
  TACTUS_FORWARD_NEW(kOperatorNewArray, "_ZnamSt11align_val_t", std::size_t, std::align_val_t);
  return real(size, alignment);
}
__attribute__((visibility("default"))) void* operator new(std::size_t size, std::align_val_t alignment,
                                                          const std::nothrow_t& tag) noexcept {
  TACTUS_FORWARD_NEW(kOperatorNew, "_ZnwmSt11align_val_tRKSt9nothrow_t", std::size_t, std::align_val_t,
                     const std::nothrow_t&);
  return real(size, alignment, tag);
}
__attribute__((visibility("default"))) void* operator new[](std::size_t size, std::align_val_t alignment,
                                                            const std::nothrow_t& tag) noexcept {
  TACTUS_FORWARD_NEW(kOperatorNewArray, "_ZnamSt11align_val_tRKSt9nothrow_t", std::size_t, std::align_val_t,
                     const std::nothrow_t&);
  return real(size, alignment, tag);
}

__attribute__((visibility("default"))) void operator delete(void* pointer) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDelete, "_ZdlPv", void*);
  real(pointer);
}
__attribute__((visibility("default"))) void operator delete[](void* pointer) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDeleteArray, "_ZdaPv", void*);
  real(pointer);
}
__attribute__((visibility("default"))) void operator delete(void* pointer, std::size_t size) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDelete, "_ZdlPvm", void*, std::size_t);
  real(pointer, size);
}
__attribute__((visibility("default"))) void operator delete[](void* pointer, std::size_t size) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDeleteArray, "_ZdaPvm", void*, std::size_t);
  real(pointer, size);
}
__attribute__((visibility("default"))) void operator delete(void* pointer, std::align_val_t alignment) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDelete, "_ZdlPvSt11align_val_t", void*, std::align_val_t);
  real(pointer, alignment);
}
__attribute__((visibility("default"))) void operator delete[](void* pointer, std::align_val_t alignment) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDeleteArray, "_ZdaPvSt11align_val_t", void*, std::align_val_t);
  real(pointer, alignment);
}
__attribute__((visibility("default"))) void operator delete(void* pointer, std::size_t size,
                                                            std::align_val_t alignment) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDelete, "_ZdlPvmSt11align_val_t", void*, std::size_t, std::align_val_t);
  real(pointer, size, alignment);
}
__attribute__((visibility("default"))) void operator delete[](void* pointer, std::size_t size,
                                                              std::align_val_t alignment) noexcept {
  TACTUS_FORWARD_DELETE(kOperatorDeleteArray, "_ZdaPvmSt11align_val_t", void*, std::size_t, std::align_val_t);
  real(pointer, size, alignment);
}
