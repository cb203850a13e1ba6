#!/usr/bin/env bash
# An install that works anywhere: `meson install --destdir` of this build, then the installed tree
# moved to another directory and run from there with no LD_LIBRARY_PATH: tactus-manager and a
# sample client load libtactus from the moved tree (their RPATH, $ORIGIN/../<libdir>; ldd shows
# where), tactus-check preloads libtactus_check.so from the moved tree without --library, and the
# moved tools compile and run the installed minimal graph with the installed sample. The installed
# systemd units name the configured bindir and pass `systemd-analyze verify` (that part skipped
# where systemd-analyze is missing). Exit 77 when nothing can run (no meson, python3 or ldd).
# usage: install_test.sh BUILD_DIR PREFIX BINDIR LIBDIR DOCDIR (the last three as meson gives them)
set -uo pipefail
build=$1 prefix=$2 bindir=$3 libdir=$4 docdir=$5
for tool in meson python3 ldd; do
  command -v "$tool" >/dev/null || { echo "install_test: $tool not installed, skipped"; exit 77; }
done
# The real path: the loader reports $ORIGIN as the executable's real folder.
work=$(realpath "$(mktemp -d)")
master_pid=
cleanup() {
  [ -z "$master_pid" ] || kill "$master_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "install_test: $*" >&2; exit 1; }
# Meson's dirs are relative to the prefix unless outside it (absolute).
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bindir=$(abs "$bindir") libdir=$(abs "$libdir") docdir=$(abs "$docdir")
case $bindir:$libdir in
  "$prefix"/*:"$prefix"/*) ;;
  *) echo "install_test: bindir $bindir or libdir $libdir is outside the prefix $prefix: such an install is not relocatable, skipped"
     exit 77 ;;
esac

# --no-rebuild: `meson test` built the test's depends (every installed target, see
# samples/meson.build); name any installed file that is still missing.
missing=$(meson introspect "$build" --installed | python3 -c '
import json, os, sys
print(" ".join(sorted(p for p in json.load(sys.stdin) if os.path.isabs(p) and not os.path.exists(p))))') \
  || die "meson introspect --installed failed"
[ -z "$missing" ] || die "installed files not built yet: $missing (add their targets to the test's depends)"
dest=$work/dest
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; die "meson install failed"; }
[ -d "$dest$prefix" ] || die "nothing installed under $dest$prefix"

# The systemd units, before the move: generated for the configured bindir, and verified with the
# destdir as root (where the programs they name are).
units=$dest$docdir/systemd
grep -qx "ExecStart=$bindir/tactus-master .*" "$units/tactus-master@.service" \
  || fail "the installed master unit does not run $bindir/tactus-master: $(grep '^ExecStart=' "$units/tactus-master@.service")"
grep -qx "ExecStart=$bindir/tactus-manager .*" "$units/tactus-manager@.service" \
  || fail "the installed manager unit does not run $bindir/tactus-manager"
grep -qx "TACTUS_CLIENT_PROGRAM=$bindir/tactus-sample-two-client" "$units/sensing.env" \
  || fail "the installed sensing.env does not name $bindir/tactus-sample-two-client"
if grep -n "@[A-Z]*@" "$units"/*.service "$units"/*.target "$units"/*.env; then
  fail "an installed unit still holds a template placeholder"
fi
if command -v systemd-analyze >/dev/null; then
  # verify loads an instance of a template from the directory it is given, and checks that
  # ExecStart's program exists: the configured bindir is mapped into the destdir (a program the
  # units name elsewhere, like a hard-coded /usr/local/bin under another prefix, stays missing).
  mkdir "$work/units"
  for u in tactus@.target tactus-master@.service tactus-manager@.service; do
    sed "s#=$bindir/#=$dest$bindir/#" "$units/$u" >"$work/units/$u"
  done
  sed "s#=$bindir/#=$dest$bindir/#" "$units/tactus-client-INSTANCE@.service" >"$work/units/tactus-client-demo@.service"
  ln -s tactus@.target "$work/units/tactus@demo.target"
  ln -s tactus-master@.service "$work/units/tactus-master@demo.service"
  ln -s tactus-manager@.service "$work/units/tactus-manager@demo.service"
  ln -s tactus-client-demo@.service "$work/units/tactus-client-demo@sensing.service"
  (cd "$work/units" && systemd-analyze verify --man=no ./tactus@demo.target ./tactus-master@demo.service \
    ./tactus-manager@demo.service ./tactus-client-demo@sensing.service) >"$work/verify.out" 2>&1
  status=$?
  if ((status != 0)) || grep -Ei "unknown (key|section)|invalid|failed to|is not executable|bad unit file|lvalue|specifier" \
      "$work/verify.out" | grep -v "PR_SET_MM\|\$container"; then
    cat "$work/verify.out"
    fail "systemd-analyze verify failed on the installed units"
  fi
else
  echo "install_test: systemd-analyze not found: the installed units' paths checked, verify skipped"
fi

# The move: the installed tree goes elsewhere, and nothing points back to where it was built or
# installed.
moved=$work/elsewhere/tactus
mkdir -p "$(dirname "$moved")"
mv "$dest$prefix" "$moved" || die "cannot move $dest$prefix to $moved"
rm -rf "$dest"
mbin=$moved${bindir#"$prefix"} mlib=$moved${libdir#"$prefix"} mdoc=$moved${docdir#"$prefix"}
unset LD_LIBRARY_PATH LD_PRELOAD
cd "$work" || die "cannot enter $work"

# The programs that link libtactus: loaded from the moved tree.
for p in tactus-manager tactus-sample-minimal tactus-sample-two-client; do
  [ -x "$mbin/$p" ] || { fail "$p not installed in $mbin"; continue; }
  # The path ldd shows (through $ORIGIN/..), without its '..'.
  where=$(ldd "$mbin/$p" 2>&1 | sed -n 's/^[[:space:]]*libtactus\.so[^ ]* => \([^ ]*\) .*/\1/p')
  if [ -z "$where" ] || [ "$(dirname "$(realpath -m "$where")")" != "$mlib" ]; then
    fail "$p does not resolve libtactus inside the moved tree ($mlib): $(ldd "$mbin/$p" 2>&1 | grep libtactus)"
  fi
done
out=$("$mbin/tactus-manager" --version 2>&1) || fail "the moved tactus-manager --version failed: $out"
grep -q "^tactus-manager " <<<"$out" || fail "the moved tactus-manager --version printed: $out"
# No master: init fails at once (--timeout-ms 0), through libtactus, naming the instance.
out=$("$mbin/tactus-sample-minimal" --instance "install_none_$$" --timeout-ms 0 2>&1)
status=$?
if ((status != 1)) || ! grep -q "minimal: init failed" <<<"$out"; then
  fail "the moved tactus-sample-minimal did not run as far as tactus::init (exit $status): $out"
fi

# tactus-check, with no --library: the check library of the moved tree goes into LD_PRELOAD.
out=$("$mbin/tactus-check" -- env 2>&1)
status=$?
if ((status != 0)) || ! grep -qx "LD_PRELOAD=$mlib/libtactus_check.so" <<<"$out"; then
  fail "the moved tactus-check did not preload $mlib/libtactus_check.so (exit $status): $(grep -i 'preload\|tactus-check' <<<"$out")"
fi

# The moved tools run the installed minimal graph with the installed sample.
graph=$mdoc/schedules/minimal_cpu.yaml
[ -f "$graph" ] || fail "the example graphs are not installed ($graph missing)"
for f in samples/minimal_pipeline.cpp getting-started.md guide/first-application.md reference/launch-file.md format.md; do
  [ -f "$mdoc/$f" ] || fail "$docdir/$f is not installed"
done
if [ -f "$graph" ] && "$mbin/tactus-compile" -i "$graph" -o "$work/minimal.tsched" >"$work/compile.out" 2>&1; then
  instance="install_$$"
  timeout 60 "$mbin/tactus-master" -s "$work/minimal.tsched" -e 10 -D "$instance" -t 20000000 >"$work/master.out" 2>&1 &
  master_pid=$!
  if ! timeout 60 "$mbin/tactus-sample-minimal" --instance "$instance" >"$work/minimal.out" 2>&1; then
    fail "the moved sample failed: $(cat "$work/minimal.out")"
    kill "$master_pid" 2>/dev/null  # it would wait for its client until -t
  fi
  wait "$master_pid" || fail "the moved master failed: $(cat "$work/master.out")"
  master_pid=
  grep -q "ran Read 10, Process 10, Publish 10 times; checksum 110; 0 out of order" "$work/minimal.out" \
    || fail "the moved sample did not run 10 frames in order: $(cat "$work/minimal.out")"
else
  fail "the moved tactus-compile failed on $graph: $(cat "$work/compile.out" 2>/dev/null)"
fi

((failures == 0)) || { echo "install_test: $failures failure(s)" >&2; exit 1; }
echo "install_test: the installed tree, moved to $moved, runs without LD_LIBRARY_PATH or --library"
