// The check library's interposers for stdio (kind blocking-call): glibc's printf, fwrite, fgets
// and the rest reach the kernel through glibc's internal write/read, which interposing `write`
// cannot see, so the stdio calls themselves are noted by name. A call is noted when its stream
// has a file descriptor (a file, pipe, socket or terminal: fileno_unlocked >= 0), whether or not
// this call fills the buffer and writes now: a buffered printf writes in some later runnable, and
// every call takes the stream's lock. Memory streams (fmemopen, open_memstream) are not noted;
// dprintf/vdprintf and perror write to a descriptor directly and are always noted. The fortified
// variants (__printf_chk, ... from -D_FORTIFY_SOURCE) are noted under the names the user wrote.
// glibc's <bits/stdio.h> defines some of these functions inline (gnu_inline) when optimizing;
// this file defines the real ones, so it turns those inline definitions off first.
#include <features.h>
#undef __USE_EXTERN_INLINES

#include <cstdarg>
#include <cstdio>

#include "check_state.hpp"

#define TACTUS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Whether a call on `stream` goes to the kernel (sooner or later): fflush(NULL) flushes them all.
bool descriptorStream(FILE* stream) { return stream == nullptr || ::fileno_unlocked(stream) >= 0; }

}  // namespace

// Notes `call` when the thread is checking and `stream` has a descriptor.
#define TACTUS_STDIO_NOTE(call, stream)                                                                 \
  do {                                                                                                  \
    if (::tactus::check::checking() && descriptorStream(stream))                                        \
      ::tactus::check::noteViolation(::tactus::ViolationKind::kBlockingCall, ::tactus::CheckCall::call, \
                                     __builtin_return_address(0));                                      \
  } while (false)

// Declares `real` as the next definition of `name`, typed `type`.
#define TACTUS_STDIO_NEXT(type, name) \
  static type real = nullptr;         \
  if (real == nullptr) real = reinterpret_cast<type>(::tactus::check::nextSymbol(name))

// The fortified entry points (declared by <stdio.h> only under _FORTIFY_SOURCE).
extern "C" {
int __printf_chk(int flag, const char* format, ...);
int __fprintf_chk(FILE* stream, int flag, const char* format, ...);
int __vprintf_chk(int flag, const char* format, va_list args);
int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list args);
int __dprintf_chk(int fd, int flag, const char* format, ...);
int __vdprintf_chk(int fd, int flag, const char* format, va_list args);
char* __fgets_chk(char* buffer, size_t size, int count, FILE* stream);
size_t __fread_chk(void* buffer, size_t bufferSize, size_t size, size_t count, FILE* stream);
}

using VfprintfFn = int (*)(FILE*, const char*, va_list);
using VdprintfFn = int (*)(int, const char*, va_list);
using VfprintfChkFn = int (*)(FILE*, int, const char*, va_list);
using VdprintfChkFn = int (*)(int, int, const char*, va_list);

