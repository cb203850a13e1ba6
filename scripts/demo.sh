#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, compile the sample graphs and
# print their reports. (Once the runtime lands it also runs the two-client sample.)
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${TACTUS_BUILD_DIR:-build}
scripts/setup.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for graph in schedules/two_client.yaml; do
  echo "== tactus-compile -i $graph"
  "$builddir/compiler/tactus-compile" -i "$graph" -o "$out/$(basename "$graph" .yaml).tsched" -k "$out/report.json"
done
