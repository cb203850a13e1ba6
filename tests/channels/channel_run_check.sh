#!/usr/bin/env bash
# The channel mapping holds at run time: race.yaml run with the real master and clients for 200
# iterations, every run far shorter than its WCET; every reader run must start after the writer
# run the schedule maps it to has ended, and the next writer run into its buffer must start after
# it ended (tests/support/check_channel_runs.py on tactus-report --csv).
# usage: channel_run_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT TEST_CLIENT CHECK_SCRIPT GRAPH
set -u
compile=$1 master=$2 report=$3 client=$4 check=$5 graph=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
instance=chanrun_$$
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
"$master" -C -s "$work/g.tsched" -e 200 -D "$instance" -l "$work/run.log" > "$work/master.txt" 2>&1 &
master_pid=$!
pids=()
for c in Writer Reader; do
  "$client" --name "$c" --instance "$instance" --busy-us 200 --timeout-ms 20000 > "$work/$c.txt" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
wait "$master_pid" || status=1
if [ "$status" != 0 ]; then
  cat "$work/master.txt" "$work/Writer.txt" "$work/Reader.txt"
  echo "FAIL: the run did not end well"
  exit 1
fi
"$report" "$work/run.log" "$work/g.tsched" --csv > "$work/runs.csv" 2> /dev/null || { echo "FAIL: tactus-report"; exit 1; }
python3 "$check" "$work/g.tsched" "$work/runs.csv" || { echo "FAIL: a reader run saw another version than the schedule's"; exit 1; }
grep -q '^200 reader runs checked' <(python3 "$check" "$work/g.tsched" "$work/runs.csv") || { echo "FAIL: not every reader run was checked"; exit 1; }
echo "PASS"
