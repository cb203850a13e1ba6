#!/usr/bin/env python3
"""LTTng tracepoints of a real run (-Dlttng=enabled): a user-space session records `tactus:*`
while the real master and two real clients run schedules/camera_pipeline_chain.yaml (two epochs,
a channel) for 12 iterations; babeltrace2 prints the trace in time order. Checked against the
run's own event log (tactus-report --csv-of releases and --csv runs, joined on the exact times
the tracepoints carry): every release and every run of the log is in the trace and nothing else;
each runnable's start comes after its frame's release and before its end; each channel write
lies between its writer run's start and end. Skipped (exit 77) where lttng or babeltrace2 is
missing or no session can be created (no lttng-sessiond, no rights).
usage: lttng_run_check.py COMPILE MASTER REPORT CLIENT GRAPH"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

COMPILE, MASTER, REPORT, CLIENT, GRAPH = sys.argv[1:6]
ITERATIONS = 12


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def lttng(*args, check=True):
    r = subprocess.run(["lttng", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("lttng %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    return r


def run_traced(work, session):
    """Runs master and clients inside session `session`; returns the log's path."""
    instance = "lttng_%d" % os.getpid()
    log = os.path.join(work, "run.log")
    env = dict(os.environ, LTTNG_UST_REGISTER_TIMEOUT="-1")  # every process registered before it runs
    master = subprocess.Popen([MASTER, "-C", "-s", os.path.join(work, "g.tsched"), "-e", str(ITERATIONS),
                               "-D", instance, "-l", log], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    clients = [subprocess.Popen([CLIENT, "--name", name, "--instance", instance, "--busy-us", "200",
                                 "--timeout-ms", "20000", "--channel", "Objects"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for name in ("Sensing", "Planning")]
    outs = [(p, p.communicate(timeout=60)[0]) for p in clients + [master]]
    if any(p.returncode != 0 for p, _ in outs):
        fail("the run did not end well:\n" + "\n".join(o for _, o in outs))
    return log


def report_csv(log, *args):
    r = subprocess.run([REPORT, log, os.path.join(WORK, "g.tsched"), *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail("tactus-report %s: %s" % (" ".join(args), r.stderr))
    return list(csv.DictReader(r.stdout.splitlines()))


EVENT = re.compile(r"tactus:(\w+): .*?\{ ([^{}]*) \}\s*$")


def parse_trace(text):
    events = []
    for line in text.splitlines():
        m = EVENT.search(line)
        if m is None:
            continue
        fields = dict(kv.split(" = ") for kv in m.group(2).split(", "))
        events.append((m.group(1), {k: int(v) for k, v in fields.items()}))
    return events


def check(events, releases, runs):
    by_kind = {}
    for pos, (kind, f) in enumerate(events):
        by_kind.setdefault(kind, []).append((pos, f))
    # Releases: the trace's and the log's, one to one on (epoch index -> name) by actual time.
    epoch_name = {}
    release_pos = {}
    log_releases = {int(r["actual_ns"]): r for r in releases}
    for pos, f in by_kind.get("frame_release", []):
        r = log_releases.get(f["actual_ns"])
        if r is None or int(r["iteration"]) != f["iteration"] or int(r["frame"]) != f["frame"]:
            fail("trace release %s is not in the log" % f)
        if epoch_name.setdefault(f["epoch"], r["epoch"]) != r["epoch"]:
            fail("epoch %d is both %s and %s" % (f["epoch"], epoch_name[f["epoch"]], r["epoch"]))
        release_pos[(r["epoch"], f["iteration"], f["frame"])] = pos
    if len(release_pos) != len(releases):
        fail("%d releases in the trace, %d in the log" % (len(release_pos), len(releases)))
    # Runs: each end matches a log run by its times, and every log run has one.
    log_runs = {(int(r["start_ns"]), int(r["end_ns"])): r for r in runs}
    ends = {}
    for pos, f in by_kind.get("runnable_end", []):
        r = log_runs.get((f["start_ns"], f["end_ns"]))
        if r is None:
            fail("trace run end %s is not in the log" % f)
        ends[(f["instance"], f["iteration"])] = (pos, f, r)
    if len(ends) != len(runs):
        fail("%d run ends in the trace, %d runs in the log" % (len(ends), len(runs)))
    names = {(r["client"], r["runnable"]) for _, _, r in ends.values()}
    starts = {}
    for pos, f in by_kind.get("runnable_start", []):
        key = (f["instance"], f["iteration"])
        if key not in ends:
            fail("trace run start %s has no end" % f)
        end_pos, end, r = ends[key]
        if f["start_ns"] != end["start_ns"] or not pos < end_pos:
            fail("start %s not before its end %s" % (f, end))
        rel = release_pos.get((r["epoch"], f["iteration"], f["frame"]))
        if rel is None or not rel < pos:
            fail("run %s.%s of iteration %d frame %d starts before its frame's release" %
                 (r["client"], r["runnable"], f["iteration"], f["frame"]))
        starts[key] = pos
    if len(starts) != len(ends):
        fail("%d run starts in the trace, %d ends" % (len(starts), len(ends)))
    writes = by_kind.get("channel_write", [])
    if not writes:
        fail("no channel_write in the trace")
    for pos, f in writes:
        key = (f["instance"], f["iteration"])
        if key not in starts or not starts[key] < pos < ends[key][0]:
            fail("channel write %s outside its writer run" % f)
    print("trace: %d releases in %d epochs, %d runs of %d runnables, %d channel writes; in order" %
          (len(release_pos), len(epoch_name), len(ends), len(names), len(writes)))


if __name__ == "__main__":
    for tool in ("lttng", "babeltrace2"):
        if shutil.which(tool) is None:
            skip(tool + " is not installed (lttng-tools, babeltrace2)")
    WORK = tempfile.mkdtemp(prefix="tactus_lttng_")
    session = "tactus_test_%d" % os.getpid()
    try:
        r = subprocess.run([COMPILE, "-q", "-i", GRAPH, "-o", os.path.join(WORK, "g.tsched")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail("tactus-compile: " + r.stdout + r.stderr)
        created = lttng("create", session, "--output=" + os.path.join(WORK, "trace"), check=False)
        if created.returncode != 0:
            skip("no LTTng session here: " + created.stdout + created.stderr)
        try:
            lttng("enable-event", "-u", "-s", session, "tactus:*")
            lttng("start", session)
            log = run_traced(WORK, session)
            lttng("stop", session)
        finally:
            lttng("destroy", session, check=False)
        bt = subprocess.run(["babeltrace2", os.path.join(WORK, "trace")], capture_output=True, text=True)
        if bt.returncode != 0:
            fail("babeltrace2: " + bt.stderr)
        events = parse_trace(bt.stdout)
        check(events, report_csv(log, "--csv-of", "releases"), report_csv(log, "--csv"))
    finally:
        if os.environ.get("KEEP"):
            print("work: " + WORK)
        else:
            shutil.rmtree(WORK, ignore_errors=True)
