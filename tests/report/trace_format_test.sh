#!/usr/bin/env bash
# The Chrome trace of tactus-report checked by check_trace.py against the trace format and against
# simulated logs (with overruns) of graphs with dependencies across clients, GPU submittees and
# round-robin groups; and the plan alone (no log) as valid trace JSON.
# usage: trace_format_test.sh TACTUS_REPORT TACTUS_COMPILE MAKE_LOG SOURCE_ROOT
set -euo pipefail
report=$1 compile=$2 make_log=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(dirname "$0")
for graph in two_client_multi_rate multi_rate cuda_two_client round_robin; do
  "$compile" -i "$src/schedules/$graph.yaml" -o "$work/$graph.tsched" -q >/dev/null
  "$make_log" "$work/$graph.tsched" "$work/$graph.tlog" 25 0.2
  "$report" "$work/$graph.tlog" "$work/$graph.tsched" --trace-out "$work/$graph.json" >/dev/null
  echo "$graph:"
  python3 "$here/check_trace.py" "$work/$graph.json" "$work/$graph.tsched" "$work/$graph.tlog"
done
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
