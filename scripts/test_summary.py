#!/usr/bin/env python3
"""Counts meson test results over one or more testlog.json files (of one or several builds) and
prints the one line CI reads: `N passed, N failed, N skipped`. Before it, each test that did not
pass is named with its build and result, and the last lines of its output, so that the tail of a
CI log says what failed. Exit status 1 when any test failed or a log is missing or unreadable
(counted as one failure each)."""
import json
import os
import sys

TAIL_LINES = 40


def tail(text, n):
    lines = (text or "").rstrip("\n").splitlines()
    return lines[-n:]


def main(paths):
    passed = failed = skipped = 0
    failures = []
    for path in paths:
        build = os.path.basename(os.path.dirname(os.path.dirname(path))) or path
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    entry = json.loads(line)
                    result = entry.get("result", "")
                    if result in ("OK", "EXPECTEDFAIL"):
                        passed += 1
                    elif result == "SKIP":
                        skipped += 1
                    else:
                        failed += 1
                        failures.append((build, entry))
        except (OSError, ValueError) as e:
            print(f"test_summary: {path}: {e}", file=sys.stderr)
            failures.append((path, {"name": "(the test log itself)", "result": str(e)}))
            failed += 1
    for build, entry in failures:
        name, result = entry.get("name", "?"), entry.get("result", "?")
        secs = entry.get("duration")
        when = f" after {secs:.1f} s" if isinstance(secs, (int, float)) else ""
        print(f"-- not passed: {build}: {name}: {result}{when}")
        for stream in ("stdout", "stderr"):
            for out in tail(entry.get(stream) or "", TAIL_LINES):
                print(f"   | {out}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
