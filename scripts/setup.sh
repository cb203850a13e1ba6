#!/usr/bin/env bash
# Installs the Debian packages tactus needs (when missing) and builds it into ./build.
# TACTUS_BUILD_DIR: another build directory; TACTUS_SETUP_OPTIONS: more `meson setup` options (a
# sanitizer, --werror; applied with `meson configure` to a directory that exists already);
# TACTUS_JOBS: ninja's -j (default: every core); TACTUS_SETUP_BUILD=0: set up only, build nothing
# (`meson test` then builds what the selected tests need); TACTUS_EXTRA_PACKAGES: more Debian
# packages to install; TACTUS_SETUP_PACKAGES_ONLY=1: install, then stop.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: the headless browser that tests the HTML view (about 40 s to install; its test is
# skipped, exit 77, where it is missing). cyclonedds-dev and cyclonedds-tools (idlc): the multi-SoC
# link (-Dmultisoc=auto builds it when they are there). libsystemd-dev: systemd notifications
# through sd_notify (-Dsystemd=auto uses it when it is there; the deploy tests' fake notify socket
# then exercises libsystemd's sender, which honours NOTIFY_SOCKET as the built-in one does).
# libiceoryx-posh-dev and iceoryx (iox-roudi): Eclipse iceoryx, the zero-copy reference the
# channel-iceoryx benchmark measures tactus's channels against (-Diceoryx=auto builds it when they
# are there; a benchmark only, nothing of tactus links it).
# python3-dev and pybind11-dev: the Python package `tactus` (-Dpython=auto builds it when they are
# there, for Debian's /usr/bin/python3); python3-pandas and python3-pytest: what it hands out and
# its tests (skipped, exit 77, where either is missing).
# liblttng-ust-dev, lttng-tools and babeltrace2: the LTTng tracepoints (-Dlttng=enabled; off by
# default, so setup never turns them on) and their test's session and reader (skipped, exit 77,
# where a session cannot be created).
# stress-ng: the load beside the benchmarks' stressed runs (channel-soak-stress,
# autoware-reference; skipped, exit 77, where it is missing).
packages=(meson ninja-build g++ pkg-config libboost-dev libyaml-cpp-dev catch2 python3 chromium cyclonedds-dev cyclonedds-tools
  libsystemd-dev libiceoryx-posh-dev iceoryx stress-ng python3-dev pybind11-dev python3-pandas python3-pytest
  liblttng-ust-dev lttng-tools babeltrace2)
# CI: ccache, and gdb for the run matrix's stacks of a master whose run never started.
[ "${CI:-}" = true ] && packages+=(ccache gdb)
read -r -a extra_packages <<<"${TACTUS_EXTRA_PACKAGES:-}"
packages+=("${extra_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ "${TACTUS_SETUP_PACKAGES_ONLY:-0}" = 1 ] && exit 0

builddir=${TACTUS_BUILD_DIR:-build}
read -r -a options <<<"${TACTUS_SETUP_OPTIONS:-}"
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --buildtype=debugoptimized "${options[@]}"
elif ((${#options[@]})); then
  meson configure "$builddir" "${options[@]}"
fi
[ "${TACTUS_SETUP_BUILD:-1}" = 0 ] || ninja -C "$builddir" -j"${TACTUS_JOBS:-$(nproc)}"
