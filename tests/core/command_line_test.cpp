// The tools' command-line parser: GNU long options (with =, prefixes, suggestions), short options
// (bundled, attached values), STM's multi-letter flags, `--`, `-` as an operand, and its errors.
#include <catch2/catch.hpp>

#include "tactus/core/command_line.hpp"

using namespace tactus;

namespace {

const std::vector<OptionSpec> kSpecs = {
    {"output", 'o', "FILE", "where", {}},
    {"time", 't', "SECONDS", "how long", {}},
    {"verbose", 'v', "", "more", {}},
    {"quiet", 'q', "", "less", {}},
    {"fusion-threshold", 0, "DURATION", "fuse", {"wt"}},
    {"no-fusion", 0, "", "do not fuse", {"nrf"}},
    {"html", 0, "FILE", "page", {}},
    {"html-inline", 0, "", "inline", {}},
};

CommandLine parsed(const std::vector<std::string>& args) {
  auto line = parseCommandLine(kSpecs, args);
  INFO((line ? std::string() : line.error().message));
  REQUIRE(line.has_value());
  return *line;
}

std::string error(const std::vector<std::string>& args) {
  auto line = parseCommandLine(kSpecs, args);
  REQUIRE_FALSE(line.has_value());
  CHECK(line.error().code == ErrorCode::kBadParameter);
  return line.error().message;
}

}  // namespace

TEST_CASE("long options take --name=value and --name value, and unique prefixes", "[command-line]") {
  CommandLine a = parsed({"--output=x.tsched", "--time", "5", "--verb", "in.yaml"});
  REQUIRE(a.find("output") != nullptr);
  CHECK(a.find("output")->value == "x.tsched");
  CHECK(a.find("time")->value == "5");
  CHECK(a.has("verbose"));
  CHECK_FALSE(a.has("quiet"));
  CHECK(a.operands == std::vector<std::string>{"in.yaml"});
  // An exact name wins over a longer one it prefixes.
  CHECK(parsed({"--html", "p.html"}).find("html")->value == "p.html");
  CHECK(parsed({"--output="}).find("output")->value.empty());
}

TEST_CASE("short options bundle, take attached or separate values; - is an operand; -- ends options",
          "[command-line]") {
  CommandLine a = parsed({"-vq", "-t5", "-o", "-", "-", "--", "-v", "--time"});
  CHECK(a.has("verbose"));
  CHECK(a.has("quiet"));
  CHECK(a.find("time")->value == "5");
  CHECK(a.find("output")->value == "-");
  CHECK(a.operands == std::vector<std::string>{"-", "-v", "--time"});
  CHECK(parsed({"-vo", "f"}).find("output")->value == "f");
  CHECK(parsed({"-t", "-1"}).find("time")->value == "-1");  // a value may start with '-'
}

TEST_CASE("STM's multi-letter flags -wt and -nrf are kept", "[command-line]") {
  CommandLine a = parsed({"-wt", "500us", "-nrf"});
  CHECK(a.find("fusion-threshold")->value == "500us");
  CHECK(a.find("fusion-threshold")->spelled == "-wt");
  CHECK(a.has("no-fusion"));
  CHECK(parsed({"--fusion-threshold=1ms"}).find("fusion-threshold")->spelled == "--fusion-threshold");
}

TEST_CASE("bad command lines are errors naming the option as written", "[command-line]") {
  CHECK(error({"--outptu", "x"}) == "unknown option '--outptu' (did you mean '--output'?)");
  CHECK(error({"--frobnicate"}) == "unknown option '--frobnicate'");
  CHECK(error({"--ht", "x"}) == "option '--ht' is ambiguous: '--html', '--html-inline'");
  CHECK(error({"-o"}) == "option '-o' needs a value (FILE)");
  CHECK(error({"--time"}) == "option '--time' needs a value (SECONDS)");
  CHECK(error({"--verbose=yes"}) == "option '--verbose' takes no value");
  CHECK(error({"-o", "a", "--output=b"}) == "option '--output' given twice");
  CHECK(error({"-x"}) == "unknown option '-x'");
  CHECK(error({"-vx"}) == "unknown option '-x' in '-vx'");
  CHECK(error({"-output", "x"}) == "option '-output' has one dash: did you mean '--output'?");
  CHECK(error({"-verbose"}) == "unknown option '-e' in '-verbose' (did you mean '--verbose'?)");
  CHECK(error({"-wt"}) == "option '-wt' needs a value (DURATION)");
  // Flags may repeat; values may not.
  CHECK(parsed({"-v", "-v"}).options.size() == 2);
}

TEST_CASE("a repeatable value option keeps every value in order", "[command-line]") {
  const std::vector<OptionSpec> specs = {{"schedule", 's', "FILE", "a schedule", {}, true},
                                         {"log", 'l', "FILE", "", {}}};
  auto line = parseCommandLine(specs, {"-s", "a", "--schedule=b", "-sc"});
  REQUIRE(line.has_value());
  REQUIRE(line->options.size() == 3);
  CHECK(line->options[0].value == "a");
  CHECK(line->options[1].value == "b");
  CHECK(line->options[1].spelled == "--schedule");
  CHECK(line->options[2].value == "c");
  auto twice = parseCommandLine(specs, {"-l", "a", "-l", "b"});
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().message == "option '-l' given twice");
}

TEST_CASE("the help block lists every option with its spellings", "[command-line]") {
  const std::string help = optionsHelp(kSpecs);
  CHECK(help.find("  -o, --output FILE") != std::string::npos);
  CHECK(help.find("  -wt, --fusion-threshold DURATION") != std::string::npos);
  CHECK(help.find("  -nrf, --no-fusion") != std::string::npos);
  CHECK(help.find("  --html FILE") != std::string::npos);
}
