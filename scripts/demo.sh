#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, compile the two-client graph,
# run it (master and two sample client processes, 50 hyperepoch iterations of 40 ms: 2 s), and
# print what ran: the clients' own lines, then tactus-report's statistics from the event log.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${TACTUS_BUILD_DIR:-build}
scripts/setup.sh
out=$(mktemp -d)
instance="demo_$$"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT

graph=schedules/two_client_multi_rate.yaml
sched=$out/two_client_multi_rate.tsched
log=$out/two_client_multi_rate.tlog
echo "== tactus-compile -i $graph -o $sched"
"$builddir/compiler/tactus-compile" -i "$graph" -o "$sched"

# Clients first, to show that the order does not matter: each blocks in init until the master runs.
echo
echo "== two clients (samples/two_client_pipeline.cpp) and tactus-master -e 50 (2 s), instance $instance"
"$builddir/samples/tactus-sample-two-client" Sensing --instance "$instance" >"$out/sensing.out" 2>&1 & pids+=($!)
"$builddir/samples/tactus-sample-two-client" Planning --instance "$instance" >"$out/planning.out" 2>&1 & pids+=($!)
status=0
"$builddir/master/tactus-master" -s "$sched" -e 50 -l "$log" -D "$instance" -t 10000000 -v || status=$?
for p in "${pids[@]}"; do wait "$p" || status=$?; done
pids=()
echo
echo "== the first hyperepoch iteration as the clients printed it, merged by time"
cat "$out/sensing.out" "$out/planning.out" | grep '^\[' | sort -t' ' -k1.2n
echo
echo "== the clients' summaries"
grep -hv '^\[' "$out/sensing.out" "$out/planning.out"
[ "$status" -eq 0 ] || { echo "demo: the run failed (status $status)"; exit "$status"; }

echo
echo "== tactus-report $log $sched"
if [ -x "$builddir/tools/tactus-report" ]; then
  "$builddir/tools/tactus-report" "$log" "$sched"
else
  # Without the report tool: count the event log's records by kind (64-byte header, 32-byte records).
  python3 - "$log" <<'PY'
import struct, sys, collections
data = open(sys.argv[1], "rb").read()
kinds = collections.Counter(struct.unpack_from("<H", data, off)[0] for off in range(64, len(data), 32))
names = {1: "runs", 2: "frame releases", 3: "skips", 4: "overruns", 5: "drops"}
print(", ".join(f"{kinds.get(k, 0)} {v}" for k, v in names.items()))
PY
fi

# The four-process pipeline of the guide (samples/pipeline), started from its launch file: the
# launcher compiles the graph, starts the master and the clients, and prints a summary.
if [ -x "$builddir/launch/tactus-launch" ] && [ -x "$builddir/samples/pipeline/tactus-sample-pipeline" ]; then
  echo
  echo "== tactus-launch samples/pipeline/launch.yaml (four clients, three channels, a chain; 50 iterations: 3 s)"
  cp samples/pipeline/pipeline.yaml samples/pipeline/launch.yaml "$out/"
  root=$PWD
  (cd "$out" && PATH="$root/$builddir/compiler:$root/$builddir/master:$root/$builddir/samples/pipeline:$PATH" \
    "$root/$builddir/launch/tactus-launch" --no-color launch.yaml) || status=$?
  echo
  echo "== the chain CameraToAct, measured (tactus-report pipeline.tlog pipeline.tsched)"
  "$builddir/tools/tactus-report" "$out/pipeline.tlog" "$out/pipeline.tsched" | sed -n '/^chains/,/^$/p'
  [ "$status" -eq 0 ] || { echo "demo: the pipeline run failed (status $status)"; exit "$status"; }
fi
