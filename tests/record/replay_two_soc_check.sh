#!/usr/bin/env bash
# Record and replay a two-SoC run bit-identically: replay_two_soc.yaml (two masters, SocA the
# primary and SocB, linked over loopback Cyclone DDS; two clients on each SoC, a source writing fresh
# random bytes and a client writing a function of what it read; dependencies crossing both ways)
# recorded with --record-required, one file per SoC in one folder. Each SoC's file holds clock
# offset records, and tactus-report --merged-releases puts both SoCs' releases on the primary's
# clock. Replayed twice at real time and once at --replay-rate 0 (both masters --replay, each
# replay recorded): every replay's recording holds every version of the original, per SoC file,
# byte-identical; a fresh run compares different.
# usage: replay_two_soc_check.sh TACTUS_COMPILE TACTUS_MASTER TACTUS_REPORT REPLAY_CLIENT GRAPH [REPLAYS]
set -u
compile=$1 master=$2 report=$3 client=$4 graph=$5 replays=${6:-2}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$compile" -q -i "$graph" -o "$work/g.tsched" > "$work/compile.txt" 2>&1 || { cat "$work/compile.txt"; exit 1; }
export TACTUS_RECORD_POLL_US=200
# Loopback only (as tests/multisoc), before any master joins DDS.
CYCLONEDDS_URI="file://$(cd "$(dirname "$0")/../.." && pwd)/samples/multisoc/loopback.xml"
export CYCLONEDDS_URI
domain=73  # this test's own DDS domain (tests/multisoc use 31..54)
run() {  # NAME PRIMARY-OPTIONS -- OPTIONS OF BOTH MASTERS...
  local name=$1 instance=replay2_$$_$1 primary=()
  shift
  while [ "$1" != -- ]; do primary+=("$1"); shift; done
  shift
  local pids=() masters=() soc
  for soc in SocA SocB; do
    local extra=()
    [ $soc = SocA ] && extra=("${primary[@]}")
    "$master" -C -s "$work/g.tsched" -x $soc -D "$instance" --dds-domain $domain -a 20 -t 20000000 \
      ${extra[@]+"${extra[@]}"} "$@" > "$work/master_${name}_$soc.txt" 2>&1 &
    masters+=($!)
  done
  local c
  for c in SensorA:RawA ProcA:RawA,MidA SensorB:RawB ProcB:RawB,MidB; do
    local channels=() ch
    IFS=, read -r -a channels <<< "${c#*:}"
    local args=()
    for ch in "${channels[@]}"; do args+=(--channel "$ch"); done
    "$client" --name "${c%%:*}" --instance "$instance" --busy-us 100 --timeout-ms 20000 "${args[@]}" \
      > "$work/${c%%:*}_$name.txt" 2>&1 &
    pids+=($!)
  done
  local status=0 p
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  for p in "${masters[@]}"; do wait "$p" || status=$?; done
  return $status
}
show() { tail -n 20 "$work"/master_"$1"_Soc?.txt; }
compare() {  # A B: the exit code of --compare-recordings, its output in $work/compare.txt
  "$report" --compare-recordings "$work/$1" "$work/$2" > "$work/compare.txt" 2>&1
}
run rec -e 40 -- --record "$work/rec" --record-required || { show rec; fail "the recorded run"; }
for soc in 0 1; do
  [ -f "$work/rec/soc$soc.trec" ] || { ls -l "$work/rec"; fail "no soc$soc.trec: not one file per SoC"; }
done
# The clocks: the primary's file says it is the primary's, the follower's holds its estimates.
"$report" --recording "$work/rec" --merged-releases "$work/merged.csv" > "$work/list.txt" 2>&1 ||
  { cat "$work/list.txt"; fail "--recording --merged-releases"; }
grep -q "clock: the primary SoC's" "$work/list.txt" || { cat "$work/list.txt"; fail "SoC 0's clock record"; }
grep -Eq "clock: the primary SoC 0's is this one's \+ -?[0-9]+ us within [0-9]+ us" "$work/list.txt" ||
  { cat "$work/list.txt"; fail "SoC 1's clock records"; }
# A channel of SocB is exported from SocB's file (every file names every channel).
"$report" --recording "$work/rec" --export-channel RawB --export-dir "$work/export" > "$work/export.txt" 2>&1
grep -q "exported 80 versions of channel 'RawB'" "$work/export.txt" || { cat "$work/export.txt"; fail "export of RawB"; }
# On the primary's clock both SoCs released all 40 iterations (120 frames), each frame's ideal
# release within 2 ms of the other SoC's: SocB maps the primary's starts onto its clock by its
# estimate, and one under 1 ms is taken as one clock (masters on one host), as the merge does.
awk -F, 'function abs(x) { return x < 0 ? -x : x }
  NR > 1 { key = $3 "," $4 "," $5; if ($1 == 0) a[key] = $6; else b[key] = $6 }
  END { n = 0; for (k in b) { if (!(k in a)) { print "SoC 1 released " k " alone"; exit 1 }
          if (abs(b[k] - a[k]) > 2000000) { print "frame " k ": ideal releases " a[k] " and " b[k]; exit 1 }; n++ }
        for (k in a) if (!(k in b)) { print "SoC 0 released " k " alone"; exit 1 }
        if (n != 120) { print n " frames released by both, not 120"; exit 1 } }' "$work/merged.csv" ||
  fail "the merged releases (above)"
# The replays at real time, then one at --replay-rate 0 on both SoCs (the primary free-running,
# the follower following its starts at once; every release waits for the copier).
for k in $(seq 1 "$replays") fast; do
  rate=()
  [ "$k" = fast ] && rate=(--replay-rate 0)
  run "replay$k" -- --replay "$work/rec" ${rate[@]+"${rate[@]}"} --record "$work/replay$k" --record-required ||
    { show "replay$k"; fail "replay $k"; }
  for soc in 0 1; do
    grep -q "replayed [0-9]* source versions of 2 source instances from $work/rec/soc$soc.trec (40 iterations" \
      "$work"/master_replay"$k"_Soc?.txt || { show "replay$k"; fail "replay $k of SoC $soc did not say what it replayed"; }
  done
  compare rec "replay$k" || { cat "$work/compare.txt"; fail "replay $k differs from the recording"; }
  # Every version of both SoCs, none missing on either side (a follower's recorder that started
  # after its first iteration ran left that iteration out, and still compared equal).
  for soc in 0 1; do
    grep -q "^SoC $soc: 120 versions identical (0 only in $work/rec, 0 only in $work/replay$k)" "$work/compare.txt" ||
      { cat "$work/compare.txt"; fail "replay $k: SoC $soc's versions are not all in both recordings"; }
  done
done
# A run of its own (fresh random bytes at the sources) differs.
run other -e 40 -- --record "$work/other" || { show other; fail "the second recorded run"; }
compare rec other
[ $? = 1 ] || { cat "$work/compare.txt"; fail "two runs with fresh random sources compared equal"; }
echo "PASS"
