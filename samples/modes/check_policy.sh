#!/usr/bin/env bash
# Runs the two-mode sample under its switching policy (policy.yaml) against a real master: an
# overload of the full mode makes the master fall back to the light mode, and once the overload is
# gone it returns to the full mode, each decision printed with its rule and found in the report.
# usage: check_policy.sh TACTUS_COMPILE TACTUS_MASTER MODES_CLIENT TACTUS_MANAGER TACTUS_REPORT SCHEDULES_DIR POLICY
set -euo pipefail
compile=$1 master=$2 client=$3 manager=$4 report=$5 schedules=$6 policy=$7
work=$(mktemp -d)
instance="policy_$$"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_policy: $*" >&2; cat "$work/master.out" >&2 || true; exit 1; }
# Waits up to 30 s for a line in the master's output.
await() { for _ in $(seq 300); do grep -q "$1" "$work/master.out" && return 0; sleep 0.1; done; fail "no '$1'"; }
"$compile" -i "$schedules/modes_full.yaml" -o "$work/full.tsched" >/dev/null
"$compile" -i "$schedules/modes_light.yaml" -o "$work/light.tsched" >/dev/null
timeout 90 "$master" -s "$work/full.tsched,$work/light.tsched" -N modes -i 2 -D "$instance" --policy "$policy" \
  -l "$work/run.tlog" >"$work/master.out" 2>&1 &
pids+=($!)
timeout 90 "$client" --instance "$instance" --overload "$work/overload" >"$work/client.out" 2>&1 & pids+=($!)
"$manager" -D "$instance" -t 30000 start 101 || fail "the start failed"
sleep 0.2
touch "$work/overload"
await "policy rule 'overload': rolled over from schedule 101 to schedule 102"
rm -f "$work/overload"
await "policy rule 'recover': rolled over from schedule 102 to schedule 101"
"$manager" -D "$instance" -t 30000 exit || fail "the exit failed"
wait "${pids[1]}" || { cat "$work/client.out"; fail "the client failed"; }
wait "${pids[0]}" || fail "the master failed"
"$report" "$work/run.tlog" "$work/full.tsched" "$work/light.tsched" >"$work/report.out" || fail "the report failed"
grep -q "policy rule 1: hyperepoch 'Drive' of schedule 101 overran -> rolled over to schedule 102" "$work/report.out" \
  || { cat "$work/report.out"; fail "the report does not show the fallback"; }
grep -q "policy rule 2: schedule 102 ran its clean iterations -> rolled over to schedule 101" "$work/report.out" \
  || { cat "$work/report.out"; fail "the report does not show the return"; }
cat "$work/master.out"
echo "check_policy: ok"
