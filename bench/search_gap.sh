#!/bin/sh
# search_gap.sh: the gap between the schedule and its lower bound after 0, 1 and 10 s of search.
#
# usage: bench/search_gap.sh BUILD_DIR [N [BUDGET ...]]   (default: N 5000, budgets 0 1 10)
# Generates the N-runnable synthetic graph (tactus-gen-graph), compiles it with -t BUDGET and
# prints from the JSON report the schedule length, the lower bound, the gap between them, the
# first schedule's length, the search steps and when the best schedule was found.
set -eu
build=${1:?usage: search_gap.sh BUILD_DIR [N [BUDGET ...]]}
n=${2:-5000}
[ $# -gt 2 ] && shift 2 || set -- 0 1 10
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bench/tactus-gen-graph" "$n" -o "$tmp/g.yaml"
printf '%8s %8s %14s %14s %8s %14s %10s %10s\n' N budget 'length ns' 'bound ns' gap 'first ns' steps 'best at'
for t in "$@"; do
  "$build/compiler/tactus-compile" -i "$tmp/g.yaml" -o "$tmp/g.tsched" -k "$tmp/g.json" -t "$t" >/dev/null
  awk -v n="$n" -v t="$t" '
    /"schedule_length_ns"/ { gsub(/[^0-9]/, "", $2); len = $2 }
    $1 == "\"lower_bound_ns\":" { gsub(/[^0-9]/, "", $2); lb = $2 }
    /"first_schedule_length_ns"/ { gsub(/[^0-9]/, "", $2); first = $2 }
    /"search_steps"/ { gsub(/[^0-9]/, "", $2); steps = $2 }
    /"seconds_to_best"/ { gsub(/[^0-9.]/, "", $2); best = $2 }
    END {
      if (first == "") { first = len; steps = 0; best = 0 }
      printf "%8d %7ss %14d %14d %7.3f%% %14d %10d %9.3fs\n", n, t, len, lb, 100.0 * (len - lb) / lb, first, steps, best
    }' "$tmp/g.json"
done
