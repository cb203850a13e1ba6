#!/usr/bin/env bash
# Replay real runs bit-identically: replay_pipeline.yaml (three clients, three rates) run with the
# real master and clients (tactus-replay-client: the source writes fresh random bytes, the others
# a function of what they read), recorded, then replayed several times (at real time and at
# --replay-rate 0, whose releases wait for the copier: it loses nothing, --record-required), and a
# replay of a replay's recording (it holds the first run's ideal release times), each
# replay recorded too: every replay's recording compares equal to the
# original (tactus-report --compare-recordings exit 0), while a second recorded run (fresh random
# bytes) compares different. Refused before any frame, exit 2, named: a damaged recording, a
# recording of another schedule, an unknown --replay-sources runnable.
# usage: replay_run_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT REPLAY_CLIENT GRAPH [REPLAYS]
set -u
compile=$1 master=$2 report=$3 client=$4 graph=$5 replays=${6:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
export TACTUS_RECORD_POLL_US=200
run() {  # NAME MASTER-OPTIONS...
  local name=$1 instance=replay_$$_$1
  shift
  "$master" -C -s "$work/g.tsched" -D "$instance" "$@" > "$work/master_$name.txt" 2>&1 &
  local master_pid=$! pids=()
  for c in Sensor Filter Sink; do
    "$client" --name "$c" --instance "$instance" --busy-us 100 --timeout-ms 20000 \
      --channel Raw --channel Mid --channel Out > "$work/${c}_$name.txt" 2>&1 &
    pids+=($!)
  done
  local status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  wait "$master_pid" || status=$?
  return $status
}
compare() {  # A B: the exit code of --compare-recordings, its output in $work/compare.txt
  "$report" --compare-recordings "$work/$1" "$work/$2" > "$work/compare.txt" 2>&1
}
run rec -e 40 --record "$work/rec" --record-required || { cat "$work/master_rec.txt"; fail "the recorded run"; }
# A copier that gets no CPU during the run (its period 1 s): the release threads catch it up before
# each release, so not one of the 280 versions (Mid: 2 runs per iteration in 1 buffer) is lost.
TACTUS_RECORD_POLL_US=1000000 run starved -e 40 --record "$work/starved" --record-required ||
  { cat "$work/master_starved.txt"; fail "the run with a starved copier"; }
grep -q "recorded 280 channel versions" "$work/master_starved.txt" ||
  { cat "$work/master_starved.txt"; fail "a starved copier lost versions"; }
for k in $(seq 1 "$replays"); do
  run "replay$k" --replay "$work/rec" --record "$work/replay$k" || { cat "$work/master_replay$k.txt"; fail "replay $k"; }
  grep -q "replayed [0-9]* source versions of 4 source instances from $work/rec/soc0.trec (40 iterations" \
    "$work/master_replay$k.txt" || { cat "$work/master_replay$k.txt"; fail "replay $k did not say what it replayed"; }
  compare rec "replay$k" || { cat "$work/compare.txt"; fail "replay $k differs from the recording"; }
done
run fast --replay "$work/rec" --replay-rate 0 --record "$work/fast" --record-required || { cat "$work/master_fast.txt"; fail "--replay-rate 0"; }
compare rec fast || { cat "$work/compare.txt"; fail "the replay at --replay-rate 0 differs from the recording"; }
# A replay of a replay's recording: its release records hold the first run's ideal times (the
# logical clock's, which the downstream runnables write), so it replays bit-identically too.
run again --replay "$work/replay1" --record "$work/again" || { cat "$work/master_again.txt"; fail "the replay of a replay"; }
compare replay1 again || { cat "$work/compare.txt"; fail "the replay of a replay's recording differs from it"; }
# The replay's own recording says that it is one.
"$report" --recording "$work/replay1" > "$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "--recording of a replay"; }
# A run of its own (fresh random bytes at the source) differs: the comparison sees what the sources wrote.
run other -e 40 --record "$work/other" || { cat "$work/master_other.txt"; fail "the second recorded run"; }
compare rec other
[ $? = 1 ] || { cat "$work/compare.txt"; fail "two runs with fresh random sources compared equal"; }
# Refusals, before any client (none is started): exit 2, named.
refused() {  # WHAT PATTERN MASTER-OPTIONS...
  local what=$1 pattern=$2
  shift 2
  timeout 20 "$master" -C -D "replay_$$_refused" "$@" > "$work/refused.txt" 2>&1
  local code=$?
  [ $code = 2 ] || { cat "$work/refused.txt"; fail "$what: exit $code, not 2"; }
  grep -Eq -e "$pattern" "$work/refused.txt" || { cat "$work/refused.txt"; fail "$what was not named"; }
}
cp -r "$work/rec" "$work/damaged"
printf '\xff' | dd of="$work/damaged/soc0.trec" bs=1 seek=300 conv=notrunc 2> /dev/null
refused "a damaged recording" "$work/damaged/soc0.trec: offset [0-9]+: .*checksum" -s "$work/g.tsched" --replay "$work/damaged"
sed 's/Sink: {WCET: 2ms/Sink: {WCET: 3ms/' "$graph" > "$work/other.yaml"
"$compile" -q -i "$work/other.yaml" -o "$work/other.tsched" > /dev/null 2>&1 || fail "compile the other schedule"
refused "a recording of another schedule" "schedule 0 .*: content hash [0-9a-f]+ against [0-9a-f]+" \
  -s "$work/other.tsched" --replay "$work/rec"
refused "an unknown source" "--replay-sources: 'Sensor.Nope' names no runnable" \
  -s "$work/g.tsched" --replay "$work/rec" --replay-sources Sensor.Nope
refused "a missing recording" "--replay $work/none" -s "$work/g.tsched" --replay "$work/none"
echo "PASS"
