#!/usr/bin/env bash
# bench/ab_runtime.sh against the benchmarks' real output (their --quick versions, AB_QUICK=1, one
# round): every figure is read for both builds, and a figure one build's benchmark does not print
# (an older build: here a release benchmark whose block-median line is filtered out) shows as '-'.
#   ab_runtime_test.sh BUILD_DIR STG_DATA
set -uo pipefail
build=$1
stg=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/tactus-ab-runtime-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ ! -d "$stg/graphs" ]; then
  echo "SKIP: no STG data at $stg (stg-makespan needs it)"
  exit 77
fi
problems=0
figures="handoff.p50_ns handoff.p99_ns handoff.framed_p50_ratio release.bare_p99_us release.p50_us release.p99_us
  first_start.p50_us first_start.p99_us release.block_p99_median_us release.block_p99_over_bare
  makespan.over_plan_ns_per_run makespan.over_bare_ns_per_run switch.rollover_p50_us switch.rollover_p99_us
  switch.swap_p50_us switch.swap_runtime_p50_us switch.rollover_from_call_p50_us"
num='-?[0-9]+(\.[0-9]+)?'
expect() {  # FILE PATTERN WHAT
  if ! grep -qE "$2" "$1"; then
    echo "FAIL: $3: no line matching '$2' in $1:"
    sed 's/^/  | /' "$1"
    problems=$((problems + 1))
  fi
}

# 1. The same build on both sides: every figure has a value for A, for B and a ratio.
AB_QUICK=1 bash "$root/bench/ab_runtime.sh" "$build" "$build" "$stg" 1 >"$tmp/same.out" 2>"$tmp/same.err"
rc=$?
cat "$tmp/same.out"
[ $rc -eq 0 ] || { echo "FAIL: ab_runtime exited $rc:"; cat "$tmp/same.err"; problems=$((problems + 1)); }
for f in $figures; do
  expect "$tmp/same.out" "^${f//./\\.} +$num +$num +$num " "figure $f, both builds"
done
if grep -q "does not print it" "$tmp/same.out"; then
  echo "FAIL: a figure of the same build on both sides was missing on one"
  problems=$((problems + 1))
fi

# 2. B: the same build but for a release benchmark that does not print the block-median line.
old=$tmp/old
mkdir -p "$old/compiler" "$old/master" "$old/bench/runtime" "$old/bench/switching"
ln -s "$build/compiler/tactus-compile" "$old/compiler/"
ln -s "$build/master/tactus-master" "$old/master/"
ln -s "$build/client_lib" "$old/client_lib"
ln -s "$build/bench/switching/switch-bench" "$old/bench/switching/"
for p in runtime-handoff-bench tactus-bench-client stg-makespan; do ln -s "$build/bench/runtime/$p" "$old/bench/runtime/"; done
printf '#!/bin/bash\nset -o pipefail\n"%s" "$@" | grep -v "^median over"\n' "$build/bench/runtime/runtime-release-bench" \
  >"$old/bench/runtime/runtime-release-bench"
chmod +x "$old/bench/runtime/runtime-release-bench"
AB_QUICK=1 bash "$root/bench/ab_runtime.sh" "$build" "$old" "$stg" 1 >"$tmp/old.out" 2>"$tmp/old.err"
rc=$?
cat "$tmp/old.out"
[ $rc -eq 0 ] || { echo "FAIL: ab_runtime against the older build exited $rc:"; cat "$tmp/old.err"; problems=$((problems + 1)); }
for f in release.block_p99_median_us release.block_p99_over_bare; do
  expect "$tmp/old.out" "^${f//./\\.} +- +- +- .*\(one build does not print it\)$" "figure $f, missing on B"
done
for f in release.p50_us release.p99_us switch.swap_p50_us; do
  expect "$tmp/old.out" "^${f//./\\.} +$num +$num +$num " "figure $f, both builds"
done

echo "$problems problem(s)"
[ $problems -eq 0 ]
