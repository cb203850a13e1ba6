#!/usr/bin/env python3
"""Checks that the meson tests one Catch2 executable is split into run each of its test cases exactly
once: every case the executable lists (its default, unfiltered list) is selected by exactly one
part's filter, every part selects something, and no part selects a case outside that list.

    split_check.py EXECUTABLE FILTER...

Each FILTER is one part's Catch2 test spec, as the part passes it (one argument: `[a],[b]` is a or b,
`[a]~[b]` a and not b). Exit 0 when the parts cover the list exactly, 1 otherwise, naming the cases.
"""
import subprocess
import sys


def listed(exe, spec=None):
    """The names of the test cases EXE selects with SPEC (all of them without)."""
    args = [exe, "--list-test-names-only"] + ([spec] if spec is not None else [])
    # Catch2 2.x exits with the number of cases listed: the status says nothing here.
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if run.returncode < 0:
        sys.exit(f"split check: {' '.join(args)} died with signal {-run.returncode}\n{run.stderr}")
    names = []
    for line in run.stdout.splitlines():
        if not line.strip():
            continue
        # Catch2 quotes a name that begins with '#'.
        if line.startswith('"#') and line.endswith('"'):
            line = line[1:-1]
        names.append(line)
    return names


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: split_check.py EXECUTABLE FILTER...")
    exe, specs = sys.argv[1], sys.argv[2:]
    everything = listed(exe)
    if not everything:
        print(f"split check: {exe} lists no test case")
        return 1
    parts = {}  # case name -> the filters that select it
    problems = []
    for spec in specs:
        names = listed(exe, spec)
        if not names:
            problems.append(f"the filter '{spec}' selects no test case")
        for name in names:
            parts.setdefault(name, []).append(spec)
    for name in everything:
        chosen = parts.get(name, [])
        if not chosen:
            problems.append(f"in no part: {name}")
        elif len(chosen) > 1:
            problems.append(f"in {len(chosen)} parts ({', '.join(chosen)}): {name}")
    known = set(everything)
    for name, chosen in parts.items():
        if name not in known:
            problems.append(f"selected by {', '.join(chosen)} but not in the unfiltered list: {name}")
    for p in problems:
        print(f"split check: {p}")
    print(f"split check: {exe}: {len(everything)} test cases, {len(specs)} parts, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
