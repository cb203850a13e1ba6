#!/usr/bin/env bash
# A StartTime that chain-guided scheduling gives a reader holds at run time: planner_chain.yaml
# compiles with StartTime 6ms on Planner.Plan (its schedule file's start_ns), and a run of 30
# iterations with the real master and clients, every run far shorter than its WCET, measures every
# data age within the planned 8.4 ms (and far below the 20 ms and more that the plan without it
# gives: Plan would read the previous iteration's last track). What the StartTime decides is held
# in every attempt: every age at least 6 ms and the median below 8.4 ms. A worker that a loaded
# machine holds off its core pushes single ages over the bound: the run is tried three times, and
# the best one may have at most 3 of its 30 ages over it (said); more fails.
# usage: chain_start_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT TEST_CLIENT GRAPH
set -u
compile=$1 master=$2 report=$3 client=$4 graph=$5
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "work: $work"; else trap 'rm -rf "$work"' EXIT; fi
iterations=30
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
grep -q "kept StartTime 6ms on 'Planner.Plan'" "$work/compile.txt" ||
  { cat "$work/compile.txt"; echo "FAIL: the compile report does not name the StartTime"; exit 1; }
grep -q "^runnable id=[0-9]* name=Plan .* start_ns=6000000 " "$work/g.tsched" ||
  { grep "name=Plan" "$work/g.tsched"; echo "FAIL: the schedule file does not hold the StartTime"; exit 1; }
best=100
for attempt in 1 2 3; do
  instance=chainstart_$$_$attempt
  "$master" -C -s "$work/g.tsched" -e "$iterations" -D "$instance" -l "$work/run.log" > "$work/master.txt" 2>&1 &
  pids=($!)
  for c in Tracker Planner; do
    "$client" --name "$c" --instance "$instance" --busy-us 200 --timeout-ms 20000 > "$work/$c.txt" 2>&1 &
    pids+=($!)
  done
  status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  [ "$status" = 0 ] || { cat "$work"/*.txt; echo "FAIL: the run did not end well"; exit 1; }
  "$report" "$work/run.log" "$work/g.tsched" --json > "$work/run.json" 2> "$work/report.err" ||
    { cat "$work/report.err"; echo "FAIL: tactus-report --json"; exit 1; }
  python3 - "$work/run.json" "$iterations" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["chains"][0]
n = int(sys.argv[2])
print("data ages %d, median %.3f ms, max %.3f ms (planned %.3f)" % (
    c["age"]["count"], c["age"]["median_ns"] / 1e6, c["age"]["max_ns"] / 1e6, c["planned_age_ns"] / 1e6))
assert c["planned_age_ns"] == 8400000, c
assert c["age"]["count"] == n, "FAIL: data ages %d, expected %d" % (c["age"]["count"], n)
# Plan waits for its StartTime (6 ms): every age is at least that, and the median far below 20 ms.
assert 6e6 <= c["age"]["median_ns"] < 8.4e6, c
assert c["age"]["min_ns"] >= 6e6, c
over = c["ages_over_planned"]
sys.exit(min(over, 100) + 10 if over else 0)
PY
  code=$?
  [ "$code" = 0 ] && exit 0
  [ "$code" -ge 10 ] || exit 1
  over=$((code - 10))
  ((over < best)) && best=$over
  echo "attempt $attempt: $over data ages over their bound (the machine held a worker back?)"
done
if ((best <= 3)); then
  echo "every attempt had ages over the bound, the best $best of $iterations: a loaded machine's delays, not the plan's"
  exit 0
fi
echo "FAIL: the best of 3 runs within the WCETs had $best of $iterations data ages over their bound"
exit 1
