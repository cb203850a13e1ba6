#include "instance_hint.hpp"

#include <dirent.h>

#include <algorithm>
#include <vector>

#include "tactus/core/text.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::client {

std::string otherInstancesHint(const std::string& instance, const std::string& suffix, const std::string& label) {
  const std::string prefix = ipc::segmentName("");
  std::vector<std::string> names;
  if (DIR* dir = ::opendir("/dev/shm"); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string file = entry->d_name;
      if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string other = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      if (other != instance && ipc::validateInstanceName(other)) names.push_back(other);
    }
    ::closedir(dir);
  }
  if (names.empty()) return "";
  std::sort(names.begin(), names.end());
  constexpr std::size_t kShown = 5;
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) text += (i == 0 ? "" : ", ") + quoted(names[i], 256);
  if (names.size() > kShown) text += ", ...";
  return "; " + label + ": " + text;
}

}  // namespace tactus::client
