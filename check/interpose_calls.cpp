// The check library's interposers for calls that can block or sleep (kind blocking-call) and that
// start threads or processes (thread-creation): each notes the call when a runnable makes it and
// forwards to the next definition (glibc's). A mutex counts only when it is contended (its trylock
// fails), a futex only when it waits: taking a free lock does not block.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "check_state.hpp"

#define TACTUS_EXPORT extern "C" __attribute__((visibility("default")))

// Blocking calls: note, then forward with the same arguments.
#define TACTUS_BLOCKING(call, name, ...)  \
  TACTUS_CHECK_NOTE(kBlockingCall, call); \
  TACTUS_CHECK_NEXT(name);                \
  return real(__VA_ARGS__)

TACTUS_EXPORT int nanosleep(const timespec* request, timespec* remaining) {
  TACTUS_BLOCKING(kNanosleep, nanosleep, request, remaining);
}
TACTUS_EXPORT int clock_nanosleep(clockid_t clock, int flags, const timespec* request, timespec* remaining) {
  TACTUS_BLOCKING(kClockNanosleep, clock_nanosleep, clock, flags, request, remaining);
}
TACTUS_EXPORT int usleep(useconds_t us) { TACTUS_BLOCKING(kUsleep, usleep, us); }
TACTUS_EXPORT unsigned sleep(unsigned seconds) { TACTUS_BLOCKING(kSleep, sleep, seconds); }
TACTUS_EXPORT ssize_t read(int fd, void* buffer, size_t size) { TACTUS_BLOCKING(kRead, read, fd, buffer, size); }
TACTUS_EXPORT ssize_t write(int fd, const void* buffer, size_t size) {
  TACTUS_BLOCKING(kWrite, write, fd, buffer, size);
}
TACTUS_EXPORT ssize_t pread(int fd, void* buffer, size_t size, off_t offset) {
  TACTUS_BLOCKING(kPread, pread, fd, buffer, size, offset);
}
TACTUS_EXPORT ssize_t pwrite(int fd, const void* buffer, size_t size, off_t offset) {
  TACTUS_BLOCKING(kPwrite, pwrite, fd, buffer, size, offset);
}
TACTUS_EXPORT ssize_t readv(int fd, const iovec* vectors, int count) {
  TACTUS_BLOCKING(kReadv, readv, fd, vectors, count);
}
TACTUS_EXPORT ssize_t writev(int fd, const iovec* vectors, int count) {
  TACTUS_BLOCKING(kWritev, writev, fd, vectors, count);
}
TACTUS_EXPORT ssize_t recv(int fd, void* buffer, size_t size, int flags) {
  TACTUS_BLOCKING(kRecv, recv, fd, buffer, size, flags);
}
TACTUS_EXPORT ssize_t send(int fd, const void* buffer, size_t size, int flags) {
  TACTUS_BLOCKING(kSend, send, fd, buffer, size, flags);
}
TACTUS_EXPORT ssize_t recvfrom(int fd, void* buffer, size_t size, int flags, sockaddr* from, socklen_t* length) {
  TACTUS_BLOCKING(kRecvfrom, recvfrom, fd, buffer, size, flags, from, length);
}
TACTUS_EXPORT ssize_t sendto(int fd, const void* buffer, size_t size, int flags, const sockaddr* to, socklen_t length) {
  TACTUS_BLOCKING(kSendto, sendto, fd, buffer, size, flags, to, length);
}
TACTUS_EXPORT ssize_t recvmsg(int fd, msghdr* message, int flags) {
  TACTUS_BLOCKING(kRecvmsg, recvmsg, fd, message, flags);
}
TACTUS_EXPORT ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  TACTUS_BLOCKING(kSendmsg, sendmsg, fd, message, flags);
}
TACTUS_EXPORT int accept(int fd, sockaddr* address, socklen_t* length) {
  TACTUS_BLOCKING(kAccept, accept, fd, address, length);
}
TACTUS_EXPORT int connect(int fd, const sockaddr* address, socklen_t length) {
  TACTUS_BLOCKING(kConnect, connect, fd, address, length);
}
TACTUS_EXPORT int poll(pollfd* fds, nfds_t count, int timeoutMs) {
  TACTUS_BLOCKING(kPoll, poll, fds, count, timeoutMs);
}
TACTUS_EXPORT int ppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask) {
  TACTUS_BLOCKING(kPpoll, ppoll, fds, count, timeout, mask);
}
TACTUS_EXPORT int select(int count, fd_set* reads, fd_set* writes, fd_set* errors, timeval* timeout) {
  TACTUS_BLOCKING(kSelect, select, count, reads, writes, errors, timeout);
}
TACTUS_EXPORT int pselect(int count, fd_set* reads, fd_set* writes, fd_set* errors, const timespec* timeout,
                          const sigset_t* mask) {
  TACTUS_BLOCKING(kPselect, pselect, count, reads, writes, errors, timeout, mask);
}
TACTUS_EXPORT int epoll_wait(int fd, epoll_event* events, int count, int timeoutMs) {
  TACTUS_BLOCKING(kEpollWait, epoll_wait, fd, events, count, timeoutMs);
}
TACTUS_EXPORT int epoll_pwait(int fd, epoll_event* events, int count, int timeoutMs, const sigset_t* mask) {
  TACTUS_BLOCKING(kEpollPwait, epoll_pwait, fd, events, count, timeoutMs, mask);
}
TACTUS_EXPORT void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  TACTUS_BLOCKING(kMmap, mmap, address, length, protection, flags, fd, offset);
}
TACTUS_EXPORT int munmap(void* address, size_t length) { TACTUS_BLOCKING(kMunmap, munmap, address, length); }
TACTUS_EXPORT FILE* fopen(const char* path, const char* mode) { TACTUS_BLOCKING(kFopen, fopen, path, mode); }
TACTUS_EXPORT pid_t fork() { TACTUS_BLOCKING(kFork, fork); }
TACTUS_EXPORT pid_t wait(int* status) { TACTUS_BLOCKING(kWait, wait, status); }
TACTUS_EXPORT pid_t waitpid(pid_t pid, int* status, int options) {
  TACTUS_BLOCKING(kWaitpid, waitpid, pid, status, options);
}
TACTUS_EXPORT int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
  TACTUS_BLOCKING(kWaitid, waitid, type, id, info, options);
}
TACTUS_EXPORT int system(const char* command) { TACTUS_BLOCKING(kSystem, system, command); }
TACTUS_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                              const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  TACTUS_BLOCKING(kPosixSpawn, posix_spawn, pid, path, actions, attributes, argv, envp);
}
TACTUS_EXPORT int sem_wait(sem_t* semaphore) { TACTUS_BLOCKING(kSemWait, sem_wait, semaphore); }
TACTUS_EXPORT int pthread_join(pthread_t thread, void** result) {
  TACTUS_BLOCKING(kPthreadJoin, pthread_join, thread, result);
}

