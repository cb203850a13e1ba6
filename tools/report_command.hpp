// The tactus-report command line: parses arguments, loads schedule and log, writes the outputs.
#pragma once

#include <array>
#include <iosfwd>
#include <streambuf>
#include <string>
#include <vector>

namespace tactus::report {

/// An output buffer on a file descriptor (tactus-report's standard output) that keeps the errno
/// of its first failed write, so a full disk or a closed pipe can be reported with its reason.
class FdOutputBuffer : public std::streambuf {
 public:
  explicit FdOutputBuffer(int fd);
  /// The errno of the first failed write (0 while every write succeeded).
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool drain();
  int fd_;
  int error_ = 0;
  std::array<char, 65536> buffer_{};
};

/// Runs `tactus-report` with `args` (without the program name); report text goes to `out`,
/// messages and warnings to `err`. Returns the exit code: 0 ok, 1 bad input or `out` could not
/// be written (flushed and checked at the end; the reason from an FdOutputBuffer), 2 usage error.
int runReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tactus::report
