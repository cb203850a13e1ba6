#!/bin/sh
# Builds the six reader fuzzers with clang (libFuzzer, ASan, UBSan) in their own build folder and
# runs each for SECONDS (default 60), one after the other, one process each (the machine is
# shared). New corpus entries go to BUILD/corpus/<reader>/, crashes to BUILD/artifacts/.
#
#   fuzz/run.sh [SECONDS]           TACTUS_FUZZ_BUILD=dir (default build-fuzz), TACTUS_FUZZ_TARGETS="schedule log"
#
# Exit status: 0 no finding, 1 a fuzzer found a crash or a broken invariant, 2 build failure.
set -u
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TACTUS_FUZZ_BUILD:-$root/build-fuzz}
targets=${TACTUS_FUZZ_TARGETS:-schedule log graph wcet recording replay_segment}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$build" "$root" --buildtype=debugoptimized \
    -Dfuzzing=enabled -Dbenchmarks=false -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dcpp_args=-fno-sanitize-recover=all || exit 2
fi
for t in $targets; do
  ninja -C "$build" -j2 "fuzz/fuzz-$t" || exit 2
done

status=0
mkdir -p "$build/artifacts"
for t in $targets; do
  mkdir -p "$build/corpus/$t"
  echo "== fuzz-$t for $seconds s"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
    "$build/corpus/$t" "$root/fuzz/corpus/$t" 2>&1 | tee "$build/fuzz-$t.log" | grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|ERROR|stat::number_of_executed_units|invariant|SUMMARY" 
  if grep -qE "ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|fuzz invariant broken|runtime error" "$build/fuzz-$t.log"; then
    echo "fuzz-$t: FINDING, see $build/fuzz-$t.log and $build/artifacts/"
    status=1
  fi
done
exit $status
