// Reading and writing whole files with errors that say which file and what went wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "tactus/core/result.hpp"

namespace tactus {

/// Reads a whole regular file. `what` names it in messages (`graph file`). Refuses directories,
/// devices and pipes (a graph read from /dev/zero would never end) and files above `maxBytes`.
Result<std::string> readRegularFile(const std::string& path, const char* what, std::uint64_t maxBytes);

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename. A symbolic
/// link is written through (its target is replaced); an existing device or pipe is written
/// through, never replaced (`-o /dev/stdout` works, a write error is reported); a directory is
/// refused.
Result<void> writeFileAtomically(const std::string& path, std::string_view text, const char* what);

/// The same, with the bytes from `write`, which puts them into the stream it is given (in pieces,
/// so a large file need not be held whole) and returns false where it cannot make them.
Result<void> writeFileAtomically(const std::string& path, const std::function<bool(std::ostream&)>& write,
                                 const char* what);

}  // namespace tactus
