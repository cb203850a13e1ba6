#!/usr/bin/env bash
# Record and replay a managed run (-N): replay_pipeline.yaml (schedule 45) and
# replay_pipeline_b.yaml (46, the same clients and channels at other rates) under the real master,
# three real clients (tactus-replay-client: the source writes fresh random bytes, the others a
# function of what they read) and tactus-manager: start 45, rollover to 46, rollover back to 45,
# exit; recorded with --record-required. Replayed with `tactus-master -N ... --replay` and the
# clients alone (no manager: the replaying master makes the recorded switches itself), twice at
# real time and once at --replay-rate 0, each replay recorded: every replay compares equal to the
# recording (--compare-recordings exit 0), holds the same switch records (from, to, iteration)
# and the same writer runs; a second recorded run (fresh random bytes) compares different. The
# manager's rollover during a replay is refused, named; a managed recording replayed without -N
# is refused (exit 2). Last, --record-required ends a run at its recording's first loss (the
# copier made to poll every 300 ms, so that versions are overwritten before it copies them): exit
# 1, named, long before its frame limit.
# usage: replay_managed_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT TACTUS_MANAGER REPLAY_CLIENT
#        GRAPH_A GRAPH_B RECORDING_TOOL
set -u
compile=$1 master=$2 report=$3 manager=$4 client=$5 graph_a=$6 graph_b=$7 tool=$8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for g in a b; do
  graph=$graph_a
  [ $g = b ] && graph=$graph_b
  "$compile" -q -i "$graph" -o "$work/$g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
done
schedules="$work/a.tsched,$work/b.tsched"
export TACTUS_RECORD_POLL_US=200
master_pid=0 client_pids=()
begin() {  # NAME MASTER-OPTIONS...: the master and the three clients, in the background
  local name=$1
  instance=managed_$$_$1
  shift
  "$master" -C -D "$instance" "$@" > "$work/master_$name.txt" 2>&1 &
  master_pid=$! client_pids=()
  for c in Sensor Filter Sink; do
    "$client" --name "$c" --instance "$instance" --busy-us 100 --timeout-ms 20000 \
      --channel Raw --channel Mid --channel Out > "$work/${c}_$name.txt" 2>&1 &
    client_pids+=($!)
  done
}
finish() {  # the exit code of the master, 1 when a client failed; the master's alone in $master_code
  local status=0
  for p in "${client_pids[@]}"; do wait "$p" || status=1; done
  wait "$master_pid"
  master_code=$?
  [ $master_code = 0 ] || status=$master_code
  return $status
}
mgr() {  # COMMAND...: tactus-manager on the current instance
  "$manager" -D "$instance" -N mgr "$@" >> "$work/manager.txt" 2>&1
}
record() {  # NAME: a managed run with two rollovers, recorded (again when a loaded machine lost a version)
  local attempt bad
  for attempt in 1 2 3; do
    rm -rf "${work:?}/$1"
    begin "$1" -s "$schedules" -N mgr --record "$work/$1" --record-required
    bad=""
    mgr start 45 || bad="start 45"
    sleep 0.25
    [ -n "$bad" ] || mgr rollover 46 45 || bad="rollover 46 45"
    sleep 0.25
    [ -n "$bad" ] || mgr rollover 45 46 || bad="rollover 45 46"
    sleep 0.15
    [ -n "$bad" ] || mgr exit || bad="exit"
    if finish && [ -z "$bad" ]; then return 0; fi
    # The copier did not keep up (a loaded machine): --record-required ended the run, named.
    grep -q -e "--record-required: the recording lost a version" "$work/master_$1.txt" ||
      { cat "$work/manager.txt" "$work/master_$1.txt"; fail "the recorded run $1 ($bad)"; }
    echo "note: the recorded run $1 lost a version (attempt $attempt): $(grep -e --record-required "$work/master_$1.txt")"
  done
  fail "the recorded run $1 lost versions three times"
}
same() {  # A B: B replayed A exactly
  "$report" --compare-recordings "$work/$1" "$work/$2" > "$work/compare.txt" 2>&1 ||
    { cat "$work/compare.txt"; fail "$2 differs from the recording $1"; }
  for what in switches keys; do
    python3 "$tool" $what "$work/$1/soc0.trec" > "$work/$what.$1" || fail "$what of $1"
    python3 "$tool" $what "$work/$2/soc0.trec" > "$work/$what.$2" || fail "$what of $2"
    diff "$work/$what.$1" "$work/$what.$2" > "$work/diff.txt" || { cat "$work/diff.txt"; fail "$2: other $what than $1"; }
  done
}
record rec
python3 "$tool" switches "$work/rec/soc0.trec" > "$work/switches.txt"
[ "$(grep -c . "$work/switches.txt")" = 6 ] || { cat "$work/switches.txt"; fail "the recording holds not 6 switch records"; }
for k in 1 2; do
  begin "replay$k" -s "$schedules" -N mgr --replay "$work/rec" --record "$work/replay$k"
  # The replay makes the recorded switches: the manager's are refused (it exits 1), named.
  if [ $k = 1 ] && mgr rollover 46 45; then fail "the manager's rollover during a replay was not refused"; fi
  finish || { cat "$work/master_replay$k.txt"; fail "replay $k"; }
  grep -q "replayed [0-9]* source versions of [0-9]* source instances from $work/rec/soc0.trec (.*, 4 recorded switches)" \
    "$work/master_replay$k.txt" || { cat "$work/master_replay$k.txt"; fail "replay $k did not say what it replayed"; }
  same rec "replay$k"
done
grep -q "makes the recorded switches itself" "$work/manager.txt" || { cat "$work/manager.txt"; fail "the refusal was not named"; }
begin fast -s "$schedules" -N mgr --replay "$work/rec" --replay-rate 0 --record "$work/fast" --record-required
finish || { cat "$work/master_fast.txt"; fail "the managed replay at --replay-rate 0"; }
same rec fast
# A run of its own (fresh random bytes at the source) differs.
record other
"$report" --compare-recordings "$work/rec" "$work/other" > "$work/compare.txt" 2>&1
[ $? = 1 ] || { cat "$work/compare.txt"; fail "two managed runs with fresh random sources compared equal"; }
# A managed recording replays only under -N (refused before any client: exit 2, named).
timeout 20 "$master" -C -D "managed_$$_refused" -s "$work/a.tsched" --replay "$work/rec" > "$work/refused.txt" 2>&1
code=$?
[ $code = 2 ] && grep -q "replay it with -N" "$work/refused.txt" || { cat "$work/refused.txt"; fail "without -N: exit $code"; }
# --record-required: the first loss ends the run, named (not at its frame limit, 40 s away). The
# loss: a queue of 1 byte, as a disk that cannot keep up (the copier itself never falls behind:
# every release catches it up).
began=$(date +%s)
TACTUS_RECORD_QUEUE_BYTES=1 begin lossy -s "$work/a.tsched" -e 2000 --record "$work/lossy" --record-required
finish
code=$master_code
took=$(($(date +%s) - began))
[ $code = 1 ] || { cat "$work/master_lossy.txt"; fail "a run with a loss under --record-required: exit $code, not 1"; }
grep -Eq -e "--record-required: the recording lost a version \(queue full \(the disk did not keep up\), channel '(Raw|Mid|Out)', iteration [0-9]+\): the run ends" \
  "$work/master_lossy.txt" || { cat "$work/master_lossy.txt"; fail "the loss's end was not named"; }
[ "$took" -lt 15 ] || fail "the run with a loss ended after $took s: not at the loss"
echo "PASS"