// ioctl: a driver's call (the CUDA driver's way into the kernel), which can block.
TACTUS_EXPORT int ioctl(int fd, unsigned long request, ...) noexcept {
  TACTUS_CHECK_NOTE(kBlockingCall, kIoctl);
  va_list args;
  va_start(args, request);
  void* argument = va_arg(args, void*);
  va_end(args);
  using Fn = int (*)(int, unsigned long, ...);
  static Fn real = nullptr;
  if (real == nullptr) real = reinterpret_cast<Fn>(tactus::check::nextSymbol("ioctl"));
  return real(fd, request, argument);
}

// open and openat take the mode only with O_CREAT / O_TMPFILE.
TACTUS_EXPORT int open(const char* path, int flags, ...) {
  TACTUS_CHECK_NOTE(kBlockingCall, kOpen);
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = static_cast<mode_t>(va_arg(args, int));
    va_end(args);
  }
  using Fn = int (*)(const char*, int, ...);
  static Fn real = nullptr;
  if (real == nullptr) real = reinterpret_cast<Fn>(tactus::check::nextSymbol("open"));
  return real(path, flags, mode);
}
TACTUS_EXPORT int openat(int directory, const char* path, int flags, ...) {
  TACTUS_CHECK_NOTE(kBlockingCall, kOpenat);
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = static_cast<mode_t>(va_arg(args, int));
    va_end(args);
  }
  using Fn = int (*)(int, const char*, int, ...);
  static Fn real = nullptr;
  if (real == nullptr) real = reinterpret_cast<Fn>(tactus::check::nextSymbol("openat"));
  return real(directory, path, flags, mode);
}

