#!/bin/bash
# ab_runtime.sh: the runtime benchmarks of two builds, interleaved, and the medians side by side.
#
# usage: bench/ab_runtime.sh BUILD_A BUILD_B STG_DATA [RUNS]      (RUNS: default 5)
# Each build's own benchmark programs run against its own master, client library and compiler
# (the event log and the segment layout may differ between them). A round runs every benchmark
# once for each build, A first in odd rounds and B first in even ones, so that a drift of the
# machine's load falls on both alike. Prints per figure both medians over the rounds, B / A
# (lower is better for every figure here) and every round's value. The figures:
#   hand-off   runtime-handoff-bench: tactus's p50 and p99 hand-off (ns, median over its
#              repetitions: a mean is decided by one repetition the machine stalled, either build's
#              p99 going from 0.5 to 150-210 us in one of five), and its median ratio to the bare
#              spin loop framed like the chain (measured in the same run)
#   release    runtime-release-bench (RELEASE_FRAMES frames, default 1000; a p99 of 1000 frames
#              rests on its 10 slowest): tactus release p50 and p99, first runnable start p50
#              and p99 (us); the bare loop's p99, the same code in both builds, so its B / A is
#              the noise floor of a p99 here; the median over the run's blocks of each block's
#              release p99 (a stall of the machine moves it less than the pooled p99) and its ratio
#              to the bare loop's, measured in the same run
#   makespan   stg-makespan (10 graphs, unit 100us): mean over-plan per runnable and mean over the
#              bare run per runnable (ns)
#   switch     switch-bench: rollover p50 and p99, rollover from the manager's call p50, complete
#              swap p50 and its runtime's part p50 (from the later of A's last end and the stop
#              call: the part no stop-call timing moves) (us)
# AB_QUICK=1 runs each benchmark's --quick version: figures of no worth, only to check this script
# against the benchmarks' output (tests/bench/ab_runtime_test.sh).
set -euo pipefail
a=${1:?usage: ab_runtime.sh BUILD_A BUILD_B STG_DATA [RUNS]}
b=${2:?usage: ab_runtime.sh BUILD_A BUILD_B STG_DATA [RUNS]}
stg=${3:?usage: ab_runtime.sh BUILD_A BUILD_B STG_DATA [RUNS]}
runs=${4:-5}
release_frames=${RELEASE_FRAMES:-1000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
quick=()
[ -n "${AB_QUICK:-}" ] && quick=(--quick)
# The median of the numbers in a space-separated string (awk), for every program below.
awk_median='function median(s,   a, k, i, j, t) {
  k = split(s, a, " ")
  for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) {t = a[i]; a[i] = a[j]; a[j] = t}
  return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}'

