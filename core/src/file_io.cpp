// Whole-file reads and atomic writes with std::filesystem, errors as Results.
#include "tactus/core/file_io.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

#include "tactus/core/hash.hpp"

namespace tactus {
namespace fs = std::filesystem;

Result<std::string> readRegularFile(const std::string& path, const char* what, std::uint64_t maxBytes) {
  const std::string name = std::string(what) + " '" + path + "'";
  try {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) return fail(ErrorCode::kIo, "cannot open " + name + ": no such file");
    if (fs::is_directory(status)) return fail(ErrorCode::kIo, "cannot read " + name + ": it is a directory");
    if (!fs::is_regular_file(status)) return fail(ErrorCode::kIo, "cannot read " + name + ": not a regular file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) return fail(ErrorCode::kIo, "cannot read " + name + ": " + ec.message());
    if (size > maxBytes)
      return fail(ErrorCode::kIo, "cannot read " + name + ": " + std::to_string(size) + " bytes, above the limit of " +
                                      std::to_string(maxBytes));
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(ErrorCode::kIo, "cannot open " + name);
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (in.bad() || static_cast<std::uintmax_t>(in.gcount()) != size)
      return fail(ErrorCode::kIo, "cannot read " + name + " (it changed while being read?)");
    return text;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kIo, "cannot read " + name + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kIo, "cannot read " + name + ": " + e.what());
  }
}

Result<void> writeFileAtomically(const std::string& path, std::string_view text, const char* what) {
  return writeFileAtomically(
      path,
      [text](std::ostream& out) {
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        return true;
      },
      what);
}

Result<void> writeFileAtomically(const std::string& path, const std::function<bool(std::ostream&)>& write,
                                 const char* what) {
  const std::string name = std::string(what) + " '" + path + "'";
  try {
    std::error_code ec;
    fs::path target = path;
    if (fs::is_symlink(fs::symlink_status(target, ec))) {
      target = fs::weakly_canonical(target, ec);
      if (ec) return fail(ErrorCode::kIo, "cannot write " + name + ": " + ec.message());
    }
    const fs::file_status status = fs::status(target, ec);
    if (fs::is_directory(status)) return fail(ErrorCode::kIo, "cannot write " + name + ": it is a directory");
    if (fs::exists(status) && !fs::is_regular_file(status)) {
      // A device or a pipe (`-o /dev/stdout`): write through it, never rename over it.
      std::ofstream out(target, std::ios::binary);
      if (!out) return fail(ErrorCode::kIo, "cannot open " + name);
      const bool made = write(out);
      out.flush();
      if (!made || !out) return fail(ErrorCode::kIo, "cannot write " + name);
      return {};
    }
    // A name no other writer uses at the same time: time, thread and a counter, hashed.
    static std::atomic<std::uint64_t> counter{0};
    const std::string salt = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "/" +
                             std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "/" +
                             std::to_string(counter.fetch_add(1));
    fs::path tmp = target;
    tmp += ".tmp." + hashToHex(hashBytes(kHashSeed, salt));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) return fail(ErrorCode::kIo, "cannot create " + name);
      const bool made = write(out);
      out.flush();
      if (!made || !out) {
        fs::remove(tmp, ec);
        return fail(ErrorCode::kIo, "cannot write " + name);
      }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return fail(ErrorCode::kIo, "cannot write " + name + ": " + ec.message());
    }
    return {};
  } catch (const std::exception& e) {
    return fail(ErrorCode::kIo, "cannot write " + name + ": " + e.what());
  }
}

}  // namespace tactus
