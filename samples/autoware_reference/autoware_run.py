#!/usr/bin/env python3
"""Runs the Autoware reference system on tactus and prints the reference system's figures.

Compiles autoware_reference.yaml, starts a real tactus-master and the five client processes of
tactus-sample-autoware (FrontLidar, RearLidar, Fusion, Planning, Other), optionally beside
`stress-ng --cpu NPROC --cpu-load 60`, and collects what each process printed at its end (the
hot path's latency at the collision estimator, the behaviour planner's period, each node's
dropped samples and callback durations) and each process's CPU time (wait4). Then prints a table
in the shape of the reference system's report, beside the published ROS 2 figures, each figure
also as a ratio to the hot path's floor, since machines differ: the sum of its callbacks' mean
durations (the later lidar's driver and points transformer, the point cloud fusion, the ray
ground filter and the euclidean cluster detector), the smallest of the runs' (a run whose workers
are preempted times its callbacks longer than their work).

  autoware_run.py --compile C --master M --client A --graph G [--seconds S | --iterations N]
                  [--runs idle,stress,stress/other] [--check] [--keep] [--no-pin]
                  [--policy fifo:PRIO|rr:PRIO|other]

Each run is idle or stress, with its workers' policy after a slash where it is not --policy's
(default: fifo:50 where the process may, else other; the master's release threads then take
SCHED_FIFO 10 above). --seconds defaults to $AUTOWARE_BENCH_SECONDS, else 120 (the published
runs' length). Workers are pinned to their cores unless --no-pin (the master's -C).

--check (the integration test) asserts that every process ended well and printed its figures,
that the hot path ran with no dropped, stale, unwritten or incomplete sample, that no latency
was shorter than the work on the path, and that the planner ran once per 100 ms frame (its
period's mean; one run may start late on a loaded machine). Exit 77 when a stressed run is asked for and
stress-ng is missing (scripts/setup.sh installs it).
"""
import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CLIENTS = ["FrontLidar", "RearLidar", "Fusion", "Planning", "Other"]
HYPEREPOCH_S = 0.6  # the graph's hyperepoch: 600 ms, six 100 ms lidar frames
HOT_PATH = ["FrontLidarDriver", "RearLidarDriver", "PointsTransformerFront", "PointsTransformerRear",
            "PointCloudFusion", "RayGroundFilter", "EuclideanClusterDetector", "ObjectCollisionEstimator"]

# Published ROS 2 figures (Galactic, Raspberry Pi 4, 120 s runs, ros-realtime's reports): label,
# hot path mean and max (ms, None: not given).
PUBLISHED = [
    ("ROS 2 prioritized, idle", 23.81, 34.55),
    ("ROS 2 prioritized, stress", None, 44.10),
    ("ROS 2 multithreaded, idle", None, 35.97),
    ("ROS 2 multithreaded, stress", None, 191.36),
    ("ROS 2 single-threaded", 144.53, None),
]
PUBLISHED_PLANNER = (99.97, 100.05)  # the behaviour planner's period at best, ms


def fail(message):
    print(f"autoware-run: FAIL: {message}")
    sys.exit(1)


def parse_line(line):
    """'node X a=1 prefix b=2' -> ('node', 'X', {'a': 1.0, 'prefix.b': 2.0})."""
    tokens = line.split()
    if not tokens:
        return None
    kind, rest = tokens[0], tokens[1:]
    name = None
    if kind == "node" and rest:
        name, rest = rest[0], rest[1:]
    values, prefix = {}, ""
    for t in rest:
        if "=" not in t:
            prefix = t + "."
            continue
        k, v = t.split("=", 1)
        try:
            values[prefix + k if prefix else k] = float(v)
        except ValueError:
            values[prefix + k if prefix else k] = v
    return kind, name, values


def parse_client(text):
    """A client's figures: nodes, hot path, planner period, cpu, the run's end."""
    out = {"nodes": {}, "ended": None}
    for line in text.splitlines():
        m = re.match(r"client (\S+): run ended \(([^)]*)\)", line)
        if m:
            out["ended"] = m.group(2)
            continue
        parsed = parse_line(line)
        if not parsed:
            continue
        kind, name, values = parsed
        if kind == "node":
            out["nodes"][name] = values
        elif kind == "hot_path_latency_ms":
            out["hot_path"] = values
        elif kind == "behavior_planner_period_ms":
            out["planner"] = values
        elif kind == "cpu":
            out["cpu"] = values
    return out