// printf family: the variadic ones forward to the next v* function.
TACTUS_EXPORT int printf(const char* format, ...) {
  TACTUS_STDIO_NOTE(kPrintf, stdout);
  TACTUS_STDIO_NEXT(VfprintfFn, "vfprintf");
  va_list args;
  va_start(args, format);
  const int n = real(stdout, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int fprintf(FILE* stream, const char* format, ...) {
  TACTUS_STDIO_NOTE(kFprintf, stream);
  TACTUS_STDIO_NEXT(VfprintfFn, "vfprintf");
  va_list args;
  va_start(args, format);
  const int n = real(stream, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int vprintf(const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVprintf, stdout);
  TACTUS_STDIO_NEXT(VfprintfFn, "vfprintf");
  return real(stdout, format, args);
}
TACTUS_EXPORT int vfprintf(FILE* stream, const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVfprintf, stream);
  TACTUS_STDIO_NEXT(VfprintfFn, "vfprintf");
  return real(stream, format, args);
}
TACTUS_EXPORT int dprintf(int fd, const char* format, ...) {
  TACTUS_STDIO_NOTE(kDprintf, nullptr);
  TACTUS_STDIO_NEXT(VdprintfFn, "vdprintf");
  va_list args;
  va_start(args, format);
  const int n = real(fd, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int vdprintf(int fd, const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVdprintf, nullptr);
  TACTUS_STDIO_NEXT(VdprintfFn, "vdprintf");
  return real(fd, format, args);
}
TACTUS_EXPORT int __printf_chk(int flag, const char* format, ...) {
  TACTUS_STDIO_NOTE(kPrintf, stdout);
  TACTUS_STDIO_NEXT(VfprintfChkFn, "__vfprintf_chk");
  va_list args;
  va_start(args, format);
  const int n = real(stdout, flag, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int __fprintf_chk(FILE* stream, int flag, const char* format, ...) {
  TACTUS_STDIO_NOTE(kFprintf, stream);
  TACTUS_STDIO_NEXT(VfprintfChkFn, "__vfprintf_chk");
  va_list args;
  va_start(args, format);
  const int n = real(stream, flag, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int __vprintf_chk(int flag, const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVprintf, stdout);
  TACTUS_STDIO_NEXT(VfprintfChkFn, "__vfprintf_chk");
  return real(stdout, flag, format, args);
}
TACTUS_EXPORT int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVfprintf, stream);
  TACTUS_STDIO_NEXT(VfprintfChkFn, "__vfprintf_chk");
  return real(stream, flag, format, args);
}
TACTUS_EXPORT int __dprintf_chk(int fd, int flag, const char* format, ...) {
  TACTUS_STDIO_NOTE(kDprintf, nullptr);
  TACTUS_STDIO_NEXT(VdprintfChkFn, "__vdprintf_chk");
  va_list args;
  va_start(args, format);
  const int n = real(fd, flag, format, args);
  va_end(args);
  return n;
}
TACTUS_EXPORT int __vdprintf_chk(int fd, int flag, const char* format, va_list args) {
  TACTUS_STDIO_NOTE(kVdprintf, nullptr);
  TACTUS_STDIO_NEXT(VdprintfChkFn, "__vdprintf_chk");
  return real(fd, flag, format, args);
}

// The rest: note, then forward with the same arguments to the function of the same name.
#define TACTUS_STDIO(call, name, stream, ...) \
  TACTUS_STDIO_NOTE(call, stream);            \
  TACTUS_CHECK_NEXT(name);                    \
  return real(__VA_ARGS__)

TACTUS_EXPORT int puts(const char* text) { TACTUS_STDIO(kPuts, puts, stdout, text); }
TACTUS_EXPORT int fputs(const char* text, FILE* stream) { TACTUS_STDIO(kFputs, fputs, stream, text, stream); }
TACTUS_EXPORT int fputc(int c, FILE* stream) { TACTUS_STDIO(kFputc, fputc, stream, c, stream); }
TACTUS_EXPORT int putc(int c, FILE* stream) { TACTUS_STDIO(kPutc, putc, stream, c, stream); }
TACTUS_EXPORT int putchar(int c) { TACTUS_STDIO(kPutchar, putchar, stdout, c); }
TACTUS_EXPORT size_t fwrite(const void* data, size_t size, size_t count, FILE* stream) {
  TACTUS_STDIO(kFwrite, fwrite, stream, data, size, count, stream);
}
TACTUS_EXPORT int fflush(FILE* stream) { TACTUS_STDIO(kFflush, fflush, stream, stream); }
TACTUS_EXPORT int fputs_unlocked(const char* text, FILE* stream) {
  TACTUS_STDIO(kFputsUnlocked, fputs_unlocked, stream, text, stream);
}
TACTUS_EXPORT int fputc_unlocked(int c, FILE* stream) {
  TACTUS_STDIO(kFputcUnlocked, fputc_unlocked, stream, c, stream);
}
TACTUS_EXPORT int putc_unlocked(int c, FILE* stream) { TACTUS_STDIO(kPutcUnlocked, putc_unlocked, stream, c, stream); }
TACTUS_EXPORT int putchar_unlocked(int c) { TACTUS_STDIO(kPutcharUnlocked, putchar_unlocked, stdout, c); }
TACTUS_EXPORT size_t fwrite_unlocked(const void* data, size_t size, size_t count, FILE* stream) {
  TACTUS_STDIO(kFwriteUnlocked, fwrite_unlocked, stream, data, size, count, stream);
}
TACTUS_EXPORT int fflush_unlocked(FILE* stream) { TACTUS_STDIO(kFflushUnlocked, fflush_unlocked, stream, stream); }
TACTUS_EXPORT size_t fread(void* data, size_t size, size_t count, FILE* stream) {
  TACTUS_STDIO(kFread, fread, stream, data, size, count, stream);
}
TACTUS_EXPORT size_t fread_unlocked(void* data, size_t size, size_t count, FILE* stream) {
  TACTUS_STDIO(kFreadUnlocked, fread_unlocked, stream, data, size, count, stream);
}
TACTUS_EXPORT char* fgets(char* buffer, int size, FILE* stream) {
  TACTUS_STDIO(kFgets, fgets, stream, buffer, size, stream);
}
TACTUS_EXPORT char* fgets_unlocked(char* buffer, int size, FILE* stream) {
  TACTUS_STDIO(kFgetsUnlocked, fgets_unlocked, stream, buffer, size, stream);
}
TACTUS_EXPORT char* __fgets_chk(char* buffer, size_t bufferSize, int size, FILE* stream) {
  TACTUS_STDIO(kFgets, __fgets_chk, stream, buffer, bufferSize, size, stream);
}
TACTUS_EXPORT size_t __fread_chk(void* data, size_t bufferSize, size_t size, size_t count, FILE* stream) {
  TACTUS_STDIO(kFread, __fread_chk, stream, data, bufferSize, size, count, stream);
}
TACTUS_EXPORT int fgetc(FILE* stream) { TACTUS_STDIO(kFgetc, fgetc, stream, stream); }
TACTUS_EXPORT int getc(FILE* stream) { TACTUS_STDIO(kGetc, getc, stream, stream); }
TACTUS_EXPORT int getchar() { TACTUS_STDIO(kGetchar, getchar, stdin); }
TACTUS_EXPORT int fgetc_unlocked(FILE* stream) { TACTUS_STDIO(kFgetcUnlocked, fgetc_unlocked, stream, stream); }
TACTUS_EXPORT int getc_unlocked(FILE* stream) { TACTUS_STDIO(kGetcUnlocked, getc_unlocked, stream, stream); }
TACTUS_EXPORT int getchar_unlocked() { TACTUS_STDIO(kGetcharUnlocked, getchar_unlocked, stdin); }
TACTUS_EXPORT ssize_t getline(char** line, size_t* size, FILE* stream) {
  TACTUS_STDIO(kGetline, getline, stream, line, size, stream);
}
TACTUS_EXPORT ssize_t getdelim(char** line, size_t* size, int delimiter, FILE* stream) {
  TACTUS_STDIO(kGetdelim, getdelim, stream, line, size, delimiter, stream);
}
TACTUS_EXPORT void perror(const char* text) {
  TACTUS_STDIO_NOTE(kPerror, nullptr);
  TACTUS_CHECK_NEXT(perror);
  real(text);
}
