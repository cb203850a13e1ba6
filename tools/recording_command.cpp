#include "recording_command.hpp"

#include <ostream>

#include "tactus/core/file_io.hpp"
#include "tactus/core/text.hpp"
#include "tactus/record/compare.hpp"
#include "tactus/record/merge.hpp"
#include "tactus/record/reader.hpp"
#include "tactus/record/summary.hpp"

namespace tactus::report {
namespace {

using record::RecordingFile;

// The value of `--name VALUE` or `--name=VALUE` at args[i]; advances i over a separate value.
bool optionValue(const std::vector<std::string>& args, std::size_t& i, const std::string& name, std::string& value) {
  if (args[i] == name && i + 1 < args.size()) {
    value = args[++i];
    return true;
  }
  if (args[i].rfind(name + "=", 0) == 0) {
    value = args[i].substr(name.size() + 1);
    return true;
  }
  return false;
}

// Every SoC's releases on the primary's clock as CSV into `path` (-: standard output).
int writeMerged(const std::vector<RecordingFile>& files, const std::string& path, std::ostream& out,
                std::ostream& err) {
  auto merged = record::mergeReleases(files);
  if (!merged) {
    err << "tactus-report: " << merged.error().message << "\n";
    return 2;
  }
  const std::string csv = record::mergedReleasesCsv(*merged);
  if (path == "-") {
    out << csv;
    return 0;
  }
  if (auto ok = writeFileAtomically(path, csv, "merged releases"); !ok) {
    err << "tactus-report: " << ok.error().message << "\n";
    return 2;
  }
  out << "wrote " << merged->size() << " releases of " << files.size() << " SoC files on the primary's clock to "
      << path << "\n";
  return 0;
}

int showRecording(const std::string& dir, const std::string& channel, const std::string& exportDir,
                  const std::string& mergedPath, std::ostream& out, std::ostream& err) {
  auto files = record::readRecordingDir(dir);
  if (!files) {
    err << "tactus-report: " << files.error().message << "\n";
    return 2;
  }
  if (mergedPath != "-") out << record::describeRecording(*files);
  if (!mergedPath.empty())
    if (const int code = writeMerged(*files, mergedPath, out, err); code != 0 || mergedPath == "-") return code;
  if (channel.empty()) return 0;
  auto ref = record::findChannel(*files, channel);
  if (!ref) {
    err << "tactus-report: " << ref.error().message << "\n";
    return 2;
  }
  auto n = record::exportChannel(*files, *ref, exportDir);
  if (!n) {
    err << "tactus-report: " << n.error().message << "\n";
    return 2;
  }
  out << "exported " << *n << " versions of channel " << tactus::quoted(channel) << " to " << exportDir << "\n";
  return 0;
}

int compare(const std::string& a, const std::string& b, std::ostream& out, std::ostream& err) {
  auto x = record::readRecordingDir(a);
  auto y = record::readRecordingDir(b);
  for (const auto* r : {&x, &y})
    if (!*r) {
      err << "tactus-report: " << r->error().message << "\n";
      return 2;
    }
  if (x->size() != y->size()) {
    out << "different: " << x->size() << " SoC files in " << a << ", " << y->size() << " in " << b << "\n";
    return 1;
  }
  std::uint64_t compared = 0;
  for (std::size_t i = 0; i < x->size(); ++i) {
    const RecordingFile& fa = (*x)[i];
    const RecordingFile& fb = (*y)[i];
    if (const std::string d = record::scheduleDifference(fa, fb); !d.empty()) {
      out << "different schedules: " << d << "\n";
      return 1;
    }
    const record::Comparison c = record::compareRecordings(fa, fb);
    if (!c.same) {
      out << "different: " << c.firstDifference << "\n";
      return 1;
    }
    out << "SoC " << i << ": " << c.compared << " versions identical (" << c.onlyA << " only in " << a << ", "
        << c.onlyB << " only in " << b << ")\n";
    compared += c.compared;
  }
  if (compared == 0) {
    out << "different: no channel version in common\n";
    return 1;
  }
  out << "same: every channel version both recordings hold is byte-identical\n";
  return 0;
}

}  // namespace

std::optional<int> runRecordingCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string dir, channel, exportDir, merged;
  std::vector<std::string> compareDirs;
  bool any = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (optionValue(args, i, "--recording", dir) || optionValue(args, i, "--export-channel", channel) ||
        optionValue(args, i, "--export-dir", exportDir) || optionValue(args, i, "--merged-releases", merged)) {
      any = true;
    } else if (args[i] == "--compare-recordings" && i + 2 < args.size()) {
      compareDirs = {args[i + 1], args[i + 2]};
      i += 2;
      any = true;
    } else if (args[i] == "--compare-recordings") {
      err << "tactus-report: --compare-recordings takes two recording folders\n";
      return 2;
    } else if (any || args[i].rfind("--recording", 0) == 0) {
      err << "tactus-report: " << tactus::quoted(args[i]) << " is not an option of the recording commands\n";
      return 2;
    } else {
      return std::nullopt;
    }
  }
  if (!any) return std::nullopt;
  if (!compareDirs.empty() && dir.empty() && channel.empty()) return compare(compareDirs[0], compareDirs[1], out, err);
  if (dir.empty() || compareDirs.size() > 0 || channel.empty() != exportDir.empty() ||
      (merged == "-" && !channel.empty())) {
    err << "tactus-report: use --recording DIR [--export-channel NAME --export-dir OUT] [--merged-releases FILE] or "
           "--compare-recordings A B\n";
    return 2;
  }
  return showRecording(dir, channel, exportDir, merged, out, err);
}

}  // namespace tactus::report
