// The systemd notification protocol (see notify.hpp): libsystemd's sd_notify when the build has
// it, else a datagram on an AF_UNIX socket, as sd_notify(3) describes the protocol.
#include "tactus/ipc/notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#ifdef TACTUS_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace tactus::ipc {

namespace {

// A decimal environment variable; false when unset or not a number.
bool envNumber(const char* name, std::uint64_t& value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  return ec == std::errc() && ptr == end;
}

#ifndef TACTUS_HAVE_LIBSYSTEMD
Result<bool> sendDatagram(const char* where, const std::string& state) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::size_t length = std::strlen(where);
  if (length < 2 || length >= sizeof address.sun_path || (where[0] != '/' && where[0] != '@')) {
    return fail(ErrorCode::kIo, std::string("NOTIFY_SOCKET='") + where +
                                    "' is neither an absolute path nor an abstract name ('@...') that fits a socket");
  }
  std::memcpy(address.sun_path, where, length);
  if (where[0] == '@') address.sun_path[0] = '\0';  // an abstract socket
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(ErrorCode::kIo, std::string("notify socket: ") + std::strerror(errno));
  const ssize_t sent =
      ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address), size);
  const int error = errno;
  ::close(fd);
  if (sent < 0 || static_cast<std::size_t>(sent) != state.size()) {
    return fail(ErrorCode::kIo, std::string("NOTIFY_SOCKET='") + where + "': " + std::strerror(error));
  }
  return true;
}
#endif

}  // namespace

Result<bool> notifySystemd(const std::string& state) {
  const char* where = std::getenv("NOTIFY_SOCKET");
  if (where == nullptr || *where == '\0') return false;
#ifdef TACTUS_HAVE_LIBSYSTEMD
  const int rc = ::sd_notify(0, state.c_str());
  if (rc < 0) return fail(ErrorCode::kIo, std::string("NOTIFY_SOCKET='") + where + "': " + std::strerror(-rc));
  return rc > 0;
#else
  return sendDatagram(where, state);
#endif
}

std::int64_t watchdogIntervalNs() {
  std::uint64_t usec = 0;
  if (!envNumber("WATCHDOG_USEC", usec) || usec == 0) return 0;
  std::uint64_t pid = 0;
  if (std::getenv("WATCHDOG_PID") != nullptr &&
      (!envNumber("WATCHDOG_PID", pid) || pid != static_cast<std::uint64_t>(::getpid()))) {
    return 0;  // meant for another process
  }
  constexpr std::uint64_t kMaxUsec = 1'000'000'000'000ULL;  // 11.6 days: beyond it, as good as none
  return static_cast<std::int64_t>(std::min(usec, kMaxUsec) * 1000);
}

bool notifyUsesLibsystemd() {
#ifdef TACTUS_HAVE_LIBSYSTEMD
  return true;
#else
  return false;
#endif
}

}  // namespace tactus::ipc
