#!/usr/bin/env python3
"""tactus.read_log against tactus-report on one large log: a synthetic schedule (make_log
--synthetic: 200 runnables, 8 clients, 8 CPUs, 2 frames) and its simulated log of about SIZE_MB
(default 214, the soak log's size); the time of tactus-report's text report (to /dev/null) and of
tactus.read_log(...) building its five DataFrames, each the best of REPEATS runs (default 3), and
their ratio (the issue's target: at most 3). Figures only, no timed assert.

usage: read_log_bench.py MAKE_LOG TACTUS_REPORT [SIZE_MB] [REPEATS]   (PYTHONPATH: the package)
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

import tactus

MAKE_LOG, REPORT = sys.argv[1:3]
SIZE_MB = float(sys.argv[3]) if len(sys.argv) > 3 else 214
REPEATS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
RUNNABLES = 200


def best(fn):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    tmp = tempfile.mkdtemp(prefix="tactus-pybench-")
    sched, log = os.path.join(tmp, "s.tsched"), os.path.join(tmp, "s.tlog")
    # A run record is 40 bytes; an iteration holds RUNNABLES x 2 runs and a few releases.
    iterations = max(1, int(SIZE_MB * 1e6 / 40 / (RUNNABLES * 2 + 4)))
    subprocess.run([MAKE_LOG, "--synthetic", str(RUNNABLES), sched, log, str(iterations)], check=True,
                   stdout=subprocess.DEVNULL)
    size = os.path.getsize(log)
    null = open(os.devnull, "w")
    report_s = best(lambda: subprocess.run([REPORT, log, sched], stdout=null, stderr=null, check=True))
    frames = {}

    def read():
        got = tactus.read_log(log, sched)
        frames["runs"] = len(got.runs)
        frames["releases"] = len(got.releases)

    python_s = best(read)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"log {size / 1e6:.0f} MB ({iterations} iterations, {frames['runs']} runs, {frames['releases']} releases)")
    print(f"tactus-report text report:         {report_s:.2f} s (best of {REPEATS})")
    print(f"tactus.read_log into DataFrames:   {python_s:.2f} s (best of {REPEATS}; peak RSS {peak_mb:.0f} MB)")
    print(f"ratio read_log / tactus-report:    {python_s / report_s:.2f}x (target <= 3x)")
    os.remove(log)


if __name__ == "__main__":
    main()
