#!/usr/bin/env bash
# Compiles a fixed set of graphs with one tactus-compile binary and writes every schedule file, JSON
# report (compile time removed) and message into OUTDIR, so two builds can be compared with diff -r.
#
# usage: tests/compiler/same_output.sh TACTUS_COMPILE GEN_GRAPH OUTDIR
#   graphs: schedules/*.yaml, every fixture under tests/ (accepted or not: the messages are compared
#   too), 20 STG graphs (tests/compiler/stg_to_yaml.py, P = 2/4/8/16), two tactus-gen-graph graphs
#   (fusion on by default there); options: default, --search-steps 20000 with -j1 and -j2, -nrf, -wt 3ms.
# Wall-clock figures (compile time, time to the best schedule) are masked. Compare two builds:
#   same_output.sh /work/main/build/compiler/tactus-compile GEN /tmp/a; same_output.sh build/... GEN /tmp/b
#   diff -r /tmp/a /tmp/b
set -u
compile=$(realpath "$1"); gen=$(realpath "$2"); out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/graphs"
graphs=()
for g in "$root"/schedules/*.yaml "$root"/tests/compiler/fixtures/*.yaml "$root"/tests/gpu/graphs/*.yaml; do
  graphs+=("$g")
done
stgs=(rand0000 rand0007 rand0013 rand0021 rand0030 rand0042 rand0057 rand0058 rand0066 rand0079
      rand0085 rand0093 rand0101 rand0117 rand0124 rand0133 rand0146 rand0152 rand0166 rand0179)
i=0
for s in "${stgs[@]}"; do
  P=$(( 2 << (i % 4) )); i=$((i + 1))
  python3 "$root/tests/compiler/stg_to_yaml.py" "/work/shared/data/stg50/graphs/$s.stg" "$P" > "$out/graphs/${s}_P$P.yaml"
  graphs+=("$out/graphs/${s}_P$P.yaml")
done
"$gen" 600 -s 3 -o "$out/graphs/gen600.yaml"; graphs+=("$out/graphs/gen600.yaml")
"$gen" 150 -s 5 -o "$out/graphs/gen150.yaml"; graphs+=("$out/graphs/gen150.yaml")
configs=("default:" "steps1:--search-steps 20000 -j 1" "steps2:--search-steps 20000 -j 2" "nrf:-nrf" "wt:-wt 3ms")
for g in "${graphs[@]}"; do
  base=$(basename "$g" .yaml)
  case "$g" in */fixtures/*) base="fixture_$base" ;; esac
  for c in "${configs[@]}"; do
    name=${c%%:*}; opts=${c#*:}
    o="$out/$base.$name"
    # shellcheck disable=SC2086
    (cd "$root" && "$compile" -i "$g" -o "$o.tsched" -k "$o.json" $opts > "$o.stdout" 2> "$o.stderr"; echo "exit $?" >> "$o.stderr")
    # wall-clock figures differ from run to run: compile time, time to the best schedule
    sed -i -E -e 's/^compile time .*$/compile time X/' -e 's/best after [0-9.]+s/best after Xs/' "$o.stdout"
    [ -f "$o.json" ] && sed -i -E -e 's/"compile_time_ms": [0-9.e+-]+/"compile_time_ms": X/' \
      -e 's/"seconds_to_best": [0-9.e+-]+/"seconds_to_best": X/' "$o.json"
    sed -i -E "s|$out|OUT|g" "$o.stdout" "$o.stderr"
  done
done
