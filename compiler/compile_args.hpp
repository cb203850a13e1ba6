// tactus-compile's command line: its options (long names, STM's -wt and -nrf), their checks and
// its --help text, kept apart from the compile driver so that either can change alone.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "compile.hpp"
#include "tactus/core/command_line.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler {

/// What the command line asks for.
enum class CompileAction { kCompile, kHelp, kVersion };

/// The options tactus-compile accepts (also for the man page and the bash completion).
std::span<const OptionSpec> compileOptionSpecs();

/// Parses the arguments into `o`. Errors (kBadParameter) name the option and the value.
Result<CompileAction> parseCompileArgs(const std::vector<std::string>& args, CompileOptions& o);

/// The --help text.
std::string compileUsage();

/// A ScheduleOptions::progress that prints to `out` at most once a second (the first after a
/// second of search): `tactus-compile: searching 'Main' 2.0 s: best 4.100ms, lower bound
/// 3.900ms, gap 5.1%, 123456 steps`.
decltype(ScheduleOptions::progress) searchProgressPrinter(std::ostream& out);

}  // namespace tactus::compiler
