#!/usr/bin/env bash
# The pipeline sample as a user runs it: its launch file (tactus-launch compiles the graph, starts
# the master and the four clients) for 50 iterations; every client ends with the frame limit,
# every stage saw the frame the plan names (0 of another frame), the Planner decided on 49 track
# sets (none in no iteration: the first iteration's Plan reads that iteration's last frame), and
# the schedule tactus-launch kept beside the log gives tactus-report the chain's occurrences.
# usage: check_pipeline.sh TACTUS_LAUNCH SAMPLE_PIPELINE TACTUS_REPORT SAMPLE_DIR
set -u
launch=$1 sample=$2 report=$3 dir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$dir/pipeline.yaml" "$work/"
# The installed launch file finds the program on PATH; here it is the build's.
sed -e "s|command: \[tactus-sample-pipeline,|command: [$sample,|" -e "/^master:/a instance: pipeline_check_$$" \
  "$dir/launch.yaml" > "$work/launch.yaml"
PATH="$(dirname "$launch")/../compiler:$(dirname "$launch")/../master:$PATH" \
  timeout 60 "$launch" --no-color "$work/launch.yaml" > "$work/out.txt" 2>&1
rc=$?
fail() { cat "$work/out.txt"; echo "FAIL: $*"; exit 1; }
[ "$rc" = 0 ] || fail "tactus-launch exited $rc"
for c in Camera Detector Tracker Planner; do
  # (a loaded machine may make a frame late: the master says so, and the end message carries it)
  grep -Eq "^$c +\| $c: ran 50 hyperepoch iterations;( overruns: [^;]*;)? (150|50) runs" \
    "$work/out.txt" || fail "$c did not run its 50 iterations"
done
for c in Detector Tracker Planner; do
  grep -Eq "^$c +\| $c: .*, [0-9]+ versions of [A-Za-z]+ checked, 0 of another frame, 0 missing" "$work/out.txt" ||
    fail "$c saw another frame than the plan names, or none"
done
grep -Eq "^Planner +\| Planner: .*, 50 versions of Tracks checked" "$work/out.txt" || fail "Plan did not check 50 track sets"
[ -f "$work/pipeline.tlog" ] && [ -f "$work/pipeline.tsched" ] || fail "no log and schedule beside the launch file: $(ls "$work")"
"$report" "$work/pipeline.tlog" "$work/pipeline.tsched" --csv-of chains > "$work/chains.csv" 2> "$work/report.err" ||
  { cat "$work/report.err"; fail "tactus-report"; }
reactions=$(grep -c '^CameraToAct,reaction,' "$work/chains.csv")
ages=$(grep -c '^CameraToAct,age,' "$work/chains.csv")
[ "$ages" = 50 ] && [ "$reactions" -ge 147 ] || fail "chain occurrences: $reactions reactions, $ages data ages"
grep -E "^(Camera|Detector|Tracker|Planner) +\| (Camera|Detector|Tracker|Planner): " "$work/out.txt"
echo "chain CameraToAct: $reactions reactions, $ages data ages measured"
echo "PASS"
