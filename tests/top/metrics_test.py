#!/usr/bin/env python3
"""tactus-top --metrics against a real run: the real master and two real clients run the camera
chain schedule; tactus-top -D INSTANCE --metrics 127.0.0.1:0 (loopback only) serves the
statistics block; during the run the test takes tactus-top --json --once (A), scrapes /metrics (M)
and takes --json again (B). Every counter of M lies between A's and B's (runs, overruns, releases,
iterations, skips, chain reactions and ages), every fixed value equals them (WCETs, periods,
planned chain bounds), the clients' states and the running schedule are those of the block, the
exposition parses as Prometheus's text format, and the server ends by itself once the run has.

usage: metrics_test.py TACTUS_COMPILE TACTUS_MASTER TACTUS_TOP TEST_CLIENT GRAPH
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

COMPILE, MASTER, TOP, CLIENT, GRAPH = sys.argv[1:6]
SAMPLE = re.compile(r'^(tactus_[a-z_]+)\{([^}]*)\} (\S+)$')


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def parse(text):
    """{(name, frozenset(labels)): value}; every line a comment or a sample. Holds the text
    format's grouping: a family's HELP and TYPE once, before its samples, and all of its samples in
    one group (a parser such as OpenMetrics' refuses a family's sample after another family)."""
    out = {}
    current = None  # the family whose TYPE came last
    seen = set()
    for line in text.splitlines():
        if line.startswith("# HELP tactus_"):
            continue
        if line.startswith("# TYPE tactus_"):
            family = line.split()[2]
            if family in seen:
                fail(f"family {family} declared twice")
            seen.add(family)
            current = family
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(f"not an exposition line: {line!r}")
        if m.group(1) != current:
            fail(f"sample {m.group(1)} outside its family's group (the last TYPE line was {current})")
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def get(metrics, metric, **labels):
    for (n, ls), v in metrics.items():
        if n == metric and set(labels.items()) <= set(ls):
            return v
    fail(f"no sample {metric} {labels}")


def between(what, a, m, b):
    if not a <= m <= b:
        fail(f"{what}: scraped {m}, not between the block's {a} before and {b} after")


def main():
    tmp = tempfile.mkdtemp(prefix="tactus-metrics-")
    instance = f"metrics{os.getpid()}"
    sched = os.path.join(tmp, "c.tsched")
    subprocess.run([COMPILE, "-i", GRAPH, "-o", sched], check=True, capture_output=True)
    master = subprocess.Popen([MASTER, "-s", sched, "-D", instance, "-e", "40", "-t", "20000000", "-C"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    clients = [subprocess.Popen([CLIENT, "--name", n, "--instance", instance, "--timeout-ms", "30000",
                                 "--busy-us", "200"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for n in ("Sensing", "Planning")]
    top = None
    try:
        top = subprocess.Popen([TOP, "-D", instance, "--metrics", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        line = top.stdout.readline()
        m = re.search(r"on (http://127\.0\.0\.1:\d+/metrics)", line)
        if not m:
            fail(f"tactus-top --metrics printed {line!r}: {top.stderr.read() if top.poll() is not None else ''}")
        url = m.group(1)

        def block(starting=False):
            r = subprocess.run([TOP, "-D", instance, "--json", "--once"], capture_output=True, text=True)
            if r.returncode != 0:
                if starting:
                    return None  # the master has not published yet
                fail("tactus-top --json: " + r.stderr)
            return json.loads(r.stdout)

        deadline = time.time() + 30
        while True:  # until the run has released frames and the chain has been measured
            a = block(starting=True)
            s = a["schedules"][0] if a else {"state": "", "chains": []}
            if s["state"] == "running" and s["chains"] and s["chains"][0]["reaction"]["count"] > 0:
                break
            if time.time() > deadline:
                fail(f"the run did not get going: {a}")
            time.sleep(0.1)
        with urllib.request.urlopen(url, timeout=10) as resp:
            if "text/plain; version=0.0.4" not in resp.headers["Content-Type"]:
                fail("content type " + resp.headers["Content-Type"])
            scraped = parse(resp.read().decode())
        b = block()
        sa, sb = a["schedules"][0], b["schedules"][0]
        ident = str(sa["identifier"])
        if get(scraped, "tactus_running_schedule") != sa["identifier"]:
            fail("running schedule")
        get(scraped, "tactus_schedule_info", schedule=ident, name=sa["name"], state="running")
        for c in sa["clients"]:
            get(scraped, "tactus_client_state", client=c["name"], state=c["state"])
        for ra, rb in zip(sa["runnables"], sb["runnables"]):
            lab = {"schedule": ident, "runnable": ra["name"]}
            between(ra["name"] + " runs", ra["count"], get(scraped, "tactus_runs_total", **lab), rb["count"])
            between(ra["name"] + " overruns", ra["overruns"], get(scraped, "tactus_overruns_total", **lab),
                    rb["overruns"])
            between(ra["name"] + " max", ra["max_ns"] / 1e9, get(scraped, "tactus_run_duration_max_seconds", **lab),
                    rb["max_ns"] / 1e9)
            if get(scraped, "tactus_runnable_wcet_seconds", **lab) != ra["wcet_ns"] / 1e9:
                fail(ra["name"] + " WCET")
        for ha, hb in zip(sa["hyperepochs"], sb["hyperepochs"]):
            lab = {"schedule": ident, "hyperepoch": ha["name"]}
            between("releases", ha["releases"], get(scraped, "tactus_frames_released_total", **lab), hb["releases"])
            between("iterations", ha["iterations"], get(scraped, "tactus_iterations_completed_total", **lab),
                    hb["iterations"])
            between("skips", ha["skipped_periods"], get(scraped, "tactus_skipped_periods_total", **lab),
                    hb["skipped_periods"])
            if get(scraped, "tactus_hyperepoch_period_seconds", **lab) != ha["period_ns"] / 1e9:
                fail("period")
            if get(scraped, "tactus_frames_released_total", **lab) == 0:
                fail("no release scraped during the run")
        for ca, cb in zip(sa["chains"], sb["chains"]):
            lab = {"schedule": ident, "chain": ca["name"]}
            for what in ("reaction", "age"):
                between(f"{ca['name']} {what}s", ca[what]["count"], get(scraped, f"tactus_chain_{what}s_total", **lab),
                        cb[what]["count"])
                if get(scraped, f"tactus_chain_{what}_planned_seconds", **lab) != ca[what]["planned_ns"] / 1e9:
                    fail(f"{ca['name']} planned {what}")
        print(f"scraped {len(scraped)} samples from {url}; runs of {sa['runnables'][0]['name']}: "
              f"{get(scraped, 'tactus_runs_total', runnable=sa['runnables'][0]['name'])}")
        out, _ = master.communicate(timeout=60)
        if master.returncode != 0:
            fail(f"master exited {master.returncode}: {out}")
        try:
            top.wait(timeout=10)
        except subprocess.TimeoutExpired:
            fail("tactus-top --metrics went on after the run ended")
    finally:
        for p in [master, top] + clients:
            if p is not None and p.poll() is None:
                p.kill()
    print("ok")


if __name__ == "__main__":
    main()
