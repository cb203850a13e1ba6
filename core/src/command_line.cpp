// The tools' command-line parser and their stdin/stdout operands (see command_line.hpp).
#include "tactus/core/command_line.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>

#include "tactus/core/file_io.hpp"

namespace tactus {

namespace {

// Edit distance, for the "did you mean" of an unknown long name (names are short).
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(std::span<const OptionSpec> specs, std::string_view name) {
  const OptionSpec* best = nullptr;
  std::size_t bestDistance = 3;  // further than 2 edits is no suggestion
  for (const OptionSpec& s : specs) {
    const std::size_t d = distance(name, s.longName);
    if (d < bestDistance) {
      bestDistance = d;
      best = &s;
    }
  }
  return best == nullptr ? "" : " (did you mean '--" + best->longName + "'?)";
}

class Parser {
 public:
  Parser(std::span<const OptionSpec> specs, const std::vector<std::string>& args) : specs_(specs), args_(args) {}

  Result<CommandLine> run() {
    for (i_ = 0; i_ < args_.size(); ++i_) {
      const std::string& a = args_[i_];
      if (a == "--") {
        line_.operands.insert(line_.operands.end(), args_.begin() + static_cast<std::ptrdiff_t>(i_) + 1, args_.end());
        break;
      }
      Result<void> ok;
      if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
        ok = longOption(a);
      } else if (a.size() > 1 && a[0] == '-') {
        ok = shortOptions(a);
      } else {
        line_.operands.push_back(a);  // also `-`: standard input or output
      }
      if (!ok) return ok.error();
    }
    return std::move(line_);
  }

 private:
  Result<void> add(const OptionSpec& spec, std::string value, std::string spelled) {
    if (!spec.valueName.empty() && !spec.repeatable && !seen_.insert(spec.longName).second) {
      return fail(ErrorCode::kBadParameter, "option '" + spelled + "' given twice");
    }
    line_.options.push_back({spec.longName, std::move(value), std::move(spelled)});
    return {};
  }

  // The value of a value option written without `=`: the next argument.
  Result<std::string> nextValue(const std::string& spelled, const OptionSpec& spec) {
    if (i_ + 1 >= args_.size()) {
      return fail(ErrorCode::kBadParameter, "option '" + spelled + "' needs a value (" + spec.valueName + ")");
    }
    return args_[++i_];
  }

  Result<void> longOption(const std::string& a) {
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const OptionSpec* spec = nullptr;
    std::vector<const OptionSpec*> prefixed;
    for (const OptionSpec& s : specs_) {
      if (s.longName == name) spec = &s;
      if (s.longName.compare(0, name.size(), name) == 0) prefixed.push_back(&s);
    }
    if (spec == nullptr && prefixed.size() == 1) spec = prefixed.front();
    if (spec == nullptr && prefixed.size() > 1) {
      std::string names;
      for (const OptionSpec* s : prefixed) names += (names.empty() ? "'--" : ", '--") + s->longName + "'";
      return fail(ErrorCode::kBadParameter, "option '--" + name + "' is ambiguous: " + names);
    }
    if (spec == nullptr) {
      return fail(ErrorCode::kBadParameter, "unknown option '--" + name + "'" + suggestion(specs_, name));
    }
    const std::string spelled = "--" + spec->longName;
    if (spec->valueName.empty()) {
      if (eq != std::string::npos) return fail(ErrorCode::kBadParameter, "option '" + spelled + "' takes no value");
      return add(*spec, "", spelled);
    }
    if (eq != std::string::npos) return add(*spec, a.substr(eq + 1), spelled);
    auto value = nextValue(spelled, *spec);
    if (!value) return value.error();
    return add(*spec, std::move(*value), spelled);
  }

