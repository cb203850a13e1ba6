// The recording writer: one file, opened O_APPEND, each chunk one writev (header, fixed struct,
// bytes), so a process killed at any instant leaves whole chunks and at most one cut last chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tactus/core/result.hpp"
#include "tactus/record/format.hpp"

namespace tactus::record {

class Writer {
 public:
  Writer() = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  Writer(Writer&& other) noexcept;
  Writer& operator=(Writer&& other) noexcept;
  ~Writer();

  /// Creates `path` (refused if it exists) and writes its file header.
  static Result<Writer> create(const std::string& path, const FileHeader& header);

  /// Appends one chunk: `fixed` (the type's struct, fixedSize(type) bytes) then `data`.
  Result<void> append(ChunkType type, const void* fixed, std::size_t fixedBytes, const void* data = nullptr,
                      std::size_t dataBytes = 0);

  template <typename Rec>
  Result<void> append(ChunkType type, const Rec& rec, const void* data = nullptr, std::size_t dataBytes = 0) {
    return append(type, &rec, sizeof rec, data, dataBytes);
  }

  /// fdatasync: what is written so far survives a power loss.
  Result<void> sync();
  /// Closes the file (the destructor does too).
  void close();

  const std::string& path() const { return path_; }
  std::uint64_t bytesWritten() const { return bytes_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t bytes_ = 0;
};

}  // namespace tactus::record
