// The tactus-report command line: parses arguments, loads schedule and log, writes the outputs.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tactus::report {

/// Runs `tactus-report` with `args` (without the program name); report text goes to `out`,
/// messages and warnings to `err`. Returns the exit code: 0 ok, 1 bad input, 2 usage error.
int runReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::report
