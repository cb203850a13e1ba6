#!/usr/bin/env python3
# run_matrix: the run matrix (issue 25). Every run mode (row) against every outcome (column), each
# cell with the real tactus-master, real client processes and, under a schedule manager, the real
# tactus-manager, on an instance of its own (-D matrix<pid>_<row>_<column>). Each cell asserts every
# process's exit status, the message that names the cause (the client, the signal, the SoC), and
# that nothing of the instance is left in /dev/shm afterwards.
#
#   rows      single (one schedule), managed (two schedules, -N mgr, tactus-manager), multi-SoC (one
#             master per SoC over loopback DDS), managed multi-SoC (two multi-SoC schedules, -N on every
#             SoC's master, the manager talking to the primary's)
#   columns   run (-e N, or start/rollover/exit under the manager), client kill -9, client frozen
#             (SIGSTOP, a small -t: 'is stuck'), master SIGTERM with a client frozen (the 0.5 s
#             grace names it), master SIGTERM while a rollover waits on a frozen client (managed: the
#             master ends within the grace naming it, the waiting tactus-manager rollover fails
#             saying so), the primary SIGTERMed with the follower's client frozen (multi-SoC:
#             a clean end on both SoCs, each naming it), master kill -9 (the clients remove its
#             segments; multi-SoC: the survivor exits within -o + 0.5 s), restart over a killed
#             primary / follower (multi-SoC: both masters restarted as a supervisor would, the new
#             run ends well; link v2), manager commands killed mid-request (managed: the run goes
#             on), the manager channel truncated or its header zeroed (the master names it; then
#             SIGTERM to the follower or the master: it ends within the grace's bound), kill -9
#             in start-up under -N (the next run takes the instance over), the event log
#             (tactus-report --json, --fail-on-violation), CUDA submitters on the stand-in, check
#             mode (clients under tactus-check)
#
#   meson test -C build "run matrix" -v
#   tests/matrix/run_matrix.py --build build                  # the same, by hand
#   tests/matrix/run_matrix.py --build build --only single,managed --keep -v
#   tests/matrix/run_matrix.py --build build --master ./mute-master.sh   # a master that says nothing:
#                                                  # every cell that checks a named cause must FAIL
#
# One line per cell, `PASS|FAIL|XFAIL|SKIP <row> x <column>: <outcome>`, then a table; exit 1 on
# any FAIL. A cell that cannot apply is a SKIP with the reason; a cell that shows a known master bug
# is an XFAIL (counted apart, never a pass). Time bounds are generous upper bounds.
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fault"))
import faultlib  # noqa: E402
from faultlib import Proc, now  # noqa: E402

# Generous upper bounds (several times the documented waits), scaled for sanitized builds as the
# other tests are (TACTUS_TEST_TIME_SCALE, set by tests/meson.build).
SCALE = float(os.environ.get("TACTUS_TEST_TIME_SCALE") or 1)
END_S = 5.0 * SCALE          # a process ends this long after its cause (the runtime: milliseconds)
GRACE_S = 0.5                # the master's documented stop grace for a client that does not finish
GRACE_BOUND_S = 3.0 * SCALE  # SIGTERM -> the master's end with a frozen client (6x the grace)
STUCK_T_US = int(1_500_000 * SCALE)  # -t of the frozen-client cells
RUN_WAIT_S = 30.0 * SCALE    # start-up and a whole -e run (DDS discovery included)
SURVIVOR_S = 0.5             # a master whose peer died exits within its -o and this (issue 48)
STUCK_END_S = 0.5            # a master exits within -t and this of a client's freeze (it used to wait 1 s more)
ITERATIONS = 10
SOC_ITERATIONS = 50

ROWS = ["single", "managed", "multisoc", "managed-multisoc"]
ROW_TITLE = {"single": "single", "managed": "managed", "multisoc": "multi-SoC",
             "managed-multisoc": "managed multi-SoC"}
COLUMNS = ["run", "client-kill", "client-stuck", "client-exit-stuck", "master-sigterm", "rollover-sigterm",
           "primary-sigterm", "master-kill",
           "restart-killed", "restart-killed-follower", "manager-killed", "manager-damaged",
           "manager-damaged-sigterm", "startup-kill",
           "truncated", "report", "cuda", "check"]
COLUMN_TITLE = {"run": "run -e N", "client-kill": "client kill -9", "client-stuck": "client frozen (stuck)",
                "client-exit-stuck": "exit request, a client frozen",
                "master-sigterm": "master SIGTERM, client frozen",
                "rollover-sigterm": "SIGTERM in a rollover, client frozen",
                "primary-sigterm": "primary SIGTERM, client frozen", "master-kill": "master kill -9",
                "restart-killed": "restart over a killed primary", "restart-killed-follower": "restart over a killed follower",
                "manager-killed": "manager killed mid-request", "manager-damaged": "manager channel damaged",
                "manager-damaged-sigterm": "manager channel damaged, then SIGTERM",
                "startup-kill": "kill in start-up (-N)",
                "truncated": "segment truncated",
                "report": "event log report", "cuda": "CUDA stand-in", "check": "check mode"}


class Skip(Exception):
    """The cell cannot apply here; the message is its reason."""