  Result<void> shortOptions(const std::string& a) {
    for (const OptionSpec& s : specs_) {
      for (const std::string& stm : s.stmFlags) {
        if (a.compare(1, std::string::npos, stm) != 0) continue;
        if (s.valueName.empty()) return add(s, "", a);
        auto value = nextValue(a, s);
        if (!value) return value.error();
        return add(s, std::move(*value), a);
      }
    }
    for (std::size_t k = 1; k < a.size(); ++k) {
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& s : specs_) {
        if (s.shortName != 0 && s.shortName == a[k]) spec = &s;
      }
      const std::string spelled = std::string("-") + a[k];
      if (spec == nullptr) {
        std::string message = "unknown option '" + spelled + "'";
        if (a.size() > 2) message.append(" in '").append(a).append("'").append(suggestion(specs_, a.substr(1)));
        return fail(ErrorCode::kBadParameter, message);
      }
      if (spec->valueName.empty()) {
        if (auto ok = add(*spec, "", spelled); !ok) return ok;
        continue;
      }
      if (k + 1 < a.size()) {  // -ovalue, unless it is a long name with one dash (-output)
        for (const OptionSpec& s : specs_) {
          if (k == 1 && s.longName == a.substr(1)) {
            std::string message = "option '" + a + "' has one dash: did you mean '-";
            message.append(a).append("'?");
            return fail(ErrorCode::kBadParameter, message);
          }
        }
        return add(*spec, a.substr(k + 1), spelled);
      }
      auto value = nextValue(spelled, *spec);
      if (!value) return value.error();
      return add(*spec, std::move(*value), spelled);
    }
    return {};
  }

  std::span<const OptionSpec> specs_;
  const std::vector<std::string>& args_;
  std::size_t i_ = 0;
  CommandLine line_;
  std::set<std::string> seen_;
};

}  // namespace

bool CommandLine::has(std::string_view name) const { return find(name) != nullptr; }

const ParsedOption* CommandLine::find(std::string_view name) const {
  for (const ParsedOption& o : options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

Result<CommandLine> parseCommandLine(std::span<const OptionSpec> specs, const std::vector<std::string>& args) {
  return Parser(specs, args).run();
}

std::string optionsHelp(std::span<const OptionSpec> specs) {
  constexpr std::size_t kColumn = 32;
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string names = "  ";
    for (const std::string& stm : s.stmFlags) names += "-" + stm + ", ";
    if (s.shortName != 0) names += std::string("-") + s.shortName + ", ";
    names += "--" + s.longName;
    if (!s.valueName.empty()) names += " " + s.valueName;
    std::string help = s.help;
    std::string indent(kColumn, ' ');
    for (std::size_t p = help.find('\n'); p != std::string::npos; p = help.find('\n', p + 1)) {
      help.insert(p + 1, indent);
      p += indent.size();
    }
    out += names;
    if (names.size() + 2 > kColumn) {
      out.append("\n").append(indent);
    } else {
      out.append(kColumn - names.size(), ' ');
    }
    out.append(help).append("\n");
  }
  return out;
}

Result<std::string> readInputOperand(const std::string& path, const char* what, std::uint64_t maxBytes) {
  if (path != kStdStream) return readRegularFile(path, what, maxBytes);
  std::string text;
  char buffer[65536];
  for (;;) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, stdin);
    text.append(buffer, n);
    if (text.size() > maxBytes) {
      return fail(ErrorCode::kIo, std::string("standard input: the ") + what + " is larger than " +
                                      std::to_string(maxBytes) + " bytes");
    }
    if (n < sizeof buffer) break;
  }
  if (std::ferror(stdin) != 0) {
    return fail(ErrorCode::kIo, std::string("standard input: cannot read the ") + what + ": " + std::strerror(errno));
  }
  return text;
}

Result<void> writeOutputOperand(const std::string& path, std::string_view text, const char* what) {
  if (path != kStdStream) return writeFileAtomically(path, text, what);
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return fail(ErrorCode::kIo, std::string("standard output: cannot write the ") + what + ": " +
                                    (errno != 0 ? std::strerror(errno) : "write error"));
  }
  return {};
}

std::string operandName(const std::string& path, bool output) {
  if (path == kStdStream) return output ? "standard output" : "standard input";
  return path;
}

int finishStandardOutput(std::string_view program, int code, int knownErrno) {
  // A stream that failed earlier is flushed once more for the reason (errno of the retried write).
  const bool failedBefore = !std::cout || std::ferror(stdout) != 0;
  std::cout.clear();
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno != 0 ? errno : knownErrno;
  if (failedBefore || !std::cout || !flushed || std::ferror(stdout) != 0) {
    std::cerr << program << ": cannot write to standard output: " << (error != 0 ? std::strerror(error) : "write error")
              << "\n";
    if (code == 0) code = 1;
  }
  return code;
}

}  // namespace tactus
