#!/usr/bin/env bash
# tactus-launch with real processes: a two-client run (a graph compiled first, prefixed lines from
# every process, the summary, exit 0); a client that exits 3 and one killed by SIGKILL (their
# status, named); a bad launch file (located error, exit 2); SIGTERM to tactus-launch (everything
# ends, no segment left); --units (systemd-analyze verify where it exists). Modes: a managed run
# (two graphs, `start:`, frames run, `tactus-manager exit` ends it with 0, the log and both compiled
# schedules kept side by side and read by tactus-report); a client with `on_exit: ignore` killed
# while a ClientDies policy rolls over (the run goes on); bad keys (located errors); --units under
# a manager and its warnings about what ends a deployed run.
# usage: launch_test.sh TACTUS_LAUNCH SAMPLE_TWO_CLIENT SOURCE_ROOT TACTUS_MANAGER TACTUS_REPORT
set -uo pipefail
launch=$1 sample=$2 src=$3 manager=$4 report=$5
work=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
inst="lt$$_$RANDOM"

# $1: file, $2: instance, $3: master options, $4: Planning's command (a YAML list)
write_file() {
  cat >"$1" <<YAML
graph: $src/schedules/two_client_multi_rate.yaml
instance: $2
master: $3
order: master-first
clients:
  - name: Sensing
    command: [$sample, Sensing]
    env: {LAUNCH_TEST: "1"}
  - name: Planning
    command: $4
YAML
}

echo "== a good run"
write_file "$work/good.yaml" "${inst}a" '[-e, "40"]' "[$sample, Planning]"
timeout 60 "$launch" --no-color "$work/good.yaml" >"$work/good.out" 2>"$work/good.err"
rc=$?
[ "$rc" = 0 ] || fail "good run: exit $rc"
for p in master Sensing Planning; do
  grep -Eq "^$p +\| " "$work/good.out" || fail "good run: no line prefixed '$p'"
done
grep -q "summary, instance ${inst}a" "$work/good.out" || fail "good run: no summary"
grep -Eq "^  Planning +exit 0 " "$work/good.out" || fail "good run: Planning not 'exit 0' in the summary"
grep -q "all 3 processes exited 0" "$work/good.out" || fail "good run: no 'all 3 processes exited 0'"
grep -q $'\033' "$work/good.out" && fail "good run: colours with --no-color"

echo "== a client that exits 3"
write_file "$work/exit3.yaml" "${inst}b" '[-e, "40"]' '[sh, -c, "echo going; exit 3"]'
timeout 60 "$launch" --no-color --grace 1 "$work/exit3.yaml" >"$work/exit3.out" 2>"$work/exit3.err"
rc=$?
[ "$rc" = 3 ] || fail "exit-3 client: exit $rc, not 3"
grep -Eq "^Planning +\| going$" "$work/exit3.out" || fail "exit-3 client: its line is missing"
grep -q "Planning failed (exit 3): exit status 3" "$work/exit3.out" || fail "exit-3 client: not named"

echo "== a client killed by SIGKILL"
write_file "$work/kill.yaml" "${inst}c" '[-e, "40"]' '[sh, -c, "kill -KILL $$"]'
timeout 60 "$launch" --no-color --grace 1 "$work/kill.yaml" >"$work/kill.out" 2>"$work/kill.err"
rc=$?
[ "$rc" = 137 ] || fail "killed client: exit $rc, not 137"
grep -q "Planning failed (signal SIGKILL): exit status 137" "$work/kill.out" || fail "killed client: not named"

echo "== a bad launch file"
printf 'schedule: x.tsched\nclients:\n  - name: A\n    comand: [true]\n' >"$work/bad.yaml"
"$launch" "$work/bad.yaml" >"$work/bad.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "bad file: exit $rc, not 2"
grep -q "bad.yaml:4: unknown key 'comand' in a client (known: name, command, env, on_exit)" "$work/bad.out" \
  || fail "bad file: not located: $(cat "$work/bad.out")"
printf 'schedule: x.tsched\norder: sideways\nclients: []\n' >"$work/bad2.yaml"
"$launch" "$work/bad2.yaml" >"$work/bad2.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "bad2.yaml:2: unknown order 'sideways'" "$work/bad2.out" || fail "bad order: $rc $(cat "$work/bad2.out")"

