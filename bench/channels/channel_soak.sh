#!/usr/bin/env bash
# The channel soak: fusion_soak.yaml (five client processes, two channels, multi-rate readers, a
# ring of two) run by the real master and test clients for N iterations of 5 ms, each runnable
# spinning a random time well under its WCET, optionally beside stress-ng at 60% CPU load. Then
# checks, and prints:
#   - every reader run against the schedule file's mapping, from the run log (tactus-report --csv):
#     it started after the writer run it is mapped to ended, and the next writer run into the same
#     buffer started after it ended (check_channel_runs.py);
#   - every read libtactus answered (the readers' --channel-log): the writer run the schedule
#     names, no version only before the first;
#   - every payload a reader run read: its writer run's, whole, at the start and at the end of the
#     reader's run (not overwritten while read);
#   - the time of a Channel::read against a read through a plain pointer (the hand-off's cost);
#     the API hands out pointers into the segment: no byte of a version is copied on the way.
# usage: channel_soak.sh BUILD_ROOT SOURCE_ROOT ITERATIONS [--stress]
set -u
build=$1 source=$2 iterations=$3 stress=${4:-}
work=$(mktemp -d)
instance=chsoak_$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "channel-soak: FAIL: $*"; exit 1; }

"$build/compiler/tactus-compile" -q -i "$source/bench/channels/fusion_soak.yaml" -o "$work/g.tsched" >/dev/null \
  || fail "compile"
load_pid=
if [ "$stress" = "--stress" ]; then
  command -v stress-ng >/dev/null || { echo "channel-soak: stress-ng is not installed (scripts/setup.sh installs it)"; exit 77; }
  stress-ng --cpu "$(nproc)" --cpu-load 60 --timeout 0 >/dev/null 2>&1 & load_pid=$!; pids+=($load_pid)
fi
timeout_ms=$(( iterations * 5 + 60000 ))
"$build/master/tactus-master" -C -s "$work/g.tsched" -e "$iterations" -D "$instance" -l "$work/run.log" \
  > "$work/master.txt" 2>&1 & master=$!; pids+=($master)
# client random-us channels...
start() {
  local name=$1 random=$2; shift 2
  local args=()
  for c in "$@"; do args+=(--channel "$c"); done
  "$build/tests/runtime/tactus-test-client" --name "$name" --instance "$instance" --timeout-ms "$timeout_ms" \
    --random-busy-us "$random" "${args[@]}" --channel-log > "$work/$name.txt" 2>&1 &
  clients+=($!); pids+=($!)
}
clients=()
start Lidar 150
start Radar 50 Targets
start Fusion 200 Targets Fused
start Tracking 60 Fused
"$build/tests/runtime/tactus-test-client" --name Logging --instance "$instance" --timeout-ms "$timeout_ms" \
  --random-busy-us 800 --channel Fused --channel-log --time-channel-access > "$work/Logging.txt" 2>&1 &
clients+=($!); pids+=($!)
status=0
for p in "${clients[@]}"; do wait "$p" || status=1; done
wait "$master" || status=1
[ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
[ "$status" = 0 ] || { tail -n 3 "$work"/*.txt; fail "the run did not end well"; }
tail -n 1 "$work/master.txt"
"$build/tools/tactus-report" "$work/run.log" "$work/g.tsched" --csv > "$work/runs.csv" 2>/dev/null || fail "tactus-report"
python3 "$source/tests/support/check_channel_runs.py" "$work/g.tsched" "$work/runs.csv" \
  "$work/Fusion.txt" "$work/Tracking.txt" "$work/Logging.txt" > "$work/check.txt"
checked=$?
grep -v '^reader got\|^reader started\|^buffer overwritten' "$work/check.txt"
grep -m 5 '^reader got\|^reader started\|^buffer overwritten' "$work/check.txt"
for c in Fusion Tracking Logging; do
  echo "$c: $(grep '^channel-reads' "$work/$c.txt")"
done
grep '^channel-access' "$work/Logging.txt"
bad=$(cat "$work"/{Fusion,Tracking,Logging}.txt | sed -n 's/^channel-reads .*wrong=\([0-9]*\) overwritten=\([0-9]*\)$/\1 \2/p' |
  awk '{s += $1 + $2} END {print s + 0}')
[ "$checked" = 0 ] && [ "$bad" = 0 ] || fail "$bad payload deviations; the version check exited $checked"
echo "channel-soak: $iterations iterations${stress:+ under stress-ng at 60%}: 0 deviations"
