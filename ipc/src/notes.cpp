// Notes from clients to their master over an abstract Unix datagram socket (see notes.hpp).
#include "tactus/ipc/notes.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

namespace tactus::ipc {

namespace {

constexpr std::string_view kMagic = "tactus-note 1\n";
constexpr std::size_t kMaxClientName = 256;

// The abstract name of an instance's note box: "\0tactus-notes/<instance>" (no file, gone with the
// socket; the instance name is validated by the segment code before any box opens).
socklen_t boxAddress(const std::string& instance, sockaddr_un& address) {
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  const std::string name = "tactus-notes/" + instance;
  const std::size_t n = std::min(name.size(), sizeof address.sun_path - 1);
  std::memcpy(address.sun_path + 1, name.data(), n);  // sun_path[0] == 0: the abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Printable ASCII only: anything else becomes '?', so a note cannot move a terminal's cursor.
std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace

bool parseNote(const char* data, std::size_t size, Note& note) {
  const std::string_view all(data, size);
  if (all.substr(0, kMagic.size()) != kMagic) return false;
  const std::string_view rest = all.substr(kMagic.size());
  const std::size_t cut = rest.find('\n');
  if (cut == std::string_view::npos || cut == 0 || cut > kMaxClientName) return false;
  note.client = printable(rest.substr(0, cut));
  note.text = printable(rest.substr(cut + 1));
  return !note.text.empty();
}

Result<NoteBox> NoteBox::open(const std::string& instance) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(ErrorCode::kIo, std::string("cannot make the note socket: ") + std::strerror(errno));
  const int on = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
  sockaddr_un address{};
  const socklen_t length = boxAddress(instance, address);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(e == EADDRINUSE ? ErrorCode::kAlreadyExists : ErrorCode::kIo,
                "cannot receive clients' notes for instance '" + instance + "': " + std::strerror(e));
  }
  NoteBox box;
  box.fd_ = fd;
  return box;
}

NoteBox::NoteBox(NoteBox&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

NoteBox& NoteBox::operator=(NoteBox&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

NoteBox::~NoteBox() {
  if (fd_ >= 0) ::close(fd_);
}

// NOLINTNEXTLINE(readability-make-member-function-const): it takes the notes out of the socket
std::vector<Note> NoteBox::take(std::size_t limit) {
  std::vector<Note> notes;
  if (fd_ < 0) return notes;
  char data[kMaxNoteBytes];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  for (std::size_t k = 0; k < limit; ++k) {
    iovec io{data, sizeof data};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT);
    if (n < 0) break;  // EAGAIN: nothing more (or an error: nothing to do about it here)
    Note note;
    if (!parseNote(data, static_cast<std::size_t>(n), note)) continue;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cred{};
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        note.pid = static_cast<std::uint32_t>(cred.pid);
        note.uid = cred.uid;
      }
    }
    notes.push_back(std::move(note));
  }
  return notes;
}

bool sendNote(const std::string& instance, const std::string& client, const std::string& text) noexcept {
  try {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un address{};
    const socklen_t length = boxAddress(instance, address);
    std::string datagram = std::string(kMagic) + client.substr(0, kMaxClientName) + "\n" + text;
    if (datagram.size() > kMaxNoteBytes) datagram.resize(kMaxNoteBytes);
    // A full box (the kernel queues net.unix.max_dgram_qlen datagrams, 10 by default: another
    // process may be flooding it) is tried again for up to kFullBoxWaitNs, then given up.
    constexpr int kTries = 50;
    ssize_t n = -1;
    for (int k = 0; k < kTries; ++k) {
      n = ::sendto(fd, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                   reinterpret_cast<const sockaddr*>(&address), length);
      if (n >= 0 || errno != EAGAIN) break;
      const timespec pause{0, 1'000'000};  // 1 ms: the master drains its box every round of its loop
      ::nanosleep(&pause, nullptr);
    }
    ::close(fd);
    return n == static_cast<ssize_t>(datagram.size());
  } catch (...) {  // out of memory building the datagram: a note is best effort
    return false;
  }
}

}  // namespace tactus::ipc
