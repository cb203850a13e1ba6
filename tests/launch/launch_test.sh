#!/usr/bin/env bash
# tactus-launch with real processes: a two-client run (a graph compiled first, prefixed lines from
# every process, the summary, exit 0); a client that exits 3 and one killed by SIGKILL (their
# status, named); a bad launch file (located error, exit 2); SIGTERM to tactus-launch (everything
# ends, no segment left); --units (systemd-analyze verify where it exists).
# usage: launch_test.sh TACTUS_LAUNCH SAMPLE_TWO_CLIENT SOURCE_ROOT
set -uo pipefail
launch=$1 sample=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
grep -q "bad.yaml:4: unknown key 'comand' in a client (known: name, command, env)" "$work/bad.out" \
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

if [ "$failures" != 0 ]; then
  for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; tail -30 "$f"; done
  exit 1
fi
echo "launch: all cases passed"
