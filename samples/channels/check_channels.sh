#!/usr/bin/env bash
# Runs the channel sample's two clients against a real master (C++ Sensing with the C++ Planning,
# then with the C one) and checks that every Plan run read the version of Objects that Detect
# wrote for it: 20 iterations of 100 ms, 4 Detect and 2 Plan runs each (-C: three cores on any machine).
# usage: check_channels.sh TACTUS_COMPILE TACTUS_MASTER SAMPLE_CHANNELS SAMPLE_CHANNELS_STM SCHEDULES_DIR
set -euo pipefail
compile=$1 master=$2 sample=$3 sample_stm=$4 schedules=$5
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_channels: $*" >&2; exit 1; }

"$compile" -q -i "$schedules/camera_pipeline_chain.yaml" -o "$work/camera.tsched" >/dev/null

# run NAME PLANNING-COMMAND...: the master (-e 20), Sensing and the given Planning client.
run() {
  local name=$1 instance=$2; shift 2
  pids=()
  timeout 60 "$master" -C -s "$work/camera.tsched" -e 20 -D "$instance" >"$work/master_$name.out" 2>&1 & pids+=($!)
  timeout 60 "$sample" Sensing --instance "$instance" >"$work/sensing_$name.out" 2>&1 & pids+=($!)
  TACTUS_INSTANCE=$instance timeout 60 "$@" >"$work/planning_$name.out" 2>&1 & pids+=($!)
  for p in "${pids[@]}"; do
    wait "$p" || { cat "$work/master_$name.out" "$work/sensing_$name.out" "$work/planning_$name.out"; fail "$name: a process failed"; }
  done
  cat "$work/sensing_$name.out" "$work/planning_$name.out"
  # A period the master skipped on a loaded machine skips Detect and Plan alike: then fewer runs,
  # but never a Plan run without its version.
  written=$(sed -n 's/^Detect wrote \([0-9]*\) versions of Objects$/\1/p' "$work/sensing_$name.out")
  read_line=$(grep '^Plan read ' "$work/planning_$name.out") || fail "$name: Plan said nothing"
  fresh=$(echo "$read_line" | sed -n 's/^Plan read \([0-9]*\) versions.*/\1/p')
  echo "$read_line" | grep -q '(0 before the first, 0 not written)' || fail "$name: a Plan run found no version: $read_line"
  [ "${written:-0}" -ge 72 ] && [ "${written:-0}" -le 80 ] || fail "$name: Detect wrote ${written:-?} versions, expected 80"
  [ "$fresh" -eq $((written / 2)) ] || fail "$name: Plan read $fresh versions for $written written (2 Detect runs per Plan run)"
}

run cpp "channels_$$" "$sample" Planning
grep -Eq '^Plan \(iteration 0 frame 0\): [0-9]+ objects of camera frame 0 \(Detect of iteration 0\)' "$work/planning_cpp.out" \
  || fail "cpp: the first Plan run did not decide on camera frame 0"
grep -Eq '^Plan \(iteration 1 frame 1\): [0-9]+ objects of camera frame 6 \(Detect of iteration 1\)' "$work/planning_cpp.out" \
  || fail "cpp: Plan of iteration 1 frame 1 did not decide on camera frame 6 (the one released with it)"
if [ -n "$sample_stm" ]; then
  discriminator=$(( $$ % 1000000 + 2000000 ))
  run c "$discriminator" "$sample_stm" "$discriminator"
  grep -q 'run ended (STM_SUCCESS)' "$work/planning_c.out" || fail "c: stmEnterScheduler did not succeed"
  grep -q 'last camera frame 78$' "$work/planning_c.out" || fail "c: the last Plan run did not read camera frame 78"
fi
echo "PASS"
