#!/usr/bin/env bash
# Builds tactus (installing what is missing) and runs the whole test suite; the last line says
# `N passed, N failed` (and skipped), counted from meson's test log.
set -uo pipefail
cd "$(dirname "$0")/.."
builddir=${TACTUS_BUILD_DIR:-build}

scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
meson test -C "$builddir" --print-errorlogs --num-processes "${TACTUS_JOBS:-$(nproc)}" "$@"
status=$?

python3 - "$builddir/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
except OSError:
    failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
summary=$?
[ $status -eq 0 ] && [ $summary -eq 0 ]
