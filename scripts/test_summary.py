#!/usr/bin/env python3
"""Counts meson test results over one or more testlog.json files (of one or several builds) and
prints the one line CI reads: `N passed, N failed, N skipped`. Exit status 1 when any test failed
or a log is missing or unreadable (counted as one failure each)."""
import json
import sys


def main(paths):
    passed = failed = skipped = 0
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    result = json.loads(line).get("result", "")
                    if result in ("OK", "EXPECTEDFAIL"):
                        passed += 1
                    elif result == "SKIP":
                        skipped += 1
                    else:
                        failed += 1
        except (OSError, ValueError) as e:
            print(f"test_summary: {path}: {e}", file=sys.stderr)
            failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
