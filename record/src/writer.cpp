#include "tactus/record/writer.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "tactus/record/crc32.hpp"

namespace tactus::record {
namespace {

Error ioError(const std::string& path, const char* what) {
  return fail(ErrorCode::kIo, "recording " + path + ": " + what + ": " + std::strerror(errno));
}

// writev until every byte is out (a regular file may take fewer bytes than asked, e.g. on a
// signal or a full disk: the rest is retried, a zero or an error is returned).
bool writeAll(int fd, iovec* iov, int count) {
  while (count > 0) {
    const ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

}  // namespace

Writer::Writer(Writer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), bytes_(other.bytes_) {}

Writer& Writer::operator=(Writer&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    bytes_ = other.bytes_;
  }
  return *this;
}

Writer::~Writer() { close(); }

Result<Writer> Writer::create(const std::string& path, const FileHeader& header) {
  Writer w;
  w.path_ = path;
  w.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (w.fd_ < 0) return ioError(path, "cannot create");
  iovec iov{const_cast<FileHeader*>(&header), sizeof header};
  if (!writeAll(w.fd_, &iov, 1)) return ioError(path, "cannot write the file header");
  w.bytes_ = sizeof header;
  return w;
}

Result<void> Writer::append(ChunkType type, const void* fixed, std::size_t fixedBytes, const void* data,
                            std::size_t dataBytes) {
  if (fd_ < 0) return fail(ErrorCode::kInvalidState, "recording " + path_ + ": append after close");
  if (fixedBytes != fixedSize(static_cast<std::uint16_t>(type)) || fixedBytes + dataBytes > kMaxPayload)
    return fail(ErrorCode::kBadParameter, "recording " + path_ + ": a " +
                                              chunkTypeName(static_cast<std::uint16_t>(type)) + " chunk of " +
                                              std::to_string(fixedBytes + dataBytes) + " bytes");
  std::uint32_t crc = crc32(0, fixed, fixedBytes);
  if (dataBytes > 0) crc = crc32(crc, data, dataBytes);
  ChunkHeader h = makeChunkHeader(type, static_cast<std::uint32_t>(fixedBytes + dataBytes), crc);
  iovec iov[3] = {{&h, sizeof h}, {const_cast<void*>(fixed), fixedBytes}, {const_cast<void*>(data), dataBytes}};
  if (!writeAll(fd_, iov, dataBytes > 0 ? 3 : 2)) return ioError(path_, "cannot append a chunk");
  bytes_ += sizeof h + fixedBytes + dataBytes;
  return {};
}

Result<void> Writer::sync() {
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) return ioError(path_, "fdatasync");
  return {};
}

void Writer::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace tactus::record
