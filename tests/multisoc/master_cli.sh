#!/usr/bin/env bash
# tactus-compile and tactus-master on a multi-SoC graph, as a user types them: the schedule file
# (format 2) with its SoCs and cross-SoC latency, the report's cross-SoC edges, and the master's
# refusals (no -x, an unknown SoC, -x on a schedule of one machine, under -N schedules on other SoCs
# and --policy on a follower, in a build without Cyclone DDS what to install) and one SoC's master waiting for its own clients only, leaving nothing in /dev/shm.
# usage: master_cli.sh TACTUS_COMPILE TACTUS_MASTER SOURCE_ROOT
set -euo pipefail
compile=$1 master=$2 src=$3
export CYCLONEDDS_URI="file://$src/samples/multisoc/loopback.xml"
work=$(mktemp -d)
instance="multisoc_cli_$$"
trap 'rm -rf "$work"' EXIT
fail() { echo "master_cli: $*" >&2; exit 1; }

"$compile" -i "$src/samples/multisoc/two_soc.yaml" -o "$work/two.tsched" --cross-soc-latency 150us >"$work/report.txt" ||
  fail "the two-SoC sample does not compile"
head -n 1 "$work/two.tsched" | grep -qx "tactus-schedule 2" || fail "a multi-SoC schedule is not format 2"
grep -q "cross_soc_latency_ns=150000" "$work/two.tsched" || fail "the cross-SoC latency is not in the file"
grep -q "^soc id=1 name=SocB$" "$work/two.tsched" || fail "SocB is not in the file"
grep -q "cross-SoC edges   2 (transfers 300us of the critical path" "$work/report.txt" ||
  { cat "$work/report.txt"; fail "the report does not list the cross-SoC edges"; }
"$compile" -i "$src/schedules/minimal_cpu.yaml" -o "$work/one.tsched" >/dev/null
head -n 1 "$work/one.tsched" | grep -qx "tactus-schedule 1" || fail "a schedule of one machine is not format 1"

refused() {  # refused TEXT ARGS...: tactus-master ARGS exits 2 with TEXT on standard error
  local text=$1; shift
  local code=0
  "$master" -D "$instance" -e 1 -t 1000000 "$@" >/dev/null 2>"$work/err.txt" || code=$?
  [ "$code" = 2 ] || { cat "$work/err.txt"; fail "tactus-master $* exited $code, not 2"; }
  grep -qF -- "$text" "$work/err.txt" || { cat "$work/err.txt"; fail "tactus-master $*: no '$text'"; }
}
refused "schedule 'TwoSoc' is a multi-SoC schedule (SoCs 'SocA', 'SocB'): start one master per SoC with -x SOC" \
  -s "$work/two.tsched"
refused "-x 'SocC' names no SoC of schedule 'TwoSoc' (its SoCs: 'SocA', 'SocB')" -s "$work/two.tsched" -x SocC
refused "--primary 'Nope' names no SoC of schedule 'TwoSoc'" -s "$work/two.tsched" -x SocA --primary Nope
refused "-x 'SocA' given, but schedule 'MinimalCpu' has no SoCs" -s "$work/one.tsched" -x SocA
refused "--dds-domain expects a domain id 0..230" -s "$work/two.tsched" -x SocA --dds-domain 231
# Under a schedule manager (-N, no -e): the schedules must run on the same SoCs, and --policy is the
# primary's alone (a follower follows its switches).
refused_managed() {  # refused_managed TEXT ARGS...: as refused, without -e (which -N refuses)
  local text=$1; shift
  local code=0
  "$master" -D "$instance" -N mgr -t 1000000 "$@" >/dev/null 2>"$work/err.txt" || code=$?
  [ "$code" = 2 ] || { cat "$work/err.txt"; fail "tactus-master -N mgr $* exited $code, not 2"; }
  grep -qF -- "$text" "$work/err.txt" || { cat "$work/err.txt"; fail "tactus-master -N mgr $*: no '$text'"; }
}
sed -e 's/Identifier: 12/Identifier: 13/' -e 's/^TwoSoc:/TwoSoc13:/' -e 's/SocB/SocC/g' \
  "$src/samples/multisoc/two_soc.yaml" >"$work/two_c.yaml"
"$compile" -i "$work/two_c.yaml" -o "$work/two_c.tsched" >/dev/null
refused_managed "schedule 'TwoSoc13' runs on SoCs 'SocA', 'SocC', schedule 'TwoSoc' on others" \
  -s "$work/two.tsched,$work/two_c.tsched" -x SocA
sed -e 's/Identifier: 12/Identifier: 14/' -e 's/^TwoSoc:/TwoSoc14:/' "$src/samples/multisoc/two_soc.yaml" >"$work/two14.yaml"
"$compile" -i "$work/two14.yaml" -o "$work/two14.tsched" >/dev/null
refused_managed "--policy is given to the master of the primary SoC 'SocA' only: SoC 'SocB' follows its switches" \
  -s "$work/two.tsched,$work/two14.tsched" -x SocB --policy "$work/none.yaml"
if ls /dev/shm | grep -q "$instance"; then fail "a refused managed master left /dev/shm entries"; fi
# The whole help first: `grep -q` in a pipe leaves at its first match, and the master's next write
# then fails on the closed pipe (the help is longer than one 4 KiB write), which pipefail reports.
help=$("$master" --help) || fail "tactus-master --help failed"
grep -q -- "--dds-domain" <<< "$help" || fail "--help does not show --dds-domain"
grep -q -- "--switch-lead-us" <<< "$help" || fail "--help does not show --switch-lead-us"
# The run itself: a build without Cyclone DDS says what to install (exit 2); one with it runs SoC
# SocA's part on its own segment (`<instance>.soc0`) and, with no client, ends at -t naming them.
code=0
"$master" -D "$instance" -e 1 -t 300000 -s "$work/two.tsched" -x SocA >/dev/null 2>"$work/err.txt" || code=$?
if grep -qF "install Cyclone DDS (Debian: apt-get install cyclonedds-dev" "$work/err.txt"; then
  [ "$code" = 2 ] || fail "tactus-master -x SocA without the link exited $code, not 2"
else
  [ "$code" = 1 ] || { cat "$work/err.txt"; fail "tactus-master -x SocA without clients exited $code, not 1"; }
  grep -qF "client 'Sensor' did not come" "$work/err.txt" || { cat "$work/err.txt"; fail "no client named"; }
  if grep -qF "Planner" "$work/err.txt"; then fail "SocA's master waited for SocB's client 'Planner'"; fi
fi
if ls /dev/shm | grep -q "$instance"; then fail "a master left /dev/shm entries"; fi
echo "master_cli: ok"
