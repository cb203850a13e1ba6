// "Did you mean" for names the graph does not declare (see suggest.hpp).
#include "tactus/core/suggest.hpp"

#include <algorithm>
#include <vector>

#include "tactus/core/text.hpp"

namespace tactus {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Edit distance with swaps of neighbours (optimal string alignment), ignoring letter case; stops
// counting at `limit` + 1 (names of declared things are short, the lists may be long).
std::size_t distance(std::string_view a, std::string_view b, std::size_t limit) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > limit) return limit + 1;
  std::vector<std::size_t> before(b.size() + 1), row(b.size() + 1), next(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    next[0] = i;
    std::size_t rowMin = next[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      next[j] = std::min({row[j] + 1, next[j - 1] + 1, row[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        next[j] = std::min(next[j], before[j - 2] + 1);
      rowMin = std::min(rowMin, next[j]);
    }
    if (rowMin > limit) return limit + 1;
    before.swap(row);
    row.swap(next);
  }
  return row[b.size()];
}

// The name without its trailing digits (`CPU12` -> `CPU`).
std::string_view stem(std::string_view name) {
  std::size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  return name.substr(0, end);
}

bool sameNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

std::string_view closestName(std::string_view wrong, std::span<const std::string_view> names) {
  const std::size_t limit = wrong.size() <= 4 ? 1 : wrong.size() <= 8 ? 2 : 3;
  const std::string_view wrongStem = stem(wrong);
  const bool numbered = wrongStem.size() < wrong.size() && !wrongStem.empty();
  std::string_view best;
  std::size_t bestDistance = limit + 1;
  bool tied = false;  // two names as close: no guess (SocC between SocA and SocB)
  for (std::string_view name : names) {
    if (name == wrong) continue;
    const std::string_view nameStem = stem(name);
    // CPU2 for CPU1 is another instance, and CPU its type: the list of what exists answers
    // that, not a guess.
    if (numbered && sameNoCase(nameStem, wrongStem) && name.substr(nameStem.size()) != wrong.substr(wrongStem.size()))
      continue;
    const std::size_t d = distance(wrong, name, std::min(limit, bestDistance));
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
      tied = false;
    } else if (d == bestDistance && d <= limit && !sameNoCase(name, best)) {
      tied = true;
    }
  }
  return tied ? std::string_view() : best;
}

std::string nameList(std::span<const std::string_view> names, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) out += (i == 0 ? "" : ", ") + quoted(names[i]);
  if (names.size() > max) out += " and " + std::to_string(names.size() - max) + " more";
  return out;
}

std::string didYouMean(std::string_view wrong, std::span<const std::string_view> names, std::string_view listIntro,
                       std::string_view guessPrefix) {
  if (names.empty()) return {};
  const std::string_view guess = closestName(wrong, names);
  std::string out = " (";
  if (!guess.empty()) out += "did you mean " + quoted(std::string(guessPrefix) + std::string(guess)) + "? ";
  out += std::string(listIntro) + " " + nameList(names) + ")";
  return out;
}

}  // namespace tactus
