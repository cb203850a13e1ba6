#!/usr/bin/env bash
# Runs `systemd-analyze verify` on the instance target and the unit templates, instantiated for
# instance "demo" and client "sensing", with the installed paths of the programs (BINDIR, the
# configured one the units were generated for) replaced by the built ones (verify checks that
# ExecStart's program exists), and checks what the units and the programs must agree on (notify
# readiness, exit status 2 not restarted, the env files). UNITS_DIR: the units generated from the
# *.in templates beside this script (build/samples/systemd). Exit 77 (skipped) when
# systemd-analyze is not installed.
# usage: check_units.sh UNITS_DIR BINDIR BUILT_TACTUS_MASTER BUILT_SAMPLE_TWO_CLIENT [BUILT_TACTUS_MANAGER]
set -euo pipefail
units=$1 bindir=$2 master=$3 sample=$4 manager=${5:-}
analyze=$(command -v systemd-analyze || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_units: $*" >&2; exit 1; }

for u in tactus@.target tactus-master@.service tactus-client-INSTANCE@.service tactus-master-multisoc.conf; do
  [ -f "$units/$u" ] || fail "missing $units/$u"
done
cp "$units/tactus@.target" "$work/"
sed -e "s#$bindir/tactus-master#$master#g" "$units/tactus-master@.service" >"$work/tactus-master@.service"
# The client template is installed once per instance, named for it (%j is the instance).
cp "$units/tactus-client-INSTANCE@.service" "$work/tactus-client-demo@.service"
for f in sensing planning; do
  grep -qx "TACTUS_CLIENT_PROGRAM=$bindir/tactus-sample-two-client" "$units/$f.env" \
    || fail "$f.env does not name the installed sample"
  ! grep -q "^TACTUS_INSTANCE=" "$units/$f.env" || fail "$f.env sets TACTUS_INSTANCE, which the unit's name sets"
done
[ -x "$sample" ] || fail "the sample $sample was not built"
# What the programs rely on: Type=notify (both send READY=1), status 2 not restarted (the
# master's and the sample's configuration errors), the client's instance from its unit's name.
for u in tactus-master@.service tactus-client-INSTANCE@.service; do
  grep -q "^Type=notify$" "$units/$u" || fail "$u is not Type=notify"
  grep -q "^RestartPreventExitStatus=2$" "$units/$u" || fail "$u restarts after exit status 2"
  grep -q "^PartOf=tactus@%[ij].target$" "$units/$u" || fail "$u is not PartOf= its instance's target"
done
grep -q "^WatchdogSec=" "$units/tactus-master@.service" || fail "the master unit has no WatchdogSec="
grep -q "^PartOf=tactus-master@%j.service$" "$units/tactus-client-INSTANCE@.service" \
  || fail "the client unit is not PartOf= its master (stopping the master would leave it waiting)"
grep -q "^Environment=TACTUS_INSTANCE=%j$" "$units/tactus-client-INSTANCE@.service" \
  || fail "the client unit does not set TACTUS_INSTANCE from its name"
# The schedules come from TACTUS_SCHEDULES (default the instance's own), so a master under a
# schedule manager lists its schedules in the env file instead of passing a second -s (refused).
master_unit="$units/tactus-master@.service"
grep -q '^Environment=TACTUS_SCHEDULES=/etc/tactus/%i.tsched$' "$master_unit" \
  || fail "the master unit does not default TACTUS_SCHEDULES to the instance's schedule"
[ "$(grep -c '^ExecStart=' "$master_unit")" = 1 ] || fail "the master unit needs exactly one ExecStart="
exec_start=$(grep '^ExecStart=' "$master_unit")
case "$exec_start" in
  *' -s ${TACTUS_SCHEDULES} '*) ;;
  *) fail "the master unit's ExecStart does not take -s \${TACTUS_SCHEDULES}: $exec_start" ;;