class Context:
    """The programs, the compiled schedules and the work folder, shared by every cell."""

    def __init__(self, args):
        b = args.build
        self.source = args.source or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        self.prog = {
            "master": os.path.join(b, "master", "tactus-master"),
            "compile": os.path.join(b, "compiler", "tactus-compile"),
            "manager": os.path.join(b, "tools", "tactus-manager"),
            "report": os.path.join(b, "tools", "tactus-report"),
            "check": os.path.join(b, "check", "tactus-check"),
            "sample": os.path.join(b, "samples", "tactus-sample-two-client"),
            "test-client": os.path.join(b, "tests", "runtime", "tactus-test-client"),
            "gpu-client": os.path.join(b, "tests", "gpu", "tactus-gpu-test-client"),
            "layout": os.path.join(b, "tests", "fault", "tactus-fault-layout"),
        }
        if args.master:
            self.prog["master"] = args.master
        for name in ("master", "compile", "manager", "report", "sample", "layout"):
            if not os.access(self.prog[name], os.X_OK):
                raise SystemExit("matrix: %s is not an executable (build it, or pass --build)" % self.prog[name])
        self.layout = faultlib.Layout(self.prog["layout"])
        self.keep = args.keep
        self.verbose = args.verbose
        self.work = tempfile.mkdtemp(prefix="tactus-matrix-", dir=args.work)
        self.multisoc = self._multisoc_built(b)
        # DDS traffic never leaves loopback (as every test of this repository).
        os.environ["CYCLONEDDS_URI"] = "file://" + os.path.abspath(
            os.path.join(self.source, "samples", "multisoc", "loopback.xml"))
        self.ddsDomain = 100 + (os.getpid() % 16) * 6
        self.schedules = {}
        self.lock = threading.Lock()  # cells run in threads (main: --jobs): the schedules, `running`
        self.running = set()          # the cells in progress (SIGTERM ends their processes)

    @staticmethod
    def _multisoc_built(build):
        """Whether the build has the multi-SoC link (meson's -Dmultisoc: the tactus_soc_link target)."""
        try:
            with open(os.path.join(build, "meson-info", "intro-targets.json")) as f:
                return any(t["name"] == "tactus_soc_link" for t in json.load(f))
        except (OSError, ValueError, KeyError):
            return False

    def schedule(self, graph, identifier=None):
        """`graph` (relative to the source root) compiled once; with `identifier`, as a manager's mode:
        its Identifier replaced and its name suffixed with it (as tests/gpu does)."""
        with self.lock:  # compiled once, by the first cell that needs it
            return self._schedule(graph, identifier)

    def _schedule(self, graph, identifier):
        key = (graph, identifier)
        if key in self.schedules:
            return self.schedules[key]
        path = os.path.join(self.source, graph)
        stem = os.path.splitext(os.path.basename(graph))[0] + ("_%d" % identifier if identifier else "")
        if identifier is not None:
            with open(path) as f:
                text = f.read()
            text = re.sub(r"Identifier: *\d+", "Identifier: %d" % identifier, text, count=1)
            text = re.sub(r"^(Version:.*\n)(\w+):", lambda m: "%s%s%d:" % (m.group(1), m.group(2), identifier), text,
                          count=1, flags=re.M)
            path = os.path.join(self.work, stem + ".yaml")
            with open(path, "w") as f:
                f.write(text)
        out = os.path.join(self.work, stem + ".tsched")
        r = subprocess.run([self.prog["compile"], "-i", path, "-o", out], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit("matrix: cannot compile %s: %s" % (path, r.stderr))
        self.schedules[key] = out
        return out


class Cell:
    """One cell: its instance, processes, checks and verdict (Proc from faultlib runs each process)."""

    def __init__(self, ctx, row, column, index):
        self.ctx, self.row, self.column = ctx, row, column
        self.name = "%s x %s" % (ROW_TITLE[row], COLUMN_TITLE[column])
        self.instance = "matrix%d_%s_%s" % (os.getpid(), row.replace("-", ""), column.replace("-", ""))
        self.dir = os.path.join(ctx.work, "%s_%s" % (row, column))
        os.makedirs(self.dir, exist_ok=True)
        self.procs = []
        self.log = []
        self.failures = []
        self.outcome = ""
        self.t_begin = now()
        self.domain = ctx.ddsDomain + index % 6
        self.table = "tactus_cuda_standin_" + self.instance
        # Every process of the cell gets the cell's CUDA stand-in table (cells run side by side).
        self.env = dict(os.environ, TACTUS_CUDA_STANDIN_TABLE=self.table)
        with ctx.lock:
            ctx.running.add(self)

    # --- processes ---

    def note(self, words):
        self.log.append("%7.3f %s" % (now() - self.t_begin, words))

    def proc(self, name, role, argv):
        p = Proc(self, name, role, argv)
        p.env = self.env
        self.procs.append(p)
        return p

    def master(self, name="master", extra=()):
        return self.proc(name, "master", [self.ctx.prog["master"], "-D", self.instance, "-v"] + list(extra))

    def tool(self, name, args, timeout=RUN_WAIT_S):
        """tactus-manager on this instance, run to its end; returns the Proc."""
        p = self.proc(name, "manager", [self.ctx.prog["manager"], "-D", self.instance, "-N", "mgr", "-t", "15000"] +
                      list(args))
        p.start()
        self.wait([p], now() + timeout)
        return p

    def poll(self):
        for p in self.procs:
            p.poll()

    def wait(self, procs, deadline):
        """Polls until every process of `procs` ended or the deadline; returns whether they did."""
        while True:
            self.poll()
            if all(not p.alive() for p in procs):
                return True
            if now() >= deadline:
                return False
            time.sleep(faultlib.POLL_S)

    def wait_for(self, deadline, cond):
        while True:
            self.poll()
            if cond():
                return True
            if now() >= deadline:
                return False
            time.sleep(0.01)

    def segments(self):
        """What of this instance is in /dev/shm: its segments (tactus_<instance>, .soc<k>,
        .schedule<k>, .manager)."""
        base = faultlib.segment_path(self.instance)
        return sorted(p for p in glob.glob(base + "*") if p == base or p.startswith(base + "."))

    def state(self, suffix=""):
        return faultlib.Segment(self.ctx.layout, self.instance + suffix).state()

    def wait_state(self, suffixes, state="running", timeout=RUN_WAIT_S):
        ok = self.wait_for(now() + timeout, lambda: all(self.state(s) == state for s in suffixes))
        if not ok:
            self.fail("the run never reached '%s' (segments %s: %s)%s" % (
                state, ", ".join(suffixes), ", ".join(str(self.state(s)) for s in suffixes), self.master_stacks()))
            raise CellAbort()
        return ok

    def master_stacks(self):
        """The threads' stacks of every master still running (gdb, where there is one): what a run
        that never started waits on (a multi-SoC start-up once hung, SocA still creating)."""
        gdb = shutil.which("gdb")
        said = ""
        for p in self.procs:
            if p.role != "master" or not p.alive() or gdb is None:
                continue
            try:
                r = subprocess.run([gdb, "-p", str(p.pid), "-batch", "-ex", "thread apply all bt 12"],
                                   capture_output=True, text=True, timeout=20)
                frames = [l for l in r.stdout.splitlines() if l.startswith(("Thread ", "#"))]
                if not frames:  # gdb could not attach (ptrace not permitted): say why
                    frames = ["gdb: " + l for l in r.stderr.splitlines()[-3:]]
            except (OSError, subprocess.SubprocessError) as e:
                frames = ["gdb failed: %r" % e]
            said += "\n    stacks of %s (pid %s):\n        %s" % (p.name, p.pid, "\n        ".join(frames[:200]))
        return said

    # --- checks ---

    def fail(self, words):
        self.failures.append(words)
        self.note("FAIL " + words)

    def expect_ended(self, procs, deadline, what):
        if not self.wait(procs, deadline):
            self.fail("%s still running %s (hang): %s" % (
                ", ".join(p.name for p in procs if p.alive()), what,
                "; ".join("%s: %s" % (p.name, p.tail(200)) for p in procs if p.alive())))
            return False
        return True

    def expect_status(self, p, statuses, why=None):
        """p ended with a status in `statuses` (an int, a set, or -SIG for a signal)."""
        want = {statuses} if isinstance(statuses, int) else set(statuses)
        if p.alive() or p.returncode not in want:
            self.fail("%s: %s, expected %s%s; output: %s" % (
                p.name, p.status(), " or ".join(describe(s) for s in sorted(want)),
                " (%s)" % why if why else "", p.tail(500)))
            return False
        return True

    def expect_says(self, p, pattern, what):
        if not re.search(pattern, p.text()):
            self.fail("%s did not %s (/%s/); output: %s" % (p.name, what, pattern, p.tail(600)))
            return False
        return True

    def expect_clean(self, when):
        left = self.segments()
        if left:
            self.fail("left in /dev/shm %s: %s" % (when, ", ".join(left)))
            return False
        return True

    def cleanup(self):
        for p in self.procs:
            if p.alive() and p.stopped:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                except OSError:
                    pass
            p.kill_for_cleanup()
        for path in self.segments() + ["/dev/shm/" + self.table]:
            try:
                os.unlink(path)
            except OSError:
                pass
        with self.ctx.lock:
            self.ctx.running.discard(self)

    def statuses(self):
        return " ".join("%s=%s" % (p.name, short_status(p)) for p in self.procs if p.popen and p.role != "manager")


class CellAbort(Exception):
    """A check failed that the rest of the cell depends on."""


def describe(status):
    return "exit %d" % status if status >= 0 else "killed by %s" % faultlib.signame(-status)


def short_status(p):
    if p.popen is None:
        return "-"
    if p.cleanup_kill:
        return "hung"
    if p.returncode is None:
        return "running"
    return str(p.returncode) if p.returncode >= 0 else faultlib.signame(-p.returncode)


# --- the rows: how each mode starts its run ---

class Row:
    """A run mode: its schedule(s), master(s), clients and how its run is known to be running."""

    key = ""
    managed = False   # under a schedule manager: tactus-manager starts, rolls over and ends the run
    multisoc = False  # one master per SoC over loopback DDS
    client_names = ()
    victim = ""       # the client the fault cells kill or freeze
    master_timeout_us = 15_000_000

    def __init__(self, ctx):
        self.ctx = ctx

    def start(self, cell, timeout_us=None, log=False, wrap=(), iterations=None):
        raise NotImplementedError

    def await_running(self, cell):
        raise NotImplementedError

    def finish(self, cell):
        """Ends a run that the manager started (managed rows); nothing otherwise."""


class SingleRow(Row):
    key = "single"
    client_names = ("Sensing", "Planning")
    victim = "Planning"

    def schedules(self):
        return [self.ctx.schedule("schedules/two_client_multi_rate.yaml")]

    def master_args(self, cell, timeout_us, log, iterations):
        args = ["-s", ",".join(self.schedules()), "-t", str(timeout_us or self.master_timeout_us)]
        if iterations:
            args += ["-e", str(iterations)]
        if log:
            args += ["-l", os.path.join(cell.dir, "run.tlog")]
        return args

    def start(self, cell, timeout_us=None, log=False, wrap=(), iterations=None):
        cell.masters = [cell.master("master", self.master_args(cell, timeout_us, log, iterations))]
        sample = self.ctx.prog["sample"]
        cell.clients = {n: cell.proc(n, "client", list(wrap) + [sample, n, "--instance", cell.instance])
                        for n in self.client_names}
        for p in cell.masters + list(cell.clients.values()):
            p.start()

    def await_running(self, cell):
        cell.wait_state([""])


class ManagedRow(SingleRow):
    key = "managed"
    managed = True
    ids = (201, 202)

    def schedules(self):
        return [self.ctx.schedule("schedules/two_client_multi_rate.yaml", i) for i in self.ids]

    def master_args(self, cell, timeout_us, log, iterations):
        return super().master_args(cell, timeout_us, log, None) + ["-N", "mgr"]

    def start(self, cell, timeout_us=None, log=False, wrap=(), iterations=None):
        super().start(cell, timeout_us, log, wrap, None)

    def await_running(self, cell):
        start_first(self, cell, [""])

    def finish(self, cell, iterations=ITERATIONS):
        return manage(self, cell, iterations)


def start_first(row, cell, suffixes):
    """A managed row's run: tactus-manager starts its first schedule; then every segment runs."""
    start = cell.tool("start", ["start", str(row.ids[0])])
    if not cell.expect_status(start, 0, "tactus-manager start"):
        raise CellAbort()
    cell.wait_state(suffixes)


def manage(row, cell, iterations=ITERATIONS):
    """Waits for `iterations` of the first schedule, rolls over to the second, waits again, then
    `tactus-manager exit`."""
    for k, sid in enumerate(row.ids):
        if k:
            roll = cell.tool("rollover", ["rollover", str(sid), str(row.ids[k - 1])])
            if not cell.expect_status(roll, 0, "tactus-manager rollover"):
                raise CellAbort()
        await_iterations(cell, sid, iterations)
    ex = cell.tool("exit", ["exit"])
    if not cell.expect_status(ex, 0, "tactus-manager exit"):
        raise CellAbort()


def await_iterations(cell, sid, n):
    deadline = now() + RUN_WAIT_S
    seen = ""
    while now() < deadline:
        st = cell.tool("status", ["status"])
        seen = st.text()
        m = re.search(r"running schedule (\d+), (\d+) iterations", seen)
        cell.procs.remove(st)
        if m and int(m.group(1)) == sid and int(m.group(2)) >= n:
            return
        time.sleep(0.1)
    cell.fail("schedule %d never ran %d iterations (tactus-manager status: %s)" % (sid, n, seen.strip()))
    raise CellAbort()


class MultiSocRow(Row):
    key = "multisoc"
    multisoc = True
    client_names = ("Sensor", "Planner")
    victim = "Planner"
    socs = ("SocA", "SocB")

    def schedules(self):
        return [self.ctx.schedule("samples/multisoc/two_soc.yaml")]

    def start(self, cell, timeout_us=None, log=False, wrap=(), iterations=None, lease_us=None):
        cell.masters = []
        for soc in self.socs:
            args = ["-s", ",".join(self.schedules())] + (["-N", "mgr"] if self.managed else []) + ["-x", soc, "--dds-domain", str(cell.domain), "-a", "30",
                    "-t", str(timeout_us or self.master_timeout_us)]
            if iterations and not self.managed:
                args += ["-e", str(iterations)]
            if lease_us:
                args += ["-o", str(lease_us)]
            if log:
                args += ["-l", os.path.join(cell.dir, soc + ".tlog")]
            cell.masters.append(cell.master("master" + soc, args))
        cell.clients = {n: cell.proc(n, "client", list(wrap) + [
            self.ctx.prog["test-client"], "--name", n, "--instance", cell.instance, "--timeout-ms", "20000"])
            for n in self.client_names}
        for p in cell.masters + list(cell.clients.values()):
            p.start()

    def await_running(self, cell):
        cell.wait_state([".soc0", ".soc1"])


class ManagedMultiSocRow(MultiSocRow):
    """Two multi-SoC schedules under a manager: every SoC's master has both and -N; the manager
    talks to the primary's (SocA), the follower (SocB) follows its switches over the link."""
    key = "managed-multisoc"
    managed = True
    ids = (301, 302)

    def schedules(self):
        return [self.ctx.schedule("samples/multisoc/two_soc.yaml", i) for i in self.ids]

    def await_running(self, cell):
        start_first(self, cell, [".soc0", ".soc1"])

    def finish(self, cell, iterations=SOC_ITERATIONS):
        return manage(self, cell, iterations)


ROW_CLASSES = {"single": SingleRow, "managed": ManagedRow, "multisoc": MultiSocRow,
               "managed-multisoc": ManagedMultiSocRow}


# --- the columns ---

def col_run(cell, row):
    """CPU runnables run N iterations (under a manager: N of each schedule, with a rollover
    between them); every process exits 0 and says its run ended normally."""
    n = SOC_ITERATIONS if row.multisoc else ITERATIONS
    row.start(cell, iterations=n)
    if row.managed:
        row.await_running(cell)
        row.finish(cell, n)
    cell.expect_ended(cell.procs, now() + RUN_WAIT_S, "after the run")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0)
    if row.multisoc and row.managed:
        # n or more iterations of each schedule (the manager looks every 0.1 s), then its exit.
        for c in cell.clients.values():
            cell.expect_says(c, r"status=exit-requested", "end at the manager's exit")
        for name, per in (("Planner", 1), ("Sensor", 2)):
            m = re.search(r"runs=(\d+)", cell.clients[name].text())
            if not m or int(m.group(1)) < 2 * per * n:
                cell.fail("%s ran %s runnables, expected >= %d (%d iterations of each schedule)" % (
                    name, m.group(1) if m else "no", 2 * per * n, n))
        cell.expect_says(cell.masters[1], r"the master of the primary SoC 'SocA' ended the run",
                         "end with the primary")
    elif row.multisoc:
        for c in cell.clients.values():
            cell.expect_says(c, r"status=frame-limit", "end by frame limit")
        cell.expect_says(cell.clients["Planner"], r"runs=%d\b" % n, "run Planner.Plan %d times" % n)
        cell.expect_says(cell.clients["Sensor"], r"runs=%d\b" % (2 * n), "run Capture and Fuse %d times each" % n)
    else:
        done = "exit-requested" if row.managed else "frame-limit"
        for c in cell.clients.values():
            cell.expect_says(c, r"run ended \(%s\)" % done, "say its run ended (%s)" % done)
        if row.key == "single":
            cell.expect_says(cell.masters[0], r"ran %d hyperepoch iterations" % n, "say it ran %d iterations" % n)
    cell.expect_clean("after the run")
    cell.outcome = "%s; %d iterations%s" % (cell.statuses(), n, " of each schedule" if row.managed else "")


