// The one command-line parser of the tactus tools, with GNU getopt_long's conventions (long
// names, `--opt=value` and `--opt value`, unique prefixes of long names, `-o value`, `-ovalue`,
// bundled short flags, `--` ending the options, `-` an operand meaning stdin or stdout) plus STM's
// multi-letter single-dash flags (`-wt`, `-nrf`). Written on the standard library (core uses
// nothing else) and on an argument vector, so that the commands stay testable in-process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus {

/// One option a command accepts.
struct OptionSpec {
  std::string longName;               ///< `output` for --output (required, unique)
  char shortName = 0;                 ///< `o` for -o; 0: none
  std::string valueName;              ///< `FILE`; empty: a flag that takes no value
  std::string help;                   ///< what it does, for --help (lines joined with \n)
  std::vector<std::string> stmFlags;  ///< STM's multi-letter spellings without the dash (`wt`)
  bool repeatable = false;            ///< a value option that may be given again (each kept, in order);
                                      ///< else a second one is an error
};

/// One option as given.
struct ParsedOption {
  std::string name;     ///< its longName
  std::string value;    ///< its value ("" for a flag)
  std::string spelled;  ///< as written (`-o`, `--output`, `-wt`), for messages
};

/// A parsed command line: options in order, operands in order.
struct CommandLine {
  std::vector<ParsedOption> options;
  std::vector<std::string> operands;

  /// Whether option `name` (a longName) was given.
  bool has(std::string_view name) const;
  /// The value of option `name`, or nullptr when it was not given.
  const ParsedOption* find(std::string_view name) const;
};

/// Parses `args` (without the program name). Errors (kBadParameter) name the option as written:
/// unknown (with the closest known name), ambiguous prefix (with the candidates), a missing value,
/// a value given to a flag, a value option given twice (unless it is repeatable).
Result<CommandLine> parseCommandLine(std::span<const OptionSpec> specs, const std::vector<std::string>& args);

/// The options block of --help: `  -o, --output FILE   text`, one option per entry, STM flags
/// shown as `-wt, --fusion-threshold DURATION`.
std::string optionsHelp(std::span<const OptionSpec> specs);

/// The operand that means standard input or standard output.
inline constexpr std::string_view kStdStream = "-";

/// Reads an input operand: `-` reads standard input to its end (at most `maxBytes`), else the
/// regular file (readRegularFile). `what` names it in messages (`graph file`).
Result<std::string> readInputOperand(const std::string& path, const char* what, std::uint64_t maxBytes);

/// Writes an output operand: `-` writes `text` to standard output (flushed, errors reported),
/// else the file, atomically (writeFileAtomically).
Result<void> writeOutputOperand(const std::string& path, std::string_view text, const char* what);

/// How an operand is named in messages: `standard input` / `standard output` for `-`, else the path.
std::string operandName(const std::string& path, bool output);

/// A command's end: flushes std::cout and stdout, and where standard output could not be written
/// (a full disk, a closed pipe) says so on std::cerr as "PROGRAM: cannot write to standard output:
/// REASON" and turns a `code` of 0 into 1. `knownErrno`: the reason of a write that failed earlier,
/// when the caller kept it (a text longer than the buffer fails inside the write, and the flush
/// then has nothing left to retry). Returns the exit code.
int finishStandardOutput(std::string_view program, int code, int knownErrno = 0);

}  // namespace tactus