echo "== SIGTERM to tactus-launch"
write_file "$work/term.yaml" "${inst}d" '[]' "[$sample, Planning]"
"$launch" --no-color "$work/term.yaml" >"$work/term.out" 2>"$work/term.err" &
pid=$!
for _ in $(seq 100); do
  [ -e "/dev/shm/tactus_${inst}d" ] && break
  sleep 0.1
done
[ -e "/dev/shm/tactus_${inst}d" ] || fail "SIGTERM: the master's segment never appeared"
sleep 1.5  # the clients attach and the run goes on
kill -TERM "$pid"
ended=no
for _ in $(seq 200); do
  kill -0 "$pid" 2>/dev/null || { ended=yes; break; }
  sleep 0.1
done
[ "$ended" = yes ] || { fail "SIGTERM: tactus-launch still runs after 20 s"; kill -KILL "$pid"; }
wait "$pid"
rc=$?
[ "$rc" = 0 ] || fail "SIGTERM: exit $rc (the processes: $(grep -A4 summary "$work/term.out"))"
grep -q "got SIGTERM" "$work/term.err" || fail "SIGTERM: not reported"
grep -q "summary, instance ${inst}d" "$work/term.out" || fail "SIGTERM: no summary"
left=$(ls /dev/shm | grep "^tactus_${inst}d" || true)
[ -z "$left" ] || fail "SIGTERM: left in /dev/shm: $left"
pgrep -f "tactus-master.*${inst}d" >/dev/null && fail "SIGTERM: a master of ${inst}d still runs"

echo "== --units"
"$launch" --units "$work/units" "$work/good.yaml" >"$work/units.out" 2>&1 || fail "--units: exit $?"
for u in "tactus@${inst}a.target" "tactus-master@${inst}a.service" "tactus-client-${inst}a@Sensing.service" \
  "tactus-client-${inst}a@Planning.service" "${inst}a.tsched"; do
  [ -f "$work/units/$u" ] || fail "--units: no $u"
done
grep -q "^PartOf=tactus-master@${inst}a.service$" "$work/units/tactus-client-${inst}a@Sensing.service" \
  || fail "--units: the client is not PartOf= its master"
grep -q "^Environment=LAUNCH_TEST=1$" "$work/units/tactus-client-${inst}a@Sensing.service" || fail "--units: env lost"
if command -v systemd-analyze >/dev/null; then
  (cd "$work/units" && systemd-analyze verify --man=no ./*.target ./*.service) >"$work/verify.out" 2>&1 \
    || fail "--units: systemd-analyze verify failed: $(cat "$work/verify.out")"
  grep -Ei "unknown (key|section)|invalid|failed to|is not executable|bad unit file|lvalue" "$work/verify.out" \
    | grep -v "PR_SET_MM\|\$container" && fail "--units: systemd-analyze reported a problem"
else
  echo "systemd-analyze not found: verify skipped"
fi

# $1: instance; waits (at most 30 s) until `tactus-manager status` says schedule $2 ran $3 iterations.
await_iterations() {
  local out n
  for _ in $(seq 300); do
    out=$("$manager" -D "$1" -t 1000 status 2>/dev/null)
    n=$(sed -n "s/^running schedule $2, \([0-9]*\) iterations.*/\1/p" <<<"$out")
    [ -n "$n" ] && [ "$n" -ge "$3" ] && return 0
    sleep 0.1
  done
  echo "last status: $out" >&2
  return 1
}

# $1: file; waits (at most 30 s) for the starter's line in tactus-launch's output.
await_started() {
  for _ in $(seq 300); do
    grep -Eq "^manager +\| tactus-manager: started schedule $2$" "$1" && return 0
    sleep 0.1
  done
  return 1
}

# $1: instance, $2: pid of tactus-launch; ends the run through the manager, returns launch's status.
end_run() {
  "$manager" -D "$1" -t 5000 exit >/dev/null 2>&1 || echo "tactus-manager exit failed" >&2
  for _ in $(seq 200); do
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$2" 2>/dev/null && kill -KILL "$2"
  wait "$2"
}

