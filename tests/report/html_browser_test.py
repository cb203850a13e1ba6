#!/usr/bin/env python3
"""The HTML view in a real headless browser, and the Chrome trace checked as JSON.

usage: html_browser_test.py TACTUS_REPORT TACTUS_COMPILE MAKE_LOG SOURCE_ROOT

Compiles sample graphs with `tactus-compile --html`, simulates logs, renders `tactus-report --html`
pages (and one of 5,000 runnables), loads each in chromium (--dump-dom) and checks: no script
errors recorded, the page finished drawing, one lane per resource of every hyperepoch and one box
per scheduled instance of frame 0 (counted against the schedule file itself), executed runs drawn
with overruns marked; takes a screenshot; and checks the trace file's events against the log.
Exits 77 (skipped) when no chromium is installed.
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode != 0:
        fail(" ".join(cmd) + f" exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def browser(chromium, tmp, args):
    profile = tempfile.mkdtemp(dir=tmp)
    r = subprocess.run([chromium] + FLAGS + ["--user-data-dir=" + profile] + args,
                       capture_output=True, text=True, timeout=150)
    shutil.rmtree(profile, ignore_errors=True)
    return r


class Dom(html.parser.HTMLParser):
    """Collects the attributes of the elements the checks count."""

    def __init__(self):
        super().__init__()
        self.root = {}
        self.elements = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag in ("g", "rect"):
            self.elements.append((tag, set((a.get("class") or "").split()), a))


def schedule_facts(path):
    """From the schedule file itself: lanes per hyperepoch and frame-0 instances."""
    lanes = 0
    frame0 = 0
    for line in open(path):
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if line.startswith("hyperepoch "):
            lanes += len([r for r in fields.get("resources", "").split(",") if r])
        elif line.startswith("instance ") and fields.get("frame") == "0":
            frame0 += 1
    return lanes, frame0


def check_page(chromium, tmp, page, sched, executed):
    t0 = time.monotonic()
    r = browser(chromium, tmp, ["--dump-dom", "file://" + page])
    seconds = time.monotonic() - t0
    dom = Dom()
    dom.feed(r.stdout)
    name = os.path.basename(page)
    if dom.root.get("data-errors", None) != "":
        fail(f"{name}: script errors recorded: {dom.root.get('data-errors')!r}")
    if dom.root.get("data-ready") != "1":
        fail(f"{name}: the page did not finish drawing (stderr: {r.stderr[-500:]})")
    lanes, frame0 = schedule_facts(sched)
    plan_lanes = sum(1 for t, c, a in dom.elements if t == "g" and "plan-lane" in c)
    if plan_lanes != lanes:
        fail(f"{name}: {plan_lanes} plan lanes, expected one per resource: {lanes}")
    boxes = sum(1 for t, c, a in dom.elements
                if t == "rect" and "box" in c and "sw" not in c and "ghost" not in c and a.get("data-frame") == "0")
    if boxes != frame0:
        fail(f"{name}: {boxes} plan boxes of frame 0, expected one per scheduled instance: {frame0}")
    nodes = sum(1 for t, c, a in dom.elements if t == "rect" and "node" in c)
    runnables = sum(1 for line in open(sched) if line.startswith("runnable "))
    if nodes != runnables:
        fail(f"{name}: {nodes} graph nodes, expected {runnables}")
    if executed:
        exec_lanes = sum(1 for t, c, a in dom.elements if t == "g" and "exec-lane" in c)
        runs = [c for t, c, a in dom.elements if t == "rect" and "run" in c]
        if exec_lanes != lanes or not runs:
            fail(f"{name}: executed view has {exec_lanes} lanes (expected {lanes}) and {len(runs)} runs")
    print(f"ok: {name}: {plan_lanes} lanes, {boxes} frame-0 boxes, {nodes} graph nodes, loaded in {seconds:.1f} s")
    return dom


def log_run_count(path):
    data = open(path, "rb").read()
    size = struct.unpack_from("<I", data, 16)[0]  # EventLogHeader::recordSize (40; 32 in version 1)
    body = data[64:]
    kinds = [struct.unpack_from("<H", body, k)[0] for k in range(0, len(body) - len(body) % size, size)]
    return sum(1 for k in kinds if k == 1)


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    report, compile_, make_log, root = sys.argv[1:5]
    chromium = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                     if shutil.which(b)), None)
    if not chromium:
        print("SKIP: no chromium installed (scripts/setup.sh installs Debian's chromium)")
        return 77
    tmp = tempfile.mkdtemp(prefix="tactus-html-test-")
    try:
        for graph in ("multi_rate", "cuda_two_client"):
            src = os.path.join(root, "schedules", graph + ".yaml")
            sched = os.path.join(tmp, graph + ".tsched")
            plan = os.path.join(tmp, graph + "-plan.html")
            run([compile_, "-i", src, "-o", sched, "--html", plan])
            check_page(chromium, tmp, plan, sched, executed=False)
            log = os.path.join(tmp, graph + ".tlog")
            run([make_log, sched, log, "30", "0.2"])
            page = os.path.join(tmp, graph + "-run.html")
            trace = os.path.join(tmp, graph + "-trace.json")
            run([report, log, sched, "--html", page, "--trace-out", trace])
            dom = check_page(chromium, tmp, page, sched, executed=True)
            if not any(t == "rect" and "over" in c for t, c, a in dom.elements):
                fail(f"{graph}: a log with 20% overruns shows no overrun in its first iterations")
            # The trace against the trace format and the log (check_trace.py).
            check = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_trace.py")
            r = subprocess.run([sys.executable, check, trace, sched, log], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                fail(f"{graph}: {r.stdout}")
            print(r.stdout.strip())
        # 5,000 runnables: the page must load and draw within the test's time.
        big, biglog, bigpage = (os.path.join(tmp, n) for n in ("big.tsched", "big.tlog", "big.html"))
        run([make_log, "--synthetic", "5000", big, biglog, "3"])
        run([report, biglog, big, "--html", bigpage])
        check_page(chromium, tmp, bigpage, big, executed=True)
        # The screenshot for the README.
        shot = os.path.join(os.environ.get("TACTUS_BUILD_ROOT", tmp), "schedule.png")
        r = browser(chromium, tmp, ["--window-size=1400,1500", "--screenshot=" + shot,
                                    "file://" + os.path.join(tmp, "multi_rate-run.html")])
        if not os.path.exists(shot) or open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n" or os.path.getsize(shot) < 10000:
            fail("no screenshot produced: " + r.stderr[-500:])
        print("ok: screenshot " + shot)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
