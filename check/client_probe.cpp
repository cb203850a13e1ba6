// tactus-check's look at the client program (see client_probe.hpp): its ELF dynamic section
// (does it need libcudart.so?) and symbol tables (does it define the CUDA runtime's functions
// itself?), every offset checked against the file's size, so a damaged file is only "unknown".
#include "client_probe.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "tactus/core/text.hpp"

namespace tactus::check {
namespace {

// Functions every CUDA runtime defines; one of them defined in the program means cudart is in it.
constexpr std::string_view kCudartFunctions[] = {"cudaLaunchKernel",      "cudaMemcpyAsync",   "cudaStreamSynchronize",
                                                 "cudaDeviceSynchronize", "cudaMallocManaged", "cudaLaunchHostFunc"};
// A text the static runtime carries even in a stripped program (cudaGetErrorName's table).
constexpr std::string_view kCudartText = "cudaErrorInvalidValue";

// The program's file: as given when it names a path, else the first match on PATH.
std::string resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const std::size_t colon = rest.find(':');
    std::string candidate(rest.substr(0, colon));
    if (candidate.empty()) candidate = ".";
    candidate += '/';
    candidate += program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return "";
    rest = rest.substr(colon + 1);
  }
}

// A read-only view of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Whether [offset, offset + length) lies in the file.
  bool has(std::uint64_t offset, std::uint64_t length) const { return offset <= size_ && length <= size_ - offset; }
  /// A copy of the T at `offset` (the caller checked has()).
  template <typename T>
  T at(std::uint64_t offset) const {
    T value;
    std::memcpy(&value, data_ + offset, sizeof value);
    return value;
  }
  /// The NUL-terminated text at `offset` within a table of `tableSize` bytes at `table`.
  std::string_view text(std::uint64_t table, std::uint64_t tableSize, std::uint64_t offset) const {
    if (!has(table, tableSize) || offset >= tableSize) return {};
    const auto* start = reinterpret_cast<const char*>(data_ + table + offset);
    const void* end = std::memchr(start, 0, tableSize - offset);
    return end == nullptr ? std::string_view{} : std::string_view(start, static_cast<const char*>(end) - start);
  }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Findings {
  bool elf = false;
  bool needsCudart = false;   // DT_NEEDED libcudart.so*
  bool importsCuda = false;   // an undefined cuda* symbol: served by a shared library
  std::string definedCudart;  // a cudart function defined in the program itself
};

bool cudartFunction(std::string_view name) {
  for (std::string_view f : kCudartFunctions)
    if (name == f) return true;
  return false;
}

Findings inspect(const MappedFile& f) {
  Findings out;
  if (!f.has(0, sizeof(Elf64_Ehdr))) return out;
  const auto eh = f.at<Elf64_Ehdr>(0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
    return out;
  out.elf = true;
  const std::uint64_t count = eh.e_shnum;
  if (!f.has(eh.e_shoff, count * sizeof(Elf64_Shdr))) return out;
  auto section = [&](std::uint64_t k) { return f.at<Elf64_Shdr>(eh.e_shoff + k * sizeof(Elf64_Shdr)); };
  for (std::uint64_t k = 0; k < count; ++k) {
    const Elf64_Shdr sh = section(k);
    if (sh.sh_link >= count) continue;
    const Elf64_Shdr strings = section(sh.sh_link);
    if (sh.sh_type == SHT_DYNAMIC && f.has(sh.sh_offset, sh.sh_size)) {
      for (std::uint64_t d = 0; d + sizeof(Elf64_Dyn) <= sh.sh_size; d += sizeof(Elf64_Dyn)) {
        const auto dyn = f.at<Elf64_Dyn>(sh.sh_offset + d);
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED &&
            f.text(strings.sh_offset, strings.sh_size, dyn.d_un.d_val).substr(0, 12) == "libcudart.so")
          out.needsCudart = true;
      }
    }
    if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && f.has(sh.sh_offset, sh.sh_size)) {
      for (std::uint64_t s = 0; s + sizeof(Elf64_Sym) <= sh.sh_size; s += sizeof(Elf64_Sym)) {
        const auto sym = f.at<Elf64_Sym>(sh.sh_offset + s);
        const std::string_view name = f.text(strings.sh_offset, strings.sh_size, sym.st_name);
        if (!cudartFunction(name)) continue;
        if (sym.st_shndx == SHN_UNDEF) out.importsCuda = true;
        else if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && out.definedCudart.empty()) out.definedCudart = name;
      }
    }
  }
  return out;
}

}  // namespace

std::string staticCudartWarning(const std::string& program) {
  const std::string path = resolve(program);
  if (path.empty()) return "";
  const MappedFile file(path);
  const Findings found = inspect(file);
  if (!found.elf || found.needsCudart) return "";
  std::string evidence;
  if (!found.definedCudart.empty()) {
    evidence = "it defines " + found.definedCudart + " itself";
  } else if (!found.importsCuda &&
             std::string_view(reinterpret_cast<const char*>(file.data()), file.size()).find(kCudartText) !=
                 std::string_view::npos) {
    evidence = "it carries cudart's error names but needs no libcudart.so";
  } else {
    return "";
  }
  return quoted(path, 200) + " has the CUDA runtime linked in statically (" + evidence +
         "): its CUDA calls cannot be interposed, so the CUDA rules (cuda-sync, default-stream, unified-memory, "
         "pageable-copy) are not checked, and what the runtime does inside a runnable's call is reported as the "
         "runnable's own violations, not as info; link it with 'nvcc -cudart shared' to check them";
}

}  // namespace tactus::check
