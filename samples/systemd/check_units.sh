#!/usr/bin/env bash
# Runs `systemd-analyze verify` on the unit templates, instantiated, with the installed paths of
# the programs replaced by the built ones (verify checks that ExecStart's program exists).
# Exit 77 (skipped) when systemd-analyze is not installed.
# usage: check_units.sh UNITS_DIR BUILT_TACTUS_MASTER BUILT_SAMPLE_TWO_CLIENT [BUILT_TACTUS_MANAGER]
set -euo pipefail
units=$1 master=$2 sample=$3 manager=${4:-}
analyze=$(command -v systemd-analyze || true)
[ -n "$analyze" ] || { echo "check_units: systemd-analyze not found, skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_units: $*" >&2; exit 1; }

for u in tactus-master@.service tactus-client@.service tactus-manager@.service; do
  [ -f "$units/$u" ] || fail "missing $units/$u"
  sed -e "s#/usr/local/bin/tactus-master#$master#g" "$units/$u" >"$work/$u"
  [ -z "$manager" ] || sed -i -e "s#/usr/local/bin/tactus-manager#$manager#g" "$work/$u"
done
grep -q "^TACTUS_CLIENT_PROGRAM=/usr/local/bin/tactus-sample-two-client$" "$units/sensing.env" \
  || fail "sensing.env does not name the installed sample"
[ -x "$sample" ] || fail "the sample $sample was not built"
# verify loads an instance of a template from the directory it is given.
ln -s tactus-master@.service "$work/tactus-master@demo.service"
ln -s tactus-client@.service "$work/tactus-client@sensing.service"
verify_units=(./tactus-master@demo.service ./tactus-client@sensing.service)
if [ -n "$manager" ]; then
  ln -s tactus-manager@.service "$work/tactus-manager@demo.service"
  verify_units+=(./tactus-manager@demo.service)
fi
(cd "$work" && "$analyze" verify --man=no "${verify_units[@]}") \
  >"$work/verify.out" 2>&1 || { cat "$work/verify.out"; fail "systemd-analyze verify failed"; }
# systemd-analyze may report problems as messages while still exiting 0 on some versions.
if grep -Ei "unknown (key|section)|invalid|failed to|is not executable|bad unit file|lvalue" "$work/verify.out" \
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
echo "check_units: the unit templates pass systemd-analyze verify"
