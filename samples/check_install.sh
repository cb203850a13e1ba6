#!/usr/bin/env bash
# Proves the install: `meson install --destdir` into a temporary root, then the minimal sample
# compiled against the installed headers and library found by `pkg-config tactus`, run against
# the installed tactus-master; and the STM sample compiled as C the same way.
# usage: check_install.sh BUILD_DIR SAMPLES_DIR SCHEDULES_DIR
set -euo pipefail
build=$1 samples=$2 schedules=$3
root=$(mktemp -d)
master_pid=
cleanup() {
  [ -z "$master_pid" ] || kill "$master_pid" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
fail() { echo "check_install: $*" >&2; exit 1; }
command -v pkg-config >/dev/null || { echo "check_install: pkg-config not installed, skipped"; exit 77; }

# --no-rebuild: this runs inside `meson test`, which built the test's depends (every installed
# target, see samples/meson.build); name any installed file that is still missing (the relative
# keys are symbolic links meson makes at install time).
missing=$(meson introspect "$build" --installed | python3 -c '
import json, os, sys
print(" ".join(sorted(p for p in json.load(sys.stdin) if os.path.isabs(p) and not os.path.exists(p))))') \
  || fail "meson introspect --installed failed"
[ -z "$missing" ] || fail "installed files not built yet: $missing (add their targets to the test's depends)"
meson install -C "$build" --no-rebuild --quiet --destdir "$root/dest" >"$root/install.log" 2>&1 \
  || { cat "$root/install.log"; fail "meson install failed"; }
pc=$(find "$root/dest" -name tactus.pc | head -n1)
[ -n "$pc" ] || fail "no tactus.pc installed"
for h in tactus/client.hpp tactus/stm.h; do
  [ -n "$(find "$root/dest" -path "*/include/$h")" ] || fail "header $h not installed"
done
master=$(find "$root/dest" -type f -path '*/bin/tactus-master' | head -n1)
compile=$(find "$root/dest" -type f -path '*/bin/tactus-compile' | head -n1)
[ -n "$master" ] && [ -n "$compile" ] || fail "tactus-master or tactus-compile not installed"

# The .pc file names the final prefix; the sysroot variable maps it into the destdir.
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$root/dest"
flags=$(pkg-config --cflags --libs tactus) || fail "pkg-config --cflags --libs tactus failed"
echo "pkg-config tactus: $flags"
# Only the installed tree: no -I into the source or build directories. TACTUS_SANITIZE_FLAGS: the
# sanitizer of an instrumented build, which the programs linking its library need too.
extra=${TACTUS_SANITIZE_FLAGS:-}
${CXX:-c++} -std=c++20 -O2 $extra -o "$root/minimal" "$samples/minimal_pipeline.cpp" $flags \
  || fail "the sample does not compile against the installed headers"
# An STM client in C: the same link line, the C header.
if command -v "${CC:-cc}" >/dev/null; then
  ${CC:-cc} -std=c99 -O2 $extra -o "$root/minimal_stm" "$samples/minimal_pipeline_stm.c" $flags \
    || fail "the STM sample does not compile as C against the installed <tactus/stm.h>"
fi
libdir=$(pkg-config --variable=libdir tactus)
case $libdir in "$root/dest"/*) ;; *) libdir="$root/dest$libdir" ;; esac  # pkgconf adds the sysroot
export LD_LIBRARY_PATH=$libdir
# grep reads all of ldd's output: with -q it would stop early and pipefail would see ldd die of SIGPIPE.
ldd "$root/minimal" | grep "$root/dest.*libtactus" >/dev/null || fail "the sample did not load the installed libtactus"

"$compile" -i "$schedules/minimal_cpu.yaml" -o "$root/minimal.tsched" >/dev/null
instance="install_$$"
timeout 60 "$master" -s "$root/minimal.tsched" -e 10 -D "$instance" -t 20000000 >"$root/master.out" 2>&1 &
master_pid=$!
timeout 60 "$root/minimal" --instance "$instance" >"$root/minimal.out" 2>&1 \
  || { cat "$root/minimal.out"; fail "the installed sample failed"; }
wait "$master_pid" || { cat "$root/master.out"; fail "the installed master failed"; }
master_pid=
cat "$root/minimal.out"
grep -q "ran Read 10, Process 10, Publish 10 times; checksum 110; 0 out of order" "$root/minimal.out" \
  || fail "the installed sample did not run 10 frames in order"
if [ -x "$root/minimal_stm" ]; then
  timeout 60 "$master" -s "$root/minimal.tsched" -e 10 -D "${instance}_stm" -t 20000000 >"$root/master.out" 2>&1 &
  master_pid=$!
  TACTUS_INSTANCE="${instance}_stm" timeout 60 "$root/minimal_stm" >"$root/minimal_stm.out" 2>&1 \
    || { cat "$root/minimal_stm.out"; fail "the installed STM sample failed"; }
  wait "$master_pid" || { cat "$root/master.out"; fail "the installed master failed"; }
  master_pid=
  cat "$root/minimal_stm.out"
  grep -q "ran Read 10, Process 10, Publish 10 times; checksum 110; 0 out of order" "$root/minimal_stm.out" \
    || fail "the installed STM sample did not run 10 frames in order"
fi
echo "check_install: installed headers, library, pkg-config file and master work"
