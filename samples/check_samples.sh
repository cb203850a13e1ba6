#!/usr/bin/env bash
# Runs both samples against a real tactus-master and checks what they say they ran.
# usage: check_samples.sh TACTUS_COMPILE TACTUS_MASTER SAMPLE_MINIMAL SAMPLE_TWO_CLIENT SCHEDULES_DIR [SAMPLE_MINIMAL_STM]
set -euo pipefail
compile=$1 master=$2 minimal=$3 two_client=$4 schedules=$5 minimal_stm=${6:-}
work=$(mktemp -d)
instance="samples_$$"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_samples: $*" >&2; exit 1; }

# Numeric options are parsed strictly: garbage, negatives and overflow are usage errors (exit 2)
# with a message, never a silent 0 or "forever" (timeout 10: a sample that waits fails here).
bad_arg() {  # expected-message program args...
  local says=$1 rc=0; shift
  timeout 10 "$@" >"$work/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc, expected 2 (usage error): $(cat "$work/bad.out")"
  grep -qF -- "$says" "$work/bad.out" || fail "'$*' did not say '$says': $(cat "$work/bad.out")"
}
for v in abc -5 "" 10x 99999999999999999999 2147483648 " 7"; do
  bad_arg "--timeout-ms expects milliseconds 0..2147483647 (leave it out to wait forever), got '$v'" \
    "$minimal" --instance "${instance}_bad" --timeout-ms "$v"
  bad_arg "--timeout-ms expects milliseconds 0..2147483647" "$two_client" Sensing --instance "${instance}_bad" --timeout-ms "$v"
done
# A valid 0 still means "do not wait": no master, so init times out at once (exit 1).
rc=0; timeout 10 "$minimal" --instance "${instance}_bad" --timeout-ms 0 >"$work/zero.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "no master for instance" "$work/zero.out" || fail "--timeout-ms 0: exit $rc: $(cat "$work/zero.out")"
if [ -n "$minimal_stm" ]; then
  for v in abc -3 "" 4x 2147483648; do
    bad_arg "DISCRIMINATOR expects a number 0..2147483647" "$minimal_stm" "$v"
  done
fi

# The minimal pipeline: 20 frames of 10 ms; the sample checks the order itself (out of order = 0).
"$compile" -i "$schedules/minimal_cpu.yaml" -o "$work/minimal.tsched" >/dev/null
timeout 60 "$minimal" --instance "${instance}_m" >"$work/minimal.out" 2>&1 & pids+=($!)
timeout 60 "$master" -s "$work/minimal.tsched" -e 20 -D "${instance}_m" -t 20000000 >"$work/master_m.out" 2>&1 \
  || { cat "$work/master_m.out"; fail "master of the minimal sample failed"; }
wait "${pids[0]}" || { cat "$work/minimal.out"; fail "the minimal sample failed"; }
cat "$work/minimal.out"
grep -q "run ended (frame-limit)" "$work/minimal.out" || fail "minimal: the run did not end by frame limit"
grep -q "ran Read 20, Process 20, Publish 20 times; checksum 420; 0 out of order" "$work/minimal.out" \
  || fail "minimal: expected 20 calls of each runnable, checksum 20*21, none out of order"
[ "$(grep -c '^frame ' "$work/minimal.out")" -eq 9 ] || fail "minimal: expected 3 traced frames of 3 calls"

# The same pipeline through STM's C API, on a numeric instance (STM's discriminator).
if [ -n "$minimal_stm" ]; then
  discriminator=$(( $$ % 1000000 + 1000000 ))
  timeout 60 "$minimal_stm" "$discriminator" >"$work/minimal_stm.out" 2>&1 & pids+=($!)
  timeout 60 "$master" -s "$work/minimal.tsched" -e 20 -D "$discriminator" -t 20000000 >"$work/master_s.out" 2>&1 \
    || { cat "$work/master_s.out"; fail "master of the STM sample failed"; }
  wait "${pids[1]}" || { cat "$work/minimal_stm.out"; fail "the STM sample failed"; }
  cat "$work/minimal_stm.out"
  grep -q "run ended (STM_SUCCESS)" "$work/minimal_stm.out" || fail "minimal-stm: stmEnterScheduler did not succeed"
  grep -q "ran Read 20, Process 20, Publish 20 times; checksum 420; 0 out of order" "$work/minimal_stm.out" \
    || fail "minimal-stm: expected 20 calls of each runnable, checksum 20*21, none out of order"
  grep -q "^frame 2: Pipeline.Read -> 3 (schedule 1)$" "$work/minimal_stm.out" \
    || fail "minimal-stm: stmGetRuntimeInfo did not report frame 2 of schedule 1"
fi

# The two-client multi-rate pipeline: 5 hyperepoch iterations of 40 ms = 20 fast frames, 5 slow.
"$compile" -i "$schedules/two_client_multi_rate.yaml" -o "$work/tcmr.tsched" >/dev/null
timeout 60 "$two_client" Planning --instance "${instance}_t" >"$work/planning.out" 2>&1 & planning=$!; pids+=($!)
timeout 60 "$master" -s "$work/tcmr.tsched" -e 5 -D "${instance}_t" -t 20000000 -l "$work/tcmr.log" \
  >"$work/master_t.out" 2>&1 & master_t=$!; pids+=($!)
timeout 60 "$two_client" Sensing --instance "${instance}_t" >"$work/sensing.out" 2>&1 \
  || { cat "$work/sensing.out"; fail "the Sensing client failed"; }
wait "$planning" || { cat "$work/planning.out"; fail "the Planning client failed"; }
wait "$master_t" || { cat "$work/master_t.out"; fail "the master of the two-client sample failed"; }
cat "$work/sensing.out" "$work/planning.out"
expect() {  # file runnable count
  grep -Eq "^[A-Za-z]+: $2 +\([A-Za-z]+ epoch\) ran $3 times$" "$1" || fail "$(basename "$1"): expected $2 to run $3 times"
}
expect "$work/sensing.out" ReadImu 20
expect "$work/sensing.out" Capture 5
expect "$work/sensing.out" Detect 5
expect "$work/sensing.out" Record 5
expect "$work/planning.out" Estimate 20
expect "$work/planning.out" PlanPath 5
# The traced first iteration, merged by time, shows the cross-client order of the slow chain.
order=$(cat "$work/sensing.out" "$work/planning.out" | grep '^\[' | sort -t' ' -k1.2n | grep Slow \
  | sed 's/.*: //' | tr '\n' ' ')
[ "$order" = "Sensing.Capture Sensing.Detect Planning.PlanPath Sensing.Record " ] \
  || fail "the slow chain ran as '$order'"
[ ! -e "/dev/shm/tactus_${instance}_t" ] || fail "the instance's segment was left in /dev/shm"
echo "check_samples: the samples ran every frame in order"
