// tactus-report's recording commands (docs/guide/record-replay.md):
//   tactus-report --recording DIR [--export-channel NAME --export-dir OUT] [--merged-releases FILE]
//   tactus-report --compare-recordings A B
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tactus::report {

/// Runs a recording command when `args` asks for one (--recording or --compare-recordings),
/// returning its exit code: --recording 0 read, 2 damaged or unreadable (named by file and
/// offset); --compare-recordings 0 same, 1 different (the first difference named), 2 error. No
/// value: `args` is no recording command.
std::optional<int> runRecordingCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::report
