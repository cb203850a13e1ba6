#!/usr/bin/env bash
# Chains measured on real runs: schedules/camera_pipeline_chain.yaml run with the real master and
# clients for 30 iterations, twice. Every run far shorter than its WCET: tactus-report's measured
# reactions and data ages are all there (4 x 30 - 1 reactions: the last camera frame is seen in an
# iteration that never runs; 2 x 30 data ages) and within the planned bounds, and
# --fail-on-chain-miss exits 0 (KEEP=1 keeps the work folder). Planning.Actuate overrunning its 1 ms WCET by 20 ms in iteration
# 10: --fail-on-chain-miss exits 1 naming the chain and the iteration, and the misses are counted.
# usage: chain_run_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT TEST_CLIENT GRAPH
set -u
compile=$1 master=$2 report=$3 client=$4 graph=$5
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "work: $work"; else trap 'rm -rf "$work"' EXIT; fi
iterations=30
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }

# run NAME [CLIENT OPTIONS...]: one run of the graph, its log in $work/NAME.log.
run() {
  local name=$1 instance=chainrun_$$_$1
  shift
  "$master" -C -s "$work/g.tsched" -e "$iterations" -D "$instance" -l "$work/$name.log" > "$work/$name.master.txt" 2>&1 &
  local master_pid=$! pids=() status=0 c
  for c in Sensing Planning; do
    "$client" --name "$c" --instance "$instance" --busy-us 200 --timeout-ms 20000 "$@" > "$work/$name.$c.txt" 2>&1 &
    pids+=($!)
  done
  for c in "${pids[@]}"; do wait "$c" || status=1; done
  wait "$master_pid" || status=1
  if [ "$status" != 0 ]; then
    cat "$work/$name".*.txt
    echo "FAIL: the $name run did not end well"
    exit 1
  fi
}

# The run within the bounds: on a loaded machine a worker may be held off its CPU for tens of ms (a
# real miss, measured as such); such a run is tried again, up to 3 times.
for attempt in 1 2 3; do
  run ontime
  "$report" "$work/ontime.log" "$work/g.tsched" --json > "$work/ontime.json" 2> "$work/ontime.err" ||
    { cat "$work/ontime.err"; echo "FAIL: tactus-report --json"; exit 1; }
  python3 - "$work/ontime.json" "$iterations" <<'PY'
import json, sys
chains = json.load(open(sys.argv[1]))["chains"]
n = int(sys.argv[2])
assert len(chains) == 1 and chains[0]["name"] == "CameraToActuate", chains
c = chains[0]
print("on time: reactions %d, max %.3f ms (planned %.3f); data ages %d, max %.3f ms (planned %.3f)" % (
    c["reaction"]["count"], c["reaction"]["max_ns"] / 1e6, c["planned_reaction_ns"] / 1e6,
    c["age"]["count"], c["age"]["max_ns"] / 1e6, c["planned_age_ns"] / 1e6))
assert c["reaction"]["count"] == 4 * n - 1, "FAIL: reactions %d, expected %d" % (c["reaction"]["count"], 4 * n - 1)
assert c["age"]["count"] == 2 * n, "FAIL: data ages %d, expected %d" % (c["age"]["count"], 2 * n)
assert 0 < c["reaction"]["median_ns"] <= c["reaction"]["p99_ns"] <= c["reaction"]["max_ns"], c
assert 0 < c["age"]["median_ns"] <= c["age"]["p99_ns"] <= c["age"]["max_ns"], c
# The median occurrence is far within its bound, whatever the machine did to a few.
assert c["reaction"]["median_ns"] < c["planned_reaction_ns"] and c["age"]["median_ns"] < c["planned_age_ns"], c
sys.exit(2 if c["reactions_over_planned"] + c["ages_over_planned"] else 0)
PY
  code=$?
  [ "$code" = 0 ] && break
  [ "$code" = 2 ] || exit 1
  "$report" "$work/ontime.log" "$work/g.tsched" --fail-on-chain-miss 2>&1 > /dev/null | grep -v warning
  [ "$attempt" = 3 ] && { echo "FAIL: 3 runs within the WCETs had chain occurrences over their bounds"; exit 1; }
  echo "attempt $attempt: chain occurrences over their bounds (the machine held a worker back?); again"