def col_client_kill(cell, row):
    """kill -9 of a client in the run: the master (each SoC's) exits 1 naming it, the other client
    ends (non-zero) naming it, nothing is left."""
    row.start(cell)
    row.await_running(cell)
    time.sleep(0.3)
    victim = cell.clients[row.victim]
    victim.send(signal.SIGKILL)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    cell.expect_ended(cell.procs, t0 + END_S, "%.0f s after the kill" % END_S)
    named = r"client '%s'" % row.victim
    for m in cell.masters:
        cell.expect_status(m, 1)
    if row.multisoc:
        cell.expect_says(cell.masters[1], named, "name the killed client")
        cell.expect_says(cell.masters[0], r"SoC 'SocB' ended the run: (schedule \d+: )?client 'Planner'",
                         "name SoC and client")
        other = cell.clients["Sensor"]
        cell.expect_status(other, {10 + k for k in range(1, 20)})
        cell.expect_says(other, r"SoC 'SocB' ended the run", "name the SoC that ended the run")
    else:
        cell.expect_says(cell.masters[0], named + r" \(pid %d\)" % victim.pid, "name the killed client and its pid")
        other = cell.clients["Sensing"]
        cell.expect_status(other, 1)
        cell.expect_says(other, r"peer-died.*%s|%s.*(died|dead)" % (row.victim, row.victim), "name the dead client")
    cell.expect_status(victim, -signal.SIGKILL)
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; master names %s" % (cell.statuses(), named)


