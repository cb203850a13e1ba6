// "Did you mean": the declared name closest to one the graph does not declare, and the list of
// the declared ones, for the messages about unknown runnables, resources, epochs, clients and
// keys (the compiler), and about names a client registers or attaches with that its schedule does
// not have (the client library and the master).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tactus {

/// The name in `names` that `wrong` is most likely a typo of, or an empty view: at most 1 edit
/// for a name of up to 4 characters, 2 up to 8, 3 beyond (an edit inserts, deletes or replaces
/// a character or swaps two neighbours; letter case costs nothing). A name that differs only in
/// its trailing number (`CPU2` and `CPU1`, or `CPU`) is another instance, not a typo: never
/// suggested. Two names as close are no guess either (`SocC` between `SocA` and `SocB`).
std::string_view closestName(std::string_view wrong, std::span<const std::string_view> names);

/// The names quoted and joined with `, ` in the order given, at most `max` of them, then
/// `and N more`: `'CPU0', 'CPU1', 'GPU0'`.
std::string nameList(std::span<const std::string_view> names, std::size_t max = 12);

/// ` (did you mean 'GUESS'? LISTINTRO 'a', 'b', ...)`, where GUESS is `guessPrefix` + the closest
/// name; without a close name ` (LISTINTRO 'a', 'b', ...)`; empty when `names` is empty.
/// `listIntro` ends with its own punctuation (`declared:`, `client 'A' has`).
std::string didYouMean(std::string_view wrong, std::span<const std::string_view> names, std::string_view listIntro,
                       std::string_view guessPrefix = {});

}  // namespace tactus