def policy_env(policy):
    """(environment for the clients, master options) for a worker policy."""
    if policy == "auto":
        rt_allowed = os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_RTPRIO)[0] > 0
        policy = "fifo:50" if rt_allowed else "other"
    env = dict(os.environ, TACTUS_WORKER_POLICY=policy)
    master = []
    if policy.startswith(("fifo:", "rr:")):
        master = ["-P", str(min(99, int(policy.split(":")[1]) + 10))]
    return env, master, policy


def wait_all(procs, deadline):
    """Waits for every process by wait4; returns {name: (status, cpu seconds)}; kills on the deadline."""
    done = {}
    while len(done) < len(procs):
        for name, p in procs.items():
            if name in done:
                continue
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                done[name] = (p.returncode, usage.ru_utime + usage.ru_stime)
        if time.monotonic() > deadline:
            for name, p in procs.items():
                if name not in done:
                    p.kill()
            fail("the run did not end in time: " + ", ".join(n for n in procs if n not in done))
        time.sleep(0.05)
    return done


def stop_load(load):
    """Stops stress-ng; returns the CPU it used, in % of one core (wait4: its workers included)."""
    proc, started = load
    proc.send_signal(signal.SIGINT)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return 100.0 * (usage.ru_utime + usage.ru_stime) / (time.monotonic() - started)


