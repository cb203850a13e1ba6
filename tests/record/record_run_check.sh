#!/usr/bin/env bash
# Record and compare real runs: race.yaml (tests/channels) run twice with the real master and
# clients, each with --record; every recorded version holds its writer run's payload (an
# independent reader, recording_tool.py); the two recordings compare equal (exit 0); one altered
# byte is named by --compare-recordings (exit 1); a damaged file is refused naming file and offset
# (exit 2); a non-empty folder is refused without --record-overwrite; the listing and the export.
# usage: record_run_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT TEST_CLIENT TOOL GRAPH
set -u
compile=$1 master=$2 report=$3 client=$4 tool=$5 graph=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
run() {  # NAME MASTER-OPTIONS...
  local name=$1 instance=rec_$$_$1
  shift
  "$master" -C -s "$work/g.tsched" -e 100 -D "$instance" "$@" > "$work/master_$name.txt" 2>&1 &
  local master_pid=$! pids=()
  for c in Writer Reader; do
    "$client" --name "$c" --instance "$instance" --busy-us 200 --timeout-ms 20000 --channel D > "$work/${c}_$name.txt" 2>&1 &
    pids+=($!)
  done
  local status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  wait "$master_pid" || status=$?
  return $status
}
run a --record "$work/a" || { cat "$work/master_a.txt"; fail "the recorded run a"; }
run b --record "$work/b" --record-required || { cat "$work/master_b.txt"; fail "the recorded run b"; }
grep -q "recorded [0-9]* channel versions to $work/a/soc0.trec" "$work/master_a.txt" || { cat "$work/master_a.txt"; fail "run a did not say what it recorded"; }
python3 "$tool" payloads "$work/a/soc0.trec" || fail "a recorded version is not its writer run's"
python3 "$tool" payloads "$work/b/soc0.trec" || fail "a recorded version is not its writer run's"
"$report" --recording "$work/a" > "$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "--recording"; }
grep -Eq "channel 'D': (8[0-9]|9[0-9]|100) versions, [0-9]+ bytes, iterations 0\.\.(9[0-9])" "$work/list.txt" || { cat "$work/list.txt"; fail "the listing"; }
grep -q "ended cleanly" "$work/list.txt" || { cat "$work/list.txt"; fail "the listing's end"; }
grep -Eq "^  (8[0-9]|9[0-9]|100) versions, (8[0-9]|9[0-9]|100) releases" "$work/list.txt" || { cat "$work/list.txt"; fail "the releases"; }
"$report" --compare-recordings "$work/a" "$work/b" > "$work/same.txt" 2>&1 || { cat "$work/same.txt"; fail "two runs' recordings differ"; }
grep -q "^same:" "$work/same.txt" || fail "the comparison did not say same"
# A run that wrote one byte otherwise: named by channel, writer run, iteration and byte offset.
cp -r "$work/b" "$work/c"
python3 "$tool" alter "$work/c/soc0.trec" 3 17
"$report" --compare-recordings "$work/a" "$work/c" > "$work/diff.txt" 2>&1
[ $? = 1 ] || { cat "$work/diff.txt"; fail "an altered version compared equal"; }
grep -q "^different: schedule 'Race' channel 'D', writer instance [0-9]*, iteration [0-9]*: byte 17 is 0x" "$work/diff.txt" \
  || { cat "$work/diff.txt"; fail "the difference was not named"; }
# A damaged byte (no CRC fixed): refused, named by file and offset, exit 2.
cp -r "$work/b" "$work/d"
printf '\xff' | dd of="$work/d/soc0.trec" bs=1 seek=200 conv=notrunc 2> /dev/null
"$report" --recording "$work/d" > "$work/damaged.txt" 2>&1
[ $? = 2 ] || { cat "$work/damaged.txt"; fail "a damaged recording was not refused with 2"; }
grep -q "$work/d/soc0.trec: offset [0-9]*: .*checksum mismatch" "$work/damaged.txt" || { cat "$work/damaged.txt"; fail "the damage was not named"; }
# Export: one raw file per version and the stamps.
"$report" --recording "$work/a" --export-channel D --export-dir "$work/out" > "$work/export.txt" 2>&1 || { cat "$work/export.txt"; fail "export"; }
[ "$(ls "$work/out" | grep -c '\.bin$')" -ge 80 ] && [ -f "$work/out/D.csv" ] || { ls "$work/out"; fail "exported files"; }
# A folder with a recording is refused (before any client), and replaced with --record-overwrite.
"$master" -C -s "$work/g.tsched" -e 1 -D rec_$$_x --record "$work/a" > "$work/refused.txt" 2>&1
[ $? = 2 ] || { cat "$work/refused.txt"; fail "--record into a non-empty folder was not refused"; }
grep -q "the folder exists and is not empty" "$work/refused.txt" || { cat "$work/refused.txt"; fail "the refusal"; }
run a2 --record "$work/a" --record-overwrite || { cat "$work/master_a2.txt"; fail "--record-overwrite"; }
"$report" --compare-recordings "$work/a" "$work/b" > /dev/null || fail "the overwritten recording"
echo "PASS"
