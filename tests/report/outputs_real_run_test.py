#!/usr/bin/env python3
"""Every tactus-report output of real runs, for one schedule (N = 1) and for two under a schedule
manager (N = 2): the real master, two real client processes (tactus-test-client) and, for the
managed run, tactus-manager starting schedule 101 and rolling over to 102. Asserted per output:
the text summary, --json, --csv, --violations, --wcet-out (each file fed back to tactus-compile
with its own schedule's graph), --html, --trace-out and --fail-on-violation, which passes the
clean logs and fails them once a violation record (as tactus-check writes it) is appended.

usage: outputs_real_run_test.py TACTUS_REPORT TACTUS_COMPILE TACTUS_MASTER TEST_CLIENT TACTUS_MANAGER MAKE_LOG
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPORT, COMPILE, MASTER, CLIENT, MANAGER, MAKE_LOG = sys.argv[1:7]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def mode_yaml(ident, extra):
    """Client0.R0 then Client1.R0 on two cores, 2 ms period; `extra`: Client1.Extra (this mode only)."""
    y = (f"Version: 3.0.0\nMode{ident}:\n  Identifier: {ident}\n  Resources:\n    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n    - H0:\n        Period: 2000us\n        Resources: [CPU0, CPU1]\n"
         "        Epochs:\n          - E: {Period: 2000us}\n  Clients:\n"
         "    - Client0:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
         "                - R0: {WCET: 100us, Resources: [CPU0]}\n"
         "    - Client1:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
         "                - R0: {WCET: 100us, Resources: [CPU1], Dependencies: [Client0.R0]}\n")
    if extra:
        y += "                - Extra: {WCET: 50us, Resources: [CPU1], Dependencies: [Client1.R0]}\n"
    return y


def run(argv, timeout=60):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def report(*args):
    return run([REPORT] + list(args))


def check_ok(r, what):
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}: {r.stderr}")
    return r


def real_run(tmp, instance, schedules, managed):
    """Runs the master and both clients; a managed run is driven by tactus-manager. Returns the log."""
    log = os.path.join(tmp, "run.tlog")
    argv = [MASTER, "-s", ",".join(schedules), "-D", instance, "-l", log, "-t", "15000000"]
    argv += ["-N", "mgr"] if managed else ["-e", "30"]
    master = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    clients = [subprocess.Popen([CLIENT, "--name", n, "--instance", instance, "--timeout-ms", "30000"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for n in ("Client0", "Client1")]
    try:
        if managed:
            for cmd in (["start", "101"], ["rollover", "102", "101"], ["exit"]):
                check_ok(run([MANAGER, "-D", instance, "-t", "15000"] + cmd), "tactus-manager " + " ".join(cmd))
                time.sleep(0.3)  # iterations of the running schedule
        out, _ = master.communicate(timeout=60)
        for c in clients:
            c.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        for p in [master] + clients:
            p.kill()
        fail("the run did not finish")
    if master.returncode != 0:
        fail(f"master exited {master.returncode}: {out}")
    return log


def check_outputs(tmp, log, schedules, yamls, ids):
    several = len(ids) > 1
    ops = [log] + schedules
    # --json: N = 1 one object; N > 1 {"log", "schedules": [one each], "switches"}
    stats = json.loads(check_ok(report(*ops, "--json"), "--json").stdout)
    parts = stats["schedules"] if several else [stats]
    if [p["identifier"] for p in parts] != ids:
        fail(f"--json: schedules {[p['identifier'] for p in parts]}, expected {ids}")
    for p in parts:
        if p["records"]["run"] == 0 or p["records"]["invalid"] != 0:
            fail(f"--json: schedule {p['identifier']}: records {p['records']}")
        if p["log"] != log:
            fail(f"--json: schedule {p['identifier']} names log {p['log']}")
    if several:
        texts = [s["text"] for s in stats["switches"]]
        if "start 101 on 'H0'" not in texts or "start 102 on 'H0' (rollover from 101)" not in texts:
            fail(f"--json: switches {texts}")
        if parts[1]["runnables"][-1]["name"] != "Client1.Extra":
            fail(f"--json: schedule 102's runnables {parts[1]['runnables']}")
    # --csv: one row per run with a runnable, the schedule last
    rows = check_ok(report(*ops, "--csv"), "--csv").stdout.strip().split("\n")[1:]
    expected = sum(p["records"]["run"] - p["records"]["empty_steps"] for p in parts)
    if len(rows) != expected or sorted({int(r.rsplit(",", 1)[1]) for r in rows}) != ids:
        fail(f"--csv: {len(rows)} rows (expected {expected}) of schedules {sorted({r.rsplit(',', 1)[1] for r in rows})}")
    # the text summary: N > 1 a section per schedule and the switches
    text = check_ok(report(*ops), "text").stdout
    for k, ident in enumerate(ids):
        head = f"=== schedule {ident} 'Mode{ident}' ({schedules[k]}) ===" if several else f"schedule 'Mode{ident}'"
        if head not in text:
            fail(f"text: no {head!r}")
    if several and "schedule starts and stops" not in text:
        fail("text: no switches")
    # --violations: the header alone (a clean run), with a schedule column for N > 1
    head = "runnable,kind,call,count,first_site" + (",schedule" if several else "")
    if check_ok(report(*ops, "--violations"), "--violations").stdout != head + "\n":
        fail("--violations of a clean run")
    # --wcet-out: a file per schedule, each accepted by tactus-compile with its own graph
    wcet = os.path.join(tmp, "wcet.yaml")
    check_ok(report(*ops, "--wcet-out", wcet), "--wcet-out")
    files = [wcet] + [os.path.join(tmp, f"wcet-{i}.yaml") for i in ids[1:]]
    for k, path in enumerate(files):
        names = [line.split(":")[0] for line in open(path) if not line.startswith("#")]
        if names != sorted(r["name"] for r in parts[k]["runnables"]):
            fail(f"--wcet-out {path}: {names}")
        # Accepted is what is checked, not that it fits: the durations a run measured on a loaded
        # machine (a sanitizer build beside other tests) can exceed the period.
        check_ok(run([COMPILE, "-i", yamls[k], "--wcet", path, "--allow-overlength", "-o",
                      os.path.join(tmp, "w.tsched")]),
                 f"tactus-compile --wcet {path} of schedule {ids[k]}")
    if several:  # schedule 102's file names a runnable schedule 101's graph does not have
        r = run([COMPILE, "-i", yamls[0], "--wcet", files[1], "-o", os.path.join(tmp, "w.tsched")])
        if r.returncode == 0 or "unknown runnable 'Client1.Extra'" not in r.stderr:
            fail(f"schedule 102's WCETs fed to 101's graph: {r.returncode} {r.stderr}")
        out = check_ok(report(*ops, "--wcet-out", "-"), "--wcet-out -").stdout
        if out.count("# schedule ") != 2 or "# schedule 102 'Mode102'" not in out:
            fail(f"--wcet-out -: {out}")
    # --html: a page per schedule
    html = os.path.join(tmp, "run.html")
    check_ok(report(*ops, "--html", html), "--html")
    for path in [html] + [os.path.join(tmp, f"run-{i}.html") for i in ids[1:]]:
        page = open(path).read()
        if not page.startswith("<!DOCTYPE html>") or (several and "<h2>Schedule switches</h2>" not in page):
            fail(f"--html: {path}")
    # --trace-out: runs of every schedule; N > 1 one process per schedule and the switches
    trace = os.path.join(tmp, "run.json")
    check_ok(report(*ops, "--trace-out", trace), "--trace-out")
    events = json.load(open(trace))["traceEvents"]
    runs = [e for e in events if e["ph"] == "X" and "run" in e["cat"]]
    if several:
        if sorted({e["pid"] for e in runs}) != [1, 2] or not any(e.get("cat") == "switch" for e in events):
            fail("--trace-out: not both schedules' runs and the switches")
    elif not runs:
        fail("--trace-out: no runs")
    # --fail-on-violation: passes the clean log, fails it with one violation (of the last schedule)
    check_ok(report(*ops, "--fail-on-violation"), "--fail-on-violation of a clean run")
    dirty = os.path.join(tmp, "dirty.tlog")
    shutil.copy(log, dirty)
    check_ok(run([MAKE_LOG, "--add-violation", dirty, str(ids[-1] if several else 0), "0"]), "make_log")
    r = report(dirty, *schedules, "--fail-on-violation")
    want = "1 contract violations (runnable, kind, call) in " + dirty + (f" (schedule {ids[-1]}: 1)" if several else "")
    if r.returncode != 1 or want not in r.stderr:
        fail(f"--fail-on-violation of a log with a violation: exit {r.returncode}: {r.stderr}")
    csv = check_ok(report(dirty, *schedules, "--violations"), "--violations").stdout
    row = "Client0.R0,allocation,malloc,3," + (f",{ids[-1]}" if several else "")
    if csv != head + "\n" + row + "\n":
        fail(f"--violations of a log with a violation: {csv!r}")


def main():
    tmp = tempfile.mkdtemp(prefix="tactus-report-outputs-")
    try:
        yamls, schedules = [], []
        for ident in (101, 102):
            yamls.append(os.path.join(tmp, f"mode{ident}.yaml"))
            schedules.append(os.path.join(tmp, f"mode{ident}.tsched"))
            open(yamls[-1], "w").write(mode_yaml(ident, ident == 102))
            check_ok(run([COMPILE, "-i", yamls[-1], "-o", schedules[-1]]), "tactus-compile")
        for managed in (False, True):
            n = 2 if managed else 1
            sub = os.path.join(tmp, f"n{n}")
            os.mkdir(sub)
            log = real_run(sub, f"rout{os.getpid()}n{n}", schedules[:n], managed)
            check_outputs(sub, log, schedules[:n], yamls[:n], [101, 102][:n])
            print(f"ok: every output of a real run of {n} schedule(s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