def col_client_stuck(cell, row):
    """SIGSTOP of a client with a small -t: the master exits 1 naming it as stuck within -t plus a
    margin; once continued, the clients end; nothing is left."""
    row.start(cell, timeout_us=STUCK_T_US)
    row.await_running(cell)
    time.sleep(0.2)
    victim = cell.clients[row.victim]
    victim.send(signal.SIGSTOP)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    owner = cell.masters[-1]  # the victim's SoC's master (multi-SoC: SocB)
    bound = STUCK_T_US / 1e6 + END_S
    if not cell.expect_ended([owner], t0 + bound, "%.1f s after the freeze (-t %.1f s)" % (bound, STUCK_T_US / 1e6)):
        raise CellAbort()
    took = owner.ended - t0
    cell.expect_status(owner, 1)
    cell.expect_says(owner, r"client '%s' \(pid %d\) is stuck" % (row.victim, victim.pid),
                     "name the frozen client as stuck")
    if took > STUCK_T_US / 1e6 + STUCK_END_S * SCALE:  # not waiting for the client it named to leave
        cell.fail("%s exited %.2f s after the freeze, beyond -t %.1f s + %.1f s" % (
            owner.name, took, STUCK_T_US / 1e6, STUCK_END_S))
    if row.multisoc:
        cell.expect_ended(cell.masters, now() + END_S, "after SocB's master ended")
        cell.expect_status(cell.masters[0], 1)
        cell.expect_says(cell.masters[0], r"SoC 'SocB' ended the run: (schedule \d+: )?client 'Planner'",
                         "name SoC and client")
    victim.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after SIGCONT" % END_S)
    for c in cell.clients.values():
        cell.expect_status(c, {1} if not row.multisoc else {10 + k for k in range(1, 20)})
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; master names '%s' stuck and exits %.2f s after SIGSTOP (-t %.1f s)" % (
        cell.statuses(), row.victim, took, STUCK_T_US / 1e6)


def col_client_exit_stuck(cell, row):
    """A client asks to end the run (SIGTERM: libtactus's handler makes it an exit request) while
    another is frozen: the running schedule stops at its iteration boundary, which the frozen client
    never reaches, so its master names it stuck within -t plus a margin and exits 1; continued, the
    clients end; nothing is left. (Under a manager the master used to stop the schedule on its
    monitor thread and hang there, watching nothing.)"""
    row.start(cell, timeout_us=STUCK_T_US)
    row.await_running(cell)
    time.sleep(0.2)
    victim = cell.clients[row.victim]
    asker = next(c for n, c in cell.clients.items() if n != row.victim)
    victim.send(signal.SIGSTOP)
    time.sleep(0.05)
    asker.send(signal.SIGTERM)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    owner = cell.masters[-1]  # the victim's SoC's master (multi-SoC: SocB)
    bound = STUCK_T_US / 1e6 + END_S
    if not cell.expect_ended(cell.masters, t0 + bound, "%.1f s after the exit request with '%s' frozen (-t %.1f s)" % (
            bound, row.victim, STUCK_T_US / 1e6)):
        raise CellAbort()
    took = max(m.ended for m in cell.masters) - t0
    cell.expect_status(owner, 1)
    cell.expect_says(owner, r"client '%s' \(pid %d\) is stuck" % (row.victim, victim.pid),
                     "name the frozen client as stuck")
    if took > STUCK_T_US / 1e6 + STUCK_END_S * SCALE:  # not waiting for the client it named to leave
        cell.fail("the masters exited %.2f s after the exit request, beyond -t %.1f s + %.1f s" % (
            took, STUCK_T_US / 1e6, STUCK_END_S))
    if row.multisoc:
        cell.expect_status(cell.masters[0], 1)
        cell.expect_says(cell.masters[0], r"SoC 'SocB' ended the run: (schedule \d+: )?client 'Planner'",
                         "name SoC and client")
    victim.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after SIGCONT" % END_S)
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; the masters ended %.2f s after the exit request, naming '%s' stuck (-t %.1f s)" % (
        cell.statuses(), took, row.victim, STUCK_T_US / 1e6)


def col_master_sigterm(cell, row):
    """SIGTERM to the master while a client is frozen: the master ends within a bound of the 0.5 s
    grace, naming the client that did not finish; continued, the clients end; nothing is left."""
    row.start(cell)
    row.await_running(cell)
    time.sleep(0.2)
    victim = cell.clients[row.victim]
    victim.send(signal.SIGSTOP)
    time.sleep(0.05)
    target = cell.masters[-1]
    target.send(signal.SIGTERM)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    if not cell.expect_ended([target], t0 + GRACE_BOUND_S, "%.1f s after SIGTERM (grace %.1f s)" % (GRACE_BOUND_S,
                                                                                                     GRACE_S)):
        raise CellAbort()
    took = target.ended - t0
    cell.expect_status(target, 0, "a stop by a signal")
    grace = r"client '%s' did not finish runnable '%s\.\w+' within 500ms" % (row.victim, row.victim)
    if not re.search(grace, target.stderr()):  # on its own stderr, not only through the segment or with -v
        cell.fail("%s did not name the frozen client on stderr after the grace (/%s/); stderr: %s" % (
            target.name, grace, target.stderr()[-600:]))
    victim.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after SIGCONT" % END_S)
    for p in cell.procs:
        if p is not target and p.role != "manager":
            cell.expect_status(p, 0, "a stop by a signal")
    for n, c in cell.clients.items():
        if n != row.victim:
            cell.expect_says(c, grace, "name the frozen client (the run's end as the master published it)")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; master ended %.2f s after SIGTERM naming '%s'" % (cell.statuses(), took, row.victim)


def col_rollover_sigterm(cell, row):
    """Managed: SIGTERM to the master while `tactus-manager rollover` waits on a frozen client (its
    switch callback, in which it froze, never acknowledges): the master ends within the grace and a
    little (issue 48: 1.5 s, nothing on stderr, blaming 'a schedule switch'), names the frozen client
    on its stderr, and the waiting rollover exits 1 saying the signal cut it short and naming the
    client (it used to say 'rolled over' and exit 0). The frozen client's callback never returns: it
    is killed at the end; the other client ends well; nothing is left."""
    if row.key != "managed":
        raise Skip("the managed row only (a rollover needs -N; managed multi-SoC: the primary-sigterm column)")
    cell.masters = [cell.master("master", row.master_args(cell, None, False, None))]
    cell.clients = {"Sensing": cell.proc("Sensing", "client", [cell.ctx.prog["sample"], "Sensing", "--instance",
                                                               cell.instance]),
                    row.victim: cell.proc(row.victim, "client", [cell.ctx.prog["test-client"], "--name", row.victim,
                                                                 "--instance", cell.instance,
                                                                 "--switch-callback-hangs"])}
    for p in cell.masters + list(cell.clients.values()):
        p.start()
    row.await_running(cell)
    time.sleep(0.2)
    victim = cell.clients[row.victim]
    roll = cell.proc("rollover", "manager", [cell.ctx.prog["manager"], "-D", cell.instance, "-N", "mgr", "-t", "15000",
                                             "rollover", str(row.ids[1]), str(row.ids[0])])
    roll.start()
    in_callback = "switch schedule=%d" % row.ids[1]
    if not cell.wait_for(now() + RUN_WAIT_S, lambda: in_callback in victim.text()):
        cell.fail("%s never ran its switch callback (%s): %s" % (row.victim, roll.status(), roll.tail(300)))
        raise CellAbort()
    victim.send(signal.SIGSTOP)  # frozen in its callback: the rollover waits for its acknowledgement
    time.sleep(0.2)
    cell.poll()
    if not roll.alive():
        cell.fail("the rollover did not wait for the frozen client (%s): %s" % (roll.status(), roll.tail(300)))
        raise CellAbort()
    target = cell.masters[0]
    target.send(signal.SIGTERM)
    t0 = now()
    bound = GRACE_S + STUCK_END_S * SCALE
    if not cell.expect_ended([target], t0 + GRACE_BOUND_S, "%.1f s after SIGTERM (grace %.1f s)" % (GRACE_BOUND_S,
                                                                                                     GRACE_S)):
        raise CellAbort()
    took = target.ended - t0
    if took > bound:
        cell.fail("the master ended %.2f s after SIGTERM in the rollover, beyond the grace %.1f s and %.1f s" % (
            took, GRACE_S, bound - GRACE_S))
    cell.expect_status(target, 0, "a stop by a signal")
    named = r"client '%s' did not .* within 500ms" % row.victim
    if not re.search(named, target.stderr()):
        cell.fail("%s did not name the frozen client on stderr (/%s/); stderr: %s" % (
            target.name, named, target.stderr()[-600:]))
    cell.expect_ended([roll], now() + END_S, "after the master's end")
    cell.expect_status(roll, 1, "a rollover the signal cut short")
    cell.expect_says(roll, r"rollover: .*stopped by a signal.*'%s'" % row.victim,
                     "say that the signal cut the rollover short, naming the frozen client")
    victim.send(signal.SIGCONT)
    victim.send(signal.SIGKILL)  # its callback never returns
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after SIGCONT" % END_S)
    cell.expect_status(cell.clients["Sensing"], 0, "a stop by a signal")
    cell.expect_says(cell.clients["Sensing"], named, "name the frozen client (the run's end as the master published it)")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; master ended %.2f s after SIGTERM naming '%s'; rollover %s" % (
        cell.statuses(), took, row.victim, short_status(roll))