def run_once(args, work, schedule, iterations, kind):
    """One run (kind: idle or stress, /POLICY for another worker policy) of the master and the
    five clients; returns its figures."""
    base, _, run_policy = kind.partition("/")
    stress = base == "stress"
    label = ("stress-ng 60%" if stress else "idle") + (f", {run_policy}" if run_policy else "")
    instance = f"aw{os.getpid()}_{base}{run_policy.replace(':', '')}"
    env, master_opts, policy = policy_env(run_policy or args.policy)
    master_cmd = [args.master, "-s", schedule, "-e", str(iterations), "-D", instance] + master_opts
    if not args.pin:
        master_cmd.append("-C")
    load, load_pct = None, None
    if stress:
        load = (subprocess.Popen(["stress-ng", "--cpu", str(os.cpu_count()), "--cpu-load", "60", "--timeout", "0"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), time.monotonic())
        time.sleep(1)
    procs, files = {}, {}
    started = time.monotonic()
    try:
        for name, cmd in [("master", master_cmd)] + [
                (c, [args.client, c, "--instance", instance, "--timeout-ms", "60000"]) for c in CLIENTS]:
            files[name] = open(os.path.join(work, f"{instance}_{name}.out"), "w+")
            procs[name] = subprocess.Popen(cmd, stdout=files[name], stderr=subprocess.STDOUT, env=env)
        status = wait_all(procs, started + iterations * HYPEREPOCH_S + 60)
    finally:
        if load:
            load_pct = stop_load(load)
    wall = time.monotonic() - started
    texts = {}
    for name, f in files.items():
        f.seek(0)
        texts[name] = f.read()
        f.close()
    bad = [n for n, (rc, _) in status.items() if rc != 0]
    if bad:
        for n in bad:
            print(f"--- {n} (exit {status[n][0]})\n" + texts[n][-3000:])
        fail(f"{label}: {', '.join(bad)} did not end well")
    figures = {"label": label, "policy": policy, "wall": wall, "iterations": iterations, "nodes": {},
               "cpu_s": sum(cpu for _, cpu in status.values()), "master": texts["master"], "load_pct": load_pct}
    for c in CLIENTS:
        parsed = parse_client(texts[c])
        if parsed["ended"] is None or "cpu" not in parsed:
            fail(f"{label}: client {c} printed no figures:\n{texts[c][-2000:]}")
        figures["nodes"].update(parsed["nodes"])
        for key in ("hot_path", "planner"):
            if key in parsed:
                figures[key] = parsed[key]
    for key in ("hot_path", "planner"):
        if key not in figures:
            fail(f"{label}: no {key} figures")
    return figures


def floor_ms(fig):
    """The hot path's floor: its callbacks' mean durations, the later lidar's branch."""
    n = fig["nodes"]
    d = lambda name: n[name]["duration_ms.mean"]
    front = d("FrontLidarDriver") + d("PointsTransformerFront")
    rear = d("RearLidarDriver") + d("PointsTransformerRear")
    return max(front, rear) + d("PointCloudFusion") + d("RayGroundFilter") + d("EuclideanClusterDetector")


def hot_path_drops(fig):
    n = fig["nodes"]
    lost = sum(n[h]["dropped"] + n[h]["not_written"] + n[h]["errors"] for h in HOT_PATH)
    return int(lost + fig["hot_path"]["drops"] + fig["hot_path"]["incomplete"])


def master_overruns(text):
    counts = {}
    for key, pattern in (("runs", r"(\d+) runs? beyond WCET"), ("frames", r"(\d+) frames? late"),
                         ("skipped", r"(\d+) periods? skipped")):
        found = re.findall(pattern, text)
        counts[key] = int(found[-1]) if found else 0
    return counts


def check(fig):
    """The integration test's assertions on one short run."""
    hp, pl, n = fig["hot_path"], fig["planner"], fig["nodes"]
    expected = (fig["iterations"] - 1) * 6  # six lidar frames per iteration, the first one warm-up
    skipped = master_overruns(fig["master"])["skipped"]  # a loaded machine may skip periods: fewer runs
    if hp["n"] < 0.5 * expected:
        fail(f"the hot path ran {int(hp['n'])} measured times, expected about {expected}")
    if hot_path_drops(fig) != 0 or any(n[h]["stale"] for h in HOT_PATH):
        fail(f"the hot path dropped samples: {hot_path_drops(fig)}, stale "
             f"{sum(n[h]['stale'] for h in HOT_PATH)}")
    # No sample can beat the work on its path: each callback took at least its shortest run. On a
    # loaded machine (the suite runs tests side by side, SCHED_OTHER, -C) a run may wait long.
    work = min(n[t]["duration_ms.min"] for t in ("PointsTransformerFront", "PointsTransformerRear")) + sum(
        n[c]["duration_ms.min"] for c in ("PointCloudFusion", "RayGroundFilter", "EuclideanClusterDetector"))
    if not (0.95 * work <= hp["min"] and hp["max"] < 1000 * HYPEREPOCH_S):
        fail(f"hot path latency {hp['min']:.2f}..{hp['max']:.2f} ms, the work on it {work:.2f} ms")
    # Runs start late on a loaded machine, but the planner runs once per 100 ms frame: its period's
    # mean is the span of its runs over their number, about 100 ms unless the master skipped periods.
    if pl["n"] == 0 or (not 90 <= pl["mean"] <= 110 and skipped == 0):
        fail(f"behaviour planner period {pl['min']:.2f}..{pl['max']:.2f} ms, mean {pl['mean']:.2f} ms "
             f"({skipped} periods skipped)")
    for name, v in n.items():
        if v["errors"] or v["runs"] == 0:
            fail(f"node {name}: {int(v['runs'])} runs, {int(v['errors'])} errors")
    print(f"autoware-run: PASS: hot path {int(hp['n'])} samples, latency {hp['min']:.2f}..{hp['max']:.2f} ms "
          f"(its work {work:.2f} ms), 0 dropped; planner period {pl['min']:.2f}..{pl['max']:.2f} ms")


def ratio(value, floor, at_least=False):
    if value is None:
        return "-"
    return (">=" if at_least else "") + f"{value / floor:.2f}"


def print_table(runs, seconds, pinned):
    first = min(runs, key=floor_ms)
    floor = floor_ms(first)
    print(f"\nAutoware reference system on tactus: {len(CLIENTS)} client processes, 25 runnables, "
          f"{runs[0]['iterations']} hyperepoch iterations of 600 ms (about {seconds:.0f} s) per run, "
          f"workers {runs[0]['policy']} (unless a row names another), {'pinned' if pinned else 'not pinned (-C)'}, "
          f"{os.cpu_count()} CPUs")
    n = first["nodes"]
    print(f"hot path floor (its callbacks' mean durations, run '{first['label']}'): {floor:.2f} ms "
          "(" + ", ".join(f"{name} {n[name]['duration_ms.mean']:.2f}" for name in HOT_PATH[2:7]) + ")")
    head = (f"{'run':<30}{'mean':>8}{'min':>8}{'max':>8}{'std':>7}{'mean/fl':>9}{'max/fl':>8}"
            f"{'BP min':>9}{'BP max':>9}{'hp drop':>8}{'drops':>7}{'CPU %':>7}{'load %':>7}{'overruns':>10}")
    print("hot path latency in ms (later lidar stamp to ObjectCollisionEstimator entry), behaviour planner (BP) "
          "period in ms, dropped samples (hot path; all nodes, by design where rates differ), CPU % of one core "
          "(master and clients; load: stress-ng's), master's overruns (runs beyond WCET/late frames/skipped periods)")
    print(head)
    for r in runs:
        hp, pl = r["hot_path"], r["planner"]
        all_drops = int(sum(v["dropped"] for v in r["nodes"].values()))
        o = master_overruns(r["master"])
        cpu = 100.0 * r["cpu_s"] / r["wall"]
        load = f"{r['load_pct']:.1f}" if r["load_pct"] is not None else "-"
        print(f"{'tactus ' + r['label']:<30}{hp['mean']:>8.2f}{hp['min']:>8.2f}{hp['max']:>8.2f}{hp['std']:>7.2f}"
              f"{ratio(hp['mean'], floor):>9}{ratio(hp['max'], floor):>8}{pl['min']:>9.2f}{pl['max']:>9.2f}"
              f"{hot_path_drops(r):>8}{all_drops:>7}{cpu:>7.1f}{load:>7}{o['runs']:>6}/{o['frames']}/{o['skipped']}")
    # A published run's floor is at most its prioritized mean (no sample beats the work on its
    # path), so its ratios are at least these.
    ros_floor = PUBLISHED[0][1]
    for label, mean, high in PUBLISHED:
        fmt = lambda v: f"{v:.2f}" if v is not None else "-"
        print(f"{label:<30}{fmt(mean):>8}{'-':>8}{fmt(high):>8}{'-':>7}{ratio(mean, ros_floor, True):>9}"
              f"{ratio(high, ros_floor, True):>8}{PUBLISHED_PLANNER[0]:>9.2f}{PUBLISHED_PLANNER[1]:>9.2f}"
              f"{'-':>8}{'-':>7}{'-':>7}{'-':>7}{'-':>10}")
    print("ROS 2 rows: Galactic on a Raspberry Pi 4, 120 s runs, as published; their floor is not published, "
          f"but is at most the prioritized mean ({ros_floor} ms), so their ratios are lower bounds; the planner "
          "period is the best published")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compile", required=True)
    p.add_argument("--master", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--graph", required=True)
    p.add_argument("--seconds", type=float, default=float(os.environ.get("AUTOWARE_BENCH_SECONDS", "120")))
    p.add_argument("--iterations", type=int, help="hyperepoch iterations per run (instead of --seconds)")
    p.add_argument("--runs", default="idle", help="comma-separated: idle, stress, each with an optional "
                   "/POLICY for its workers (stress/other)")
    p.add_argument("--check", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the processes' output (the folder is printed)")
    p.add_argument("--no-pin", dest="pin", action="store_false", help="the master's -C: workers not pinned")
    p.add_argument("--policy", default="auto", help="workers' policy: fifo:PRIO, rr:PRIO or other "
                   "(default: fifo:50 where allowed, else other)")
    args = p.parse_args()
    runs = args.runs.split(",")
    if any(r.startswith("stress") for r in runs) and shutil.which("stress-ng") is None:
        print("autoware-run: stress-ng is not installed (scripts/setup.sh installs it)")
        sys.exit(77)
    iterations = args.iterations or max(2, round(args.seconds / HYPEREPOCH_S))
    work = tempfile.mkdtemp(prefix="autoware_")
    try:
        schedule = os.path.join(work, "autoware.tsched")
        compiled = subprocess.run([args.compile, "-q", "-i", args.graph, "-o", schedule], capture_output=True,
                                  text=True)
        if compiled.returncode != 0:
            fail("tactus-compile: " + compiled.stderr)
        results = []
        for label in runs:
            if label.partition("/")[0] not in ("idle", "stress"):
                fail(f"unknown run '{label}' (idle or stress, each with an optional /POLICY)")
            print(f"autoware-run: {label}: {iterations} iterations", flush=True)
            results.append(run_once(args, work, schedule, iterations, label))
        if args.check:
            check(results[0])
        print_table(results, iterations * HYPEREPOCH_S, args.pin)
    finally:
        if args.keep:
            print(f"autoware-run: output kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