echo "== a managed run: two graphs, start: 41, the log and both schedules kept together"
cat >"$work/managed.yaml" <<YAML
graphs: [$src/tests/launch/mode_both.yaml, $src/tests/launch/mode_sensing.yaml]
instance: ${inst}m
manager: modes
master: [-l, logs/managed.tlog]
start: 41
clients:
  - name: Sensing
    command: [$sample, Sensing]
  - name: Planning
    command: [$sample, Planning]
YAML
"$launch" --no-color "$work/managed.yaml" >"$work/managed.out" 2>"$work/managed.err" &
pid=$!
await_started "$work/managed.out" 41 || fail "managed: schedule 41 never started"
await_iterations "${inst}m" 41 10 || fail "managed: schedule 41 ran no 10 iterations"
end_run "${inst}m" "$pid"
rc=$?
[ "$rc" = 0 ] || fail "managed: exit $rc"
grep -q "all 4 processes exited 0" "$work/managed.out" || fail "managed: not 'all 4 processes exited 0'"
for f in managed.tlog mode_both.tsched mode_sensing.tsched; do
  [ -f "$work/logs/$f" ] || fail "managed: no logs/$f"
done
(cd "$work/logs" && "$report" managed.tlog mode_both.tsched mode_sensing.tsched) >"$work/report.out" 2>&1 \
  || fail "managed: tactus-report on the kept files failed"
grep -q "ModeBoth" "$work/report.out" || fail "managed: the report names no schedule 'ModeBoth'"

echo "== on_exit: ignore: Planning killed, a ClientDies policy rolls over to 42, the run goes on"
cp "$src/tests/launch/policy.yaml" "$work/policy.yaml"
cat >"$work/ignore.yaml" <<YAML
graphs: [$src/tests/launch/mode_both.yaml, $src/tests/launch/mode_sensing.yaml]
instance: ${inst}i
policy: policy.yaml
master: [-l, ignore.tlog]
start: 41
clients:
  - name: Sensing
    command: [$sample, Sensing]
  - name: Planning
    command: [sh, -c, 'echo \$\$ > planning.pid; exec "\$0" Planning', $sample]
    on_exit: ignore
YAML
"$launch" --no-color --grace 1 "$work/ignore.yaml" >"$work/ignore.out" 2>"$work/ignore.err" &
pid=$!
await_started "$work/ignore.out" 41 || fail "on_exit: schedule 41 never started"
await_iterations "${inst}i" 41 5 || fail "on_exit: schedule 41 ran no 5 iterations"
kill -KILL "$(cat "$work/planning.pid")" || fail "on_exit: no Planning to kill"
await_iterations "${inst}i" 42 10 || fail "on_exit: no 10 iterations of the fallback 42 after Planning died"
kill -0 "$pid" 2>/dev/null || fail "on_exit: tactus-launch ended when Planning died"
end_run "${inst}i" "$pid"
rc=$?
[ "$rc" = 0 ] || fail "on_exit: exit $rc, not 0"
grep -q "Planning ended (signal SIGKILL): on_exit: ignore, the others go on" "$work/ignore.err" \
  || fail "on_exit: the ignored end is not said"
grep -q "policy rule 'lost-planning'" "$work/ignore.out" "$work/ignore.err" || fail "on_exit: no policy rollover said"
grep -Eq "^  Planning +signal SIGKILL .*\(on_exit: ignore\)" "$work/ignore.out" || fail "on_exit: summary line"
grep -Eq "^  Sensing +exit 0 " "$work/ignore.out" || fail "on_exit: Sensing did not exit 0"
for f in ignore.tlog mode_both.tsched mode_sensing.tsched; do [ -f "$work/$f" ] || fail "on_exit: no $f"; done