esac
[ "$(grep -o -- ' -s ' <<<"$exec_start" | wc -l)" = 1 ] || fail "the master unit passes -s twice: $exec_start"
# The master itself takes what the unit passes for a managed run: the unit's arguments with the
# env file's values, expanded as systemd does (${X} one word, $X split), checked by the master's
# own parser (a second -s is refused there): the master gets as far as reading the schedules,
# which do not exist here.
if [ -x "$master" ]; then
  args=${exec_start#ExecStart="$bindir"/tactus-master }
  args=${args//%i/demo}
  args=${args//'${TACTUS_SCHEDULES}'/$work/none-a.tsched,$work/none-b.tsched}
  args=${args//'$TACTUS_MASTER_ARGS'/-N modes -i 2}
  # shellcheck disable=SC2086  # split as systemd splits $TACTUS_MASTER_ARGS
  out=$("$master" $args 2>&1) && fail "the master started without its schedules: $out"
  grep -q "none-a.tsched" <<<"$out" \
    || fail "the master did not take the unit's managed-run arguments as far as its schedules: $out"
fi
# The multi-SoC drop-in: the network its DDS link needs (no private network, IP families), only to
# the addresses it allows, and AF_UNIX kept (the notify socket, the clients' notes).
dropin="$units/tactus-master-multisoc.conf"
for line in "PrivateNetwork=no" "IPAddressDeny=any" "IPAddressAllow=localhost" \
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK" \
    "Environment=CYCLONEDDS_URI=file:///etc/tactus/%i.dds.xml"; do
  grep -qx "$line" "$dropin" || fail "the multi-SoC drop-in lacks $line"
done
[ -n "$analyze" ] || { echo "check_units: systemd-analyze not found: the static checks passed, verify skipped"; exit 77; }

# verify loads an instance of a template from the directory it is given.
ln -s tactus@.target "$work/tactus@demo.target"
ln -s tactus-master@.service "$work/tactus-master@demo.service"
# The master of instance demo verified with the multi-SoC drop-in installed as the guide says.
mkdir "$work/tactus-master@demo.service.d"
cp "$dropin" "$work/tactus-master@demo.service.d/multisoc.conf"
ln -s tactus-client-demo@.service "$work/tactus-client-demo@sensing.service"
verify_units=(./tactus@demo.target ./tactus-master@demo.service ./tactus-client-demo@sensing.service)
if [ -n "$manager" ]; then
  sed -e "s#$bindir/tactus-manager#$manager#g" "$units/tactus-manager@.service" >"$work/tactus-manager@.service"
  ln -s tactus-manager@.service "$work/tactus-manager@demo.service"
  verify_units+=(./tactus-manager@demo.service)
fi
(cd "$work" && "$analyze" verify --man=no "${verify_units[@]}") \
  >"$work/verify.out" 2>&1 || { cat "$work/verify.out"; fail "systemd-analyze verify failed"; }
# systemd-analyze may report problems as messages while still exiting 0 on some versions.
if grep -Ei "unknown (key|section)|invalid|failed to|is not executable|bad unit file|lvalue|specifier" "$work/verify.out" \
    | grep -v "PR_SET_MM\|\$container" ; then
  fail "systemd-analyze verify reported a problem"
fi

# The check must be able to fail: a missing ExecStart program is reported.
sed -e "s#$master#$work/no-such-tactus-master#" "$work/tactus-master@.service" >"$work/broken@.service"
ln -s broken@.service "$work/broken@demo.service"
if (cd "$work" && "$analyze" verify --man=no ./broken@demo.service) >"$work/broken.out" 2>&1 \
    && ! grep -q "no-such-tactus-master" "$work/broken.out"; then
  fail "systemd-analyze verify did not notice a missing program; the check proves nothing here"
fi
# ... and a bad line in a drop-in is reported too (verify reads the instance's drop-ins here).
mkdir "$work/broken@demo.service.d"
{ cat "$dropin"; echo "IPAddressAllow=no-such-address"; } >"$work/broken@demo.service.d/multisoc.conf"
sed -i "s#$work/no-such-tactus-master#$master#" "$work/broken@.service"
(cd "$work" && "$analyze" verify --man=no ./broken@demo.service) >"$work/broken.out" 2>&1 || true
grep -q "no-such-address" "$work/broken.out" \
  || fail "systemd-analyze verify did not read the instance's drop-in; the drop-in's check proves nothing here"
echo "check_units: the target, the unit templates and the multi-SoC drop-in pass systemd-analyze verify"
