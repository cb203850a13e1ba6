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
  "$client" --name "$c" --instance "$instance" --busy-us 200 --timeout-ms 20000 --channel D --channel-log --check-channels \
    > "$work/$c.txt" 2>&1 &
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
python3 "$check" "$work/g.tsched" "$work/runs.csv" "$work/Reader.txt" > "$work/check.txt" \
  || { cat "$work/check.txt"; echo "FAIL: a reader run saw another version than the schedule's"; exit 1; }
cat "$work/check.txt"
# Every reader run was checked (the master may skip a period on a loaded machine: then 199).
runs=$(grep -o '^[0-9]* reader runs checked' "$work/check.txt" | cut -d' ' -f1)
reads=$(grep -o '^[0-9]* reads by libtactus checked' "$work/check.txt" | cut -d' ' -f1)
[ "${runs:-0}" -ge 190 ] || { echo "FAIL: only ${runs:-0} reader runs checked"; exit 1; }
[ "$reads" = "$runs" ] || { echo "FAIL: $reads reads by libtactus for $runs reader runs"; exit 1; }
# The payload each reader run found was its writer run's, whole, before and after its busy time.
grep -q '^channel-reads ok=[1-9][0-9]* .*wrong=0 overwritten=0$' "$work/Reader.txt" \
  || { grep channel-reads "$work/Reader.txt"; echo "FAIL: a reader run read another payload"; exit 1; }
# The API's refusals name what is wrong.
expect() {  # file text
  grep -qF -- "$2" "$work/$1" || { grep '^channel-' "$work/$1"; echo "FAIL: $1 did not say: $2"; exit 1; }
}
expect Reader.txt "channel-find-misspelt: not found: the schedule has no channel 'Dx' (did you mean 'D'?"
expect Reader.txt "channel-write-outside: invalid state: Channel::write of channel 'D' is only available inside a runnable"
expect Reader.txt "channel-read-outside: invalid state: Channel::read of channel 'D' is only available inside a runnable"
# The first runnable of each client to run refuses (Reader.X, Writer.A: neither uses the channel).
expect Reader.txt "channel-write-by-reader: bad parameter: runnable 'Reader.X' does not write channel 'D' (its writer is 'Writer.W')"
expect Writer.txt "channel-read-by-writer: bad parameter: runnable 'Writer.A' does not read channel 'D' (its readers are 'Reader.R')"
expect Writer.txt "channel-write-too-big: bad parameter: a type of 1048576 bytes does not fit channel 'D''s buffers of 64 bytes"
# A writer run that takes no buffer (iteration 5), and one whose writeAs<T> fails because T
# outgrew the channel (iteration 7): their reader runs get "not written", never the version before
# nor a buffer nobody filled; the runs around them read theirs.
"$master" -C -s "$work/g.tsched" -e 10 -D "${instance}_skip" > "$work/master_skip.txt" 2>&1 &
master_pid=$!
"$client" --name Writer --instance "${instance}_skip" --timeout-ms 20000 --channel D --skip-write-at-iteration 5 \
  --too-big-write-at-iteration 7 \
  > "$work/Writer_skip.txt" 2>&1 &
writer_pid=$!
"$client" --name Reader --instance "${instance}_skip" --timeout-ms 20000 --channel D --channel-log > "$work/Reader_skip.txt" 2>&1 \
  || { cat "$work/Reader_skip.txt"; echo "FAIL: the skip run's reader"; exit 1; }
wait "$writer_pid" && wait "$master_pid" || { cat "$work/master_skip.txt" "$work/Writer_skip.txt"; echo "FAIL: the skip run"; exit 1; }
expect Reader_skip.txt "channel-read channel=D runnable=R instance=3 iteration=5 status=not-written writer=2 writer-iteration=5"
expect Reader_skip.txt "channel-read channel=D runnable=R instance=3 iteration=6 status=ok writer=2 writer-iteration=6"
expect Reader_skip.txt "channel-read channel=D runnable=R instance=3 iteration=7 status=not-written writer=2 writer-iteration=7"
expect Reader_skip.txt "channel-read channel=D runnable=R instance=3 iteration=8 status=ok writer=2 writer-iteration=8"
expect Reader_skip.txt "channel-reads ok=8 no-version-yet=0 not-written=2 wrong=0 overwritten=0"
if grep -q channel-too-big-write-taken "$work/Writer_skip.txt"; then echo "FAIL: a too-big writeAs succeeded"; exit 1; fi
echo "PASS"
