#!/usr/bin/env bash
# Replay speed: replay_pipeline.yaml (three clients, three rates, period 20 ms) whose work fills
# 10% of its period (7 runs of 285 us per 20 ms iteration) run 100 iterations with --record, then
# replayed at --replay-rate 0 (each iteration as soon as the previous ended), also recorded. Prints
# both wall times (master start to the last process's exit), their ratio, and whether the replay
# compared bit-identical. A figure, never a timed assert.
# usage: bench/record/replay_speed.sh [BUILD_DIR]   (from the source folder, after a build; KEEP=1
# keeps the work folder: recordings, master outputs, and says where)
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "work: $work" >&2 || trap 'rm -rf "$work"' EXIT
"$build/compiler/tactus-compile" -q -i "$root/tests/record/replay_pipeline.yaml" -o "$work/g.tsched" > /dev/null || exit 1
run() {  # NAME MASTER-OPTIONS...: prints the wall ms
  local name=$1 instance=replay_bench_$$_$1
  shift
  local t0=$(date +%s%N)
  "$build/master/tactus-master" -C -s "$work/g.tsched" -D "$instance" "$@" > "$work/master_$name.txt" 2>&1 &
  local master_pid=$! pids=()
  for c in Sensor Filter Sink; do
    "$build/tests/record/tactus-replay-client" --name "$c" --instance "$instance" --busy-us 285 \
      --channel Raw --channel Mid --channel Out > "$work/${c}_$name.txt" 2>&1 &
    pids+=($!)
  done
  local status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  wait "$master_pid" || status=1
  local t1=$(date +%s%N)
  [ $status = 0 ] || { cat "$work/master_$name.txt" >&2; echo "run $name failed" >&2; exit 1; }
  echo $(((t1 - t0) / 1000000))
}
recorded=$(run rec -e 100 --record "$work/rec")
replayed=$(run fast --replay "$work/rec" --replay-rate 0 --record "$work/fast" ${REPLAY_E:+-e $REPLAY_E})
"$build/tools/tactus-report" --compare-recordings "$work/rec" "$work/fast" > "$work/compare.txt" 2>&1
same=$?
echo "replay-speed iterations=100 period-ms=20 work=10% recorded-ms=$recorded replay-rate0-ms=$replayed" \
  "ratio=$(awk -v a="$replayed" -v b="$recorded" 'BEGIN { printf "%.1f%%", 100 * a / b }')" \
  "bit-identical=$([ $same = 0 ] && echo yes || echo no)"