def col_primary_sigterm(cell, row):
    """Multi-SoC: SIGTERM to the primary's master (SocA) while the follower's client (Planner, on
    SocB) is frozen: a clean end on every SoC. Both masters exit 0 within a bound of the grace, each
    naming the frozen client where it holds its SoC's stop (SocA: Planner's end does not arrive;
    SocB: Planner does not finish its runnable); continued, every client ends 0; nothing is left.
    (The follower used to exit 1 blaming the link, its last iteration 'did not reach SoC 'SocB'
    within -o', and its clients failed: the primary, held in an overrun by the frozen client, never
    sent its stop.) Under a manager the run rolls over first: the follower reads the primary's stop
    reason from every schedule's link (it read schedule 0's only, and ended blaming the link).)"""
    if not row.multisoc:
        raise Skip("multi-SoC rows only (one master: the master SIGTERM column)")
    row.start(cell)
    row.await_running(cell)
    if row.managed:  # the second schedule runs: its link, not schedule 0's, carries the primary's stop
        roll = cell.tool("rollover", ["rollover", str(row.ids[1]), str(row.ids[0])])
        if not cell.expect_status(roll, 0, "tactus-manager rollover"):
            raise CellAbort()
        await_iterations(cell, row.ids[1], 3)
    time.sleep(0.2)
    victim = cell.clients[row.victim]
    victim.send(signal.SIGSTOP)
    time.sleep(0.05)
    primary, follower = cell.masters[0], cell.masters[1]
    primary.send(signal.SIGTERM)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    if not cell.expect_ended(cell.masters, t0 + GRACE_BOUND_S, "%.1f s after SIGTERM to the primary (grace %.1f s)"
                             % (GRACE_BOUND_S, GRACE_S)):
        raise CellAbort()
    took = [m.ended - t0 for m in cell.masters]
    for m in cell.masters:
        cell.expect_status(m, 0, "a stop by a signal, on every SoC")
    held = r"client '%s' did not finish runnable '%s\.\w+' within 500ms" % (row.victim, row.victim)
    for m, what in ((primary, held + r" \(on SoC 'SocB'\)"),
                    (follower, r"the master of the primary SoC 'SocA' was stopped by a signal; " + held)):
        if not re.search(what, m.stderr()):  # on its own stderr, not only through the segment or with -v
            cell.fail("%s did not name the frozen client on stderr (/%s/); stderr: %s" % (
                m.name, what, m.stderr()[-600:]))
    victim.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after SIGCONT" % END_S)
    for c in cell.clients.values():
        cell.expect_status(c, 0, "a stop by a signal")
        cell.expect_says(c, r"status=stopped-by-signal", "end stopped by a signal")
    cell.expect_says(cell.clients["Sensor"], held, "name the frozen client (its master's end)")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; SocA ended %.2f s, SocB %.2f s after SIGTERM, each naming '%s'" % (
        cell.statuses(), took[0], took[1], row.victim)


def col_master_kill(cell, row):
    """kill -9 of the master (multi-SoC: the primary): the clients end or wait for a new master,
    saying so; its segments are removed by the clients; nothing is left. Multi-SoC: the surviving
    master exits within -o + 0.5 s of the kill (it used to linger 1.7-1.8 s with -o 0.5 s, 2.8-3.1 s
    managed: its last announcement waited a second for the dead peer's acknowledgement, and each
    DDS writer lingered for it as it was deleted)."""
    lease_s = 0.5
    row.start(cell, lease_us=int(lease_s * 1e6)) if row.multisoc else row.start(cell)
    row.await_running(cell)
    time.sleep(0.3)
    target = cell.masters[0]
    others = [p for p in cell.procs if p is not target and p.role != "manager"]
    said_before = {p.name: len(p.stderr()) for p in others}  # the start-up's own "waiting for" lines
    target.send(signal.SIGKILL)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)

    def waits(p):
        return p.role == "client" and faultlib.WAITING_RE.search(p.stderr()[said_before[p.name]:])

    def settled():
        return not target.alive() and all(not p.alive() or waits(p) for p in others)
    if not cell.wait_for(t0 + END_S, settled):
        cell.fail("still running %.0f s after the master's kill, not waiting for a new master: %s" % (
            END_S, "; ".join("%s: %s" % (p.name, p.tail(200)) for p in others if p.alive())))
    waiting = [p for p in others if p.alive()]
    cell.expect_clean("after the clients ended (or began to wait)")
    cell.expect_status(target, -signal.SIGKILL)
    for p in others:
        if p in waiting:
            p.waiting = True
            continue
        if p.role == "master":
            cell.expect_status(p, 1)
            cell.expect_says(p, r"SoC 'SocA' is gone: its master showed no DDS liveliness within -o 500000 us",
                             "name the SoC whose master is gone")
            if p.ended - t0 > (lease_s + SURVIVOR_S) * SCALE:
                cell.fail("%s exited %.2f s after its peer's kill, beyond -o %.1f s + %.1f s" % (
                    p.name, p.ended - t0, lease_s, SURVIVOR_S))
        elif row.multisoc:
            cell.expect_status(p, {10 + k for k in range(1, 20)})
        else:
            cell.expect_status(p, 1)
            cell.expect_says(p, r"master", "name the master as the cause")
    who = ", ".join("%s waits" % p.name for p in waiting)
    survived = "".join("; %s exited %.2f s after the kill" % (p.name, p.ended - t0)
                       for p in others if p.role == "master" and p.ended is not None)
    cell.outcome = "%s%s%s; nothing left in /dev/shm" % (cell.statuses(), "; " + who if who else "", survived)


def restart(cell, p, name):
    """A new process with `p`'s command line (as systemd's Restart= runs it), started now."""
    q = cell.proc(name, p.role, p.argv)
    q.start()
    return q


