#!/usr/bin/env bash
# Crash consistency of recordings: N times, a recorded run of record_graph.yaml (three clients,
# three 64 KiB channels at 50 Hz) whose master is killed with SIGKILL at a random instant 0.3-1.5 s
# into the run; every recording must read with tactus-report --recording (exit 0, up to its last
# whole chunk, the stop said) and every version in it must hold its writer run's payload.
# Prints "kill -9 checks: K/N recordings read".
# usage: bench/record/kill_check.sh BUILD SOURCE [N]
set -u
build=$1 source=$2 n=${3:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/compiler/tactus-compile" -q -i "$source/bench/record/record_graph.yaml" -o "$work/g.tsched" > /dev/null || exit 2
ok=0
for k in $(seq 1 "$n"); do
  instance=reckill_$$_$k
  "$build/master/tactus-master" -C -s "$work/g.tsched" -D "$instance" --record "$work/r$k" > "$work/master$k.txt" 2>&1 &
  master=$!
  pids=()
  for c in Sensors Fusion Planner; do
    "$build/tests/runtime/tactus-test-client" --name "$c" --instance "$instance" --busy-us 500 --timeout-ms 20000 \
      --channel A --channel B --channel C > "$work/$c$k.txt" 2>&1 &
    pids+=($!)
  done
  sleep "$(python3 -c "import random; print(round(random.uniform(0.3, 1.5), 3))")"
  kill -9 "$master"
  wait "$master" 2> /dev/null
  for p in "${pids[@]}"; do
    kill "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  rm -f /dev/shm/*"$instance"* 2> /dev/null
  if "$build/tools/tactus-report" --recording "$work/r$k" > "$work/list$k.txt" 2>&1 &&
    python3 "$source/tests/record/recording_tool.py" payloads "$work/r$k/soc0.trec" > "$work/payloads$k.txt"; then
    ok=$((ok + 1))
    echo "kill $k: $(grep -o '^  [0-9]* versions' "$work/list$k.txt" | head -1) $(grep -o 'stops: .*' "$work/list$k.txt" | cut -c1-110)"
  else
    echo "kill $k: FAILED"
    cat "$work/list$k.txt" "$work/payloads$k.txt"
  fi
done
echo "kill -9 checks: $ok/$n recordings read"
[ "$ok" = "$n" ]
