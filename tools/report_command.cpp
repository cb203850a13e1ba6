// The tactus-report command: argument parsing, loading, and dispatch to the outputs.
#include "report_command.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <ostream>
#include <sstream>

#include <unistd.h>

#include "analysis.hpp"
#include "outputs.hpp"
#include "report_args.hpp"
#include "tactus/core/file_io.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/verify.hpp"
#include "tactus/view/html_view.hpp"
#include "tactus_config.h"

namespace tactus::report {
namespace {

using Options = ReportOptions;  // report_args.cpp parses them

// The schedule operand: a file, or standard input for `-`.
Result<Schedule> loadScheduleOperand(const std::string& path) {
  if (path != kStdStream) return loadScheduleFile(path);
  auto text = readInputOperand(path, "schedule file", kMaxScheduleFileBytes);
  if (!text) return text.error();
  return readSchedule(*text, "stdin");
}

// The log operand: a file, or standard input for `-`.
Result<LogFile> readLogOperand(const std::string& path) {
  if (path != kStdStream) return readLogFile(path);
  auto bytes = readInputOperand(path, "event log", limits::kMaxEventLogBytes);
  if (!bytes) return bytes.error();
  return parseLog(*bytes, "stdin");
}

Result<void> writeFile(const std::string& path, const std::string& text) {
  return writeOutputOperand(path, text, "output file");
}

int run(const Options& o, std::ostream& out, std::ostream& err) {
  auto fatal = [&](const Error& e) {
    err << "tactus-report: " << e.message << "\n";
    return 1;
  };
  auto schedule = loadScheduleOperand(o.schedule);
  if (!schedule) return fatal(fail(schedule.error().code, schedule.error().message + swappedArgumentsHint(o)));
  // Every index the report follows must be in range: the verifier checks that (and the rest).
  VerifyOptions vo;
  vo.allowOverlength = true;
  auto verified = verifyScheduleResult(*schedule, vo);
  if (!verified) return fatal(fail(ErrorCode::kValidation, o.schedule + ": " + verified.error().message));

  if (o.log.empty()) {
    if (!o.html.empty()) {
      auto w =
          o.html == kStdStream ? writeFile(o.html, view::renderHtml(*schedule)) : view::writeHtml(o.html, *schedule);
      if (!w) return fatal(w.error());
    }
    if (!o.traceOut.empty()) {
      std::ostringstream t;
      writeTrace(t, *schedule, nullptr, nullptr);
      auto w = writeFile(o.traceOut, t.str());
      if (!w) return fatal(w.error());
    }
    return 0;
  }

  auto log = readLogOperand(o.log);
  if (!log) return fatal(log.error());
  auto matches = checkLogMatches(*log, *schedule, o.schedule);
  if (!matches) return fatal(matches.error());
  const Analysis analysis = analyze(*schedule, *log);
  for (const std::string& w : analysis.warnings) err << "tactus-report: warning: " << w << "\n";

  if (o.csv) writeCsv(out, *schedule, *log, analysis);
  else if (o.json) out << formatJson(*schedule, *log, analysis);
  else if (o.statisticsOnStdout) out << formatText(*schedule, *log, analysis);

  if (!o.wcetOut.empty()) {
    auto w = writeFile(o.wcetOut, formatWcetFile(*schedule, analysis, o.percentile, o.margin));
    if (!w) return fatal(w.error());
  }
  if (o.traceOut == kStdStream) {
    out.flush();
    out << [&] {
      std::ostringstream t;
      writeTrace(t, *schedule, &*log, &analysis);
      return t.str();
    }();
  } else if (!o.traceOut.empty()) {
    std::ofstream f(o.traceOut, std::ios::binary | std::ios::trunc);
    if (!f) return fatal(fail(ErrorCode::kIo, o.traceOut + ": cannot create file"));
    writeTrace(f, *schedule, &*log, &analysis);
    f.flush();
    if (!f) return fatal(fail(ErrorCode::kIo, o.traceOut + ": cannot write file"));
  }
  if (!o.html.empty()) {
    const view::Execution execution = makeExecution(*schedule, *log, analysis);
    auto w = o.html == kStdStream ? writeFile(o.html, view::renderHtml(*schedule, &execution))
                                  : view::writeHtml(o.html, *schedule, &execution);
    if (!w) return fatal(w.error());
  }
  return 0;
}

// The command without the final check of `out`.
int dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto options = parseReportArgs(args);
  if (!options) {
    err << "tactus-report: " << options.error().message << "\n(try 'tactus-report --help')\n";
    return 2;
  }
  if (options->help) {
    out << reportUsage();
    return 0;
  }
  if (options->version) {
    out << "tactus-report " << TACTUS_VERSION << " (event log version " << kEventLogVersion << ")\n";
    return 0;
  }
  try {
    return run(*options, out, err);
  } catch (const std::bad_alloc&) {
    // Every table is sized by the limits and by the records; this is a machine short of memory.
    err << "tactus-report: out of memory reading " << (options->log.empty() ? "" : options->log + " with ")
        << options->schedule << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Allocation failure on a huge input, or a stream error: report, never crash.
    err << "tactus-report: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

FdOutputBuffer::FdOutputBuffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool FdOutputBuffer::drain() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return error_ == 0;
}

FdOutputBuffer::int_type FdOutputBuffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

int FdOutputBuffer::sync() { return drain() ? 0 : -1; }

int runReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int code = dispatch(args, out, err);
  // The report is only delivered once flushed: a full disk or a closed pipe is an error.
  errno = 0;
  out.flush();
  const auto* fdBuffer = dynamic_cast<const FdOutputBuffer*>(out.rdbuf());
  const int error = fdBuffer != nullptr ? fdBuffer->error() : errno;
  if (!out) {
    err << "tactus-report: cannot write to standard output: " << (error != 0 ? std::strerror(error) : "write error")
        << "\n";
    if (code == 0) code = 1;
  }
  return code;
}

}  // namespace tactus::report