def col_restart_killed(cell, row, victim=0):
    """Multi-SoC: kill -9 of one SoC's master (`victim`: 0 the primary, 1 the follower) and a new
    one started at once with the same command line, as a supervisor restarts it; the survivor
    exits 1 within -o + 0.5 s naming the killed SoC and is restarted too; the clients that ended are
    restarted. The new run must start and end well on both SoCs (under a manager: start, rollover,
    exit): the old run's samples (the survivor's stopping state, the old primary's running state)
    never reach the new run (link v2: the run's identity in every sample). (A primary restarted
    over a killed one used to take the survivor's failure for its own, 'SoC 'SocA' is gone', and
    exit 1; the other side's replacement then waited out -a.)"""
    if not row.multisoc:
        raise Skip("multi-SoC rows only (one master: the master kill -9 column)")
    lease_s = 0.5
    n = SOC_ITERATIONS
    row.start(cell, lease_us=int(lease_s * 1e6), iterations=n)
    row.await_running(cell)
    time.sleep(0.3)
    killed, survivor = cell.masters[victim], cell.masters[1 - victim]
    gone = row.socs[victim]
    old_clients = list(cell.clients.values())
    killed.send(signal.SIGKILL)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    cell.wait([killed], t0 + END_S)
    time.sleep(0.05)
    fresh = {victim: restart(cell, killed, killed.name + "-new")}
    if not cell.expect_ended([survivor], t0 + END_S, "%.0f s after its peer's kill" % END_S):
        raise CellAbort()
    cell.expect_status(survivor, 1)
    cell.expect_says(survivor, r"SoC '%s' is gone" % gone, "name the SoC whose master is gone")
    took = survivor.ended - t0
    if took > (lease_s + SURVIVOR_S) * SCALE:
        cell.fail("%s exited %.2f s after its peer's kill, beyond -o %.1f s + %.1f s" % (
            survivor.name, took, lease_s, SURVIVOR_S))
    fresh[1 - victim] = restart(cell, survivor, survivor.name + "-new")
    said_before = {c.name: len(c.stderr()) for c in old_clients}

    def settled():  # every old client ended, or says since the kill that it waits for a new master
        # (a "waiting" said before the kill is a slow start's, under ASan: that client was still in
        # the old run, and taking it for settled left it unrestarted when it ended a moment later)
        return all(not c.alive() or faultlib.WAITING_RE.search(c.stderr()[said_before[c.name]:])
                   for c in old_clients)
    cell.wait_for(now() + END_S, settled)
    new_clients = [restart(cell, c, c.name + "-new") for c in old_clients if not c.alive()]
    masters = [fresh[0], fresh[1]]
    if row.managed:
        row.await_running(cell)
        row.finish(cell, n)
    if not cell.expect_ended(masters, now() + RUN_WAIT_S, "in the new run"):
        raise CellAbort()
    for m in masters:
        cell.expect_status(m, 0, "the new run ends well")
    cell.expect_ended(cell.procs, now() + END_S, "after the new run")
    for c in new_clients:
        cell.expect_status(c, 0, "a client of the new run")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; %s exited %.2f s after %s's kill; the new run ended well" % (
        cell.statuses(), survivor.name, took, gone)


def col_restart_killed_follower(cell, row):
    """As restart-killed, the follower (SocB) killed and restarted at once: the new follower never
    joins the old primary's run (it lingers -o, then exits 1 naming SocB) and starts with the new one."""
    col_restart_killed(cell, row, victim=1)


def col_manager_killed(cell, row):
    """Managed rows: `tactus-manager status` commands killed (-9) 1-20 ms into their requests, as a
    supervisor's time-out kills a slow command: the run goes on (a manager that dies while it holds
    the channel's claim may end the run, by policy and named, nothing else may); the next commands
    (status, rollover, exit) work and every process exits 0; nothing is left."""
    if not row.managed:
        raise Skip("managed rows only (no manager channel without -N)")
    row.start(cell)
    row.await_running(cell)
    await_iterations(cell, row.ids[0], 3)
    killed = []
    # Tries until seven were killed before their end (at most 40): on a loaded machine a command
    # may end within its delay, and one try each of fixed delays then killed none.
    delays = (0.001, 0.002, 0.003, 0.005, 0.008, 0.012, 0.02, 0.0005)
    for k in range(40):
        if len(killed) >= 7:
            break
        delay = delays[k % len(delays)]
        victim = cell.proc("status-killed%d" % k, "manager", [cell.ctx.prog["manager"], "-D", cell.instance, "-N",
                                                             "mgr", "-t", "15000", "status"])
        victim.start()
        time.sleep(delay)
        victim.send(signal.SIGKILL)
        cell.wait([victim], now() + END_S)
        killed += [victim] if victim.returncode == -signal.SIGKILL else []
    if not killed:
        cell.fail("no tactus-manager status was killed before it ended (40 tries, each ended within 0.5-20 ms)")
    time.sleep(0.3)
    for m in cell.masters:
        if not m.alive():
            cell.fail("%s ended after a tactus-manager command was killed: %s; output: %s" % (
                m.name, m.status(), m.tail(400)))
            raise CellAbort()
    roll = cell.tool("rollover", ["rollover", str(row.ids[1]), str(row.ids[0])])
    if not cell.expect_status(roll, 0, "tactus-manager rollover after the killed commands"):
        raise CellAbort()
    await_iterations(cell, row.ids[1], 3)
    ex = cell.tool("exit", ["exit"])
    if not cell.expect_status(ex, 0, "tactus-manager exit"):
        raise CellAbort()
    cell.expect_ended([p for p in cell.procs if p.role != "manager"], now() + RUN_WAIT_S, "after the exit")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0, "the run went on after the killed command")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; %d status commands killed before their end; the run went on and ended at exit" % (
        cell.statuses(), len(killed))


def col_startup_kill(cell, row):
    """Managed rows (-N): kill -9 of the master(s) 20 ms after their start (before any client), then
    the run started again on the same instance: the new master(s) take the instance over whatever
    the dead one left (its .manager and .schedule<k> segments) and the run ends well; nothing of
    the instance is left afterwards."""
    if not row.managed:
        raise Skip("managed rows only (a master without -N leaves nothing: the fault campaign's 0/20)")
    first = []
    for k, soc in enumerate(getattr(row, "socs", ("",))):
        args = ["-s", ",".join(row.schedules()), "-N", "mgr", "-t", str(row.master_timeout_us)]
        if row.multisoc:
            args += ["-x", soc, "--dds-domain", str(cell.domain), "-a", "30"]
        first.append(cell.master("early" + soc, args))
    for m in first:
        m.start()
    time.sleep(0.02)
    for m in first:
        m.send(signal.SIGKILL)
    cell.wait(first, now() + END_S)
    left = cell.segments()
    row.start(cell)
    row.await_running(cell)
    row.finish(cell)
    cell.expect_ended([p for p in cell.procs if p not in first], now() + RUN_WAIT_S, "after the exit")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0, "a run started over a master killed in its start-up")
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; the killed start-up left %s; the next run took over and ended well" % (
        cell.statuses(), ", ".join(os.path.basename(x) for x in left) or "nothing")


def col_manager_damaged(cell, row):
    """Managed rows: the manager channel (.manager) damaged while the run goes, truncated to 288
    bytes (managed) or its first 64 bytes zeroed (managed multi-SoC): the master that owns it ends
    the run (exit 1) naming the channel damaged, every master ends, no process dies of a signal,
    nothing is left. (It used to go unseen: the run went on and every later tactus-manager call
    failed after its time-out.)"""
    if not row.managed:
        raise Skip("managed rows only (no manager channel without -N)")
    row.start(cell)
    row.await_running(cell)
    time.sleep(0.2)
    path = faultlib.segment_path(cell.instance) + ".manager"
    if row.multisoc:
        with open(path, "r+b") as f:
            f.write(bytes(64))
    else:
        os.truncate(path, 288)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    if not cell.expect_ended(cell.masters, t0 + END_S, "%.0f s after the damage" % END_S):
        raise CellAbort()
    took = max(m.ended for m in cell.masters) - t0
    cell.expect_status(cell.masters[0], 1)
    cell.expect_says(cell.masters[0], r"manager channel %s was damaged" % re.escape(path), "name the damaged channel")
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after the masters" % END_S)
    for c in cell.clients.values():
        if c.returncode is not None and c.returncode < 0:
            cell.fail("%s: %s (a damaged channel must end a client in order)" % (c.name, c.status()))
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; the masters ended %.2f s after the damage, naming the channel" % (cell.statuses(), took)


