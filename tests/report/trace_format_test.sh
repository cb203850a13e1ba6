#!/usr/bin/env bash
# The Chrome trace of tactus-report checked by check_trace.py against the trace format and against
# simulated logs (with overruns) of graphs with dependencies across clients, GPU submittees,
# round-robin groups and a chain (its occurrences as async slices); and the plan alone (no log) as
# valid trace JSON.
# usage: trace_format_test.sh TACTUS_REPORT TACTUS_COMPILE MAKE_LOG SOURCE_ROOT
set -euo pipefail
report=$1 compile=$2 make_log=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(dirname "$0")
for graph in two_client_multi_rate multi_rate cuda_two_client round_robin camera_pipeline_chain; do
  "$compile" -i "$src/schedules/$graph.yaml" -o "$work/$graph.tsched" -q >/dev/null
  "$make_log" "$work/$graph.tsched" "$work/$graph.tlog" 25 0.2
  "$report" "$work/$graph.tlog" "$work/$graph.tsched" --trace-out "$work/$graph.json" >/dev/null
  echo "$graph:"
  python3 "$here/check_trace.py" "$work/$graph.json" "$work/$graph.tsched" "$work/$graph.tlog"
done
# One chain slice per measured occurrence (--json), named a miss as often as --json counts them.
"$report" "$work/camera_pipeline_chain.tlog" "$work/camera_pipeline_chain.tsched" --json > "$work/chains.json"
python3 - "$work/camera_pipeline_chain.json" "$work/chains.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
c = json.load(open(sys.argv[2]))["chains"][0]
begins = [e for e in events if e["ph"] == "b" and e["cat"].startswith("chain")]
misses = [e for e in begins if e["name"].startswith("MISS ")]
assert len(begins) == c["reaction"]["count"] + c["age"]["count"], (len(begins), c)
assert len(misses) == sum(1 for e in begins if e["args"]["measured_us"] * 1000 > min(
    e["args"]["planned_us"], e["args"].get("required_us", float("inf"))) * 1000), len(misses)
assert len(misses) >= max(c["reactions_over_planned"], c["reactions_over_required"]), (len(misses), c)
print(f"chains: {len(begins)} chain slices, {len(misses)} of them misses")
PY
# The plan alone: valid JSON with one plan event per instance.
"$report" --schedule "$work/multi_rate.tsched" --trace-out "$work/plan.json"
python3 - "$work/plan.json" "$work/multi_rate.tsched" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
instances = sum(1 for line in open(sys.argv[2]) if line.startswith("instance "))
plans = sum(1 for e in events if e["ph"] == "X" and e["cat"] == "plan")
assert plans == instances, f"{plans} plan events, {instances} instances"
print(f"plan alone: {plans} plan events")
PY
