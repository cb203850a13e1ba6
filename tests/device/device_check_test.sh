#!/usr/bin/env bash
# The dry run of scripts/device-check.sh on this machine (CI's, without a GPU): every part runs or
# says why it was skipped, the summary has a line per part, a failing part fails the whole check.
#   device_check_test.sh BUILD_DIR
set -uo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/tactus-device-check-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
problems=0
expect() {  # FILE PATTERN WHAT
  if ! grep -qE "$2" "$1"; then
    echo "FAIL: $3: no line matching '$2' in $1:"
    sed 's/^/  | /' "$1"
    problems=$((problems + 1))
  fi
}

# 1. The whole check, short versions: exit 0 here; a GPU part either ran or names why it did not.
"$root/scripts/device-check.sh" --quick --build "$build" --out "$tmp/run" >"$tmp/run.out" 2>&1
rc=$?
cat "$tmp/run.out"
[ $rc -eq 0 ] || { echo "FAIL: device-check exited $rc"; problems=$((problems + 1)); }
s=$tmp/run/summary.txt
[ -s "$tmp/run/device-check.log" ] || { echo "FAIL: no device-check.log"; problems=$((problems + 1)); }
expect "$s" '^probe\.nvidia-smi: ' "the nvidia-smi check"
expect "$s" '^probe\.cuda: (ok|skipped: .+)' "the CUDA probe"
for p in gpu-tests sample fence; do
  expect "$s" "^$p: (passed|ok|skipped: no usable CUDA device|skipped: .+)" "part $p"
done
expect "$s" '^submit: .*p50' "the stand-in submit benchmark's figures"
expect "$s" '^runtime\.stg-makespan (100us: .*per runnable|.*skipped: .+)' "stg-makespan"
expect "$s" '^runtime\.handoff: .*p50' "the hand-off benchmark's figures"
expect "$s" '^runtime\.release: ' "the release benchmark"
expect "$s" '^# device check: ok' "the verdict"
if grep -q FAILED "$s"; then echo "FAIL: a part failed"; problems=$((problems + 1)); fi

# 2. A broken driver (a stand-in nvidia-smi failing as the real one does without its driver):
#    the part fails, named, and the check exits 1.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it couldn'"'"'t communicate with the NVIDIA driver."\nexit 9\n' \
  >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
PATH=$tmp/bin:$PATH "$root/scripts/device-check.sh" --only probe --build "$build" --out "$tmp/broken" >"$tmp/broken.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: with a failing nvidia-smi device-check exited $rc, not 1"; cat "$tmp/broken.out"; problems=$((problems + 1)); }
expect "$tmp/broken/summary.txt" "^probe\.nvidia-smi: FAILED: NVIDIA-SMI has failed" "the failing nvidia-smi, named"
expect "$tmp/broken/summary.txt" '^# device check: FAILED' "the failed verdict"

# 3. A bad command line is refused, named.
"$root/scripts/device-check.sh" --only warp-drive --build "$build" --out "$tmp/bad" >"$tmp/bad.out" 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --only warp-drive exited $rc, not 2"; problems=$((problems + 1)); }
expect "$tmp/bad.out" "unknown part 'warp-drive'" "the unknown part, named"

((problems == 0)) && echo "device check dry run: ok"
exit $((problems > 0))