def col_manager_damaged_sigterm(cell, row):
    """Managed rows: the manager channel's first 64 bytes zeroed and, 5 ms later, SIGTERM to the
    master that does not own the channel where there is one (multi-SoC: the follower, SocB; managed:
    the master itself): a signal that meets a run ending for the damage is honoured as promptly as
    any other (a follower once ignored it: issue 48, item 10). Every master ends within 3 s of the
    signal (the grace's bound) with 0 or 1, naming the damage or the signal; no process dies of a
    signal; nothing is left."""
    if not row.managed:
        raise Skip("managed rows only (no manager channel without -N)")
    row.start(cell)
    row.await_running(cell)
    time.sleep(0.2)
    path = faultlib.segment_path(cell.instance) + ".manager"
    with open(path, "r+b") as f:
        f.write(bytes(64))
    time.sleep(0.005)
    target = cell.masters[-1]
    target.send(signal.SIGTERM)
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    if not cell.expect_ended(cell.masters, t0 + GRACE_BOUND_S, "%.1f s after SIGTERM to %s, the channel damaged"
                             % (GRACE_BOUND_S, target.name)):
        raise CellAbort()
    took = max(m.ended for m in cell.masters) - t0
    for m in cell.masters:
        cell.expect_status(m, {0, 1})
        cell.expect_says(m, r"manager channel %s was damaged|stopped by a signal|SoC 'Soc\w+' ended the run"
                         % re.escape(path), "name the damage, the signal or the SoC that ended the run")
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after the masters" % END_S)
    for c in cell.clients.values():
        if c.returncode is not None and c.returncode < 0:
            cell.fail("%s: %s (the run must end a client in order)" % (c.name, c.status()))
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; the masters ended %.2f s after SIGTERM to %s" % (cell.statuses(), took, target.name)


def col_truncated(cell, row):
    """The first segment of the run (schedule 0's; multi-SoC: SocA's) truncated to its header while
    the run goes: its master ends the run (exit 1) naming the segment truncated, no process dies
    of SIGBUS, nothing is left. Under a manager every schedule's mapping is guarded (it used to be
    the last one mapped only: the master and the clients died of SIGBUS on schedule 0's)."""
    row.start(cell)
    row.await_running(cell)
    time.sleep(0.2)
    path = faultlib.segment_path(cell.instance + (".soc0" if row.multisoc else ""))
    os.truncate(path, 4096)  # the header stays, every slot goes
    t0 = cell.t_cause = now()  # the fault's instant (mode_campaign.py)
    if not cell.expect_ended(cell.masters, t0 + END_S, "%.0f s after the truncation" % END_S):
        raise CellAbort()
    took = max(m.ended for m in cell.masters) - t0
    for m in cell.masters:
        cell.expect_status(m, 1)
    cell.expect_says(cell.masters[0], r"segment %s damaged: truncated" % re.escape(path), "name the truncated segment")
    if row.multisoc:
        cell.expect_says(cell.masters[1], r"SoC 'SocA' ended the run: .*truncated", "name SoC and segment")
    cell.expect_ended(cell.procs, now() + END_S, "%.0f s after the masters" % END_S)
    for c in cell.clients.values():
        if c.returncode is not None and c.returncode < 0:
            cell.fail("%s: %s (a truncated segment must end a client in order)" % (c.name, c.status()))
    cell.expect_clean("after every process ended")
    cell.outcome = "%s; the masters ended %.2f s after the truncation, naming it" % (cell.statuses(), took)


def report(cell, args, name):
    p = cell.proc(name, "report", [cell.ctx.prog["report"]] + args)
    p.start()
    cell.wait([p], now() + 60)
    return p


def col_report(cell, row):
    """The event log of a run read by tactus-report: --json parses and counts the iterations;
    --fail-on-violation exits 0 (no contract violation without tactus-check)."""
    n = SOC_ITERATIONS if row.multisoc else ITERATIONS
    row.start(cell, log=True, iterations=n)
    if row.managed:
        row.await_running(cell)
        row.finish(cell, n)
    cell.expect_ended(cell.procs, now() + RUN_WAIT_S, "after the run")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0)
    if row.multisoc:
        logs = [os.path.join(cell.dir, s + ".tlog") for s in row.socs]
    else:
        logs = [os.path.join(cell.dir, "run.tlog")]
    args = logs + row.schedules()
    js = report(cell, args + ["--json"], "report-json")
    if not cell.expect_status(js, 0, "tactus-report --json"):
        raise CellAbort()
    try:
        doc = json.loads(open(js.out_path).read())
    except ValueError as e:
        cell.fail("tactus-report --json printed no JSON (%s): %s" % (e, js.tail()))
        raise CellAbort()
    scheds = doc.get("schedules", [doc]) if row.managed else [doc]
    got = []
    for s in scheds:
        its = [h["iterations"] for h in s.get("hyperepochs", [])]
        got.append("schedule %s %s" % (s.get("identifier"), its))
        if not its or min(its) < n:
            cell.fail("tactus-report --json: schedule %s has %s iterations per hyperepoch, expected >= %d"
                      % (s.get("identifier"), its, n))
        if s.get("records", {}).get("run", 0) <= 0:
            cell.fail("tactus-report --json: schedule %s has no run records" % s.get("identifier"))
    if row.managed:
        if sorted(s.get("identifier") for s in scheds) != list(row.ids):
            cell.fail("tactus-report --json: schedules %s, expected %s" % ([s.get("identifier") for s in scheds],
                                                                           list(row.ids)))
        if not doc.get("switches"):
            cell.fail("tactus-report --json: no switches of the managed run")
    fv = report(cell, args + ["--fail-on-violation"], "report-fov")
    cell.expect_status(fv, 0, "--fail-on-violation without any violation")
    cell.expect_clean("after the run")
    cell.outcome = "%s; --json: iterations per hyperepoch %s; --fail-on-violation exit 0" % (
        cell.statuses(), "; ".join(got))


def col_cuda(cell, row):
    """CUDA submitters on the stand-in (tactus-gpu-test-client, tests/gpu/graphs/cross.yaml; multi-SoC:
    cross_soc.yaml, each SoC's client on its SoC's GPU, a GPU end on one SoC waited for on the other):
    GPU work across two processes; every process exits 0, every submission went through the engine."""
    if not os.access(cell.ctx.prog["gpu-client"], os.X_OK):
        raise Skip("tactus-gpu-test-client (the stand-in client) is not built")
    graph = "tests/gpu/graphs/cross_soc.yaml" if row.multisoc else "tests/gpu/graphs/cross.yaml"
    ids = (261, 262)
    if row.managed:
        scheds = [cell.ctx.schedule(graph, i) for i in ids]
        args = ["-s", ",".join(scheds), "-N", "mgr", "-t", "15000000"]
    else:
        args = ["-s", cell.ctx.schedule(graph), "-e", str(5 * ITERATIONS), "-t", "15000000"]
    if row.multisoc:
        cell.masters = [cell.master("master" + soc, args + ["-x", soc, "--dds-domain", str(cell.domain), "-a", "30"])
                        for soc in row.socs]
    else:
        cell.masters = [cell.master("master", args)]
    cell.clients = {n: cell.proc(n, "client", [cell.ctx.prog["gpu-client"], "--name", n, "--instance", cell.instance,
                                               "--stream", "CUDA_STREAM0"]) for n in ("Alpha", "Beta")}
    for p in cell.procs:
        p.start()
    if row.managed:
        mr = type(row)(cell.ctx)
        mr.ids = ids
        mr.await_running(cell)
        mr.finish(cell, 5 * ITERATIONS)
    cell.expect_ended(cell.procs, now() + RUN_WAIT_S, "after the run")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0)
    subs = []
    for n, c in cell.clients.items():
        cell.expect_says(c, r"status=STM_SUCCESS", "end its run with STM_SUCCESS")
        m = re.search(r"submissions=(\d+)", c.text())
        subs.append("%s %s" % (n, m.group(1) if m else "?"))
        # SubA and SubB: one submission per frame, two frames per iteration.
        if not m or int(m.group(1)) < 2 * 5 * ITERATIONS:
            cell.fail("%s: %s submissions, expected >= %d" % (n, m.group(1) if m else "no", 2 * 5 * ITERATIONS))
    cell.expect_clean("after the run")
    cell.outcome = "%s; submissions %s" % (cell.statuses(), ", ".join(subs))


