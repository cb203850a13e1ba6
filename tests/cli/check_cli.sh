#!/usr/bin/env bash
# The command lines of tactus-compile, tactus-report and tactus-master as a user types them: long names,
# --opt=value, STM's -wt/-nrf, `-` for standard input and output, the hints for common mistakes
# (an option with one dash, a misspelt long name, swapped report arguments), man pages and bash
# completion generated from --help.
# usage: check_cli.sh TACTUS_COMPILE TACTUS_REPORT MAKE_LOG SOURCE_ROOT [MAN_DIR COMPLETION_FILE [GEN_GRAPH [TACTUS_MASTER [TACTUS_MANAGER]]]]
set -euo pipefail
compile=$1 report=$2 make_log=$3 src=$4 mandir=${5:-} completion=${6:-} gen_graph=${7:-} master=${8:-} manager=${9:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_cli: $*" >&2; exit 1; }
graph=$src/schedules/two_client_multi_rate.yaml

# tactus-compile: standard input to standard output; the report goes to standard error.
"$compile" -i - -o - <"$graph" >"$work/stdout.tsched" 2>"$work/stderr.txt" || { cat "$work/stderr.txt"; fail "-i - -o - failed"; }
head -c 16 "$work/stdout.tsched" | grep -q "^tactus-schedule " || fail "-o - did not write the schedule to standard output"
grep -q "^wrote standard output (schedule" "$work/stderr.txt" || fail "-o - did not put the report on standard error"
grep -q "stdin" "$work/stdout.tsched" && fail "the schedule names stdin"
# The same schedule as from the file, through long names and --opt=value.
"$compile" --input="$graph" --output="$work/file.tsched" --time=0 --quiet >/dev/null
cmp -s "$work/stdout.tsched" "$work/file.tsched" || fail "-i - -o - and --input/--output differ"
"$compile" -i "$graph" -o "$work/wt.tsched" -wt 1ms -q >/dev/null || fail "-wt 1ms failed"
"$compile" -i "$graph" -o "$work/nrf.tsched" -nrf -q >/dev/null || fail "-nrf failed"
# A syntax error read from standard input is named `stdin:LINE`.
printf 'Version: 3.0.0\nG:\n  Identifier: [\n' | "$compile" -i - -o "$work/bad.tsched" 2>"$work/bad.txt" && fail "a bad graph compiled"
grep -q "^tactus-compile: stdin:[0-9]" "$work/bad.txt" || { cat "$work/bad.txt"; fail "a stdin error is not named stdin:LINE"; }
expect_usage() {  # expect_usage TEXT COMMAND...: exit 2 and TEXT on standard error
  local text=$1; shift
  local code=0
  "$@" >/dev/null 2>"$work/usage.txt" || code=$?
  [ "$code" = 2 ] || fail "'$*' exited $code, not 2"
  grep -qF -- "$text" "$work/usage.txt" || { cat "$work/usage.txt"; fail "'$*' did not say: $text"; }
}
expect_usage "option '-output' has one dash: did you mean '--output'?" "$compile" -i "$graph" -output x.tsched
expect_usage "unknown option '--outptu' (did you mean '--output'?)" "$compile" -i "$graph" --outptu x
expect_usage "-i - (standard input) needs -o FILE or -o -" "$compile" -i -
expect_usage "(the graph is given with -i: -i $graph)" "$compile" "$graph"
# --html - writes the page to standard output (the report to standard error), never a file '-'.
(cd "$work" && "$compile" -i "$graph" -o "$work/html.tsched" --html - -q >"$work/page.html" 2>"$work/html_err.txt") \
  || { cat "$work/html_err.txt"; fail "--html - failed"; }
[ -e "$work/-" ] && fail "--html - wrote a file named '-'"
head -c 15 "$work/page.html" | grep -q "^<!DOCTYPE html>" || fail "--html - did not write the page to standard output"
grep -q "^wrote $work/html.tsched" "$work/html_err.txt" || fail "--html - did not put the report on standard error"
# --wcet - reads the WCET file from standard input: the same schedule as from the file, not the graph's.
printf 'Sensing.Detect: 5ms\n' >"$work/wcet.yaml"
"$compile" -i "$graph" -o "$work/wcet_file.tsched" --wcet "$work/wcet.yaml" -q >/dev/null || fail "--wcet FILE failed"
(cd "$work" && "$compile" -i "$graph" -o "$work/wcet_stdin.tsched" --wcet - -q <"$work/wcet.yaml" >/dev/null 2>"$work/wcet_err.txt") \
  || { cat "$work/wcet_err.txt"; fail "--wcet - failed"; }
cmp -s "$work/wcet_file.tsched" "$work/wcet_stdin.tsched" || fail "--wcet - and --wcet FILE differ"
cmp -s "$work/wcet_stdin.tsched" "$work/file.tsched" && fail "--wcet - was not applied"
printf 'Sensing.Nothing: 5ms\n' | "$compile" -i "$graph" -o "$work/bad_wcet.tsched" --wcet - -q 2>"$work/bad_wcet.txt" \
  && fail "a WCET file naming an unknown runnable was applied"
grep -q "^tactus-compile: stdin:1" "$work/bad_wcet.txt" || { cat "$work/bad_wcet.txt"; fail "a --wcet - error is not named stdin:LINE"; }
expect_usage "-i - and --wcet - both want standard input" "$compile" -i - -o - --wcet -
expect_usage "only one output can go to standard output (-)" "$compile" -i "$graph" -o - --html -

# Warnings: printed, exit 0; with --werror (or GCC's spelling -Werror) exit 1 and no schedule file.
short=$src/tests/compiler/fixtures/epoch_frames_short.yaml
"$compile" -i "$short" -o "$work/short.tsched" -q >/dev/null 2>"$work/short.txt" || { cat "$work/short.txt"; fail "a graph with a warning failed"; }
grep -qF "warning: $short:11: epoch 'Perception.Camera' covers 33.33ms" "$work/short.txt" || { cat "$work/short.txt"; fail "no Frames warning"; }
grep -qF 'write `Frames: 3`' "$work/short.txt" || fail "the Frames warning names no Frames value"
for flag in --werror -Werror; do
  rm -f "$work/short.tsched"
  code=0
  "$compile" -i "$short" -o "$work/short.tsched" -q "$flag" >/dev/null 2>"$work/werror.txt" || code=$?
  [ "$code" = 1 ] || { cat "$work/werror.txt"; fail "$flag with a warning exited $code, not 1"; }
  [ -e "$work/short.tsched" ] && fail "$flag with a warning wrote the schedule file"
  grep -qF "1 warning, an error under --werror" "$work/werror.txt" || { cat "$work/werror.txt"; fail "$flag did not say why it failed"; }
done
# A schedule that does not fit says why and still writes the report and the HTML view.
over=$src/tests/compiler/fixtures/overloaded_resource.yaml
code=0
"$compile" -i "$over" -o "$work/over.tsched" -k "$work/over.json" --html "$work/over.html" -q >/dev/null 2>"$work/over.txt" || code=$?
[ "$code" = 1 ] || { cat "$work/over.txt"; fail "a schedule that does not fit exited $code, not 1"; }
grep -qF "overloaded resource: 'CPU0' has 120ms of work in the 100ms period (120%)" "$work/over.txt" || { cat "$work/over.txt"; fail "no overloaded resource named"; }
grep -qF "critical path: 110ms" "$work/over.txt" || { cat "$work/over.txt"; fail "no critical path named"; }
[ -s "$work/over.json" ] && [ -s "$work/over.html" ] || fail "a schedule that does not fit wrote no -k or --html"
[ -e "$work/over.tsched" ] && fail "a schedule that does not fit wrote a schedule file"

# A search prints its progress to standard error each second, unless -q.
if [ -n "$gen_graph" ]; then
  "$gen_graph" 200 -s 3 -o "$work/g200.yaml"
  "$compile" -i "$work/g200.yaml" -o "$work/g200.tsched" -t 1.5 >/dev/null 2>"$work/progress.txt"
  grep -Eq "^tactus-compile: searching 'Main' 1\.[0-9] s: best [0-9.]+[mun]?s, lower bound [0-9.]+[mun]?s, gap [0-9.]+%, [0-9]+ steps$" \
    "$work/progress.txt" || { cat "$work/progress.txt"; fail "no progress line during a 1.5 s search"; }
  "$compile" -i "$work/g200.yaml" -o "$work/g200.tsched" -t 1.5 -q >/dev/null 2>"$work/quiet.txt"
  grep -q "searching" "$work/quiet.txt" && fail "-q still printed progress"
fi

# tactus-report: a log made by the simulator, then the operands every way.
"$make_log" "$work/file.tsched" "$work/run.tlog" 20 >/dev/null
"$report" "$work/run.tlog" "$work/file.tsched" >"$work/stats.txt"
"$report" - "$work/file.tsched" <"$work/run.tlog" >"$work/stats_stdin.txt"
sed 1d "$work/stats.txt" >"$work/a"; sed 1d "$work/stats_stdin.txt" >"$work/b"
cmp -s "$work/a" "$work/b" || fail "the statistics of a log from standard input differ"
# Whole outputs before grep -q (it leaves at its first match: a longer output's next write would
# fail on the closed pipe, which pipefail reports).
"$report" "$work/run.tlog" --schedule=- <"$work/file.tsched" >"$work/schedule_stdin.txt" || fail "--schedule=- failed"
grep -q "^hyperepochs" "$work/schedule_stdin.txt" || fail "--schedule=- did not report the hyperepochs"
"$report" "$work/run.tlog" "$work/file.tsched" --trace-out=- >"$work/trace.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['traceEvents']" "$work/trace.json" \
  || fail "--trace-out=- did not write the trace alone to standard output"
code=0
"$report" "$work/file.tsched" "$work/run.tlog" >/dev/null 2>"$work/swap.txt" || code=$?
[ "$code" = 1 ] || fail "swapped arguments exited $code"
grep -qF "the arguments look swapped: $work/run.tlog is an event log and $work/file.tsched a schedule; the order is tactus-report LOG SCHEDULE" "$work/swap.txt" \
  || { cat "$work/swap.txt"; fail "no hint for swapped arguments"; }
expect_usage "only one output can go to standard output (-)" "$report" "$work/run.tlog" "$work/file.tsched" --html - --trace-out -
# The what-if loop: measure WCETs, recompile with them, compare with the schedule deployed (exit 0,
# the measured WCETs named as graph changes, the same in -k), then the old schedule is replaced.
"$report" "$work/run.tlog" "$work/file.tsched" --wcet-out "$work/measured.yaml" >/dev/null
"$compile" -i "$graph" -o "$work/loop.tsched" --wcet "$work/measured.yaml" -k "$work/loop.json" --compare "$work/file.tsched" \
  >"$work/loop.txt" 2>&1 || { cat "$work/loop.txt"; fail "--compare after --wcet failed"; }
grep -Eq "^compared with $work/file.tsched: [0-9]+ changes?$" "$work/loop.txt" || { cat "$work/loop.txt"; fail "--compare said no changes"; }
grep -Eq "^    runnable '[A-Za-z]+\.[A-Za-z]+' WCET: [0-9.]+[mun]?s -> [0-9.]+[mun]?s$" "$work/loop.txt" \
  || { cat "$work/loop.txt"; fail "--compare did not list the measured WCETs"; }
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['compare']; assert c['changes'] > 0; assert any(x['change'] == 'WCET' for x in c['graph_changes'])" \
  "$work/loop.json" || fail "-k lacks the comparison's WCET changes"
mv "$work/loop.tsched" "$work/deployed.tsched"
"$compile" -i "$graph" -o "$work/again.tsched" --wcet "$work/measured.yaml" --compare "$work/deployed.tsched" >"$work/again.txt" 2>&1 \
  || { cat "$work/again.txt"; fail "the second --compare failed"; }
grep -q "^compared with $work/deployed.tsched: nothing changed$" "$work/again.txt" || { cat "$work/again.txt"; fail "recompiling the same changed something"; }
expect_usage "unknown option '--jsn' (did you mean '--json'?)" "$report" "$work/run.tlog" "$work/file.tsched" --jsn

# tactus-master: long names and --opt=value reach the run (no client comes: exit 1 naming the
# wait of --timeout-us), errors name the option as written, a schedule without -s gets a hint.
if [ -n "$master" ]; then
  code=0
  "$master" --schedule="$work/file.tsched" --discriminator="cli_$$" --timeout-us=100000 --epochs=1 \
    >/dev/null 2>"$work/master.txt" || code=$?
  [ "$code" = 1 ] || { cat "$work/master.txt"; fail "a master without clients exited $code, not 1"; }
  grep -qF "did not come within 100 ms" "$work/master.txt" || { cat "$work/master.txt"; fail "--timeout-us=100000 was not used"; }
  expect_usage "option '--epochs' expects an integer, got 'ten'" "$master" -s "$work/file.tsched" --epochs=ten
  expect_usage "unknown option '--timeout-ms' (did you mean '--timeout-us'?)" "$master" -s "$work/file.tsched" --timeout-ms 5
  expect_usage "unexpected argument 'x.tsched' (did you mean '-s x.tsched'?)" "$master" x.tsched
  "$master" -h >"$work/master_help.txt" || fail "tactus-master -h failed"
  grep -qF -- "-t, --timeout-us US" "$work/master_help.txt" || fail "tactus-master -h does not list --timeout-us"
fi

# tactus-manager: long names and --opt=value; a master that is not there is named with the wait.
if [ -n "$manager" ]; then
  code=0
  "$manager" --discriminator="cli_$$" --timeout-ms=100 status >/dev/null 2>"$work/manager.txt" || code=$?
  [ "$code" = 1 ] || { cat "$work/manager.txt"; fail "a manager without a master exited $code, not 1"; }
  grep -qF "for instance 'cli_$$' within 100 ms" "$work/manager.txt" || { cat "$work/manager.txt"; fail "--discriminator/--timeout-ms were not used"; }
  expect_usage "--timeout-ms expects milliseconds >= 0 or -1 (forever), got 'x'" "$manager" --timeout-ms=x status
  expect_usage "unknown option '--instance' (the instance is -D, --discriminator)" "$manager" --instance x status
fi

# Man pages and completion, generated from --help at build time.
if [ -n "$mandir" ]; then
  for tool in tactus-compile tactus-report ${master:+tactus-master} ${manager:+tactus-manager}; do
    page=$mandir/$tool.1
    [ -s "$page" ] || fail "no man page $page"
    grep -qi "^\.TH \"$tool\"" "$page" || fail "$page has no .TH"
    grep -qF -- '\-\-help' "$page" || fail "$page does not list the options"
    if command -v man >/dev/null 2>&1; then
      MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q -- "--output\|--trace-out\|--timeout-us\|--timeout-ms" || fail "man -l $page does not render the options"
    fi
  done
  grep -qF -- '\-wt, \-\-fusion\-threshold' "$mandir/tactus-compile.1" || fail "the compile man page lacks --fusion-threshold"
  grep -qF -- '\-Werror, \-\-werror' "$mandir/tactus-compile.1" || fail "the compile man page lacks --werror"
  # tactus-check's options take values named KIND[:CALL] and on|off.
  grep -qF -- '\-\-once' "$mandir/tactus-top.1" || fail "the tactus-top man page lacks --once"
  grep -qF -- '\fB\-\-page\-faults on|off\fR' "$mandir/tactus-check.1" || fail "the tactus-check man page lacks --page-faults"
  grep -qF -- '\fB\-\-allow KIND[:CALL]\fR' "$mandir/tactus-check.1" || fail "the tactus-check man page lacks --allow"
fi
if [ -n "$completion" ]; then
  [ -s "$completion" ] || fail "no completion file"
  words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-compile --fu); COMP_CWORD=1; _tactus_compile; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
  [ "$words" = "--fusion-threshold" ] || fail "completing 'tactus-compile --fu' gave '$words'"
  words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-compile --we); COMP_CWORD=1; _tactus_compile; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
  [ "$words" = "--werror" ] || fail "completing 'tactus-compile --we' gave '$words'"
  words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-top --on); COMP_CWORD=1; _tactus_top; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
  [ "$words" = "--once" ] || fail "completing 'tactus-top --on' gave '$words'"
  words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-report --tr); COMP_CWORD=1; _tactus_report; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
  [ "$words" = "--trace-out" ] || fail "completing 'tactus-report --tr' gave '$words'"
  if [ -n "$master" ]; then
    words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-master --disc); COMP_CWORD=1; _tactus_master; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
    [ "$words" = "--discriminator" ] || fail "completing 'tactus-master --disc' gave '$words'"
  fi
  words=$(bash -c 'source "$1"; COMP_WORDS=(tactus-check --pag); COMP_CWORD=1; _tactus_check; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion")
  [ "$words" = "--page-faults" ] || fail "completing 'tactus-check --pag' gave '$words'"
fi
echo "check_cli: the command lines of the tools work"
