#!/usr/bin/env bash
# The installed Python package, moved: `meson install --destdir` of this build, the tree moved to
# another directory, and `import tactus` from Debian's python3 with only PYTHONPATH set (no
# LD_LIBRARY_PATH): the extension finds libtactus in the moved tree (its RPATH; ldd shows where)
# and reads a schedule compiled by the moved tactus-compile. Exit 77 without meson, ldd or pandas.
# usage: install_python_test.sh BUILD_DIR PYTHON3 PREFIX PYTHON_DIR SOURCE_ROOT
set -uo pipefail
build=$1 python=$2 prefix=$3 pydir=$4 root=$5
for tool in meson ldd; do
  command -v "$tool" >/dev/null || { echo "install_python_test: $tool not installed, skipped"; exit 77; }
done
"$python" -c "import pandas" 2>/dev/null || { echo "install_python_test: no pandas, skipped"; exit 77; }
case $pydir in /*) echo "install_python_test: the Python dir $pydir is outside the prefix: not relocatable, skipped"; exit 77 ;; esac
work=$(realpath "$(mktemp -d)")
trap 'rm -rf "$work"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
meson install -C "$build" --no-rebuild --quiet --destdir "$work/dest" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; die "meson install failed"; }
mv "$work/dest$prefix" "$work/moved" || die "cannot move the installed tree"
rm -rf "$work/dest"
ext=$(ls "$work/moved/$pydir"/tactus/_tactus*.so 2>/dev/null) || die "no extension under $work/moved/$pydir/tactus"
lib=$(env -u LD_LIBRARY_PATH ldd "$ext" | awk '/libtactus\.so/ {print $3}')
case $lib in "$work/moved/"*) ;; *) die "the moved extension loads libtactus from '$lib', not from the moved tree" ;; esac
compile=$(ls "$work"/moved/*/tactus-compile) || die "no tactus-compile in the moved tree"
env -u LD_LIBRARY_PATH "$compile" -i "$root/schedules/camera_pipeline_chain.yaml" -o "$work/c.tsched" >/dev/null \
  || die "the moved tactus-compile failed"
out=$(cd "$work" && env -i PATH=/usr/bin:/bin PYTHONPATH="$work/moved/$pydir" "$python" -c '
import tactus, sys
s = tactus.Schedule(sys.argv[1])
print(tactus.__file__, s.name, len(s.instances), len(s.chains))' "$work/c.tsched" 2>&1) \
  || die "import tactus from the moved tree failed: $out"
case $out in "$work/moved/"*" CameraPipelineChain 16 1") echo "moved package: $out" ;;
  *) die "unexpected: $out" ;; esac
