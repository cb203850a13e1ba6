// The static parts of the HTML view: its style sheet and its drawing script (internal to view/).
#pragma once

namespace tactus::view::detail {

/// The page's CSS, inlined into <style>.
extern const char* const kStyle;
/// The script that records errors into the DOM; inlined first so it sees every later error.
extern const char* const kErrorTrap;
/// The drawing script, inlined after the data; reads the JSON in <script id="data">.
extern const char* const kScript;

}  // namespace tactus::view::detail
