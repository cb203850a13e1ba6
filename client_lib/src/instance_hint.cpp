#include "instance_hint.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <vector>

#include "tactus/core/text.hpp"
#include "tactus/ipc/segment.hpp"

namespace tactus::client {

namespace {

// The instance a segment's name belongs to: `<instance>.manager`, `<instance>.schedule<k>` and
// `<instance>.soc<k>` are parts of the instance `<instance>` (the name a user gives with -D).
// A managed multi-SoC run's `<instance>.soc<k>.schedule<j>` is stripped of both.
std::string instanceOf(std::string name) {
  for (const std::string_view part : {std::string_view(".schedule"), std::string_view(".soc")}) {
    const std::size_t at = name.rfind(part);
    if (at == std::string::npos || at == 0 || at + part.size() == name.size()) continue;
    const std::string_view digits = std::string_view(name).substr(at + part.size());
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      name.resize(at);
  }
  const std::string manager = ".manager";
  if (name.size() > manager.size() && name.compare(name.size() - manager.size(), manager.size(), manager) == 0)
    name.resize(name.size() - manager.size());
  return name;
}

}  // namespace

std::string otherInstancesHint(const std::string& instance, const std::string& suffix, const std::string& label) {
  const std::string prefix = ipc::segmentName("");
  std::set<std::string> names;  // sorted, each once
  if (DIR* dir = ::opendir("/dev/shm"); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string file = entry->d_name;
      if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      // Only this user's: another user's instances are not this client's to meet (and not its business).
      struct stat st {};
      if (::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0 || st.st_uid != ::getuid()) continue;
      std::string other = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      if (suffix.empty()) other = instanceOf(other);
      if (other != instance && ipc::validateInstanceName(other)) names.insert(other);
    }
    ::closedir(dir);
  }
  if (names.empty()) return "";
  // The names most like the one asked for first (the longest common start), then by name: a typo's
  // instance is among those shown however many others this user has.
  std::vector<std::string> ordered(names.begin(), names.end());
  const auto common = [&](const std::string& name) {
    return std::mismatch(name.begin(), name.end(), instance.begin(), instance.end()).first - name.begin();
  };
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const std::string& a, const std::string& b) { return common(a) > common(b); });
  constexpr std::size_t kShown = 5;
  std::string text;
  std::size_t shown = 0;
  for (const std::string& name : ordered) {
    if (shown == kShown) {
      text += ", ...";
      break;
    }
    text += (shown++ == 0 ? "" : ", ") + quoted(name, 256);
  }
  return "; " + label + ": " + text;
}

}  // namespace tactus::client
