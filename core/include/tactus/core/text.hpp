// Small text helpers shared by every module that writes messages or JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tactus {

/// Appends `s` as a JSON string literal. Besides what JSON requires, `<`, `>` and `&` become
/// \u escapes, so the literal can sit inside an HTML <script> element unchanged.
void jsonString(std::string& out, std::string_view s);

/// `s` as a JSON string literal (see the appending overload).
std::string jsonString(std::string_view s);

/// Quotes text for an error message: in single quotes, cut after `maxBytes` bytes with `...`,
/// control bytes written as \xNN so binary junk cannot garble a terminal.
std::string quoted(std::string_view text, std::size_t maxBytes = 60);

/// A duration in nanoseconds as short text with a unit, exact to three decimals with trailing
/// zeros dropped: `120.5ms`, `33.33ms`, `10us`, `0ns`.
std::string humanDuration(std::int64_t ns);

/// The 1-based line of the first NUL byte in `text`, or 0 when it has none. Text formats refuse
/// NUL: it marks binary input, and parsers would report the bytes after it wrongly.
std::size_t firstNulLine(std::string_view text);

}  // namespace tactus
