#!/usr/bin/env python3
"""tactus-report against a real run: the real master and two real client processes run the
multi-rate sample for 20 hyperepoch iterations with -l; the report's statistics must match what
the run did (runs per runnable = iterations x frames, every duration at least the clients' spin
time, one CSV row per run, no invalid records, the log's content hash accepted), and the Chrome trace
checks out against the trace format and the real log (check_trace.py).

usage: real_run_test.py TACTUS_REPORT TACTUS_COMPILE TACTUS_MASTER TEST_CLIENT SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ITERATIONS = 20
BUSY_US = 200


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    report, compile_, master, client, root = sys.argv[1:6]
    tmp = tempfile.mkdtemp(prefix="tactus-report-real-")
    instance = f"report{os.getpid()}"
    try:
        sched, log = os.path.join(tmp, "mr.tsched"), os.path.join(tmp, "mr.tlog")
        r = subprocess.run([compile_, "-i", os.path.join(root, "schedules", "multi_rate.yaml"), "-o", sched],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail("compile: " + r.stderr)
        m = subprocess.Popen([master, "-s", sched, "-e", str(ITERATIONS), "-l", log, "-D", instance, "-C",
                              "-t", "20000000"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        clients = [subprocess.Popen([client, "--name", name, "--instance", instance, "--timeout-ms", "30000",
                                     "--busy-us", str(BUSY_US)], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
                   for name in ("Perception", "Control")]
        try:
            out, _ = m.communicate(timeout=90)
            for c in clients:
                c.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            for p in [m] + clients:
                p.kill()
            fail("the run did not finish")
        if m.returncode != 0:
            fail(f"master exited {m.returncode}: {out}")
        r = subprocess.run([report, log, sched, "--json"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail("tactus-report: " + r.stderr)
        stats = json.loads(r.stdout)
        if stats["records"]["invalid"] != 0:
            fail(f"invalid records in a real log: {stats['records']}")
        frames = {}
        for line in open(sched):
            f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
            if line.startswith("epoch "):
                frames[f["name"]] = int(f["frames"])
        total = 0
        for rs in stats["runnables"]:
            expected = ITERATIONS * frames[rs["epoch"].split(".", 1)[1]]
            if rs["duration"]["count"] != expected:
                fail(f"{rs['name']}: {rs['duration']['count']} runs, expected {expected}")
            if rs["duration"]["min_ns"] < BUSY_US * 1000:
                fail(f"{rs['name']}: a run shorter than the clients' {BUSY_US} us spin: {rs['duration']}")
            if not rs["duration"]["min_ns"] <= rs["duration"]["median_ns"] <= rs["duration"]["p99_ns"] <= rs["duration"]["max_ns"]:
                fail(f"{rs['name']}: quantiles out of order: {rs['duration']}")
            total += expected
        if stats["records"]["run"] != total:
            fail(f"{stats['records']['run']} run records, expected {total}")
        for fr in stats["frames"]:
            if fr["releases"] != ITERATIONS:
                fail(f"{fr['epoch']} #{fr['frame']}: {fr['releases']} releases, expected {ITERATIONS}")
        csv = subprocess.run([report, log, sched, "--csv"], capture_output=True, text=True, timeout=60)
        rows = csv.stdout.strip().split("\n")
        if csv.returncode != 0 or len(rows) != total + 1:
            fail(f"--csv gave {len(rows) - 1} rows, expected {total}")
        trace = os.path.join(tmp, "mr.json")
        r = subprocess.run([report, log, sched, "--trace-out", trace], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail("tactus-report --trace-out: " + r.stderr)
        check = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_trace.py")
        r = subprocess.run([sys.executable, check, trace, sched, log], capture_output=True, text=True, timeout=120)
        print(r.stdout.strip())
        if r.returncode != 0:
            fail("the trace of a real run does not check out")
        print(f"ok: real run of {ITERATIONS} iterations: {total} runs, statistics consistent")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