// A contended mutex blocks: try first, and note only when the lock is taken by someone else.
TACTUS_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) {
  TACTUS_CHECK_NEXT(pthread_mutex_lock);
  if (tactus::check::checking()) {
    static decltype(&pthread_mutex_trylock) tryLock = nullptr;
    if (tryLock == nullptr)
      tryLock = reinterpret_cast<decltype(&pthread_mutex_trylock)>(tactus::check::nextSymbol("pthread_mutex_trylock"));
    const int rc = tryLock(mutex);
    if (rc != EBUSY) return rc;
    tactus::check::noteViolation(tactus::ViolationKind::kBlockingCall, tactus::CheckCall::kMutexLock,
                                 __builtin_return_address(0));
  }
  return real(mutex);
}

// pthread_cond_wait and _timedwait have two symbol versions; the current one is GLIBC_2.3.2 on
// x86-64 (the default version on other architectures, which dlsym finds).
namespace {
void* nextCondSymbol(const char* name) {
  tactus::check::OwnWork own;
  void* p = ::dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
  return p != nullptr ? p : ::dlsym(RTLD_NEXT, name);
}
}  // namespace

TACTUS_EXPORT int pthread_cond_wait(pthread_cond_t* condition, pthread_mutex_t* mutex) {
  TACTUS_CHECK_NOTE(kBlockingCall, kCondWait);
  static decltype(&pthread_cond_wait) real = nullptr;
  if (real == nullptr) real = reinterpret_cast<decltype(&pthread_cond_wait)>(nextCondSymbol("pthread_cond_wait"));
  return real(condition, mutex);
}
TACTUS_EXPORT int pthread_cond_timedwait(pthread_cond_t* condition, pthread_mutex_t* mutex, const timespec* until) {
  TACTUS_CHECK_NOTE(kBlockingCall, kCondTimedwait);
  static decltype(&pthread_cond_timedwait) real = nullptr;
  if (real == nullptr)
    real = reinterpret_cast<decltype(&pthread_cond_timedwait)>(nextCondSymbol("pthread_cond_timedwait"));
  return real(condition, mutex, until);
}

// syscall(): only futex waits count (a raw futex wake, or any other raw call, is not noted;
// tactus's own futex waits come from libtactus and are never noted).
TACTUS_EXPORT long syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& v : a) v = va_arg(args, long);
  va_end(args);
  if (number == SYS_futex && tactus::check::checking()) {
    const long op = a[1] & FUTEX_CMD_MASK;
    if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI || op == FUTEX_WAIT_REQUEUE_PI)
      tactus::check::noteViolation(tactus::ViolationKind::kBlockingCall, tactus::CheckCall::kFutex,
                                   __builtin_return_address(0));
  }
  using Fn = long (*)(long, ...);
  static Fn real = nullptr;
  if (real == nullptr) real = reinterpret_cast<Fn>(tactus::check::nextSymbol("syscall"));
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

TACTUS_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*),
                                 void* argument) {
  TACTUS_CHECK_NOTE(kThreadCreation, kPthreadCreate);
  TACTUS_CHECK_NEXT(pthread_create);
  return real(thread, attributes, start, argument);
}

TACTUS_EXPORT int clone(int (*start)(void*), void* stack, int flags, void* argument, ...) {
  TACTUS_CHECK_NOTE(kThreadCreation, kClone);
  va_list args;
  va_start(args, argument);
  void* parentTid = va_arg(args, void*);
  void* tls = va_arg(args, void*);
  void* childTid = va_arg(args, void*);
  va_end(args);
  using Fn = int (*)(int (*)(void*), void*, int, void*, ...);
  static Fn real = nullptr;
  if (real == nullptr) real = reinterpret_cast<Fn>(tactus::check::nextSymbol("clone"));
  return real(start, stack, flags, argument, parentTid, tls, childTid);
}