# One run of every benchmark for build $1, its figures appended to $out/$2 as "name value" lines.
bench_once() {
  local build=$1 tag=$2 log
  local args=(--compile "$build/compiler/tactus-compile" --master "$build/master/tactus-master" "${quick[@]}")
  export LD_LIBRARY_PATH=$build/client_lib
  log=$out/$tag.handoff
  "$build/bench/runtime/runtime-handoff-bench" "${args[@]}" --client "$build/bench/runtime/tactus-bench-client" >"$log" 2>&1 ||
    { echo "ab_runtime: $tag hand-off failed:"; cat "$log"; exit 1; } >&2
  awk "$awk_median"'
       /^  tactus, 2 clients, 2 cores/ {p50 = p50 " " $(NF-3); p99 = p99 " " $(NF-2)}
       /over .* repetitions, medians/ {for (i=1;i<=NF;i++) if ($i=="p50" && $(i+1)=="ratio") {r=$(i+2); sub(",","",r)}}
       END {if (p50 != "") printf "handoff.p50_ns %.0f\nhandoff.p99_ns %.0f\n", median(p50), median(p99); printf "handoff.framed_p50_ratio %s\n", r}' \
    "$log" >>"$out/$tag"
  log=$out/$tag.release
  "$build/bench/runtime/runtime-release-bench" "${args[@]}" --client "$build/bench/runtime/tactus-bench-client" \
    --frames "$release_frames" >"$log" 2>&1 ||
    { echo "ab_runtime: $tag release failed:"; cat "$log"; exit 1; } >&2
  awk '/bare loop \(clock_nanosleep/ {print "release.bare_p99_us", $(NF-1)}
       /tactus release \(master/ {print "release.p50_us", $(NF-2); print "release.p99_us", $(NF-1)}
       /^median over [0-9]+ blocks of their p99/ {print "release.block_p99_median_us", $(NF-3); print "release.block_p99_over_bare", $NF}
       /tactus first runnable start/ {print "first_start.p50_us", $(NF-2); print "first_start.p99_us", $(NF-1)}' \
    "$log" >>"$out/$tag"
  log=$out/$tag.makespan
  "$build/bench/runtime/stg-makespan" "${args[@]}" "$stg" --units 100us --graphs 10 >"$log" 2>&1 ||
    { echo "ab_runtime: $tag stg-makespan failed:"; cat "$log"; exit 1; } >&2
  awk '/^  rand[0-9]/ {over+=$5; bare+=$NF; n++}
       END {if (n) printf "makespan.over_plan_ns_per_run %.0f\nmakespan.over_bare_ns_per_run %.0f\n", over/n, bare/n}' \
    "$log" >>"$out/$tag"
  log=$out/$tag.switch
  "$build/bench/switching/switch-bench" "${args[@]}" --client "$build/bench/runtime/tactus-bench-client" >"$log" 2>&1 ||
    { echo "ab_runtime: $tag switch-bench failed:"; cat "$log"; exit 1; } >&2
  awk '/^  rollover  / {for (i=1;i<=NF;i++) {if ($i=="p50" && !a++) print "switch.rollover_p50_us", $(i+1); if ($i=="p99" && !b++) print "switch.rollover_p99_us", $(i+1)}}
       /^  complete swap  / {for (i=1;i<=NF;i++) if ($i=="p50") {print "switch.swap_p50_us", $(i+1); break}}
       /^  complete swap, the runtime.s part/ {own = 1; next}
       own && /hyperepoch switches/ {for (i=1;i<=NF;i++) if ($i=="p50") {print "switch.swap_runtime_p50_us", $(i+1); break}; own = 0}
       /from the manager.s call/ {call = 1; next}
       call && /hyperepoch switches/ {for (i=1;i<=NF;i++) if ($i=="p50") {print "switch.rollover_from_call_p50_us", $(i+1); break}; call = 0}' \
    "$log" >>"$out/$tag"
}

for ((r = 1; r <= runs; r++)); do
  if ((r % 2 == 1)); then order="A B"; else order="B A"; fi
  for side in $order; do
    if [ "$side" = A ]; then bench_once "$a" A; else bench_once "$b" B; fi
  done
  echo "ab_runtime: round $r of $runs done" >&2
done

printf '%-34s %12s %12s %8s   %s\n' "figure (median of $runs)" A B "B / A" "every round, A | B"
awk "$awk_median"'
  FNR == 1 {side = (FILENAME ~ /\/A$/) ? "A" : "B"}
  {v[side, $1] = v[side, $1] " " $2; if (!($1 in seen)) {seen[$1] = 1; order[++n] = $1}}
  END {
    for (i = 1; i <= n; i++) {
      if (v["A", order[i]] == "" || v["B", order[i]] == "") {  # a benchmark of one build that predates the figure
        printf "%-34s %12s %12s %8s  %s |%s (one build does not print it)\n", order[i], "-", "-", "-", v["A", order[i]], v["B", order[i]]
        continue
      }
      ma = median(v["A", order[i]]); mb = median(v["B", order[i]])
      printf "%-34s %12.2f %12.2f %8.2f  %s |%s\n", order[i], ma, mb, (ma != 0 ? mb / ma : 0), v["A", order[i]], v["B", order[i]]
    }
  }' "$out/A" "$out/B"
