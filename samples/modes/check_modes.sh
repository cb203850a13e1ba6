#!/usr/bin/env bash
# Runs the two-mode sample against a real master: the client sees both modes and the switch
# callbacks, the manager's calls succeed (its mistake is refused), the run ends by the manager.
# usage: check_modes.sh TACTUS_COMPILE TACTUS_MASTER MODES_CLIENT MODES_MANAGER SCHEDULES_DIR
set -euo pipefail
compile=$1 master=$2 client=$3 manager=$4 schedules=$5
work=$(mktemp -d)
instance="modes_$$"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_modes: $*" >&2; exit 1; }
"$compile" -i "$schedules/modes_full.yaml" -o "$work/full.tsched" >/dev/null
"$compile" -i "$schedules/modes_light.yaml" -o "$work/light.tsched" >/dev/null
timeout 60 "$master" -s "$work/full.tsched,$work/light.tsched" -N modes -i 2 -D "$instance" >"$work/master.out" 2>&1 &
pids+=($!)
timeout 60 "$client" --instance "$instance" >"$work/client.out" 2>&1 & pids+=($!)
timeout 60 "$manager" "$instance" >"$work/manager.out" 2>&1 || { cat "$work/manager.out" "$work/master.out"; fail "the manager failed"; }
wait "${pids[1]}" || { cat "$work/client.out"; fail "the client failed"; }
wait "${pids[0]}" || { cat "$work/master.out"; fail "the master failed"; }
cat "$work/manager.out" "$work/client.out"
grep -q "stop 101 while light runs: STM_ERROR_BAD_STATE_TRANSITION" "$work/manager.out" || fail "the bad stop was not refused"
grep -q "run ended (exit-requested)" "$work/client.out" || fail "the run did not end by the manager"
grep -q "switching hyperepoch 0 to schedule 102" "$work/client.out" || fail "no switch callback for the light mode"
grep -q "switching hyperepoch 0 to schedule 101" "$work/client.out" || fail "no switch callback for the full mode"
grep -Eq "^light mode ran Grab [1-9][0-9]* Scan [1-9][0-9]* Detect 0 Plan [1-9]" "$work/client.out" \
  || fail "the light mode should run Grab, Scan and Plan, never Detect"
grep -Eq "^full mode ran Grab [1-9][0-9]* Scan [1-9][0-9]* Detect [1-9][0-9]* Plan [1-9]" "$work/client.out" \
  || fail "the full mode should run all four"
echo "check_modes: ok"