def col_check(cell, row):
    """The clients under tactus-check: every process exits 0; the sample's printf in its first
    iteration is a blocking-call violation that tactus-report --violations names and for which
    --fail-on-violation exits 1."""
    if row.multisoc:
        raise Skip("check mode is run for single and managed only (the multi-SoC test client makes no call to report)")
    if not os.access(cell.ctx.prog["check"], os.X_OK):
        raise Skip("tactus-check is not built")
    row.start(cell, log=True, wrap=[cell.ctx.prog["check"], "--"], iterations=ITERATIONS)
    if row.managed:
        row.await_running(cell)
        row.finish(cell)
    cell.expect_ended(cell.procs, now() + RUN_WAIT_S, "after the run")
    for p in cell.masters + list(cell.clients.values()):
        cell.expect_status(p, 0)
    args = [os.path.join(cell.dir, "run.tlog")] + row.schedules()
    v = report(cell, args + ["--violations"], "report-violations")
    cell.expect_status(v, 0, "tactus-report --violations")
    rows = [line for line in v.text().splitlines() if ",blocking-call," in line]
    if not any(line.startswith("Sensing.") for line in rows):
        cell.fail("tactus-report --violations names no blocking call of a Sensing runnable (the sample's printf): %s"
                  % v.tail(600))
    fv = report(cell, args + ["--fail-on-violation"], "report-fov")
    cell.expect_status(fv, 1, "--fail-on-violation with violations")
    cell.expect_clean("after the run")
    cell.outcome = "%s; %d blocking-call rows (%s), --fail-on-violation exit 1" % (
        cell.statuses(), len(rows), rows[0].split(",")[0] + " " + rows[0].split(",")[2] if rows else "-")


COLUMN_FUNCS = {"run": col_run, "client-kill": col_client_kill, "client-stuck": col_client_stuck,
                "client-exit-stuck": col_client_exit_stuck,
                "truncated": col_truncated,
                "master-sigterm": col_master_sigterm, "rollover-sigterm": col_rollover_sigterm,
                "primary-sigterm": col_primary_sigterm,
                "master-kill": col_master_kill, "restart-killed": col_restart_killed,
                "restart-killed-follower": col_restart_killed_follower, "manager-killed": col_manager_killed,
                "manager-damaged": col_manager_damaged, "manager-damaged-sigterm": col_manager_damaged_sigterm,
                "startup-kill": col_startup_kill, "report": col_report,
                "cuda": col_cuda, "check": col_check}

# Cells that show a known master bug: (row, column) -> (a pattern every failure of the cell matches,
# a pattern the processes' output must hold: the bug's own evidence, what happens). Such a cell is an
# XFAIL while its failures are exactly that bug; any other failure is a FAIL. A listed cell that
# passes is an XPASS: printed and counted, not a failure (take it off this list once it is fixed).
XFAILS = {}  # (row, column) -> (failure pattern, evidence in the output, what happens): none today


def run_cell(ctx, row, column, index):
    cell = Cell(ctx, row, column, index)
    verdict = "PASS"
    try:
        if ROW_CLASSES[row].multisoc and not ctx.multisoc:
            raise Skip("this build has no multi-SoC support (-Dmultisoc)")
        else:
            COLUMN_FUNCS[column](cell, ROW_CLASSES[row](ctx))
    except Skip as s:
        verdict, cell.outcome = "SKIP", str(s)
    except CellAbort:
        pass
    except Exception as e:  # a driver error fails the cell, never the matrix
        cell.fail("driver error: %r" % e)
    finally:
        cell.cleanup()
    known = XFAILS.get((row, column))
    if verdict != "SKIP" and cell.failures:
        verdict = "FAIL"
        said = "\n".join(p.text() for p in cell.procs)
        if known and all(re.search(known[0], f) for f in cell.failures) and re.search(known[1], said):
            verdict = "XFAIL"
            cell.outcome = "%s; %s" % (cell.statuses(), known[2])
    elif verdict != "SKIP" and known:
        verdict = "XPASS"
        cell.outcome += "; passed, but listed as an expected failure: take it off XFAILS"
    cell.verdict = verdict
    cell.seconds = now() - cell.t_begin
    line = "%s %s: %s" % (verdict, cell.name,
                          "; ".join(cell.failures) if verdict == "FAIL" else cell.outcome)
    said = [line]  # printed by main in plan order (cells run side by side)
    if verdict == "FAIL" or ctx.verbose:
        for p in cell.procs:
            if p.popen is None:
                continue
            said.append("    %-16s %s" % (p.name, p.status()))
            for t in p.tail(500).splitlines()[-5:]:
                said.append("        | " + t)
        if verdict == "FAIL":
            said.append("    timeline: " + "; ".join(cell.log[-12:]))
            said.append("    instance %s, files %s%s" % (cell.instance, cell.dir,
                                                          "" if ctx.keep else " (removed; --keep)"))
    cell.said = "\n".join(said)
    return cell


def table(cells):
    short = {"PASS": "pass", "FAIL": "FAIL", "SKIP": "skip", "XFAIL": "xfail", "XPASS": "XPASS"}
    width = max(len(ROW_TITLE[r]) for r in ROWS)
    cols = [c for c in COLUMNS if any(x.column == c for x in cells)]
    head = "%-*s  " % (width, "") + "  ".join("%-14s" % c for c in cols)
    print("\n" + head)
    print("-" * len(head))
    for r in ROWS:
        row = {x.column: x for x in cells if x.row == r}
        if row:
            print("%-*s  " % (width, ROW_TITLE[r]) + "  ".join(
                "%-14s" % (short[row[c].verdict] if c in row else "") for c in cols))


def main():
    ap = argparse.ArgumentParser(description="tactus run matrix (see the header of this file)")
    ap.add_argument("--build", default="build", help="meson build folder with the programs (default ./build)")
    ap.add_argument("--source", help="source root (default: two folders up from this file)")
    ap.add_argument("--master", help="the tactus-master to run (default: the build's; a wrapper that drops its "
                    "stderr shows the cells that check a named cause fail)")
    ap.add_argument("--only", help="comma-separated rows: " + ",".join(ROWS))
    ap.add_argument("--columns", help="comma-separated columns: " + ",".join(COLUMNS))
    ap.add_argument("--work", help="folder for the cells' files (default: the system's temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the cells' files")
    ap.add_argument("-v", "--verbose", action="store_true", help="every cell's processes and output tails")
    ap.add_argument("--jobs", type=int, default=2 if SCALE > 1 else 3,
                    help="cells at a time (default 3, 2 in sanitized builds); the multi-SoC cells, which share "
                    "DDS domains, run after the others, one at a time and alone, whatever this says")
    args = ap.parse_args()
    # meson's timeout (SIGTERM) ends the matrix through the `finally`s: the cell's processes are
    # killed and its segments removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Cells side by side are threads: a thread waking from a short sleep (a cell's 1-20 ms before a
    # kill) waits for the interpreter lock at most this long, not Python's default 5 ms.
    sys.setswitchinterval(0.0005)
    ctx = Context(args)
    rows = args.only.split(",") if args.only else ROWS
    cols = args.columns.split(",") if args.columns else COLUMNS
    for x in rows + cols:
        if x not in ROWS + COLUMNS:
            raise SystemExit("matrix: unknown row or column '%s'" % x)
    print("matrix: instances matrix%d_<row>_<column>, files under %s" % (os.getpid(), ctx.work), flush=True)
    plan = [(r, c) for r in ROWS if r in rows for c in COLUMNS if c in cols]
    begin = now()
    # Cells run --jobs at a time, each on an instance of its own (as the fault campaign's trials: a
    # cell spends most of its time waiting for its processes); the multi-SoC cells after them, one at
    # a time and alone: their masters share DDS domains (Cell.domain), and beside other cells under
    # stress-ng one of them once saw its run end before it had started. Verdicts print in plan order.
    try:
        cells = faultlib.run_ordered(
            list(enumerate(plan)), lambda item: run_cell(ctx, item[1][0], item[1][1], item[0]), args.jobs,
            alone=lambda item: ROW_CLASSES[item[1][0]].multisoc,
            done=lambda _, cell: print(cell.said, flush=True),
            on_stop=lambda: [c.cleanup() for c in list(ctx.running)])
    finally:
        if not ctx.keep:
            shutil.rmtree(ctx.work, ignore_errors=True)
    table(cells)
    count = {v: sum(1 for x in cells if x.verdict == v) for v in ("PASS", "FAIL", "XFAIL", "XPASS", "SKIP")}
    print("\nrun matrix: %d cells in %.0f s: %d passed, %d failed, %d expected failures, %d skipped%s" % (
        len(cells), now() - begin, count["PASS"], count["FAIL"], count["XFAIL"], count["SKIP"],
        ", %d unexpected passes" % count["XPASS"] if count["XPASS"] else ""))
    return 1 if count["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