done
"$report" "$work/ontime.log" "$work/g.tsched" --fail-on-chain-miss > "$work/ontime.txt" 2>&1 ||
  { cat "$work/ontime.txt"; echo "FAIL: --fail-on-chain-miss failed a run within the bounds"; exit 1; }
grep -q "CameraToActuate  reaction  *$((4 * iterations - 1)) " "$work/ontime.txt" ||
  { cat "$work/ontime.txt"; echo "FAIL: no chain table in the text report"; exit 1; }

run late --overrun Actuate:10:20000
"$report" "$work/late.log" "$work/g.tsched" --fail-on-chain-miss > "$work/late.txt" 2> "$work/late.err"
code=$?
cat "$work/late.err"
[ "$code" = 1 ] || { echo "FAIL: --fail-on-chain-miss exited $code on a run with a late Actuate"; exit 1; }
grep -q "tactus-report: chain 'CameraToActuate' reaction from Sensing.Capture frame 1 of iteration 10 to Planning.Actuate frame 1 of iteration 10: .*, over its planned 51.5ms" "$work/late.err" ||
  { echo "FAIL: the late reaction is not named"; exit 1; }
grep -q "tactus-report: chain 'CameraToActuate' data age from Sensing.Capture frame 0 of iteration 10 to Planning.Actuate frame 0 of iteration 10: " "$work/late.err" ||
  { echo "FAIL: the late data age is not named"; exit 1; }
"$report" "$work/late.log" "$work/g.tsched" --json > "$work/late.json" 2> /dev/null || { echo "FAIL: --json"; exit 1; }
python3 - "$work/late.json" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1]))["chains"][0]
# Iteration 10's Actuate runs, 20 ms late: the reactions to camera frame 3 of iteration 9 and
# frame 1 of iteration 10 (those to frames 0 and 2 stay within 51.5 ms) and the data ages at both.
# (More when the machine also held a worker back elsewhere.)
assert c["reactions_over_planned"] >= 2, c
assert c["ages_over_planned"] >= 2, c
assert c["reaction"]["max_ns"] > 20e6 + 15e6, c
PY
# The same occurrences as CSV rows (--csv-of chains): as many as the JSON counts, the same worst,
# the late ones in iteration 10 over the planned bound; and the frame releases (--csv-of releases).
"$report" "$work/late.log" "$work/g.tsched" --csv-of chains > "$work/late.chains.csv" 2> /dev/null ||
  { echo "FAIL: --csv-of chains"; exit 1; }
"$report" "$work/late.log" "$work/g.tsched" --csv-of releases > "$work/late.releases.csv" 2> /dev/null ||
  { echo "FAIL: --csv-of releases"; exit 1; }
python3 - "$work/late.json" "$work/late.chains.csv" "$work/late.releases.csv" "$iterations" <<'PY' || exit 1
import csv, json, sys
c = json.load(open(sys.argv[1]))["chains"][0]
rows = list(csv.DictReader(open(sys.argv[2])))
reactions = [r for r in rows if r["measure"] == "reaction"]
ages = [r for r in rows if r["measure"] == "age"]
assert len(reactions) == c["reaction"]["count"] and len(ages) == c["age"]["count"], (len(reactions), len(ages), c)
assert max(int(r["value_ns"]) for r in reactions) == c["reaction"]["max_ns"], c
assert all(int(r["value_ns"]) == int(r["end_ns"]) - int(r["release_ns"]) for r in rows)
assert all(r["chain"] == "CameraToActuate" and r["source_runnable"] == "Capture" and r["last_runnable"] == "Actuate"
           for r in rows), rows[0]
late = [r for r in rows if r["last_iteration"] == "10" and int(r["value_ns"]) > int(r["planned_ns"])]
assert len(late) >= 4, late  # two reactions and two data ages (see above)
assert all(int(r["planned_ns"]) == c["planned_" + r["measure"] + "_ns"] for r in rows)
releases = list(csv.DictReader(open(sys.argv[3])))
n = int(sys.argv[4])
assert len(releases) >= n, len(releases)  # every frame of every epoch of the n iterations
assert all(int(r["late_ns"]) == int(r["actual_ns"]) - int(r["ideal_ns"]) for r in releases)
assert {r["iteration"] for r in releases} >= {str(k) for k in range(n)}
print("csv: %d chain rows, %d release rows" % (len(rows), len(releases)))
PY
echo "PASS"
