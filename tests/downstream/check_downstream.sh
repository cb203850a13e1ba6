#!/usr/bin/env bash
# Builds the tiny downstream project in tests/downstream/project both ways a user would:
#   1. tactus as a Meson subproject, client-only (dependency('tactus', fallback: 'tactus')), built
#      and run; its install holds nothing of tactus but the library, its headers and pkg-config;
#   2. tactus as a subproject with its tools: find_program finds the overridden tactus-compile,
#      tactus-master, tactus-report, tactus-manager and tactus-check (configured only: building the
#      compiler twice costs minutes),
#      and the subproject registers no tests;
#   3. tactus installed (client-only build, meson install to a prefix), found by pkg-config.
# The two builds are --buildtype=plain (no -O, no -g): what is checked is that they build, link,
# install and run, and this test was the plain CI stage's longest (182-207 s with debug builds).
# usage: check_downstream.sh TACTUS_SOURCE_ROOT
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_downstream: $*" >&2; exit 1; }
# The tactus sources without build directories (a subproject must not hold another build).
copy_tactus() {
  mkdir -p "$1"
  (cd "$src" && find . -mindepth 1 -maxdepth 1 ! -name 'build*' ! -name '.git' ! -name 'subprojects' -print0 \
    | xargs -0 cp -r -t "$1")
}

# 1. Subproject, client-only: built, run, installed.
p1=$work/sub
cp -r "$src/tests/downstream/project" "$p1"
copy_tactus "$p1/subprojects/tactus"
meson setup "$p1/build" "$p1" --buildtype=plain -Dtactus:client-only=true -Dtactus:cuda=disabled >"$work/setup1.log" 2>&1 \
  || { cat "$work/setup1.log"; fail "subproject setup failed"; }
grep -q "yaml-cpp" "$work/setup1.log" && fail "a client-only subproject looked for yaml-cpp"
ninja -j2 -C "$p1/build" >"$work/build1.log" 2>&1 || { tail -30 "$work/build1.log"; fail "subproject build failed"; }
"$p1/build/downstream-client" | grep -q "downstream: timeout: client 'Client0': no master for instance 'downstream_no_master'" \
  || fail "the downstream client did not run against the subproject's libtactus"
[ -e "$p1/build/subprojects/tactus/compiler" ] && fail "client-only built the compiler"
DESTDIR=$work/dest1 meson install -C "$p1/build" --no-rebuild >"$work/install1.log" 2>&1 \
  || { cat "$work/install1.log"; fail "install failed"; }
unexpected=$(cd "$work/dest1" && find . -type f | grep -v -E '/libtactus\.so|/include/tactus/|/pkgconfig/tactus\.pc$|/bin/downstream-client$' || true)
[ -z "$unexpected" ] || fail "the subproject installed more than the library: $unexpected"
ls "$work"/dest1/*/*/lib*/libtactus.so* "$work"/dest1/*/*/lib*/*/libtactus.so* >/dev/null 2>&1 \
  || (cd "$work/dest1" && find . -name 'libtactus.so*' | grep -q .) || fail "the library was not installed"

# 2. Subproject with its tools: the overrides, and no tests of tactus.
p2=$work/tools
cp -r "$src/tests/downstream/project" "$p2"
copy_tactus "$p2/subprojects/tactus"
meson setup "$p2/build" "$p2" -Dtools=true -Dtactus:cuda=disabled >"$work/setup2.log" 2>&1 \
  || { cat "$work/setup2.log"; fail "subproject setup with tools failed"; }
for tool in tactus-compile tactus-master tactus-report tactus-manager tactus-check; do
  grep -q "found $tool: $p2/build/subprojects/tactus/" "$work/setup2.log" \
    || { cat "$work/setup2.log"; fail "find_program('$tool') did not find the subproject's override"; }
done
if meson test -C "$p2/build" --list 2>/dev/null | grep -q .; then
  fail "the subproject registered tests: $(meson test -C "$p2/build" --list 2>/dev/null | head -3)"
fi
installs=$(meson introspect "$p2/build" --installed)
echo "$installs" | grep -q "tactus-compile\|tactus-master\|tactus-report\|tactus-manager\|tactus-check\|share/doc/tactus" \
  && fail "the subproject would install its tools or docs: $installs"

# 3. Installed: a client-only tactus installed to a prefix, found through pkg-config.
meson setup "$work/tbuild" "$src" --buildtype=plain -Dclient-only=true -Dcuda=disabled --prefix="$work/prefix" >"$work/setup3.log" 2>&1 \
  || { cat "$work/setup3.log"; fail "client-only setup failed"; }
ninja -j2 -C "$work/tbuild" >"$work/build3.log" 2>&1 || { tail -30 "$work/build3.log"; fail "client-only build failed"; }
meson install -C "$work/tbuild" --no-rebuild >"$work/install3.log" 2>&1 || { cat "$work/install3.log"; fail "install failed"; }
pc=$(dirname "$(find "$work/prefix" -name tactus.pc | head -1)")
[ -n "$pc" ] || fail "no tactus.pc installed"
p3=$work/installed
cp -r "$src/tests/downstream/project" "$p3"
PKG_CONFIG_PATH=$pc meson setup "$p3/build" "$p3" >"$work/setup4.log" 2>&1 || { cat "$work/setup4.log"; fail "setup against the installed tactus failed"; }
grep -q "Run-time dependency tactus found: YES" "$work/setup4.log" || { cat "$work/setup4.log"; fail "tactus not found by pkg-config"; }
ninja -j2 -C "$p3/build" >"$work/build4.log" 2>&1 || { tail -30 "$work/build4.log"; fail "build against the installed tactus failed"; }
LD_LIBRARY_PATH=$(dirname "$(find "$work/prefix" -name 'libtactus.so' | head -1)") "$p3/build/downstream-client" \
  | grep -q "downstream: timeout" || fail "the downstream client did not run against the installed libtactus"
echo "check_downstream: subproject (client-only, with tools) and installed both work"