echo "== bad keys, located"
# $1: name, $2: the file's text, $3: the expected message (after FILE:)
bad_case() {
  printf '%s' "$2" >"$work/$1.yaml"
  "$launch" "$work/$1.yaml" >"$work/$1.out" 2>&1
  local rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, not 2"
  grep -qF "$1.yaml:$3" "$work/$1.out" || fail "$1: not '$3': $(cat "$work/$1.out")"
}
clients=$'clients:\n  - name: A\n    command: [true]\n'
bad_case badroot $'schedule: x.tsched\npolcy: p.yaml\n'"$clients" \
  "2: unknown key 'polcy' in the launch file (known: schedule, schedules, graph, graphs, instance, master, manager, policy, start, order, clients)"
bad_case badonexit $'schedule: x.tsched\n'"$clients"$'    on_exit: later\n' "5: unknown on_exit 'later' (known: stop, ignore)"
bad_case badstart $'schedule: x.tsched\nstart: 4\n'"$clients" "2: start needs a schedule manager"
bad_case badpolicy $'graph: g.yaml\npolicy: p.yaml\n'"$clients" "2: policy needs a schedule manager"
bad_case badboth $'schedule: x.tsched\nschedules: [y.tsched]\n'"$clients" "2: give either schedule or schedules, not both"
bad_case badid $'schedules: [a.tsched, b.tsched]\nstart: 70000\n'"$clients" "2: start '70000' must be a schedule identifier"
bad_case badepochs $'schedules: [a.tsched, b.tsched]\nmaster: [-e, "5"]\n'"$clients" \
  "2: -e cannot be combined with a schedule manager"
bad_case badlist $'schedules: a.tsched\n'"$clients" "1: schedules must be a list of strings"

echo "== --help (the man page's source) documents every key of the launch file"
"$launch" --help >"$work/help.out" 2>&1 || fail "--help: exit $?"
for key in schedule schedules graph graphs instance master manager policy start order clients name command env \
  on_exit; do
  grep -Eq "^  $key: " "$work/help.out" || fail "--help: no line for the key '$key:'"
done

echo "== --units warnings and a managed application's units"
write_file "$work/deploy.yaml" "${inst}u" '[-e, "40", -l, run.tlog]' "[$sample, Planning]"
"$launch" --units "$work/units_deploy" "$work/deploy.yaml" >"$work/deploy.out" 2>"$work/deploy.err" \
  || fail "--units deploy: exit $?"
grep -q "warning: the master's -e ends the deployed run" "$work/deploy.err" || fail "--units: no -e warning"
grep -q "warning: the master's -l run.tlog is a relative path" "$work/deploy.err" || fail "--units: no -l warning"
grep -q "they must stay where they are" "$work/deploy.err" || fail "--units: where the schedules stay is not said"
grep -qF "$work/units_deploy/${inst}u.tsched" "$work/deploy.err" || fail "--units: the schedule's path is not named"
"$launch" --units "$work/units_managed" "$work/managed.yaml" >"$work/umanaged.out" 2>"$work/umanaged.err" \
  || fail "--units managed: exit $?"
grep -q "warning: the master's -e" "$work/umanaged.err" && fail "--units managed: an -e warning without -e"
grep -q "warning: the master's -l logs/managed.tlog is a relative path" "$work/umanaged.err" \
  || fail "--units managed: no relative -l warning"
mu="$work/units_managed/tactus-master@${inst}m.service"
grep -qF -- "-s $work/units_managed/${inst}m-mode_both.tsched,$work/units_managed/${inst}m-mode_sensing.tsched -D ${inst}m -N modes" "$mu" \
  || fail "--units managed: the master's -s/-N: $(grep ExecStart "$mu")"
grep -q "^ExecStart=.*tactus-manager -D ${inst}m -N modes -t -1 start 41$" "$work/units_managed/tactus-manager@${inst}m.service" \
  || fail "--units managed: no manager unit starting 41"
grep -q "tactus-manager@${inst}m.service" "$work/units_managed/tactus@${inst}m.target" || fail "--units managed: target"
if command -v systemd-analyze >/dev/null; then
  (cd "$work/units_managed" && systemd-analyze verify --man=no ./*.target ./*.service) >"$work/verify2.out" 2>&1 \
    || fail "--units managed: systemd-analyze verify failed: $(cat "$work/verify2.out")"
fi

if [ "$failures" != 0 ]; then
  for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; tail -30 "$f"; done
  exit 1
fi
echo "launch: all cases passed"
